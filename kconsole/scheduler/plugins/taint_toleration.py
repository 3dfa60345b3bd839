"""TaintToleration: NoSchedule/NoExecute taints must be tolerated; untolerated PreferNoSchedule taints lower the score."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kconsole.scheduler.cache import NodeInfo, NodeSpan
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


def _positions(span: NodeSpan, infos: Iterable[NodeInfo | None]) -> list[int]:
    """Where in ``span`` (a run of node_list() at its version, wrapping past the end) the nodes sit."""
    out = []
    for ni in infos:
        if ni is not None and ni.index >= 0:
            pos = (ni.index - span.start) % span.total
            if pos < len(span) and span[pos] is ni:
                out.append(pos)
    return out


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
        cache = self.handle.cache
        tainted = cache.hard_tainted
        if not tainted:
            return nodes, []
        if type(nodes) is NodeSpan and nodes.version == cache.list_version and len(tainted) < len(nodes):
            return self._filter_span(pod, nodes, tainted)
        passed = []
        failed: Failed = []
        tols = pod.tolerations
        for n in nodes:
            bad = first_untolerated(n.hard_taints, tols) if n.hard_taints else None
            if bad is None:
                passed.append(n)
            else:
                failed.append((n, self._rejected(bad)))
        return passed, failed

    def _rejected(self, taint: Mapping[str, Any]) -> Status:
        reason = f"node(s) had untolerated taint {{{taint.get('key', '')}: {taint.get('value') or ''}}}"
        return Status(UNRESOLVABLE, reason, plugin=self.name)

    def _filter_span(self, pod: PodInfo, span: NodeSpan, tainted: set[str]) -> tuple[list[NodeInfo], Failed]:
        """Look only at the few tainted nodes that fall in the span (a tainted control plane among
        thousands of workers): a span without one passes whole, still a span for memoised tables."""
        nodes = self.handle.cache.nodes
        failed: Failed = []
        cut: list[int] = []
        for pos in sorted(_positions(span, (nodes.get(name) for name in tainted))):
            n = span[pos]
            bad = first_untolerated(n.hard_taints, pod.tolerations)
            if bad is not None:
                failed.append((n, self._rejected(bad)))
                cut.append(pos)
        if not cut:
            return span, []
        passed: list[NodeInfo] = []
        lo = 0
        for pos in cut:
            passed += span[lo:pos]
            lo = pos + 1
        passed += span[lo:]
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
