"""What the referee records of a run, all of it through the API: the answers clients were given, and
its own watches.

* Acknowledged requests: the API server's ``taps`` hand every answer to :meth:`Recorder.tap` as the
  client received it (code, object, resourceVersion), with its place in the answer order, so a read
  can be compared with the writes acknowledged before it came in.
* The history: one watch per watched resource (all namespaces) from a list, re-watched from the
  last revision seen when a stream ends; a 410 on re-watch means a relist, and the revisions between
  are a gap the checkers skip. Each stream is checked as it runs: events in revision order, none
  twice, none before the revision the watch started at.
* Resumption probes: now and then a watch from a random past revision must replay exactly the
  recorded events after it, or be answered 410 Expired.

Nothing here reads the store; etcd-style checkers (:mod:`.checks`) run over what was recorded.
"""

from __future__ import annotations

import asyncio
import logging
import random
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

from kconsole.api.types import Request, Response, StatusError
from kconsole.client import Client
from kconsole.clock import Clock

log = logging.getLogger(__name__)

Obj = dict[str, Any]

#: Resources watched by default: what the checkers judge (pods, their owners, leader Leases, the
#: compare-and-swap workload's ConfigMaps) and the nodes they land on.
WATCHED = ("pods", "replicasets.apps", "deployments.apps", "leases.coordination.k8s.io", "configmaps", "nodes")
#: Simulated seconds between resumption probes, and how long one waits for its replay.
PROBE_EVERY = 15.0
PROBE_WAIT = 10.0
#: Simulated seconds between attempts to watch again after a stream failed.
REWATCH_DELAY = 1.0
WRITES = ("create", "update", "patch", "delete")


def key_of(namespace: str | None, name: str | None) -> str:
    return f"{namespace}/{name}" if namespace else str(name or "")


