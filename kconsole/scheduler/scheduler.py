"""The scheduler's run loop: informers feed the cache and queue; one pod at a time is placed.

A scheduling cycle (pop, PreFilter, Filter with the nodes-to-score cut-off, PostFilter, Score,
pick, assume, Reserve) runs without awaiting, so the cache cannot change under it. The binding
cycle then runs as its own task, as upstream's goroutine does: the next pod is scheduled while
the Binding is written, and already sees the assumed pod's resources. A failed bind forgets the
assumption and sends the pod back to the queue with back-off.

Failures are reported like upstream: a Warning ``FailedScheduling`` event and a ``PodScheduled``
condition (False, Unschedulable) with the same message; preemption nominates the pod to a node
through ``status.nominatedNodeName``. Every attempt also leaves a decision record
(:mod:`kconsole.scheduler.decisions`).
"""

from __future__ import annotations

import asyncio
import logging
import random
from itertools import compress, count, islice, repeat
from operator import eq
from collections.abc import Callable, Mapping
from typing import Any

from kconsole.client import EventRecorder, InformerFactory, SharedInformer
from kconsole.clock import Clock
from kconsole.scheduler.cache import Cache, NodeInfo
from kconsole.scheduler.config import SchedulerConfig
from kconsole.scheduler.decisions import MAX_SKIPPED_NAMES, DecisionRecorder, LazyRecord, build_record, record_name
from kconsole.scheduler.diagnosis import Diagnosis
from kconsole.scheduler.framework import ERROR, SUCCESS, UNRESOLVABLE, UNSCHEDULABLE, FilterOutcome, Framework
from kconsole.scheduler.framework import Handle, ScoreOutcome, Status
from kconsole.scheduler.matchers import LabelPredicate, label_selector, match_labels_selector
from kconsole.scheduler.podinfo import PodInfo
from kconsole.scheduler.queue import QueuedPodInfo, SchedulingQueue

log = logging.getLogger(__name__)

NO_NODES = "no nodes available to schedule pods"
#: Cycles run back to back before the loop yields. Yielding after every pod let a busy event loop
#: (1,000 kubelets, a 10,000-pod burst) pace scheduling at one pod per loop turn, ~70 ms each.
CYCLES_PER_TURN = 16
#: compiled default-spread selectors kept (per Service/ReplicaSet/StatefulSet version)
MAX_COMPILED_SELECTORS = 256
TERMINAL = ("Succeeded", "Failed")
#: Informers whose changes only move unschedulable pods back to the queue: (resource, cluster event,
#: on updates too). VolumeBinding reads the storage ones through the handle's informer factory.
WAKE_EVENTS = (
    ("poddisruptionbudgets", "PDB", False),
    ("persistentvolumeclaims", "PersistentVolumeClaim", True),
    ("persistentvolumes", "PersistentVolume", True),
    ("storageclasses", "StorageClass", True),
)


def _assigned(pod: Mapping[str, Any]) -> bool:
    return bool((pod.get("spec") or {}).get("nodeName"))


