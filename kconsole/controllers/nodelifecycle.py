"""Node lifecycle and taint-based eviction: what happens to a node that stops talking, and to its pods.

:class:`NodeLifecycleController` ("node-controller" in the event stream) checks every node every
5 s (monitor period). A node is alive while its kubelet renews its Lease in ``kube-node-lease`` or
moves its Ready condition's ``lastHeartbeatTime``; both are timed by *this* controller's clock on
observation, as upstream (so clock skew does not matter, and a new leader grants a fresh grace).
After 50 s without either (grace period; 60 s for a node that never posted status) the node's
Ready, MemoryPressure, DiskPressure and PIDPressure conditions become Unknown, reason
``NodeStatusUnknown``, "Kubelet stopped posting node status."; the node gets a ``NodeNotReady``
event and each of its pods Ready=False with a ``NodeNotReady`` "Node is not ready" event.

Taints follow the Ready condition: ``node.kubernetes.io/unreachable`` (Unknown) or ``not-ready``
(False), with ``NoSchedule`` at once and ``NoExecute`` through a per-zone rate limiter: 0.1
nodes/s; for a zone with ``>= 55 %`` of its nodes (and more than 2) unhealthy, 0.01 when the zone
has more than 50 nodes and 0 otherwise; when every zone is fully disrupted (no Ready node at all)
the controller assumes its own view is what broke, removes the NoExecute taints everywhere and
evicts nothing until some node is Ready again. Pressure conditions and ``spec.unschedulable`` get
their NoSchedule taints too.

:class:`TaintEvictionController` ("taint-eviction-controller") deletes pods from nodes with
NoExecute taints they do not tolerate: at once without a matching toleration, after the
smallest ``tolerationSeconds`` otherwise (counted from when the taint was added, or from when the
pod was bound if it arrived later; the defaults admission adds 300 s for unreachable/not-ready),
never when tolerated without a limit. Each eviction is a ``TaintManagerEviction`` "Marking for
deletion Pod ns/name" event and a ``DisruptionTarget`` condition before the delete.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from kconsole.client import (
    SharedInformer,
    StatusError,
    index_by_node_name,
    is_conflict,
    is_not_found,
    retry_on_conflict,
)
from kconsole.controllers.base import Controller, ControllerContext
from kconsole.objects.meta import (
    deep_copy,
    format_time,
    get_condition,
    object_key,
    parse_time,
    set_condition,
)
from kconsole.objects.pod import (
    is_node_unschedulable,
    no_execute_toleration_seconds,
    node_taints,
    node_zone_key,
)

log = logging.getLogger(__name__)

Obj = dict[str, Any]

NODE_LEASE_NAMESPACE = "kube-node-lease"
MONITOR_PERIOD = 5.0
GRACE_PERIOD = 50.0
STARTUP_GRACE_PERIOD = 60.0
EVICTION_QPS = 0.1
SECONDARY_EVICTION_QPS = 0.01
LARGE_CLUSTER_THRESHOLD = 50
UNHEALTHY_ZONE_THRESHOLD = 0.55
EXCLUDE_DISRUPTION_LABEL = "node.kubernetes.io/exclude-disruption"

UNREACHABLE = "node.kubernetes.io/unreachable"
NOT_READY = "node.kubernetes.io/not-ready"
UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
#: (condition, status) -> NoSchedule taint key (upstream's nodeConditionToTaintKeyStatusMap).
NO_SCHEDULE_TAINTS: dict[tuple[str, str], str] = {
    ("Ready", "False"): NOT_READY,
    ("Ready", "Unknown"): UNREACHABLE,
    ("MemoryPressure", "True"): "node.kubernetes.io/memory-pressure",
    ("DiskPressure", "True"): "node.kubernetes.io/disk-pressure",
    ("NetworkUnavailable", "True"): "node.kubernetes.io/network-unavailable",
    ("PIDPressure", "True"): "node.kubernetes.io/pid-pressure",
}
MANAGED_NO_SCHEDULE = frozenset(NO_SCHEDULE_TAINTS.values()) | {UNSCHEDULABLE}
#: Conditions the controller sets to Unknown when the kubelet goes quiet.
KUBELET_CONDITIONS = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")
STATUS_UNKNOWN_REASON = "NodeStatusUnknown"
STATUS_UNKNOWN_MESSAGE = "Kubelet stopped posting node status."
NEVER_UPDATED_REASON = "NodeStatusNeverUpdated"
NEVER_UPDATED_MESSAGE = "Kubelet never posted node status."

NORMAL, PARTIAL, FULL, INITIAL = "Normal", "PartialDisruption", "FullDisruption", "Initial"

PODS_BY_NODE = "nodeName"
YIELD_EVERY = 500


def pods_by_node(pods: SharedInformer) -> str:
    """Index pods by ``spec.nodeName`` on the shared informer; returns the index name to use."""
    try:
        pods.add_indexer(PODS_BY_NODE, index_by_node_name)
        return PODS_BY_NODE
    except ValueError:  # another controller filed something else under that name
        pods.add_indexer("node-lifecycle:nodeName", index_by_node_name)
        return "node-lifecycle:nodeName"


def no_execute_taints(node: Obj) -> list[Obj]:
    return [t for t in node_taints(node) if t.get("effect") == "NoExecute"]


@dataclass(slots=True)
class _Health:
    """What this controller last saw of a node, and when (its own clock)."""

    probe: float
    heartbeat: str  # Ready condition's lastHeartbeatTime as last seen
    renew: str  # Lease renewTime as last seen
    had_ready: bool


class _TokenBucket:
    """flowcontrol's token bucket with burst 1; qps 0 never admits."""

    def __init__(self, qps: float, now: float) -> None:
        self.qps = qps
        self.tokens = 1.0 if qps > 0 else 0.0
        self.last = now

    def swap(self, qps: float, now: float) -> None:
        if qps == self.qps:
            return
        waiting = not self.try_accept(now)
        self.qps, self.last = qps, now
        # As upstream's SwapLimiter: a queue that was waiting keeps waiting on the new limiter.
        self.tokens = 0.0 if qps <= 0 or waiting else 1.0

    def try_accept(self, now: float) -> bool:
        if self.qps <= 0:
            return False
        self.tokens = min(1.0, self.tokens + (now - self.last) * self.qps)
        self.last = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False

    def wait(self, now: float) -> float | None:
        """Seconds until the next token, None when none will come."""
        if self.qps <= 0:
            return None
        have = min(1.0, self.tokens + (now - self.last) * self.qps)
        return max(0.0, (1.0 - have) / self.qps)


