"""apps/v1: Deployments, ReplicaSets, DaemonSets, StatefulSets (upstream pkg/apis/apps/validation)."""

from __future__ import annotations

from typing import Any

from kconsole.api.admission.podspec import default_claim_template
from kconsole.api.validators.field import Cause, forbidden, immutable, invalid, not_supported, non_negative
from kconsole.api.validators.pods import validate_pod_template
from kconsole.api.validators.workloads import go_label_selector, validate_rolling, validate_selector_and_template
from kconsole.objects.meta import deep_copy

Obj = dict[str, Any]

STATEFULSET_MUTABLE = ("replicas", "ordinals", "template", "updateStrategy", "persistentVolumeClaimRetentionPolicy",
                       "minReadySeconds")


def _template_for_replicas(spec: Obj) -> list[Cause]:
    """ValidatePodTemplateSpecForReplicaSet: a controller's pods always restart."""
    template = spec.get("template")
    causes = validate_pod_template(template, "spec.template")
    tspec = (template or {}).get("spec") if isinstance(template, dict) else None
    if isinstance(tspec, dict):
        restart = tspec.get("restartPolicy")
        if restart and restart != "Always":
            causes.append(not_supported("spec.template.spec.restartPolicy", restart, ("Always",)))
        if tspec.get("activeDeadlineSeconds") is not None:
            causes.append(forbidden("spec.template.spec.activeDeadlineSeconds",
                                    "activeDeadlineSeconds in ReplicaSet is not Supported"))
    return causes


def _spec(obj: Obj) -> Obj:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def validate_deployment(obj: Obj) -> list[Cause]:
    spec = _spec(obj)
    causes = non_negative("spec.replicas", spec.get("replicas"))
    causes += validate_selector_and_template(spec, "deployment")
    causes += _template_for_replicas(spec)
    strategy = spec.get("strategy") or {}
    stype = strategy.get("type")
    if stype not in ("Recreate", "RollingUpdate"):
        causes.append(not_supported("spec.strategy.type", stype or "", ("Recreate", "RollingUpdate")))
    elif stype == "Recreate" and strategy.get("rollingUpdate") is not None:
        causes.append(forbidden("spec.strategy.rollingUpdate",
                                "may not be specified when strategy `type` is 'Recreate'"))
    else:
        causes += validate_rolling(strategy.get("rollingUpdate"), "spec.strategy.rollingUpdate")
    causes += non_negative("spec.minReadySeconds", spec.get("minReadySeconds"))
    causes += non_negative("spec.revisionHistoryLimit", spec.get("revisionHistoryLimit"))
    deadline = spec.get("progressDeadlineSeconds")
    causes += non_negative("spec.progressDeadlineSeconds", deadline)
    if isinstance(deadline, int) and deadline <= int(spec.get("minReadySeconds") or 0):
        causes.append(invalid("spec.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds"))
    return causes


def validate_replicaset(obj: Obj) -> list[Cause]:
    spec = _spec(obj)
    causes = non_negative("spec.replicas", spec.get("replicas"))
    causes += non_negative("spec.minReadySeconds", spec.get("minReadySeconds"))
    causes += validate_selector_and_template(spec, "deployment")
    causes += _template_for_replicas(spec)
    return causes


def validate_daemonset(obj: Obj) -> list[Cause]:
    spec = _spec(obj)
    causes = validate_selector_and_template(spec, "daemonset")
    causes += _template_for_replicas(spec)
    strategy = spec.get("updateStrategy") or {}
    stype = strategy.get("type")
    if stype not in ("OnDelete", "RollingUpdate"):
        causes.append(not_supported("spec.updateStrategy.type", stype or "", ("OnDelete", "RollingUpdate")))
    elif stype == "RollingUpdate":
        causes += validate_rolling(strategy.get("rollingUpdate"), "spec.updateStrategy.rollingUpdate",
                                   "may not be 0 when `maxSurge` is 0")
    causes += non_negative("spec.minReadySeconds", spec.get("minReadySeconds"))
    causes += non_negative("spec.revisionHistoryLimit", spec.get("revisionHistoryLimit"))
    return causes


def validate_statefulset(obj: Obj) -> list[Cause]:
    spec = _spec(obj)
    causes: list[Cause] = []
    policy = spec.get("podManagementPolicy")
    if policy not in ("OrderedReady", "Parallel"):
        causes.append(not_supported("spec.podManagementPolicy", policy or "", ("OrderedReady", "Parallel")))
    strategy = spec.get("updateStrategy") or {}
    stype = strategy.get("type")
    if stype not in ("OnDelete", "RollingUpdate"):
        causes.append(not_supported("spec.updateStrategy.type", stype or "", ("OnDelete", "RollingUpdate")))
    elif stype == "RollingUpdate":
        rolling = strategy.get("rollingUpdate") or {}
        causes += non_negative("spec.updateStrategy.rollingUpdate.partition", rolling.get("partition"))
    causes += non_negative("spec.replicas", spec.get("replicas"))
    causes += non_negative("spec.minReadySeconds", spec.get("minReadySeconds"))
    causes += validate_selector_and_template(spec, "statefulset")
    causes += _template_for_replicas(_with_claim_volumes(spec))
    return causes


def _with_claim_volumes(spec: Obj) -> Obj:
    """The spec as its pods get it: each volumeClaimTemplate is a volume of that name (the controller
    mounts the claim there), so containers may mount it. Upstream skips the template's pod-spec
    validation altogether for this reason; this keeps the rest of it."""
    claims = [t["metadata"]["name"] for t in spec.get("volumeClaimTemplates") or ()
              if isinstance(t, dict) and isinstance(t.get("metadata"), dict) and t["metadata"].get("name")]
    template = spec.get("template")
    tspec = template.get("spec") if isinstance(template, dict) else None
    if not claims or not isinstance(tspec, dict):
        return spec
    volumes = tspec.get("volumes") if isinstance(tspec.get("volumes"), list) else []
    have = {v.get("name") for v in volumes if isinstance(v, dict)}
    extra = [{"name": n, "persistentVolumeClaim": {"claimName": n}} for n in claims if n not in have]
    return {**spec, "template": {**template, "spec": {**tspec, "volumes": [*volumes, *extra]}}}


def validate_selector_update(obj: Obj, old: Obj) -> list[Cause]:
    """apps/v1 selectors are immutable."""
    new_sel, old_sel = _spec(obj).get("selector"), _spec(old).get("selector")
    if new_sel != old_sel:
        return [immutable("spec.selector", go_label_selector(new_sel))]
    return []


def validate_statefulset_update(obj: Obj, old: Obj) -> list[Cause]:
    spec, old_spec = dict(_spec(obj)), dict(_spec(old))
    for key in STATEFULSET_MUTABLE:
        spec.pop(key, None)
        old_spec.pop(key, None)
    for each in (spec, old_spec):  # a set stored before its claim templates were defaulted reads as upstream's
        if isinstance(each.get("volumeClaimTemplates"), list):
            each["volumeClaimTemplates"] = [default_claim_template(deep_copy(c)) for c in each["volumeClaimTemplates"]]
    if spec != old_spec:
        return [forbidden("spec", "updates to statefulset spec for fields other than 'replicas', 'ordinals', "
                                  "'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and "
                                  "'minReadySeconds' are forbidden")]
    return []
