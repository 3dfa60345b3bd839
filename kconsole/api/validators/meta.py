"""Names, labels, annotations and ObjectMeta, with apimachinery's exact messages.

``IsDNS1123Subdomain`` & co. return message lists; :func:`validate_object_meta` turns them into
field causes the way ValidateObjectMeta does (``metadata.name: Invalid value: "Foo": a lowercase
RFC 1123 subdomain must consist of ...``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kconsole.api.validators.field import Cause, forbidden, immutable, invalid, required, too_long

NameFn = Callable[[str, bool], list[str]]

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
LABEL_VALUE_MAX = 63
QUALIFIED_NAME_MAX = 63
TOTAL_ANNOTATION_SIZE = 256 * 1024

_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_FMT = _LABEL_FMT + r"(\." + _LABEL_FMT + ")*"
_DNS1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = "(" + _QNAME_FMT + ")?"

_LABEL_RE = re.compile("^" + _LABEL_FMT + "$")
_SUBDOMAIN_RE = re.compile("^" + _SUBDOMAIN_FMT + "$")
_DNS1035_RE = re.compile("^" + _DNS1035_FMT + "$")
_QNAME_RE = re.compile("^" + _QNAME_FMT + "$")
_LABEL_VALUE_RE = re.compile("^" + _LABEL_VALUE_FMT + "$")

LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
             "and must start and end with an alphanumeric character")
SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                 "and must start and end with an alphanumeric character")
DNS1035_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
               "alphabetic character, and end with an alphanumeric character")
QNAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
             "alphanumeric character")
LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                   "and must start and end with an alphanumeric character")


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """upstream RegexError, including its doubled space between examples."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    parts = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {parts}regex used for validation is '{fmt}')"


def max_len_error(n: int) -> str:
    return f"must be no more than {n} characters"


def is_dns1123_label(value: str) -> list[str]:
    errs = []
    if len(value) > DNS1123_LABEL_MAX:
        errs.append(max_len_error(DNS1123_LABEL_MAX))
    if not _LABEL_RE.match(value):
        errs.append(regex_error(LABEL_MSG, _LABEL_FMT, "my-name", "123-abc"))
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    errs = []
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX))
    if not _SUBDOMAIN_RE.match(value):
        errs.append(regex_error(SUBDOMAIN_MSG, _SUBDOMAIN_FMT, "example.com"))
    return errs


def is_dns1035_label(value: str) -> list[str]:
    errs = []
    if len(value) > DNS1123_LABEL_MAX:
        errs.append(max_len_error(DNS1123_LABEL_MAX))
    if not _DNS1035_RE.match(value):
        errs.append(regex_error(DNS1035_MSG, _DNS1035_FMT, "my-name", "abc-123"))
    return errs


