"""The failure catalog: named, reversible faults injected through the cluster's handles.

Each :class:`FaultType` has a target kind (``pod``, ``node``, ``etcd-member``,
``controller-manager``, ``scheduler``, ``apiserver``), a one-line description, the reaction to
expect (what upstream Kubernetes does), ``apply`` and — unless it is one-shot, like deleting a
pod — a way to heal. Faults act on components through their handles (kubelets, etcd members,
replicas, the API server's ``fault_injector`` hook); cordon, uncordon and drain go through the API
as kubectl does. Every applied and healed fault records a core/v1 Event with source
``kconsole-faults`` through the API, so cause and effect share the event stream; while the API
cannot write (etcd without quorum) the Event is retried in the background.

Use::

    faults = FaultCatalog(cluster)
    fault = await faults.apply("etcd-stop", "leader")     # -> ActiveFault(id="f1", ...)
    faults.active                                          # what is applied, by id
    await faults.heal("f1"); await faults.heal_all()

Targets: pods as ``namespace/name`` (or ``name`` in ``default``); nodes by name; etcd members by
name (``etcd-0``) or ``leader``; controller-manager and scheduler ``leader`` (a replica's identity
or node name also works: the fault always hits whichever replica holds the Lease); the API server
as ``apiserver``.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from kconsole.api.types import Request, StatusError, status_body
from kconsole.client import Client, is_not_found
from kconsole.client.events import event_name
from kconsole.cluster import CONSOLE
from kconsole.objects.pod import is_mirror_pod, pod_requests

log = logging.getLogger(__name__)

SOURCE = "kconsole-faults"
TARGET_KINDS = ("pod", "node", "etcd-member", "controller-manager", "scheduler", "apiserver")
#: Event writes refused by a server in trouble are retried on this back-off (simulated seconds) ...
EVENT_RETRY = (1.0, 2.0, 5.0, 10.0, 30.0)
#: ... for up to this long.
EVENT_GIVE_UP = 900.0
#: kubectl drain retries an eviction refused by a PodDisruptionBudget every 5 s.
DRAIN_RETRY = 5.0

Obj = dict[str, Any]
Heal = Callable[[], Awaitable[None]]


class FaultError(Exception):
    """A fault that cannot be applied or healed; the message says why in the user's terms."""


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    default: str
    help: str


@dataclass(slots=True)
class Applied:
    """What an apply function hands back: the resolved target, how to heal, what to blame."""

    target: str
    involved: Obj  # ObjectReference for the Event
    heal: Heal | None = None  # None: one-shot, nothing to heal
    detail: str = ""
    task: asyncio.Task[None] | None = None  # background work (drain's evictions) cancelled on heal


@dataclass(frozen=True, slots=True)
class FaultType:
    name: str
    target_kind: str
    description: str
    expected: str
    apply: Callable[[FaultCatalog, str, dict[str, str]], Awaitable[Applied]]
    params: tuple[Param, ...] = ()
    one_shot: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "target_kind": self.target_kind, "description": self.description,
                "expected": self.expected, "one_shot": self.one_shot,
                "params": [{"name": p.name, "default": p.default, "help": p.help} for p in self.params]}


@dataclass(slots=True)
class ActiveFault:
    id: str
    type: str
    target_kind: str
    target: str
    params: dict[str, str]
    applied_at: float  # simulated
    detail: str = ""
    healed_at: float | None = None
    _applied: Applied | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "type": self.type, "target_kind": self.target_kind, "target": self.target,
                "params": dict(self.params), "applied_at": self.applied_at, "detail": self.detail,
                "healed_at": self.healed_at}


# --------------------------------------------------------------------------- the catalog


