"""InterPodAffinity: required and preferred pod affinity / anti-affinity by topology domain.

Filter checks three things, as upstream: the incoming pod's required affinity has a matching pod in
the node's domain (or nothing matches anywhere and the pod matches itself — the first of a group),
its required anti-affinity has none, and no existing pod's required anti-affinity rejects it.
Score adds preferred-term weights of both sides (and existing pods' hard affinity with
``hardPodAffinityWeight``), then scales to 0..100 by min and max.
"""

from __future__ import annotations

from typing import Any

from kconsole.scheduler.cache import NodeInfo
from kconsole.scheduler.framework import MAX_NODE_SCORE, SKIP_STATUS, UNRESOLVABLE, UNSCHEDULABLE, Failed, Plugin
from kconsole.scheduler.framework import Status, register
from kconsole.scheduler.podinfo import AffinityTerm, PodInfo

REASON_AFFINITY = "node(s) didn't match pod affinity rules"
REASON_ANTI = "node(s) didn't match pod anti-affinity rules"
REASON_EXISTING_ANTI = "node(s) didn't satisfy existing pods anti-affinity rules"
FILTER_KEY = "InterPodAffinity/filter"
SCORE_KEY = "InterPodAffinity/score"

Counts = dict[tuple[str, str], int]


def _bump(counts: Counts, node: NodeInfo, key: str, delta: int) -> None:
    val = node.labels.get(key)
    if val is None:
        return
    pair = (key, val)
    n = counts.get(pair, 0) + delta
    if n:
        counts[pair] = n
    else:
        counts.pop(pair, None)


class _FilterState:
    __slots__ = ("existing_anti", "affinity", "anti")

    def __init__(self) -> None:
        self.existing_anti: Counts = {}
        self.affinity: Counts = {}
        self.anti: Counts = {}

    def clone(self) -> _FilterState:
        c = _FilterState()
        c.existing_anti, c.affinity, c.anti = dict(self.existing_anti), dict(self.affinity), dict(self.anti)
        return c


