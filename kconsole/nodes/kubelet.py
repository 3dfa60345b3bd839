"""A simulated kubelet: registers its Node, heartbeats through a Lease, runs the pods bound to it
and reports their status, acting only through the API server as ``system:node:<name>``.

Timings are upstream's: the Lease (``kube-node-lease/<node>``, 40 s) is renewed 10 s plus up to 4%
jitter after the last renewal ended (wait.JitterUntil, sliding; retry back-off 0.2 s doubling to
7 s), so a fleet booted at once does not renew in lockstep forever; node status is computed every
10 s and posted when it differs from the Node as the node informer has it (a GET without one), or
every 300 s anyway. Pod status goes through ``pods/status`` as a merge patch, coalesced per pod:
whatever changed since the last write goes out in one request.

Memory/disk pressure is reported as the node's condition only; the node lifecycle controller adds
the matching ``node.kubernetes.io/*-pressure:NoSchedule`` taints, as upstream.

Fault hooks: :meth:`stop`/:meth:`start` (a crash: heartbeats and reports stop, containers keep
running, nothing restarts them), :meth:`partition`/:meth:`heal` (the kubelet keeps running its pods
but cannot reach the API: no heartbeats, no status, no new pods seen), :meth:`set_pressure`,
:meth:`slow_image_pulls`, and per pod :meth:`kill_container`, :meth:`crash_loop`,
:meth:`fail_readiness`, :meth:`set_load`.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import random
from collections.abc import Callable
from typing import Any

from kconsole.client import (
    Client,
    EventRecorder,
    SharedInformer,
    StatusError,
    index_by_node_name,
    is_already_exists,
    is_conflict,
    is_not_found,
)
from kconsole.clock import Clock
from kconsole.nodes import usage as usage_mod
from kconsole.nodes.config import NodeConfig
from kconsole.nodes.images import ImageStore
from kconsole.nodes.link import GatedEntry, LinkDown
from kconsole.nodes import streaming
from kconsole.nodes.logs import LogFollower
from kconsole.nodes.network import Network
from kconsole.nodes.podworker import PodWorker
from kconsole.nodes.staticpods import COMPONENTS, MirrorPodWorker, mirror_pod, mirror_pod_name
from kconsole.nodes.volumes import PodObjects
from kconsole.objects.duration import format_duration
from kconsole.objects.meta import deep_copy, format_time
from kconsole.objects.pod import (
    CLUSTER_DNS_IP,
    CPU_USAGE_ANNOTATION,
    MEMORY_USAGE_ANNOTATION,
    SYSTEM_CPU_USAGE_ANNOTATION,
    SYSTEM_MEMORY_USAGE_ANNOTATION,
    is_mirror_pod,
    running_usage,
)
from kconsole.objects.podlog import LogOptions

log = logging.getLogger(__name__)

Obj = dict[str, Any]
Worker = PodWorker | MirrorPodWorker

LEASE_NAMESPACE = "kube-node-lease"
LEASE_DURATION = 40
RENEW_INTERVAL = 10.0
#: upstream's lease controller waits RENEW_INTERVAL * (1 + up to this factor) between renewals
RENEW_JITTER = 0.04
RENEW_RETRY_MIN = 0.2
RENEW_RETRY_MAX = 7.0
STATUS_INTERVAL = 10.0
STATUS_REPORT_MAX = 300.0
STATIC_POD_INTERVAL = 5.0
#: Wall seconds a stop waits for its loops and queued events before dropping them (a shutdown bound,
#: not simulated time: the stop must end even when the clock is not advanced or the API is swamped).
STOP_WAIT_S = 2.0
#: Status writes retried after an error (not a partition) this long after.
STATUS_RETRY = 1.0
KUBELET_VERSION = "v1.32.0-kconsole"
RUNTIME_VERSION = "kconsole://1.0"
NODE_INDEX = "nodeName"

_CONDITIONS = {
    # type: (ok status, ok reason, ok message, bad reason, bad message)
    "MemoryPressure": ("False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available",
                       "KubeletHasInsufficientMemory", "kubelet has insufficient memory available"),
    "DiskPressure": ("False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure",
                     "KubeletHasDiskPressure", "kubelet has disk pressure"),
    "PIDPressure": ("False", "KubeletHasSufficientPID", "kubelet has sufficient PID available",
                    "KubeletHasInsufficientPID", "kubelet has insufficient PID available"),
    "Ready": ("True", "KubeletReady", "kubelet is posting ready status", "KubeletNotReady", "kubelet is not ready"),
}


#: Condition -> (event when it turns healthy, event when it turns bad), upstream's node status events.
_TRANSITION_EVENTS = {
    "MemoryPressure": ("NodeHasSufficientMemory", "NodeHasInsufficientMemory"),
    "DiskPressure": ("NodeHasNoDiskPressure", "NodeHasDiskPressure"),
    "PIDPressure": ("NodeHasSufficientPID", "NodeHasInsufficientPID"),
    "Ready": ("NodeReady", "NodeNotReady"),
}


class Kubelet:
    """One simulated node agent. ``pod_informer``: a shared pods informer indexed by ``nodeName``
    whose events the owner dispatches to :meth:`on_pod` / :meth:`on_pod_deleted` (the fleet);
    without one the kubelet watches its own pods (``fieldSelector=spec.nodeName=<name>``).
    ``node_informer``: a shared nodes informer the status loop reads its Node from."""

    def __init__(self, client: Client, clock: Clock, *, node: NodeConfig, rng: random.Random,
                 static_pod_status: Callable[[], dict[str, bool]] | None = None, delay_factor: float = 1.0,
                 pod_informer: SharedInformer | None = None, node_informer: SharedInformer | None = None,
                 objects: PodObjects | None = None) -> None:
        self.base_client = client
        self.clock = clock
        self.config = node
        self.rng = rng
        self.name = node.name
        self.node_ip = node.address
        self.delay_factor = delay_factor * node.delay_factor
        self._slow_pulls = 1.0
        self.images_store = ImageStore()
        self.workers: dict[str, Worker] = {}
        self.running = False
        self.partitioned = False
        self.pressure = {"memory": False, "disk": False}
        self.node_uid = ""
        self._static_pod_status = static_pod_status
        self._shared_informer = pod_informer
        self._node_informer = node_informer
        self._informer: SharedInformer | None = pod_informer
        self._shared_objects = objects
        self._objects: PodObjects | None = objects
        self._link: GatedEntry | None = None
        self.client: Client | None = None
        self.recorder: EventRecorder | None = None
        self._tasks: list[asyncio.Task[None]] = []
        #: Mirror pods posted and not yet seen by the informer: name -> when to post again if still unseen
        #: (two syncs in a row must not both post one, the second only to hear 409 AlreadyExists).
        self._mirrors_posted: dict[str, float] = {}
        self._dirty: dict[str, Worker] = {}
        self._deletes: dict[str, Worker] = {}
        self._wake = asyncio.Event()
        self._status_kick = asyncio.Event()
        self._lease: Obj | None = None
        self._last_report = float("-inf")
        #: (Node object, pressure, image count) of the last status check that found nothing to report
        self._reported_same: tuple[Any, ...] | None = None
        self._registered = False
        self._prefix = node.pod_cidr.split("/")[0].rsplit(".", 1)[0]
        self._ips: dict[str, int] = {}
        self._ip_used: set[int] = set()
        self._ip_next = 2
        self._usage_rng = random.Random(rng.random())
        self._boot_id = hashlib.sha256(f"{self.name}/{rng.random()}".encode()).hexdigest()
        #: Called with True/False when the node is cut off / reconnected (the fleet's kube-proxy).
        self.partition_listeners: list[Callable[[bool], None]] = []
        #: Called with (image, True) when a container starts or is found running after a restart and
        #: (image, False) when its process ends: the fleet's kube-proxy runs as its pod does.
        self.container_listeners: list[Callable[[str, bool], None]] = []
        #: The pod network processes in containers reach (DNS, Services, pods), set by the fleet.
        self.network: Network | None = None
        #: Counters for the console and tests.
        self.status_writes = 0
        self.lease_renewals = 0

    # ------------------------------------------------------------------ properties for the console

    @property
    def pods(self) -> list[str]:
        return sorted(w.key for w in self.workers.values() if not w.removed)

    @property
    def images(self) -> list[str]:
        return sorted(self.images_store.present)

    @property
    def connected(self) -> bool:
        return self.running and not self.partitioned

    @property
    def pull_factor(self) -> float:
        return self.delay_factor * self.config.image_pull_factor * self._slow_pulls

    def static_status(self) -> dict[str, bool]:
        if self._static_pod_status is None:
            return {c: True for c in COMPONENTS}
        return self._static_pod_status()

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Boot (or reboot) the kubelet: register, heartbeat, adopt what the runtime still runs."""
        if self.running:
            return
        self.running = True
        self._link = GatedEntry(self.base_client.entry, "kube-apiserver")
        self._link.partitioned = self.partitioned
        self.client = Client(self._link, self.base_client.token, self.clock,
                             user_agent=f"kubelet/{KUBELET_VERSION} ({self.name})")
        self.recorder = EventRecorder(self.client, self.clock, component="kubelet", host=self.name)
        self.event(self._node_ref(), "Normal", "Starting", "Starting kubelet.")
        self._lease = None
        self._registered = False
        self._last_report = float("-inf")
        self._reported_same = None
        if not self.partitioned:
            try:
                await self._register()
            except (StatusError, LinkDown) as err:
                log.warning("kubelet %s: registration failed, will retry: %s", self.name, err)
        # The container manager's, once it has set the pods' cgroup limits from the node's allocatable.
        self.event(self._node_ref(), "Normal", "NodeAllocatableEnforced", "Updated Node Allocatable limit across pods")
        if self._shared_informer is None:
            self._informer = SharedInformer(self.client, "pods", field_selector=f"spec.nodeName={self.name}",
                                            indexers={NODE_INDEX: index_by_node_name}, clock=self.clock)
            self._informer.add_event_handler(on_add=self.on_pod, on_update=lambda _o, n: self.on_pod(n),
                                             on_delete=self.on_pod_deleted)
            await self._informer.start()
        if self._shared_objects is None:
            self._objects = PodObjects(self.client, self.clock)
            await self._objects.start()
        self._tasks = [asyncio.create_task(self._heartbeat_loop(), name=f"kubelet:{self.name}:heartbeat"),
                       asyncio.create_task(self._status_loop(), name=f"kubelet:{self.name}:status"),
                       asyncio.create_task(self._usage_loop(), name=f"kubelet:{self.name}:usage")]
        if self.config.control_plane:
            self._tasks.append(asyncio.create_task(self._static_loop(), name=f"kubelet:{self.name}:static"))
        if not self.partitioned:
            self.resync()

    async def stop(self) -> None:
        """Crash-like: reporting stops at once; the containers keep running on their own."""
        if not self.running:
            return
        self.running = False
        tasks, self._tasks = self._tasks, []
        for t in tasks:
            t.cancel()
        if tasks:
            # A crash does not care why a loop ended; one stuck in a write must not hold the stop.
            await asyncio.wait(tasks, timeout=STOP_WAIT_S)
            for t in tasks:
                if t.done() and not t.cancelled():
                    t.exception()
        if self._shared_informer is None and self._informer is not None:
            await self._informer.stop()
            self._informer = None
        if self._shared_objects is None and self._objects is not None:
            await self._objects.stop()
            self._objects = None
        for w in self.workers.values():
            w.suspend()
        self.images_store.abort_pulls()
        self._dirty.clear()
        self._deletes.clear()
        if self._link is not None and self.partitioned:
            self._link.closed = True
        if self.recorder is not None:
            await self._close_recorder(self.recorder)
        if self._link is not None:
            self._link.closed = True

    @staticmethod
    async def _close_recorder(recorder: EventRecorder) -> None:
        """Write the queued events if the API server takes them promptly; otherwise drop them, as a
        crash would (under a 10,000-pod burst, or while partitioned, the flush could take minutes)."""
        closing = asyncio.ensure_future(recorder.close())
        done, _ = await asyncio.wait({closing}, timeout=STOP_WAIT_S)
        if not done:
            closing.cancel()
            recorder.abort()
            await asyncio.wait({closing})
        elif not closing.cancelled():
            closing.exception()

    def partition(self) -> None:
        """Cut the node off the API server; its pods keep running and it keeps restarting them."""
        self.partitioned = True
        if self._link is not None:
            self._link.partitioned = True
        for listener in self.partition_listeners:
            listener(True)

    def container_changed(self, image: str, running: bool) -> None:
        for listener in self.container_listeners:
            listener(image, running)

    def heal(self) -> None:
        self.partitioned = False
        if self._link is not None:
            self._link.partitioned = False
        for listener in self.partition_listeners:
            listener(False)
        if self.running:
            self.resync()
            self._status_kick.set()
            self._wake.set()

    def lookup(self, resource: str, namespace: str, name: str) -> Obj | None:
        """A ConfigMap, Secret or claim a pod here refers to, from the kubelet's caches."""
        return self._objects.get(resource, namespace, name) if self._objects is not None else None

    def resync(self) -> None:
        """Reconcile workers with the pods the API says are bound here (after a start or a heal)."""
        if self._informer is None:
            return
        current = {p["metadata"].get("uid"): p for p in self._informer.list_by_index(NODE_INDEX, self.name)}
        for uid, w in list(self.workers.items()):
            if uid not in current:
                self.workers.pop(uid, None)
                w.removed_from_api()
        for uid, pod in current.items():
            w = self.workers.get(uid)
            if w is None:
                self.on_pod(pod)
            else:
                w.update(pod)
                w.resume()
        if self.config.control_plane:
            self._sync_static_pods()

    # ------------------------------------------------------------------ pods in

    def on_pod(self, pod: Obj) -> None:
        if not self.connected:
            return
        meta = pod["metadata"]
        uid = meta.get("uid") or ""
        w = self.workers.get(uid)
        if w is not None:
            w.update(pod)
            return
        phase = (pod.get("status") or {}).get("phase")
        if phase in ("Succeeded", "Failed"):
            if meta.get("deletionTimestamp"):
                self._delete_unknown(pod)
            return
        if is_mirror_pod(pod):
            w = MirrorPodWorker(self, pod)
            w.usage_model = usage_mod.static_pod_usage(w.component, self._usage_rng)
        else:
            w = PodWorker(self, pod)
            w.start_time = self.clock.now()
            w.usage_model = usage_mod.usage_model(pod, self._usage_rng)
            w.published_usage = usage_mod.last_published(pod)
            w.adopt(pod.get("status") or {})
        self.workers[uid] = w
        w.update(pod)
        if not w.terminating:
            self.mark_dirty(w)
            w.sync()

    def on_pod_deleted(self, pod: Obj) -> None:
        uid = pod["metadata"].get("uid") or ""
        w = self.workers.pop(uid, None)
        if w is not None:
            w.removed_from_api()
        self._dirty.pop(uid, None)
        self._deletes.pop(uid, None)
        if self.config.control_plane and is_mirror_pod(pod) and self.connected:
            self._sync_static_pods()

    def _delete_unknown(self, pod: Obj) -> None:
        """A finished pod being deleted that this kubelet never ran (e.g. after a restart)."""
        w = PodWorker(self, pod)
        w.terminating = True
        self.workers[w.uid] = w
        w.deleting = True
        self.request_delete(w)

    # ------------------------------------------------------------------ used by pod workers

    def event(self, ref: Obj, type_: str, reason: str, message: str) -> None:
        if self.recorder is not None and self.running:
            self.recorder.event(ref, type_, reason, message)

    def mark_dirty(self, w: Worker) -> None:
        if not self.running:
            return
        self._dirty[w.uid] = w
        self._wake.set()

    def request_delete(self, w: Worker) -> None:
        if not self.running:
            return
        self._deletes[w.uid] = w
        self._wake.set()

    def images_changed(self) -> None:
        self._status_kick.set()

    def allocate_ip(self, w: PodWorker, had: str = "") -> str:
        """The next free address of the node's /24 (host-local IPAM: round-robin from .2); ``had``,
        the address a pod adopted after a restart already has, is kept when it is free."""
        if w.uid in self._ips:
            return f"{self._prefix}.{self._ips[w.uid]}"
        prefix, _, last = had.rpartition(".")
        if prefix == self._prefix and last.isdigit() and 2 <= int(last) <= 254 and int(last) not in self._ip_used:
            self._ip_used.add(int(last))
            self._ips[w.uid] = int(last)
            return had
        for _ in range(253):
            n = self._ip_next
            self._ip_next = 2 if n >= 254 else n + 1
            if n not in self._ip_used:
                self._ip_used.add(n)
                self._ips[w.uid] = n
                return f"{self._prefix}.{n}"
        raise RuntimeError(f"node {self.name}: no free pod IP in {self.config.pod_cidr}")

    def release_ip(self, w: Any) -> None:
        n = self._ips.pop(w.uid, None)
        if n is not None:
            self._ip_used.discard(n)

    # ------------------------------------------------------------------ status writer

    async def _status_loop(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while (self._dirty or self._deletes) and not self.partitioned:
                deleting = not self._dirty
                queue = self._deletes if deleting else self._dirty
                uid, w = next(iter(queue.items()))
                del queue[uid]
                try:
                    await (self._finish_delete(w) if deleting else self._write_status(w))
                except LinkDown:
                    queue.setdefault(uid, w)
                    break
                except StatusError as err:
                    log.warning("kubelet %s: writing %s failed: %s", self.name, w.key, err)
                    queue.setdefault(uid, w)
                    await self.clock.sleep(STATUS_RETRY)

    async def _write_status(self, w: Worker) -> None:
        if w.removed or self.client is None:
            return
        status = w.build_status()
        current = w.pod.get("status") or {}
        if status == current:
            return
        body = {**{k: None for k in current if k not in status}, **status}
        try:
            out = await self.client.patch("pods", w.name, {"status": body}, w.namespace, subresource="status")
        except StatusError as err:
            if is_not_found(err):
                return
            raise
        self.status_writes += 1
        if out.get("metadata", {}).get("uid") == w.uid and not w.removed:
            w.update(out)

    async def _finish_delete(self, w: Worker) -> None:
        """Containers are stopped: post the final status, then remove the pod object (grace 0)."""
        assert self.client is not None
        if not isinstance(w, MirrorPodWorker):
            await self._write_status(w)
        try:
            await self.client.delete("pods", w.name, w.namespace, grace_period_seconds=0,
                                     preconditions={"uid": w.uid})
        except StatusError as err:
            if not (is_not_found(err) or is_conflict(err)):
                raise

    # ------------------------------------------------------------------ node registration and heartbeat

    def _node_status(self, current: Obj | None) -> Obj:
        now = self.clock.now()
        stamp = format_time(now)
        found = {c.get("type"): c for c in ((current or {}).get("status") or {}).get("conditions") or ()}
        bad = {"MemoryPressure": self.pressure["memory"], "DiskPressure": self.pressure["disk"]}
        conditions = []
        for ctype, (ok_status, ok_reason, ok_msg, bad_reason, bad_msg) in _CONDITIONS.items():
            is_bad = bad.get(ctype, False)
            value = ok_status if not is_bad else ("True" if ok_status == "False" else "False")
            old = found.get(ctype)
            conditions.append({
                "type": ctype, "status": value, "lastHeartbeatTime": stamp,
                "lastTransitionTime": old.get("lastTransitionTime") if old and old.get("status") == value else stamp,
                "reason": bad_reason if is_bad else ok_reason, "message": bad_msg if is_bad else ok_msg})
        old_net = found.get("NetworkUnavailable")
        conditions.insert(0, {"type": "NetworkUnavailable", "status": "False", "lastHeartbeatTime": stamp,
                              "lastTransitionTime": old_net.get("lastTransitionTime") if old_net else stamp,
                              "reason": "RouteCreated", "message": "RouteController created a route"})
        capacity = self.config.capacity()
        machine = hashlib.md5(self.name.encode()).hexdigest()  # noqa: S324 - an id, not security
        return {
            "capacity": capacity,
            "allocatable": dict(capacity),
            "conditions": conditions,
            "addresses": [{"type": "InternalIP", "address": self.node_ip}, {"type": "Hostname", "address": self.name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "machineID": machine, "systemUUID": f"{machine[:8]}-{machine[8:12]}-{machine[12:16]}-"
                                                    f"{machine[16:20]}-{machine[20:32]}",
                "bootID": self._boot_id[:36], "kernelVersion": "6.8.0-kconsole", "osImage": "kconsole simulated node",
                "containerRuntimeVersion": RUNTIME_VERSION, "kubeletVersion": KUBELET_VERSION,
                "kubeProxyVersion": KUBELET_VERSION, "operatingSystem": "linux", "architecture": "amd64",
            },
            "images": self.images_store.status_images(),
        }

    def _node_object(self) -> Obj:
        cidr = self.config.pod_cidr
        system_cpu, system_memory = usage_mod.system_usage(self.name)
        spec: Obj = {"podCIDR": cidr, "podCIDRs": [cidr], "providerID": f"kconsole://{self.name}"}
        if self.config.taints:
            spec["taints"] = [dict(t) for t in self.config.taints]
        return {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": self.name, "labels": self.config.all_labels(),
                             "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                                             "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                                             SYSTEM_CPU_USAGE_ANNOTATION: usage_mod.format_cpu(system_cpu),
                                             SYSTEM_MEMORY_USAGE_ANNOTATION:
                                                 usage_mod.format_memory(system_memory)}},
                "spec": spec, "status": self._node_status(None)}

    async def _register(self) -> None:
        assert self.client is not None
        try:
            node = await self.client.create(self._node_object())
            self._last_report = self.clock.now()
            # Upstream's condition setters start a new node's pressure conditions as Unknown, so its
            # first status records 'Node X status is now: NodeHasSufficientMemory' and the like.
            self._record_transitions({"conditions": [{"type": kind, "status": "Unknown"} for kind in _TRANSITION_EVENTS
                                                     if kind != "Ready"]}, node.get("status") or {})
        except StatusError as err:
            if not is_already_exists(err):
                raise
            node = await self.client.get("nodes", self.name)
        self.node_uid = node["metadata"].get("uid") or ""
        self._registered = True
        await self._report_status(node, force=False)
        await self._renew_lease()

    async def _report_status(self, node: Obj | None = None, *, force: bool = False) -> None:
        assert self.client is not None
        if node is None and self._node_informer is not None:
            # Upstream's first try reads the Node from the kubelet's own informer, not with a GET:
            # at 1,000 nodes those GETs were 100 requests a second for nothing.
            node = self._node_informer.get(self.name)
        if node is None:
            node = await self.client.get("nodes", self.name)
        due = self.clock.now() - self._last_report >= STATUS_REPORT_MAX
        inputs = (node, self.pressure["memory"], self.pressure["disk"], len(self.images_store.present))
        if not force and not due and self._reported_same is not None and self._reported_same[0] is node and \
                self._reported_same[1:] == inputs[1:]:
            # The Node the informer holds is the very object found up to date last time, and nothing
            # the status is made of changed (images are only ever added): the status would be equal.
            return
        status = self._node_status(node)
        current = node.get("status") or {}

        def strip(s: Obj) -> Obj:
            out = dict(s)
            out["conditions"] = [{k: v for k, v in c.items() if k != "lastHeartbeatTime"}
                                 for c in s.get("conditions") or ()]
            return out

        if not force and not due and strip(status) == strip(current):
            self._reported_same = inputs
            return
        self._reported_same = None
        await self.client.patch("nodes", self.name, {"status": status}, subresource="status")
        self._last_report = self.clock.now()
        self._record_transitions(current, status)

    def _node_ref(self) -> Obj:
        """The involvedObject of the kubelet's node events (upstream's nodeRef: the name as UID)."""
        return {"apiVersion": "v1", "kind": "Node", "name": self.name, "uid": self.name}

    def _record_transitions(self, before: Obj, after: Obj) -> None:
        """The kubelet's node status events (upstream's condition setters): each condition that
        changes status, e.g. back from Unknown after a stop, gets 'Node X status is now: NodeReady'.
        Ready, new on a registering node, records nothing (upstream: only a change of it does)."""
        old = {c.get("type"): c.get("status") for c in before.get("conditions") or ()}
        for cond in after.get("conditions") or ():
            names = _TRANSITION_EVENTS.get(cond["type"])
            if names is None or cond["type"] not in old or old[cond["type"]] == cond["status"]:
                continue
            reason = names[0] if cond["status"] == _CONDITIONS[cond["type"]][0] else names[1]
            self.event(self._node_ref(), "Normal", reason, f"Node {self.name} status is now: {reason}")

    async def _renew_lease(self) -> None:
        assert self.client is not None
        now = self.clock.rfc3339_micro()
        for _ in range(2):
            if self._lease is None:
                try:
                    self._lease = await self.client.get("leases", self.name, LEASE_NAMESPACE)
                except StatusError as err:
                    if not is_not_found(err):
                        raise
                    lease: Obj = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                  "metadata": {"name": self.name, "namespace": LEASE_NAMESPACE},
                                  "spec": {"holderIdentity": self.name, "leaseDurationSeconds": LEASE_DURATION,
                                           "renewTime": now}}
                    if self.node_uid:
                        lease["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Node",
                                                                 "name": self.name, "uid": self.node_uid}]
                    self._lease = await self.client.create(lease)
                    self.lease_renewals += 1
                    return
            # Only spec changes: a shallow copy around a fresh spec leaves the server's answer intact
            # (deep-copying its managedFields cost more than the rest of the renewal on the client).
            spec = {**(self._lease.get("spec") or {}), "holderIdentity": self.name,
                    "leaseDurationSeconds": LEASE_DURATION, "renewTime": now}
            lease = {**self._lease, "spec": spec}
            try:
                self._lease = await self.client.update(lease)
                self.lease_renewals += 1
                return
            except StatusError as err:
                if not (is_conflict(err) or is_not_found(err)):
                    raise
                self._lease = None

    def _renew_interval(self) -> float:
        return RENEW_INTERVAL * (1.0 + RENEW_JITTER * self.rng.random())

    async def _heartbeat_loop(self) -> None:
        """Lease renewals every RENEW_INTERVAL and node status checks every STATUS_INTERVAL, each on
        its own schedule (upstream's lease controller and status loop are separate): a status kick
        (an image pulled, pressure, heal) reports status without renewing the Lease out of turn."""
        retry = RENEW_RETRY_MIN
        next_status = self.clock.now() + STATUS_INTERVAL
        next_renew = self.clock.now()
        while True:
            delay = RENEW_INTERVAL
            failed = False
            try:
                if not self._registered:
                    await self._register()
                    next_status = self.clock.now() + STATUS_INTERVAL
                    next_renew = self.clock.now() + self._renew_interval()
                else:
                    if self.clock.now() >= next_renew:
                        await self._renew_lease()
                        next_renew = self.clock.now() + self._renew_interval()
                    if self.clock.now() >= next_status or self._status_kick.is_set():
                        self._status_kick.clear()
                        await self._report_status()
                        next_status = self.clock.now() + STATUS_INTERVAL
                retry = RENEW_RETRY_MIN
            except (StatusError, LinkDown) as err:
                log.debug("kubelet %s: heartbeat failed: %s", self.name, err)
                delay = retry
                retry = min(retry * 2, RENEW_RETRY_MAX)
                failed = True
            # After a failure wait out the retry: a status already due must not turn it into a spin.
            wait = (max(0.0, min(next_renew, next_status) - self.clock.now())
                    if self._registered and not failed else delay)
            if not self.connected:
                # A kick cannot be acted on while cut off (Event.wait on a set event never yields, so
                # keeping it set starved the loop); heal() kicks again and the report covers it all.
                self._status_kick.clear()
            try:
                async with self.clock.timeout(max(wait, 0.001)):
                    await self._status_kick.wait()
            except TimeoutError:
                pass
            if self._status_kick.is_set() and self._registered and self.connected:
                self._status_kick.clear()
                try:
                    await self._report_status()
                    next_status = self.clock.now() + STATUS_INTERVAL
                except (StatusError, LinkDown) as err:
                    log.debug("kubelet %s: status report failed: %s", self.name, err)

    # ------------------------------------------------------------------ static pods

    def _sync_static_pods(self) -> None:
        have = {w.name for w in self.workers.values() if isinstance(w, MirrorPodWorker) and not w.removed}
        for w in self.workers.values():
            if isinstance(w, MirrorPodWorker):
                w.sync()
        now = self.clock.now()
        posted = self._mirrors_posted
        for name in [n for n, until in posted.items() if n in have or until <= now]:
            del posted[name]
        names = {c: mirror_pod_name(c, self.name) for c in COMPONENTS}
        missing = [c for c, name in names.items() if name not in have and name not in posted]
        if missing:
            for component in missing:
                posted[names[component]] = now + STATIC_POD_INTERVAL
            self._tasks.append(asyncio.create_task(self._create_mirror_pods(missing)))

    async def _create_mirror_pods(self, components: list[str]) -> None:
        if self.client is None or not self.node_uid:
            self._mirrors_posted.clear()
            return
        for component in components:
            pod = mirror_pod(component, self.name, self.node_uid, self.clock.rfc3339())
            try:
                await self.client.create(pod)
            except StatusError as err:
                if not is_already_exists(err):
                    self._mirrors_posted.pop(pod["metadata"]["name"], None)
                    log.warning("kubelet %s: mirror pod %s: %s", self.name, pod["metadata"]["name"], err)
            except LinkDown:
                self._mirrors_posted.clear()
                return

    async def _static_loop(self) -> None:
        while True:
            if self.connected and self._registered:
                self._tasks = [t for t in self._tasks if not t.done()]
                self._sync_static_pods()
            await self.clock.sleep(STATIC_POD_INTERVAL)

    # ------------------------------------------------------------------ usage

    async def _usage_loop(self) -> None:
        while True:
            await self.clock.sleep(usage_mod.PERIOD)
            if not self.connected or self.client is None:
                continue
            for w in list(self.workers.values()):
                if w.usage_model is None or w.removed or w.terminating or not w.consuming:
                    continue
                model = w.usage_model
                if w.cpu_load is not None:
                    model.cpu_fraction = w.cpu_load
                cpu, mem = model.sample(self._usage_rng)
                old = w.published_usage
                if old is not None and not usage_mod.moved(old[0], cpu) and not usage_mod.moved(old[1], mem):
                    continue
                annotations: Obj = {}
                if cpu:
                    annotations[CPU_USAGE_ANNOTATION] = usage_mod.format_cpu(cpu)
                if mem:
                    annotations[MEMORY_USAGE_ANNOTATION] = usage_mod.format_memory(mem)
                try:
                    await self.client.patch("pods", w.name, {"metadata": {"annotations": annotations}}, w.namespace)
                    w.published_usage = (cpu, mem)
                except StatusError as err:
                    if not is_not_found(err):
                        log.warning("kubelet %s: usage of %s: %s", self.name, w.key, err)
                except LinkDown:
                    break

    # ------------------------------------------------------------------ read-only endpoints

    def endpoint(self, path: str) -> str | dict[str, Any] | None:
        """What the kubelet's port 10250 answers at ``path`` (the API server's nodes/<n>/proxy);
        None when it does not answer (stopped or cut off); LookupError for a path it does not serve."""
        if not self.connected:
            return None
        if path in ("/healthz", "/healthz/"):
            return "ok"
        if path == "/configz":
            return {"kubeletconfig": self.configuration()}
        if path == "/pods":
            items = [deep_copy(p) for p in self._informer.list_by_index(NODE_INDEX, self.name)]  # not the cache's
            return {"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": items}
        if path == "/stats/summary":
            return self.summary()
        raise LookupError(path)

    def summary(self) -> dict[str, Any]:
        """The Summary API metrics-server scrapes: the node's use (its pods' plus what it uses
        outside them) and each running pod's, split evenly over its containers, as metrics.k8s.io
        reports them."""
        now = format_time(self.clock.now())
        pods: list[dict[str, Any]] = []
        total_cores, total_bytes = 0.0, 0.0
        for pod in self._informer.list_by_index(NODE_INDEX, self.name):
            usage = running_usage(pod)
            if usage is None:
                continue
            cores, nbytes = usage
            total_cores += cores
            total_bytes += nbytes
            meta, status = pod["metadata"], pod.get("status") or {}
            names = [str(c.get("name")) for c in (pod.get("spec") or {}).get("containers") or ()] or [""]
            share = _stats(now, cores / len(names), nbytes / len(names))
            pods.append({"podRef": {"name": meta["name"], "namespace": meta.get("namespace"), "uid": meta.get("uid")},
                         "startTime": status.get("startTime"),
                         "containers": [{"name": name, **share} for name in names], **_stats(now, cores, nbytes)})
        millicores, system_bytes = usage_mod.system_usage(self.name)
        node = {"nodeName": self.name, **_stats(now, total_cores + millicores / 1000, total_bytes + system_bytes)}
        return {"node": node, "pods": pods}

    def configuration(self) -> dict[str, Any]:
        """The KubeletConfiguration this kubelet runs with, as /configz shows it: the timings and
        limits the simulation uses (lease 40 s renewed every 10 s, status every 10 s, re-reported
        every 5 min, up to the node's pod capacity), and kubeadm's settings for the rest."""
        return {
            "enableServer": True, "staticPodPath": "/etc/kubernetes/manifests", "podLogsDir": "/var/log/pods",
            "syncFrequency": "1m0s", "fileCheckFrequency": "20s", "httpCheckFrequency": "20s",
            "address": "0.0.0.0", "port": 10250, "rotateCertificates": True, "serverTLSBootstrap": False,
            "authentication": {"x509": {"clientCAFile": "/etc/kubernetes/pki/ca.crt"},
                               "webhook": {"enabled": True, "cacheTTL": "2m0s"}, "anonymous": {"enabled": False}},
            "authorization": {"mode": "Webhook", "webhook": {"cacheAuthorizedTTL": "5m0s",
                                                             "cacheUnauthorizedTTL": "30s"}},
            "registryPullQPS": 5, "registryBurst": 10, "eventRecordQPS": 50, "eventBurst": 100,
            "enableDebuggingHandlers": True, "healthzPort": 10248, "healthzBindAddress": "127.0.0.1",
            "clusterDomain": "cluster.local", "clusterDNS": [CLUSTER_DNS_IP],
            "streamingConnectionIdleTimeout": "4h0m0s",
            "nodeStatusUpdateFrequency": format_duration(STATUS_INTERVAL),
            "nodeStatusReportFrequency": format_duration(STATUS_REPORT_MAX),
            "nodeLeaseDurationSeconds": LEASE_DURATION,
            "imageMinimumGCAge": "2m0s", "imageMaximumGCAge": "0s", "imageGCHighThresholdPercent": 85,
            "imageGCLowThresholdPercent": 80, "volumeStatsAggPeriod": "1m0s",
            "cgroupsPerQOS": True, "cgroupDriver": "systemd", "cpuManagerPolicy": "none",
            "memoryManagerPolicy": "None", "topologyManagerPolicy": "none", "topologyManagerScope": "container",
            "runtimeRequestTimeout": "2m0s", "hairpinMode": "promiscuous-bridge", "maxPods": self.config.pods,
            "podCIDR": self.config.pod_cidr, "podPidsLimit": -1, "resolvConf": "/run/systemd/resolve/resolv.conf",
            "cpuCFSQuota": True, "cpuCFSQuotaPeriod": "100ms", "nodeStatusMaxImages": 50, "maxOpenFiles": 1000000,
            "contentType": "application/vnd.kubernetes.protobuf", "kubeAPIQPS": 50, "kubeAPIBurst": 100,
            "serializeImagePulls": True,
            "evictionHard": {"imagefs.available": "15%", "memory.available": "100Mi", "nodefs.available": "10%",
                             "nodefs.inodesFree": "5%", "imagefs.inodesFree": "5%"},
            "evictionPressureTransitionPeriod": "5m0s", "enableControllerAttachDetach": True,
            "makeIPTablesUtilChains": True, "iptablesMasqueradeBit": 14, "iptablesDropBit": 15,
            "failSwapOn": True, "memorySwap": {}, "containerLogMaxSize": "10Mi", "containerLogMaxFiles": 5,
            "containerLogMaxWorkers": 1, "containerLogMonitorInterval": "10s",
            "configMapAndSecretChangeDetectionStrategy": "Watch", "enforceNodeAllocatable": ["pods"],
            "volumePluginDir": "/usr/libexec/kubernetes/kubelet-plugins/volume/exec/",
            "logging": {"format": "text", "flushFrequency": "5s", "verbosity": 0,
                        "options": {"text": {"infoBufferSize": "0"}, "json": {"infoBufferSize": "0"}}},
            "enableSystemLogHandler": True, "enableSystemLogQuery": False,
            "shutdownGracePeriod": "0s", "shutdownGracePeriodCriticalPods": "0s",
            "enableProfilingHandler": True, "enableDebugFlagsHandler": True, "seccompDefault": False,
            "memoryThrottlingFactor": 0.9, "registerNode": True, "localStorageCapacityIsolation": True,
            "containerRuntimeEndpoint": "unix:///var/run/containerd/containerd.sock",
            "failCgroupV1": False,
        }

    # ------------------------------------------------------------------ logs

    def logs(self, namespace: str, pod: str, container: str, options: LogOptions) -> str | LogFollower:
        if not self.connected:
            raise StatusError.internal(f'Get "https://{self.node_ip}:10250/containerLogs/{namespace}/{pod}/'
                                       f'{container}": dial tcp {self.node_ip}:10250: connect: connection refused')
        w = self._worker(namespace, pod)
        if isinstance(w, MirrorPodWorker):
            return f"[kconsole] {w.component} runs in-process; its log is kconsole's own\n"
        c = w.container(container)
        if c is None:
            raise StatusError.bad_request(f"container {container} is not valid for pod {pod}")
        if options.previous:
            if c.prev_log is None:
                raise StatusError.bad_request(f'previous terminated container "{c.name}" in pod "{pod}" not found')
            return c.prev_log.text(options)
        buf = c.log
        if buf is None:
            reason = c.waiting_reason or "ContainerCreating"
            raise StatusError.bad_request(f'container "{c.name}" in pod "{pod}" is waiting to start: {reason}')
        if options.follow and not buf.closed:
            return buf.follow(options)
        return buf.text(options)

    # ------------------------------------------------------------------ exec and attach

    def allocatable(self) -> dict[str, str]:
        return self.config.capacity()

    def exec(self, namespace: str, pod: str, container: str, command: list[str], *, tty: bool = False,
             stdin: bool = False) -> streaming.ExecProcess:
        """Start ``command`` in a running container (``kubectl exec``), or the kubelet's refusal."""
        return streaming.exec_process(self, namespace, pod, container, command, tty=tty, stdin=stdin)

    def attach(self, namespace: str, pod: str, container: str, *, tty: bool = False,
               stdin: bool = False) -> streaming.AttachProcess:
        """Join a running container's process (``kubectl attach``), or the kubelet's refusal."""
        return streaming.attach_process(self, namespace, pod, container, tty=tty, stdin=stdin)

    def portforward(self, namespace: str, pod: str) -> streaming.PortForwarder:
        """Connections into a pod's ports (``kubectl port-forward``), or the kubelet's refusal."""
        return streaming.port_forwarder(self, namespace, pod)

    # ------------------------------------------------------------------ fault hooks

    def _worker(self, namespace: str, pod: str) -> Worker:
        for w in self.workers.values():
            if w.name == pod and w.namespace == namespace and not w.removed:
                return w
        raise LookupError(f"pod {namespace}/{pod} is not running on node {self.name}")

    def _pod_worker(self, namespace: str, pod: str) -> PodWorker:
        w = self._worker(namespace, pod)
        if not isinstance(w, PodWorker):
            raise LookupError(f"pod {namespace}/{pod} is a static pod; stop its component instead")
        return w

    def kill_container(self, namespace: str, pod: str, container: str | None = None) -> None:
        w = self._pod_worker(namespace, pod)
        if container is not None and w.container(container) is None:
            raise LookupError(f"pod {namespace}/{pod} has no container {container!r}")
        if not w.kill_container(container):
            raise LookupError(f"pod {namespace}/{pod}: no running container{' ' + container if container else ''}")

    def crash_loop(self, namespace: str, pod: str, on: bool = True) -> None:
        self._pod_worker(namespace, pod).set_crash_loop(on)

    def fail_readiness(self, namespace: str, pod: str, on: bool = True) -> None:
        self._pod_worker(namespace, pod).set_fail_readiness(on)

    def set_load(self, namespace: str, pod: str, cpu_fraction: float | None) -> None:
        """CPU usage as a multiple of the pod's CPU request, or of its idle use when it requests none
        (None: back to its own base load)."""
        if cpu_fraction is not None and cpu_fraction < 0:
            raise ValueError(f"load must be >= 0, got {cpu_fraction}")
        w = self._pod_worker(namespace, pod)
        w.cpu_load = cpu_fraction
        if cpu_fraction is None and w.usage_model is not None:
            w.usage_model = usage_mod.usage_model(w.pod, self._usage_rng)

    def set_pressure(self, kind: str, on: bool) -> None:
        if kind not in self.pressure:
            raise ValueError(f'pressure must be "memory" or "disk", got {kind!r}')
        self.pressure[kind] = on
        self._status_kick.set()

    def slow_image_pulls(self, factor: float) -> None:
        """Pulls take ``factor`` times as long (1 = normal)."""
        if factor <= 0:
            raise ValueError(f"slow image pulls: factor must be > 0, got {factor}")
        self._slow_pulls = float(factor)


def _stats(now: str, cores: float, nbytes: float) -> dict[str, Any]:
    """The Summary API's cpu and memory blocks (nanocores, bytes)."""
    return {"cpu": {"time": now, "usageNanoCores": int(cores * 1e9)},
            "memory": {"time": now, "usageBytes": int(nbytes), "workingSetBytes": int(nbytes)}}
