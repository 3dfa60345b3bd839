"""One watch stream of the revision log: history replay, then live events, through a bounded buffer.

A watcher is registered the moment it is created. If its start revision is already committed it
first replays ``[start, R]`` from SQLite (``R`` = the revision at registration), page by page as the
consumer asks, while live events (all ``> R``) wait in its buffer; then it serves the buffer. That
hand-over has no gap and no duplicate by construction.

Consumers should ``close()`` a watch they stop reading; one dropped without closing is held only
weakly by the log and disappears with its last reference.

Writers never wait for a watcher: the log hands each committed batch to :meth:`Watcher.deliver`,
which only appends to the buffer. A watcher whose buffer would exceed its bound (the consumer is
too slow) is cancelled with ``canceled=True, compact_revision=0`` and its buffer dropped; the API
server's watch cache reacts to any cancellation by re-listing, as upstream's cacher does.

Progress notifications (``progress_notify=True``): every :data:`PROGRESS_INTERVAL` simulated
seconds, a watcher that delivered nothing since the previous tick, has nothing buffered and is past
its replay gets ``WatchResponse(progress=True, revision=current)``, meaning every event up to that
revision has been delivered (etcd's ``--experimental-watch-progress-notify-interval`` behaviour).
"""

from __future__ import annotations

import asyncio
import weakref
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Protocol

from kconsole.clock import Clock, TimerHandle
from kconsole.store.backend import row_id
from kconsole.store.kv import Event, WatchResponse

#: Simulated seconds between progress notifications of an idle watcher.
PROGRESS_INTERVAL = 10.0
#: Events a watcher may hold undelivered before it is cancelled as too slow.
DEFAULT_WATCH_BUFFER = 50_000
#: History rows read per replay page.
HISTORY_PAGE = 1000


class HistorySource(Protocol):
    """What a watcher needs from the log it watches."""

    @property
    def revision(self) -> int: ...

    @property
    def compact_revision(self) -> int: ...

    def read_history(
        self, key: str, end: str | None, start_id: int, stop_id: int, limit: int
    ) -> Awaitable[list[tuple[int, Event]]]: ...


