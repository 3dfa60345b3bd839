"""The scheduling queue, as upstream: active heap, back-off heap, unschedulable pool.

* **activeQ** — pods ready to try, ordered by the profile's QueueSort (PrioritySort: priority,
  then the time the pod entered the queue).
* **backoffQ** — pods that failed recently and wait ``initial * 2**(attempts-1)`` seconds
  (1 s doubling to 10 s by default) before going back to activeQ.
* **unschedulable** — pods no node could take. A cluster event that could help them (a node added
  or changed, a pod deleted, ...) moves them on, to backoffQ if their back-off has not run out yet.
  Only events one of the plugins that rejected the pod cares about move it; pods left there for
  ``max_unschedulable_duration`` are retried anyway.

If such an event arrives while a pod is being scheduled, a failure sends that pod to backoffQ
rather than the unschedulable pool, so it cannot miss the event (upstream's moveRequestCycle).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable
from typing import Any

from kconsole.clock import Clock, TimerHandle
from kconsole.scheduler.podinfo import PodInfo

ACTIVE, BACKOFF, UNSCHEDULABLE, IN_FLIGHT = "active", "backoff", "unschedulable", "in-flight"
FLUSH_UNSCHEDULABLE_EVERY = 30.0


class QueuedPodInfo:
    """A pending pod with its queue bookkeeping."""

    __slots__ = ("pod", "timestamp", "initial_attempt", "attempts", "unschedulable_plugins", "backoff_until",
                 "seq", "where", "unschedulable_since", "message", "version")

    def __init__(self, pod: PodInfo, now: float, seq: int) -> None:
        self.pod = pod
        self.timestamp = now
        self.initial_attempt: float | None = None
        self.attempts = 0
        self.unschedulable_plugins: frozenset[str] = frozenset()
        self.backoff_until = 0.0
        self.seq = seq
        self.where = ""
        self.unschedulable_since = 0.0
        self.message = ""
        self.version = 0

    @property
    def key(self) -> str:
        return self.pod.key


class SchedulingQueue:
    """Pending pods of every profile. ``sort_key`` comes from the QueueSort plugin."""

    def __init__(self, clock: Clock, sort_key: Callable[[QueuedPodInfo], Any], *, initial_backoff: float = 1.0,
                 max_backoff: float = 10.0, max_unschedulable_duration: float = 300.0,
                 interested: Callable[[QueuedPodInfo, str], bool] = lambda q, e: True) -> None:
        self.clock = clock
        self.sort_key = sort_key
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.max_unschedulable_duration = max_unschedulable_duration
        self.interested = interested
        self.pods: dict[str, QueuedPodInfo] = {}
        self._unschedulable: dict[str, QueuedPodInfo] = {}
        self._active: list[tuple[Any, int, int, QueuedPodInfo]] = []
        self._backoff: list[tuple[float, int, QueuedPodInfo]] = []
        self._seq = itertools.count()
        self._waiter: asyncio.Future[None] | None = None
        self._backoff_timer: TimerHandle | None = None
        self._backoff_timer_at = float("inf")
        self._flush_timer: TimerHandle | None = None
        self.scheduling_cycle = 0
        self.move_request_cycle = -1
        self._closed = False

    # ----------------------------------------------------------------- lifecycle

    def start(self) -> None:
        self._flush_timer = self.clock.call_later(FLUSH_UNSCHEDULABLE_EVERY, self._flush_unschedulable)

    def close(self) -> None:
        self._closed = True
        for t in (self._backoff_timer, self._flush_timer):
            if t is not None:
                t.cancel()
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    # ----------------------------------------------------------------- moves between queues

    def _to_active(self, q: QueuedPodInfo) -> None:
        q.where = ACTIVE
        q.version += 1
        heapq.heappush(self._active, (self.sort_key(q), q.seq, q.version, q))
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _to_backoff(self, q: QueuedPodInfo) -> None:
        q.where = BACKOFF
        heapq.heappush(self._backoff, (q.backoff_until, q.seq, q))
        if q.backoff_until < self._backoff_timer_at:
            if self._backoff_timer is not None:
                self._backoff_timer.cancel()
            self._backoff_timer_at = q.backoff_until
            self._backoff_timer = self.clock.call_later(q.backoff_until - self.clock.now(), self._flush_backoff)

    def _flush_backoff(self) -> None:
        self._backoff_timer = None
        self._backoff_timer_at = float("inf")
        now = self.clock.now()
        while self._backoff:
            until, _, q = self._backoff[0]
            if q.where != BACKOFF or self.pods.get(q.key) is not q or until != q.backoff_until:
                heapq.heappop(self._backoff)
                continue
            if until > now:
                self._backoff_timer_at = until
                self._backoff_timer = self.clock.call_later(until - now, self._flush_backoff)
                break
            heapq.heappop(self._backoff)
            self._to_active(q)

    def _flush_unschedulable(self) -> None:
        if self._closed:
            return
        now = self.clock.now()
        for q in list(self._unschedulable.values()):
            if now - q.unschedulable_since >= self.max_unschedulable_duration:
                self._requeue_moved(q)
        self._flush_timer = self.clock.call_later(FLUSH_UNSCHEDULABLE_EVERY, self._flush_unschedulable)

    def _requeue_moved(self, q: QueuedPodInfo) -> None:
        self._unschedulable.pop(q.key, None)
        if q.backoff_until > self.clock.now():
            self._to_backoff(q)
        else:
            self._to_active(q)

    def backoff_duration(self, attempts: int) -> float:
        d = self.initial_backoff
        for _ in range(1, attempts):
            d *= 2
            if d > self.max_backoff:
                return self.max_backoff
        return min(d, self.max_backoff)

    # ----------------------------------------------------------------- informer side

    def add(self, pod: PodInfo) -> None:
        """A new pending pod."""
        if pod.key in self.pods:
            self.update(pod)
            return
        q = QueuedPodInfo(pod, self.clock.now(), next(self._seq))
        self.pods[pod.key] = q
        self._to_active(q)

    def update(self, pod: PodInfo) -> None:
        """A pending pod changed: take the new version; an unschedulable one gets another try."""
        q = self.pods.get(pod.key)
        if q is None:
            self.add(pod)
            return
        q.pod = pod
        if q.where == UNSCHEDULABLE:
            self._requeue_moved(q)
        elif q.where == ACTIVE:
            self._to_active(q)

    def delete(self, key: str) -> None:
        q = self.pods.pop(key, None)
        self._unschedulable.pop(key, None)
        if q is not None:
            q.where = ""

    def move_all(self, event: str) -> int:
        """A cluster event: move the unschedulable pods it may help. Returns how many moved."""
        self.move_request_cycle = self.scheduling_cycle
        moved = 0
        for q in list(self._unschedulable.values()):
            if not q.unschedulable_plugins or self.interested(q, event):
                self._requeue_moved(q)
                moved += 1
        return moved

    # ----------------------------------------------------------------- scheduler side

    async def pop(self) -> QueuedPodInfo | None:
        """The next pod to schedule (waits); None once closed."""
        while True:
            while self._active:
                _, _, version, q = heapq.heappop(self._active)
                if q.where != ACTIVE or version != q.version or self.pods.get(q.key) is not q:
                    continue
                q.where = IN_FLIGHT
                q.attempts += 1
                if q.initial_attempt is None:
                    q.initial_attempt = self.clock.now()
                self.scheduling_cycle += 1
                return q
            if self._closed:
                return None
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
            self._waiter = None

    def requeue_failed(self, q: QueuedPodInfo, cycle: int, plugins: frozenset[str], *, error: bool = False) -> None:
        """A pod the cycle could not place: back-off, or unschedulable until an event helps."""
        if self.pods.get(q.key) is not q:
            return
        q.unschedulable_plugins = plugins
        q.backoff_until = self.clock.now() + self.backoff_duration(q.attempts)
        if error or self.move_request_cycle >= cycle:
            self._to_backoff(q)
        else:
            q.where = UNSCHEDULABLE
            q.unschedulable_since = self.clock.now()
            self._unschedulable[q.key] = q

    def requeue_after_error(self, q: QueuedPodInfo, plugins: frozenset[str] = frozenset()) -> None:
        """A pod that had left the queue (its bind failed) comes back, after back-off."""
        if q.key in self.pods:
            return
        self.pods[q.key] = q
        q.unschedulable_plugins = plugins
        q.backoff_until = self.clock.now() + self.backoff_duration(q.attempts)
        self._to_backoff(q)

    def done(self, key: str) -> None:
        """The pod was placed (assumed): it leaves the queue."""
        q = self.pods.get(key)
        if q is not None and q.where == IN_FLIGHT:
            del self.pods[key]

    def __len__(self) -> int:
        return len(self.pods)

    def counts(self) -> dict[str, int]:
        out = {ACTIVE: 0, BACKOFF: 0, UNSCHEDULABLE: 0, IN_FLIGHT: 0}
        for q in self.pods.values():
            if q.where in out:
                out[q.where] += 1
        return out

    def pending(self) -> list[QueuedPodInfo]:
        return list(self.pods.values())