class NodeLifecycleController(Controller):
    name = "node-lifecycle-controller"
    component = "node-controller"
    workers = 2

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        cfg = self.settings()
        self.monitor_period = float(cfg.get("monitor_period", MONITOR_PERIOD))
        self.grace_period = float(cfg.get("grace_period", GRACE_PERIOD))
        self.startup_grace_period = float(cfg.get("startup_grace_period", STARTUP_GRACE_PERIOD))
        self.eviction_qps = float(cfg.get("eviction_qps", EVICTION_QPS))
        self.secondary_eviction_qps = float(cfg.get("secondary_eviction_qps", SECONDARY_EVICTION_QPS))
        self.large_cluster_threshold = int(cfg.get("large_cluster_threshold", LARGE_CLUSTER_THRESHOLD))
        self.unhealthy_zone_threshold = float(cfg.get("unhealthy_zone_threshold", UNHEALTHY_ZONE_THRESHOLD))
        if self.monitor_period <= 0 or self.grace_period <= 0 or self.eviction_qps < 0:
            raise ValueError(f"{self.name}: monitor_period and grace_period must be positive and eviction_qps "
                             f">= 0, got {self.monitor_period}, {self.grace_period}, {self.eviction_qps}")
        self.nodes = self.informer("nodes")
        self.leases = self.informer("leases.coordination.k8s.io", namespace=NODE_LEASE_NAMESPACE)
        self.pods = self.informer("pods")
        self.pod_index = pods_by_node(self.pods)
        self.nodes.add_event_handler(on_add=self.enqueue, on_update=self._node_updated, on_delete=self._node_deleted)
        self.health: dict[str, _Health] = {}
        #: zone -> state; zone -> nodes waiting for a NoExecute taint (in order) and their limiter.
        self.zone_states: dict[str, str] = {}
        self.taint_queue: dict[str, dict[str, None]] = {}
        self.limiters: dict[str, _TokenBucket] = {}
        self._registered: set[str] = set()
        self._wake: asyncio.Event = asyncio.Event()
        self._taint_timer: Any = None

    # ------------------------------------------------------------------ handlers

    def _node_updated(self, old: Obj, new: Obj) -> None:
        if (old.get("spec") != new.get("spec") or (old.get("status") or {}).get("conditions")
                != (new.get("status") or {}).get("conditions")):
            self.enqueue(new)

    def _node_deleted(self, node: Obj) -> None:
        name = node["metadata"]["name"]
        self.health.pop(name, None)
        self._registered.discard(name)
        for queue in self.taint_queue.values():
            queue.pop(name, None)

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        await super().start()
        self._tasks.append(asyncio.create_task(self._monitor_loop(), name=f"{self.name}:monitor"))
        self._tasks.append(asyncio.create_task(self._tainting_loop(), name=f"{self.name}:tainter"))

    async def stop(self) -> None:
        if self._taint_timer is not None:
            self._taint_timer.cancel()
        await super().stop()

    async def _monitor_loop(self) -> None:
        while True:
            try:
                await self.monitor_node_health()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - the next pass retries; one bad pass must not stop monitoring
                log.exception("%s: monitoring node health failed", self.name)
            await self.clock.sleep(self.monitor_period)

    # ------------------------------------------------------------------ NoSchedule taints (workqueue)

    async def sync(self, key: str) -> None:
        """NoSchedule syncs (plain node names), NoExecute swaps and removals share the queue."""
        kind, sep, name = key.partition(":")
        if sep and kind == "noexecute":
            await self._apply_no_execute(name)
        elif sep and kind == "reachable":
            await self._remove_no_execute(name)
        else:
            await self._sync_no_schedule(key)

    async def _sync_no_schedule(self, key: str) -> None:
        """Keep the node's NoSchedule taints equal to what its conditions and spec say."""
        node = self.nodes.get(key)
        if node is None:
            return
        want = self._wanted_no_schedule(node)
        have = {t["key"] for t in node_taints(node) if t.get("effect") == "NoSchedule" and t.get("key")
                in MANAGED_NO_SCHEDULE}
        if want == have:
            return

        def edit(n: Obj) -> bool:
            want_now = self._wanted_no_schedule(n)
            taints = node_taints(n)
            kept = [t for t in taints if not (t.get("effect") == "NoSchedule" and t.get("key") in MANAGED_NO_SCHEDULE
                                              and t.get("key") not in want_now)]
            present = {t.get("key") for t in kept if t.get("effect") == "NoSchedule"}
            added = [{"key": k, "effect": "NoSchedule"} for k in sorted(want_now - present)]
            if len(kept) == len(taints) and not added:
                return False
            n.setdefault("spec", {})["taints"] = kept + added
            return True

        await self._update_node(key, edit)

    @staticmethod
    def _wanted_no_schedule(node: Obj) -> set[str]:
        want = set()
        for cond in (node.get("status") or {}).get("conditions") or ():
            key = NO_SCHEDULE_TAINTS.get((cond.get("type"), cond.get("status")))
            if key:
                want.add(key)
        if is_node_unschedulable(node):
            want.add(UNSCHEDULABLE)
        return want

    # ------------------------------------------------------------------ health

    async def monitor_node_health(self) -> None:
        now = self.clock.now()
        zone_conditions: dict[str, list[str]] = {}
        nodes = self.nodes.list()
        for i, node in enumerate(nodes):
            if i % YIELD_EVERY == YIELD_EVERY - 1:
                await asyncio.sleep(0)  # a pass over thousands of nodes must not stall the loop
            name = node["metadata"]["name"]
            if name not in self._registered:
                self._registered.add(name)
                if self.recorder is not None:
                    self.recorder.event(node, "Normal", "RegisteredNode",
                                        f"Node {name} event: Registered Node {name} in Controller")
            observed = self._ready_status(node)
            try:
                current_node = await self._update_health(node, now)
            except StatusError as err:
                log.warning("%s: updating health of node %s: %s", self.name, name, err)
                current_node = node
            current = self._ready_status(current_node)
            labels = node["metadata"].get("labels") or {}
            if EXCLUDE_DISRUPTION_LABEL not in labels:
                zone_conditions.setdefault(node_zone_key(node), []).append(current)
            if current == "":
                continue
            if current != "True" and observed == "True" and self.recorder is not None:
                self.recorder.event(current_node, "Normal", "NodeNotReady",
                                    f"Node {name} status is now: NodeNotReady")
            self._process_taint_eviction(current_node, current)
            if current != "True":
                await self._mark_pods_not_ready(name)
        self._handle_disruption(zone_conditions, nodes)
        self._wake.set()

    @staticmethod
    def _ready_status(node: Obj) -> str:
        cond = get_condition(node.get("status"), "Ready")
        return (cond.get("status") or "") if cond else ""

    def _lease_renew(self, name: str) -> str:
        lease = self.leases.get_by_name(NODE_LEASE_NAMESPACE, name)
        return str(((lease or {}).get("spec") or {}).get("renewTime") or "")

    async def _update_health(self, node: Obj, now: float) -> Obj:
        """tryUpdateNodeHealth: refresh the probe time on any sign of life; past the grace, mark Unknown."""
        name = node["metadata"]["name"]
        ready = get_condition(node.get("status"), "Ready")
        heartbeat = str((ready or {}).get("lastHeartbeatTime") or "")
        renew = self._lease_renew(name)
        saved = self.health.get(name)
        if saved is None:
            saved = self.health[name] = _Health(now, heartbeat, renew, ready is not None)
        else:
            if heartbeat != saved.heartbeat or (ready is not None) != saved.had_ready:
                saved.probe, saved.heartbeat, saved.had_ready = now, heartbeat, ready is not None
            if renew and renew != saved.renew:
                saved.probe, saved.renew = now, renew
        grace = self.grace_period if ready is not None else self.startup_grace_period
        if now <= saved.probe + grace:
            return node
        return await self._mark_unknown(name, now) or node

    async def _mark_unknown(self, name: str, now: float) -> Obj | None:
        stamp = format_time(now)

        async def attempt() -> Obj | None:
            try:
                live = await self.client.get("nodes", name)
            except StatusError as err:
                if is_not_found(err):
                    return None
                raise
            # Re-check against what we just read: the kubelet may have come back meanwhile.
            saved = self.health.get(name)
            ready = get_condition(live.get("status"), "Ready")
            if saved is not None and ready is not None and str(ready.get("lastHeartbeatTime") or "") != saved.heartbeat:
                return live
            new = deep_copy(live)
            status = new.setdefault("status", {})
            changed = False
            for cond_type in KUBELET_CONDITIONS:
                cond = get_condition(status, cond_type)
                if cond is None:
                    if cond_type != "Ready":
                        continue
                    status.setdefault("conditions", []).append({
                        "type": "Ready", "status": "Unknown", "reason": NEVER_UPDATED_REASON,
                        "message": NEVER_UPDATED_MESSAGE,
                        "lastHeartbeatTime": live["metadata"].get("creationTimestamp") or stamp,
                        "lastTransitionTime": stamp})
                    changed = True
                elif cond.get("status") != "Unknown":
                    cond.update(status="Unknown", reason=STATUS_UNKNOWN_REASON, message=STATUS_UNKNOWN_MESSAGE,
                                lastTransitionTime=stamp)
                    changed = True
            if not changed:
                return live
            log.info("%s: node %s stopped posting status; marking it Unknown", self.name, name)
            return await self.client.update_status(new)

        return await retry_on_conflict(attempt, clock=self.clock)

    async def _mark_pods_not_ready(self, node_name: str) -> None:
        """MarkPodsNotReady: pods on a node that is not Ready are not ready either."""
        for pod in self.pods.list_by_index(self.pod_index, node_name):
            cond = get_condition(pod.get("status"), "Ready")
            if cond is None or cond.get("status") == "False" or pod["metadata"].get("deletionTimestamp"):
                continue
            new = deep_copy(pod)
            set_condition(new["status"], "Ready", "False", now=self.clock.now())
            try:
                written = await self.client.update_status(new)
            except StatusError as err:
                if is_not_found(err) or is_conflict(err):
                    continue  # gone, or changed: the next pass looks again
                raise
            if self.recorder is not None:
                self.recorder.event(written, "Warning", "NodeNotReady", "Node is not ready")

    # ------------------------------------------------------------------ NoExecute taints (rate limited)

    def _process_taint_eviction(self, node: Obj, ready: str) -> None:
        name = node["metadata"]["name"]
        zone = node_zone_key(node)
        keys = {t.get("key") for t in no_execute_taints(node)}
        if ready == "True":
            self.taint_queue.get(zone, {}).pop(name, None)
            if keys & {UNREACHABLE, NOT_READY}:
                self.queue.add(f"noexecute:{name}")
            return
        want, other = (NOT_READY, UNREACHABLE) if ready == "False" else (UNREACHABLE, NOT_READY)
        if other in keys:
            self.queue.add(f"noexecute:{name}")  # swap straight away, as upstream
        elif want not in keys:
            self.taint_queue.setdefault(zone, {})[name] = None

    async def _tainting_loop(self) -> None:
        """doNoExecuteTaintingPass: taint queued nodes as each zone's limiter admits them."""
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                await self._tainting_pass()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001
                log.exception("%s: tainting pass failed", self.name)

    async def _tainting_pass(self) -> None:
        now = self.clock.now()
        next_wake: float | None = None
        for zone, queue in self.taint_queue.items():
            limiter = self.limiters.setdefault(zone, _TokenBucket(self.eviction_qps, now))
            while queue:
                if not limiter.try_accept(now):
                    wait = limiter.wait(now)
                    if wait is not None:
                        next_wake = wait if next_wake is None else min(next_wake, wait)
                    break
                name = next(iter(queue))
                del queue[name]
                await self._apply_no_execute(name)
        if self._taint_timer is not None:
            self._taint_timer.cancel()
            self._taint_timer = None
        if next_wake is not None:
            self._taint_timer = self.clock.call_later(max(next_wake, 0.001), self._wake.set)

    async def _apply_no_execute(self, name: str) -> None:
        """Swap the node's NoExecute taint to match its Ready condition now (none when Ready)."""
        stamp = format_time(self.clock.now())

        def edit(n: Obj) -> bool:
            ready = self._ready_status(n)
            want = {"False": NOT_READY, "Unknown": UNREACHABLE}.get(ready)
            taints = node_taints(n)
            kept = [t for t in taints if not (t.get("effect") == "NoExecute" and t.get("key") != want
                                              and t.get("key") in (UNREACHABLE, NOT_READY))]
            if want and not any(t.get("effect") == "NoExecute" and t.get("key") == want for t in kept):
                kept.append({"key": want, "effect": "NoExecute", "timeAdded": stamp})
            if kept == taints:
                return False
            n.setdefault("spec", {})["taints"] = kept
            return True

        await self._update_node(name, edit)

    async def _update_node(self, name: str, edit: Any) -> None:
        async def attempt() -> None:
            try:
                live = await self.client.get("nodes", name)
            except StatusError as err:
                if is_not_found(err):
                    return
                raise
            new = deep_copy(live)
            if edit(new):
                await self.client.update(new)

        await retry_on_conflict(attempt, clock=self.clock)

    # ------------------------------------------------------------------ zones

    def compute_zone_state(self, conditions: list[str]) -> str:
        ready = sum(1 for c in conditions if c == "True")
        not_ready = len(conditions) - ready
        if ready == 0 and not_ready > 0:
            return FULL
        if not_ready > 2 and not_ready / len(conditions) >= self.unhealthy_zone_threshold:
            return PARTIAL
        return NORMAL

    def _zone_qps(self, state: str, zone_size: int) -> float:
        if state == PARTIAL:
            return self.secondary_eviction_qps if zone_size > self.large_cluster_threshold else 0.0
        return self.eviction_qps

    def _handle_disruption(self, zone_conditions: dict[str, list[str]], nodes: list[Obj]) -> None:
        now = self.clock.now()
        new_states = {zone: self.compute_zone_state(conds) for zone, conds in zone_conditions.items()}
        all_full = all(s == FULL for s in new_states.values())
        for zone in new_states:
            if zone not in self.zone_states:
                self.zone_states[zone] = INITIAL
                self.limiters.setdefault(zone, _TokenBucket(self.eviction_qps, now))
        for zone in [z for z in self.zone_states if z not in zone_conditions]:
            del self.zone_states[zone]
            self.limiters.pop(zone, None)
            self.taint_queue.pop(zone, None)
        all_were_full = all(s == FULL for s in self.zone_states.values())
        if all_full and all_were_full:
            return
        if all_full:
            log.warning("%s: all nodes are not Ready; entering master disruption mode: no evictions", self.name)
            for node in nodes:
                if {t.get("key") for t in no_execute_taints(node)} & {UNREACHABLE, NOT_READY}:
                    self.queue.add(f"reachable:{node['metadata']['name']}")
            for zone in self.zone_states:
                self.limiters[zone].swap(0.0, now)
                self.taint_queue.get(zone, {}).clear()
                self.zone_states[zone] = FULL
            return
        if all_were_full:
            log.info("%s: some nodes are Ready again; exiting master disruption mode", self.name)
            for health in self.health.values():
                health.probe = now
            for zone, state in new_states.items():
                self.limiters[zone].swap(self._zone_qps(state, len(zone_conditions[zone])), now)
                self.zone_states[zone] = state
            return
        for zone, state in new_states.items():
            if self.zone_states.get(zone) != state:
                log.info("%s: zone %r is now in state %s", self.name, zone, state)
                self.limiters[zone].swap(self._zone_qps(state, len(zone_conditions[zone])), now)
                self.zone_states[zone] = state

    async def _remove_no_execute(self, name: str) -> None:
        def edit(n: Obj) -> bool:
            taints = node_taints(n)
            kept = [t for t in taints
                    if not (t.get("effect") == "NoExecute" and t.get("key") in (UNREACHABLE, NOT_READY))]
            if len(kept) == len(taints):
                return False
            n.setdefault("spec", {})["taints"] = kept
            return True

        await self._update_node(name, edit)