def is_qualified_name(value: str) -> list[str]:
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
        errs: list[str] = []
    elif len(parts) == 2:
        prefix, name = parts
        errs = []
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs += ["prefix part " + m for m in is_dns1123_subdomain(prefix)]
    else:
        return ["a qualified name " + regex_error(QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > QUALIFIED_NAME_MAX:
        errs.append("name part " + max_len_error(QUALIFIED_NAME_MAX))
    if not _QNAME_RE.match(name):
        errs.append("name part " + regex_error(QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def is_label_value(value: str) -> list[str]:
    errs = []
    if len(value) > LABEL_VALUE_MAX:
        errs.append(max_len_error(LABEL_VALUE_MAX))
    if not _LABEL_VALUE_RE.match(value):
        errs.append(regex_error(LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def _mask_trailing_dash(name: str) -> str:
    return name[:-2] + "a" if len(name) > 1 and name.endswith("-") else name


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    return is_dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool) -> list[str]:
    return is_dns1123_label(_mask_trailing_dash(name) if prefix else name)


def name_is_dns1035_label(name: str, prefix: bool) -> list[str]:
    return is_dns1035_label(_mask_trailing_dash(name) if prefix else name)


def name_is_path_segment(name: str, prefix: bool) -> list[str]:
    """RBAC and a few other kinds allow anything that is a valid URL path segment (``system:node``)."""
    errs = []
    if not prefix and name in (".", ".."):
        errs.append(f'may not be \'{name}\'')
    for bad in ("/", "%"):
        if bad in name:
            errs.append(f"may not contain '{bad}'")
    return errs


def validate_labels(labels: Any, path: str) -> list[Cause]:
    if labels is None:
        return []
    if not isinstance(labels, dict):
        return [invalid(path, labels, "must be a map of string keys to string values")]
    causes: list[Cause] = []
    for key, value in labels.items():
        for msg in is_qualified_name(str(key)):
            causes.append(invalid(path, key, msg))
        if not isinstance(value, str):
            causes.append(invalid(f"{path}[{key}]", value, "must be a string"))
            continue
        for msg in is_label_value(value):
            causes.append(invalid(path, value, msg))
    return causes


def validate_annotations(annotations: Any, path: str) -> list[Cause]:
    if annotations is None:
        return []
    if not isinstance(annotations, dict):
        return [invalid(path, annotations, "must be a map of string keys to string values")]
    causes: list[Cause] = []
    total = 0
    for key, value in annotations.items():
        for msg in is_qualified_name(str(key).lower()):
            causes.append(invalid(path, key, msg))
        if not isinstance(value, str):
            causes.append(invalid(f"{path}[{key}]", value, "must be a string"))
            continue
        total += len(key) + len(value)
    if total > TOTAL_ANNOTATION_SIZE:
        causes.append(too_long(path, TOTAL_ANNOTATION_SIZE))
    return causes


def validate_owner_references(refs: Any, path: str) -> list[Cause]:
    if not refs:
        return []
    if not isinstance(refs, list):
        return [invalid(path, refs, "must be a list")]
    causes: list[Cause] = []
    controllers = []
    for ref in refs:
        if not isinstance(ref, dict):
            causes.append(invalid(path, ref, "must be an object"))
            continue
        if not ref.get("apiVersion"):
            causes.append(invalid(f"{path}.apiVersion", ref.get("apiVersion", ""), "version must not be empty"))
        if not ref.get("kind"):
            causes.append(invalid(f"{path}.kind", ref.get("kind", ""), "kind must not be empty"))
        if not ref.get("name"):
            causes.append(invalid(f"{path}.name", ref.get("name", ""), "name must not be empty"))
        if not ref.get("uid"):
            causes.append(invalid(f"{path}.uid", ref.get("uid", ""), "uid must not be empty"))
        if ref.get("controller"):
            controllers.append(f'{ref.get("kind", "")}/{ref.get("name", "")}')
    if len(controllers) > 1:
        causes.append(invalid(path, refs, "Only one reference can have Controller set to true. Found \"true\" in "
                                          "references for " + " and ".join(controllers)))
    return causes


def validate_object_meta(obj: dict[str, Any], namespaced: bool, name_fn: NameFn) -> list[Cause]:
    """upstream ValidateObjectMeta: name (or generateName), namespace, labels, annotations, owners."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return [required("metadata")]
    causes: list[Cause] = []
    name = meta.get("name") or ""
    generate = meta.get("generateName") or ""
    if generate:
        for msg in name_fn(str(generate), True):
            causes.append(invalid("metadata.generateName", generate, msg))
    if not name:
        causes.append(required("metadata.name", "name or generateName is required"))
    else:
        for msg in name_fn(str(name), False):
            causes.append(invalid("metadata.name", name, msg))
    namespace = meta.get("namespace") or ""
    if namespaced:
        if not namespace:
            causes.append(required("metadata.namespace"))
        else:
            for msg in is_dns1123_label(str(namespace)):
                causes.append(invalid("metadata.namespace", namespace, msg))
    elif namespace:
        causes.append(forbidden("metadata.namespace", "not allowed on this type"))
    causes += validate_labels(meta.get("labels"), "metadata.labels")
    causes += validate_annotations(meta.get("annotations"), "metadata.annotations")
    causes += validate_owner_references(meta.get("ownerReferences"), "metadata.ownerReferences")
    for i, fin in enumerate(meta.get("finalizers") or ()):
        for msg in is_qualified_name(str(fin)):
            causes.append(invalid(f"metadata.finalizers[{i}]", fin, msg))
    return causes


def validate_object_meta_update(obj: dict[str, Any], old: dict[str, Any]) -> list[Cause]:
    """name, namespace and uid never change."""
    meta = obj.get("metadata") or {}
    old_meta = old.get("metadata") or {}
    causes: list[Cause] = []
    for key in ("name", "namespace"):
        if (meta.get(key) or "") != (old_meta.get(key) or ""):
            causes.append(immutable(f"metadata.{key}", meta.get(key) or ""))
    if meta.get("uid") and old_meta.get("uid") and meta["uid"] != old_meta["uid"]:
        causes.append(immutable("metadata.uid", meta["uid"]))
    return causes