class FaultCatalog:
    """Applies and heals faults on one running :class:`~kconsole.cluster.Cluster`."""

    def __init__(self, cluster: Any, *, rng: random.Random | None = None) -> None:
        self.cluster = cluster
        self.clock = cluster.clock
        self.rng = rng or random.Random(getattr(getattr(cluster, "config", None), "seed", 1) * 7907 + 13)
        self.active: dict[str, ActiveFault] = {}
        self.history: list[ActiveFault] = []  # every fault applied, healed or not, oldest first
        self._ids = itertools.count(1)
        self._listeners: list[Callable[[], None]] = []
        self._events: asyncio.Queue[Obj] = asyncio.Queue()
        self._event_writer: asyncio.Task[None] | None = None
        self._isolated: dict[str, int] = {}  # fault id -> etcd member id cut off by it
        self._api_faults: dict[str, tuple[str, dict[str, str]]] = {}
        self.events_written = 0
        self._pending_events = 0
        self._current_id = ""  # the id the fault being applied will get (apply functions key state by it)
        self._lock = asyncio.Lock()

    # ------------------------------------------------------------------ reading

    @staticmethod
    def types() -> list[FaultType]:
        return list(CATALOG.values())

    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]:
        """``listener()`` after every apply and heal; returns the unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    async def targets(self, kind: str) -> list[str]:
        """Names a fault of ``kind`` can take as its target right now (for pickers and help)."""
        c = self.cluster
        if kind == "pod":
            pods = await self.client.list_all("pods")
            return sorted(f"{p['metadata'].get('namespace', 'default')}/{p['metadata']['name']}" for p in pods)
        if kind == "node":
            workers = getattr(c, "workers", None)
            return sorted([*c.kubelets, *(n for w in (workers.workers if workers else ()) for n in w.nodes)])
        if kind == "etcd-member":
            return ["leader", *(m.name for m in self._etcd().members)]
        if kind in ("controller-manager", "scheduler", "apiserver"):
            return ["leader"] if kind != "apiserver" else ["apiserver"]
        raise FaultError(f"unknown target kind {kind!r}; known: {', '.join(TARGET_KINDS)}")

    @property
    def client(self) -> Client:
        return self.cluster.api_client(CONSOLE)

    # ------------------------------------------------------------------ apply / heal

    async def apply(self, type_name: str, target: str, params: dict[str, str] | None = None) -> ActiveFault:
        ftype = next((t for t in self.types() if t.name == type_name), None)
        if ftype is None:
            raise FaultError(f"unknown fault type {type_name!r}; `kconsole fault list` shows the catalog")
        given = dict(params or {})
        known = {p.name for p in ftype.params}
        unknown = sorted(set(given) - known)
        if unknown:
            hint = f"; it takes {', '.join(sorted(known))}" if known else "; it takes none"
            raise FaultError(f"{type_name}: unknown parameter(s) {', '.join(unknown)}{hint}")
        full = {p.name: given.get(p.name, p.default) for p in ftype.params}
        async with self._lock:
            same = next((f for f in self.active.values() if f.type == ftype.name and f.target == target), None)
            if same is not None:
                # A second copy would be undone by healing either: the first heal restarts a kubelet
                # the other still claims is stopped.
                raise FaultError(f"{ftype.name} is already active on {target} as {same.id}; heal it first "
                                 f"(kconsole fault heal {same.id})")
            fid = f"f{next(self._ids)}"
            self._current_id = fid
            applied = await ftype.apply(self, target, full)
            fault = ActiveFault(fid, ftype.name, ftype.target_kind, applied.target, full, self.clock.now(),
                                applied.detail, _applied=applied)
            self.history.append(fault)
            if applied.heal is not None:
                self.active[fid] = fault
            else:
                fault.healed_at = fault.applied_at
        what = f"{ftype.description[0].lower()}{ftype.description[1:]}".rstrip(".")
        detail = f" ({applied.detail})" if applied.detail else ""
        self._record(applied.involved, "Warning", "FaultInjected",
                     f"Fault {fid} {ftype.name} on {applied.target}{detail}: {what}. Expect: {ftype.expected}")
        self._notify()
        return fault

    async def heal(self, fault_id: str) -> ActiveFault:
        async with self._lock:
            fault = self.active.get(fault_id)
            if fault is None:
                known = ", ".join(self.active) or "none"
                raise FaultError(f"no active fault {fault_id!r} (active: {known})")
            applied = fault._applied
            assert applied is not None and applied.heal is not None
            if applied.task is not None:
                applied.task.cancel()
            await applied.heal()
            del self.active[fault_id]
            fault.healed_at = self.clock.now()
        self._record(applied.involved, "Normal", "FaultHealed", f"Fault {fault_id} {fault.type} on {fault.target} "
                                                                f"healed")
        self._notify()
        return fault

    async def heal_all(self) -> list[ActiveFault]:
        """Heal every active fault, newest first (undoing in reverse order of application)."""
        healed = []
        for fid in reversed(list(self.active)):
            if fid in self.active:
                healed.append(await self.heal(fid))
        return healed

    async def close(self) -> None:
        """Stop background work (pending Events are written first when the API answers)."""
        for fault in self.active.values():
            if fault._applied is not None and fault._applied.task is not None:
                fault._applied.task.cancel()
        writer, self._event_writer = self._event_writer, None
        if writer is not None:
            writer.cancel()
            try:
                await writer
            except asyncio.CancelledError:
                pass

    @property
    def pending_events(self) -> int:
        """Events recorded but not yet written (retries wait on the clock while the API is down)."""
        return self._pending_events

    async def flush_events(self) -> None:
        """Until every recorded Event is written (or given up); with a virtual clock, advance it meanwhile."""
        if self._event_writer is not None:
            await self._events.join()

    def _notify(self) -> None:
        for listener in list(self._listeners):
            listener()

    # ------------------------------------------------------------------ events

    def _record(self, involved: Obj, type_: str, reason: str, message: str) -> None:
        now = self.clock.now()
        stamp = self.clock.rfc3339(now)
        name = event_name(involved["name"], now)  # never the name a component's recorder just took
        event = {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": name, "namespace": involved.get("namespace") or "default"},
            "involvedObject": involved, "reason": reason, "message": message[:1024], "type": type_,
            "source": {"component": SOURCE}, "count": 1, "firstTimestamp": stamp, "lastTimestamp": stamp,
            "reportingComponent": SOURCE, "reportingInstance": "",
        }
        self._events.put_nowait(event)
        self._pending_events += 1
        if self._event_writer is None or self._event_writer.done():
            self._event_writer = asyncio.get_running_loop().create_task(self._write_events(), name="fault-events")

    async def _write_events(self) -> None:
        while True:
            event = await self._events.get()
            try:
                await self._write_event(event)
            finally:
                self._pending_events -= 1
                self._events.task_done()

    async def _write_event(self, event: Obj) -> None:
        """Write one Event; a server in trouble (5xx, 429, etcd down) gets it again later."""
        started = self.clock.now()
        for attempt in itertools.count():
            try:
                await self.client.create(event)
                self.events_written += 1
                return
            except StatusError as err:
                if err.code == 409 and attempt:
                    self.events_written += 1  # an earlier try timed out but was committed (etcd's
                    return                    # "request timed out" leaves the outcome open)
                if err.code < 500 and err.code != 429:
                    log.warning("fault event %s refused: %s", event["reason"], err.message)
                    return
                why = err.message
            except asyncio.CancelledError:
                raise
            except Exception as err:  # noqa: BLE001 - keep the writer alive whatever one write does
                why = str(err)
            if self.clock.now() - started > EVENT_GIVE_UP:
                log.error("giving up on fault event %s: %s", event["reason"], why)
                return
            await self.clock.sleep(EVENT_RETRY[min(attempt, len(EVENT_RETRY) - 1)])

    # ------------------------------------------------------------------ handles

    def _etcd(self) -> Any:
        etcd = self.cluster.etcd
        if etcd is None or not getattr(etcd, "members", None):
            raise FaultError("this cluster has no etcd members to fault")
        return etcd

    def _member(self, target: str) -> Any:
        etcd = self._etcd()
        if target in ("", "leader"):
            leader = etcd.leader()
            if leader is None:
                raise FaultError("etcd has no leader right now (an election is under way or quorum is lost)")
            return leader
        try:
            return etcd.member(target)
        except KeyError:
            names = ", ".join(m.name for m in etcd.members)
            raise FaultError(f"no etcd member {target!r} (members: {names}, or leader)") from None

    def _member_ref(self, member: Any) -> Obj:
        etcd = self._etcd()
        index = list(etcd.members).index(member)
        nodes = self.cluster.replica_names()
        node = nodes[index] if index < len(nodes) else member.name
        return {"apiVersion": "v1", "kind": "Pod", "namespace": "kube-system", "name": f"etcd-{node}"}

    def _kubelet(self, node: str) -> Any:
        kubelet = self.cluster.kubelets.get(node)
        workers = getattr(self.cluster, "workers", None)
        if kubelet is None and workers is not None and any(node in w.nodes for w in workers.workers):
            raise FaultError(f"node {node}'s kubelet runs in a worker process (--processes): only process-kill "
                             "and the API's faults (cordon, drain, pod faults) reach it")
        if kubelet is None:
            known = ", ".join(sorted(self.cluster.kubelets)) or "none"
            raise FaultError(f"no simulated kubelet on node {node!r} (nodes: {known})")
        return kubelet

    async def _pod(self, target: str) -> Obj:
        ns, _, name = target.rpartition("/")
        try:
            return await self.client.get("pods", name, ns or "default")
        except StatusError as err:
            if is_not_found(err):
                raise FaultError(f"pod {ns or 'default'}/{name} not found") from None
            raise FaultError(f"cannot read pod {target}: {err.message}") from None

    async def _pod_kubelet(self, target: str) -> tuple[Obj, Any]:
        pod = await self._pod(target)
        node = (pod.get("spec") or {}).get("nodeName")
        if not node:
            raise FaultError(f"pod {_pod_name(pod)} is not running on a node yet (it is not scheduled)")
        return pod, self._kubelet(node)

    def _replica_leader(self, kind: str) -> Any:
        replicas = self.cluster.controller_managers if kind == "controller-manager" else self.cluster.schedulers
        if not replicas:
            raise FaultError(f"this cluster runs no {kind} replicas")
        leaders = [r for r in replicas if r.running and r.is_leader]
        if not leaders:
            raise FaultError(f"no {kind} replica holds the Lease right now (an election is under way); "
                             "try again in a few seconds")
        return leaders[0]

    def _injector(self) -> None:
        api = self.cluster.api
        if api is None or not hasattr(api, "fault_injector"):
            raise FaultError("the API server has no fault-injection hook")
        api.fault_injector = self._inject if self._api_faults else None

    async def _inject(self, request: Request) -> None:
        """The API server's hook: added latency, then maybe an injected error."""
        latency = sum(float(p["seconds"]) for kind, p in self._api_faults.values() if kind == "latency")
        if latency > 0:
            await self.clock.sleep(latency)
        if any(kind == "down" for kind, _ in self._api_faults.values()):
            raise StatusError(status_body(503, "ServiceUnavailable", "kconsole-faults: every kube-apiserver is down "
                                          f"(no answer for {request.verb} {request.resource})"))
        for kind, p in list(self._api_faults.values()):
            if kind == "errors" and self.rng.random() < float(p["rate"]):
                code = int(p["code"])
                reason = _ERROR_REASONS.get(code, "InternalError")
                raise StatusError(status_body(code, reason, f"kconsole-faults: injected {code} {reason} "
                                                            f"for {request.verb} {request.resource}",
                                              retry_after=1 if code in (429, 503) else None))


