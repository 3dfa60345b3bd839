"""PrioritySort: the queue hands out higher-priority pods first, then the ones waiting longest."""

from __future__ import annotations

from typing import Any

from kconsole.scheduler.framework import Plugin, register


@register
class PrioritySort(Plugin):
    name = "PrioritySort"

    def sort_key(self, qpi: Any) -> tuple[int, float, int]:
        """Heap key: priority descending, then the time the pod entered the queue, then arrival order."""
        return (-qpi.pod.priority, qpi.timestamp, qpi.seq)

    def less(self, a: Any, b: Any) -> bool:
        return self.sort_key(a) < self.sort_key(b)
