"""Rewind: the cluster as it was at a past revision, for every panel, from the history read path.

A jump lists every kind the panels show at the target revision (``HistoryClient.list_at``) into
:class:`SnapshotInformer` caches, which quack like the live informers, so the panels render a past
:class:`~kconsole.tui.model.View` exactly as a live one (same columns, same marks on the rows that
a step changed). A step applies the changes between the two revisions (``HistoryClient.changes``),
each object forwards to ``object`` or backwards to ``previous``: a step touches the rows that
changed, never relists. The live informers keep running meanwhile, so returning live is immediate.

Events over the whole kept history (which are warnings, which record faults) are indexed once and
extended as the history grows: stepping to the previous event, warning or fault is a bisection,
and the timeline strip reads its marks from the same index.
"""

from __future__ import annotations

import asyncio
import math
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from kconsole.client import object_key
from kconsole.tui.faultview import ActiveFault
from kconsole.tui.model import View, Watched, event_time
from kconsole.tui.widgets.timeline import TimelineData

Obj = dict[str, Any]

#: A move of more revisions than this lists the kinds again instead of applying every change.
RELIST_AFTER = 3_000
#: Events read per history request while indexing them.
INDEX_PAGE = 5_000
#: Widths (simulated seconds) the timeline's buckets are cut at: the narrowest that fits the strip.
WIDTHS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)
#: The component fault Events are recorded by (kconsole.faults.SOURCE).
FAULT_SOURCE = "kconsole-faults"
_FAULT_MESSAGE = re.compile(r"^Fault (\S+) (\S+) on (\S+)")


class SnapshotInformer:
    """A cache of one kind at one revision with the read side of
    :class:`kconsole.client.SharedInformer` (get, list, keys, handlers), changed by :meth:`put`."""

    def __init__(self, resource: str, items: list[Obj] | None = None) -> None:
        self.resource = resource
        self._items: dict[str, Obj] = {}
        self._handlers: list[tuple[Any, Any, Any]] = []
        self.has_synced = items is not None
        for obj in items or ():
            self._items[object_key(obj)] = obj

    def fill(self, items: list[Obj]) -> None:
        """The listing arrived (a kind loaded after the jump): every object is an add."""
        for obj in items:
            self.put(object_key(obj), obj)
        self.has_synced = True

    def add_event_handler(self, on_add: Any = None, on_update: Any = None, on_delete: Any = None) -> object:
        handler = (on_add, on_update, on_delete)
        self._handlers.append(handler)
        if on_add is not None:
            for obj in list(self._items.values()):
                on_add(obj)
        return handler

    def put(self, key: str, obj: Obj | None) -> None:
        """The object under ``key`` becomes ``obj`` (None: it did not exist)."""
        old = self._items.get(key)
        if obj is None:
            if old is None:
                return
            del self._items[key]
            for _, _, on_delete in self._handlers:
                if on_delete is not None:
                    on_delete(old)
        elif old is None:
            self._items[key] = obj
            for on_add, _, _ in self._handlers:
                if on_add is not None:
                    on_add(obj)
        else:
            self._items[key] = obj
            for _, on_update, _ in self._handlers:
                if on_update is not None:
                    on_update(old, obj)

    def get(self, key: str) -> Obj | None:
        return self._items.get(key)

    def get_by_name(self, namespace: str | None, name: str) -> Obj | None:
        return self._items.get(f"{namespace}/{name}" if namespace else name)

    def list(self) -> list[Obj]:
        return list(self._items.values())

    def keys(self) -> list[str]:
        return list(self._items)

    def __len__(self) -> int:
        return len(self._items)


def split_group_resource(group_resource: str) -> tuple[str, str]:
    """``leases.coordination.k8s.io`` -> (``leases``, ``coordination.k8s.io``); ``pods`` -> (``pods``, ``"")``."""
    resource, _, group = group_resource.partition(".")
    return resource, group


def group_resource_of(resource: str, group: str) -> str:
    return f"{resource}.{group}" if group else resource


# ---------------------------------------------------------------------- events index


@dataclass(slots=True)
class EventMark:
    """One write of an Event in the history: when, and whether it is a warning or a fault's."""

    revision: int
    time: float
    warning: bool
    fault: bool


def classify(ev: Obj) -> tuple[bool, bool]:
    """(warning, fault) for one Event object."""
    source = (ev.get("source") or {}).get("component") or ev.get("reportingComponent") or ""
    return ev.get("type") == "Warning", source == FAULT_SOURCE


