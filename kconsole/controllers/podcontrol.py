"""What the workload controllers share: upstream's PodControl, ControllerRefManager and pod ranking.

* :func:`pod_from_template` / :func:`create_pod` / :func:`delete_pod` build and write pods the way
  upstream's RealPodControl does, recording ``SuccessfulCreate`` / ``FailedCreate`` /
  ``SuccessfulDelete`` / ``FailedDelete`` on the owner.
* :func:`claim` adopts orphans that match the owner's selector and releases owned objects that no
  longer match (ControllerRefManager.ClaimObjects), so ``kubectl label`` moves pods in and out.
* :func:`slow_start_batch` creates in batches of 1, 2, 4, ... so a broken template fails once, not
  500 times.
* :func:`rank_for_deletion` orders pods the way ReplicaSets pick victims on scale-down.
* :data:`CLAIM_INDEXERS` / :func:`owned_and_orphans` find the candidates :func:`claim` looks at;
  :func:`owner_key_of` / :func:`live_owner_key` map an owned object to its controller's queue key.
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from kconsole.client import Client, EventRecorder, StatusError, WorkQueue, index_by_owner_uid, is_not_found
from kconsole.objects.meta import (
    controller_of,
    creation_timestamp,
    deep_copy,
    get_condition,
    is_being_deleted,
    labels,
    name,
    namespace,
    owner_ref,
    parse_time,
    uid,
)
from kconsole.objects.pod import is_pod_active, is_pod_ready
from kconsole.objects.selectors import LabelSelector, from_label_selector_dict

Obj = dict[str, Any]

#: upstream SlowStartInitialBatchSize and BurstReplicas.
SLOW_START_INITIAL_BATCH = 1
BURST_REPLICAS = 500

CONTROLLER_UID_INDEX = "controller-uid"
ORPHAN_INDEX = "orphans-by-namespace"


def index_orphans(obj: Obj) -> list[str]:
    """Objects without a controller, by namespace: the only ones a controller may adopt."""
    if controller_of(obj) is not None:
        return []
    ns = obj["metadata"].get("namespace")
    return [ns] if ns else []


#: The indexes :func:`owned_and_orphans` reads, for the informer of the objects a controller claims.
CLAIM_INDEXERS = {CONTROLLER_UID_INDEX: index_by_owner_uid, ORPHAN_INDEX: index_orphans}


def owned_and_orphans(informer: Any, owner: Obj) -> list[Obj]:
    """Candidates for :func:`claim`: what ``owner`` controls plus orphans in its namespace."""
    return informer.list_by_index(CONTROLLER_UID_INDEX, uid(owner)) + informer.list_by_index(
        ORPHAN_INDEX, namespace(owner))


def with_kind(obj: Obj, api_version: str, kind: str) -> Obj:
    """Cached list items may lack apiVersion/kind; owner references need them."""
    if obj.get("kind") and obj.get("apiVersion"):
        return obj
    return {**obj, "apiVersion": api_version, "kind": kind}


@functools.lru_cache(maxsize=4096)
def _selector_from_json(text: str) -> LabelSelector:
    return from_label_selector_dict(json.loads(text))


def selector_of(obj: Obj) -> LabelSelector:
    """The object's ``spec.selector`` as a compiled selector (missing selects nothing)."""
    sel = (obj.get("spec") or {}).get("selector")
    if sel is None:
        return from_label_selector_dict(None)
    return _selector_from_json(json.dumps(sel, sort_keys=True))


def pod_from_template(template: Obj, owner: Obj, *, generate_name: str | None = None,
                      pod_name: str | None = None) -> Obj:
    """A Pod from a pod template, controlled by ``owner`` (GetPodFromTemplate). A named pod (a
    StatefulSet's) keeps the ``generateName`` GetPodFromTemplate always sets, as upstream's do."""
    tmeta = template.get("metadata") or {}
    meta: Obj = {"namespace": namespace(owner), "ownerReferences": [owner_ref(owner)]}
    meta["generateName"] = generate_name if generate_name is not None else f"{name(owner)}-"
    if pod_name:
        meta["name"] = pod_name
    for key in ("labels", "annotations"):
        if tmeta.get(key):
            meta[key] = dict(tmeta[key])
    if tmeta.get("finalizers"):
        meta["finalizers"] = list(tmeta["finalizers"])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": deep_copy(template.get("spec") or {})}


async def create_pod(client: Client, recorder: EventRecorder | None, owner: Obj, pod: Obj) -> Obj:
    """Create ``pod``; the event names the pod the server generated."""
    try:
        created = await client.create(pod)
    except StatusError as err:
        if recorder is not None and not _namespace_terminating(err):
            recorder.event(owner, "Warning", "FailedCreate", f"Error creating: {err.message}")
        raise
    if recorder is not None:
        recorder.event(owner, "Normal", "SuccessfulCreate", f"Created pod: {name(created)}")
    return created


def _namespace_terminating(err: StatusError) -> bool:
    """upstream stays quiet about creations refused because the namespace is going away."""
    return err.code == 403 and "being terminated" in (err.message or "")


