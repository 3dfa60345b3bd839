"""Per-node results of node-local plugin work, kept current incrementally per pod *shape*.

Most pods of a cluster come from a few templates, and a resource score or fit verdict depends only
on the node's state and the pod's requests. Between two pods only the node that took the last pod
changed, so recomputing every candidate node each time is waste: this keeps, per shape, one
result per node (by :attr:`NodeInfo.index`) and re-evaluates only nodes the cache's change log
names. A lookup is then one list index per node — the "precomputed node info, incremental
updates" that upstream gets its speed from, in Python terms. Copies of nodes (``index == -1``,
used by preemption) are always computed directly. A :class:`~kconsole.scheduler.cache.NodeSpan`
(a run of consecutive nodes, as the round-robin search hands out, wrapping past the end) is
answered with one or two slices.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from operator import attrgetter, itemgetter
from typing import Any, Generic, TypeVar

from kconsole.scheduler.cache import Cache, NodeInfo, NodeSpan, NodeSubset

T = TypeVar("T")
MAX_SHAPES = 32
_index = attrgetter("index")


class NodeMemo(Generic[T]):
    """``values(shape, pod, nodes)`` == ``[fn(pod, [n])[0] for n in nodes]``, computed incrementally."""

    def __init__(self, cache: Cache, fn: Callable[[Any, list[NodeInfo]], list[T]]) -> None:
        self.cache = cache
        self.fn = fn
        self._shapes: dict[Hashable, tuple[int, int, list[T]]] = {}

    def table(self, shape: Hashable, pod: Any) -> list[T]:
        """The per-index list for ``shape``, current for every node of ``cache.node_list()``."""
        cache = self.cache
        nodes = cache.node_list()
        entry = self._shapes.get(shape)
        if entry is None or entry[0] != cache.list_version:
            values = self.fn(pod, nodes)
        else:
            values = entry[2]
            log = cache.changelog
            if entry[1] < len(log):
                fn = self.fn
                for i in set(log[entry[1]:]):
                    if i < len(values):
                        values[i] = fn(pod, [nodes[i]])[0]
            if len(values) < len(nodes):
                values.extend(self.fn(pod, nodes[len(values):]))
        if shape not in self._shapes and len(self._shapes) >= MAX_SHAPES:
            del self._shapes[next(iter(self._shapes))]
        self._shapes[shape] = (cache.list_version, len(cache.changelog), values)
        return values

    def values(self, shape: Hashable, pod: Any, nodes: list[NodeInfo]) -> list[T]:
        table = self.table(shape, pod)
        if type(nodes) is NodeSpan and nodes.version == self.cache.list_version:
            start = nodes.start
            end = start + len(nodes)
            if end <= len(table):
                return table[start:end]
            if nodes.total == len(table):
                return table[start:] + table[:end - len(table)]
        if type(nodes) is NodeSubset and nodes.version == self.cache.list_version:
            return list(nodes.pick(table))
        idx = list(map(_index, nodes))
        if len(idx) > 1 and min(idx) >= 0:
            return list(itemgetter(*idx)(table))
        fn = self.fn
        return [table[i] if i >= 0 else fn(pod, [n])[0] for i, n in zip(idx, nodes)]
