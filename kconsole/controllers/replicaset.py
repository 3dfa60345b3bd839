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
    fully_labeled,
    live_owner_key,
    owned_and_orphans,
    pod_from_template,
    rank_for_deletion,
    requeue_controllers,
    selector_of,
    slow_start_batch,
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
    remove_condition,
    set_condition,
    uid,
)
from kconsole.objects.pod import is_pod_available, is_pod_ready
from kconsole.objects.selectors import SelectorError

log = logging.getLogger(__name__)

Obj = dict[str, Any]

class ReplicaSetController(ExpectationHandlers, Controller):
    name = "replicaset"
    component = "replicaset-controller"
    workers = 5

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.expectations = Expectations(ctx.clock)
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
            return None
        rs = with_kind(cached, "apps/v1", "ReplicaSet")
        try:
            selector = selector_of(rs)
        except SelectorError as err:
            log.error("replicaset %s: invalid selector: %s", key, err)
            return None
        needs_sync = self.expectations.satisfied(key)
        pods = active_pods(owned_and_orphans(self.pod_informer, rs))
        pods = await claim(self.client, rs, pods, selector, "pods")
        manage_err: Exception | None = None
        diff = 0
        if needs_sync and not is_being_deleted(rs):
            diff = len(pods) - int(rs["spec"].get("replicas", 1))
            manage_err = await self._manage(rs, key, pods, diff)
        status = self._status(rs, pods, manage_err, diff)
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

    def _status(self, rs: Obj, pods: list[Obj], err: Exception | None, diff: int) -> Obj:
        template = rs["spec"].get("template") or {}
        min_ready = float(rs["spec"].get("minReadySeconds") or 0)
        now = self.clock.now()
        status: Obj = {"replicas": len(pods)}
        counts = {
            "fullyLabeledReplicas": sum(1 for p in pods if fully_labeled(p, template)),
            "readyReplicas": sum(1 for p in pods if is_pod_ready(p)),
            "availableReplicas": sum(1 for p in pods if is_pod_available(p, min_ready, now)),
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
