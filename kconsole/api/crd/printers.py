"""Table columns of a custom resource: NAME, then its version's additionalPrinterColumns (AGE when
it declares none), as upstream's tableconvertor renders them for ``kubectl get``.

A column's ``jsonPath`` is kubectl's JSONPath subset that CRDs use: ``.a.b``, ``.a[0]``, ``.a[*].b`` and
filters ``.a[?(@.type=="Ready")].status``. A path that finds nothing leaves the cell empty (``<none>``
in kubectl).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from kconsole.objects.printers import NAME, Column, Printer, age

Obj = dict[str, Any]

#: Upstream's default when a version declares no additionalPrinterColumns.
DEFAULT_COLUMNS: tuple[Obj, ...] = ({"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},)
_AGE_DESCRIPTION = ("CreationTimestamp is a timestamp representing the server time when this object was created. "
                    "It is not guaranteed to be set in happens-before order across separate operations. Clients "
                    "may not set this value. It is represented in RFC3339 form and is in UTC.")

_STEP = re.compile(r"""\.([A-Za-z0-9_\-/]+)|\[(\d+|\*)\]|\[\?\(@\.([A-Za-z0-9_.\-]+)\s*==\s*(?:"([^"]*)"|'([^']*)')\)\]""")


class PathError(ValueError):
    """A jsonPath this subset cannot read."""


def compile_path(path: str) -> list[tuple[str, Any]]:
    """``.status.conditions[?(@.type=="Ready")].status`` -> steps; PathError when it is not JSONPath."""
    text = path.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    if text.startswith("$"):
        text = text[1:]
    steps: list[tuple[str, Any]] = []
    pos = 0
    while pos < len(text):
        m = _STEP.match(text, pos)
        if m is None:
            raise PathError("unexpected path string, expected a 'name1.name2' or '.name1.name2' or "
                            "'{name1.name2}' or '{.name1.name2}'")
        if m.group(1) is not None:
            steps.append(("key", m.group(1)))
        elif m.group(2) is not None:
            steps.append(("all", None) if m.group(2) == "*" else ("index", int(m.group(2))))
        else:
            steps.append(("filter", (m.group(3), m.group(4) if m.group(4) is not None else m.group(5))))
        pos = m.end()
    if not steps:
        raise PathError("must be a JSONPath like .spec.replicas")
    return steps


def evaluate(steps: Sequence[tuple[str, Any]], obj: Any) -> list[Any]:
    """Every value ``steps`` reaches in ``obj``."""
    nodes = [obj]
    for kind, arg in steps:
        out: list[Any] = []
        for node in nodes:
            if kind == "key":
                if isinstance(node, dict) and arg in node:
                    out.append(node[arg])
            elif kind == "index":
                if isinstance(node, list) and -len(node) <= arg < len(node):
                    out.append(node[arg])
            elif kind == "all":
                if isinstance(node, list):
                    out.extend(node)
                elif isinstance(node, dict):
                    out.extend(node.values())
            elif isinstance(node, list):
                field, want = arg
                for item in node:
                    found = evaluate([("key", part) for part in field.split(".")], item)
                    if found and str(found[0]) == want:
                        out.append(item)
        nodes = out
    return nodes


def _cell(values: list[Any], kind: str, now: float) -> Any:
    if not values:
        return None
    value = values[0]
    if kind == "date":
        return age(value, now) if isinstance(value, str) else None
    if kind == "integer" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    if kind == "number" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    if kind == "boolean" and isinstance(value, bool):
        return value
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if kind == "string" and isinstance(value, str) else str(value)


def printer(columns: Sequence[Obj] | None) -> Printer:
    """The Printer of one version's columns (upstream's default AGE column when there are none)."""
    declared = list(columns or DEFAULT_COLUMNS)
    defs = [NAME]
    paths: list[tuple[list[tuple[str, Any]], str]] = []
    for column in declared:
        kind = column.get("type", "string")
        description = column.get("description") or ""
        if column.get("jsonPath") == ".metadata.creationTimestamp" and not description:
            description = _AGE_DESCRIPTION
        defs.append(Column(column.get("name", ""), "string" if kind == "date" else kind,
                           column.get("format", ""), description, int(column.get("priority") or 0)))
        try:
            paths.append((compile_path(column.get("jsonPath", "")), kind))
        except PathError:
            paths.append(([], kind))

    def cells(obj: Obj, now: float) -> list[Any]:
        row: list[Any] = [(obj.get("metadata") or {}).get("name", "")]
        for steps, kind in paths:
            row.append(_cell(evaluate(steps, obj) if steps else [], kind, now))
        return row

    return Printer(tuple(defs), cells)
