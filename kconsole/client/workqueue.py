"""client-go's rate-limiting work queue, on asyncio and the simulated clock.

Controllers never process events directly: handlers enqueue keys, workers pull them. The queue's
rules are what makes that safe, and they are upstream's exactly:

* an item is queued at most once however often it is added (``dirty`` set);
* an item being processed is never handed to a second worker; if it is added meanwhile it is
  queued again when its worker calls :meth:`WorkQueue.done`;
* :meth:`WorkQueue.add_after` waits on the clock; a shorter delay for an item already waiting wins;
* :meth:`WorkQueue.add_rate_limited` backs off per item ``base_delay * 2**failures`` capped at
  ``max_delay`` until :meth:`WorkQueue.forget`;
* after :meth:`WorkQueue.shutdown` adds are ignored, items already queued are still handed out,
  and :meth:`WorkQueue.get` raises :class:`QueueShutDown` once the queue is empty.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

from kconsole.api.types import StatusError
from kconsole.clock import Clock, TimerHandle

log = logging.getLogger(__name__)


class QueueShutDown(Exception):
    """The queue was shut down and holds nothing more to hand out."""


class WorkQueue:
    """Deduplicating, delaying, rate-limiting FIFO of hashable items (usually ``"ns/name"`` keys)."""

    def __init__(self, clock: Clock, name: str = "", base_delay: float = 0.005, max_delay: float = 1000.0) -> None:
        if base_delay <= 0 or max_delay < base_delay:
            raise ValueError(f"workqueue {name!r}: need 0 < base_delay <= max_delay, got {base_delay}, {max_delay}")
        self.clock = clock
        self.name = name
        self.base_delay = base_delay
        self.max_delay = max_delay
        self._queue: deque[Hashable] = deque()
        self._dirty: set[Hashable] = set()
        self._processing: set[Hashable] = set()
        self._waiting: dict[Hashable, tuple[float, TimerHandle]] = {}
        self._failures: dict[Hashable, int] = {}
        self._getters: deque[asyncio.Future[None]] = deque()
        self._idle: list[asyncio.Future[None]] = []
        self._shutting_down = False
        #: Counters the console shows (upstream's workqueue metrics, the cheap ones).
        self.adds_total = 0
        self.retries_total = 0

    # ------------------------------------------------------------------ plain queue

    def add(self, item: Hashable) -> None:
        if self._shutting_down or item in self._dirty:
            return
        self.adds_total += 1
        self._dirty.add(item)
        if item in self._processing:
            return
        self._queue.append(item)
        self._wake_one()

    async def get(self) -> Any:
        """The next item; the caller must call :meth:`done` with it when finished."""
        while not self._queue:
            if self._shutting_down:
                raise QueueShutDown(self.name)
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._getters.append(fut)
            try:
                await fut
            except asyncio.CancelledError:
                if fut.done() and not fut.cancelled():
                    self._wake_one()  # pass the wake-up on so the item is not stranded
                else:
                    self._remove_getter(fut)
                raise
        item = self._queue.popleft()
        self._processing.add(item)
        self._dirty.discard(item)
        return item

    def done(self, item: Hashable) -> None:
        self._processing.discard(item)
        if item in self._dirty:
            self._queue.append(item)
            self._wake_one()
        if not self._processing and self._idle:
            self._wake_idle()

    def shutdown(self) -> None:
        """Stop accepting items; wake every waiting worker."""
        self._shutting_down = True
        for _, handle in self._waiting.values():
            handle.cancel()
        self._waiting.clear()
        while self._getters:
            fut = self._getters.popleft()
            if not fut.done():
                fut.set_result(None)
        if not self._processing:
            self._wake_idle()

    async def shutdown_with_drain(self) -> None:
        """Shut down, then wait until every item handed out has been marked done."""
        self.shutdown()
        while self._processing:
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._idle.append(fut)
            await fut

    @property
    def shutting_down(self) -> bool:
        return self._shutting_down

    def __len__(self) -> int:
        return len(self._queue)

    def __contains__(self, item: Hashable) -> bool:
        """Queued (not yet handed out) or waiting on a delay."""
        return item in self._dirty or item in self._waiting

    @property
    def processing(self) -> int:
        return len(self._processing)

    @property
    def waiting(self) -> int:
        """Items waiting for a delay to pass (add_after / add_rate_limited)."""
        return len(self._waiting)

    # ------------------------------------------------------------------ delays

    def add_after(self, item: Hashable, delay: float) -> None:
        if self._shutting_down:
            return
        if delay <= 0:
            self.add(item)
            return
        ready_at = self.clock.now() + delay
        current = self._waiting.get(item)
        if current is not None:
            if current[0] <= ready_at:
                return
            current[1].cancel()
        handle = self.clock.call_later(delay, lambda: self._ready(item))
        self._waiting[item] = (ready_at, handle)

    def _ready(self, item: Hashable) -> None:
        self._waiting.pop(item, None)
        self.add(item)

    # ------------------------------------------------------------------ rate limiting

    def when(self, item: Hashable) -> float:
        """The back-off for the item's next failure (and count that failure)."""
        failures = self._failures.get(item, 0)
        self._failures[item] = failures + 1
        if failures >= 64:  # 2**64 * base overflows any sensible max_delay; avoid float overflow
            return self.max_delay
        return min(self.base_delay * (2 ** failures), self.max_delay)

    def add_rate_limited(self, item: Hashable) -> None:
        self.retries_total += 1
        self.add_after(item, self.when(item))

    def forget(self, item: Hashable) -> None:
        self._failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        return self._failures.get(item, 0)

    # ------------------------------------------------------------------ internals

    def _wake_one(self) -> None:
        while self._getters:
            fut = self._getters.popleft()
            if not fut.done():
                fut.set_result(None)
                return

    def _remove_getter(self, fut: asyncio.Future[None]) -> None:
        try:
            self._getters.remove(fut)
        except ValueError:
            pass

    def _wake_idle(self) -> None:
        idle, self._idle = self._idle, []
        for fut in idle:
            if not fut.done():
                fut.set_result(None)


