"""List/watch filters: a request's label and field selectors compiled once into a predicate.

A watch event is tested against every watcher's filter, so parsing happens once per request and
matching touches only the fields the selectors name. The exact ``metadata.name`` and namespace a
filter pins (what ``kubectl delete`` watches with) are exposed so the watch cache can index
watchers and serve lists without scanning every object.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kconsole.api.registry import META_FIELDS, ResourceSpec
from kconsole.api.types import StatusError
from kconsole.objects.selectors import (
    EVERYTHING,
    FieldSelector,
    LabelSelector,
    SelectorError,
    from_label_selector_dict,
    parse_field_selector,
    parse_label_selector,
)

Obj = dict[str, Any]


class Filter:
    """A compiled label + field selector. ``name``/``namespace`` are what it pins exactly, if anything."""

    __slots__ = ("labels", "fields", "kind", "name", "namespace", "everything")

    def __init__(self, labels: LabelSelector, fields: FieldSelector, kind: str, name: str | None,
                 namespace: str | None) -> None:
        self.labels = labels
        self.fields = fields
        self.kind = kind
        self.name = name
        self.namespace = namespace
        self.everything = labels.empty and fields.empty

    def matches(self, obj: Obj) -> bool:
        """Labels and fields (the namespace is the caller's index, see :attr:`namespace`)."""
        if self.everything:
            return True
        if not self.labels.empty and not self.labels.matches(obj["metadata"].get("labels")):
            return False
        return self.fields.empty or self.fields.matches(obj, kind=self.kind)




def compile_filter(spec: ResourceSpec, label_selector: str = "", field_selector: str = "",
                   namespace: str | None = None, name: str | None = None) -> Filter:
    """Parse once; a bad selector is a 400 naming it, an unsupported field upstream's message."""
    try:
        labels = parse_label_selector(label_selector) if label_selector.strip() else EVERYTHING
    except SelectorError as err:
        raise StatusError.bad_request(f"unable to parse requested label selector {label_selector!r}: {err}") from None
    text = field_selector.strip()
    if name is not None:
        text = f"{text},metadata.name={name}" if text else f"metadata.name={name}"
    try:
        fields = parse_field_selector(text)
    except SelectorError as err:
        raise StatusError.bad_request(str(err)) from None
    for term in fields.terms:
        if term.field not in spec.field_selectors:
            raise StatusError.bad_request(unsupported_field(spec, term.field))
    if not spec.namespaced:
        namespace = None
    else:
        pinned_ns = fields.requires_exact("metadata.namespace")
        if pinned_ns is not None:
            if namespace is not None and namespace != pinned_ns:
                # Both the request and the selector name a namespace, and they differ: nothing matches.
                return Filter(labels, parse_field_selector("metadata.name=\0,metadata.name!=\0"),
                              spec.kind, "\0", namespace)
            namespace = pinned_ns
    return Filter(labels, fields, spec.kind, fields.requires_exact("metadata.name"), namespace)


def selected_name(field_selector: str) -> str:
    """The name a list or watch asks for with ``metadata.name=<n>``, which upstream's RequestInfo
    hands the authorizers as the request's name ("" for none, or an unparsable selector)."""
    try:
        name = parse_field_selector(field_selector).requires_exact("metadata.name")
    except SelectorError:
        return ""
    return name if name and name not in (".", "..") and "/" not in name and "%" not in name else ""


def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str] | None) -> bool:
    """A metav1.LabelSelector dict against labels (None selects nothing, {} everything)."""
    try:
        return from_label_selector_dict(selector).matches(labels)
    except SelectorError:
        return False


def format_selector(selector: Mapping[str, Any] | None) -> str:
    """A metav1.LabelSelector dict as its string form (the Scale's status.selector)."""
    if not selector:
        return ""
    try:
        return from_label_selector_dict(selector).to_string()
    except SelectorError:
        return ""


def unsupported_field(spec: ResourceSpec, field: str) -> str:
    """Upstream's words: a kind with its own field label conversion (Pods, Events, Secrets...) says
    ``field label not supported``; the others go through DefaultMetaV1FieldSelectorConversion."""
    if any(f not in META_FIELDS for f in spec.field_selectors):
        return f"field label not supported: {field}"
    return f'"{field}" is not a known field selector: only "metadata.name", "metadata.namespace"'