_ERROR_REASONS = {500: "InternalError", 503: "ServiceUnavailable", 504: "Timeout", 429: "TooManyRequests"}


def _pod_name(pod: Obj) -> str:
    meta = pod["metadata"]
    return f"{meta.get('namespace', 'default')}/{meta['name']}"


def _pod_ref(pod: Obj) -> Obj:
    meta = pod["metadata"]
    return {"apiVersion": "v1", "kind": "Pod", "namespace": meta.get("namespace", "default"), "name": meta["name"],
            "uid": meta.get("uid", ""), "resourceVersion": meta.get("resourceVersion", "")}


def _node_ref(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Node", "name": name, "uid": name}


def _lease_ref(name: str) -> Obj:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "namespace": "kube-system", "name": name}


APISERVER_REF = {"apiVersion": "v1", "kind": "Service", "namespace": "default", "name": "kubernetes"}


async def _call(handle: Any, method: str, *args: Any) -> Any:
    """Call a component's fault handle, sync or async; a missing handle is a FaultError."""
    fn = getattr(handle, method, None)
    if fn is None:
        raise FaultError(f"{type(handle).__name__} has no {method}() handle in this build")
    try:
        result = fn(*args)
        if inspect.isawaitable(result):
            result = await result
    except (LookupError, ValueError) as err:  # the component's own words for a bad target
        raise FaultError(str(err).strip("'\"")) from None
    return result


