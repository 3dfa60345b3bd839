"""The StatefulSet controller: pods with stable ordinal identities ``<set>-0``, ``<set>-1``, ...

upstream's pkg/controller/statefulset (stateful_set_control.updateStatefulSet):

* ``OrderedReady`` (the default) creates ordinal N only when 0..N-1 are Running and Ready, scales
  down from the highest ordinal one pod at a time and only while the others are healthy;
  ``Parallel`` creates and deletes without waiting;
* a failed or succeeded pod is deleted and recreated with the same name;
* each pod carries its identity: ``hostname`` = its name, ``subdomain`` = ``serviceName``, the
  labels ``statefulset.kubernetes.io/pod-name`` and ``apps.kubernetes.io/pod-index``, and for each
  of ``volumeClaimTemplates`` a volume of that name on the claim ``<template>-<set>-<ordinal>``,
  which is created before the pod when missing (createPersistentVolumeClaims: the template with the
  set's selector labels; event ``SuccessfulCreate`` "create Claim data-web-0 Pod web-0 in StatefulSet
  web success"); claims outlive their pods and the set unless ``persistentVolumeClaimRetentionPolicy``
  says ``whenDeleted: Delete``, which makes the set their owner, or ``whenScaled: Delete``, which makes a
  scaled-down pod their owner;
* revisions are ControllerRevisions ``<set>-<template hash>`` (upstream's getStatefulSetRevisions:
  a template equal to an old revision's re-uses it with the next revision number, as after ``kubectl
  rollout undo``; non-live ones beyond ``revisionHistoryLimit`` are deleted), named in each pod's
  ``controller-revision-hash`` label; a RollingUpdate replaces pods from the highest ordinal down to
  ``partition``, one at a time, waiting for each replacement to be Running and Ready, and a pod below
  the partition that is deleted comes back at the current revision; ``OnDelete`` waits for the user;
* status: replicas, readyReplicas, availableReplicas, currentReplicas, updatedReplicas,
  currentRevision, updateRevision, observedGeneration.

Events: ``SuccessfulCreate`` "create Pod web-0 in StatefulSet web successful" and
``SuccessfulDelete`` "delete Pod web-2 in StatefulSet web successful".
"""

from __future__ import annotations

import logging
import re
from typing import Any

from kconsole.client import StatusError, is_already_exists, is_not_found
from kconsole.controllers.base import Controller, ControllerContext
from kconsole.controllers.history import (
    HashCollision,
    collided,
    create_revision,
    delete_revision,
    equal_revision,
    history_limit,
    new_revision,
    next_revision,
    renumber_revision,
    revision_template,
    sort_revisions,
    template_hash,
)
from kconsole.controllers.podcontrol import (
    CLAIM_INDEXERS,
    CONTROLLER_UID_INDEX,
    claim,
    owned_and_orphans,
    pod_from_template,
    selector_of,
    with_kind,
)
from kconsole.objects.meta import (
    controller_of,
    deep_copy,
    generation,
    is_being_deleted,
    labels,
    name,
    namespace,
    owner_ref,
    uid,
)
from kconsole.objects.pod import is_pod_available, is_pod_ready
from kconsole.objects.selectors import SelectorError
from kconsole.objects.storage import claim_from_template

log = logging.getLogger(__name__)

Obj = dict[str, Any]

REVISION_LABEL = "controller-revision-hash"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"


def ordinal_of(sts: Obj, pod: Obj) -> int:
    """The pod's ordinal if its name is ``<set>-<n>``, else -1."""
    m = re.fullmatch(re.escape(name(sts)) + r"-(\d+)", name(pod))
    return int(m.group(1)) if m else -1


def _phase(pod: Obj) -> str:
    return (pod.get("status") or {}).get("phase") or "Pending"


def running_and_ready(pod: Obj) -> bool:
    return _phase(pod) == "Running" and is_pod_ready(pod)


def healthy(pod: Obj) -> bool:
    return running_and_ready(pod) and not is_being_deleted(pod)


def identity_pod(sts: Obj, ordinal: int, revision: str, template: Obj | None = None) -> Obj:
    """The pod for ``ordinal``: the template (the set's own, or a revision's) plus its identity and its
    claims' volumes."""
    pod_name = f"{name(sts)}-{ordinal}"
    pod = pod_from_template(sts["spec"].get("template") or {} if template is None else template, sts,
                            pod_name=pod_name)
    lbls = pod["metadata"].setdefault("labels", {})
    lbls.update({REVISION_LABEL: revision, POD_NAME_LABEL: pod_name, POD_INDEX_LABEL: str(ordinal)})
    pod["spec"]["hostname"] = pod_name
    if sts["spec"].get("serviceName"):
        pod["spec"]["subdomain"] = sts["spec"]["serviceName"]
    claims = claim_names(sts, ordinal)
    if claims:
        replaced = {volume for volume, _ in claims}
        pod["spec"]["volumes"] = [
            {"name": volume, "persistentVolumeClaim": {"claimName": claim}} for volume, claim in claims
        ] + [v for v in pod["spec"].get("volumes") or () if v.get("name") not in replaced]
    return pod


