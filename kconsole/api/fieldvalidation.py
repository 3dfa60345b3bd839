"""``fieldValidation``: fields an object has that its kind does not, as upstream's strict decoding names them.

kubectl 1.32 validates nothing itself when the server's OpenAPI says it takes ``fieldValidation``: it
sends ``?fieldValidation=Strict`` and relies on the server to refuse a typo such as ``contaners`` or
``metadata.lables``. Upstream decodes into typed structs, so an unknown field never survives:
``Strict`` refuses such an object (400), ``Warn`` (what the HTTP front applies when a request names
no directive, as upstream does) drops the fields and warns, ``Ignore`` drops them silently. No
directive at all (in-process components, whose objects are built from the same types) keeps the
object as it is, unchecked.
"""

from __future__ import annotations

from typing import Any

from kconsole.api.fieldschema import KINDS, TYPES, fields
from kconsole.api.types import StatusError

#: A field's value type: (type name or None for a leaf or free-form value, True for a map of that type).
_Field = tuple[str | None, bool]

_parsed: dict[str, dict[str, _Field]] = {}


def _fields(type_name: str) -> dict[str, _Field]:
    known = _parsed.get(type_name)
    if known is None:
        known = {}
        for name, ref in fields(type_name).items():
            inner = ref.lstrip("[]{}")
            known[name] = (inner if inner in TYPES else None, ref.startswith("{}"))
        _parsed[type_name] = known
    return known


def unknown_fields(obj: dict[str, Any], kind: str, drop: bool = False) -> list[str]:
    """Dotted paths (``spec.template.spec.containers[0].imagee``) of the fields ``kind`` does not have,
    in document order; removed from ``obj`` when ``drop``. A kind without a schema has none."""
    root = KINDS.get(kind)
    out: list[str] = []
    if root is not None:
        _walk(obj, root, "", out, drop)
    return out


def _walk(value: dict[str, Any], type_name: str, path: str, out: list[str], drop: bool) -> None:
    fields = _fields(type_name)
    for key in list(value) if drop else value:
        field = fields.get(key)
        if field is None:
            out.append(path + key)
            if drop:
                del value[key]
            continue
        child_type, is_map = field
        if child_type is None:
            continue
        child = value[key]
        if is_map:
            if isinstance(child, dict):
                for k, v in child.items():
                    if isinstance(v, dict):
                        _walk(v, child_type, f"{path}{key}[{k}].", out, drop)
        elif isinstance(child, dict):
            _walk(child, child_type, f"{path}{key}.", out, drop)
        elif isinstance(child, list):
            for i, item in enumerate(child):
                if isinstance(item, dict):
                    _walk(item, child_type, f"{path}{key}[{i}].", out, drop)


def check(obj: dict[str, Any], kind: str, version: str, directive: str, patched: bool = False,
          before: dict[str, Any] | None = None) -> list[str]:
    """Apply ``directive`` to ``obj``: 400 under Strict; under Warn the fields are dropped and their
    warnings returned. ``patched``: the object is a patch's result (upstream words that error shorter).
    ``before``: the object the patch applied to; unknown fields it already had (stored before this
    check existed) are not the patch's doing and do not fail it."""
    if directive == "Strict":
        unknown = unknown_fields(obj, kind)
        if unknown and before is not None:
            had = set(unknown_fields(before, kind))
            unknown = [p for p in unknown if p not in had]
        if unknown:
            detail = "strict decoding error: " + ", ".join(f'unknown field "{p}"' for p in unknown)
            if not patched:
                detail = f'{kind} in version "{version}" cannot be handled as a {kind}: {detail}'
            raise StatusError.bad_request(detail)
        return []
    if directive == "Warn":
        return [f'unknown field "{p}"' for p in unknown_fields(obj, kind, drop=True)]
    if directive == "Ignore":
        unknown_fields(obj, kind, drop=True)
        return []
    if directive == "":
        return []
    raise StatusError.bad_request(f'fieldValidation: Unsupported value: "{directive}": supported values: '
                                  '"Ignore", "Warn", "Strict"')
