"""NodeResourcesBalancedAllocation: prefer nodes whose cpu and memory would be used in equal proportion."""

from __future__ import annotations

import math
from typing import Any

from kconsole.scheduler.cache import NodeInfo
from kconsole.scheduler.framework import MAX_NODE_SCORE, Plugin, register
from kconsole.scheduler.memo import NodeMemo
from kconsole.scheduler.podinfo import PodInfo


@register
class NodeResourcesBalancedAllocation(Plugin):
    name = "NodeResourcesBalancedAllocation"

    def __init__(self, handle: Any, args: dict[str, Any]) -> None:
        super().__init__(handle, args)
        self.resources = [r["name"] for r in args.get("resources") or ()] or ["cpu", "memory"]
        self._default = self.resources == ["cpu", "memory"]
        cache = getattr(handle, "cache", None)
        self._memo = NodeMemo(cache, self._score_batch) if cache is not None else None

    def score(self, state: dict[str, Any], pod: PodInfo, nodes: list[NodeInfo]) -> list[int]:
        if self._memo is not None:
            return self._memo.values((pod.cpu, pod.mem, tuple(sorted(pod.scalar.items()))), pod, nodes)
        return self._score_batch(pod, nodes)

    def _score_batch(self, pod: PodInfo, nodes: list[NodeInfo]) -> list[int]:
        pc, pm = pod.cpu, pod.mem
        if self._default:
            return [
                int((1.0 - (fc - fm if fc > fm else fm - fc) * 0.5) * 100) if ac > 0 and am > 0
                else self._score_node(pod, n)
                for n in nodes
                for ac, am in ((n.alloc_cpu, n.alloc_mem),)
                for fc, fm in ((min((n.req_cpu + pc) / ac, 1.0) if ac else 0.0,
                                min((n.req_mem + pm) / am, 1.0) if am else 0.0),)
            ]
        return [self._score_node(pod, n) for n in nodes]

    def _score_node(self, pod: PodInfo, n: NodeInfo) -> int:
        fractions = []
        for name in self.resources:
            if name == "cpu":
                req, cap = n.req_cpu + pod.cpu, n.alloc_cpu
            elif name == "memory":
                req, cap = n.req_mem + pod.mem, n.alloc_mem
            else:
                if name not in pod.scalar:
                    continue
                req, cap = n.req_scalar.get(name, 0) + pod.scalar[name], n.alloc_scalar.get(name, 0)
            if cap == 0:
                continue
            fractions.append(min(req / cap, 1.0))
        if len(fractions) == 2:
            std = abs(fractions[0] - fractions[1]) / 2
        elif len(fractions) > 2:
            mean = sum(fractions) / len(fractions)
            std = math.sqrt(sum((f - mean) ** 2 for f in fractions) / len(fractions))
        else:
            std = 0.0
        return int((1 - std) * MAX_NODE_SCORE)