class EventIndex:
    """Every write of an Event over the kept history, oldest first (creations and updates; a
    deletion is no event to step to)."""

    def __init__(self) -> None:
        self.marks: list[EventMark] = []
        self.revisions: list[int] = []
        #: Revisions indexed so far: (oldest kept when indexed, last revision read).
        self.upto = 0

    async def extend(self, history: Any, oldest: int, current: int) -> None:
        """Read the Events written after what is indexed, up to ``current``."""
        if self.upto < oldest - 1:
            self.marks.clear()
            self.revisions.clear()
            self.upto = oldest - 1
        while self.upto < current:
            page = await history.changes(self.upto, current, resource="events", group="", limit=INDEX_PAGE)
            for change in page:
                if change.object is None:
                    continue
                warning, fault = classify(change.object)
                self.marks.append(EventMark(change.revision, change.time, warning, fault))
                self.revisions.append(change.revision)
            if len(page) < INDEX_PAGE:
                self.upto = current
            else:
                self.upto = page[-1].revision
        if self.marks and self.marks[0].revision < oldest:
            cut = bisect_left(self.revisions, oldest)
            del self.marks[:cut]
            del self.revisions[:cut]

    def neighbour(self, revision: int, step: int, match: Callable[[EventMark], bool]) -> EventMark | None:
        """The nearest matching event before (``step`` < 0) or after ``revision``."""
        if step < 0:
            i = bisect_left(self.revisions, revision) - 1
            while i >= 0:
                if match(self.marks[i]):
                    return self.marks[i]
                i -= 1
            return None
        i = bisect_right(self.revisions, revision)
        while i < len(self.marks):
            if match(self.marks[i]):
                return self.marks[i]
            i += 1
        return None


def faults_at(events: list[Obj], now: float) -> list[ActiveFault]:
    """The faults active at a past revision, from the fault Events it holds: each FaultInjected
    not followed by its FaultHealed. One-shot faults (a pod deleted) are never healed, so only
    those whose injection says what to expect and name a heal count; the catalog records both."""
    from kconsole.objects.printers import human_duration

    recorded = sorted((e for e in events if classify(e)[1]), key=lambda e: (event_time(e), object_key(e)))
    active: dict[str, ActiveFault] = {}
    for ev in recorded:
        found = _FAULT_MESSAGE.match(ev.get("message") or "")
        if found is None:
            continue
        fid, ftype, target = found.group(1), found.group(2), found.group(3).rstrip(":")
        if ev.get("reason") == "FaultInjected":
            expect = (ev.get("message") or "").partition("Expect: ")[2]
            since = f"{human_duration(now - event_time(ev))} ago"
            active[fid] = ActiveFault(fid, ftype, target, since, expect)
        elif ev.get("reason") == "FaultHealed":
            active.pop(fid, None)
    return list(active.values())


# ---------------------------------------------------------------------- jump targets


class TargetError(ValueError):
    """A jump target the console cannot read; the message says what it takes."""


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_duration(text: str) -> float:
    """``5m``, ``1h30m``, ``90s`` -> seconds."""
    pos, total = 0, 0.0
    for found in _DURATION.finditer(text):
        if found.start() != pos:
            break
        total += float(found.group(1)) * _UNITS[found.group(2)]
        pos = found.end()
    if pos != len(text) or not text:
        raise TargetError(f"{text!r} is not a duration (5m, 1h30m, 90s)")
    return total


@dataclass(frozen=True, slots=True)
class Target:
    """Where a jump goes: a revision, or a simulated time."""

    revision: int | None = None
    time: float | None = None