class Watcher:
    """Async iterator of :class:`WatchResponse`; ``close()`` (or ``aclose()``) ends it."""

    def __init__(
        self,
        source: HistorySource,
        clock: Clock,
        key: str,
        end: str | None,
        *,
        start_revision: int,
        prev_kv: bool,
        progress_notify: bool,
        max_buffered: int,
        on_close: Callable[[Watcher], None],
    ) -> None:
        self.key = key
        self.end = end
        self._source = source
        self._clock = clock
        self._prev_kv = prev_kv
        self._max = max_buffered
        self._on_close = on_close
        current = source.revision
        self.start = start_revision if start_revision > 0 else current + 1
        self._queue: deque[WatchResponse] = deque()
        self._held: list[WatchResponse] = []  # live batches waiting for the replay to finish
        self._buffered = 0
        self._waiter: asyncio.Future[None] | None = None
        self._done = False
        self._active = True  # still receiving live events
        self._quiet = True  # nothing delivered since the last progress tick
        self._timer: TimerHandle | None = None
        self._replay_id: int | None = None
        self._replay_stop = row_id(current + 1, 0)
        if self.start < source.compact_revision:
            self._cancel(source.compact_revision)
            return
        if self.start <= current:
            self._replay_id = row_id(self.start, 0)
        if progress_notify:
            self._schedule_progress()

    # ------------------------------------------------------------------ fed by the log

    def deliver(self, events: list[Event], revision: int, lowest: str, highest: str) -> None:
        """Take this watcher's share of one committed batch (never blocks). ``lowest`` and ``highest``
        are the batch's smallest and largest keys: a watcher whose range lies outside them (most of
        the API server's per-resource watchers, for a batch of one resource's writes) is done without
        looking at each event."""
        if not self._active:
            return
        key, end, start = self.key, self.end, self.start
        if highest < key:
            return
        if end is None:
            if lowest > key:
                return
            mine = [e for e in events if e.kv.key == key and e.kv.mod_revision >= start]
        elif end == "\0":
            mine = [e for e in events if e.kv.key >= key and e.kv.mod_revision >= start]
        else:
            if lowest >= end:
                return
            mine = [e for e in events if key <= e.kv.key < end and e.kv.mod_revision >= start]
        if not mine:
            return
        if self._buffered + len(mine) > self._max:
            self._cancel(0)
            return
        if not self._prev_kv:
            mine = [Event(e.type, e.kv, None) for e in mine]
        self._buffered += len(mine)
        self._quiet = False
        response = WatchResponse(mine, revision)
        if self._replay_id is not None:
            self._held.append(response)
        else:
            self._queue.append(response)
            self._wake()

    def end_stream(self) -> None:
        """The log is closing: deliver what is buffered, then stop.

        A watcher still replaying history drops its held live events instead: delivering them
        would skip the rest of the history. The consumer sees the stream end and re-watches from
        the last revision it got.
        """
        if self._replay_id is not None:
            self._replay_id = None
            self._buffered -= sum(len(r.events) for r in self._held)
            self._held = []
        self._finish()

    # ------------------------------------------------------------------ consumer side

    def __aiter__(self) -> Watcher:
        return self

    async def __anext__(self) -> WatchResponse:
        while True:
            if self._queue:
                response = self._queue.popleft()
                self._buffered -= len(response.events)
                return response
            if self._done:
                raise StopAsyncIteration
            if self._replay_id is not None:
                await self._replay_page()
                continue
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

    async def close(self) -> None:
        self._queue.clear()
        self._held = []
        self._replay_id = None
        self._finish()

    aclose = close

    async def __aenter__(self) -> Watcher:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def active(self) -> bool:
        """Still registered for live events."""
        return self._active

    def settled(self) -> bool:
        """The consumer has read everything the log gave this watch (nothing buffered, held back or
        left to replay): it holds every event of the watch up to the log's revision, since the log
        feeds watchers in the same step that moves its revision."""
        return self._active and not self._queue and not self._held and self._replay_id is None

    # ------------------------------------------------------------------ internals

    async def _replay_page(self) -> None:
        assert self._replay_id is not None
        source = self._source
        start_id = self._replay_id
        if start_id < row_id(source.compact_revision, 0):
            self._cancel(source.compact_revision)
            return
        try:
            rows = await source.read_history(self.key, self.end, start_id, self._replay_stop, HISTORY_PAGE)
        except Exception:
            if self._done:  # the log closed under the read: the stream simply ends
                return
            raise
        if self._replay_id is None:  # closed or cancelled meanwhile
            return
        if start_id < row_id(source.compact_revision, 0):
            # A compaction ran while we read: rows may be missing, so the replay cannot continue.
            self._cancel(source.compact_revision)
            return
        if len(rows) == HISTORY_PAGE:
            # Keep the events of one revision together: leave a partial last revision for the next page.
            last_rev = rows[-1][1].kv.mod_revision
            whole = [r for r in rows if r[1].kv.mod_revision != last_rev]
            if whole:
                rows = whole
            self._replay_id = rows[-1][0] + 1
        else:
            self._replay_id = None
        if rows:
            events = [e for _, e in rows]
            if not self._prev_kv:
                events = [Event(e.type, e.kv, None) for e in events]
            self._buffered += len(events)
            self._queue.append(WatchResponse(events, source.revision))
            self._quiet = False
        if self._replay_id is None:
            self._queue.extend(self._held)
            self._held = []

    def _progress_tick(self) -> None:
        self._timer = None
        if self._done:
            return
        if self._quiet and not self._queue and not self._held and self._replay_id is None:
            self._queue.append(WatchResponse([], self._source.revision, progress=True))
            self._wake()
        self._quiet = True
        self._schedule_progress()

    def _schedule_progress(self) -> None:
        # The timer holds the watcher weakly, so a dropped watcher is not kept alive by it.
        ref = weakref.ref(self)

        def tick() -> None:
            watcher = ref()
            if watcher is not None:
                watcher._progress_tick()

        self._timer = self._clock.call_later(PROGRESS_INTERVAL, tick)

    def _cancel(self, compact_revision: int) -> None:
        """End the stream with a cancellation; buffered events are dropped (the client re-lists)."""
        self._queue.clear()
        self._held = []
        self._buffered = 0
        self._replay_id = None
        self._queue.append(
            WatchResponse([], self._source.revision, canceled=True, compact_revision=compact_revision)
        )
        self._finish()

    def _finish(self) -> None:
        self._done = True
        if self._active:
            self._active = False
            self._on_close(self)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
