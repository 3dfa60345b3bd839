"""``/openapi/v2`` in protobuf: the Swagger document as gnostic's ``openapi.v2.Document``.

kubectl's discovery client asks for ``application/com.github.proto-openapi.spec.v2@v1.0+protobuf``
(``kubectl explain --output=plaintext-openapiv2``, client-side validation and patches of kinds the
v3 documents lack); upstream's kube-openapi answers it with the same document encoded by gnostic.
This module writes that encoding from the JSON document (field numbers from gnostic's
``openapiv2/OpenAPIv2.proto``); vendor extensions and enum values travel as YAML text in ``Any``,
as gnostic carries them (JSON is YAML).
"""

from __future__ import annotations

import json
from typing import Any


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _bytes(num: int, payload: bytes) -> bytes:
    return _varint(num << 3 | 2) + _varint(len(payload)) + payload


def _str(num: int, value: str) -> bytes:
    return _bytes(num, value.encode()) if value else b""


def _bool(num: int, value: bool) -> bytes:
    return _varint(num << 3) + b"\x01" if value else b""


def _any(value: Any) -> bytes:
    """gnostic's Any: the value as YAML text (field 2)."""
    return _str(2, json.dumps(value, separators=(",", ":")))


def _named_any(num: int, name: str, value: Any) -> bytes:
    return _bytes(num, _str(1, name) + _bytes(2, _any(value)))


def _extensions(num: int, node: dict[str, Any]) -> bytes:
    return b"".join(_named_any(num, k, v) for k, v in node.items() if k.startswith("x-"))


def schema(node: dict[str, Any]) -> bytes:
    """openapi.v2.Schema."""
    out = [_str(1, node.get("$ref", "")), _str(2, node.get("format", "")), _str(3, node.get("title", "")),
           _str(4, node.get("description", ""))]
    if "default" in node:
        out.append(_bytes(5, _any(node["default"])))
    out.append(_bool(16, bool(node.get("uniqueItems"))))
    out += [_str(19, name) for name in node.get("required", ())]
    out += [_bytes(20, _any(value)) for value in node.get("enum", ())]
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        out.append(_bytes(21, _bytes(1, schema(extra))))
    elif isinstance(extra, bool):
        out.append(_bytes(21, _varint(2 << 3) + (b"\x01" if extra else b"\x00")))
    kinds = node.get("type")
    if kinds:
        out.append(_bytes(22, b"".join(_str(1, k) for k in ([kinds] if isinstance(kinds, str) else kinds))))
    items = node.get("items")
    if isinstance(items, dict):
        out.append(_bytes(23, _bytes(1, schema(items))))
    out += [_bytes(24, schema(part)) for part in node.get("allOf", ())]
    props = node.get("properties")
    if props:
        out.append(_bytes(25, b"".join(_bytes(1, _str(1, k) + _bytes(2, schema(v))) for k, v in props.items())))
    out.append(_extensions(31, node))
    return b"".join(out)


def _parameter(param: dict[str, Any]) -> bytes:
    """openapi.v2.ParametersItem{parameter: Parameter{body | non_body}}."""
    if param["in"] == "body":
        body = (_str(1, param.get("description", "")) + _str(2, param["name"]) + _str(3, "body")
                + _bool(4, bool(param.get("required"))) + _bytes(5, schema(param.get("schema", {}))))
        return _bytes(1, _bytes(1, body))
    where = {"query": (3, 6, 20), "path": (4, 5, 19), "header": (1, 5, 19)}
    slot, type_num, unique_num = where.get(param["in"], where["query"])
    sub = (_bool(1, bool(param.get("required"))) + _str(2, param["in"]) + _str(3, param.get("description", ""))
           + _str(4, param["name"]) + _str(type_num, param.get("type", ""))
           + _bool(unique_num, bool(param.get("uniqueItems"))))
    return _bytes(1, _bytes(2, _bytes(slot, sub)))


def _operation(op: dict[str, Any]) -> bytes:
    out = [_str(1, tag) for tag in op.get("tags", ())]
    out += [_str(3, op.get("description", "")), _str(5, op.get("operationId", ""))]
    out += [_str(6, p) for p in op.get("produces", ())]
    out += [_str(7, c) for c in op.get("consumes", ())]
    out += [_bytes(8, _parameter(p)) for p in op.get("parameters", ())]
    codes = []
    for code, response in op.get("responses", {}).items():
        body = _str(1, response.get("description", ""))
        if "schema" in response:
            body += _bytes(2, _bytes(1, schema(response["schema"])))
        codes.append(_bytes(1, _str(1, code) + _bytes(2, _bytes(1, body))))
    out.append(_bytes(9, b"".join(codes)))
    out += [_str(10, s) for s in op.get("schemes", ())]
    out.append(_extensions(13, op))
    return b"".join(out)


_VERBS = {"get": 2, "put": 3, "post": 4, "delete": 5, "options": 6, "head": 7, "patch": 8}


def _path_item(item: dict[str, Any]) -> bytes:
    out = [_bytes(num, _operation(item[verb])) for verb, num in _VERBS.items() if verb in item]
    out += [_bytes(9, _parameter(p)) for p in item.get("parameters", ())]
    return b"".join(out)


def document(doc: dict[str, Any]) -> bytes:
    """openapi.v2.Document of a swagger 2.0 JSON document."""
    info = doc.get("info", {})
    out = [_str(1, doc.get("swagger", "2.0")),
           _bytes(2, _str(1, info.get("title", "")) + _str(2, info.get("version", "")))]
    paths = b"".join(_bytes(2, _str(1, path) + _bytes(2, _path_item(item))) for path, item in doc["paths"].items())
    out.append(_bytes(8, paths))
    definitions = b"".join(_bytes(1, _str(1, name) + _bytes(2, schema(value)))
                           for name, value in doc["definitions"].items())
    out.append(_bytes(9, definitions))
    for requirement in doc.get("security", ()):
        out.append(_bytes(12, b"".join(_bytes(1, _str(1, name) + _bytes(2, b"".join(_str(1, s) for s in scopes)))
                                       for name, scopes in requirement.items())))
    secdefs = b""
    for name, sec in doc.get("securityDefinitions", {}).items():
        api_key = (_str(1, sec.get("type", "")) + _str(2, sec.get("name", "")) + _str(3, sec.get("in", ""))
                   + _str(4, sec.get("description", "")))
        secdefs += _bytes(1, _str(1, name) + _bytes(2, _bytes(2, api_key)))
    if secdefs:
        out.append(_bytes(13, secdefs))
    return b"".join(out)
