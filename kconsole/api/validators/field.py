"""Field errors in upstream's shape (apimachinery's field.Error) as Status causes.

A cause is ``{"reason": "FieldValueInvalid", "message": 'Invalid value: "Foo": ...', "field":
"metadata.name"}``; the server joins them into ``Pod "x" is invalid: metadata.name: Invalid
value: ...``. Values print as Go's %v/%q/%#v would, so messages read like the real API server's.
"""

from __future__ import annotations

import json
from typing import Any

Cause = dict[str, str]


class GoLiteral(str):
    """A value already rendered the way Go would print it (a struct literal): printed verbatim."""


def go_value(value: Any) -> str:
    """How upstream prints a bad value: %q strings, %v numbers and bools, %#v maps and slices."""
    if isinstance(value, GoLiteral):
        return str(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value) if isinstance(value, float) and not value.is_integer() else str(int(value))
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        if all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            inner = ", ".join(f"{json.dumps(k)}:{json.dumps(v)}" for k, v in sorted(value.items()))
            return "map[string]string{" + inner + "}"
        return "map[string]interface {}{" + ", ".join(
            f"{json.dumps(k)}:{go_value(v)}" for k, v in sorted(value.items())) + "}"
    if isinstance(value, list):
        if all(isinstance(v, str) for v in value):
            return "[]string{" + ", ".join(json.dumps(v) for v in value) + "}"
        return "[]interface {}{" + ", ".join(go_value(v) for v in value) + "}"
    return str(value)


def _cause(reason: str, path: str, message: str) -> Cause:
    return {"reason": reason, "message": message, "field": path}


def required(path: str, detail: str = "") -> Cause:
    return _cause("FieldValueRequired", path, "Required value" + (f": {detail}" if detail else ""))


def invalid(path: str, value: Any, detail: str = "") -> Cause:
    return _cause("FieldValueInvalid", path, f"Invalid value: {go_value(value)}" + (f": {detail}" if detail else ""))


def duplicate(path: str, value: Any) -> Cause:
    return _cause("FieldValueDuplicate", path, f"Duplicate value: {go_value(value)}")


def not_supported(path: str, value: Any, supported: list[str] | tuple[str, ...]) -> Cause:
    msg = f"Unsupported value: {go_value(value)}"
    if supported:
        msg += ": supported values: " + ", ".join(json.dumps(s) for s in supported)
    return _cause("FieldValueNotSupported", path, msg)


def forbidden(path: str, detail: str) -> Cause:
    return _cause("FieldValueForbidden", path, f"Forbidden: {detail}")


def too_long(path: str, max_length: int) -> Cause:
    unit = "byte" if max_length == 1 else "bytes"
    return _cause("FieldValueTooLong", path, f"Too long: may not be more than {max_length} {unit}")


def not_found(path: str, value: Any) -> Cause:
    return _cause("FieldValueNotFound", path, f"Not found: {go_value(value)}")


def too_many(path: str, actual: int, max_items: int) -> Cause:
    return _cause("FieldValueTooMany", path, f"Too many: {actual}: must have at most {max_items} items")


def immutable(path: str, value: Any) -> Cause:
    return invalid(path, value, "field is immutable")


def non_negative(path: str, value: Any) -> list[Cause]:
    """upstream ValidateNonnegativeField."""
    if isinstance(value, bool) or not isinstance(value, int):
        return [invalid(path, value, "must be an integer")] if value is not None else []
    return [invalid(path, value, "must be greater than or equal to 0")] if value < 0 else []


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