def _float(params: dict[str, str], name: str, low: float, high: float) -> float:
    try:
        value = float(params[name])
    except ValueError:
        raise FaultError(f"{name} must be a number, got {params[name]!r}") from None
    if not low <= value <= high:
        raise FaultError(f"{name} must be within {low:g}..{high:g}, got {value:g}")
    return value


# --------------------------------------------------------------------------- pod faults


async def _pod_kill(cat: FaultCatalog, target: str, params: dict[str, str]) -> Applied:
    pod = await cat._pod(target)
    meta = pod["metadata"]
    try:
        await cat.client.delete("pods", meta["name"], meta.get("namespace"), grace_period_seconds=0,
                                preconditions={"uid": meta["uid"]})
    except StatusError as err:
        raise FaultError(f"cannot delete pod {_pod_name(pod)}: {err.message}") from None
    return Applied(_pod_name(pod), _pod_ref(pod), detail="deleted with grace period 0")


async def _container_kill(cat: FaultCatalog, target: str, params: dict[str, str]) -> Applied:
    pod, kubelet = await cat._pod_kubelet(target)
    meta = pod["metadata"]
    container = params.get("container") or None
    await _call(kubelet, "kill_container", meta.get("namespace", "default"), meta["name"], container)
    return Applied(_pod_name(pod), _pod_ref(pod), detail=f"container {container}" if container else "")


def _pod_toggle(method: str) -> Callable[[FaultCatalog, str, dict[str, str]], Awaitable[Applied]]:
    async def apply(cat: FaultCatalog, target: str, params: dict[str, str]) -> Applied:
        pod, kubelet = await cat._pod_kubelet(target)
        ns, name = pod["metadata"].get("namespace", "default"), pod["metadata"]["name"]
        await _call(kubelet, method, ns, name, True)

        async def heal() -> None:
            await _call(kubelet, method, ns, name, False)

        return Applied(_pod_name(pod), _pod_ref(pod), heal)

    return apply


async def _cpu_load(cat: FaultCatalog, target: str, params: dict[str, str]) -> Applied:
    pod, kubelet = await cat._pod_kubelet(target)
    ns, name = pod["metadata"].get("namespace", "default"), pod["metadata"]["name"]
    load = _float(params, "load", 0.0, 100.0)
    await _call(kubelet, "set_load", ns, name, load)

    async def heal() -> None:
        await _call(kubelet, "set_load", ns, name, None)

    base = "its request" if pod_requests(pod).get("cpu") else "its idle usage (no CPU request)"
    return Applied(_pod_name(pod), _pod_ref(pod), heal, detail=f"cpu usage {load:g}x {base}")


# --------------------------------------------------------------------------- node faults


def _kubelet_toggle(apply_method: str, heal_method: str) -> Callable[[FaultCatalog, str, dict[str, str]],
                                                                      Awaitable[Applied]]:
    """A node fault that one kubelet method applies and its counterpart heals (stop/start, partition/heal)."""
    async def apply(cat: FaultCatalog, target: str, params: dict[str, str]) -> Applied:
        kubelet = cat._kubelet(target)
        await _call(kubelet, apply_method)

        async def heal() -> None:
            await _call(kubelet, heal_method)

        return Applied(target, _node_ref(target), heal)

    return apply


