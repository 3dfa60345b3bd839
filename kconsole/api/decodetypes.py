"""JSON types an object's fields must have, checked where upstream's decoder would check them.

Upstream decodes every body, and every patch's result, into the kind's Go struct: a ``metadata``
that is a string, ``data`` that is a list, an ``image: 5`` or ``replicas: "three"`` never gets past
the decoder (400 for a body, 422 for a patch's result), worded as Go's ``encoding/json`` words it
(``json: cannot unmarshal number into Go struct field Container.spec.containers.image of type
string``: the innermost struct, then the field path from the root). Quantities, IntOrStrings and
``[]byte`` fields have their own decoders and their own errors (``quantities must match the regular
expression ...``, ``illegal base64 data at input byte 3``). The types come from the one field table
the OpenAPI schemas are built from (:mod:`kconsole.api.fieldschema`), plus the bodies of
subresources and reviews below; kinds without a schema (custom resources) get their ``metadata``
checked (their CRD's schema judges the rest).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from kconsole.api.fieldschema import KINDS, TYPES, fields
from kconsole.api.types import StatusError, status_body

#: Scalar codes -> (Go type named in errors, the Python types that decode into it).
_SCALARS: dict[str, tuple[str, tuple[type, ...]]] = {
    "s": ("string", (str,)),
    "t": ("v1.Time", (str,)),
    "m": ("v1.MicroTime", (str,)),
    "i": ("int32", (int,)),
    "l": ("int64", (int,)),
    "n": ("float64", (int, float)),
    "b": ("bool", (bool,)),
    "q": ("resource.Quantity", (str, int, float)),
    "x": ("intstr.IntOrString", (str, int)),
    "y": ("[]uint8", (str,)),
}
#: Named Go types of maps the field table spells ``{}T``.
_MAP_TYPES = {"q": "v1.ResourceList"}
#: The Go integer types' ranges (a number outside is "number 3000000000", as Go reports it).
_RANGES = {"i": (-2**31, 2**31 - 1), "l": (-2**63, 2**63 - 1)}
#: resource.Quantity's own errors (k8s.io/apimachinery/pkg/api/resource).
_QUANTITY_FORMAT = ("quantities must match the regular expression "
                    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
_QUANTITY_SUFFIX = "unable to parse quantity's suffix"
_QUANTITY_RE = re.compile(r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$")
_SUFFIXES = frozenset(("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u", "m", "k", "M", "G", "T", "P", "E"))
_EXPONENT_RE = re.compile(r"^[eE][-+]?[0-9]+$")
#: Types of autoscaling/v2 (package v2 in Go); the rest of the table is in packages named v1.
_V2_ROOT = "HorizontalPodAutoscaler"

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


_v2_types: set[str] = set()


def _package(type_name: str) -> str:
    """The Go package name a table type is declared in (``v2`` for autoscaling/v2's own types)."""
    if not _v2_types:
        shared = _reachable("ObjectMeta") | _reachable("LabelSelector")
        _v2_types.update(_reachable(_V2_ROOT) - shared)
    return "v2" if type_name in _v2_types else "v1"


def _reachable(root: str) -> set[str]:
    seen = {root}
    todo = [root]
    while todo:
        for ref in _fields_of(todo.pop()).values():
            inner = ref.lstrip("[]{}")
            if _named(inner) and inner not in seen:
                seen.add(inner)
                todo.append(inner)
    return seen


def _go_type(element: str, container: str = "") -> str:
    if container == "{}" and element in _MAP_TYPES:
        return _MAP_TYPES[element]
    inner = (f"{_package(element)}.{element}" if _named(element) else "interface {}" if element == "o"
             else _SCALARS[element][0])
    return {"": inner, "[]": f"[]{inner}", "{}": f"map[string]{inner}"}[container]


class _Mismatch(Exception):
    """The decoder's first error, as its message reads."""


def _type_mismatch(value: Any, struct: str, path: str, go_type: str) -> _Mismatch:
    return _Mismatch(f"json: cannot unmarshal {json_type(value)} into Go struct field {struct}.{path} "
                     f"of type {go_type}")


def _walk(obj: dict[str, Any], type_name: str, path: str) -> None:
    table = _table(type_name)
    for key, value in obj.items():
        if value is None:
            continue
        spec = table.get(key)
        if spec is None:
            continue  # unknown fields are fieldValidation's business
        container, element = spec
        here = f"{path}.{key}" if path else key
        if container == "[]":
            if not isinstance(value, list):
                raise _type_mismatch(value, type_name, here, _go_type(element, container))
            for item in value:
                _value(item, element, type_name, here)
        elif container == "{}":
            if not isinstance(value, dict):
                raise _type_mismatch(value, type_name, here, _go_type(element, container))
            for item in value.values():
                _value(item, element, type_name, here)
        elif element in ("t", "m") and isinstance(value, str):
            canonical = _time(value, element == "m")
            if canonical != value:
                obj[key] = canonical
        else:
            _value(value, element, type_name, here)


_CANONICAL_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


_CANONICAL_MICRO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


def _time(text: str, micro: bool) -> str:
    """A metav1.Time or MicroTime as upstream re-encodes it: in UTC with ``Z`` (``+00:00`` or another
    offset is converted), a Time in whole seconds, a MicroTime with six fractional digits; a text that is no RFC 3339 time is
    Go's parse error."""
    if (_CANONICAL_MICRO if micro else _CANONICAL_TIME).match(text):
        return text
    try:
        parsed = dt.datetime.fromisoformat(text)
    except ValueError:
        raise _Mismatch(f'parsing time "{text}" as "2006-01-02T15:04:05Z07:00": cannot parse "{text}" as '
                        '"2006"') from None
    if parsed.tzinfo is None:
        raise _Mismatch(f'parsing time "{text}" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "Z07:00"')
    utc = parsed.astimezone(dt.timezone.utc)
    fraction = f".{utc.microsecond:06d}" if micro else ""
    return utc.strftime("%Y-%m-%dT%H:%M:%S") + fraction + "Z"


def _value(value: Any, element: str, struct: str, path: str) -> None:
    """Check one value of type ``element`` held by field ``path`` of the Go struct ``struct``."""
    if value is None or element == "o":
        return
    if _named(element):
        if not isinstance(value, dict):
            raise _type_mismatch(value, struct, path, _go_type(element))
        _walk(value, element, path)
        return
    if element == "q":
        _quantity(value)
        return
    if element == "x":
        _int_or_string(value)
        return
    go, accepted = _SCALARS[element]
    if isinstance(value, bool) and bool not in accepted or not isinstance(value, accepted):
        raise _type_mismatch(value, struct, path, go)
    if element in _RANGES and not isinstance(value, bool):
        low, high = _RANGES[element]
        if isinstance(value, float) or not low <= value <= high:
            raise _Mismatch(f"json: cannot unmarshal number {_go_number(value)} into Go struct field "
                            f"{struct}.{path} of type {go}")
    elif element == "y":
        offset = base64_error(value)
        if offset is not None:
            raise _Mismatch(f"illegal base64 data at input byte {offset}")


def _go_number(value: int | float) -> str:
    """A JSON number as it appeared in the body (Go quotes the literal)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return f"{value:.1f}"
    return repr(value) if isinstance(value, float) else str(value)


def _quantity(value: Any) -> None:
    """resource.Quantity's UnmarshalJSON: a string or a bare number, parsed as a quantity."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise _Mismatch(_QUANTITY_FORMAT)
    text = value.strip() if isinstance(value, str) else json_number(value)
    if not text:
        return  # "" decodes to the zero quantity
    match = _QUANTITY_RE.match(text)
    if match is None:
        raise _Mismatch(_QUANTITY_FORMAT)
    suffix = match.group(2)
    if suffix not in _SUFFIXES and not _EXPONENT_RE.match(suffix):
        raise _Mismatch(_QUANTITY_SUFFIX)


def json_number(value: int | float) -> str:
    """A number as JSON writes it (``1``, ``0.5``, ``1e+21``)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return str(value)


def _int_or_string(value: Any) -> None:
    """intstr.IntOrString's UnmarshalJSON: a string, else an int32 (its own, context-free error)."""
    if isinstance(value, str):
        return
    if isinstance(value, int) and not isinstance(value, bool) and -2**31 <= value < 2**31:
        return
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        raise _Mismatch(f"json: cannot unmarshal number {_go_number(value)} into Go value of type int32")
    raise _Mismatch(f"json: cannot unmarshal {json_type(value)} into Go value of type int32")


_B64 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def base64_error(text: str) -> int | None:
    """Where Go's ``base64.StdEncoding.Decode`` stops on ``text`` (its CorruptInputError offset), or
    None when it decodes; newlines are skipped as Go skips them."""
    src = text.encode("utf-8", "surrogatepass")
    size = len(src)
    si = 0
    while si < size:
        j = 0
        while j < 4:
            if si == size:
                if j == 0:
                    return None
                return si - j
            c = src[si]
            si += 1
            if c in _B64:
                j += 1
                continue
            if c in (10, 13):
                continue
            if c != 61 or j < 2:  # '='; padding cannot start a quantum's first two places
                return si - 1
            if j == 2:
                while si < size and src[si] in (10, 13):
                    si += 1
                if si == size:
                    return size
                if src[si] != 61:
                    return si - 1
                si += 1
            while si < size and src[si] in (10, 13):
                si += 1
            return si if si < size else None
    return None


def type_error(obj: dict[str, Any], kind: str) -> str | None:
    """The first value of ``obj`` whose JSON type its field cannot hold, worded as Go's decoder
    words it (``json: cannot unmarshal string into Go struct field ConfigMap.data of type
    map[string]string``); None when every field has a type it can hold."""
    try:
        root = KINDS.get(kind) or (kind if kind in _REQUEST_TYPES else None)
        if root is not None:
            _walk(obj, root, "")
        else:
            meta = obj.get("metadata")
            if meta is not None:
                _value(meta, "ObjectMeta", kind, "metadata")
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
