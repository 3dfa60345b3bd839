"""NodeName: a pod naming a node in ``spec.nodeName`` fits only that node."""

from __future__ import annotations

from typing import Any

from kconsole.scheduler.cache import NodeInfo
from kconsole.scheduler.framework import UNRESOLVABLE, Failed, Plugin, Status, register
from kconsole.scheduler.podinfo import PodInfo

REASON = "node(s) didn't match the requested node name"


@register
class NodeName(Plugin):
    name = "NodeName"
    events = frozenset({"NodeAdd"})

    def filter(self, state: dict[str, Any], pod: PodInfo, nodes: list[NodeInfo]) -> tuple[list[NodeInfo], Failed]:
        want = pod.node_name
        if not want:
            return nodes, []
        return ([n for n in nodes if n.name == want],
                [(n, Status(UNRESOLVABLE, REASON, plugin=self.name)) for n in nodes if n.name != want])
