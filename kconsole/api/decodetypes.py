"""JSON types an object's fields must have, checked where upstream's decoder would check them.

Upstream decodes every body, and every patch's result, into the kind's Go struct: a ``metadata``
that is a string, ``data`` that is a list or ``volumes`` that is an object never gets past the
decoder (400 for a body, 422 for a patch's result). kconsole keeps objects as plain dicts, so
without this check such a value reached code that assumes the shape, and the client got a 500.
The types come from :mod:`kconsole.api.fieldschema`, plus the bodies of subresources and reviews
below; kinds without a schema (custom resources) get their ``metadata`` checked (their CRD's schema
judges the rest).

Strings are not told apart from numbers: a Quantity (``cpu: 1``) is a string in the schema but
Go's decoder takes a number for it.
"""

from __future__ import annotations

from typing import Any

from kconsole.api.fieldschema import KINDS, TYPES, fields
from kconsole.api.types import StatusError, status_body

#: Scalar codes -> (Go type named in errors, the Python types that decode into it).
_SCALARS: dict[str, tuple[str, tuple[type, ...]]] = {
    "s": ("string", (str, int, float, bool)),
    "t": ("v1.Time", (str,)),
    "i": ("int64", (int,)),
    "n": ("float64", (int, float)),
    "b": ("bool", (bool,)),
}

#: Request-only kinds (subresource and review bodies), in fieldschema's notation.
_REQUEST_TYPES: dict[str, str] = {
    "Scale": "apiVersion kind metadata:ObjectMeta spec:ScaleSpec status:ScaleStatus",
    "ScaleSpec": "replicas:i",
    "ScaleStatus": "replicas:i selector",
    "Binding": "apiVersion kind metadata:ObjectMeta target:ObjectReference",
    "Eviction": "apiVersion deleteOptions:DeleteOptions kind metadata:ObjectMeta",
    "DeleteOptions": "apiVersion dryRun:[]s gracePeriodSeconds:i kind orphanDependents:b "
                     "preconditions:Preconditions propagationPolicy",
    "Preconditions": "resourceVersion uid",
    "TokenRequest": "apiVersion kind metadata:ObjectMeta spec:TokenRequestSpec status:o",
    "TokenRequestSpec": "audiences:[]s boundObjectRef:o expirationSeconds:i",
    "TokenReview": "apiVersion kind metadata:ObjectMeta spec:TokenReviewSpec status:o",
    "TokenReviewSpec": "audiences:[]s token",
    "SelfSubjectAccessReview": "apiVersion kind metadata:ObjectMeta spec:SelfSubjectAccessReviewSpec status:o",
    "SelfSubjectAccessReviewSpec": "nonResourceAttributes:NonResourceAttributes resourceAttributes:ResourceAttributes",
    "SubjectAccessReview": "apiVersion kind metadata:ObjectMeta spec:SubjectAccessReviewSpec status:o",
    "LocalSubjectAccessReview": "apiVersion kind metadata:ObjectMeta spec:SubjectAccessReviewSpec status:o",
    "SubjectAccessReviewSpec": "extra:{}o groups:[]s nonResourceAttributes:NonResourceAttributes "
                               "resourceAttributes:ResourceAttributes uid user",
    "ResourceAttributes": "fieldSelector:o group labelSelector:o name namespace resource subresource verb version",
    "NonResourceAttributes": "path verb",
    "SelfSubjectRulesReview": "apiVersion kind metadata:ObjectMeta spec:SelfSubjectRulesReviewSpec status:o",
    "SelfSubjectRulesReviewSpec": "namespace",
}


def _named(type_name: str) -> bool:
    return type_name in TYPES or type_name in _REQUEST_TYPES


def _fields_of(type_name: str) -> dict[str, str]:
    if type_name in TYPES:
        return fields(type_name)
    out: dict[str, str] = {}
    for entry in _REQUEST_TYPES[type_name].split():
        name, _, ref = entry.partition(":")
        out[name] = ref or "s"
    return out


#: Per type: field -> (container: "" | "[]" | "{}", element: a TYPES name, a scalar code or "o").
_Table = dict[str, tuple[str, str]]
_tables: dict[str, _Table] = {}


def _table(type_name: str) -> _Table:
    table = _tables.get(type_name)
    if table is None:
        table = {}
        for name, ref in _fields_of(type_name).items():
            container = ref[:2] if ref[:2] in ("[]", "{}") else ""
            table[name] = (container, ref[len(container):])
        _tables[type_name] = table
    return table


def json_type(value: Any) -> str:
    """The JSON type of a decoded value, as Go's decoder names it in "cannot unmarshal X into"."""
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
    inner = f"v1.{element}" if _named(element) else "interface {}" if element == "o" else _SCALARS[element][0]
    return {"": inner, "[]": f"[]{inner}", "{}": f"map[string]{inner}"}[container]


class _Mismatch(Exception):
    def __init__(self, value: Any, path: str, go_type: str) -> None:
        super().__init__(f"json: cannot unmarshal {json_type(value)} into Go struct field {path} of type {go_type}")


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
    if _named(element):
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
        root = KINDS.get(kind) or (kind if kind in _REQUEST_TYPES else None)
        if root is not None:
            _walk(obj, root, kind)
        else:
            meta = obj.get("metadata")
            if meta is not None:
                _value(meta, "ObjectMeta", f"{kind}.metadata")
    except _Mismatch as err:
        return str(err)
    return None


def check_patched_types(new: dict[str, Any], kind: str, name: str, group: str = "") -> None:
    """422 for a patch whose result the kind's Go struct could not be decoded from, as upstream's
    patcher answers it (the field is "patch")."""
    problem = type_error(new, kind)
    if problem is not None:
        raise StatusError(status_body(422, "Invalid", f'{kind} "{name}" is invalid: patch: Invalid value: '
                                      f'{problem}', name=name, group=group, kind=kind,
                                      causes=[{"reason": "FieldValueInvalid", "message": f"Invalid value: {problem}",
                                               "field": "patch"}]))
