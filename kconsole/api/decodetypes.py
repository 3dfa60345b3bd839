"""JSON types an object's fields must have, checked where upstream's decoder would check them.

Upstream decodes every body, and every patch's result, into the kind's Go struct: a ``metadata``
that is a string, ``data`` that is a list or ``volumes`` that is an object never gets past the
decoder (400 for a body, 422 for a patch's result). kconsole keeps objects as plain dicts, so
without this check such a value reached code that assumes the shape, and the client got a 500.
The types come from :mod:`kconsole.api.fieldschema`; kinds without a schema (custom resources)
get their ``metadata`` checked (their CRD's schema judges the rest).

Strings are not told apart from numbers: a Quantity (``cpu: 1``) is a string in the schema but
Go's decoder takes a number for it.
"""

from __future__ import annotations

from typing import Any

from kconsole.api.fieldschema import KINDS, TYPES, fields

#: Scalar codes -> (Go type named in errors, the Python types that decode into it).
_SCALARS: dict[str, tuple[str, tuple[type, ...]]] = {
    "s": ("string", (str, int, float, bool)),
    "t": ("v1.Time", (str,)),
    "i": ("int64", (int,)),
    "n": ("float64", (int, float)),
    "b": ("bool", (bool,)),
}

#: Per type: field -> (container: "" | "[]" | "{}", element: a TYPES name, a scalar code or "o").
_Table = dict[str, tuple[str, str]]
_tables: dict[str, _Table] = {}


def _table(type_name: str) -> _Table:
    table = _tables.get(type_name)
    if table is None:
        table = {}
        for name, ref in fields(type_name).items():
            container = ref[:2] if ref[:2] in ("[]", "{}") else ""
            table[name] = (container, ref[len(container):])
        _tables[type_name] = table
    return table


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else "null"


def _go_type(element: str, container: str = "") -> str:
    inner = f"v1.{element}" if element in TYPES else "interface {}" if element == "o" else _SCALARS[element][0]
    return {"": inner, "[]": f"[]{inner}", "{}": f"map[string]{inner}"}[container]


class _Mismatch(Exception):
    def __init__(self, value: Any, path: str, go_type: str) -> None:
        super().__init__(f"json: cannot unmarshal {_json_type(value)} into Go struct field {path} of type {go_type}")


def _walk(obj: dict[str, Any], type_name: str, path: str) -> None:
    table = _table(type_name)
    for key, value in obj.items():
        if value is None:
            continue
        spec = table.get(key)
        if spec is None:
            continue  # unknown fields are fieldValidation's business
        container, element = spec
        here = f"{path}.{key}"
        if container == "[]":
            if not isinstance(value, list):
                raise _Mismatch(value, here, _go_type(element, container))
            for item in value:
                _value(item, element, here)
        elif container == "{}":
            if not isinstance(value, dict):
                raise _Mismatch(value, here, _go_type(element, container))
            for item in value.values():
                _value(item, element, here)
        else:
            _value(value, element, here)


def _value(value: Any, element: str, path: str) -> None:
    if value is None or element == "o":
        return
    if element in TYPES:
        if not isinstance(value, dict):
            raise _Mismatch(value, path, _go_type(element))
        _walk(value, element, path)
        return
    go, accepted = _SCALARS[element]
    if not isinstance(value, accepted) or (isinstance(value, bool) and bool not in accepted):
        if element == "i" and isinstance(value, float) and value.is_integer():
            return
        raise _Mismatch(value, path, go)


def type_error(obj: dict[str, Any], kind: str) -> str | None:
    """The first value of ``obj`` whose JSON type its field cannot hold, worded as Go's decoder
    words it (``json: cannot unmarshal string into Go struct field ConfigMap.data of type
    map[string]string``); None when every field has a type it can hold."""
    try:
        root = KINDS.get(kind)
        if root is not None:
            _walk(obj, root, kind)
        else:
            meta = obj.get("metadata")
            if meta is not None:
                _value(meta, "ObjectMeta", f"{kind}.metadata")
    except _Mismatch as err:
        return str(err)
    return None
