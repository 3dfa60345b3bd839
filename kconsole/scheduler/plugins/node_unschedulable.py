"""NodeUnschedulable: cordoned nodes (``spec.unschedulable``) take only pods tolerating the cordon taint."""

from __future__ import annotations

from typing import Any

from kconsole.scheduler.cache import NodeInfo
from kconsole.scheduler.framework import UNRESOLVABLE, Failed, Plugin, Status, register
from kconsole.scheduler.plugins.taint_toleration import tolerates
from kconsole.scheduler.podinfo import PodInfo

REASON = "node(s) were unschedulable"
CORDON_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}


@register
class NodeUnschedulable(Plugin):
    name = "NodeUnschedulable"
    events = frozenset({"NodeAdd", "NodeUpdate"})

    def filter(self, state: dict[str, Any], pod: PodInfo, nodes: list[NodeInfo]) -> tuple[list[NodeInfo], Failed]:
        if not self.handle.cache.cordoned:
            return nodes, []
        passed = [n for n in nodes if not n.unschedulable]
        if len(passed) == len(nodes):
            return passed, []
        if any(tolerates(t, CORDON_TAINT) for t in pod.tolerations):
            return nodes, []
        return passed, [(n, Status(UNRESOLVABLE, REASON, plugin=self.name)) for n in nodes if n.unschedulable]