async def delete_pod(client: Client, recorder: EventRecorder | None, owner: Obj, pod: Obj) -> bool:
    """Delete ``pod``; False (and no event) when it was already gone."""
    try:
        await client.delete("pods", name(pod), namespace(pod), preconditions={"uid": uid(pod)} if uid(pod) else None)
    except StatusError as err:
        if is_not_found(err) or err.code == 409:
            return False
        if recorder is not None:
            recorder.event(owner, "Warning", "FailedDelete", f"Error deleting: {err.message}")
        raise
    if recorder is not None:
        recorder.event(owner, "Normal", "SuccessfulDelete", f"Deleted pod: {name(pod)}")
    return True


async def slow_start_batch(count: int, fn: Callable[[int], Awaitable[Any]],
                           initial: int = SLOW_START_INITIAL_BATCH) -> tuple[int, Exception | None]:
    """Call ``fn(i)`` ``count`` times in batches of 1, 2, 4, ...; stop after a batch with a failure.

    Returns how many calls succeeded and the first error.
    """
    done = 0
    batch = min(count, initial)
    while batch > 0:
        results = await asyncio.gather(*(fn(done + i) for i in range(batch)), return_exceptions=True)
        errors = [r for r in results if isinstance(r, BaseException)]
        done += batch - len(errors)
        if errors:
            err = errors[0]
            if not isinstance(err, Exception):
                raise err
            return done, err
        batch = min(2 * batch, count - done)
    return done, None


# --------------------------------------------------------------------------- claiming


async def claim(client: Client, owner: Obj, objects: Iterable[Obj], selector: LabelSelector, resource: str,
                match: Callable[[Obj], bool] | None = None) -> list[Obj]:
    """The objects ``owner`` controls after adopting matching orphans and releasing non-matching ones.

    Objects controlled by someone else are left alone. Adoption is refused when the owner is being
    deleted (checked once against the server, as upstream's RecheckDeletionTimestamp).
    """
    owner_uid = uid(owner)
    matches = match or selector.matches_object
    claimed: list[Obj] = []
    can_adopt: bool | None = None
    for obj in objects:
        ref = controller_of(obj)
        if ref is not None:
            if ref.get("uid") != owner_uid:
                continue
            if matches(obj):
                claimed.append(obj)
                continue
            if is_being_deleted(owner):
                continue
            await _release(client, resource, obj, owner_uid)
            continue
        if is_being_deleted(owner) or is_being_deleted(obj) or not matches(obj):
            continue
        if namespace(owner) and namespace(owner) != namespace(obj):
            continue
        if can_adopt is None:
            can_adopt = await _owner_still_adoptable(client, owner)
        if not can_adopt:
            continue
        adopted = await _adopt(client, resource, obj, owner)
        if adopted is not None:
            claimed.append(adopted)
    return claimed


async def _owner_still_adoptable(client: Client, owner: Obj) -> bool:
    try:
        fresh = await client.get(_resource_of(owner), name(owner), namespace(owner) or None)
    except StatusError as err:
        if is_not_found(err):
            return False
        raise
    return uid(fresh) == uid(owner) and not is_being_deleted(fresh)


def _resource_of(obj: Obj) -> str:
    kind = obj.get("kind") or ""
    return {"Deployment": "deployments", "ReplicaSet": "replicasets", "DaemonSet": "daemonsets",
            "StatefulSet": "statefulsets", "Job": "jobs", "CronJob": "cronjobs"}.get(kind, kind.lower() + "s")


async def _adopt(client: Client, resource: str, obj: Obj, owner: Obj) -> Obj | None:
    refs = [r for r in (obj["metadata"].get("ownerReferences") or []) if r.get("uid") != uid(owner)]
    refs.append(owner_ref(owner))
    patch = {"metadata": {"uid": uid(obj), "ownerReferences": refs}}
    try:
        return await client.patch(resource, name(obj), patch, namespace(obj) or None)
    except StatusError as err:
        if is_not_found(err) or err.code == 422:
            return None
        raise


async def _release(client: Client, resource: str, obj: Obj, owner_uid: str) -> None:
    refs = [r for r in (obj["metadata"].get("ownerReferences") or []) if r.get("uid") != owner_uid]
    patch = {"metadata": {"uid": uid(obj), "ownerReferences": refs or None}}
    try:
        await client.patch(resource, name(obj), patch, namespace(obj) or None)
    except StatusError as err:
        if not (is_not_found(err) or err.code == 422):
            raise


def owner_key_of(obj: Obj, kind: str) -> str | None:
    """``ns/name`` of the controlling owner of ``obj`` when it is of ``kind``."""
    ref = controller_of(obj)
    if ref is None or ref.get("kind") != kind:
        return None
    ns = namespace(obj)
    return f"{ns}/{ref['name']}" if ns else ref["name"]


def live_owner_key(obj: Obj, kind: str, owners: Any) -> str | None:
    """:func:`owner_key_of`, but only while ``owners`` (an informer) holds that very owner (same uid).

    An object whose owner was deleted and re-created under the same name belongs to nobody yet.
    """
    key = owner_key_of(obj, kind)
    if key is None:
        return None
    owner = owners.get(key)
    return key if owner is not None and uid(owner) == controller_of(obj).get("uid") else None