def _pressure(kind: str) -> Callable[[FaultCatalog, str, dict[str, str]], Awaitable[Applied]]:
    async def apply(cat: FaultCatalog, target: str, params: dict[str, str]) -> Applied:
        kubelet = cat._kubelet(target)
        await _call(kubelet, "set_pressure", kind, True)

        async def heal() -> None:
            await _call(kubelet, "set_pressure", kind, False)

        return Applied(target, _node_ref(target), heal)

    return apply


async def _slow_pulls(cat: FaultCatalog, target: str, params: dict[str, str]) -> Applied:
    kubelet = cat._kubelet(target)
    factor = _float(params, "factor", 0.01, 1000.0)
    await _call(kubelet, "slow_image_pulls", factor)

    async def heal() -> None:
        await _call(kubelet, "slow_image_pulls", 1.0)

    return Applied(target, _node_ref(target), heal, detail=f"pulls take {factor:g}x as long")


async def _set_unschedulable(cat: FaultCatalog, node: str, value: bool) -> bool:
    """Patch spec.unschedulable as kubectl cordon/uncordon do; returns the previous value."""
    try:
        current = await cat.client.get("nodes", node)
        await cat.client.patch("nodes", node, {"spec": {"unschedulable": value or None}}, patch_type="strategic")
    except StatusError as err:
        if is_not_found(err):
            raise FaultError(f"node {node!r} not found") from None
        raise FaultError(f"cannot {'cordon' if value else 'uncordon'} node {node}: {err.message}") from None
    return bool((current.get("spec") or {}).get("unschedulable"))


async def _cordon(cat: FaultCatalog, target: str, params: dict[str, str]) -> Applied:
    was = await _set_unschedulable(cat, target, True)

    async def heal() -> None:
        await _set_unschedulable(cat, target, was)

    return Applied(target, _node_ref(target), heal, detail="was already cordoned" if was else "")


async def _uncordon(cat: FaultCatalog, target: str, params: dict[str, str]) -> Applied:
    was = await _set_unschedulable(cat, target, False)
    return Applied(target, _node_ref(target), detail="" if was else "was not cordoned")


def _drainable(pod: Obj) -> bool:
    """What ``kubectl drain --ignore-daemonsets`` evicts: not DaemonSet pods, mirror pods or finished pods."""
    meta = pod["metadata"]
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed") or meta.get("deletionTimestamp"):
        return False
    if is_mirror_pod(pod):
        return False
    return not any(o.get("kind") == "DaemonSet" and o.get("controller") for o in meta.get("ownerReferences") or [])


async def _drain(cat: FaultCatalog, target: str, params: dict[str, str]) -> Applied:
    was = await _set_unschedulable(cat, target, True)
    pods = [p for p in await cat.client.list_all("pods", field_selector=f"spec.nodeName={target}") if _drainable(p)]
    fault_id = cat._current_id
    left = await _evict(cat, pods)
    detail = f"evicted {len(pods)} pod(s)" if pods else "no pods to evict"
    task = None
    if left:
        detail = (f"evicted {len(pods) - len(left)} of {len(pods)} pod(s); {len(left)} refused by a "
                  f"PodDisruptionBudget, retrying every {DRAIN_RETRY:g} s")
        task = asyncio.get_running_loop().create_task(_keep_evicting(cat, fault_id, left), name=f"drain:{target}")

    async def heal() -> None:
        await _set_unschedulable(cat, target, was)

    return Applied(target, _node_ref(target), heal, detail=detail, task=task)


async def _evict(cat: FaultCatalog, pods: list[Obj]) -> list[Obj]:
    """Post an Eviction for each pod; returns those a disruption budget refused (429)."""
    refused = []
    for pod in pods:
        meta = pod["metadata"]
        body = {"apiVersion": "policy/v1", "kind": "Eviction",
                "metadata": {"name": meta["name"], "namespace": meta.get("namespace", "default")}}
        try:
            await cat.client.create_subresource("pods", meta["name"], meta.get("namespace"), "eviction", body)
        except StatusError as err:
            if err.code == 429:
                refused.append(pod)
            elif not is_not_found(err):
                log.warning("drain: evicting %s failed: %s", _pod_name(pod), err.message)
    return refused


async def _keep_evicting(cat: FaultCatalog, fault_id: str, pods: list[Obj]) -> None:
    """kubectl drain's loop: retry refused evictions until they pass or the drain is healed."""
    while pods:
        await cat.clock.sleep(DRAIN_RETRY)
        fault = cat.active.get(fault_id)
        if fault is None:
            return
        pods = await _evict(cat, pods)
        fault.detail = f"{len(pods)} pod(s) still refused by a PodDisruptionBudget" if pods else "all pods evicted"
        cat._notify()


async def _process_kill(cat: FaultCatalog, target: str, params: dict[str, str]) -> Applied:
    workers = getattr(cat.cluster, "workers", None)
    if workers is None:
        raise FaultError("this cluster runs its kubelets in its own process: start it with --processes N")
    try:
        worker = workers.worker_of(target)
    except KeyError as err:
        raise FaultError(str(err.args[0])) from None
    if not worker.running:
        raise FaultError(f"{worker.name} is not running")
    pid = worker.process.pid
    await workers.kill(worker)

    async def heal() -> None:
        await workers.start_worker(worker)

    return Applied(worker.name, _node_ref(worker.nodes[0]), heal,
                   detail=f"pid {pid} killed (SIGKILL); its nodes: {', '.join(worker.nodes)}")


