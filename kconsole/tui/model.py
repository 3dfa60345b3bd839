"""What the console knows about the cluster: informer caches with change marks, plus sampled figures.

Panels never talk to the API server per event. Informer handlers only bump a version and note a
change mark (added / modified / deleted, with the wall time it happened), and tell the model's
``on_change`` listener (the app arms one short timer on the first change of a batch); the app's
refresh then asks each panel to redraw when the versions it depends on moved. Figures that are not objects
(etcd member status, request and write rates) are sampled on a timer into short histories for the
header's sparklines. Wall time is used only for how long a mark stays visible and for rates.

What the panels read (the caches, the counts kept beside them, etcd's member state, the active
faults) sits in a :class:`View`: the live one over the informers, or one over the cluster at a past
revision (:mod:`kconsole.tui.rewind`) that the model swaps in while the live one keeps running.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from kconsole.client import Client, InformerFactory, SharedInformer, StatusError, object_key
from kconsole.objects.printers import Printer, parse_time, printer_for

log = logging.getLogger(__name__)

Obj = dict[str, Any]

#: Wall seconds a row keeps its added/modified/deleted mark (and a deleted row stays listed).
MARK_SECONDS = 2.0
#: Samples kept for each sparkline.
HISTORY = 60
#: The resources every panel set needs; the Resources panel adds the kind on screen.
BASE_RESOURCES = ("nodes", "pods", "events", "leases", "namespaces", "schedulingdecisions")


class Watched:
    """One informer the console renders from, with a version and change marks."""

    def __init__(self, informer: SharedInformer, wall: Callable[[], float] = time.monotonic,
                 on_change: Callable[[], None] | None = None) -> None:
        self.informer = informer
        self.wall = wall
        self.on_change = on_change
        self.version = 0
        self.marks: dict[str, tuple[str, float]] = {}
        self.gone: dict[str, Obj] = {}
        #: Wall time of the last change, for the change-to-row benchmark.
        self.changed_at = 0.0
        self._subscribers: list[set[str]] = []
        informer.add_event_handler(self._on_add, self._on_update, self._on_delete)

    def subscribe(self) -> set[str]:
        """A set that collects the keys whose rows changed (object or mark) until its owner clears it:
        lets a 10,000-row table update only what moved."""
        keys: set[str] = set()
        self._subscribers.append(keys)
        return keys

    def unsubscribe(self, keys: set[str]) -> None:
        self._subscribers = [s for s in self._subscribers if s is not keys]

    def _bump(self, key: str, mark: str | None) -> None:
        self.version += 1
        now = self.wall()
        self.changed_at = now
        if mark is not None and self.informer.has_synced:
            self.marks.pop(key, None)  # re-inserted last: the marks stay in the order they were set
            self.marks[key] = (mark, now)
        for keys in self._subscribers:
            keys.add(key)
        if self.on_change is not None:
            self.on_change()

    def _on_add(self, obj: Obj) -> None:
        key = object_key(obj)
        self.gone.pop(key, None)
        self._bump(key, "added")

    def _on_update(self, old: Obj, new: Obj) -> None:
        if old is new:
            return  # resync: nothing changed
        key = object_key(new)
        prior = self.marks.get(key)
        self._bump(key, "added" if prior is not None and prior[0] == "added" else "modified")

    def _on_delete(self, obj: Obj) -> None:
        key = object_key(obj)
        self.gone[key] = obj
        self._bump(key, "deleted")

    def expire(self) -> None:
        """Drop marks older than :data:`MARK_SECONDS`; a change of marks is a change of rows. The
        marks are in the order they were set, so only the expired ones at the front are looked at."""
        if not self.marks:
            return
        cutoff = self.wall() - MARK_SECONDS
        stale = []
        for key, (_, at) in self.marks.items():
            if at >= cutoff:
                break
            stale.append(key)
        if stale:
            for key in stale:
                del self.marks[key]
                self.gone.pop(key, None)
            for keys in self._subscribers:
                keys.update(stale)
            self.version += 1

    def mark(self, key: str) -> str | None:
        found = self.marks.get(key)
        return found[0] if found is not None else None

    def objects(self) -> list[Obj]:
        """Cached objects plus the recently deleted ones (shown with their deleted mark)."""
        items = self.informer.list()
        if self.gone:
            items.extend(self.gone.values())
        return items

    def __len__(self) -> int:
        return len(self.informer)


class View:
    """What the panels render from: watched caches, the counts kept beside them by the caches'
    handlers (so the header and the Scheduling panel never walk 10,000 pods per refresh), etcd's
    member state, and for a past view its time, its active faults and how to load another kind."""

    def __init__(self) -> None:
        self.watched: dict[str, Watched] = {}
        #: Pods by phase and the unbound Pending pods.
        self.phase_counts: dict[str, int] = {}
        self.pending: set[str] = set()
        self.pending_version = 0
        #: Nodes whose Ready condition is True.
        self.ready_nodes = 0
        self.etcd_members: list[Any] = []
        self.quorum: Any = None
        self.kv_status: Any = None
        self.etcd_error = ""
        self.etcd_version = 0
        #: A past view: the simulated time of its revision (None: live, the clock's now).
        self.time: float | None = None
        #: A past view: the faults active at its revision (None: live, the catalog's).
        self.faults: Callable[[], list[Any]] | None = None
        #: A past view: a cache of another kind at its revision (None: live, the model's informers).
        self.load: Callable[[str], Watched] | None = None

    def track(self, key: str, informer: Any, on_change: Callable[[], None] | None = None) -> Watched:
        """Watch ``informer`` as ``key`` (a group-resource), keeping the pod and node counts."""
        found = Watched(informer, on_change=on_change)
        self.watched[key] = found
        if key == "pods":
            informer.add_event_handler(self._pod_added, self._pod_updated, self._pod_deleted)
        elif key == "nodes":
            informer.add_event_handler(self._node_added, self._node_updated, self._node_deleted)
        return found

    def version_of(self, key: str) -> int:
        found = self.watched.get(key)
        return found.version if found is not None else -1

    def _node_added(self, node: Obj) -> None:
        self.ready_nodes += _ready(node)

    def _node_updated(self, old: Obj, new: Obj) -> None:
        if old is not new:
            self.ready_nodes += _ready(new) - _ready(old)

    def _node_deleted(self, node: Obj) -> None:
        self.ready_nodes -= _ready(node)

    def _count(self, pod: Obj, delta: int) -> None:
        meta = pod.get("metadata") or {}
        status = pod.get("status") or {}
        phase = "Terminating" if meta.get("deletionTimestamp") else status.get("phase") or "Pending"
        self.phase_counts[phase] = self.phase_counts.get(phase, 0) + delta
        key = object_key(pod)
        pending = phase == "Pending" and not (pod.get("spec") or {}).get("nodeName")
        if delta > 0 and pending:
            self.pending.add(key)
            self.pending_version += 1
        elif delta < 0 and key in self.pending:
            self.pending.discard(key)
            self.pending_version += 1

    def _pod_added(self, pod: Obj) -> None:
        self._count(pod, 1)

    def _pod_updated(self, old: Obj, new: Obj) -> None:
        if old is not new:
            self._count(old, -1)
            self._count(new, 1)

    def _pod_deleted(self, pod: Obj) -> None:
        self._count(pod, -1)


class ClusterModel:
    """Informer caches and sampled figures for one cluster handle."""

    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster
        self.clock = cluster.clock
        self.client: Client = None  # type: ignore[assignment]  # set by start(): the API exists only then
        self.factory: InformerFactory = None  # type: ignore[assignment]
        self.live = View()
        #: The view the panels render from: :attr:`live`, or the cluster at a past revision.
        self.view = self.live
        self.started = False
        self.requests_per_s: deque[float] = deque([0.0] * HISTORY, maxlen=HISTORY)
        self.writes_per_s: deque[float] = deque([0.0] * HISTORY, maxlen=HISTORY)
        self._last_seq: int | None = None
        self._last_write_seq: int | None = None
        self._last_revision: int | None = None
        self._sampling = False
        #: Told the member state and revision of each etcd sample (the rewind's recorder).
        self.on_etcd_sample: Callable[[], None] | None = None
        #: Called when :attr:`view` changes (live <-> past): panels holding a cache pick the new one.
        self.on_view_changed: Callable[[], None] | None = None
        #: Called (synchronously, on the loop) after any watched object changed.
        self.on_change: Callable[[], None] | None = None

    # ------------------------------------------------------------------ the view shown

    @property
    def watched(self) -> dict[str, Watched]:
        return self.view.watched

    @property
    def phase_counts(self) -> dict[str, int]:
        return self.view.phase_counts

    @property
    def pending(self) -> set[str]:
        return self.view.pending

    @property
    def pending_version(self) -> int:
        return self.view.pending_version

    @property
    def ready_nodes(self) -> int:
        return self.view.ready_nodes

    @property
    def etcd_members(self) -> list[Any]:
        return self.view.etcd_members

    @property
    def quorum(self) -> Any:
        return self.view.quorum

    @property
    def kv_status(self) -> Any:
        return self.view.kv_status

    @property
    def etcd_error(self) -> str:
        return self.view.etcd_error

    @property
    def etcd_version(self) -> int:
        return self.view.etcd_version

    @property
    def past(self) -> bool:
        return self.view is not self.live

    def now(self) -> float:
        """Simulated now, or the time of the past revision shown."""
        return self.view.time if self.view.time is not None else self.clock.now()

    def active_faults(self) -> list[Any]:
        """The faults active now (the catalog's), or at the past revision shown (from fault Events)."""
        if self.view.faults is not None:
            return self.view.faults()
        from kconsole.tui import faultview

        return faultview.active_faults(self.cluster)

    def faults_version(self) -> Any:
        if self.view.faults is not None:
            return ("past", self.view.version_of("events"))
        from kconsole.tui import faultview

        return faultview.version(self.cluster)

    # ------------------------------------------------------------------ informers

    def group_resource(self, resource: str) -> str:
        try:
            return self.client.resource_info(resource).group_resource
        except StatusError:
            return resource

    def printer(self, resource: str) -> Printer:
        """kubectl's columns for ``resource``: a custom resource's additionalPrinterColumns, else the
        built-in printer (NAME and AGE for a kind without one)."""
        try:
            info = self.client.resource_info(resource)
        except StatusError:
            return printer_for(resource)
        return getattr(info.custom, "printer", None) or printer_for(info.group_resource)

    def custom_kinds(self) -> list[str]:
        """The custom resources served now, by the name a user would type (first short name, else plural)."""
        if self.client is None:
            return []
        return sorted((info.short_names or (info.resource,))[0] for info in self.client.resources()
                      if info.custom is not None and "list" in info.verbs)

    def watch(self, resource: str) -> Watched:
        """The watched cache of ``resource`` (any name kubectl accepts), started on first use."""
        key = self.group_resource(resource)
        found = self.live.watched.get(key)
        if found is None:
            informer = self.factory.informer(key)
            found = self.live.track(key, informer, on_change=self._changed)
            if self.started:
                asyncio.get_running_loop().create_task(informer.start())
        if self.view.load is not None:
            past = self.view.watched.get(key)
            return past if past is not None else self.view.load(key)
        return found

    async def start(self, client: Client) -> None:
        self.client = client
        self.factory = InformerFactory(client)
        for resource in BASE_RESOURCES:
            try:
                self.watch(resource)
            except StatusError as err:
                log.warning("console cannot watch %s: %s", resource, err)
        self.started = True
        await self.factory.start_all()

    async def stop(self) -> None:
        self.started = False
        if self.factory is not None:
            await self.factory.stop_all()

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    def expire_marks(self) -> None:
        for watched in self.view.watched.values():
            watched.expire()

    # ------------------------------------------------------------------ sampled figures

    def sample_rates(self, seconds: float) -> None:
        """Requests/s from the API request log, writes/s from successful mutating requests."""
        if seconds <= 0 or self.client is None:
            return
        recent = self.client.entry.audit_recent(2000)
        if not recent:
            self.requests_per_s.append(0.0)
            self.writes_per_s.append(0.0)
            return
        last_seq = recent[-1].seq
        if self._last_seq is None:
            self._last_seq = last_seq
            return
        new = [r for r in recent if r.seq > self._last_seq]
        requests = last_seq - self._last_seq
        writes = sum(1 for r in new if r.verb in _WRITE_VERBS and r.code < 400
                     and not r.resource.startswith(_READS_BY_CREATE))
        self._last_seq = last_seq
        self.requests_per_s.append(requests / seconds)
        self.writes_per_s.append(writes / seconds)

    async def sample_etcd(self) -> None:
        """Member status, quorum and store status through the cluster's etcd handle."""
        etcd = getattr(self.cluster, "etcd", None)
        if etcd is None or self._sampling:
            return
        self._sampling = True
        live = self.live
        try:
            live.etcd_members = list(await etcd.member_status())
            live.quorum = etcd.quorum()
            try:
                live.kv_status = await asyncio.wait_for(etcd.status(), 0.5)
                live.etcd_error = ""
            except Exception as err:  # noqa: BLE001 - no quorum: status fails, the panel says why
                live.etcd_error = str(err) or type(err).__name__
            live.etcd_version += 1
        except Exception as err:  # noqa: BLE001 - a stopped store must not stop the console
            live.etcd_error = str(err) or type(err).__name__
            live.etcd_version += 1
        finally:
            self._sampling = False
        if self.on_etcd_sample is not None:
            self.on_etcd_sample()

    # ------------------------------------------------------------------ derived views

    def node_counts(self) -> tuple[int, int]:
        """(Ready, total) nodes."""
        nodes = self.watched.get("nodes")
        if nodes is None:
            return 0, 0
        return self.ready_nodes, len(nodes.informer)

    def pod_phases(self) -> dict[str, int]:
        """Pods by phase (Terminating apart)."""
        return {p: n for p, n in self.phase_counts.items() if n}

    def lease(self, namespace: str, name: str) -> Obj | None:
        leases = self.watched.get("leases.coordination.k8s.io")
        return leases.informer.get_by_name(namespace, name) if leases is not None else None

    def leader_of(self, lease_name: str) -> str:
        lease = self.lease("kube-system", lease_name)
        if lease is None:
            return "-"
        holder = (lease.get("spec") or {}).get("holderIdentity") or "-"
        return holder.split("_", 1)[0]

    def events_for(self, obj: Obj) -> list[Obj]:
        """Events about one object, newest first (by time, never by the rendered age)."""
        events = self.watched.get("events")
        if events is None:
            return []
        meta = obj.get("metadata") or {}
        uid, name, ns = meta.get("uid"), meta.get("name"), meta.get("namespace")
        found = []
        for ev in events.informer.list():
            inv = ev.get("involvedObject") or {}
            if (uid and inv.get("uid") == uid) or (inv.get("name") == name and inv.get("namespace") == ns
                                                   and inv.get("kind") == obj.get("kind")):
                found.append(ev)
        found.sort(key=newest_first)
        return found


_WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})
#: Reads asked by creating an object that is never stored (history queries, access reviews).
_READS_BY_CREATE = ("historyqueries", "subjectaccessreviews", "selfsubjectaccessreviews", "tokenreviews")


def _ready(node: Obj) -> int:
    """1 when the node's Ready condition is True."""
    for cond in (node.get("status") or {}).get("conditions") or ():
        if cond.get("type") == "Ready":
            return 1 if cond.get("status") == "True" else 0
    return 0


def event_time(ev: Obj) -> float:
    """When an event was last seen, in epoch seconds (series, lastTimestamp, eventTime, first)."""
    series = ev.get("series") or {}
    for value in (series.get("lastObservedTime"), ev.get("lastTimestamp"), ev.get("eventTime"),
                  ev.get("firstTimestamp"), (ev.get("metadata") or {}).get("creationTimestamp")):
        ts = parse_time(value)
        if ts is not None:
            return ts
    return 0.0


def newest_first(ev: Obj) -> tuple[float, str]:
    """Sort key: latest time first; ties by name, so equal timestamps always list the same way."""
    meta = ev.get("metadata") or {}
    return (-event_time(ev), f"{meta.get('namespace', '')}/{meta.get('name', '')}")