def active_pods(pods: Iterable[Obj]) -> list[Obj]:
    """controller.FilterActivePods: neither finished nor being deleted."""
    return [p for p in pods if is_pod_active(p)]


# --------------------------------------------------------------------------- deletion ranking

_PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}


def _ready_time(pod: Obj) -> float | None:
    cond = get_condition(pod.get("status"), "Ready")
    if cond is None or cond.get("status") != "True" or not cond.get("lastTransitionTime"):
        return None
    return parse_time(cond["lastTransitionTime"])


def _max_restarts(pod: Obj) -> int:
    return max((int(cs.get("restartCount") or 0) for cs in (pod.get("status") or {}).get("containerStatuses") or ()),
               default=0)


def _log_rank(t: float, now: float) -> int:
    d = (now - t) * 1e9
    return int(math.log2(d)) if d > 0 else -1


def _deletion_cost(pod: Obj) -> int:
    try:
        return int((pod["metadata"].get("annotations") or {}).get("controller.kubernetes.io/pod-deletion-cost", 0))
    except (TypeError, ValueError):
        return 0


def rank_for_deletion(pods: list[Obj], related: Iterable[Obj], now: float) -> list[Obj]:
    """Pods in the order a scale-down deletes them (upstream ActivePodsWithRanks with
    LogarithmicScaleDown): unscheduled, then pending < unknown < running, not ready before ready,
    lower deletion cost, doubled-up on a node, ready for less time, more restarts, newer."""
    on_node: dict[str, int] = {}
    for p in related:
        if is_pod_active(p):
            node = (p.get("spec") or {}).get("nodeName") or ""
            on_node[node] = on_node.get(node, 0) + 1
    ranks = {id(p): on_node.get((p.get("spec") or {}).get("nodeName") or "", 0) for p in pods}

    def node_of(p: Obj) -> str:
        return (p.get("spec") or {}).get("nodeName") or ""

    def compare(a: Obj, b: Obj) -> int:
        na, nb = node_of(a), node_of(b)
        if na != nb and (not na or not nb):
            return -1 if not na else 1
        pa = _PHASE_ORDINAL.get((a.get("status") or {}).get("phase") or "", 0)
        pb = _PHASE_ORDINAL.get((b.get("status") or {}).get("phase") or "", 0)
        if pa != pb:
            return -1 if pa < pb else 1
        ra, rb = is_pod_ready(a), is_pod_ready(b)
        if ra != rb:
            return -1 if not ra else 1
        ca, cb = _deletion_cost(a), _deletion_cost(b)
        if ca != cb:
            return -1 if ca < cb else 1
        ka, kb = ranks[id(a)], ranks[id(b)]
        if ka != kb:
            return -1 if ka > kb else 1
        if ra and rb:
            ta, tb = _ready_time(a), _ready_time(b)
            if ta != tb:
                return _newer_first(ta, tb, now, a, b)
        xa, xb = _max_restarts(a), _max_restarts(b)
        if xa != xb:
            return -1 if xa > xb else 1
        ta, tb = creation_timestamp(a), creation_timestamp(b)
        if ta != tb:
            return _newer_first(ta, tb, now, a, b)
        return 0

    return sorted(pods, key=functools.cmp_to_key(compare))


def _newer_first(ta: float | None, tb: float | None, now: float, a: Obj, b: Obj) -> int:
    if ta is None or tb is None:
        # afterOrZero: a zero time sorts first.
        if ta is None and tb is None:
            return 0
        return -1 if ta is None else 1
    diff = _log_rank(ta, now) - _log_rank(tb, now)
    if diff == 0:
        ua, ub = uid(a), uid(b)
        return -1 if ua < ub else (1 if ua > ub else 0)
    return -1 if diff < 0 else 1


def template_labels(template: Obj) -> dict[str, str]:
    return (template.get("metadata") or {}).get("labels") or {}


def fully_labeled(pod: Obj, template: Obj) -> bool:
    """Every label of the template is on the pod (ReplicaSet's fullyLabeledReplicas)."""
    have = labels(pod)
    return all(have.get(k) == v for k, v in template_labels(template).items())


def requeue_controllers(queue: WorkQueue, old: Obj, cur: Obj,
                        owner_key: Callable[[Obj], str | None]) -> tuple[bool, str | None]:
    """Upstream's update-handler step: when the controller reference moved, the old owner syncs too,
    then the current one. Returns (reference changed, the current owner's key or None)."""
    old_ref, cur_ref = controller_of(old), controller_of(cur)
    ref_changed = (old_ref or {}).get("uid") != (cur_ref or {}).get("uid")
    if ref_changed and old_ref is not None:
        key = owner_key(old)
        if key is not None:
            queue.add(key)
    key = owner_key(cur) if cur_ref is not None else None
    if key is not None:
        queue.add(key)
    return ref_changed, key
