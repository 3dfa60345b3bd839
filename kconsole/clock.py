"""Simulated time for the whole control plane.

Every duration in kconsole (lease 40 s, grace 50 s, back-off 10 s -> 300 s, ...) is simulated
time read from a :class:`Clock`. The console runs a :class:`RealClock` (wall time times a speed
factor, pausable); tests run a :class:`VirtualClock` that jumps straight to the next timer, so a
five-minute eviction takes no wall time and happens in the same order on every run.

Components never call ``time.time()`` or ``asyncio.sleep()`` for simulated durations: they call
``clock.now()``, ``await clock.sleep(d)``, ``clock.call_later(d, fn)`` or ``clock.timeout(d)``.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime, timezone
from typing import Any, TypeVar

T = TypeVar("T")

#: Simulated epoch for virtual clocks: tests see stable timestamps.
VIRTUAL_EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc).timestamp()


class TimerHandle:
    """A cancellable scheduled callback (simulated time)."""

    __slots__ = ("when", "seq", "callback", "cancelled")

    def __init__(self, when: float, seq: int, callback: Callable[[], Any]) -> None:
        self.when = when
        self.seq = seq
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True

    def __lt__(self, other: TimerHandle) -> bool:
        return (self.when, self.seq) < (other.when, other.seq)


class Clock:
    """Interface shared by the real and the virtual clock."""

    def now(self) -> float:
        """Simulated seconds since the Unix epoch."""
        raise NotImplementedError

    def monotonic(self) -> float:
        """Simulated seconds that never go backwards (same scale as :meth:`now`)."""
        return self.now()

    def call_later(self, delay: float, callback: Callable[[], Any]) -> TimerHandle:
        raise NotImplementedError

    async def sleep(self, delay: float) -> None:
        if delay <= 0:
            await asyncio.sleep(0)
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def wake() -> None:
            if not fut.done():
                fut.set_result(None)

        handle = self.call_later(delay, wake)
        try:
            await fut
        finally:
            handle.cancel()

    @contextlib.asynccontextmanager
    async def timeout(self, delay: float | None) -> AsyncIterator[None]:
        """Like ``asyncio.timeout`` but in simulated seconds; raises ``TimeoutError``."""
        if delay is None:
            yield
            return
        task = asyncio.current_task()
        assert task is not None
        fired = False

        def expire() -> None:
            nonlocal fired
            fired = True
            task.cancel()

        handle = self.call_later(delay, expire)
        try:
            yield
        except asyncio.CancelledError:
            if fired:
                task.uncancel()
                raise TimeoutError() from None
            raise
        finally:
            handle.cancel()

    async def wait_for(self, aw: Awaitable[T], timeout: float | None) -> T:
        """``asyncio.wait_for`` in simulated seconds."""
        async with self.timeout(timeout):
            return await aw

    def datetime(self) -> datetime:
        return datetime.fromtimestamp(self.now(), tz=timezone.utc)

    def rfc3339(self, t: float | None = None) -> str:
        """Kubernetes' timestamp format (seconds precision, ``Z``)."""
        when = self.now() if t is None else t
        return datetime.fromtimestamp(int(when), tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")

    def rfc3339_micro(self, t: float | None = None) -> str:
        """MicroTime, as Leases and events.k8s.io use."""
        when = self.now() if t is None else t
        return datetime.fromtimestamp(when, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    # Speed controls; the virtual clock ignores those that make no sense for it.
    @property
    def speed(self) -> float:
        return 1.0

    @property
    def paused(self) -> bool:
        return False

    @property
    def wall(self) -> Clock:
        """The clock a server's own timers run on (a watch's timeoutSeconds, the wait for a too-new
        resourceVersion, bookmarks): real seconds, whatever the simulation's speed or pause. A virtual
        clock is its own, so tests that drive time stay deterministic."""
        return self


class RealClock(Clock):
    """Wall time multiplied by a speed factor; can pause, resume, change speed and step."""

    def __init__(self, speed: float = 1.0, start: float | None = None) -> None:
        self._speed = float(speed)
        self._paused = False
        self._base_sim = time.time() if start is None else start
        self._base_wall = time.monotonic()
        self._heap: list[TimerHandle] = []
        self._seq = itertools.count()
        self._wakeup: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wall: Clock | None = None
        self._listeners: list[Callable[[], None]] = []

    @property
    def wall(self) -> Clock:
        if self._wall is None:
            self._wall = WallClock()
        return self._wall

    def now(self) -> float:
        if self._paused:
            return self._base_sim
        return self._base_sim + (time.monotonic() - self._base_wall) * self._speed

    @property
    def speed(self) -> float:
        return self._speed

    @property
    def paused(self) -> bool:
        return self._paused

    def _rebase(self) -> None:
        self._base_sim = self.now()
        self._base_wall = time.monotonic()

    def set_speed(self, speed: float) -> None:
        if speed <= 0:
            raise ValueError("speed must be positive; use pause() to stop time")
        self._rebase()
        self._speed = float(speed)
        self._reschedule()
        self._changed()

    def pause(self) -> None:
        self._rebase()
        self._paused = True
        self._reschedule()
        self._changed()

    def resume(self) -> None:
        self._base_wall = time.monotonic()
        self._paused = False
        self._reschedule()
        self._changed()

    def step(self, seconds: float) -> None:
        """Jump simulated time forward (works while paused)."""
        self._rebase()
        self._base_sim += seconds
        self._fire_due()
        self._reschedule()
        self._changed()

    def on_change(self, listener: Callable[[], None]) -> Callable[[], None]:
        """``listener()`` after every speed change, pause, resume and step (processes started with
        this clock's time follow it); returns the unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _changed(self) -> None:
        for listener in list(self._listeners):
            listener()

    def follow(self, now: float, speed: float, paused: bool) -> None:
        """Take another clock's state (a parent process's); never backwards."""
        self._base_sim = max(self.now(), now)
        self._base_wall = time.monotonic()
        self._speed = float(speed)
        self._paused = paused
        self._fire_due()
        self._reschedule()

    def call_later(self, delay: float, callback: Callable[[], Any]) -> TimerHandle:
        handle = TimerHandle(self.now() + max(0.0, delay), next(self._seq), callback)
        heapq.heappush(self._heap, handle)
        if self._heap[0] is handle:
            self._reschedule()
        return handle

    def _reschedule(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = self._loop
        if loop is None:
            return
        self._loop = loop
        if self._wakeup is not None:
            self._wakeup.cancel()
            self._wakeup = None
        while self._heap and self._heap[0].cancelled:
            heapq.heappop(self._heap)
        if not self._heap or self._paused:
            return
        wall_delay = max(0.0, (self._heap[0].when - self.now()) / self._speed)
        self._wakeup = loop.call_later(wall_delay, self._on_wakeup)

    def _on_wakeup(self) -> None:
        self._wakeup = None
        self._fire_due()
        self._reschedule()

    def _fire_due(self) -> None:
        now = self.now()
        while self._heap and (self._heap[0].cancelled or self._heap[0].when <= now):
            handle = heapq.heappop(self._heap)
            if not handle.cancelled:
                handle.callback()


class WallClock(RealClock):
    """Real time at speed 1, never paused or stepped by the console: a simulated clock's :attr:`wall`."""

    @property
    def wall(self) -> Clock:
        return self


class VirtualClock(Clock):
    """Deterministic simulated time for tests: time moves only when told to.

    ``await clock.advance(s)`` fires every timer due within ``s`` seconds in (time, creation) order,
    letting the loop settle after each one, so tasks woken by a timer run before the next timer
    fires. Store I/O that runs on a thread registers itself with :meth:`io` so settling also waits
    for it; that keeps SQLite-backed tests deterministic without real sleeps for simulated time.
    """

    def __init__(self, start: float = VIRTUAL_EPOCH) -> None:
        self._now = float(start)
        self._heap: list[TimerHandle] = []
        self._seq = itertools.count()
        self._io = 0

    def now(self) -> float:
        return self._now

    def call_later(self, delay: float, callback: Callable[[], Any]) -> TimerHandle:
        handle = TimerHandle(self._now + max(0.0, delay), next(self._seq), callback)
        heapq.heappush(self._heap, handle)
        return handle

    @contextlib.contextmanager
    def io(self) -> Any:
        """Mark real (thread) work in flight so :meth:`settle` waits for it."""
        self._io += 1
        try:
            yield
        finally:
            self._io -= 1

    def io_begin(self) -> None:
        self._io += 1

    def io_end(self) -> None:
        self._io -= 1

    async def settle(self, rounds: int = 3) -> None:
        """Run the loop until nothing is runnable and no tracked I/O is in flight."""
        loop = asyncio.get_running_loop()
        quiet = 0
        while quiet < rounds:
            await asyncio.sleep(0)
            ready = len(getattr(loop, "_ready", ()))
            if self._io > 0:
                quiet = 0
                await asyncio.sleep(0.0005)
            elif ready > 0:
                quiet = 0
            else:
                quiet += 1

    def next_deadline(self) -> float | None:
        while self._heap and self._heap[0].cancelled:
            heapq.heappop(self._heap)
        return self._heap[0].when if self._heap else None

    async def advance(self, seconds: float) -> None:
        """Move time forward by ``seconds``, firing timers in order."""
        target = self._now + seconds
        await self.settle()
        while True:
            nxt = self.next_deadline()
            if nxt is None or nxt > target:
                break
            self._now = max(self._now, nxt)
            while self._heap and (self._heap[0].cancelled or self._heap[0].when <= self._now):
                handle = heapq.heappop(self._heap)
                if not handle.cancelled:
                    handle.callback()
            await self.settle()
        self._now = target
        await self.settle()

    async def run_until(
        self, predicate: Callable[[], bool | Awaitable[bool]], timeout: float, step: float = 1.0
    ) -> float:
        """Advance in ``step`` increments until ``predicate()`` holds; returns simulated seconds taken.

        Raises ``TimeoutError`` when it does not hold within ``timeout`` simulated seconds.
        """
        start = self._now
        while True:
            await self.settle()
            result = predicate()
            if isinstance(result, Awaitable):
                result = await result
            if result:
                return self._now - start
            if self._now - start >= timeout:
                raise TimeoutError(f"condition not met within {timeout} simulated seconds")
            await self.advance(min(step, timeout - (self._now - start)))


def io_tracker(clock: Clock) -> contextlib.AbstractContextManager[Any]:
    """Context manager marking thread I/O for a virtual clock; a no-op for real clocks."""
    if isinstance(clock, VirtualClock):
        return clock.io()
    return contextlib.nullcontext()
