"""Content negotiation for reads: Table and PartialObjectMetadata renderings of API responses.

``kubectl get`` asks ``Accept: application/json;as=Table;v=v1;g=meta.k8s.io,...``; the answer is a
``meta.k8s.io/v1`` Table whose columns come from :mod:`kconsole.objects.printers`. Rows carry the
object as PartialObjectMetadata (or whole with ``includeObject=Object``, which ``--sort-by`` asks
for). On watches only the first event's Table carries the column definitions, as upstream does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kconsole.objects.printers import PRINTERS, Printer, printer_for


@dataclass(frozen=True, slots=True)
class Rendering:
    """What the client asked for: ``as`` = None (the object itself), "Table" or "PartialObjectMetadata"."""

    as_kind: str | None = None
    api_version: str = "meta.k8s.io/v1"
    include_object: str = "Metadata"


def negotiate(accept: str | None, include_object: str | None) -> Rendering:
    """Pick the first acceptable rendering in the Accept header's order."""
    include = include_object if include_object in ("None", "Metadata", "Object") else "Metadata"
    for clause in (accept or "").split(","):
        params: dict[str, str] = {}
        for part in clause.split(";")[1:]:
            key, _, value = part.strip().partition("=")
            params[key.lower()] = value.strip()
        as_kind = params.get("as")
        group = params.get("g", "")
        version = params.get("v", "")
        if as_kind in ("Table", "PartialObjectMetadata", "PartialObjectMetadataList") and group == "meta.k8s.io" \
                and version in ("v1", "v1beta1"):
            kind = "Table" if as_kind == "Table" else "PartialObjectMetadata"
            return Rendering(kind, f"meta.k8s.io/{version}", include)
        if not as_kind:
            return Rendering(None)
    return Rendering(None)


def _partial(obj: dict[str, Any], api_version: str) -> dict[str, Any]:
    meta = obj.get("metadata") or {}
    if "managedFields" in meta:
        meta = {k: v for k, v in meta.items() if k != "managedFields"}
    return {"kind": "PartialObjectMetadata", "apiVersion": api_version, "metadata": meta}


def _row(printer: Printer, obj: dict[str, Any], now: float, rendering: Rendering) -> dict[str, Any]:
    row: dict[str, Any] = {"cells": printer.cells(obj, now)}
    if printer.conditions is not None:
        conditions = printer.conditions(obj)
        if conditions:
            row["conditions"] = conditions
    if rendering.include_object == "Metadata":
        row["object"] = _partial(obj, rendering.api_version)
    elif rendering.include_object == "Object":
        row["object"] = obj
    return row


def is_list(body: Any) -> bool:
    return isinstance(body, dict) and isinstance(body.get("items"), list) and str(body.get("kind", "")).endswith("List")


def has_builtin_printer(group_resource: str) -> bool:
    return group_resource in PRINTERS


def to_table(body: dict[str, Any], group_resource: str, now: float, rendering: Rendering,
             columns: bool = True, printer: Printer | None = None) -> dict[str, Any]:
    """A list or one object -> Table; ``printer``: a custom resource's columns."""
    if printer is None:
        printer = printer_for(group_resource)
    if is_list(body):
        items = body["items"]
        meta = {k: v for k, v in (body.get("metadata") or {}).items()
                if k in ("resourceVersion", "continue", "remainingItemCount")}
    else:
        items = [body]
        rv = (body.get("metadata") or {}).get("resourceVersion")
        meta = {"resourceVersion": rv} if rv else {}
    return {
        "kind": "Table",
        "apiVersion": rendering.api_version,
        "metadata": meta,
        "columnDefinitions": [c.definition() for c in printer.columns] if columns else [],
        "rows": [_row(printer, item, now, rendering) for item in items],
    }


def to_partial(body: dict[str, Any], rendering: Rendering) -> dict[str, Any]:
    """A list or one object -> PartialObjectMetadata(List)."""
    if is_list(body):
        return {"kind": "PartialObjectMetadataList", "apiVersion": rendering.api_version,
                "metadata": body.get("metadata") or {},
                "items": [_partial(item, rendering.api_version) for item in body["items"]]}
    return _partial(body, rendering.api_version)


def render(body: Any, group_resource: str, now: float, rendering: Rendering, columns: bool = True,
           printer: Printer | None = None) -> Any:
    """Apply ``rendering`` to a successful read's body; Status bodies pass through."""
    if rendering.as_kind is None or not isinstance(body, dict) or body.get("kind") == "Status":
        return body
    if rendering.as_kind == "Table":
        return to_table(body, group_resource, now, rendering, columns, printer)
    return to_partial(body, rendering)
