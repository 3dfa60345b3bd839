"""NodeResourcesFit: requests must fit what is left of allocatable; score by LeastAllocated or MostAllocated.

Filtering uses the pods' real requests; scoring uses *non-zero* requests for cpu and memory (100m
and 200 MiB for containers requesting none), as upstream, so best-effort pods still spread.
"""

from __future__ import annotations

from typing import Any

from kconsole.scheduler.cache import NodeInfo
from kconsole.scheduler.framework import MAX_NODE_SCORE, UNSCHEDULABLE, Failed, Plugin, Status, register
from kconsole.scheduler.memo import NodeMemo
from kconsole.scheduler.podinfo import PodInfo

_NEG = -(1 << 62)
STRATEGIES = ("LeastAllocated", "MostAllocated")


def fit_reasons(pod: PodInfo, n: NodeInfo) -> list[str]:
    """Every resource the pod does not fit on ``n``, in upstream's order."""
    reasons = []
    if n.free_pods <= 0:
        reasons.append("Too many pods")
    if pod.cpu > 0 and pod.cpu > n.free_cpu:
        reasons.append("Insufficient cpu")
    if pod.mem > 0 and pod.mem > n.free_mem:
        reasons.append("Insufficient memory")
    for name in sorted(pod.scalar):
        if pod.scalar[name] > n.alloc_scalar.get(name, 0) - n.req_scalar.get(name, 0):
            reasons.append(f"Insufficient {name}")
    return reasons


def resource_scoring_args(args: dict[str, Any]) -> tuple[str, list[tuple[str, int]]]:
    strategy = args.get("scoringStrategy") or {}
    kind = strategy.get("type") or "LeastAllocated"
    if kind not in STRATEGIES:
        raise ValueError(f"NodeResourcesFit: scoringStrategy.type {kind!r} is not one of {', '.join(STRATEGIES)}")
    resources = [(r["name"], int(r.get("weight", 1))) for r in strategy.get("resources") or ()] or [("cpu", 1), ("memory", 1)]
    for name, w in resources:
        if w <= 0 or w > 100:
            raise ValueError(f"NodeResourcesFit: resource {name!r} weight must be in 1..100, got {w}")
    return kind, resources


def _least(requested: int, capacity: int) -> int:
    if requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def _most(requested: int, capacity: int) -> int:
    return min(requested, capacity) * MAX_NODE_SCORE // capacity


@register
class NodeResourcesFit(Plugin):
    name = "NodeResourcesFit"
    events = frozenset({"PodDelete", "NodeAdd", "NodeUpdate"})

    def __init__(self, handle: Any, args: dict[str, Any]) -> None:
        super().__init__(handle, args)
        self.strategy, self.resources = resource_scoring_args(args)
        self._default = self.strategy == "LeastAllocated" and self.resources == [("cpu", 1), ("memory", 1)]
        cache = getattr(handle, "cache", None)
        self._fits = NodeMemo(cache, self._fits_batch) if cache is not None else None
        self._scores = NodeMemo(cache, self._score_batch) if cache is not None else None

    @staticmethod
    def _fits_batch(pod: PodInfo, nodes: list[NodeInfo]) -> list[bool]:
        c = pod.cpu if pod.cpu > 0 else _NEG
        m = pod.mem if pod.mem > 0 else _NEG
        return [n.free_pods > 0 and n.free_cpu >= c and n.free_mem >= m for n in nodes]

    def filter(self, state: dict[str, Any], pod: PodInfo, nodes: list[NodeInfo]) -> tuple[list[NodeInfo], Failed]:
        if self._fits is not None and not pod.scalar:
            ok = self._fits.values((pod.cpu, pod.mem), pod, nodes)
            if all(ok):
                return nodes, []
        else:
            c = pod.cpu if pod.cpu > 0 else _NEG
            m = pod.mem if pod.mem > 0 else _NEG
            passed = [n for n in nodes if n.free_pods > 0 and n.free_cpu >= c and n.free_mem >= m]
            if not pod.scalar and len(passed) == len(nodes):
                return passed, []
        passed = []
        failed: Failed = []
        for n in nodes:
            reasons = fit_reasons(pod, n)
            if reasons:
                failed.append((n, Status(UNSCHEDULABLE, *reasons, plugin=self.name)))
            else:
                passed.append(n)
        return passed, failed

    def score(self, state: dict[str, Any], pod: PodInfo, nodes: list[NodeInfo]) -> list[int]:
        if self._scores is not None:
            shape = (pod.nz_cpu, pod.nz_mem, tuple(sorted(pod.scalar.items())))
            return self._scores.values(shape, pod, nodes)
        return self._score_batch(pod, nodes)

    def _score_batch(self, pod: PodInfo, nodes: list[NodeInfo]) -> list[int]:
        pc, pm = pod.nz_cpu, pod.nz_mem
        if self._default:
            return [
                (((ac - rc) * 100 // ac if rc <= ac else 0) + ((am - rm) * 100 // am if rm <= am else 0)) // 2
                if ac > 0 and am > 0 else self._score_node(pod, n)
                for n in nodes
                for ac, am, rc, rm in ((n.alloc_cpu, n.alloc_mem, n.nz_cpu + pc, n.nz_mem + pm),)
            ]
        return [self._score_node(pod, n) for n in nodes]

    def _score_node(self, pod: PodInfo, n: NodeInfo) -> int:
        fn = _least if self.strategy == "LeastAllocated" else _most
        total = weights = 0
        for name, w in self.resources:
            if name == "cpu":
                req, cap = n.nz_cpu + pod.nz_cpu, n.alloc_cpu
            elif name == "memory":
                req, cap = n.nz_mem + pod.nz_mem, n.alloc_mem
            else:
                if name not in pod.scalar:
                    continue
                req, cap = n.req_scalar.get(name, 0) + pod.scalar[name], n.alloc_scalar.get(name, 0)
            if cap == 0:
                continue
            total += fn(req, cap) * w
            weights += w
        return total // weights if weights else 0