def _terminal(pod: Mapping[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") in TERMINAL


def _node_relevant(node: Mapping[str, Any]) -> tuple[Any, ...]:
    """The parts of a Node the scheduler reads; heartbeats that change nothing else are ignored."""
    meta = node.get("metadata") or {}
    status = node.get("status") or {}
    return (meta.get("labels"), node.get("spec"), status.get("allocatable"), status.get("capacity"),
            status.get("images"))


COMPONENT = "default-scheduler"


def scheduler_recorder(client: Any, clock: Clock, identity: str) -> EventRecorder:
    """Events as upstream's scheduler records them through events/v1: reportingController
    default-scheduler, reportingInstance ``default-scheduler-<host>`` (the host before the leader
    identity's '_') and no deprecatedSource host, so kubectl describe and get events say
    ``default-scheduler`` alone instead of naming the replica."""
    host = identity.split("_", 1)[0]
    return EventRecorder(client, clock, component=COMPONENT, instance=f"{COMPONENT}-{host}" if host else "")


class Scheduler:
    """kube-scheduler for one replica that currently leads."""

    def __init__(self, client: Any, clock: Clock, *, rng: random.Random, config: SchedulerConfig | None = None,
                 recorder: EventRecorder | None = None, identity: str = "") -> None:
        self.client = client
        self.clock = clock
        self.rng = rng
        self.config = config or SchedulerConfig()
        self.identity = identity
        self.recorder = recorder or scheduler_recorder(client, clock, identity)
        self._own_recorder = recorder is None
        self.cache = Cache()
        self.factory = InformerFactory(client)
        self.handle = Handle(cache=self.cache, rng=rng, client=client, recorder=self.recorder, clock=clock,
                             default_selector=self._default_selector, pdbs=self._pdbs, informers=self.factory)
        self.frameworks: dict[str, Framework] = {}
        for profile in self.config.profiles:
            self.frameworks[profile.scheduler_name] = Framework(profile, self.handle)
        first = self.frameworks[self.config.profiles[0].scheduler_name]
        assert first.queue_sort is not None
        self.queue = SchedulingQueue(
            clock, first.queue_sort.sort_key,  # type: ignore[attr-defined]
            initial_backoff=self.config.pod_initial_backoff, max_backoff=self.config.pod_max_backoff,
            max_unschedulable_duration=self.config.max_unschedulable_duration, interested=self._interested)
        #: set while no binding is being written; decision records wait for it (bindings first)
        self.binds_idle = asyncio.Event()
        self.binds_idle.set()
        self.records = DecisionRecorder(client, clock, enabled=self.config.decision_records,
                                        retain=self.config.decision_retain, idle=self.binds_idle)
        self.pods: SharedInformer = self.factory.informer("pods")
        self.nodes: SharedInformer = self.factory.informer("nodes")
        self.pdb_informer: SharedInformer = self.factory.informer("poddisruptionbudgets")
        self.namespaces: SharedInformer = self.factory.informer("namespaces")
        self.services: SharedInformer = self.factory.informer("services")
        self._selectors: dict[tuple[Any, Any, Any], LabelPredicate] = {}
        self.replicasets: SharedInformer = self.factory.informer("replicasets")
        self.statefulsets: SharedInformer = self.factory.informer("statefulsets")
        self.next_start = 0
        self._loop_task: asyncio.Task[None] | None = None
        self._binds: set[asyncio.Task[None]] = set()
        #: binding tasks waiting in PreBind for their volumes (not writing: they keep nothing waiting)
        self._volume_waits = 0
        self.scheduled = 0
        self.attempts = 0
        #: called after every attempt with (pod key, result, node); tests and benchmarks hook in here
        self.on_attempt: Callable[[str, str, str], None] | None = None

    # ----------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        self.pods.add_event_handler(self._pod_added, self._pod_updated, self._pod_deleted)
        self.nodes.add_event_handler(self._node_added, self._node_updated, self._node_deleted)
        self.namespaces.add_event_handler(lambda o: self._namespace(o, False), lambda a, b: self._namespace(b, False),
                                          lambda o: self._namespace(o, True))
        for resource, event, updates in WAKE_EVENTS:
            wake = self._waker(event)
            self.factory.informer(resource).add_event_handler(wake, wake if updates else None, None)
        await self.factory.start_all()
        await self.factory.wait_for_cache_sync()
        await self.records.load_existing()
        self.queue.start()
        self._loop_task = asyncio.get_running_loop().create_task(self._run(), name=f"scheduler:{self.identity}")

    async def stop(self) -> None:
        self.queue.close()
        if self._loop_task is not None:
            self._loop_task.cancel()
            try:
                await self._loop_task
            except asyncio.CancelledError:
                pass
            self._loop_task = None
        for t in list(self._binds):
            t.cancel()
        await asyncio.gather(*self._binds, return_exceptions=True)
        await self.factory.stop_all()
        await self.records.close()
        if self._own_recorder:
            await self.recorder.close()

    async def flush(self) -> None:
        """Wait for in-flight bindings (not those waiting for their volumes), records and events
        (tests and benchmarks)."""
        await self.binds_idle.wait()
        await self.records.flush()
        await self.recorder.flush()

    # ----------------------------------------------------------------- console views

    @property
    def decisions(self) -> list[dict[str, Any]]:
        """The most recent decision records, newest last (kept in memory; also stored via the API)."""
        return self.records.recent()

    def pending_reasons(self) -> dict[str, str]:
        """Pending pod key -> why it is waiting (the last FailedScheduling message, or its queue)."""
        return {q.key: q.message or f"waiting in {q.where or 'queue'}" for q in self.queue.pending()}

    # ----------------------------------------------------------------- informer handlers

    def _responsible(self, pod: Mapping[str, Any]) -> bool:
        return ((pod.get("spec") or {}).get("schedulerName") or "default-scheduler") in self.frameworks

    def _pod_added(self, pod: dict[str, Any]) -> None:
        if _assigned(pod):
            if not _terminal(pod):
                self._set_assigned(pod)
                self.queue.move_all("PodAdd")
            return
        if _terminal(pod) or not self._responsible(pod) or (pod.get("metadata") or {}).get("deletionTimestamp"):
            return
        if _gated(pod):
            return
        self._enqueue(pod)

    def _pod_updated(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        key = _key(new)
        if _assigned(new):
            if not _assigned(old):
                self.queue.delete(key)
                self._drop_nomination(key)
                self.records.set_pending(key, False)
            if _terminal(new):
                self.cache.remove_pod(key)
                self.queue.move_all("PodDelete")
                return
            self._set_assigned(new)
            self.queue.move_all("PodUpdate")
            return
        if _terminal(new) or not self._responsible(new):
            self.queue.delete(key)
            return
        if (new.get("metadata") or {}).get("deletionTimestamp") or _gated(new):
            self.queue.delete(key)
            return
        self._enqueue(new)

    def _pod_deleted(self, pod: dict[str, Any]) -> None:
        key = _key(pod)
        if self.cache.placed(key) is not None:
            self.cache.remove_pod(key)
            self.queue.move_all("PodDelete")
        self.queue.delete(key)
        self._drop_nomination(key)
        self.records.forget_pod(key)

    def _set_assigned(self, pod: dict[str, Any]) -> None:
        key = _key(pod)
        placed = self.cache.placed(key)
        uid = (pod.get("metadata") or {}).get("uid", "")
        node = pod["spec"]["nodeName"]
        if placed is not None and placed[1] == node and placed[0].uid == uid and self.cache.is_assumed(key):
            pi = placed[0]  # confirm the assumption without re-parsing the spec
            pi.pod = pod
            pi.node_name = node
            pi.deleting = bool((pod.get("metadata") or {}).get("deletionTimestamp"))
            self.cache.assumed.discard(key)
            return
        if placed is not None and placed[1] == node and placed[0].uid == uid and _same_for_scheduling(placed[0].pod, pod):
            _refresh_status(placed[0], pod)
            return
        self.cache.set_pod(PodInfo(pod))

    def _enqueue(self, pod: dict[str, Any]) -> None:
        try:
            pi = PodInfo(pod)
        except ValueError as err:
            log.warning("scheduler: pod %s has an invalid spec: %s", _key(pod), err)
            return
        self.queue.add(pi)
        self.records.set_pending(pi.key, True)
        self._drop_nomination(pi.key)
        if pi.nominated_node:
            self.handle.nominated.setdefault(pi.nominated_node, {})[pi.key] = pi

    def _drop_nomination(self, key: str) -> None:
        for node in list(self.handle.nominated):
            pods = self.handle.nominated[node]
            if pods.pop(key, None) is not None and not pods:
                del self.handle.nominated[node]

    def _node_added(self, node: dict[str, Any]) -> None:
        self.cache.add_node(node)
        self.queue.move_all("NodeAdd")

    def _node_updated(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        if _node_relevant(old) == _node_relevant(new):
            return
        self.cache.update_node(new)
        self.queue.move_all("NodeUpdate")

    def _node_deleted(self, node: dict[str, Any]) -> None:
        self.cache.remove_node((node.get("metadata") or {}).get("name", ""))

    def _namespace(self, ns: dict[str, Any], deleted: bool) -> None:
        self.cache.set_namespace(ns, deleted)
        self.queue.move_all("Namespace")

    def _waker(self, event: str) -> Callable[..., None]:
        def wake(*_objs: Any) -> None:
            self.queue.move_all(event)
        return wake

    def _interested(self, q: QueuedPodInfo, event: str) -> bool:
        fw = self.frameworks.get(q.pod.scheduler_name)
        return fw is None or event in fw.events_for(q.unschedulable_plugins)

    def _pdbs(self) -> list[dict[str, Any]]:
        return self.pdb_informer.list()

    def _default_selector(self, pod: PodInfo) -> LabelPredicate | None:
        """Upstream's DefaultSelector: the selectors of Services and the owning ReplicaSet/StatefulSet."""
        preds: list[LabelPredicate] = []
        for svc in self.services.list_by_index("namespace", pod.namespace):
            sel = (svc.get("spec") or {}).get("selector")
            if sel and all(pod.labels.get(k) == v for k, v in sel.items()):
                preds.append(self._compiled(svc, sel, match_labels_selector))
        if pod.owner is not None and pod.owner[0] in ("ReplicaSet", "StatefulSet"):
            inf = self.replicasets if pod.owner[0] == "ReplicaSet" else self.statefulsets
            owner = inf.get(f"{pod.namespace}/{pod.owner[1]}")
            if owner is not None and (owner.get("spec") or {}).get("selector"):
                preds.append(self._compiled(owner, owner["spec"]["selector"], label_selector))
        if not preds:
            return None
        if len(preds) == 1:
            return preds[0]
        return lambda labels: all(p(labels) for p in preds)

    def _compiled(self, obj: Mapping[str, Any], selector: Any, compile_: Callable[[Any], LabelPredicate]) -> LabelPredicate:
        """``compile_(selector)`` once per version of ``obj``: the pods of one ReplicaSet arrive
        by the thousand and each compiled its selector again."""
        meta = obj.get("metadata") or {}
        key = (meta.get("uid"), meta.get("resourceVersion"), compile_)
        if not key[0] or not key[1]:
            return compile_(selector)
        got = self._selectors.get(key)
        if got is None:
            if len(self._selectors) >= MAX_COMPILED_SELECTORS:
                del self._selectors[next(iter(self._selectors))]
            got = self._selectors[key] = compile_(selector)
        return got

    # ----------------------------------------------------------------- the loop

    async def _run(self) -> None:
        run = 0
        while True:
            q = await self.queue.pop()
            if q is None:
                return
            try:
                await self.schedule_one(q)
            except asyncio.CancelledError:
                raise
            except Exception as err:
                log.exception("scheduler: attempt for %s failed", q.key)
                q.message = f"scheduler error: {err}"
                self.queue.requeue_failed(q, self.queue.scheduling_cycle, frozenset(), error=True)
            run += 1
            if run >= CYCLES_PER_TURN:
                run = 0
                await asyncio.sleep(0)

    async def schedule_one(self, q: QueuedPodInfo) -> None:
        """One scheduling cycle for ``q``; the binding cycle continues in its own task."""
        pod = q.pod
        fw = self.frameworks[pod.scheduler_name]
        if pod.deleting:
            self.queue.done(pod.key)
            return
        self.attempts += 1
        cycle = self.queue.scheduling_cycle
        state: dict[str, Any] = {}
        nodes = self.cache.node_list()
        if not nodes:
            await self._fail(q, fw, Diagnosis(0), NO_NODES, cycle, None, None, 0)
            return
        pre, skipped, names, narrowed_by = fw.run_pre_filter(state, pod)
        state["__skipped__"] = skipped
        if pre is not None:
            outcome = FilterOutcome([], {n.name: pre for n in nodes}, len(nodes), skipped, pre)
            diag = Diagnosis(len(nodes), outcome.failed, pre_filter_msg=pre.message,
                             unschedulable_plugins={pre.plugin})
            await self._fail(q, fw, diag, "", cycle, outcome, state, len(nodes))
            return
        outcome = self._nominated_fast_path(fw, state, pod, skipped)
        outcome_start = -1
        if outcome is None and names is not None:
            # PreFilterResult: only the named nodes are filtered (a DaemonSet pod's one node, not all).
            named = [info for info in (self.cache.nodes.get(n) for n in sorted(names))
                     if info is not None and info.node is not None]
            outcome = fw.find_feasible(state, pod, named, 0, skipped) if named else \
                FilterOutcome([], {}, 0, skipped)
            outcome.named = len(named)
            if not outcome.feasible:  # upstream's diagnosis: every node left out, with the plugins' names
                absent = Status(UNRESOLVABLE, f"node(s) didn't satisfy plugin(s) [{' '.join(narrowed_by)}]",
                                plugin=narrowed_by[0])
                for n in nodes:
                    if n.name not in names:
                        outcome.failed[n.name] = absent
        elif outcome is None:
            start = self.next_start % len(nodes)
            outcome = fw.find_feasible(state, pod, nodes, start, skipped)
            self.next_start = (start + outcome.processed) % len(nodes)
            outcome_start = start
        if not outcome.feasible:
            diag = Diagnosis(len(nodes), outcome.failed,
                             unschedulable_plugins={st.plugin for st in outcome.failed.values()})
            await self._fail(q, fw, diag, "", cycle, outcome, state, len(nodes))
            return
        scored: ScoreOutcome | None = None
        if len(outcome.feasible) == 1:
            chosen = outcome.feasible[0]
        else:
            scored, ranks = fw.run_scores(state, pod, outcome.feasible)
            chosen = self._select_host(scored.nodes, ranks)
        self.cache.assume(pod, chosen.name)
        st = fw.run_reserve(state, pod, chosen.name)
        if st is not None:
            self.cache.forget(pod)
            diag = Diagnosis(len(nodes), {chosen.name: st}, unschedulable_plugins={st.plugin})
            await self._fail(q, fw, diag, "", cycle, outcome, state, len(nodes))
            return
        self.queue.done(pod.key)
        self._drop_nomination(pod.key)
        skipped_names = self._skipped_names(nodes, outcome, outcome_start)
        task = asyncio.get_running_loop().create_task(
            self._bind(q, fw, state, pod, chosen.name, outcome, scored, len(nodes), skipped_names))
        self._binds.add(task)
        self.binds_idle.clear()
        task.add_done_callback(self._bind_done)

    def _bind_done(self, task: asyncio.Task[None]) -> None:
        self._binds.discard(task)
        self._writing_changed()

    def _writing_changed(self) -> None:
        if len(self._binds) > self._volume_waits:
            self.binds_idle.clear()
        else:
            self.binds_idle.set()

    def _nominated_fast_path(self, fw: Framework, state: dict[str, Any], pod: PodInfo,
                             skipped: frozenset[str]) -> FilterOutcome | None:
        """A pod nominated by preemption tries its nominated node first, as upstream."""
        if not pod.nominated_node:
            return None
        node = self.cache.nodes.get(pod.nominated_node)
        if node is None or node.node is None:
            return None
        passed, _ = fw.filter_nodes(state, pod, [node], skipped)
        if not passed:
            return None
        return FilterOutcome(passed, {}, 1, skipped)

    def _skipped_names(self, nodes: list[NodeInfo], outcome: FilterOutcome, start: int) -> list[str] | None:
        if not self.records.enabled or start < 0:
            return None
        n = len(nodes) - outcome.processed
        if n <= 0:
            return []
        if n > MAX_SKIPPED_NAMES:
            return None
        first = start + outcome.processed
        return [nodes[(first + i) % len(nodes)].name for i in range(n)]

    def _select_host(self, nodes: list[NodeInfo], ranks: list[int]) -> NodeInfo:
        best = max(ranks)
        ties = ranks.count(best)
        if ties == 1:
            return nodes[ranks.index(best)]
        k = self.rng.randrange(ties)  # the k-th of the tied nodes, k from the seeded RNG
        if ties == len(ranks):
            return nodes[k]
        return nodes[next(islice(compress(count(), map(eq, ranks, repeat(best))), k, None))]

    # ----------------------------------------------------------------- binding cycle

    async def _bind(self, q: QueuedPodInfo, fw: Framework, state: dict[str, Any], pod: PodInfo, node: str,
                    outcome: FilterOutcome, scored: ScoreOutcome | None, total: int,
                    skipped_names: list[str] | None) -> None:
        st = None
        pre_binds = fw.pre_binds_for(state, pod, node)
        if pre_binds:
            self._volume_waits += 1
            self._writing_changed()
            try:
                st = await fw.run_pre_bind(pre_binds, state, pod, node)
            finally:
                self._volume_waits -= 1
                self._writing_changed()
        if st is None:
            st = await fw.run_bind(state, pod, node)
        if st is None or st.code == SUCCESS:
            self.scheduled += 1
            self.recorder.event(pod.pod, "Normal", "Scheduled", f"Successfully assigned {pod.key} to {node}")
            self._record(q, fw, "Scheduled", node, "", outcome, scored, total, skipped_names)
            self.records.set_pending(pod.key, False)
            if self.on_attempt is not None:
                self.on_attempt(pod.key, "Scheduled", node)
            return
        fw.run_unreserve(state, pod, node)
        self.cache.forget(pod)
        message = st.message
        q.message = message
        self._record(q, fw, "Error", "", message, outcome, scored, total, skipped_names)
        self.recorder.event(pod.pod, "Warning", "FailedScheduling", message)
        live = self.pods.get(pod.key)
        if live is not None and not _assigned(live) and (live.get("metadata") or {}).get("uid") == pod.uid:
            self.queue.requeue_after_error(q)
        if self.on_attempt is not None:
            self.on_attempt(pod.key, "Error", "")

    # ----------------------------------------------------------------- failures

    async def _fail(self, q: QueuedPodInfo, fw: Framework, diag: Diagnosis, plain_message: str, cycle: int,
                    outcome: FilterOutcome | None, state: dict[str, Any] | None, total: int) -> None:
        pod = q.pod
        nominated = ""
        victims: list[str] = []
        if outcome is not None and state is not None and fw.post_filters:
            for pf in fw.post_filters:
                res = await pf.post_filter(state, pod, outcome.failed)  # type: ignore[attr-defined]
                if res.status.message:
                    diag.post_filter_msg = res.status.message
                if res.nominated_node:
                    nominated, victims = res.nominated_node, res.victims
                    break
        message = plain_message or diag.message
        q.message = message
        if nominated:
            pod.nominated_node = nominated
            self._drop_nomination(pod.key)
            self.handle.nominated.setdefault(nominated, {})[pod.key] = pod
        self._record(q, fw, "Unschedulable", "", message, outcome, None, total, None, nominated, victims)
        self.recorder.event(pod.pod, "Warning", "FailedScheduling", message)
        await self._patch_unschedulable(pod, message, nominated)
        self.queue.requeue_failed(q, cycle, frozenset(diag.unschedulable_plugins))
        if self.on_attempt is not None:
            self.on_attempt(pod.key, "Unschedulable", "")

    async def _patch_unschedulable(self, pod: PodInfo, message: str, nominated: str) -> None:
        status = pod.pod.get("status") or {}
        conds = status.get("conditions") or []
        cur = next((c for c in conds if c.get("type") == "PodScheduled"), None)
        same = (cur is not None and cur.get("status") == "False" and cur.get("reason") == "Unschedulable"
                and cur.get("message") == message)
        if same and (not nominated or status.get("nominatedNodeName") == nominated):
            return
        now = self.clock.rfc3339()
        cond = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message,
                "lastProbeTime": None,
                "lastTransitionTime": cur.get("lastTransitionTime") if cur and cur.get("status") == "False" else now}
        patch: dict[str, Any] = {"status": {"conditions": [c for c in conds if c.get("type") != "PodScheduled"] + [cond]}}
        if nominated:
            patch["status"]["nominatedNodeName"] = nominated
        try:
            await self.client.patch("pods", pod.name, patch, pod.namespace, subresource="status")
        except Exception as err:
            log.info("scheduler: cannot update status of %s: %s", pod.key, err)

    def _record(self, q: QueuedPodInfo, fw: Framework, result: str, node: str, message: str,
                outcome: FilterOutcome | None, scored: ScoreOutcome | None, total: int,
                skipped_names: list[str] | None, nominated: str = "", victims: list[str] | None = None) -> None:
        if not self.records.enabled:
            return
        pod = q.pod
        attempt = self.records.next_attempt(pod.key)
        now = self.clock.now()
        filter_names = fw.filter_names

        def build() -> dict[str, Any]:
            return build_record(
                namespace=pod.namespace, pod_name=pod.name, pod_uid=pod.uid, attempt=attempt,
                scheduler_name=fw.scheduler_name, time=self.clock.rfc3339(now), result=result, node=node,
                message=message, total_nodes=total, filtered=outcome, scored=scored, filter_plugins=filter_names,
                skipped_names=skipped_names, nominated_node=nominated, victims=victims)

        self.records.add_lazy(pod.namespace, record_name(pod.name, attempt), pod.key, LazyRecord(build))


def _gated(pod: Mapping[str, Any]) -> bool:
    """The SchedulingGates PreEnqueue plugin: a pod with scheduling gates is not tried until its
    last gate is removed (an update, which enqueues it then)."""
    return bool((pod.get("spec") or {}).get("schedulingGates"))


def _key(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}"


__all__ = ["Scheduler", "ERROR", "UNSCHEDULABLE", "Status"]


def _same_for_scheduling(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Whether a bound pod's update leaves everything the cache counts as it was (a kubelet's status
    write): then nothing on its node needs recounting."""
    om = old.get("metadata") or {}
    nm = new.get("metadata") or {}
    return (
        _same(old.get("spec"), new.get("spec"))
        and _same(om.get("labels"), nm.get("labels"))
        and om.get("deletionTimestamp") == nm.get("deletionTimestamp")
        and _same(om.get("ownerReferences"), nm.get("ownerReferences"))
    )


def _same(a: Any, b: Any) -> bool:
    return a is b or a == b


def _refresh_status(pi: PodInfo, pod: dict[str, Any]) -> None:
    """Take over the parts of PodInfo that come from the object's version and status."""
    meta = pod.get("metadata") or {}
    status = pod.get("status") or {}
    pi.pod = pod
    pi.resource_version = meta.get("resourceVersion", "")
    pi.nominated_node = status.get("nominatedNodeName") or ""
    pi.start_time = status.get("startTime") or meta.get("creationTimestamp") or ""
