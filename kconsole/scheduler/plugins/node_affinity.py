"""NodeAffinity: ``nodeSelector`` and required node affinity filter; preferred terms add their weights."""

from __future__ import annotations

from typing import Any

from kconsole.scheduler.cache import NodeInfo
from kconsole.scheduler.framework import SKIP_STATUS, UNRESOLVABLE, Failed, Plugin, Status, default_normalize, register
from kconsole.scheduler.podinfo import PodInfo

REASON = "node(s) didn't match Pod's node affinity/selector"
#: Every required term names nodes and no node is in all of one term's lists.
CONFLICT = "pod affinity terms conflict"


def matches_node_affinity(pod: PodInfo, node: NodeInfo) -> bool:
    """nodeSelector AND required affinity terms (used by spread and preemption too)."""
    if pod.node_selector is not None and not pod.node_selector(node.labels):
        return False
    if pod.required_node_affinity is not None and not pod.required_node_affinity(node.labels, node.name):
        return False
    return True


@register
class NodeAffinity(Plugin):
    name = "NodeAffinity"
    events = frozenset({"NodeAdd", "NodeUpdate"})

    def pre_filter(self, state: dict[str, Any], pod: PodInfo) -> Status | None:
        if not pod.has_node_affinity:
            return SKIP_STATUS
        if pod.affinity_node_names is not None and not pod.affinity_node_names:
            return Status(UNRESOLVABLE, CONFLICT)
        return None

    def pre_filter_nodes(self, state: dict[str, Any], pod: PodInfo) -> frozenset[str] | None:
        return pod.affinity_node_names

    def filter(self, state: dict[str, Any], pod: PodInfo, nodes: list[NodeInfo]) -> tuple[list[NodeInfo], Failed]:
        passed: list[NodeInfo] = []
        failed: Failed = []
        for n in nodes:
            if matches_node_affinity(pod, n):
                passed.append(n)
            else:
                failed.append((n, Status(UNRESOLVABLE, REASON, plugin=self.name)))
        return passed, failed

    def pre_score(self, state: dict[str, Any], pod: PodInfo, nodes: list[NodeInfo]) -> Status | None:
        return None if pod.preferred_node_affinity else SKIP_STATUS

    def score(self, state: dict[str, Any], pod: PodInfo, nodes: list[NodeInfo]) -> list[int]:
        prefs = pod.preferred_node_affinity
        return [sum(w for w, pred in prefs if pred(n.labels, n.name)) for n in nodes]

    def normalize(self, state: dict[str, Any], pod: PodInfo, nodes: list[NodeInfo], scores: list[int]) -> list[int]:
        return default_normalize(scores)
