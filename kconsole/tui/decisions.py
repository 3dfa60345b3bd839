"""Reading SchedulingDecision records (kconsole.dev/v1) for the console: the node × plugin matrix.

The scheduler writes score columns compactly (a column of equal values is one number; ``normalized``
and ``weighted`` are left out when they equal the previous stage). This module expands a record back
into one row per node, from the object alone, as kubectl users would read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]


@dataclass(slots=True)
class NodeVerdict:
    node: str
    passed: bool
    filter_plugin: str = ""
    reasons: list[str] = field(default_factory=list)
    #: plugin -> (raw, normalised, weighted)
    scores: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    total: int | None = None
    winner: bool = False


def _at(col: Any, i: int) -> int:
    if isinstance(col, list):
        return int(col[i]) if i < len(col) else 0
    return int(col or 0)


def score_plugins(record: Obj) -> list[tuple[str, int]]:
    score = (record.get("status") or {}).get("score") or {}
    return [(p.get("name", ""), int(p.get("weight", 1))) for p in score.get("plugins") or ()]


def verdicts(record: Obj) -> list[NodeVerdict]:
    """Feasible nodes first (best total first), then rejected ones with the plugin that said no."""
    status = record.get("status") or {}
    winner = status.get("node") or ""
    out: list[NodeVerdict] = []
    score = status.get("score") or {}
    plugins = score.get("plugins") or ()
    for i, name in enumerate(score.get("nodes") or ()):
        per: dict[str, tuple[int, int, int]] = {}
        for p in plugins:
            raw = _at(p.get("raw"), i)
            norm = _at(p["normalized"], i) if "normalized" in p else raw
            weighted = _at(p["weighted"], i) if "weighted" in p else norm * int(p.get("weight", 1))
            per[p.get("name", "")] = (raw, norm, weighted)
        total = _at(score.get("total", 0), i) if "total" in score else sum(w for _, _, w in per.values())
        out.append(NodeVerdict(name, True, scores=per, total=total, winner=name == winner))
    out.sort(key=lambda v: (-(v.total or 0), v.node))
    for r in (status.get("filter") or {}).get("rejected") or ():
        out.append(NodeVerdict(r.get("node", ""), False, r.get("plugin", ""), list(r.get("reasons") or ())))
    return out


def summary(record: Obj) -> list[str]:
    """Header lines: pod, result, winner, node counts, cut-off, message."""
    spec, status = record.get("spec") or {}, record.get("status") or {}
    nodes = status.get("nodes") or {}
    lines = [
        f"pod {(record.get('metadata') or {}).get('namespace', '')}/{spec.get('pod', '')}  attempt "
        f"{spec.get('attempt', '?')}  scheduler {spec.get('schedulerName', '')}",
        f"result {status.get('result', '?')}  winner {status.get('node') or '<none>'}"
        + (f"  nominated {status['nominatedNode']}" if status.get("nominatedNode") else "")
        + (f"  victims {', '.join(status['victims'])}" if status.get("victims") else ""),
        f"nodes: {nodes.get('total', '?')} total, {nodes.get('evaluated', '?')} evaluated, "
        f"{nodes.get('feasible', '?')} feasible, {nodes.get('skippedByCutoff', 0)} skipped by the cut-off",
    ]
    skipped = nodes.get("skipped") or []
    if skipped:
        more = nodes.get("skippedByCutoff", len(skipped)) - len(skipped)
        lines.append("skipped: " + ", ".join(skipped[:20]) + (f" (+{more + len(skipped) - 20} more)"
                                                               if len(skipped) > 20 or more > 0 else ""))
    flt = status.get("filter") or {}
    if flt.get("plugins"):
        lines.append("filters: " + ", ".join(flt["plugins"]))
    if flt.get("skippedPlugins"):
        lines.append("filters skipped (PreFilter): " + ", ".join(flt["skippedPlugins"]))
    if flt.get("preFilter"):
        pf = flt["preFilter"]
        lines.append(f"PreFilter {pf.get('plugin')}: {pf.get('code')} {', '.join(pf.get('reasons') or ())}")
    if status.get("message"):
        lines.append(f"message: {status['message']}")
    return lines
