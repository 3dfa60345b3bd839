"""The Deployment controller: roll a pod template out through ReplicaSets, one revision at a time.

upstream's pkg/controller/deployment, step for step. Each template gets a ReplicaSet named
``<deployment>-<pod-template-hash>``; its pods carry the ``pod-template-hash`` label. A sync:

1. claims ReplicaSets (adopt orphans matching the selector, release the ones that stop matching);
2. a paused Deployment, or one whose ``spec.replicas`` changed, is only *scaled*, proportionally
   across its active ReplicaSets (the ``desired-replicas``/``max-replicas`` annotations remember
   the size each was scaled for);
3. otherwise it rolls out: ``RollingUpdate`` scales the new ReplicaSet up as far as ``maxSurge``
   allows (reconcileNewReplicaSet), then old ones down as far as ``maxUnavailable`` allows,
   unhealthy old pods first (reconcileOldReplicaSets / cleanupUnhealthyReplicas); ``Recreate``
   scales old ones to 0, waits until their pods are gone, then scales the new one up;
4. a complete rollout deletes old, empty ReplicaSets beyond ``revisionHistoryLimit``;
5. status (replicas, updated, ready, available, unavailable, observedGeneration) and the
   Progressing / Available conditions with upstream's reasons, including the progress deadline.

Rollback is a template change back to an older template (what ``kubectl rollout undo`` sends): the
old ReplicaSet whose template matches becomes the new one and gets the next revision number, the
revisions it had are kept in ``deployment.kubernetes.io/revision-history``.

Two guards are stricter than upstream so "never more than replicas + maxSurge pods, never fewer
than replicas - maxUnavailable available" holds at every step even while the ReplicaSet
controller lags: a ReplicaSet counts as ``max(spec.replicas, status.replicas)`` pods when deciding
how far to scale up, and as at most ``spec.replicas`` available pods when deciding how far to
scale down.
"""

from __future__ import annotations

import logging
import math
from typing import Any

from kconsole.client import StatusError, is_already_exists, is_not_found
from kconsole.client.informer import index_by_owner_uid
from kconsole.controllers.base import Controller, ControllerContext
from kconsole.controllers.podcontrol import (
    CONTROLLER_UID_INDEX,
    claim,
    live_owner_key,
    requeue_controllers,
    selector_of,
    with_kind,
)
from kconsole.objects.meta import (
    annotations,
    controller_of,
    creation_timestamp,
    deep_copy,
    format_time,
    generation,
    is_being_deleted,
    labels,
    name,
    namespace,
    object_key,
    owner_ref,
    parse_time,
    uid,
)
from kconsole.objects.names import pod_template_hash
from kconsole.objects.selectors import SelectorError

log = logging.getLogger(__name__)

Obj = dict[str, Any]

HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
ROLLBACK_TO = "deprecated.deployment.rollback.to"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
#: Annotations a Deployment does not pass on to its ReplicaSets.
SKIP_COPY = frozenset({LAST_APPLIED, REVISION, REVISION_HISTORY, DESIRED_REPLICAS, MAX_REPLICAS, ROLLBACK_TO})
#: upstream maxRevHistoryLengthInChars.
MAX_REV_HISTORY_CHARS = 2000
MAX_INT32 = 2**31 - 1

# Condition reasons, as upstream's deployment util names them.
NEW_RS_CREATED = "NewReplicaSetCreated"
FOUND_NEW_RS = "FoundNewReplicaSet"
NEW_RS_AVAILABLE = "NewReplicaSetAvailable"
RS_UPDATED = "ReplicaSetUpdated"
TIMED_OUT = "ProgressDeadlineExceeded"
PAUSED = "DeploymentPaused"
RESUMED = "DeploymentResumed"
RS_CREATE_ERROR = "ReplicaSetCreateError"
MIN_AVAILABLE = "MinimumReplicasAvailable"
MIN_UNAVAILABLE = "MinimumReplicasUnavailable"


# --------------------------------------------------------------------------- arithmetic


