"""Reading a SchedulingDecision record (kconsole.dev/v1) back into one row per node.

The scheduler writes records compactly (a reason table for filter failures, score columns aligned to a
node list, constant columns stored once; see ``kconsole/scheduler/decisions.py``). Everyone who reads a
record — the console's matrix, kubectl printers, tests — expands it here, so the format has one reader.
"""

from __future__ import annotations

from typing import Any


def _at(col: list[int] | int, i: int) -> int:
    return col if isinstance(col, int) else col[i]


def _rejected_row(node: str, plugin: str, code: str, reasons: list[str]) -> dict[str, Any]:
    return {"node": node, "passed": False, "plugin": plugin, "code": code, "reasons": reasons,
            "filter": f"{plugin}: {', '.join(reasons)}", "scores": {}, "total": None}


def node_rows(record: dict[str, Any]) -> list[dict[str, Any]]:
    """A record's per-node view, one dict per evaluated node: rejected nodes first, then scored ones.

    Each row: ``node``; ``passed``; for a rejected node ``plugin``, ``code``, ``reasons`` and
    ``filter`` ("Plugin: reason, reason"); for a feasible one ``filter`` "passed", ``scores``
    {plugin: {raw, normalized, weighted}} and ``total`` (``{}`` and None when the node was the only
    feasible one, so nothing was scored).
    """
    status = record.get("status") or {}
    rows: list[dict[str, Any]] = []
    flt = status.get("filter") or {}
    failed = flt.get("failed") or {}
    table = flt.get("reasons") or ()
    for i, name in enumerate(failed.get("nodes") or ()):
        v = table[_at(failed.get("reason", 0), i)]
        rows.append(_rejected_row(name, v["plugin"], v["code"], list(v["reasons"])))
    for r in flt.get("rejected") or ():
        rows.append(_rejected_row(r["node"], r["plugin"], r.get("code", ""), list(r["reasons"])))
    score = status.get("score") or {}
    plugins = score.get("plugins") or ()
    for i, name in enumerate(score.get("nodes") or ()):
        per = {}
        for p in plugins:
            raw = _at(p["raw"], i)
            norm = _at(p["normalized"], i) if "normalized" in p else raw
            per[p["name"]] = {"raw": raw, "normalized": norm,
                              "weighted": _at(p["weighted"], i) if "weighted" in p else norm * p["weight"]}
        total = _at(score["total"], i) if "total" in score else sum(v["weighted"] for v in per.values())
        rows.append({"node": name, "passed": True, "filter": "passed", "scores": per, "total": total})
    if status.get("result") == "Scheduled" and status.get("node") and not score.get("nodes"):
        # A lone feasible node is bound without scoring, as upstream; it still passed every filter.
        rows.append({"node": status["node"], "passed": True, "filter": "passed", "scores": {}, "total": None})
    return rows