# --------------------------------------------------------------------------- etcd faults


async def _etcd_stop(cat: FaultCatalog, target: str, params: dict[str, str]) -> Applied:
    member = cat._member(target)
    if not member.running:
        raise FaultError(f"etcd member {member.name} is already stopped")
    was_leader = member.is_leader
    await member.stop()

    async def heal() -> None:
        await member.start()

    return Applied(member.name, cat._member_ref(member), heal, detail="was the leader" if was_leader else "")


async def _etcd_start(cat: FaultCatalog, target: str, params: dict[str, str]) -> Applied:
    member = cat._member(target)
    if member.running:
        raise FaultError(f"etcd member {member.name} is already running")
    await member.start()
    for fid, fault in list(cat.active.items()):
        # Starting a member by hand ends the fault that stopped it.
        if fault.type in ("etcd-stop", "etcd-kill-leader") and fault.target == member.name:
            del cat.active[fid]
            fault.healed_at = cat.clock.now()
    return Applied(member.name, cat._member_ref(member))


async def _etcd_pause(cat: FaultCatalog, target: str, params: dict[str, str]) -> Applied:
    member = cat._member(target)
    if not member.running or member.paused:
        raise FaultError(f"etcd member {member.name} is {'paused' if member.paused else 'stopped'} already")
    member.pause()

    async def heal() -> None:
        member.resume()

    return Applied(member.name, cat._member_ref(member), heal)


async def _etcd_partition(cat: FaultCatalog, target: str, params: dict[str, str]) -> Applied:
    member = cat._member(target)
    etcd = cat._etcd()
    fault_id = cat._current_id
    if member.id in cat._isolated.values():
        raise FaultError(f"etcd member {member.name} is already cut off")
    cat._isolated[fault_id] = member.id
    etcd.network.isolate(member.id)

    async def heal() -> None:
        cat._isolated.pop(fault_id, None)
        etcd.heal()
        for other in cat._isolated.values():
            etcd.network.isolate(other)

    return Applied(member.name, cat._member_ref(member), heal)


async def _etcd_slow_disk(cat: FaultCatalog, target: str, params: dict[str, str]) -> Applied:
    member = cat._member(target)
    latency = _float(params, "seconds", 0.0, 60.0)
    before = member.disk_latency
    member.slow_disk(latency)

    async def heal() -> None:
        member.slow_disk(before)

    return Applied(member.name, cat._member_ref(member), heal, detail=f"+{latency:g} s per WAL write")


async def _etcd_kill_leader(cat: FaultCatalog, target: str, params: dict[str, str]) -> Applied:
    cat._member(target)  # a bad name is still an error
    etcd = cat._etcd()
    leader = await etcd.kill_leader()
    if leader is None:
        raise FaultError("etcd has no leader to kill right now")

    async def heal() -> None:
        await leader.start()

    return Applied(leader.name, cat._member_ref(leader), heal, detail="crashed as leader")


async def _etcd_quota(cat: FaultCatalog, target: str, params: dict[str, str]) -> Applied:
    etcd = cat._etcd()
    member = cat._member(target if target not in ("cluster", "*") else "leader")
    quota = etcd.quota_bytes
    try:
        await etcd.exhaust_quota()
    except Exception as err:  # noqa: BLE001 - the store's own error text is the useful part
        raise FaultError(f"cannot raise the NOSPACE alarm: {err}") from None

    async def heal() -> None:
        await etcd.restore_quota(quota)

    return Applied(member.name, cat._member_ref(member), heal, detail="NOSPACE alarm raised")


# --------------------------------------------------------------------------- control-plane faults


def _kill_replica_leader(kind: str, lease: str) -> Callable[[FaultCatalog, str, dict[str, str]], Awaitable[Applied]]:
    async def apply(cat: FaultCatalog, target: str, params: dict[str, str]) -> Applied:
        replica = cat._replica_leader(kind)
        await replica.stop()

        async def heal() -> None:
            await replica.start()

        return Applied(replica.identity, _lease_ref(lease), heal, detail="stopped while holding the Lease")

    return apply


def _stop_every_replica(kind: str, lease: str) -> Callable[[FaultCatalog, str, dict[str, str]], Awaitable[Applied]]:
    """The whole component down: every replica stopped, so no one can take the Lease."""
    async def apply(cat: FaultCatalog, target: str, params: dict[str, str]) -> Applied:
        replicas = cat.cluster.controller_managers if kind == "controller-manager" else cat.cluster.schedulers
        running = [r for r in replicas if r.running]
        if not running:
            raise FaultError(f"every {kind} replica is stopped already")
        for replica in running:
            await replica.stop()

        async def heal() -> None:
            for replica in running:
                if not replica.running:
                    await replica.start()

        return Applied("all", _lease_ref(lease), heal, detail=f"stopped {len(running)} of {len(replicas)} replicas")

    return apply


