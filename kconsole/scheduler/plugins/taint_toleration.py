"""TaintToleration: NoSchedule/NoExecute taints must be tolerated; untolerated PreferNoSchedule taints lower the score."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kconsole.scheduler.cache import NodeInfo
from kconsole.scheduler.framework import MAX_NODE_SCORE, UNRESOLVABLE, Failed, Plugin, Status, default_normalize, register
from kconsole.scheduler.podinfo import PodInfo


def tolerates(tol: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """Upstream's ToleratesTaint: effect and key must match when given; Exists ignores the value."""
    effect = tol.get("effect")
    if effect and effect != taint.get("effect"):
        return False
    key = tol.get("key")
    if key and key != taint.get("key"):
        return False
    op = tol.get("operator") or "Equal"
    if op == "Exists":
        return True
    return op == "Equal" and (tol.get("value") or "") == (taint.get("value") or "")


def first_untolerated(taints: Iterable[Mapping[str, Any]], tolerations: list[dict[str, Any]]) -> Mapping[str, Any] | None:
    for taint in taints:
        if not any(tolerates(t, taint) for t in tolerations):
            return taint
    return None


@register
class TaintToleration(Plugin):
    name = "TaintToleration"
    events = frozenset({"NodeAdd", "NodeUpdate"})

    def filter(self, state: dict[str, Any], pod: PodInfo, nodes: list[NodeInfo]) -> tuple[list[NodeInfo], Failed]:
        if not self.handle.cache.hard_tainted:
            return nodes, []
        passed = []
        failed: Failed = []
        tols = pod.tolerations
        for n in nodes:
            bad = first_untolerated(n.hard_taints, tols) if n.hard_taints else None
            if bad is None:
                passed.append(n)
            else:
                reason = f"node(s) had untolerated taint {{{bad.get('key', '')}: {bad.get('value') or ''}}}"
                failed.append((n, Status(UNRESOLVABLE, reason, plugin=self.name)))
        return passed, failed

    def score(self, state: dict[str, Any], pod: PodInfo, nodes: list[NodeInfo]) -> list[int]:
        if not self.handle.cache.soft_tainted:
            return [0] * len(nodes)
        tols = [t for t in pod.tolerations if not t.get("effect") or t.get("effect") == "PreferNoSchedule"]
        return [sum(1 for taint in n.soft_taints if not any(tolerates(t, taint) for t in tols)) if n.soft_taints else 0
                for n in nodes]

    def normalize(self, state: dict[str, Any], pod: PodInfo, nodes: list[NodeInfo], scores: list[int]) -> list[int]:
        if not self.handle.cache.soft_tainted:  # score() found no taint to count: every node scores 0
            return [MAX_NODE_SCORE] * len(scores)
        return default_normalize(scores, reverse=True)
