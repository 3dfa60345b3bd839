"""Per-kind write rules of upstream's registry strategies, over plain-dict objects.

What an update may change (status isolation, system metadata), when generation moves, how long a
deletion is graceful, which finalizers a propagation policy adds, and when removing the last
finalizer completes a deletion.
"""

from __future__ import annotations

from typing import Any

from kconsole.api.registry import ResourceSpec
from kconsole.objects.names import without_null_timestamp

Obj = dict[str, Any]

#: Metadata fields only the server sets; an update keeps the stored values.
SYSTEM_META = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation")

FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"
DEFAULT_GRACE = 30
#: Subresources written through the main update path, each with its own prepare step below.
SPEC_SUBRESOURCES = frozenset(("status", "ephemeralcontainers"))


def carry_system_meta(new: Obj, old: Obj) -> None:
    """Fill the server-owned metadata an update omitted (so defaulting never invents a new uid)."""
    meta = new.setdefault("metadata", {})
    old_meta = old["metadata"]
    for key in ("uid", "creationTimestamp"):
        if not meta.get(key) and key in old_meta:
            meta[key] = old_meta[key]


def prepare_update(spec: ResourceSpec, new: Obj, old: Obj) -> None:
    """Main-resource update: status comes from storage, system metadata is kept, generation moves."""
    meta = new["metadata"]
    old_meta = old["metadata"]
    if spec.has_status:
        if "status" in old:
            new["status"] = old["status"]
        else:
            new.pop("status", None)
    for key in ("creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation"):
        if key in old_meta:
            meta[key] = old_meta[key]
        else:
            meta.pop(key, None)
    if not meta.get("uid") and "uid" in old_meta:
        meta["uid"] = old_meta["uid"]
    if spec.bump_generation and (spec_changed(new, old) or (
            # A custom kind without the status subresource: its status is part of what it asks for.
            spec.info.custom is not None and not spec.has_status and new.get("status") != old.get("status"))):
        meta["generation"] = int(old_meta.get("generation", 0)) + 1
    if spec.kind == "DaemonSet" and spec.group == "apps":
        _template_generation(new, old)
    if spec.resource == "namespaces":
        # spec.finalizers changes only through the finalize subresource.
        if "spec" in old:
            new["spec"] = old["spec"]


DAEMONSET_TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"


def _template_generation(new: Obj, old: Obj) -> None:
    """A DaemonSet's template generation moves with its template (upstream's PrepareForUpdate)."""
    before = (old["metadata"].get("annotations") or {}).get(DAEMONSET_TEMPLATE_GENERATION)
    if before is None:
        return
    templates = [without_null_timestamp((o.get("spec") or {}).get("template") or {}) for o in (new, old)]
    changed = templates[0] != templates[1]
    try:
        value = str(int(before) + 1) if changed else before
    except ValueError:
        return
    new["metadata"].setdefault("annotations", {})[DAEMONSET_TEMPLATE_GENERATION] = value


def prepare_status_update(new: Obj, old: Obj) -> Obj:
    """Status update: everything but status is the stored object (ResetObjectMetaForStatus)."""
    out = dict(old)
    out["metadata"] = dict(old["metadata"])
    if "status" in new:
        out["status"] = new["status"]
    else:
        out.pop("status", None)
    return out


def prepare_finalize(new: Obj, old: Obj) -> Obj:
    """namespaces/finalize: only spec.finalizers may change."""
    out = dict(old)
    out["metadata"] = dict(old["metadata"])
    spec = dict(old.get("spec") or {})
    spec["finalizers"] = list((new.get("spec") or {}).get("finalizers") or [])
    out["spec"] = spec
    return out


def prepare_approval(new: Obj, old: Obj, now: str) -> Obj:
    """certificatesigningrequests/approval (``kubectl certificate approve``): only the status
    conditions change; the spec and an issued certificate stay, and a condition's times are filled in."""
    out = dict(old)
    out["metadata"] = dict(old["metadata"])
    status = dict(old.get("status") or {})
    conditions = (new.get("status") or {}).get("conditions") if isinstance(new.get("status"), dict) else None
    if conditions:
        status["conditions"] = conditions
        for cond in conditions:
            if isinstance(cond, dict):
                if not cond.get("lastUpdateTime"):
                    cond["lastUpdateTime"] = now
                if not cond.get("lastTransitionTime"):
                    cond["lastTransitionTime"] = now
    else:
        status.pop("conditions", None)
    out["status"] = status
    return out


def prepare_ephemeral_update(new: Obj, old: Obj) -> Obj:
    """pods/ephemeralcontainers (``kubectl debug``): only spec.ephemeralContainers may change, as
    upstream's dropNonEphemeralContainerUpdates; anything else in the body is dropped."""
    out = dict(old)
    out["metadata"] = dict(old["metadata"])
    spec = dict(old.get("spec") or {})
    wanted = (new.get("spec") or {}).get("ephemeralContainers") if isinstance(new.get("spec"), dict) else None
    if wanted:
        spec["ephemeralContainers"] = wanted
    else:
        spec.pop("ephemeralContainers", None)
    out["spec"] = spec
    return out


def spec_changed(new: Obj, old: Obj) -> bool:
    """Anything outside metadata and status differs."""
    keys = (set(new) | set(old)) - {"metadata", "status", "apiVersion", "kind"}
    return any(new.get(k) != old.get(k) for k in keys)


def immutable_meta_causes(new: Obj, old: Obj) -> list[dict[str, str]]:
    """uid (when given) must match; upstream's 'field is immutable'."""
    causes = []
    uid = new["metadata"].get("uid")
    if uid and uid != old["metadata"].get("uid"):
        causes.append({"reason": "FieldValueInvalid", "field": "metadata.uid",
                       "message": f'Invalid value: "{uid}": field is immutable'})
    return causes


def grace_period(spec: ResourceSpec, obj: Obj, requested: int | None) -> int:
    """Seconds a deletion waits: pods bound to a node and still running get their grace; others 0."""
    if not spec.graceful_delete:
        return 0
    pod_spec = obj.get("spec") or {}
    if not pod_spec.get("nodeName"):
        return 0
    if (obj.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return 0
    if requested is None:
        grace = pod_spec.get("terminationGracePeriodSeconds")
        grace = DEFAULT_GRACE if grace is None else int(grace)
    else:
        grace = int(requested)
    return 1 if grace < 0 else grace


def propagation_finalizer(policy: str | None) -> str | None:
    if policy == "Foreground":
        return FOREGROUND
    if policy == "Orphan":
        return ORPHAN
    return None


def pending_finalizers(spec: ResourceSpec, obj: Obj) -> bool:
    """Something still has to run before the object may go."""
    if obj["metadata"].get("finalizers"):
        return True
    return spec.resource == "namespaces" and bool((obj.get("spec") or {}).get("finalizers"))


def should_delete_on_update(spec: ResourceSpec, new: Obj, old: Obj) -> bool:
    """The last finalizer left an object whose deletion grace is over (upstream's shouldDeleteDuringUpdate)."""
    old_meta = old["metadata"]
    if not old_meta.get("deletionTimestamp") or pending_finalizers(spec, new):
        return False
    return int(old_meta.get("deletionGracePeriodSeconds") or 0) == 0