def _apiserver(kind: str) -> Callable[[FaultCatalog, str, dict[str, str]], Awaitable[Applied]]:
    async def apply(cat: FaultCatalog, target: str, params: dict[str, str]) -> Applied:
        if target not in ("", "apiserver", "kube-apiserver"):
            raise FaultError(f"the API server target is 'apiserver', got {target!r}")
        if kind == "latency":
            detail = f"+{_float(params, 'seconds', 0.0, 60.0):g} s per request"
        elif kind == "down":
            detail = "every request refused with 503"
        else:
            rate = _float(params, "rate", 0.0, 1.0)
            code = int(_float(params, "code", 400, 599))
            if code not in _ERROR_REASONS:
                raise FaultError(f"code must be one of {', '.join(map(str, _ERROR_REASONS))}, got {code}")
            detail = f"{rate:.0%} of requests answer {code}"
        fault_id = cat._current_id
        cat._api_faults[fault_id] = (kind, dict(params))
        cat._injector()

        async def heal() -> None:
            cat._api_faults.pop(fault_id, None)
            cat._injector()

        return Applied("apiserver", dict(APISERVER_REF), heal, detail=detail)

    return apply


# --------------------------------------------------------------------------- the table

CATALOG: dict[str, FaultType] = {f.name: f for f in [
    FaultType("pod-kill", "pod", "Delete the pod at once (grace period 0), as a crashed host would lose it.",
              "Its controller (ReplicaSet, StatefulSet, Job) creates a replacement with a new name within "
              "seconds; a bare pod is simply gone.", _pod_kill, one_shot=True),
    FaultType("container-kill", "pod", "Kill the pod's container process (SIGKILL) on its kubelet.",
              "The kubelet restarts it per restartPolicy: restartCount grows, lastState shows exit code 137; "
              "with restartPolicy Never the pod fails.", _container_kill,
              (Param("container", "", "container name (default: the first)"),), one_shot=True),
    FaultType("crash-loop", "pod", "Make the pod's container exit with an error every time it starts.",
              "Back-off restarting failed container: BackOff events with delays 10, 20, 40 ... 300 s, status "
              "CrashLoopBackOff, the pod not Ready and out of its Service's endpoints.",
              _pod_toggle("crash_loop")),
    FaultType("readiness-fail", "pod", "Make the pod's readiness probe fail.",
              "After failureThreshold probes: Unhealthy events, Ready=False, the pod leaves its Service's "
              "endpoints and its Deployment's available count drops; no restarts.",
              _pod_toggle("fail_readiness")),
    FaultType("cpu-load", "pod", "Make the pod burn CPU: usage becomes a multiple of its CPU request "
              "(of its idle usage when it requests none).",
              "The kubelet publishes the higher usage within 15 s; a HorizontalPodAutoscaler targeting it "
              "scales the workload out (SuccessfulRescale) within its sync period, and back in 5 min after heal.",
              _cpu_load, (Param("load", "2", "CPU usage as a multiple of the request (or idle usage)"),)),
    FaultType("kubelet-stop", "node", "Stop the node's kubelet: no Lease renewals, no status updates.",
              "After 50 s the node controller marks it NotReady (Ready=Unknown, NodeNotReady), taints it "
              "unreachable:NoExecute; its pods are evicted 300 s later and replaced elsewhere.", _kubelet_toggle("stop", "start")),
    FaultType("node-partition", "node", "Cut the node off from the API server; its pods keep running.",
              "Same as a stopped kubelet from the control plane's side: NotReady after 50 s, evictions after "
              "300 s; on heal the kubelet reports again and stale pods are cleaned up.", _kubelet_toggle("partition", "heal")),
    FaultType("memory-pressure", "node", "Report MemoryPressure on the node.",
              "Condition MemoryPressure=True and taint node.kubernetes.io/memory-pressure:NoSchedule: new "
              "BestEffort pods avoid the node; running pods stay.", _pressure("memory")),
    FaultType("disk-pressure", "node", "Report DiskPressure on the node.",
              "Condition DiskPressure=True and taint node.kubernetes.io/disk-pressure:NoSchedule: the scheduler "
              "stops placing pods there; running pods stay.", _pressure("disk")),
    FaultType("cordon", "node", "Mark the node unschedulable (kubectl cordon).",
              "STATUS shows SchedulingDisabled, taint node.kubernetes.io/unschedulable:NoSchedule; running pods "
              "stay, new pods go elsewhere. Heal uncordons.", _cordon),
    FaultType("uncordon", "node", "Mark the node schedulable again (kubectl uncordon).",
              "The unschedulable taint goes and pending pods may land on the node.", _uncordon, one_shot=True),
    FaultType("drain", "node", "Cordon the node and evict its pods (kubectl drain --ignore-daemonsets).",
              "Pods are evicted through the Eviction API honouring PodDisruptionBudgets (429s retried); their "
              "controllers recreate them on other nodes; DaemonSet and mirror pods stay. Heal uncordons.",
              _drain),
    FaultType("process-kill", "node", "kill -9 the kubelet worker process hosting the node (--processes).",
              "Exactly that process's nodes stop renewing their Leases: NotReady after the grace period, "
              "their pods evicted later. Heal starts the process again and the same nodes come back.",
              _process_kill),
    FaultType("slow-image-pulls", "node", "Make image pulls on the node slower.",
              "New pods there stay ContainerCreating longer: the Pulling -> Pulled gap grows, and the "
              "Pulled event reports the longer time.", _slow_pulls,
              (Param("factor", "10", "how many times longer each pull takes"),)),
    FaultType("etcd-stop", "etcd-member", "Crash one etcd member (its data stays on disk).",
              "With 3 members quorum holds (1 failure tolerated); if it led, the others elect a new leader "
              "within about a second. A second failure loses quorum: writes fail with 'etcdserver: request "
              "timed out'. On heal it catches up from the leader.", _etcd_stop),
    FaultType("etcd-start", "etcd-member", "Start a stopped etcd member again.",
              "It replays its WAL, rejoins as a follower and catches up from the leader.", _etcd_start,
              one_shot=True),
    FaultType("etcd-pause", "etcd-member", "Freeze one etcd member (SIGSTOP): alive but silent.",
              "Like a stop for its peers: a paused leader is replaced after the election timeout; on resume it "
              "steps down on seeing the higher term.", _etcd_pause),
    FaultType("etcd-partition", "etcd-member", "Cut one etcd member off from its peers.",
              "An isolated leader loses its lease on leadership (check-quorum) and the majority elects another; "
              "the isolated member's reads go stale and its writes time out. On heal it rejoins.",
              _etcd_partition),
    FaultType("etcd-slow-disk", "etcd-member", "Add latency to every WAL write of one member.",
              "Commit latency rises (the panel's last commit latency), writes/s fall; a slow leader may miss "
              "heartbeats and lose leadership.", _etcd_slow_disk,
              (Param("seconds", "0.25", "added simulated seconds per WAL write"),)),
    FaultType("etcd-kill-leader", "etcd-member", "Crash whichever member leads now.",
              "A new leader within about a second (1 s election timeout); requests in flight fail with "
              "'etcdserver: leader changed' or time out and are retried. On heal the old leader rejoins.",
              _etcd_kill_leader),
    FaultType("etcd-quota", "etcd-member", "Exhaust the backend quota: the NOSPACE alarm.",
              "Writes fail with 'etcdserver: mvcc: database space exceeded' (reads and deletes still work); "
              "controllers and kubelets log errors. Heal restores the quota and disarms the alarm.", _etcd_quota),
    FaultType("kill-controller-manager-leader", "controller-manager",
              "Stop the kube-controller-manager replica holding the Lease.",
              "Reconciliation pauses until the Lease expires (15 s) and another replica takes it "
              "(holderIdentity changes); then controllers resync. Heal restarts the replica.",
              _kill_replica_leader("controller-manager", "kube-controller-manager")),
    FaultType("kill-scheduler-leader", "scheduler", "Stop the kube-scheduler replica holding the Lease.",
              "New pods stay Pending until the Lease expires (15 s) and another replica takes it; then they are "
              "scheduled. Heal restarts the replica.", _kill_replica_leader("scheduler", "kube-scheduler")),
    FaultType("controller-manager-down", "controller-manager", "Stop every kube-controller-manager replica.",
              "Nothing reconciles: a new Deployment gets no ReplicaSet, a deleted pod is not replaced, a dead node's "
              "pods are not evicted; running pods keep running and the API answers. Heal restarts the replicas: "
              "one takes the Lease once it expires (15 s) and controllers catch up.",
              _stop_every_replica("controller-manager", "kube-controller-manager")),
    FaultType("scheduler-down", "scheduler", "Stop every kube-scheduler replica.",
              "New pods are created but stay Pending with no node and no scheduling events; running pods are "
              "untouched. Heal restarts the replicas: one takes the Lease once it expires (15 s) and binds the "
              "backlog.", _stop_every_replica("scheduler", "kube-scheduler")),
    FaultType("apiserver-latency", "apiserver", "Delay every API request.",
              "Every client slows down: kubectl feels sluggish, controllers fall behind, Lease renewals may "
              "miss their deadline (leader changes) when the delay nears 10 s.", _apiserver("latency"),
              (Param("seconds", "1", "added simulated seconds per request"),)),
    FaultType("apiserver-down", "apiserver", "Stop every kube-apiserver: no request is answered.",
              "Every client fails (kubectl, controllers, schedulers, kubelets: 503 here, 'connection refused' on "
              "a real cluster) and nothing changes in the store; running containers keep running. Heal: clients "
              "retry, informers relist, and the cluster carries on where it was.", _apiserver("down")),
    FaultType("apiserver-errors", "apiserver", "Fail a share of API requests with a 5xx (or 429).",
              "Clients see errors and retry: informers relist, controllers requeue with back-off, kubectl prints "
              "the error. Nothing is lost; progress slows.", _apiserver("errors"),
              (Param("rate", "0.5", "share of requests to fail, 0..1"),
               Param("code", "503", "status code: 500, 503, 504 or 429"))),
]}