@register
class InterPodAffinity(Plugin):
    name = "InterPodAffinity"
    events = frozenset({"PodAdd", "PodUpdate", "PodDelete", "NodeAdd", "NodeUpdate", "Namespace"})

    def __init__(self, handle: Any, args: dict[str, Any]) -> None:
        super().__init__(handle, args)
        self.hard_weight = int(args.get("hardPodAffinityWeight", 1))
        if not 0 <= self.hard_weight <= 100:
            raise ValueError(f"InterPodAffinity: hardPodAffinityWeight must be in 0..100, got {self.hard_weight}")

    def _ns(self, name: str) -> dict[str, str]:
        return self.handle.cache.namespace_labels(name)

    def _matches_all(self, terms: list[AffinityTerm], other: PodInfo) -> bool:
        return all(t.matches(other, self._ns) for t in terms)

    def _account(self, fs: _FilterState, pod: PodInfo, other: PodInfo, node: NodeInfo, delta: int) -> None:
        for t in other.anti_affinity:
            if t.matches(pod, self._ns):
                _bump(fs.existing_anti, node, t.topology_key, delta)
        if pod.affinity and self._matches_all(pod.affinity, other):
            for t in pod.affinity:
                _bump(fs.affinity, node, t.topology_key, delta)
        for t in pod.anti_affinity:
            if t.matches(other, self._ns):
                _bump(fs.anti, node, t.topology_key, delta)

    def pre_filter(self, state: dict[str, Any], pod: PodInfo) -> Status | None:
        cache = self.handle.cache
        if not pod.affinity and not pod.anti_affinity and not cache.anti_affinity_nodes:
            return SKIP_STATUS
        fs = _FilterState()
        if pod.affinity or pod.anti_affinity:
            for node in cache.node_list():
                for other in node.pods.values():
                    self._account(fs, pod, other, node, 1)
        else:
            for name in cache.anti_affinity_nodes:
                node = cache.nodes[name]
                for other in node.anti_affinity_pods:
                    for t in other.anti_affinity:
                        if t.matches(pod, self._ns):
                            _bump(fs.existing_anti, node, t.topology_key, 1)
        state[FILTER_KEY] = fs
        return None

    def remove_pod(self, state: dict[str, Any], pod: PodInfo, victim: PodInfo, node: NodeInfo) -> None:
        fs = state.get(FILTER_KEY)
        if fs is not None:
            self._account(fs, pod, victim, node, -1)

    def add_pod(self, state: dict[str, Any], pod: PodInfo, other: PodInfo, node: NodeInfo) -> None:
        fs = state.get(FILTER_KEY)
        if fs is not None:
            self._account(fs, pod, other, node, 1)

    def filter(self, state: dict[str, Any], pod: PodInfo, nodes: list[NodeInfo]) -> tuple[list[NodeInfo], Failed]:
        fs: _FilterState | None = state.get(FILTER_KEY)
        if fs is None:
            return nodes, []
        self_match = bool(pod.affinity) and self._matches_all(pod.affinity, pod)
        passed: list[NodeInfo] = []
        failed: Failed = []
        for n in nodes:
            reason, code = self._check(fs, pod, n, self_match)
            if reason is None:
                passed.append(n)
            else:
                failed.append((n, Status(code, reason, plugin=self.name)))
        return passed, failed

    def _check(self, fs: _FilterState, pod: PodInfo, n: NodeInfo, self_match: bool) -> tuple[str | None, int]:
        labels = n.labels
        if pod.affinity:
            exist = True
            for t in pod.affinity:
                val = labels.get(t.topology_key)
                if val is None:
                    return REASON_AFFINITY, UNRESOLVABLE
                if fs.affinity.get((t.topology_key, val), 0) <= 0:
                    exist = False
            if not exist and not (not fs.affinity and self_match):
                return REASON_AFFINITY, UNRESOLVABLE
        if fs.anti:
            for t in pod.anti_affinity:
                val = labels.get(t.topology_key)
                if val is not None and fs.anti.get((t.topology_key, val), 0) > 0:
                    return REASON_ANTI, UNSCHEDULABLE
        if fs.existing_anti:
            for pair in labels.items():
                if fs.existing_anti.get(pair, 0) > 0:
                    return REASON_EXISTING_ANTI, UNSCHEDULABLE
        return None, 0

    # ----------------------------------------------------------------- score

    def pre_score(self, state: dict[str, Any], pod: PodInfo, nodes: list[NodeInfo]) -> Status | None:
        cache = self.handle.cache
        has_prefs = bool(pod.preferred_affinity or pod.preferred_anti_affinity)
        if not has_prefs and not cache.affinity_nodes:
            return SKIP_STATUS
        scores: dict[str, dict[str, int]] = {}

        def add(term: AffinityTerm, weight: int, target: PodInfo, node: NodeInfo) -> None:
            if term.matches(target, self._ns):
                val = node.labels.get(term.topology_key)
                if val is not None:
                    per_key = scores.setdefault(term.topology_key, {})
                    per_key[val] = per_key.get(val, 0) + weight

        source = cache.node_list() if has_prefs else [cache.nodes[n] for n in cache.affinity_nodes if n in cache.nodes]
        for node in source:
            if not node.labels:
                continue
            existing = node.pods.values() if has_prefs else node.affinity_pods
            for other in existing:
                for t in pod.preferred_affinity:
                    add(t, t.weight, other, node)
                for t in pod.preferred_anti_affinity:
                    add(t, -t.weight, other, node)
                if self.hard_weight > 0:
                    for t in other.affinity:
                        add(t, self.hard_weight, pod, node)
                for t in other.preferred_affinity:
                    add(t, t.weight, pod, node)
                for t in other.preferred_anti_affinity:
                    add(t, -t.weight, pod, node)
        if not scores:
            return SKIP_STATUS
        state[SCORE_KEY] = scores
        return None

    def score(self, state: dict[str, Any], pod: PodInfo, nodes: list[NodeInfo]) -> list[int]:
        scores: dict[str, dict[str, int]] = state[SCORE_KEY]
        out = []
        for n in nodes:
            s = 0
            for key, per_val in scores.items():
                val = n.labels.get(key)
                if val is not None:
                    s += per_val.get(val, 0)
            out.append(s)
        return out

    def normalize(self, state: dict[str, Any], pod: PodInfo, nodes: list[NodeInfo], scores: list[int]) -> list[int]:
        if not scores:
            return scores
        lo, hi = min(scores), max(scores)
        if hi - lo <= 0:
            return [0] * len(scores)
        return [int(MAX_NODE_SCORE * ((s - lo) / (hi - lo))) for s in scores]
