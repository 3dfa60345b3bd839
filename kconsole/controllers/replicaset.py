"""The ReplicaSet controller: keep ``spec.replicas`` pods matching the selector alive.

upstream's pkg/controller/replicaset: pods are claimed (orphans adopted, non-matching released),
creations are batched 1, 2, 4, ... and guarded by expectations so a lagging informer never leads
to double creation, scale-down picks victims by :func:`rank_for_deletion`, and the status counts
replicas, fully labelled, ready and available (``minReadySeconds``) pods.
"""

from __future__ import annotations

import logging
from typing import Any

from kconsole.client import StatusError, is_conflict, is_not_found
from kconsole.controllers.base import Controller, ControllerContext
from kconsole.controllers.expectations import ExpectationHandlers, Expectations
from kconsole.controllers.podcontrol import (
    BURST_REPLICAS,
    CLAIM_INDEXERS,
    CONTROLLER_UID_INDEX,
    active_pods,
    claim,
    create_pod,
    delete_pod,
    live_owner_key,
    owned_and_orphans,
    pod_from_template,
    rank_for_deletion,
    requeue_controllers,
    selector_of,
    slow_start_batch,
    template_labels,
    with_kind,
)
from kconsole.objects.meta import (
    controller_of,
    deep_copy,
    generation,
    get_condition,
    is_being_deleted,
    labels,
    name,
    namespace,
    object_key,
    parse_time,
    remove_condition,
    set_condition,
    uid,
)
from kconsole.objects.pod import is_pod_active, is_pod_ready
from kconsole.objects.selectors import LabelSelector, SelectorError

log = logging.getLogger(__name__)

Obj = dict[str, Any]

class _PodFacts:
    """One candidate pod as a sync of one ReplicaSet sees it; valid while the pod object, the
    selector and the template's labels are the same ones."""

    __slots__ = ("pod", "selector", "owner_uid", "wanted", "active", "owned", "matches", "fully_labeled",
                 "ready", "_ready_since")

    def __init__(self, pod: Obj, selector: LabelSelector, owner_uid: str, wanted: dict[str, str]) -> None:
        self.pod = pod
        self.selector = selector
        self.owner_uid = owner_uid
        self.wanted = wanted
        self.active = is_pod_active(pod)
        ref = controller_of(pod)
        self.owned = ref is not None and ref.get("uid") == owner_uid
        self.matches = selector.matches_object(pod)
        have = labels(pod)
        self.fully_labeled = all(have.get(k) == v for k, v in wanted.items())
        self.ready = is_pod_ready(pod)
        self._ready_since: float | None = None

    def available(self, min_ready: float, now: float) -> bool:
        """is_pod_available, with the Ready transition time parsed once per pod object."""
        if not self.ready:
            return False
        if min_ready <= 0:
            return True
        if self._ready_since is None:
            since = (get_condition(self.pod.get("status"), "Ready") or {}).get("lastTransitionTime")
            self._ready_since = parse_time(since) if since else float("inf")
        return self._ready_since + min_ready <= now


