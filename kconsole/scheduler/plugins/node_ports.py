"""NodePorts: a pod asking for host ports fits only nodes where those ports are free."""

from __future__ import annotations

from typing import Any

from kconsole.scheduler.cache import NodeInfo
from kconsole.scheduler.framework import SKIP_STATUS, UNSCHEDULABLE, Plugin, Status, register
from kconsole.scheduler.podinfo import PodInfo

REASON = "node(s) didn't have free ports for the requested pod ports"


@register
class NodePorts(Plugin):
    name = "NodePorts"
    events = frozenset({"PodDelete", "NodeAdd"})

    def pre_filter(self, state: dict[str, Any], pod: PodInfo) -> Status | None:
        return None if pod.host_ports else SKIP_STATUS

    def filter_node(self, state: dict[str, Any], pod: PodInfo, node: NodeInfo) -> Status | None:
        if node.ports_conflict(pod.host_ports):
            return Status(UNSCHEDULABLE, REASON)
        return None
