"""Scheduling attempts read from the scheduler's Events, for clusters that keep no decision records.

Upstream's kube-scheduler records one Event per outcome: ``Scheduled`` ("Successfully assigned
ns/pod to node") and ``FailedScheduling`` ("0/5 nodes are available: 2 Insufficient cpu, 3 node(s)
had untolerated taint {...}. preemption: ..."), the latter counted (``count`` / ``series.count``)
as attempts repeat. :func:`attempt` turns one such Event into what the Scheduling panel shows:
result, node, available/total nodes and the reasons with their node counts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]

SCHEDULER_REASONS = frozenset({"Scheduled", "FailedScheduling"})
_AVAILABLE = re.compile(r"^\s*(\d+)/(\d+) nodes are available(?::\s*(.*))?$", re.DOTALL)
_ASSIGNED = re.compile(r"Successfully assigned (\S+?)/(\S+) to (\S+)")
_COUNTED = re.compile(r"^(\d+)\s+(.*)$")


@dataclass(slots=True)
class Attempt:
    namespace: str
    pod: str
    result: str  # Scheduled | Unschedulable
    attempts: int
    node: str = ""
    available: int | None = None
    total: int | None = None
    #: (node count, reason) as the scheduler summed them, biggest first.
    reasons: list[tuple[int, str]] = field(default_factory=list)
    preemption: str = ""
    message: str = ""

    def feasible(self) -> str:
        return f"{self.available}/{self.total}" if self.total is not None else ""

    def reason_text(self) -> str:
        if self.result == "Scheduled":
            return f"assigned to {self.node}" if self.node else self.message
        if self.reasons:
            return "; ".join(f"{n} {why}" for n, why in self.reasons)
        return self.message


def _split_reasons(text: str) -> list[tuple[int, str]]:
    """``2 Insufficient cpu, 3 node(s) had untolerated taint {a: b}`` -> [(3, ...), (2, ...)];
    commas inside braces (taint lists) do not split."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth = max(0, depth - 1)
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    out = []
    for part in parts:
        part = part.strip().rstrip(".")
        m = _COUNTED.match(part)
        if m:
            out.append((int(m.group(1)), m.group(2).strip()))
        elif part:
            out.append((0, part))
    out.sort(key=lambda r: (-r[0], r[1]))
    return out


def is_scheduler_event(ev: Obj) -> bool:
    if ev.get("reason") not in SCHEDULER_REASONS:
        return False
    inv = ev.get("involvedObject") or ev.get("regarding") or {}
    return inv.get("kind") == "Pod"


def attempt(ev: Obj) -> Attempt:
    """One scheduler Event as a scheduling attempt."""
    inv = ev.get("involvedObject") or ev.get("regarding") or {}
    message = " ".join(str(ev.get("message") or ev.get("note") or "").split())
    count = int((ev.get("series") or {}).get("count") or ev.get("count") or 1)
    a = Attempt(inv.get("namespace") or "", inv.get("name") or "", "", count, message=message)
    if ev.get("reason") == "Scheduled":
        a.result = "Scheduled"
        m = _ASSIGNED.search(message)
        if m:
            a.node = m.group(3)
        return a
    a.result = "Unschedulable"
    main, _, preemption = message.partition(" preemption: ")
    a.preemption = preemption.strip()
    m = _AVAILABLE.match(main)
    if m:
        a.available, a.total = int(m.group(1)), int(m.group(2))
        a.reasons = _split_reasons(m.group(3) or "")
    return a