def claim_names(sts: Obj, ordinal: int) -> list[tuple[str, str]]:
    """(template name, claim ``<template>-<set>-<ordinal>``) for each of ``volumeClaimTemplates``."""
    templates = [(t.get("metadata") or {}).get("name") or "" for t in sts["spec"].get("volumeClaimTemplates") or ()]
    return [(t, f"{t}-{name(sts)}-{ordinal}") for t in templates]


def identity_claims(sts: Obj, ordinal: int) -> list[Obj]:
    """getPersistentVolumeClaims: each template as claim ``<template>-<set>-<ordinal>``, labelled with
    the set's selector labels; owned by the set when its retention policy deletes claims with it."""
    spec = sts["spec"]
    match_labels = (spec.get("selector") or {}).get("matchLabels") or {}
    owned = ((spec.get("persistentVolumeClaimRetentionPolicy") or {}).get("whenDeleted") == "Delete")
    owners = [owner_ref(sts)] if owned else None
    return [claim_from_template(template, claim_name, namespace(sts), labels=match_labels, owners=owners)
            for template, (_, claim_name) in zip(spec.get("volumeClaimTemplates") or (), claim_names(sts, ordinal))]


class StatefulSetController(Controller):
    name = "statefulset"
    component = "statefulset-controller"
    workers = 2

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.sts_informer = self.informer("statefulsets")
        self.pod_informer = self.informer("pods", indexers=CLAIM_INDEXERS)
        self.revision_informer = self.informer("controllerrevisions", indexers=CLAIM_INDEXERS)
        self.claim_informer = self.informer("persistentvolumeclaims")
        self.sts_informer.add_event_handler(**self.handlers())
        self.revision_informer.add_event_handler(on_delete=lambda r: self.enqueue_owner(r, "StatefulSet"))
        self.pod_informer.add_event_handler(on_add=self._pod_changed, on_update=lambda o, n: self._pod_changed(n),
                                            on_delete=self._pod_changed)

    def _pod_changed(self, pod: Obj) -> None:
        if controller_of(pod) is not None:
            self.enqueue_owner(pod, "StatefulSet")
            return
        for sts in self.sts_informer.list_by_index("namespace", namespace(pod)):
            self.enqueue(sts)

    # ------------------------------------------------------------------ sync

    async def sync(self, key: str) -> float | None:
        cached = self.sts_informer.get(key)
        if cached is None:
            return None
        sts = with_kind(cached, "apps/v1", "StatefulSet")
        try:
            selector = selector_of(sts)
        except SelectorError as err:
            log.error("statefulset %s: invalid selector: %s", key, err)
            return None
        candidates = owned_and_orphans(self.pod_informer, sts)
        pods = await claim(self.client, sts, candidates, selector, "pods",
                           match=lambda p: selector.matches_object(p) and ordinal_of(sts, p) >= 0)
        if is_being_deleted(sts):
            update_name = f"{name(sts)}-{template_hash(sts)}"
            await self._write_status(sts, pods, (sts.get("status") or {}).get("currentRevision") or update_name,
                                     update_name)
            return None
        revisions = sort_revisions(await claim(self.client, sts, owned_and_orphans(self.revision_informer, sts),
                                               selector, "controllerrevisions"))
        try:
            current, update = await self._revisions(sts, revisions)
        except HashCollision:
            await self.write_status(sts, collided(sts))
            return None
        await self._update(sts, pods, current, name(update))
        pods = [p for p in self.pod_informer.list_by_index(CONTROLLER_UID_INDEX, uid(sts)) if ordinal_of(sts, p) >= 0]
        await self._write_status(sts, pods, name(current), name(update))
        await self._truncate_history(sts, pods, revisions, {name(current), name(update)})
        min_ready = int(sts["spec"].get("minReadySeconds") or 0)
        if min_ready and any(running_and_ready(p) and not is_pod_available(p, min_ready, self.clock.now())
                             for p in pods):
            return float(min_ready)
        return None

    async def _revisions(self, sts: Obj, revisions: list[Obj]) -> tuple[Obj, Obj]:
        """(current, update) revision, writing the update revision when the template is new and
        renumbering an equal old one when the template went back to it (getStatefulSetRevisions)."""
        candidate = new_revision(sts, next_revision(revisions))
        equal = [r for r in revisions if equal_revision(r, candidate)]
        if equal and equal_revision(revisions[-1], candidate):
            update = revisions[-1]
        elif equal:
            update = await renumber_revision(self.client, equal[-1], candidate["revision"])
        else:
            update = await create_revision(self.client, sts, candidate)
        wanted = (sts.get("status") or {}).get("currentRevision")
        current = next((r for r in revisions if name(r) == wanted), update)
        return current, update

    async def _truncate_history(self, sts: Obj, pods: list[Obj], revisions: list[Obj], live: set[str]) -> None:
        """Delete the oldest revisions no pod and neither status revision uses, beyond revisionHistoryLimit."""
        live |= {labels(p).get(REVISION_LABEL) or "" for p in pods}
        history = [r for r in revisions if name(r) not in live]
        for revision in history[:max(len(history) - history_limit(sts), 0)]:
            await delete_revision(self.client, revision)

    async def _update(self, sts: Obj, pods: list[Obj], current: Obj, update_revision: str) -> None:
        spec = sts["spec"]
        count = int(spec.get("replicas", 1))
        start = int((spec.get("ordinals") or {}).get("start") or 0)
        monotonic = (spec.get("podManagementPolicy") or "OrderedReady") != "Parallel"
        replicas: dict[int, Obj] = {}
        condemned: list[Obj] = []
        for pod in pods:
            o = ordinal_of(sts, pod)
            if start <= o < start + count:
                replicas[o] = pod
            elif o >= 0:
                condemned.append(pod)
        condemned.sort(key=lambda p: ordinal_of(sts, p), reverse=True)
        if spec.get("volumeClaimTemplates"):
            for pod in replicas.values():
                await self._claim_owners(sts, pod, scaled_down=False)
            for pod in condemned:
                await self._claim_owners(sts, pod, scaled_down=True)
        unhealthy = [p for p in list(replicas.values()) + condemned if not healthy(p)]
        first_unhealthy = min(unhealthy, key=lambda p: ordinal_of(sts, p)) if unhealthy else None

        for o in range(start, start + count):
            pod = replicas.get(o)
            if pod is not None and _phase(pod) in ("Failed", "Succeeded") and not is_being_deleted(pod):
                await self._delete(sts, pod)
                if monotonic:
                    return
                continue
            if pod is None:
                await self._create(sts, o, current, update_revision)
                if monotonic:
                    return
                continue
            if is_being_deleted(pod) and monotonic:
                return
            if not running_and_ready(pod) and monotonic:
                return
            min_ready = int(spec.get("minReadySeconds") or 0)
            if monotonic and min_ready and not is_pod_available(pod, min_ready, self.clock.now()):
                return
            await self._ensure_identity(sts, pod, o)

        for pod in condemned:
            if is_being_deleted(pod):
                if monotonic:
                    return
                continue
            if not running_and_ready(pod) and monotonic and pod is not first_unhealthy:
                return
            if monotonic and any(not healthy(p) for p in replicas.values()):
                return
            await self._delete(sts, pod)
            if monotonic:
                return

        strategy = spec.get("updateStrategy") or {}
        if (strategy.get("type") or "RollingUpdate") != "RollingUpdate":
            return
        partition = int((strategy.get("rollingUpdate") or {}).get("partition") or 0)
        for o in range(start + count - 1, start + partition - 1, -1):
            pod = replicas.get(o)
            if pod is None:
                return
            if labels(pod).get(REVISION_LABEL) != update_revision and not is_being_deleted(pod):
                await self._delete(sts, pod)
                return
            if not healthy(pod):
                return

    async def _create(self, sts: Obj, ordinal: int, current: Obj, update_revision: str) -> None:
        """newVersionedStatefulSetPod: below a RollingUpdate's partition a pod comes back at the
        current revision, anywhere else at the update revision."""
        strategy = sts["spec"].get("updateStrategy") or {}
        rolling = strategy.get("rollingUpdate")
        if (strategy.get("type") or "RollingUpdate") == "RollingUpdate" and name(current) != update_revision and (
                ordinal < int((sts.get("status") or {}).get("currentReplicas") or 0) if rolling is None
                else ordinal < int(rolling.get("partition") or 0)):
            pod = identity_pod(sts, ordinal, name(current), revision_template(current))
        else:
            pod = identity_pod(sts, ordinal, update_revision)
        pod_name = name(pod)
        await self._create_claims(sts, ordinal, pod_name)
        try:
            await self.client.create(pod)
        except StatusError as err:
            if is_already_exists(err):
                return
            self._event(sts, "Warning", "FailedCreate",
                        f"create Pod {pod_name} in StatefulSet {name(sts)} failed error: {err.message}")
            raise
        self._event(sts, "Normal", "SuccessfulCreate", f"create Pod {pod_name} in StatefulSet {name(sts)} successful")

    async def _create_claims(self, sts: Obj, ordinal: int, pod_name: str) -> None:
        """The pod's claims that do not exist yet, before the pod (a claim being deleted fails the pod's
        creation, as upstream: the new pod must not mount the old volume)."""
        for pvc in identity_claims(sts, ordinal):
            existing = self.claim_informer.get_by_name(namespace(sts), name(pvc))
            if existing is not None:
                if is_being_deleted(existing):
                    raise RuntimeError(f"pvc {name(pvc)} is being deleted")
                continue
            try:
                await self.client.create(pvc)
            except StatusError as err:
                if is_already_exists(err):
                    continue
                self._event(sts, "Warning", "FailedCreate", f"create Claim {name(pvc)} for Pod {pod_name} in "
                            f"StatefulSet {name(sts)} failed error: {err.message}")
                raise
            self._event(sts, "Normal", "SuccessfulCreate",
                        f"create Claim {name(pvc)} Pod {pod_name} in StatefulSet {name(sts)} success")

    async def _claim_owners(self, sts: Obj, pod: Obj, scaled_down: bool) -> None:
        """updateClaimOwnerRefForSetAndPod: ``whenDeleted: Delete`` makes the set own a pod's claims,
        ``whenScaled: Delete`` makes a scaled-down pod own them instead, so the garbage collector
        deletes them with it; Retain takes that owner off again (the policy may change)."""
        policy = sts["spec"].get("persistentVolumeClaimRetentionPolicy") or {}
        by_pod = policy.get("whenScaled") == "Delete" and scaled_down
        by_set = policy.get("whenDeleted") == "Delete" and not by_pod
        set_uid, pod_uid = uid(sts), uid(pod)
        for _template, claim_name in claim_names(sts, ordinal_of(sts, pod)):
            existing = self.claim_informer.get_by_name(namespace(sts), claim_name)
            if existing is None or is_being_deleted(existing):
                continue
            refs = existing["metadata"].get("ownerReferences") or []
            owners = {r.get("uid") for r in refs}
            if (set_uid in owners, pod_uid in owners) == (by_set, by_pod):
                continue
            new_refs = [r for r in refs if r.get("uid") not in (set_uid, pod_uid)]
            if by_set:
                new_refs.append(owner_ref(sts))
            if by_pod:
                new_refs.append(owner_ref(with_kind(pod, "v1", "Pod"), controller=False, block_owner_deletion=False))
            updated = deep_copy(existing)
            updated["metadata"]["ownerReferences"] = new_refs
            await self.client.update(updated)

    async def _delete(self, sts: Obj, pod: Obj) -> None:
        try:
            await self.client.delete("pods", name(pod), namespace(pod), preconditions={"uid": uid(pod)})
        except StatusError as err:
            if is_not_found(err) or err.code == 409:
                return
            self._event(sts, "Warning", "FailedDelete",
                        f"delete Pod {name(pod)} in StatefulSet {name(sts)} failed error: {err.message}")
            raise
        self._event(sts, "Normal", "SuccessfulDelete", f"delete Pod {name(pod)} in StatefulSet {name(sts)} successful")

    async def _ensure_identity(self, sts: Obj, pod: Obj, ordinal: int) -> None:
        want = {POD_NAME_LABEL: name(pod), POD_INDEX_LABEL: str(ordinal)}
        if all(labels(pod).get(k) == v for k, v in want.items()):
            return
        try:
            await self.client.patch("pods", name(pod), {"metadata": {"labels": want}}, namespace(pod))
        except StatusError as err:
            if not is_not_found(err):
                raise

    async def _write_status(self, sts: Obj, pods: list[Obj], current_revision: str, update_revision: str) -> None:
        min_ready = int(sts["spec"].get("minReadySeconds") or 0)
        now = self.clock.now()
        live = [p for p in pods if not is_being_deleted(p)]
        status: Obj = {"replicas": len(live)}
        counts = {
            "readyReplicas": sum(1 for p in live if running_and_ready(p)),
            "availableReplicas": sum(1 for p in live if running_and_ready(p) and is_pod_available(p, min_ready, now)),
            "currentReplicas": sum(1 for p in live if labels(p).get(REVISION_LABEL) == current_revision),
            "updatedReplicas": sum(1 for p in live if labels(p).get(REVISION_LABEL) == update_revision),
        }
        status.update({k: v for k, v in counts.items() if v})
        want = int(sts["spec"].get("replicas", 1))
        if counts["updatedReplicas"] == want and counts["readyReplicas"] == want and len(live) == want:
            current_revision = update_revision
            status["currentReplicas"] = counts["updatedReplicas"]
        status["currentRevision"] = current_revision
        status["updateRevision"] = update_revision
        if generation(sts):
            status["observedGeneration"] = generation(sts)
        if (sts.get("status") or {}).get("collisionCount") is not None:
            status["collisionCount"] = sts["status"]["collisionCount"]
        await self.write_status(sts, status)