def obj_key(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    return key_of(meta.get("namespace"), meta.get("name"))


def rv_of(obj: Any) -> int:
    try:
        return int(((obj or {}).get("metadata") or {}).get("resourceVersion") or 0)
    except (TypeError, ValueError, AttributeError):
        return 0


@dataclass(slots=True)
class Change:
    """One event of the recorded history (``RELIST``: the state a relist after a gap found)."""

    rv: int
    type: str
    resource: str
    key: str
    obj: Obj
    time: float  # simulated seconds since the referee started

    def __str__(self) -> str:
        return f"+{self.time:g}s rv {self.rv} {self.type} {self.resource} {self.key}{_summary(self.resource, self.obj)}"


def _summary(resource: str, obj: Obj) -> str:
    """The fields the checkers judge, so a violation's history reads on its own."""
    spec = obj.get("spec") or {}
    meta = obj.get("metadata") or {}
    bits = []
    if resource == "pods":
        bits.append(f"node={spec.get('nodeName') or '-'}")
        if meta.get("deletionTimestamp"):
            bits.append("terminating")
        owner = next((o.get("name") for o in meta.get("ownerReferences") or () if o.get("controller")), None)
        if owner:
            bits.append(f"owner={owner}")
    elif resource.startswith("leases"):
        bits += [f"holder={spec.get('holderIdentity') or '-'}", f"acquire={spec.get('acquireTime') or '-'}",
                 f"renew={spec.get('renewTime') or '-'}", f"duration={spec.get('leaseDurationSeconds')}"]
    elif resource.startswith(("replicasets", "deployments")):
        bits.append(f"replicas={spec.get('replicas')}")
    elif resource == "configmaps" and isinstance(obj.get("data"), dict) and len(obj["data"]) <= 3:
        bits.append(" ".join(f"{k}={v}" for k, v in sorted(obj["data"].items())))
    if meta.get("uid"):
        bits.append(f"uid={str(meta['uid'])[:8]}")
    return f" ({', '.join(bits)})" if bits else ""


@dataclass(slots=True)
class Ack:
    """One answered request of a client, as the API answered it."""

    index: int  # position in the API server's answer order
    began: int  # answers given before this request came in
    time: float
    agent: str  # the client's user agent (which component)
    verb: str
    resource: str  # group_resource
    subresource: str
    namespace: str | None
    key: str
    code: int
    rv: int  # the answered object's (or list's) resourceVersion, 0 without one
    uid: str = ""
    base_rv: int = 0  # an update's (or patch's) precondition: the resourceVersion it was based on
    body: Any = None  # the request's body, for writes
    answer: Any = None  # the answer's body, for reads and writes
    consistent: bool = False  # a read that must reflect every write acknowledged before it
    selector: bool = False  # a list narrowed by a selector or paginated

    def __str__(self) -> str:
        sub = f"/{self.subresource}" if self.subresource else ""
        base = f" based on rv {self.base_rv}" if self.base_rv else ""
        return (f"+{self.time:g}s {self.agent or '?'}: {self.verb} {self.resource}{sub} {self.key or '(all)'}"
                f"{base} -> {self.code}" + (f" rv {self.rv}" if self.rv else ""))


@dataclass(slots=True)
class Finding:
    """A violation seen while recording (a watch stream's own order, a resumption probe)."""

    check: str
    message: str
    time: float
    history: list[str]


@dataclass(slots=True)
class ResourceLog:
    """The recorded history of one resource."""

    resource: str
    start: int = 0  # the first list's revision
    initial: dict[str, Obj] = field(default_factory=dict)
    changes: list[Change] = field(default_factory=list)
    by_rv: dict[int, Change] = field(default_factory=dict)
    by_key: dict[str, list[Change]] = field(default_factory=dict)
    gaps: list[tuple[int, int]] = field(default_factory=list)  # (last rv seen, relist rv]: not recorded
    head: int = 0  # highest revision seen (events and bookmarks)
    streams: int = 0
    probes: int = 0
    expired_probes: int = 0

    def add(self, change: Change) -> None:
        self.changes.append(change)
        if change.type != "RELIST":
            self.by_rv[change.rv] = change
        self.by_key.setdefault(change.key, []).append(change)

    def in_gap(self, low: int, high: int | None = None) -> bool:
        """Whether any revision in ``(low, high]`` (or just ``low``) went unrecorded."""
        high = low if high is None else high
        if low < self.start:
            return True
        return any(a < high and low <= b for a, b in self.gaps)

    def events_between(self, low: int, high: int) -> list[Change]:
        """Recorded events with ``low < rv <= high``, in order."""
        rvs = [c.rv for c in self.changes]
        return [c for c in self.changes[bisect_right(rvs, low):bisect_right(rvs, high)] if c.type != "RELIST"]


class Recorder:
    """Records one cluster epoch (until a restart) for the checkers."""

    def __init__(self, api: Any, client: Client, clock: Clock, *, origin: float, seed: int,
                 resources: tuple[str, ...] = WATCHED, probes: bool = True) -> None:
        self.api = api
        self.client = client
        self.clock = clock
        self.origin = origin
        self.rng = random.Random(seed * 4099 + 17)
        self.logs: dict[str, ResourceLog] = {}
        self.resources = resources
        self.acks: list[Ack] = []
        self.findings: list[Finding] = []
        self.probes = probes
        self._names: dict[tuple[str, str], str] = {}  # (resource, group) -> group_resource
        self._tasks: list[asyncio.Task[None]] = []

    def now(self) -> float:
        return round(self.clock.now() - self.origin, 3)

    # ------------------------------------------------------------------ acknowledged requests

    def _group_resource(self, request: Request) -> str:
        group = request.group
        if group is None:
            try:
                info = self.client.resource_info(request.resource)
                group = info.group
                resource = info.resource
            except StatusError:
                return request.resource
        else:
            resource = request.resource
        return f"{resource}.{group}" if group else resource

    def tap(self, request: Request, result: Any, began: int) -> None:
        """Keep what a client was answered (writes and reads of objects; not watches or logs)."""
        verb = request.verb
        if verb not in ("get", "list", *WRITES) or request.dry_run or not isinstance(result, Response):
            return
        if request.subresource in ("log", "proxy", "exec", "attach", "portforward"):
            return
        resource = self._group_resource(request)
        body = result.body if isinstance(result.body, dict) else None
        code = result.code
        namespace = request.namespace
        name = request.name
        if verb == "create" and not name and isinstance(request.body, dict):
            name = (request.body.get("metadata") or {}).get("name") or None
        is_status = body is not None and body.get("kind") == "Status"
        if verb == "create" and not name and body is not None and not is_status:
            name = (body.get("metadata") or {}).get("name")
            namespace = namespace or (body.get("metadata") or {}).get("namespace")
        base = 0
        if verb in ("update", "patch") and isinstance(request.body, dict):
            base = rv_of(request.body)
        consistent = verb in ("get", "list") and request.resource_version in (None, "") and not request.continue_
        rv = rv_of(body) if body is not None and not is_status else 0
        uid = str(((body or {}).get("metadata") or {}).get("uid") or "") if not is_status else ""
        if request.subresource == "binding" and isinstance(request.body, dict):
            uid = str((request.body.get("metadata") or {}).get("uid") or "")
        selector = bool(request.label_selector or request.field_selector or request.limit or request.continue_)
        self.acks.append(Ack(
            index=self.api.answered - 1, began=began, time=self.now(), agent=request.user_agent, verb=verb,
            resource=resource, subresource=request.subresource or "", namespace=namespace,
            key=key_of(namespace, name) if name else "", code=code, rv=rv, uid=uid, base_rv=base,
            body=request.body if verb in WRITES else None,
            answer=body if (code < 300 and verb != "delete") or verb in ("get", "list") else None,
            consistent=consistent, selector=selector))

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """List every watched resource and follow it; tap the API server's answers."""
        for resource in self.resources:
            rlog = self.logs[resource] = ResourceLog(resource)
            items, rv = await self.client.list_pages(resource)
            rlog.start = rlog.head = int(rv or 0)
            rlog.initial = {obj_key(o): o for o in items}
        self.api.taps.append(self.tap)
        loop = asyncio.get_running_loop()
        for resource in self.resources:
            self._tasks.append(loop.create_task(self._follow(self.logs[resource]), name=f"referee-{resource}"))
        if self.probes:
            self._tasks.append(loop.create_task(self._probe_loop(), name="referee-probes"))

    async def stop(self) -> None:
        if self.tap in self.api.taps:
            self.api.taps.remove(self.tap)
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            try:
                await task
            except (asyncio.CancelledError, Exception):  # noqa: BLE001 - stopping must not fail
                pass

    async def progress(self, rlog: ResourceLog, rv: int) -> bool:
        """Whether the watch cache serving ``rlog``'s resource has dispatched every event up to ``rv``
        (a watch from ``rv`` opens with a bookmark at the cache's revision, as a progress request);
        if so, the recorded history is complete up to ``rv`` once this stream has drained."""
        streams, gaps = rlog.streams, len(rlog.gaps)
        try:
            async with self.client.watch(rlog.resource, resource_version=str(rv)) as stream:
                async for event in stream:
                    if event.get("type") == "ERROR":
                        return False
                    if event.get("type") == "BOOKMARK" and rv_of(event.get("object")) >= rv:
                        break
        except StatusError:
            return False
        await self.clock.sleep(REWATCH_DELAY)  # the recording stream drains what it was handed
        if rlog.streams != streams or len(rlog.gaps) != gaps:
            return False
        rlog.head = max(rlog.head, rv)
        return True

    # ------------------------------------------------------------------ the history

    async def _follow(self, rlog: ResourceLog) -> None:
        while True:
            try:
                async with self.client.watch(rlog.resource, resource_version=str(rlog.head)) as stream:
                    rlog.streams += 1
                    start, last, seen = rlog.head, rlog.head, set()
                    async for event in stream:
                        etype = event.get("type")
                        obj = event.get("object") or {}
                        if etype == "ERROR":
                            if obj.get("code") == 410:
                                await self._relist(rlog)
                            break
                        rv = rv_of(obj)
                        if etype == "BOOKMARK":
                            if rv < last:
                                self._stream_finding(rlog, f"a bookmark at rv {rv} went back before rv {last}",
                                                     start, rv)
                            rlog.head = max(rlog.head, rv)
                            continue
                        key = obj_key(obj)
                        problem = ""
                        if rv <= start:
                            problem = f"event at rv {rv} ({etype} {key}) is not after the watch's start, rv {start}"
                        elif (rv, key) in seen:
                            problem = f"event at rv {rv} ({etype} {key}) delivered twice"
                        elif rv < last:
                            problem = f"event at rv {rv} ({etype} {key}) came after rv {last}: out of order"
                        if problem:
                            self._stream_finding(rlog, problem, start, rv)
                            continue
                        seen.add((rv, key))
                        last = rv
                        rlog.head = max(rlog.head, rv)
                        rlog.add(Change(rv, str(etype), rlog.resource, key, obj, self.now()))
            except StatusError as err:
                if err.code == 410:
                    await self._relist(rlog)
                else:
                    log.debug("referee watch on %s: %s", rlog.resource, err)
            await self.clock.sleep(REWATCH_DELAY)

    def _stream_finding(self, rlog: ResourceLog, problem: str, start: int, rv: int) -> None:
        around = [str(c) for c in rlog.events_between(min(start, rv) - 1, max(start, rv))][-8:]
        self.findings.append(Finding("watch order", f"watch on {rlog.resource} from rv {start}: {problem}",
                                     self.now(), around))

    async def _relist(self, rlog: ResourceLog) -> None:
        """The watch expired: list again, note the unrecorded revisions, record the listed state."""
        while True:
            try:
                items, rv = await self.client.list_pages(rlog.resource)
                break
            except StatusError:
                await self.clock.sleep(REWATCH_DELAY)
        new = int(rv or 0)
        rlog.gaps.append((rlog.head, new))
        state = {obj_key(o): o for o in items}
        rlog.add(Change(new, "RELIST", rlog.resource, "", {"items": state}, self.now()))
        rlog.head = max(rlog.head, new)

    # ------------------------------------------------------------------ resumption probes

    async def _probe_loop(self) -> None:
        while True:
            await self.clock.sleep(PROBE_EVERY)
            rlog = self.logs[self.rng.choice(self.resources)]
            if rlog.head <= rlog.start + 1:
                continue
            since = self.rng.randrange(rlog.start, rlog.head)
            try:
                await self.probe(rlog, since)
            except (StatusError, TimeoutError) as err:
                log.debug("referee probe on %s: %s", rlog.resource, err)

    async def probe(self, rlog: ResourceLog, since: int) -> bool:
        """Watch ``rlog``'s resource from ``since``: the replay must be the recorded events up to the
        head at the time (or 410). Returns whether it was checked (False: 410, or a gap)."""
        until = rlog.head
        if rlog.in_gap(since, until):
            return False
        got: list[tuple[int, str, str]] = []
        expired = False

        async def read() -> None:
            nonlocal expired
            try:
                async with self.client.watch(rlog.resource, resource_version=str(since)) as stream:
                    async for event in stream:
                        obj = event.get("object") or {}
                        if event.get("type") == "ERROR":
                            expired = obj.get("code") == 410
                            return
                        rv = rv_of(obj)
                        if event.get("type") != "BOOKMARK" and rv <= until:
                            got.append((rv, str(event.get("type")), obj_key(obj)))
                        if rv >= until:
                            return
            except StatusError as err:
                if err.code != 410:
                    raise
                expired = True

        rlog.probes += 1
        try:
            await self.clock.wait_for(read(), PROBE_WAIT)
        except TimeoutError:
            pass
        if expired:
            rlog.expired_probes += 1
            return False
        want = [(c.rv, c.type, c.key) for c in rlog.events_between(since, until)]
        if got != want:
            missing = [w for w in want if w not in got]
            extra = [g for g in got if g not in want]
            what = []
            if missing:
                what.append(f"missing {', '.join(f'rv {r} {t} {k}' for r, t, k in missing[:5])}")
            if extra:
                what.append(f"unrecorded {', '.join(f'rv {r} {t} {k}' for r, t, k in extra[:5])}")
            if not missing and not extra:
                what.append("the same events in another order")
            self.findings.append(Finding(
                "watch resume", f"a watch on {rlog.resource} resumed from rv {since} did not replay the "
                f"{len(want)} recorded events up to rv {until}: {'; '.join(what)}", self.now(),
                [f"recorded: {c}" for c in rlog.events_between(since, until)][:10]
                + [f"replayed: rv {r} {t} {k}" for r, t, k in got][:10]))
        return True