def scaled_value(value: Any, total: int, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent."""
    if isinstance(value, bool):
        raise ValueError(f"invalid value for IntOrString: {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.endswith("%"):
        try:
            pct = int(value[:-1])
        except ValueError:
            raise ValueError(f'invalid value for IntOrString: invalid value "{value}"') from None
        exact = pct * total / 100
        return math.ceil(exact) if round_up else math.floor(exact)
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            pass
    raise ValueError(f"invalid value for IntOrString: invalid type: string is not a percentage: {value!r}")


def replicas_of(obj: Obj) -> int:
    value = (obj.get("spec") or {}).get("replicas")
    return 1 if value is None else int(value)


def is_rolling(d: Obj) -> bool:
    return ((d["spec"].get("strategy") or {}).get("type") or "RollingUpdate") == "RollingUpdate"


def fenceposts(d: Obj) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) resolved against spec.replicas; never both 0 (ResolveFenceposts)."""
    rolling = (d["spec"].get("strategy") or {}).get("rollingUpdate") or {}
    desired = replicas_of(d)
    surge = scaled_value(rolling.get("maxSurge", "25%"), desired, True)
    unavailable = scaled_value(rolling.get("maxUnavailable", "25%"), desired, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def max_surge(d: Obj) -> int:
    return fenceposts(d)[0] if is_rolling(d) else 0


def max_unavailable(d: Obj) -> int:
    desired = replicas_of(d)
    if not is_rolling(d) or desired == 0:
        return 0
    return min(fenceposts(d)[1], desired)


def _status(obj: Obj | None) -> Obj:
    return (obj or {}).get("status") or {}


def spec_count(rss: list[Obj | None]) -> int:
    return sum(replicas_of(rs) for rs in rss if rs is not None)


def actual_count(rss: list[Obj | None]) -> int:
    return sum(int(_status(rs).get("replicas") or 0) for rs in rss if rs is not None)


def ready_count(rss: list[Obj | None]) -> int:
    return sum(int(_status(rs).get("readyReplicas") or 0) for rs in rss if rs is not None)


def available_count(rss: list[Obj | None]) -> int:
    return sum(int(_status(rs).get("availableReplicas") or 0) for rs in rss if rs is not None)


def _pods_present(rs: Obj) -> int:
    """Pods a ReplicaSet has or is about to have: its size, or more while scale-down is pending."""
    return max(replicas_of(rs), int(_status(rs).get("replicas") or 0))


def _available_kept(rs: Obj) -> int:
    """Available pods that survive the ReplicaSet's pending scale-down."""
    return min(int(_status(rs).get("availableReplicas") or 0), replicas_of(rs))


def by_creation(rss: list[Obj]) -> list[Obj]:
    return sorted(rss, key=lambda rs: (creation_timestamp(rs) or 0.0, name(rs)))


def revision_of(obj: Obj) -> int:
    try:
        return int(annotations(obj).get(REVISION, "0") or 0)
    except ValueError:
        return 0


def _typed(value: Any) -> Any:
    """A copy without nulls and empty maps or lists: what the typed Go structs upstream compares
    cannot tell from absent. kubectl's rollout undo sends the template back with
    ``creationTimestamp: null``, which must still match the old ReplicaSet's template."""
    kind = type(value)
    if kind is dict:
        out = {}
        for k, v in value.items():
            if v is None:
                continue
            if type(v) is dict or type(v) is list:
                v = _typed(v)
                if not v:
                    continue
            out[k] = v
        return out
    if kind is list:
        return [_typed(v) if type(v) is dict or type(v) is list else v for v in value]
    return value


def template_without_hash(template: Obj) -> Obj:
    t = _typed(template or {})
    lbls = (t.get("metadata") or {}).get("labels")
    if lbls is not None:
        lbls.pop(HASH_LABEL, None)
        if not lbls:
            t["metadata"].pop("labels")
    if "metadata" in t and not t["metadata"]:
        t.pop("metadata")
    return t


def equal_ignore_hash(a: Obj, b: Obj) -> bool:
    return template_without_hash(a) == template_without_hash(b)


def active(rss: list[Obj | None]) -> list[Obj]:
    return [rs for rs in rss if rs is not None and replicas_of(rs) > 0]


def has_progress_deadline(d: Obj) -> bool:
    v = d["spec"].get("progressDeadlineSeconds")
    return v is not None and int(v) != MAX_INT32


def get_cond(status: Obj, cond_type: str) -> Obj | None:
    for c in status.get("conditions") or ():
        if c.get("type") == cond_type:
            return c
    return None


def new_cond(cond_type: str, cond_status: str, reason: str, message: str, now: float) -> Obj:
    stamp = format_time(now)
    return {"type": cond_type, "status": cond_status, "lastUpdateTime": stamp, "lastTransitionTime": stamp,
            "reason": reason, "message": message}


def set_cond(status: Obj, cond: Obj) -> None:
    """SetDeploymentCondition: same status and reason changes nothing; same status keeps the
    transition time."""
    current = get_cond(status, cond["type"])
    if current is not None and current.get("status") == cond["status"] and current.get("reason") == cond["reason"]:
        return
    if current is not None and current.get("status") == cond["status"]:
        cond["lastTransitionTime"] = current.get("lastTransitionTime")
    status["conditions"] = [c for c in status.get("conditions") or () if c.get("type") != cond["type"]] + [cond]


def remove_cond(status: Obj, cond_type: str) -> None:
    conds = [c for c in status.get("conditions") or () if c.get("type") != cond_type]
    if conds:
        status["conditions"] = conds
    else:
        status.pop("conditions", None)


def deployment_complete(d: Obj, status: Obj) -> bool:
    want = replicas_of(d)
    return (int(status.get("updatedReplicas") or 0) == want and int(status.get("replicas") or 0) == want
            and int(status.get("availableReplicas") or 0) == want
            and int(status.get("observedGeneration") or 0) >= generation(d))


def deployment_progressing(d: Obj, new: Obj) -> bool:
    old = _status(d)

    def g(s: Obj, k: str) -> int:
        return int(s.get(k) or 0)

    return (g(new, "updatedReplicas") > g(old, "updatedReplicas")
            or g(new, "replicas") - g(new, "updatedReplicas") < g(old, "replicas") - g(old, "updatedReplicas")
            or g(new, "readyReplicas") > g(old, "readyReplicas")
            or g(new, "availableReplicas") > g(old, "availableReplicas"))


def deployment_timed_out(d: Obj, status: Obj, now: float) -> bool:
    if not has_progress_deadline(d):
        return False
    cond = get_cond(status, "Progressing")
    if cond is None or cond.get("reason") == NEW_RS_AVAILABLE:
        return False
    if cond.get("reason") == TIMED_OUT:
        return True
    since = cond.get("lastUpdateTime")
    if not since:
        return False
    return parse_time(since) + int(d["spec"]["progressDeadlineSeconds"]) < now


def _compact(status: Obj) -> Obj:
    """Deployment status fields are omitempty: zeros do not appear on the wire."""
    return {k: v for k, v in status.items() if v not in (0, None, [], {})}


# --------------------------------------------------------------------------- the controller


class DeploymentController(Controller):
    name = "deployment"
    component = "deployment-controller"
    workers = 5

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.d_informer = self.informer("deployments")
        self.rs_informer = self.informer("replicasets", indexers={CONTROLLER_UID_INDEX: index_by_owner_uid})
        self.pod_informer = self.informer("pods", indexers={CONTROLLER_UID_INDEX: index_by_owner_uid})
        self.d_informer.add_event_handler(**self.handlers())
        self.rs_informer.add_event_handler(on_add=self._rs_added, on_update=self._rs_updated,
                                           on_delete=self._rs_deleted)
        self.pod_informer.add_event_handler(on_delete=self._pod_deleted)

    # ------------------------------------------------------------------ handlers

    def _owner_key(self, rs: Obj) -> str | None:
        return live_owner_key(rs, "Deployment", self.d_informer)

    def _matching(self, rs: Obj) -> list[str]:
        keys = []
        rs_labels = labels(rs)
        for d in self.d_informer.list_by_index("namespace", namespace(rs)):
            try:
                sel = selector_of(d)
            except SelectorError:
                continue
            if not sel.empty and sel.matches(rs_labels):
                keys.append(object_key(d))
        return keys

    def _rs_added(self, rs: Obj) -> None:
        if is_being_deleted(rs):
            self._rs_deleted(rs)
            return
        key = self._owner_key(rs)
        if key is not None:
            self.queue.add(key)
        elif controller_of(rs) is None:
            for k in self._matching(rs):
                self.queue.add(k)

    def _rs_updated(self, old: Obj, cur: Obj) -> None:
        if old["metadata"].get("resourceVersion") == cur["metadata"].get("resourceVersion"):
            return
        ref_changed, _ = requeue_controllers(self.queue, old, cur, self._owner_key)
        if controller_of(cur) is not None:
            return
        if ref_changed or labels(old) != labels(cur):
            for k in self._matching(cur):
                self.queue.add(k)

    def _rs_deleted(self, rs: Obj) -> None:
        key = self._owner_key(rs)
        if key is not None:
            self.queue.add(key)

    def _pod_deleted(self, pod: Obj) -> None:
        """Recreate waits for old pods to be gone; their deletion is its cue."""
        ref = controller_of(pod)
        if ref is None or ref.get("kind") != "ReplicaSet":
            return
        rs = self.rs_informer.get(f"{namespace(pod)}/{ref.get('name')}")
        if rs is None:
            return
        key = self._owner_key(rs)
        if key is None:
            return
        d = self.d_informer.get(key)
        if d is not None and not is_rolling(d):
            self.queue.add(key)

    # ------------------------------------------------------------------ sync

    async def sync(self, key: str) -> float | None:
        cached = self.d_informer.get(key)
        if cached is None:
            return None
        d = deep_copy(with_kind(cached, "apps/v1", "Deployment"))
        try:
            selector = selector_of(d)
            fenceposts(d)
        except (SelectorError, ValueError) as err:
            log.error("deployment %s: %s", key, err)
            return None
        if selector.empty:
            self._event(d, "Warning", "SelectingAll",
                        "This deployment is selecting all pods. A non-empty selector is required.")
            if int(_status(d).get("observedGeneration") or 0) < generation(d):
                status = deep_copy(_status(d))
                status["observedGeneration"] = generation(d)
                await self._write_status(d, status)
            return None
        candidates = [rs for rs in self.rs_informer.list_by_index("namespace", namespace(d))
                      if controller_of(rs) is None or (controller_of(rs) or {}).get("uid") == uid(d)]
        rs_list = [with_kind(rs, "apps/v1", "ReplicaSet")
                   for rs in await claim(self.client, d, candidates, selector, "replicasets")]
        if is_being_deleted(d):
            await self._sync_status(d, rs_list)
            return None
        d = await self._check_paused(d)
        if d["spec"].get("paused"):
            return await self._sync_scaling(d, rs_list)
        if self._is_scaling_event(d, rs_list):
            return await self._sync_scaling(d, rs_list)
        if is_rolling(d):
            return await self._rollout_rolling(d, rs_list)
        return await self._rollout_recreate(d, rs_list)

    # ------------------------------------------------------------------ new and old ReplicaSets

    def _find_new(self, d: Obj, rs_list: list[Obj]) -> Obj | None:
        template = d["spec"].get("template") or {}
        for rs in by_creation(rs_list):
            if equal_ignore_hash(rs["spec"].get("template") or {}, template):
                return rs
        return None

    def _split(self, d: Obj, rs_list: list[Obj]) -> tuple[Obj | None, list[Obj]]:
        new = self._find_new(d, rs_list)
        return new, [rs for rs in rs_list if new is None or uid(rs) != uid(new)]

    async def _new_and_old(self, d: Obj, rs_list: list[Obj], create: bool) -> tuple[Obj, Obj | None, list[Obj]]:
        """getAllReplicaSetsAndSyncRevision: (deployment, new RS or None, old RSes); creates the new
        RS when asked, and keeps revisions and the Progressing condition in step."""
        existing, olds = self._split(d, rs_list)
        new_revision = max((revision_of(rs) for rs in olds), default=0) + 1
        if existing is not None:
            rs = deep_copy(existing)
            changed = self._set_new_rs_annotations(d, rs, str(new_revision), exists=True)
            if changed or int(rs["spec"].get("minReadySeconds") or 0) != int(d["spec"].get("minReadySeconds") or 0):
                rs["spec"]["minReadySeconds"] = int(d["spec"].get("minReadySeconds") or 0)
                if not rs["spec"]["minReadySeconds"]:
                    rs["spec"].pop("minReadySeconds")
                rs = with_kind(await self.client.update(rs), "apps/v1", "ReplicaSet")
            d = await self._set_revision(d, annotations(rs).get(REVISION, ""))
            if has_progress_deadline(d) and get_cond(_status(d), "Progressing") is None:
                status = deep_copy(_status(d))
                set_cond(status, new_cond("Progressing", "True", FOUND_NEW_RS,
                                          f'Found new replica set "{name(rs)}"', self.clock.now()))
                d = await self._write_status(d, status)
            return d, rs, olds
        if not create:
            return d, None, olds
        return await self._create_new(d, olds, new_revision)

    async def _create_new(self, d: Obj, olds: list[Obj], new_revision: int) -> tuple[Obj, Obj | None, list[Obj]]:
        collision = _status(d).get("collisionCount")
        template = deep_copy(d["spec"].get("template") or {})
        hash_value = pod_template_hash(d["spec"].get("template") or {}, collision)
        template.setdefault("metadata", {}).setdefault("labels", {})[HASH_LABEL] = hash_value
        selector = deep_copy(d["spec"].get("selector") or {})
        selector.setdefault("matchLabels", {})[HASH_LABEL] = hash_value
        rs: Obj = {
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": f"{name(d)}-{hash_value}", "namespace": namespace(d),
                         "ownerReferences": [owner_ref(d)], "labels": dict(template["metadata"]["labels"])},
            "spec": {"replicas": 0, "selector": selector, "template": template},
        }
        if d["spec"].get("minReadySeconds"):
            rs["spec"]["minReadySeconds"] = int(d["spec"]["minReadySeconds"])
        count = self._new_rs_new_replicas(d, olds + [rs], rs)
        rs["spec"]["replicas"] = count
        self._set_new_rs_annotations(d, rs, str(new_revision), exists=False)
        already = False
        try:
            created = with_kind(await self.client.create(rs), "apps/v1", "ReplicaSet")
        except StatusError as err:
            if not is_already_exists(err):
                status = deep_copy(_status(d))
                msg = f'Failed to create new replica set "{name(rs)}": {err.message}'
                if has_progress_deadline(d):
                    set_cond(status, new_cond("Progressing", "False", RS_CREATE_ERROR, msg, self.clock.now()))
                    await self._write_status(d, status)
                self._event(d, "Warning", "FailedCreate", msg)
                raise
            current = with_kind(await self.client.get("replicasets", name(rs), namespace(d)), "apps/v1", "ReplicaSet")
            ref = controller_of(current)
            if ref is not None and ref.get("uid") == uid(d) and equal_ignore_hash(
                    current["spec"].get("template") or {}, d["spec"].get("template") or {}):
                created, already = current, True
            else:
                # A hash collision: bump collisionCount so the next attempt hashes differently.
                status = deep_copy(_status(d))
                status["collisionCount"] = int(collision or 0) + 1
                await self._write_status(d, status)
                raise
        if not already and count > 0:
            self._event(d, "Normal", "ScalingReplicaSet", f"Scaled up replica set {name(created)} to {count}")
        status = deep_copy(_status(d))
        if not already and has_progress_deadline(d):
            set_cond(status, new_cond("Progressing", "True", NEW_RS_CREATED,
                                      f'Created new replica set "{name(created)}"', self.clock.now()))
            d = await self._write_status(d, status)
        d = await self._set_revision(d, str(new_revision))
        return d, created, olds

    def _set_new_rs_annotations(self, d: Obj, rs: Obj, new_revision: str, exists: bool) -> bool:
        """SetNewReplicaSetAnnotations: copy the Deployment's annotations, raise the revision, keep
        the revisions a rolled-back-to ReplicaSet had in revision-history."""
        meta = rs.setdefault("metadata", {})
        ann = meta.setdefault("annotations", {})
        changed = False
        for k, v in annotations(d).items():
            if k in SKIP_COPY or ann.get(k) == v:
                continue
            ann[k] = v
            changed = True
        old_text = ann.get(REVISION)
        try:
            old = int(old_text) if old_text else 0
        except ValueError:
            return changed
        new = int(new_revision)
        if old < new:
            ann[REVISION] = new_revision
            changed = True
            if old_text:
                history = ann.get(REVISION_HISTORY, "")
                parts = history.split(",") if history else []
                total = len(history) + len(old_text) + 1
                start = 0
                while total > MAX_REV_HISTORY_CHARS and start < len(parts):
                    total -= len(parts[start]) + 1
                    start += 1
                if total <= MAX_REV_HISTORY_CHARS:
                    ann[REVISION_HISTORY] = ",".join(parts[start:] + [old_text])
        if not exists and self._set_replicas_annotations(d, rs):
            changed = True
        if not ann:
            meta.pop("annotations")
        return changed

    @staticmethod
    def _set_replicas_annotations(d: Obj, rs: Obj) -> bool:
        want = {DESIRED_REPLICAS: str(replicas_of(d)), MAX_REPLICAS: str(replicas_of(d) + max_surge(d))}
        ann = rs.setdefault("metadata", {}).setdefault("annotations", {})
        if all(ann.get(k) == v for k, v in want.items()):
            return False
        ann.update(want)
        return True

    async def _set_revision(self, d: Obj, revision: str) -> Obj:
        """The Deployment's revision annotation follows its new ReplicaSet's."""
        if not revision or annotations(d).get(REVISION) == revision:
            return d
        patched = await self.client.patch("deployments", name(d), {"metadata": {"annotations": {REVISION: revision}}},
                                          namespace(d))
        return with_kind(patched, "apps/v1", "Deployment")

    def _new_rs_new_replicas(self, d: Obj, all_rss: list[Obj], new_rs: Obj) -> int:
        """NewRSNewReplicas: how big the new ReplicaSet may be now."""
        if not is_rolling(d):
            return replicas_of(d)
        current = sum(_pods_present(rs) for rs in all_rss)
        max_total = replicas_of(d) + max_surge(d)
        if current >= max_total:
            return replicas_of(new_rs)
        scale_up = min(max_total - current, replicas_of(d) - replicas_of(new_rs))
        return replicas_of(new_rs) + max(0, scale_up)

    # ------------------------------------------------------------------ scaling

    async def _scale_rs(self, d: Obj, rs: Obj, new_scale: int, operation: str | None = None) -> tuple[bool, Obj]:
        """scaleReplicaSet: set the size and the replicas annotations; event on a size change."""
        old_scale = replicas_of(rs)
        size_changed = old_scale != new_scale
        want = {DESIRED_REPLICAS: str(replicas_of(d)), MAX_REPLICAS: str(replicas_of(d) + max_surge(d))}
        ann_changed = any(annotations(rs).get(k) != v for k, v in want.items())
        if not size_changed and not ann_changed:
            return False, rs
        if operation is None:
            operation = "up" if old_scale < new_scale else "down"
        new = deep_copy(rs)
        new["spec"]["replicas"] = new_scale
        new["metadata"].setdefault("annotations", {}).update(want)
        updated = with_kind(await self.client.update(new), "apps/v1", "ReplicaSet")
        if size_changed:
            self._event(d, "Normal", "ScalingReplicaSet",
                        f"Scaled {operation} replica set {name(rs)} to {new_scale} from {old_scale}")
        return size_changed, updated

    async def _scale_and_record(self, d: Obj, rs: Obj, new_scale: int) -> tuple[bool, Obj]:
        if replicas_of(rs) == new_scale:
            return False, rs
        return await self._scale_rs(d, rs, new_scale)

    def _is_scaling_event(self, d: Obj, rs_list: list[Obj]) -> bool:
        for rs in active(rs_list):
            desired = annotations(rs).get(DESIRED_REPLICAS)
            if desired is None:
                continue
            try:
                if int(desired) != replicas_of(d):
                    return True
            except ValueError:
                continue
        return False

    async def _sync_scaling(self, d: Obj, rs_list: list[Obj]) -> float | None:
        """sync(): scale only (paused, or spec.replicas changed), then status."""
        d, new_rs, olds = await self._new_and_old(d, rs_list, create=False)
        new_rs, olds = await self._scale(d, new_rs, olds)
        if d["spec"].get("paused") and not annotations(d).get(ROLLBACK_TO):
            await self._cleanup(d, olds)
        await self._sync_status(d, olds + ([new_rs] if new_rs else []), new_rs)
        return None

    async def _scale(self, d: Obj, new_rs: Obj | None, olds: list[Obj]) -> tuple[Obj | None, list[Obj]]:
        """Proportional scaling across active ReplicaSets (upstream's scale())."""
        target = self._active_or_latest(new_rs, olds)
        if target is not None:
            if replicas_of(target) != replicas_of(d):
                _, updated = await self._scale_and_record(d, target, replicas_of(d))
                return self._replace(new_rs, olds, updated)
            return new_rs, olds
        if self._saturated(d, new_rs):
            for old in active(olds):
                _, updated = await self._scale_and_record(d, old, 0)
                new_rs, olds = self._replace(new_rs, olds, updated)
            return new_rs, olds
        if not is_rolling(d):
            return new_rs, olds
        all_rss = active(olds + [new_rs])
        allowed = replicas_of(d) + max_surge(d) if replicas_of(d) > 0 else 0
        to_add = allowed - spec_count(all_rss)
        operation = None
        if to_add > 0:
            # Bigger first; for equal sizes newer first when scaling up.
            all_rss.sort(key=lambda rs: (-replicas_of(rs), -(creation_timestamp(rs) or 0.0), name(rs)))
            operation = "up"
        elif to_add < 0:
            # Bigger first; for equal sizes older first when scaling down.
            all_rss.sort(key=lambda rs: (-replicas_of(rs), creation_timestamp(rs) or 0.0, name(rs)))
            operation = "down"
        added = 0
        sizes: dict[str, int] = {}
        for rs in all_rss:
            if to_add != 0:
                proportion = self._proportion(d, rs, to_add, added)
                sizes[uid(rs)] = replicas_of(rs) + proportion
                added += proportion
            else:
                sizes[uid(rs)] = replicas_of(rs)
        for i, rs in enumerate(all_rss):
            if i == 0 and to_add != 0:
                sizes[uid(rs)] = max(0, sizes[uid(rs)] + to_add - added)
            _, updated = await self._scale_rs(d, rs, sizes[uid(rs)], operation)
            new_rs, olds = self._replace(new_rs, olds, updated)
        return new_rs, olds

    @staticmethod
    def _replace(new_rs: Obj | None, olds: list[Obj], updated: Obj) -> tuple[Obj | None, list[Obj]]:
        if new_rs is not None and uid(new_rs) == uid(updated):
            return updated, olds
        return new_rs, [updated if uid(rs) == uid(updated) else rs for rs in olds]

    @staticmethod
    def _active_or_latest(new_rs: Obj | None, olds: list[Obj]) -> Obj | None:
        if new_rs is None and not olds:
            return None
        olds_newest_first = sorted(olds, key=lambda rs: (creation_timestamp(rs) or 0.0, name(rs)), reverse=True)
        actives = active(olds_newest_first + [new_rs])
        if not actives:
            return new_rs if new_rs is not None else olds_newest_first[0]
        if len(actives) == 1:
            return actives[0]
        return None

    @staticmethod
    def _saturated(d: Obj, rs: Obj | None) -> bool:
        if rs is None:
            return False
        try:
            desired = int(annotations(rs).get(DESIRED_REPLICAS, ""))
        except ValueError:
            return False
        want = replicas_of(d)
        return desired == want and replicas_of(rs) == want and int(_status(rs).get("availableReplicas") or 0) == want

    @staticmethod
    def _proportion(d: Obj, rs: Obj, to_add: int, added: int) -> int:
        if replicas_of(rs) == 0 or to_add == 0 or to_add == added:
            return 0
        if replicas_of(d) == 0:
            fraction = -replicas_of(rs)
        else:
            d_replicas = replicas_of(d) + max_surge(d)
            try:
                annotated = int(annotations(rs).get(MAX_REPLICAS, ""))
            except ValueError:
                annotated = int(_status(d).get("replicas") or 0)
            if annotated <= 0:
                return 0
            fraction = _round_half_away(replicas_of(rs) * d_replicas / annotated) - replicas_of(rs)
        allowed = to_add - added
        return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)

    # ------------------------------------------------------------------ rolling update

    async def _rollout_rolling(self, d: Obj, rs_list: list[Obj]) -> float | None:
        d, new_rs, olds = await self._new_and_old(d, rs_list, create=True)
        assert new_rs is not None
        all_rss = olds + [new_rs]
        scaled, new_rs = await self._reconcile_new(d, all_rss, new_rs)
        if scaled:
            return await self._sync_rollout_status(d, olds + [new_rs], new_rs)
        scaled_down, olds = await self._reconcile_olds(d, olds, new_rs)
        if scaled_down:
            return await self._sync_rollout_status(d, olds + [new_rs], new_rs)
        if deployment_complete(d, _status(d)):
            await self._cleanup(d, olds)
        return await self._sync_rollout_status(d, olds + [new_rs], new_rs)

    async def _reconcile_new(self, d: Obj, all_rss: list[Obj], new_rs: Obj) -> tuple[bool, Obj]:
        want = replicas_of(d)
        if replicas_of(new_rs) == want:
            return False, new_rs
        if replicas_of(new_rs) > want:
            return await self._scale_and_record(d, new_rs, want)
        return await self._scale_and_record(d, new_rs, self._new_rs_new_replicas(d, all_rss, new_rs))

    async def _reconcile_olds(self, d: Obj, olds: list[Obj], new_rs: Obj) -> tuple[bool, list[Obj]]:
        old_active = active(olds)
        if spec_count(old_active) == 0:
            return False, olds
        all_pods = spec_count(old_active + [new_rs])
        min_available = replicas_of(d) - max_unavailable(d)
        new_unavailable = replicas_of(new_rs) - int(_status(new_rs).get("availableReplicas") or 0)
        max_scaled_down = all_pods - min_available - new_unavailable
        if max_scaled_down <= 0:
            return False, olds
        old_active, cleaned = await self._cleanup_unhealthy(d, old_active, max_scaled_down)
        scaled = await self._scale_down_olds(d, old_active, new_rs)
        by_uid = {uid(rs): rs for rs in old_active}
        return cleaned + scaled > 0, [by_uid.get(uid(rs), rs) for rs in olds]

    async def _cleanup_unhealthy(self, d: Obj, olds: list[Obj], max_cleanup: int) -> tuple[list[Obj], int]:
        """Scale old ReplicaSets down by their unavailable pods first: those pods serve nobody."""
        olds = by_creation(olds)
        total = 0
        for i, rs in enumerate(olds):
            if total >= max_cleanup:
                break
            size = replicas_of(rs)
            avail = int(_status(rs).get("availableReplicas") or 0)
            if size == 0 or size <= avail:
                continue
            count = min(max_cleanup - total, size - avail)
            _, olds[i] = await self._scale_and_record(d, rs, size - count)
            total += count
        return olds, total

    async def _scale_down_olds(self, d: Obj, olds: list[Obj], new_rs: Obj) -> int:
        min_available = replicas_of(d) - max_unavailable(d)
        available = sum(_available_kept(rs) for rs in olds + [new_rs])
        if available <= min_available:
            return 0
        total_to_scale = available - min_available
        total = 0
        for i, rs in enumerate(by_creation(olds)):
            if total >= total_to_scale:
                break
            if replicas_of(rs) == 0:
                continue
            count = min(replicas_of(rs), total_to_scale - total)
            _, updated = await self._scale_and_record(d, rs, replicas_of(rs) - count)
            for j, o in enumerate(olds):
                if uid(o) == uid(updated):
                    olds[j] = updated
            total += count
        return total

    # ------------------------------------------------------------------ recreate

    async def _rollout_recreate(self, d: Obj, rs_list: list[Obj]) -> float | None:
        d, new_rs, olds = await self._new_and_old(d, rs_list, create=False)
        scaled = False
        for rs in active(olds):
            changed, updated = await self._scale_and_record(d, rs, 0)
            scaled = scaled or changed
            new_rs, olds = self._replace(new_rs, olds, updated)
        if scaled:
            return await self._sync_rollout_status(d, olds + ([new_rs] if new_rs else []), new_rs)
        if self._old_pods_running(new_rs, olds):
            return await self._sync_rollout_status(d, olds + ([new_rs] if new_rs else []), new_rs)
        if new_rs is None:
            d, new_rs, olds = await self._new_and_old(d, rs_list, create=True)
        assert new_rs is not None
        if replicas_of(new_rs) != replicas_of(d):
            _, new_rs = await self._scale_and_record(d, new_rs, replicas_of(d))
        if deployment_complete(d, _status(d)):
            await self._cleanup(d, olds)
        return await self._sync_rollout_status(d, olds + [new_rs], new_rs)

    def _old_pods_running(self, new_rs: Obj | None, olds: list[Obj]) -> bool:
        if any(int(_status(rs).get("replicas") or 0) > 0 for rs in olds):
            return True
        for rs in olds:
            for pod in self.pod_informer.list_by_index(CONTROLLER_UID_INDEX, uid(rs)):
                if (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
                    return True
        return False

    # ------------------------------------------------------------------ history

    async def _cleanup(self, d: Obj, olds: list[Obj]) -> None:
        """Delete the oldest revisions beyond revisionHistoryLimit, if they are empty and settled."""
        limit = d["spec"].get("revisionHistoryLimit")
        if limit is None:
            return
        alive = [rs for rs in olds if not is_being_deleted(rs)]
        diff = len(alive) - int(limit)
        if diff <= 0:
            return
        alive.sort(key=lambda rs: (revision_of(rs), creation_timestamp(rs) or 0.0, name(rs)))
        for rs in alive[:diff]:
            st = _status(rs)
            if (int(st.get("replicas") or 0) != 0 or replicas_of(rs) != 0
                    or generation(rs) > int(st.get("observedGeneration") or 0)):
                continue
            try:
                await self.client.delete("replicasets", name(rs), namespace(rs), preconditions={"uid": uid(rs)})
            except StatusError as err:
                if not (is_not_found(err) or err.code == 409):
                    raise

    # ------------------------------------------------------------------ status

    def _calculate_status(self, d: Obj, all_rss: list[Obj | None], new_rs: Obj | None) -> Obj:
        available = available_count(all_rss)
        total = spec_count(all_rss)
        status: Obj = {
            "observedGeneration": generation(d),
            "replicas": actual_count(all_rss),
            "updatedReplicas": actual_count([new_rs]),
            "readyReplicas": ready_count(all_rss),
            "availableReplicas": available,
            "unavailableReplicas": max(0, total - available),
        }
        if _status(d).get("collisionCount") is not None:
            status["collisionCount"] = _status(d)["collisionCount"]
        status["conditions"] = deep_copy(_status(d).get("conditions") or [])
        now = self.clock.now()
        if available >= replicas_of(d) - max_unavailable(d):
            set_cond(status, new_cond("Available", "True", MIN_AVAILABLE, "Deployment has minimum availability.", now))
        else:
            set_cond(status, new_cond("Available", "False", MIN_UNAVAILABLE,
                                      "Deployment does not have minimum availability.", now))
        return status

    async def _sync_status(self, d: Obj, all_rss: list[Obj], new_rs: Obj | None = None) -> None:
        if new_rs is None:
            new_rs, _ = self._split(d, all_rss)
        status = _compact(self._calculate_status(d, list(all_rss), new_rs))
        if status != _status(d):
            await self._write_status(d, status)

    async def _sync_rollout_status(self, d: Obj, all_rss: list[Obj], new_rs: Obj | None) -> float | None:
        now = self.clock.now()
        status = self._calculate_status(d, list(all_rss), new_rs)
        if not has_progress_deadline(d):
            remove_cond(status, "Progressing")
        current = get_cond(_status(d), "Progressing")
        complete_already = (status["replicas"] == status["updatedReplicas"] and current is not None
                            and current.get("reason") == NEW_RS_AVAILABLE)
        if has_progress_deadline(d) and not complete_already:
            if deployment_complete(d, status):
                msg = (f'ReplicaSet "{name(new_rs)}" has successfully progressed.' if new_rs
                       else f'Deployment "{name(d)}" has successfully progressed.')
                set_cond(status, new_cond("Progressing", "True", NEW_RS_AVAILABLE, msg, now))
            elif deployment_progressing(d, status):
                msg = (f'ReplicaSet "{name(new_rs)}" is progressing.' if new_rs
                       else f'Deployment "{name(d)}" is progressing.')
                cond = new_cond("Progressing", "True", RS_UPDATED, msg, now)
                if current is not None:
                    if current.get("status") == "True":
                        cond["lastTransitionTime"] = current.get("lastTransitionTime")
                    remove_cond(status, "Progressing")
                status["conditions"] = (status.get("conditions") or []) + [cond]
            elif deployment_timed_out(d, status, now):
                msg = (f'ReplicaSet "{name(new_rs)}" has timed out progressing.' if new_rs
                       else f'Deployment "{name(d)}" has timed out progressing.')
                set_cond(status, new_cond("Progressing", "False", TIMED_OUT, msg, now))
        failure = self._replica_failure(all_rss, new_rs)
        if failure is not None:
            set_cond(status, failure)
        else:
            remove_cond(status, "ReplicaFailure")
        status = _compact(status)
        if status == _status(d):
            return self._requeue_stuck(d, status, now)
        await self._write_status(d, status)
        return None

    @staticmethod
    def _replica_failure(all_rss: list[Obj], new_rs: Obj | None) -> Obj | None:
        ordered = ([new_rs] if new_rs is not None else []) + [rs for rs in all_rss if rs is not new_rs]
        for rs in ordered:
            for c in _status(rs).get("conditions") or ():
                if c.get("type") == "ReplicaFailure":
                    return {"type": "ReplicaFailure", "status": c.get("status"),
                            "lastUpdateTime": c.get("lastTransitionTime"),
                            "lastTransitionTime": c.get("lastTransitionTime"),
                            "reason": c.get("reason", ""), "message": c.get("message", "")}
        return None

    def _requeue_stuck(self, d: Obj, status: Obj, now: float) -> float | None:
        """Come back when the progress deadline would pass (requeueStuckDeployment)."""
        cond = get_cond(status, "Progressing")
        if (not has_progress_deadline(d) or cond is None or cond.get("reason") in (NEW_RS_AVAILABLE, TIMED_OUT)
                or deployment_complete(d, status) or not cond.get("lastUpdateTime")):
            return None
        after = parse_time(cond["lastUpdateTime"]) + int(d["spec"]["progressDeadlineSeconds"]) - now
        return max(after, 0.0) + 1.0

    async def _check_paused(self, d: Obj) -> Obj:
        """checkPausedConditions: Progressing=Unknown while paused, and once resumed."""
        if not has_progress_deadline(d):
            return d
        cond = get_cond(_status(d), "Progressing")
        if cond is not None and cond.get("reason") == TIMED_OUT:
            return d
        paused = bool(d["spec"].get("paused"))
        paused_reason = cond is not None and cond.get("reason") == PAUSED
        status = deep_copy(_status(d))
        if paused and not paused_reason:
            set_cond(status, new_cond("Progressing", "Unknown", PAUSED, "Deployment is paused", self.clock.now()))
        elif not paused and paused_reason:
            set_cond(status, new_cond("Progressing", "Unknown", RESUMED, "Deployment is resumed", self.clock.now()))
        else:
            return d
        return await self._write_status(d, status)

    async def _write_status(self, d: Obj, status: Obj) -> Obj:
        new = deep_copy(d)
        new["status"] = status
        try:
            return with_kind(await self.client.update_status(new), "apps/v1", "Deployment")
        except StatusError as err:
            if is_not_found(err):
                return d
            raise


def _round_half_away(x: float) -> int:
    """integer.RoundToInt32: Go's math.Round (halves away from zero)."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))
