"""Names, labels, annotations and ObjectMeta, with apimachinery's exact messages.

The name rules themselves (``IsDNS1123Subdomain`` & co., returning message lists) live in
``kconsole.objects.names``; :func:`validate_object_meta` turns them into
field causes the way ValidateObjectMeta does (``metadata.name: Invalid value: "Foo": a lowercase
RFC 1123 subdomain must consist of ...``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kconsole.api.validators.field import Cause, forbidden, go_value, immutable, invalid, required, too_long
from kconsole.objects.names import (
    is_dns1035_label, is_dns1123_label, is_dns1123_subdomain, is_qualified_name, is_valid_path_segment_name,
    regex_error)
from kconsole.objects.names import is_valid_label_value as is_label_value

__all__ = ["is_dns1035_label", "is_dns1123_label", "is_dns1123_subdomain", "is_label_value", "is_qualified_name",
           "regex_error"]

NameFn = Callable[[str, bool], list[str]]

TOTAL_ANNOTATION_SIZE = 256 * 1024


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
    if prefix and name in (".", ".."):
        return []
    return is_valid_path_segment_name(name)


#: Label keys and values already found valid: the objects of one template carry the same labels.
#: Bounded; cleared when full.
_VALID_LABEL_KEYS: set[str] = set()
_VALID_LABEL_VALUES: set[str] = set()
_VALID_LABELS_SIZE = 8192
#: Namespace names already found valid: a namespace's objects all carry its name. Bounded alike.
_VALID_NAMESPACES: set[str] = set()


def validate_labels(labels: Any, path: str) -> list[Cause]:
    if labels is None:
        return []
    if not isinstance(labels, dict):
        return [invalid(path, labels, "must be a map of string keys to string values")]
    causes: list[Cause] = []
    good_keys, good_values = _VALID_LABEL_KEYS, _VALID_LABEL_VALUES
    for key, value in labels.items():
        if key not in good_keys or type(key) is not str:
            errors = is_qualified_name(str(key))
            for msg in errors:
                causes.append(invalid(path, key, msg))
            if not errors and type(key) is str:
                _remember(good_keys, key)
        if not isinstance(value, str):
            causes.append(invalid(f"{path}[{key}]", value, "must be a string"))
            continue
        if value not in good_values or type(value) is not str:
            errors = is_label_value(value)
            for msg in errors:
                causes.append(invalid(path, value, msg))
            if not errors and type(value) is str:
                _remember(good_values, value)
    return causes


def _remember(good: set[str], text: str) -> None:
    if len(good) >= _VALID_LABELS_SIZE:
        good.clear()
    good.add(text)


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
        elif type(namespace) is not str or namespace not in _VALID_NAMESPACES:
            errors = is_dns1123_label(str(namespace))
            for msg in errors:
                causes.append(invalid("metadata.namespace", namespace, msg))
            if not errors and type(namespace) is str:
                _remember(_VALID_NAMESPACES, namespace)
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
    """name, namespace and uid never change; a deleting object gains no finalizers."""
    meta = obj.get("metadata") or {}
    old_meta = old.get("metadata") or {}
    causes: list[Cause] = []
    for key in ("name", "namespace"):
        if (meta.get(key) or "") != (old_meta.get(key) or ""):
            causes.append(immutable(f"metadata.{key}", meta.get(key) or ""))
    if meta.get("uid") and old_meta.get("uid") and meta["uid"] != old_meta["uid"]:
        causes.append(immutable("metadata.uid", meta["uid"]))
    if old_meta.get("deletionTimestamp"):
        causes += validate_no_new_finalizers(meta.get("finalizers"), old_meta.get("finalizers"))
    return causes


def validate_no_new_finalizers(finalizers: Any, old_finalizers: Any) -> list[Cause]:
    """upstream ValidateNoNewFinalizers: an object being deleted may only lose finalizers, so its
    deletion cannot be held up indefinitely by a late one."""
    extra = sorted({str(f) for f in finalizers or ()} - {str(f) for f in old_finalizers or ()})
    if not extra:
        return []
    return [forbidden("metadata.finalizers", "no new finalizers can be added if the object is being deleted, "
                                             f"found new finalizers {go_value(extra)}")]
