"""Per-resource watch cache: one store watch feeds memory; every client watch and most reads hit memory.

Like upstream's cacher, each resource keeps the current objects plus a bounded window of recent
events (at least ``history_seconds`` of simulated time, capped at ``max_events``). Client watches
replay the window after their resourceVersion, then follow live events through a bounded queue of
their own: a watcher that cannot keep up is terminated (the client re-watches) instead of slowing
writers or other watchers. Every event is decoded once and shared read-only by all watchers.

The cache's revision ``rv`` means "every change of this resource up to rv is applied". Besides the
store's events and progress notifications, :meth:`WatchCache.catch_up` advances it to the store's
current revision when no write of this resource is in flight and the store watch is settled: this
cache has read everything the store gave it. Settled matters: a write this server did not see
succeed (a proposal that failed here and committed after a leader change, Raft applying its log
after a restart) may still be on its way through the stream, and claiming its revision before it
arrives would hide it from every list and watch started at that revision.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from kconsole.api.filters import Filter
from kconsole.api.registry import ResourceSpec
from kconsole.api.tasks import cancel_and_wait
from kconsole.api.types import StatusError, status_body
from kconsole.clock import Clock, TimerHandle
from kconsole.store.kv import KV, KeyValue, WatchResponse, prefix_end

log = logging.getLogger(__name__)

Obj = dict[str, Any]
Decode = Callable[[KeyValue], Obj]

ADDED, MODIFIED, DELETED, BOOKMARK, ERROR = "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"

#: Upstream's initial-events-end marker on the bookmark that ends a sendInitialEvents replay.
INITIAL_EVENTS_END = "k8s.io/initial-events-end"


@dataclass(slots=True)
class CacheEvent:
    """One change: ``obj`` is the new state (for DELETED, the last state at the deletion revision)."""

    rv: int
    type: str
    obj: Obj
    prev: Obj | None
    ns: str
    name: str
    time: float
    #: The shared wire event ``{"type", "object"}`` every watcher without selectors receives.
    wire: dict[str, Any]


class CacheWatcher:
    """One client watch: a bounded queue filled by the cache, drained by the client."""

    __slots__ = ("cache", "filter", "bookmarks", "capacity", "_queue", "_initial", "_waiter", "_closed",
                 "_timer", "index_key", "terminated", "sent_rv", "__weakref__")

    def __init__(self, cache: WatchCache, flt: Filter, *, bookmarks: bool, capacity: int) -> None:
        self.cache = cache
        self.filter = flt
        self.bookmarks = bookmarks
        self.capacity = capacity
        self._queue: deque[dict[str, Any]] = deque()
        self._initial: deque[dict[str, Any]] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._closed = False
        self._timer: TimerHandle | None = None
        self.index_key: tuple[str, Any] | None = None
        self.terminated = False  # closed because it fell behind
        self.sent_rv = 0

    # ---- producer side (the cache)

    def push(self, event: dict[str, Any]) -> None:
        if self._closed:
            return
        if len(self._queue) >= self.capacity:
            log.info("watch on %s fell %d events behind: terminating it", self.cache.spec.group_resource,
                     self.capacity)
            self.terminated = True
            self.finish()
            return
        self._queue.append(event)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def offer(self, ev: CacheEvent) -> None:
        """Send ``ev`` as this watcher sees it through its selectors (upstream's convertToWatchEvent)."""
        flt = self.filter
        if flt.everything:
            self.push(ev.wire)
            return
        cur = ev.type != DELETED and flt.matches(ev.obj)
        old = ev.prev is not None and flt.matches(ev.prev)
        if cur:
            want = MODIFIED if old else ADDED
            self.push(ev.wire if want == ev.type else {"type": want, "object": ev.obj})
        elif old:
            if ev.type == DELETED:
                self.push(ev.wire)
            else:
                # Stopped matching: a DELETED carrying the last matching state at this revision.
                self.push({"type": DELETED, "object": _with_rv(ev.prev, ev.rv)})  # type: ignore[arg-type]

    def finish(self) -> None:
        """Server-side end of stream (timeout, overflow, cache reset, shutdown)."""
        if self._closed:
            return
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
        self.cache._unregister(self)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # ---- consumer side (WatchStream)

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        return self

    async def __anext__(self) -> dict[str, Any]:
        while True:
            if self._initial:
                return self._initial.popleft()
            if self._queue:
                return self._queue.popleft()
            if self._closed:
                raise StopAsyncIteration
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

    def take_ready(self, limit: int) -> list[dict[str, Any]]:
        """Up to ``limit`` events already queued, without waiting: a writer sends them together, as
        upstream's watch server flushes only once its channel is empty."""
        out: list[dict[str, Any]] = []
        for source in (self._initial, self._queue):
            while source and len(out) < limit:
                out.append(source.popleft())
        return out

    async def close(self) -> None:
        self._queue.clear()
        self._initial.clear()
        self.finish()

    def pending(self) -> int:
        return len(self._queue) + len(self._initial)


class ErrorStream:
    """A watch that answers one ERROR event (410 Expired, 504 Timeout) and ends, as upstream."""

    def __init__(self, status: dict[str, Any]) -> None:
        self._events = deque([{"type": ERROR, "object": status}])

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        return self

    async def __anext__(self) -> dict[str, Any]:
        if not self._events:
            raise StopAsyncIteration
        return self._events.popleft()

    async def close(self) -> None:
        self._events.clear()


def _logged(err: StatusError) -> StatusError:
    log.error("%s", err)
    return err


def _with_rv(obj: Obj, rv: int) -> Obj:
    """A shallow copy of ``obj`` whose metadata carries ``rv`` (sub-objects stay shared)."""
    out = dict(obj)
    meta = dict(obj["metadata"])
    meta["resourceVersion"] = str(rv)
    out["metadata"] = meta
    return out


def too_old(rv: int, oldest: int) -> dict[str, Any]:
    return status_body(410, "Expired", f"too old resource version: {rv} ({oldest})")


class WatchCache:
    """Memory image of one resource, fed by one store watch."""

    def __init__(
        self,
        spec: ResourceSpec,
        kv: KV,
        clock: Clock,
        decode: Decode,
        *,
        is_quiet: Callable[[], bool] = lambda: False,
        history_seconds: float = 75.0,
        min_events: int = 100,
        max_events: int = 200_000,
        watcher_capacity: int = 1000,
        bookmark_interval: float = 60.0,
    ) -> None:
        self.spec = spec
        self.kv = kv
        self.clock = clock
        self.decode = decode
        self.is_quiet = is_quiet
        #: The store watch being read (catch_up asks it whether it is settled).
        self._stream: Any = None
        self.history_seconds = history_seconds
        self.min_events = min_events
        self.max_events = max_events
        self.watcher_capacity = watcher_capacity
        self.bookmark_interval = bookmark_interval
        self.prefix = spec.prefix
        self.rv = 0
        #: every event with rv > window_start is in ``history``
        self.window_start = 0
        self.history: deque[CacheEvent] = deque()
        self.objects: dict[str, dict[str, Obj]] = {}  # namespace ("" if cluster-scoped) -> name -> object
        #: Stored values that do not decode (a Secret under a key this server lacks): (namespace, name)
        #: -> the decoder's 500. They stay out of ``objects``; reading one, or a list that covers one,
        #: fails with it, as upstream's reads from etcd do.
        self.undecodable: dict[tuple[str, str], StatusError] = {}
        self.count = 0
        #: Moves whenever the objects change (not on progress), so derived indexes know to rebuild.
        self.generation = 0
        self.ready = False
        self.relists = 0
        #: Events read from the store, and those handed to watchers (both only ever grow): /metrics.
        self.events_received = 0
        self.events_dispatched = 0
        #: Every object's (namespace, name) in key order, for lists across namespaces; rebuilt when one
        #: comes or goes. Keys, not objects: a modified object replaces its entry in ``objects`` only.
        self._sorted: list[tuple[str, str]] | None = None
        self._all: set[CacheWatcher] = set()
        self._by_ns: dict[str, set[CacheWatcher]] = {}
        self._by_name: dict[tuple[str, str], set[CacheWatcher]] = {}
        self._bookmarkers = 0
        self._progress: asyncio.Future[None] | None = None
        self._task: asyncio.Task[None] | None = None
        self._bookmark_timer: TimerHandle | None = None
        self._stopped = False
        #: In-process followers of every change, called synchronously as the cache applies it (so
        #: they are never behind a reader of the cache): an event, or None after a (re-)list.
        self.listeners: list[Callable[[CacheEvent | None], None]] = []

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        await self._list()
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"watchcache:{self.spec.resource}")
        self._schedule_bookmarks()

    async def stop(self) -> None:
        self._stopped = True
        if self._bookmark_timer is not None:
            self._bookmark_timer.cancel()
        for w in list(self._all) + [w for s in self._by_ns.values() for w in s] + \
                [w for s in self._by_name.values() for w in s]:
            w.finish()
        await cancel_and_wait(self._task)
        self.ready = False

    async def _list(self) -> None:
        res = await self.kv.range(self.prefix, prefix_end(self.prefix))
        objects: dict[str, dict[str, Obj]] = {}
        undecodable: dict[tuple[str, str], StatusError] = {}
        plen = len(self.prefix)
        decode = self.decode
        for kv in res.kvs:
            ns, _, name = kv.key[plen:].rpartition("/")
            try:
                objects.setdefault(ns, {})[name] = decode(kv)
            except StatusError as err:
                undecodable[(ns, name)] = _logged(err)
        self.objects = objects
        self.undecodable = undecodable
        self.count = sum(len(v) for v in objects.values())
        self._sorted = None
        self.rv = res.revision
        self.generation += 1
        self.window_start = res.revision
        self.history.clear()
        self.ready = True
        for listener in self.listeners:
            listener(None)
        self._wake_progress()

    async def _run(self) -> None:
        while not self._stopped:
            try:
                stream = self._stream = self.kv.watch(self.prefix, prefix_end(self.prefix),
                                                      start_revision=self.rv + 1, prev_kv=False,
                                                      progress_notify=True)
                async for resp in stream:
                    if resp.canceled:
                        break
                    self._apply(resp)
                if self._stopped:
                    return
            except asyncio.CancelledError:
                raise
            except Exception as err:  # noqa: BLE001 - the store may be down for a while; keep trying
                if self._stopped:
                    return
                log.warning("store watch on %s failed: %s", self.prefix, err)
                self.ready = False
                await self.clock.sleep(1.0)
            # Canceled (compacted or too slow) or failed: re-list and start over, as upstream's reflector.
            await self._relist()

    async def _relist(self) -> None:
        while not self._stopped:
            try:
                old_watchers = list(self._all) + [w for s in self._by_ns.values() for w in s] + \
                    [w for s in self._by_name.values() for w in s]
                await self._list()
                self.relists += 1
                for w in old_watchers:
                    w.finish()
                return
            except asyncio.CancelledError:
                raise
            except Exception as err:  # noqa: BLE001
                log.warning("re-list of %s failed: %s", self.prefix, err)
                self.ready = False
                await self.clock.sleep(1.0)

    # ------------------------------------------------------------------ events in

    def _apply(self, resp: WatchResponse) -> None:
        if not resp.events:
            if resp.revision > self.rv:
                self.rv = resp.revision
                self._wake_progress()
            return
        now = self.clock.now()
        self.events_received += len(resp.events)
        plen = len(self.prefix)
        objects = self.objects
        history = self.history
        for event in resp.events:
            kv = event.kv
            rev = kv.mod_revision
            ns, _, name = kv.key[plen:].rpartition("/")
            bucket = objects.get(ns)
            prev = bucket.get(name) if bucket is not None else None
            if event.type == "PUT":
                try:
                    obj = self.decode(kv)
                except StatusError as err:
                    self.undecodable[(ns, name)] = _logged(err)
                    if prev is not None:  # unreadable from now on: out of the cache, as if gone
                        del bucket[name]  # type: ignore[union-attr]
                        self.count -= 1
                        self._sorted = None
                    continue
                if self.undecodable:
                    self.undecodable.pop((ns, name), None)
                if bucket is None:
                    bucket = objects[ns] = {}
                bucket[name] = obj
                if prev is None:
                    self.count += 1
                    self._sorted = None
                    etype = ADDED
                else:
                    etype = MODIFIED
            else:
                if self.undecodable:
                    self.undecodable.pop((ns, name), None)
                if prev is None:
                    continue
                del bucket[name]  # type: ignore[union-attr]
                self.count -= 1
                self._sorted = None
                obj = _with_rv(prev, rev)
                etype = DELETED
            ev = CacheEvent(rev, etype, obj, prev, ns, name, now, {"type": etype, "object": obj})
            history.append(ev)
            if rev > self.rv:
                self.rv = rev
            self._dispatch(ev)
        self.generation += 1
        self._evict(now)
        self._wake_progress()

    def _evict(self, now: float) -> None:
        history = self.history
        horizon = now - self.history_seconds
        while history and (len(history) > self.max_events or
                           (len(history) > self.min_events and history[0].time < horizon)):
            self.window_start = history.popleft().rv

    def _dispatch(self, ev: CacheEvent) -> None:
        self.events_dispatched += 1
        for listener in self.listeners:
            listener(ev)
        if self._all:
            for w in tuple(self._all):
                w.offer(ev)
        if self._by_ns:
            ws = self._by_ns.get(ev.ns)
            if ws:
                for w in tuple(ws):
                    w.offer(ev)
        if self._by_name:
            ws = self._by_name.get((ev.ns, ev.name))
            if ws:
                for w in tuple(ws):
                    w.offer(ev)

    # ------------------------------------------------------------------ freshness

    def _wake_progress(self) -> None:
        fut = self._progress
        if fut is not None and not fut.done():
            fut.set_result(None)
        self._progress = None

    def catch_up(self) -> int:
        """Advance ``rv`` to the store's revision when no write of this resource is in flight and the
        store watch has nothing left to give (a stream that cannot tell is never trusted)."""
        if self.ready and self.is_quiet():
            settled = getattr(self._stream, "settled", None)
            if settled is not None and settled():
                current = self.kv.revision
                if current > self.rv:
                    self.rv = current
        return self.rv

    async def wait_for(self, rv: int, timeout: float | None = 3.0) -> None:
        """Wait until the cache holds every change up to ``rv``; 504 as upstream when it does not come."""
        if self.rv >= rv and self.ready:
            return
        try:
            async with self.clock.wall.timeout(timeout):  # a request's wait: real seconds at any speed
                while not (self.ready and self.catch_up() >= rv):
                    if self._progress is None:
                        self._progress = asyncio.get_running_loop().create_future()
                    await self._progress
        except TimeoutError:
            raise StatusError(status_body(
                504, "Timeout", f"Timeout: Too large resource version: {rv}, current: {self.rv}",
                causes=[{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                retry_after=1)) from None

    def poke(self) -> None:
        """A write of this resource finished: waiters may now be able to catch up."""
        if self._progress is not None:
            self._wake_progress()

    # ------------------------------------------------------------------ reads

    def get(self, namespace: str | None, name: str) -> Obj | None:
        bucket = self.objects.get(namespace or "")
        found = bucket.get(name) if bucket is not None else None
        if found is None and self.undecodable:
            err = self.undecodable.get((namespace or "", name))
            if err is not None:
                raise StatusError(err.status)
        return found

    def list(self, flt: Filter) -> list[Obj]:
        """Matching objects in key order (shared: callers must not mutate them). A value that does
        not decode fails the whole list, as it fails upstream's list from etcd."""
        if self.undecodable:
            for (ns, name), err in self.undecodable.items():
                if (flt.namespace is None or flt.namespace == ns) and (flt.name is None or flt.name == name):
                    raise StatusError(err.status)
        if flt.name is not None:
            if flt.namespace is not None:
                one = self.get(flt.namespace, flt.name)
                candidates = [one] if one is not None else []
            else:
                candidates = [b[flt.name] for _, b in sorted(self.objects.items()) if flt.name in b]
        elif flt.namespace is not None:
            bucket = self.objects.get(flt.namespace, {})
            candidates = [bucket[n] for n in sorted(bucket)]
        else:
            if self._sorted is None:
                self._sorted = [(ns, n) for ns, b in sorted(self.objects.items()) for n in sorted(b)]
            objects = self.objects
            candidates = [objects[ns][n] for ns, n in self._sorted]
        if flt.everything:
            return candidates  # a list of its own in every branch above
        return [o for o in candidates if flt.matches(o)]

    def values(self) -> list[Obj]:
        return [o for b in self.objects.values() for o in b.values()]

    # ------------------------------------------------------------------ watches

    def watch(self, flt: Filter, start_rv: int | None, *, bookmarks: bool = False,
              send_initial_events: bool | None = None, timeout: float | None = None) -> CacheWatcher | ErrorStream:
        """Start a watch after ``start_rv`` (None: synthetic ADDED of current objects first).

        Callers first ``await wait_for(start_rv)``; everything from here is synchronous, so no event
        can slip between the replay and the registration.
        """
        w = CacheWatcher(self, flt, bookmarks=bookmarks, capacity=self.watcher_capacity)
        initial = send_initial_events if send_initial_events is not None else start_rv is None
        if initial:
            for obj in self.list(flt):
                w._initial.append({"type": ADDED, "object": obj})
        elif start_rv is not None and start_rv < self.window_start:
            return ErrorStream(too_old(start_rv, self.window_start))
        else:
            self._replay(w, start_rv or 0)
        if bookmarks:
            w._initial.append(self._bookmark(initial_end=bool(send_initial_events)))
        self._register(w)
        if timeout is not None and timeout > 0:
            w._timer = self.clock.wall.call_later(timeout, w.finish)  # timeoutSeconds are real seconds
        elif timeout is not None and timeout < 0:  # already over, as upstream's timer (0 means none given)
            w.finish()
        return w

    def _replay(self, w: CacheWatcher, after: int) -> None:
        history = self.history
        if not history or history[-1].rv <= after:
            return
        # Binary search the first event after ``after`` (history is ordered by rv).
        lo, hi = 0, len(history)
        while lo < hi:
            mid = (lo + hi) // 2
            if history[mid].rv <= after:
                lo = mid + 1
            else:
                hi = mid
        # Replayed events do not count against the live queue's bound: however many the window holds
        # after ``after``, the client gets them all (the bound is for a client that cannot keep up).
        capacity, w.capacity = w.capacity, sys.maxsize
        try:
            for i in range(lo, len(history)):
                ev = history[i]
                if w.filter.namespace is not None and ev.ns != w.filter.namespace:
                    continue
                if w.filter.name is not None and ev.name != w.filter.name:
                    continue
                w.offer(ev)
        finally:
            w.capacity = capacity
        w._initial.extend(w._queue)
        w._queue.clear()

    def _register(self, w: CacheWatcher) -> None:
        if w._closed:
            return
        flt = w.filter
        key: tuple[str, Any]
        if flt.name is not None and (flt.namespace is not None or not self.spec.namespaced):
            key = ("name", (flt.namespace or "", flt.name))
            self._by_name.setdefault(key[1], set()).add(w)
        elif flt.namespace is not None:
            key = ("ns", flt.namespace)
            self._by_ns.setdefault(flt.namespace, set()).add(w)
        else:
            key = ("all", None)
            self._all.add(w)
        w.index_key = key
        if w.bookmarks:
            self._bookmarkers += 1

    def _unregister(self, w: CacheWatcher) -> None:
        key = w.index_key
        if key is None:
            return
        w.index_key = None
        kind, value = key
        if kind == "all":
            self._all.discard(w)
        elif kind == "ns":
            ws = self._by_ns.get(value)
            if ws is not None:
                ws.discard(w)
                if not ws:
                    del self._by_ns[value]
        else:
            ws = self._by_name.get(value)
            if ws is not None:
                ws.discard(w)
                if not ws:
                    del self._by_name[value]
        if w.bookmarks:
            self._bookmarkers -= 1

    def watcher_counts(self) -> tuple[int, int, int]:
        """Watchers of every namespace, of one namespace, of one object: upstream's cluster,
        namespace and resource scopes."""
        return (len(self._all), sum(len(s) for s in self._by_ns.values()),
                sum(len(s) for s in self._by_name.values()))

    # ------------------------------------------------------------------ bookmarks

    def _bookmark(self, initial_end: bool = False) -> dict[str, Any]:
        meta: dict[str, Any] = {"resourceVersion": str(self.catch_up())}
        if initial_end:
            meta["annotations"] = {INITIAL_EVENTS_END: "true"}
        return {"type": BOOKMARK, "object": {"kind": self.spec.kind, "apiVersion": self.spec.api_version,
                                             "metadata": meta}}

    def _schedule_bookmarks(self) -> None:
        if self._stopped:
            return
        self._bookmark_timer = self.clock.wall.call_later(self.bookmark_interval, self._send_bookmarks)

    def _send_bookmarks(self) -> None:
        if self._bookmarkers:
            event = self._bookmark()
            for group in (self._all, *self._by_ns.values(), *self._by_name.values()):
                for w in tuple(group):
                    if w.bookmarks:
                        w.push(event)
        self._schedule_bookmarks()