class ReplicaSetController(ExpectationHandlers, Controller):
    name = "replicaset"
    component = "replicaset-controller"
    workers = 5

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.expectations = Expectations(ctx.clock)
        #: ReplicaSet key -> id(pod) -> what its last sync worked out about that pod object.
        self._facts: dict[str, dict[int, _PodFacts]] = {}
        self.rs_informer = self.informer("replicasets")
        self.pod_informer = self.informer("pods", indexers=CLAIM_INDEXERS)
        self.rs_informer.add_event_handler(on_add=self.enqueue, on_update=self._rs_updated,
                                           on_delete=self._rs_deleted)
        self.pod_informer.add_event_handler(on_add=self._pod_added, on_update=self._pod_updated,
                                            on_delete=self._pod_deleted)

    # ------------------------------------------------------------------ handlers

    def _rs_updated(self, old: Obj, cur: Obj) -> None:
        self.enqueue(cur)

    def _rs_deleted(self, rs: Obj) -> None:
        key = object_key(rs)
        self.expectations.forget(key)
        self._facts.pop(key, None)
        self.queue.add(key)

    def _owner_key(self, pod: Obj) -> str | None:
        return live_owner_key(pod, "ReplicaSet", self.rs_informer)

    def _matching_sets(self, pod: Obj) -> list[str]:
        keys = []
        pod_labels = labels(pod)
        if not pod_labels:
            return keys
        for rs in self.rs_informer.list_by_index("namespace", namespace(pod)):
            try:
                if selector_of(rs).matches(pod_labels):
                    keys.append(object_key(rs))
            except SelectorError:
                continue
        return keys

    def _pod_added(self, pod: Obj) -> None:
        if is_being_deleted(pod):
            self._pod_deleted(pod)
            return
        key = self._owner_key(pod)
        if key is not None:
            self._owned_pod_seen(key, pod)
            return
        if controller_of(pod) is None:
            for k in self._matching_sets(pod):
                self.queue.add(k)

    def _pod_updated(self, old: Obj, cur: Obj) -> None:
        if old is cur or old["metadata"].get("resourceVersion") == cur["metadata"].get("resourceVersion"):
            return
        labels_changed = labels(old) != labels(cur)
        if is_being_deleted(cur):
            self._pod_deleted(cur)
            if labels_changed:
                self._pod_deleted(old)
            return
        ref_changed, key = requeue_controllers(self.queue, old, cur, self._owner_key)
        if controller_of(cur) is not None:
            if key is not None:
                rs = self.rs_informer.get(key)
                min_ready = int(((rs or {}).get("spec") or {}).get("minReadySeconds") or 0)
                if min_ready > 0 and not is_pod_ready(old) and is_pod_ready(cur):
                    # Re-check availability once minReadySeconds have passed (plus upstream's 1 s).
                    self.queue.add_after(key, min_ready + 1)
            return
        if labels_changed or ref_changed:
            for k in self._matching_sets(cur):
                self.queue.add(k)

    # ------------------------------------------------------------------ sync

    async def sync(self, key: str) -> float | None:
        cached = self.rs_informer.get(key)
        if cached is None:
            self.expectations.forget(key)
            self._facts.pop(key, None)
            return None
        rs = with_kind(cached, "apps/v1", "ReplicaSet")
        try:
            selector = selector_of(rs)
        except SelectorError as err:
            log.error("replicaset %s: invalid selector: %s", key, err)
            return None
        needs_sync = self.expectations.satisfied(key)
        candidates = [f for f in self._facts_for(key, rs, selector) if f.active]
        if any(f.owned != f.matches for f in candidates):  # an orphan to adopt or a pod to release
            pods = await claim(self.client, rs, [f.pod for f in candidates], selector, "pods")
            facts = self._facts_for(key, rs, selector, pods)
        else:  # what claim() would answer: the owned pods, all matching; orphans that do not match stay
            facts = [f for f in candidates if f.owned]
            pods = [f.pod for f in facts]
        manage_err: Exception | None = None
        diff = 0
        if needs_sync and not is_being_deleted(rs):
            diff = len(pods) - int(rs["spec"].get("replicas", 1))
            manage_err = await self._manage(rs, key, pods, diff)
        status = self._status(rs, facts, manage_err, diff)
        updated = await self._write_status(rs, status)
        if manage_err is not None:
            raise manage_err
        min_ready = int(rs["spec"].get("minReadySeconds") or 0)
        st = updated.get("status") or {}
        if (min_ready > 0 and st.get("readyReplicas", 0) == int(rs["spec"].get("replicas", 1))
                and st.get("availableReplicas", 0) != int(rs["spec"].get("replicas", 1))):
            return float(min_ready)
        return None

    async def _manage(self, rs: Obj, key: str, pods: list[Obj], diff: int) -> Exception | None:
        if diff < 0:
            n = min(-diff, BURST_REPLICAS)
            self.expectations.expect_creations(key, n)
            template = rs["spec"].get("template") or {}

            async def create(_: int) -> None:
                await create_pod(self.client, self.recorder, rs, pod_from_template(template, rs))

            ok, err = await slow_start_batch(n, create)
            if ok < n:
                self.expectations.lower_creations(key, n - ok)
            return err
        if diff > 0:
            n = min(diff, BURST_REPLICAS)
            victims = pods if n >= len(pods) else rank_for_deletion(
                pods, self._related_pods(rs, pods), self.clock.now())[:n]
            self.expectations.expect_deletions(key, [object_key(p) for p in victims])
            first: Exception | None = None
            for pod in victims:
                try:
                    gone = await delete_pod(self.client, self.recorder, rs, pod)
                except StatusError as err:
                    self.expectations.deletion_observed(key, object_key(pod))
                    first = first or err
                    continue
                if not gone:
                    self.expectations.deletion_observed(key, object_key(pod))
            return first
        return None

    def _related_pods(self, rs: Obj, pods: list[Obj]) -> list[Obj]:
        """Pods of every ReplicaSet sharing this one's controller (a Deployment's other revisions)."""
        owner = controller_of(rs)
        if owner is None:
            return pods
        related: list[Obj] = []
        for other in self.rs_informer.list_by_index("namespace", namespace(rs)):
            ref = controller_of(other)
            if ref is not None and ref.get("uid") == owner.get("uid"):
                related.extend(active_pods(self.pod_informer.list_by_index(CONTROLLER_UID_INDEX, uid(other))))
        return related

    def _facts_for(self, key: str, rs: Obj, selector: LabelSelector,
                   pods: list[Obj] | None = None) -> list[_PodFacts]:
        """What a sync needs of each candidate pod (``pods``, else owned ones and orphans), reusing
        what the previous sync worked out for the very same pod objects: cache objects are replaced,
        never changed, so a pod that did not change since costs a lookup, not a recount."""
        if pods is None:
            pods = owned_and_orphans(self.pod_informer, rs)
        owner_uid = uid(rs)
        wanted = template_labels(rs["spec"].get("template") or {})
        before = self._facts.get(key, {})
        now: dict[int, _PodFacts] = {}
        out = []
        for pod in pods:
            f = before.get(id(pod))
            if f is None or f.pod is not pod or f.selector is not selector or f.owner_uid != owner_uid \
                    or (f.wanted is not wanted and f.wanted != wanted):
                f = _PodFacts(pod, selector, owner_uid, wanted)
            now[id(pod)] = f
            out.append(f)
        self._facts[key] = now
        return out

    def _status(self, rs: Obj, facts: list[_PodFacts], err: Exception | None, diff: int) -> Obj:
        min_ready = float(rs["spec"].get("minReadySeconds") or 0)
        now = self.clock.now()
        status: Obj = {"replicas": len(facts)}
        counts = {
            "fullyLabeledReplicas": sum(1 for f in facts if f.fully_labeled),
            "readyReplicas": sum(1 for f in facts if f.ready),
            "availableReplicas": sum(1 for f in facts if f.available(min_ready, now)),
        }
        status.update({k: v for k, v in counts.items() if v})
        if generation(rs):
            status["observedGeneration"] = generation(rs)
        old_conds = deep_copy((rs.get("status") or {}).get("conditions") or [])
        if old_conds:
            status["conditions"] = old_conds
        if err is not None and diff != 0:
            reason = "FailedCreate" if diff < 0 else "FailedDelete"
            message = err.message if isinstance(err, StatusError) else str(err)
            set_condition(status, "ReplicaFailure", "True", reason, message, now=now)
        elif get_condition(status, "ReplicaFailure") is not None:
            remove_condition(status, "ReplicaFailure")
        if not status.get("conditions"):
            status.pop("conditions", None)
        return status

    async def _write_status(self, rs: Obj, status: Obj) -> Obj:
        if (rs.get("status") or {}) == status:
            return rs
        new = deep_copy(rs)
        new["status"] = status
        try:
            return await self.client.update_status(new)
        except StatusError as err:
            if is_not_found(err):
                return rs
            if not is_conflict(err):
                raise
        fresh = await self.client.get("replicasets", name(rs), namespace(rs))
        fresh["status"] = status
        return await self.client.update_status(fresh)