SyncFn = Callable[[Any], Awaitable[float | None]]


async def run_workers(queue: WorkQueue, n: int, sync_fn: SyncFn) -> None:
    """Run ``n`` workers until the queue shuts down (or this task is cancelled).

    Each worker: get an item, ``await sync_fn(item)``; on success forget its failures, on an
    exception log it and requeue rate-limited; always mark it done. A sync that returns a positive
    number asks to be run again after that many simulated seconds (controller-runtime's
    ``RequeueAfter``), e.g. to check a deadline.
    """
    if n < 1:
        raise ValueError(f"run_workers: need at least one worker, got {n}")
    workers = [asyncio.create_task(_worker(queue, sync_fn), name=f"workqueue:{queue.name}:{i}") for i in range(n)]
    try:
        await asyncio.gather(*workers)
    finally:
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)


#: A worker whose syncs never suspend (pure cache reads) yields to the loop this often.
YIELD_EVERY = 64


async def _worker(queue: WorkQueue, sync_fn: SyncFn) -> None:
    processed = 0
    while True:
        processed += 1
        if processed % YIELD_EVERY == 0:
            await asyncio.sleep(0)
        try:
            item = await queue.get()
        except QueueShutDown:
            return
        try:
            again = await sync_fn(item)
        except asyncio.CancelledError:
            queue.done(item)
            raise
        except Exception as err:  # noqa: BLE001 - a failing sync is retried, never fatal to the worker
            if isinstance(err, StatusError) and err.code == 409:
                log.debug("%s: syncing %r: %s (requeued)", queue.name, item, err)
            else:
                log.warning("%s: syncing %r failed (attempt %d): %s", queue.name, item,
                            queue.num_requeues(item) + 1, err, exc_info=not isinstance(err, StatusError))
            queue.add_rate_limited(item)
        else:
            queue.forget(item)
            if isinstance(again, (int, float)) and not isinstance(again, bool) and again > 0:
                queue.add_after(item, float(again))
        queue.done(item)