# ---------------------------------------------------------------------- taint-based eviction


def _landed(pod: Obj, default: float) -> float:
    """When the pod was bound to its node. A pod that arrives on an already tainted node gets its own
    tolerationSeconds, as upstream (which starts the countdown when it sees the pod there); counting
    from the taint instead evicted such a pod the moment it landed, and its controller's replacement
    landed and was evicted again at the same simulated instant, forever."""
    for c in (pod.get("status") or {}).get("conditions") or ():
        if c.get("type") == "PodScheduled" and c.get("status") == "True" and c.get("lastTransitionTime"):
            return parse_time(c["lastTransitionTime"])
    created = pod["metadata"].get("creationTimestamp")
    return parse_time(created) if created else default


class TaintEvictionController(Controller):
    name = "taint-eviction-controller"
    component = "taint-eviction-controller"
    workers = 4

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.nodes = self.informer("nodes")
        self.pods = self.informer("pods")
        self.pod_index = pods_by_node(self.pods)
        #: pod key -> simulated time its eviction countdown started.
        self.scheduled: dict[str, float] = {}
        self.nodes.add_event_handler(on_add=self._node_changed, on_update=self._node_updated)
        self.pods.add_event_handler(on_add=self._pod_changed, on_update=lambda old, new: self._pod_changed(new),
                                    on_delete=self._pod_deleted)

    def _node_updated(self, old: Obj, new: Obj) -> None:
        if no_execute_taints(old) != no_execute_taints(new):
            self._node_changed(new)

    def _node_changed(self, node: Obj) -> None:
        for key in self.pods.index_keys(self.pod_index, node["metadata"]["name"]):
            self.queue.add(key)

    def _pod_changed(self, pod: Obj) -> None:
        key = object_key(pod)
        node = self.nodes.get((pod.get("spec") or {}).get("nodeName") or "")
        if key in self.scheduled or (node is not None and no_execute_taints(node)):
            self.queue.add(key)

    def _pod_deleted(self, pod: Obj) -> None:
        self.scheduled.pop(object_key(pod), None)

    def _cancel(self, key: str, pod: Obj) -> None:
        if self.scheduled.pop(key, None) is not None and self.recorder is not None:
            self.recorder.event(pod, "Normal", "TaintManagerEviction", f"Cancelling deletion of Pod {key}")

    async def sync(self, key: str) -> float | None:
        pod = self.pods.get(key)
        if pod is None or pod["metadata"].get("deletionTimestamp"):
            self.scheduled.pop(key, None)
            return None
        node = self.nodes.get((pod.get("spec") or {}).get("nodeName") or "")
        taints = no_execute_taints(node) if node is not None else []
        if not taints:
            self._cancel(key, pod)
            return None
        seconds = no_execute_toleration_seconds(taints, (pod.get("spec") or {}).get("tolerations"))
        if seconds is None:
            self._cancel(key, pod)
            return None
        now = self.clock.now()
        start = self.scheduled.get(key)
        if start is None:
            added = [parse_time(t["timeAdded"]) for t in taints if t.get("timeAdded")]
            start = self.scheduled[key] = max(min(added) if added else now, _landed(pod, now))
        due = start + seconds
        if now < due:
            return due - now
        await self._evict(key, pod)
        return None

    async def _evict(self, key: str, pod: Obj) -> None:
        if self.recorder is not None:
            self.recorder.event(pod, "Normal", "TaintManagerEviction", f"Marking for deletion Pod {key}")
        new = deep_copy(pod)
        if set_condition(new.setdefault("status", {}), "DisruptionTarget", "True", "DeletionByTaintManager",
                         "Taint manager: deleting due to NoExecute taint", self.clock.now()):
            try:
                await self.client.update_status(new)
            except StatusError as err:
                if is_not_found(err):
                    self.scheduled.pop(key, None)
                    return
                if not is_conflict(err):
                    raise
        meta = pod["metadata"]
        try:
            await self.client.delete("pods", meta["name"], meta.get("namespace"),
                                     preconditions={"uid": meta.get("uid", "")})
        except StatusError as err:
            if not (is_not_found(err) or is_conflict(err)):
                raise
        self.scheduled.pop(key, None)