def parse_target(text: str, cursor: float) -> Target:
    """A jump: ``r1234`` (revision), ``-5m`` / ``+30s`` (from the cursor's time), ``12:03:10``
    (that time of the cursor's day, UTC as the clock shows it; the day before when later)."""
    text = text.strip()
    if not text:
        raise TargetError("empty: type r1234, -5m or 12:03:10")
    if text[0] in "rR" and text[1:].isdigit():
        return Target(revision=int(text[1:]))
    if text.isdigit():
        return Target(revision=int(text))
    if text[0] in "+-":
        seconds = parse_duration(text[1:])
        return Target(time=cursor + (seconds if text[0] == "+" else -seconds))
    parts = text.split(":")
    if 2 <= len(parts) <= 3 and all(p.replace(".", "", 1).isdigit() for p in parts):
        h, m = int(parts[0]), int(parts[1])
        s = float(parts[2]) if len(parts) == 3 else 0.0
        if h > 23 or m > 59 or s >= 60:
            raise TargetError(f"{text!r} is not a time of day (HH:MM:SS)")
        day = datetime.fromtimestamp(cursor, timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
        when = (day + timedelta(hours=h, minutes=m, seconds=s)).timestamp()
        if when > cursor + 1e-6:
            when -= 86400.0
        return Target(time=when)
    raise TargetError(f"{text!r}: type r1234 (a revision), -5m / +30s (from the cursor) or 12:03:10 (a time)")


# ---------------------------------------------------------------------- the past view


class PastView(View):
    """The cluster at one revision: snapshot caches for the kinds shown, loaded on a jump and
    moved change by change on a step."""

    def __init__(self, rewind: Rewind, revision: int, time: float) -> None:
        super().__init__()
        self.rewind = rewind
        self.revision = revision
        self.time = time
        self.snapshots: dict[str, SnapshotInformer] = {}
        self.faults = self._faults
        self.load = self._load
        self._faults_cache: tuple[int, float, list[ActiveFault]] | None = None

    def add(self, key: str, items: list[Obj] | None) -> Watched:
        """A cache of ``key`` holding ``items``: its rows come unmarked (marks are for what a step changed)."""
        informer = SnapshotInformer(key, items)
        informer.has_synced = False
        self.snapshots[key] = informer
        watched = self.track(key, informer)
        informer.has_synced = items is not None
        return watched

    def _load(self, key: str) -> Watched:
        """A kind switched to in the past: listed at this revision in the background."""
        watched = self.add(key, None)
        self.rewind.load_later(self, key)
        return watched

    def _faults(self) -> list[ActiveFault]:
        events = self.watched.get("events")
        if events is None:
            return []
        cached = self._faults_cache
        if cached is None or cached[0] != events.version or cached[1] != self.time:
            cached = (events.version, self.time or 0.0, faults_at(events.informer.list(), self.time or 0.0))
            self._faults_cache = cached
        return cached[2]

    def apply(self, changes: list[Any], forward: bool) -> int:
        """Move the snapshots over ``changes`` (oldest first): forwards to each ``object``, or
        backwards (newest first) to each ``previous``. Returns how many touched a kind shown."""
        touched = 0
        snapshots = self.snapshots
        for change in (changes if forward else reversed(changes)):
            informer = snapshots.get(group_resource_of(change.resource, change.group))
            if informer is None:
                continue
            obj = change.object if forward else change.previous
            ref = change.object or change.previous
            key = object_key(ref) if ref is not None else (
                f"{change.namespace}/{change.name}" if change.namespace else change.name)
            informer.put(key, obj)
            touched += 1
        return touched


class Rewind:
    """The console's cursor over the history: live, or a :class:`PastView` at one revision."""

    def __init__(self, model: Any, history: Any, etcd_samples: Any = None) -> None:
        self.model = model
        self.history = history
        self.etcd_samples = etcd_samples
        self.index = EventIndex()
        self.bounds: Any = None
        self._lock = asyncio.Lock()
        self._refreshing = asyncio.Lock()
        self._loads: set[asyncio.Task[None]] = set()
        #: Bucket edge time -> the last revision written at or before it (the timeline's, kept).
        self._edges: dict[float, int] = {}
        #: Told after a background load filled a kind (the app redraws).
        self.on_loaded: Callable[[], None] | None = None
        #: Counters for tests and the benchmark: full listings vs incremental steps.
        self.relists = 0
        self.steps = 0

    @property
    def view(self) -> PastView | None:
        view = self.model.view
        return view if isinstance(view, PastView) else None

    @property
    def revision(self) -> int | None:
        view = self.view
        return view.revision if view is not None else None

    def behind(self) -> int:
        view = self.view
        if view is None or self.bounds is None:
            return 0
        return max(0, self.bounds.current - view.revision)

    async def refresh(self) -> Any:
        """The history's bounds now, and the event index extended to them (one reader at a time:
        two extending the index at once would both add the same Events)."""
        async with self._refreshing:
            bounds = await self.history.bounds()
            await self.index.extend(self.history, bounds.oldest, bounds.current)
            self.bounds = bounds
            return bounds

    async def goto(self, revision: int) -> int:
        """Show the cluster at ``revision`` (clamped to the kept history); returns the revision shown."""
        async with self._lock:
            bounds = await self.refresh()
            return await self._goto(max(bounds.oldest, min(revision, bounds.current)))

    async def step(self, what: str, step: int) -> int | None:
        """One ``what`` (revision, event, warning: a warning or fault Event) back or forth from the
        cursor (live: from now); None when there is none. Past the live revision is live again."""
        async with self._lock:
            bounds = await self.refresh()
            here = self.revision
            target = self.neighbour(what, step)
            if target is None or target < bounds.oldest or (here is None and step > 0):
                return None
            if target > bounds.current:
                self.go_live()
                return bounds.current
            if target == here:
                return None
            return await self._goto(target)

    async def _goto(self, revision: int) -> int:
        """A short move applies the changes in between; a long one, or the first, lists again."""
        view = self.view
        if view is None or abs(revision - view.revision) > RELIST_AFTER:
            await self._relist(revision)
        elif revision != view.revision:
            await self._move(view, revision)
        return revision

    async def goto_time(self, when: float) -> int:
        """Show the last revision written at or before ``when`` (the oldest kept when earlier)."""
        bounds = await self.refresh()
        if when <= bounds.oldest_time:
            return await self.goto(bounds.oldest)
        if when >= bounds.current_time:
            return await self.goto(bounds.current)
        return await self.goto(await self.history.revision_at(when))

    async def _relist(self, revision: int) -> None:
        time = await self.history.time_of(revision)
        view = PastView(self, revision, time)
        keys = list(self.model.live.watched) or ["pods"]
        listed = await asyncio.gather(*(self._list(key, revision) for key in keys))
        for key, items in zip(keys, listed):
            view.add(key, items)
        self._etcd(view)
        self.relists += 1
        self._swap(view)

    async def _list(self, key: str, revision: int) -> list[Obj]:
        resource, group = split_group_resource(key)
        return await self.history.list_at(resource, revision, group=group)

    async def _move(self, view: PastView, revision: int) -> None:
        forward = revision > view.revision
        lo, hi = (view.revision, revision) if forward else (revision, view.revision)
        changes = await self.history.changes(lo, hi)
        view.apply(changes, forward)
        view.revision = revision
        view.time = await self.history.time_of(revision)
        self._etcd(view)
        self.steps += 1

    def _etcd(self, view: PastView) -> None:
        """etcd's member state as recorded at or before the revision (the console records it while live)."""
        sample = self.etcd_samples.at(view.revision) if self.etcd_samples is not None else None
        if sample is None:
            view.etcd_members, view.quorum, view.kv_status = [], None, None
            view.etcd_error = "member state not recorded at this revision (recorded while a console runs)"
        else:
            view.etcd_members, view.quorum, view.kv_status = sample.members, sample.quorum, sample.status
            view.etcd_error = f"member state as recorded at rev {sample.revision}"
        view.etcd_version += 1

    def _swap(self, view: View) -> None:
        self.model.view = view
        if self.model.on_view_changed is not None:
            self.model.on_view_changed()

    def go_live(self) -> None:
        for task in list(self._loads):
            task.cancel()
        self._swap(self.model.live)

    def load_later(self, view: PastView, key: str) -> None:
        async def load() -> None:
            async with self._lock:  # no step moves the view while its listing is on the way
                view.snapshots[key].fill(await self._list(key, view.revision))
            if self.on_loaded is not None:
                self.on_loaded()

        task = asyncio.get_running_loop().create_task(load())
        self._loads.add(task)
        task.add_done_callback(self._loads.discard)

    # ------------------------------------------------------------------ where a step goes

    def neighbour(self, what: str, step: int) -> int | None:
        """The revision one ``what`` (revision, event, warning) away from the cursor, or None."""
        here = self.revision if self.revision is not None else (self.bounds.current if self.bounds else 0)
        if what == "revision":
            return here + step
        match: Callable[[EventMark], bool] = (lambda m: True) if what == "event" else (
            lambda m: m.warning or m.fault)
        found = self.index.neighbour(here, step, match)
        return found.revision if found is not None else None

    # ------------------------------------------------------------------ the strip

    async def timeline(self, buckets: int, lookups: int | None = None) -> TimelineData:
        """Writes, warnings and faults per time bucket over the kept history. A bucket's writes are
        the revisions between its edges (``revision_at`` of each edge time); buckets start at
        multiples of their width, so an edge's revision, once read, stays known, and a refresh reads
        only new edges, at most ``lookups`` of them (None: all), newest first: each read is a request
        in the API log, so a live strip fills in over a few refreshes instead of in a burst.
        A bucket whose edges are not read yet has no figure (None)."""
        bounds = await self.refresh()
        span = max(bounds.current_time - bounds.oldest_time, 1e-3)
        width = float(next((w for w in WIDTHS if span / w <= buckets - 1), WIDTHS[-1]))
        first = math.floor(bounds.oldest_time / width) * width
        n = max(1, min(buckets, math.ceil((bounds.current_time - first) / width + 1e-9)))
        first = max(first, math.floor(bounds.current_time / width) * width - (n - 1) * width)
        times = [first + width * i for i in range(1, n)]
        known = self._edges
        missing = [t for t in reversed(times) if t not in known]
        for t in missing[:lookups] if lookups is not None else missing:
            revision = await self.history.revision_at(t)
            if t < bounds.current_time:  # no later write can be stamped before it: final
                known[t] = revision
        edges = [bounds.oldest - 1, *(known.get(t) for t in times), bounds.current]
        writes = tuple(None if a is None or b is None else max(0, b - a) for a, b in zip(edges, edges[1:]))
        warnings, faults = [0] * n, [0] * n
        for mark in self.index.marks:
            i = max(0, min(n - 1, int((mark.time - first) // width)))
            if mark.fault:
                faults[i] += 1
            elif mark.warning:
                warnings[i] += 1
        return TimelineData(first, first + n * width, writes, tuple(warnings), tuple(faults))
