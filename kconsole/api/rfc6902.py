"""JSON patch (RFC 6902) as kube-apiserver applies it: evanphx/json-patch v4's rules.

The Python ``jsonpatch`` library differs where clients notice: its ``test`` finds ``true`` equal to
``1``. A failure carries evanphx's words (``testing value /spec/replicas failed: test failed``) for
whoever reads them here; kube-apiserver answers clients a 422 that says nothing of why, and so does
``kconsole.api.patch``.
"""

from __future__ import annotations

import copy
from typing import Any

#: Why a whole operation failed, as evanphx/json-patch wraps its sentinel errors.
MISSING = "missing value"
INVALID_INDEX = "invalid index referenced"


class PatchError(Exception):
    """A patch that is well formed but does not apply to this object (kube-apiserver answers 422)."""


class MalformedPatch(Exception):
    """A patch that is not a list of operations (kube-apiserver answers 400)."""


def apply(doc: Any, operations: Any) -> Any:
    """``doc`` with every operation applied in order; ``doc`` itself may be changed."""
    if not isinstance(operations, list):
        raise MalformedPatch("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    for op in operations:
        if not isinstance(op, dict):
            raise MalformedPatch("json: cannot unmarshal non-object into Go value of type jsonpatch.operation")
        doc = _apply_one(doc, op)
    return doc


def _apply_one(doc: Any, op: dict[str, Any]) -> Any:
    kind = op.get("op")
    path = _path(op, "path")
    if kind == "add":
        return _add(doc, path, copy.deepcopy(op.get("value")), f'add operation does not apply: doc is missing path: "{path}"')
    if kind == "remove":
        parent, key = _find(doc, path)
        if parent is None:
            raise PatchError(f'remove operation does not apply: doc is missing path: "{path}": {MISSING}')
        _remove(parent, key)
        return doc
    if kind == "replace":
        if path == "":
            return copy.deepcopy(op.get("value"))
        parent, key = _find(doc, path)
        if parent is None:
            raise PatchError(f"replace operation does not apply: doc is missing path: {path}: {MISSING}")
        if not _has(parent, key):
            raise PatchError(f"replace operation does not apply: doc is missing key: {path}: {MISSING}")
        _set(parent, key, copy.deepcopy(op.get("value")))
        return doc
    if kind in ("move", "copy"):
        source = _path(op, "from")
        parent, key = _find(doc, source)
        if parent is None or not _has(parent, key):
            raise PatchError(f"{kind} operation does not apply: doc is missing from path: {source}: {MISSING}")
        value = _get(parent, key)
        if kind == "move":
            _remove(parent, key)
        else:
            value = copy.deepcopy(value)
        return _add(doc, path, value, f'{kind} operation does not apply: doc is missing destination path: {path}')
    if kind == "test":
        if path == "":
            actual, found = doc, True
        else:
            parent, key = _find(doc, path)
            if parent is None:
                raise PatchError(f"test operation does not apply: is missing path: {path}: {MISSING}")
            found = _has(parent, key)
            actual = _get(parent, key) if found else None
        if (actual is None and op.get("value") is None) or (found and _same(actual, op.get("value"))):
            return doc
        raise PatchError(f"testing value {path} failed: test failed")
    raise PatchError(f"Unexpected kind: {kind if isinstance(kind, str) else 'unknown'}: unknown object type")


def _path(op: dict[str, Any], field: str) -> str:
    value = op.get(field)
    if not isinstance(value, str):
        raise PatchError(f"operation missing {field} field: {MISSING}" if value is None
                         else f"operation, {field} field: unknown object type")
    if value and not value.startswith("/"):
        raise PatchError(f"JSON pointer must be empty or start with a \"/\": {value}")
    return value


def _tokens(path: str) -> list[str]:
    return [part.replace("~1", "/").replace("~0", "~") for part in path.split("/")[1:]]


def _find(doc: Any, path: str) -> tuple[Any, str]:
    """The container holding the path's last token, and that token; (None, "") when a step is missing."""
    tokens = _tokens(path)
    if not tokens:
        return None, ""
    node = doc
    for token in tokens[:-1]:
        if not _has(node, token):
            return None, ""
        node = _get(node, token)
    return (node, tokens[-1]) if isinstance(node, (dict, list)) else (None, "")


def _index(array: list[Any], key: str, *, adding: bool = False) -> int:
    if adding and key == "-":
        return len(array)
    try:
        index = int(key)
    except ValueError:
        raise PatchError(f'strconv.Atoi: parsing "{key}": invalid syntax') from None
    if index < 0 or index > len(array) or (index == len(array) and not adding):
        raise PatchError(f"Unable to access invalid index: {index}: {INVALID_INDEX}")
    return index


def _has(node: Any, key: str) -> bool:
    if isinstance(node, dict):
        return key in node
    if isinstance(node, list):
        return key.isdigit() and int(key) < len(node)
    return False


def _get(node: Any, key: str) -> Any:
    return node[key] if isinstance(node, dict) else node[int(key)]


def _set(node: Any, key: str, value: Any) -> None:
    if isinstance(node, dict):
        node[key] = value
    else:
        node[_index(node, key)] = value


def _add(doc: Any, path: str, value: Any, missing: str) -> Any:
    if path == "":
        return value
    parent, key = _find(doc, path)
    if parent is None:
        raise PatchError(f"{missing}: {MISSING}")
    if isinstance(parent, dict):
        parent[key] = value
    else:
        parent.insert(_index(parent, key, adding=True), value)
    return doc


def _remove(parent: Any, key: str) -> None:
    if isinstance(parent, dict):
        if key not in parent:
            raise PatchError(f"Unable to remove nonexistent key: {key}: {MISSING}")
        del parent[key]
    else:
        del parent[_index(parent, key)]


def _same(a: Any, b: Any) -> bool:
    """JSON equality: ``true`` is not ``1``, ``1`` is ``1.0``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b
