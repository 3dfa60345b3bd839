"""Reading SchedulingDecision records (kconsole.dev/v1) for the console: the node × plugin matrix.

Rows come from :func:`kconsole.objects.schedulingdecision.node_rows`, the one reader of the
scheduler's compact record format; this module shapes them for the matrix screen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kconsole.objects.schedulingdecision import node_rows

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


def score_plugins(record: Obj) -> list[tuple[str, int]]:
    score = (record.get("status") or {}).get("score") or {}
    return [(p.get("name", ""), int(p.get("weight", 1))) for p in score.get("plugins") or ()]


def verdicts(record: Obj) -> list[NodeVerdict]:
    """Feasible nodes first (best total first), then rejected ones with the plugin that said no."""
    winner = (record.get("status") or {}).get("node") or ""
    feasible: list[NodeVerdict] = []
    rejected: list[NodeVerdict] = []
    for row in node_rows(record):
        if row["passed"]:
            scores = {name: (s["raw"], s["normalized"], s["weighted"]) for name, s in row["scores"].items()}
            feasible.append(NodeVerdict(row["node"], True, scores=scores, total=row["total"],
                                        winner=row["node"] == winner))
        else:
            rejected.append(NodeVerdict(row["node"], False, row["plugin"], list(row["reasons"])))
    feasible.sort(key=lambda v: (-(v.total or 0), v.node))
    return feasible + rejected


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
        f"{nodes.get('feasible', '?')} feasible, {nodes.get('skippedByCutoff', 0)} skipped by the cut-off"
        + (f", {nodes['notInPreFilterResult']} not named by PreFilter" if nodes.get("notInPreFilterResult") else ""),
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
