"""The smaller groups: policy (PDBs), autoscaling (HPAs), scheduling (PriorityClasses), storage
(StorageClasses), coordination (Leases), apiregistration (APIServices) and rbac (Roles, ClusterRoles and
their bindings)."""

from __future__ import annotations

from typing import Any

from kconsole.api.validators.field import (
    Cause, GoLiteral, forbidden, invalid, is_int, non_negative, not_supported, required)
from kconsole.api.validators.meta import is_dns1123_subdomain, name_is_path_segment
from kconsole.api.validators.pods import validate_label_selector
from kconsole.api.validators.workloads import not_more_than_100_percent, validate_positive_int_or_percent

Obj = dict[str, Any]

RBAC_GROUP = "rbac.authorization.k8s.io"
HIGHEST_USER_PRIORITY = 1000000000
SYSTEM_PRIORITY_CLASSES = {"system-cluster-critical": 2000000000, "system-node-critical": 2000001000}
PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")


def _spec(obj: Obj) -> Obj:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def validate_pdb(obj: Obj) -> list[Cause]:
    spec = _spec(obj)
    causes: list[Cause] = []
    min_available, max_unavailable = spec.get("minAvailable"), spec.get("maxUnavailable")
    if min_available is not None and max_unavailable is not None:
        causes.append(invalid("spec", GoLiteral("policy.PodDisruptionBudgetSpec{...}"),
                              "minAvailable and maxUnavailable cannot be both set"))
    for key, value in (("minAvailable", min_available), ("maxUnavailable", max_unavailable)):
        causes += validate_positive_int_or_percent(value, f"spec.{key}")
        causes += not_more_than_100_percent(value, f"spec.{key}")
    causes += validate_label_selector(spec.get("selector"), "spec.selector")
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in ("AlwaysAllow", "IfHealthyBudget"):
        causes.append(not_supported("spec.unhealthyPodEvictionPolicy", policy, ("AlwaysAllow", "IfHealthyBudget")))
    return causes


def validate_hpa(obj: Obj) -> list[Cause]:
    spec = _spec(obj)
    causes: list[Cause] = []
    ref = spec.get("scaleTargetRef") or {}
    if not ref.get("kind"):
        causes.append(required("spec.scaleTargetRef.kind"))
    if not ref.get("name"):
        causes.append(required("spec.scaleTargetRef.name"))
    else:
        causes += [invalid("spec.scaleTargetRef.name", ref["name"], m) for m in name_is_path_segment(ref["name"], False)]
    min_replicas, max_replicas = spec.get("minReplicas"), spec.get("maxReplicas")
    if min_replicas is not None and (not is_int(min_replicas) or min_replicas < 1):
        causes.append(invalid("spec.minReplicas", min_replicas, "must be greater than or equal to 1"))
    if not is_int(max_replicas) or max_replicas < 1:
        causes.append(invalid("spec.maxReplicas", max_replicas, "must be greater than 0"))
    elif is_int(min_replicas) and max_replicas < min_replicas:
        causes.append(invalid("spec.maxReplicas", max_replicas, "must be greater than or equal to `minReplicas`"))
    for i, metric in enumerate(spec.get("metrics") or ()):
        mtype = (metric or {}).get("type")
        supported = ("ContainerResource", "External", "Object", "Pods", "Resource")
        if mtype not in supported:
            causes.append(not_supported(f"spec.metrics[{i}].type", mtype or "", supported))
    return causes


def validate_priorityclass(obj: Obj) -> list[Cause]:
    name = (obj.get("metadata") or {}).get("name") or ""
    value = obj.get("value")
    causes: list[Cause] = []
    if not is_int(value):
        causes.append(required("value") if value is None else invalid("value", value, "must be an integer"))
        return causes
    system = SYSTEM_PRIORITY_CLASSES.get(name) == value
    if name.startswith("system-") and not system:
        causes.append(forbidden("metadata.name", "priority class names with 'system-' prefix are reserved for "
                                                 "system use only"))
    if value > HIGHEST_USER_PRIORITY and not system:
        causes.append(forbidden("value", f"maximum allowed value of a user defined priority is {HIGHEST_USER_PRIORITY}"))
    policy = obj.get("preemptionPolicy")
    if policy is not None and policy not in PREEMPTION_POLICIES:
        causes.append(not_supported("preemptionPolicy", policy, PREEMPTION_POLICIES))
    return causes


def validate_apiservice(obj: Obj) -> list[Cause]:
    """kube-aggregator's ValidateAPIService: the name is ``<version>.<group>``, priorities in range."""
    spec = _spec(obj)
    name = (obj.get("metadata") or {}).get("name") or ""
    group, version = spec.get("group") or "", spec.get("version") or ""
    causes: list[Cause] = []
    if not version:
        causes.append(required("spec.version"))
    elif name != f"{version}.{group}":
        causes.append(invalid("metadata.name", name, 'must be `spec.version+"."+spec.group`'))
    for field, limit in (("groupPriorityMinimum", 20000), ("versionPriority", 1000)):
        value = spec.get(field)
        if not is_int(value) or not 0 < value <= limit:
            causes.append(invalid(f"spec.{field}", value, f"must be positive and less than {limit}"))
    return causes


def validate_priorityclass_update(obj: Obj, old: Obj) -> list[Cause]:
    causes: list[Cause] = []
    if obj.get("value") != old.get("value"):
        causes.append(forbidden("value", "may not be changed in an update."))
    if obj.get("preemptionPolicy") != old.get("preemptionPolicy"):
        causes.append(invalid("preemptionPolicy", obj.get("preemptionPolicy"), "field is immutable"))
    return causes


def validate_lease(obj: Obj) -> list[Cause]:
    spec = _spec(obj)
    causes: list[Cause] = []
    duration = spec.get("leaseDurationSeconds")
    if duration is not None and (not is_int(duration) or duration <= 0):
        causes.append(invalid("spec.leaseDurationSeconds", duration, "must be greater than 0"))
    causes += non_negative("spec.leaseTransitions", spec.get("leaseTransitions"))
    return causes


def validate_policy_rules(rules: Any, namespaced: bool) -> list[Cause]:
    causes: list[Cause] = []
    for i, rule in enumerate(rules or ()):
        p = f"rules[{i}]"
        if not isinstance(rule, dict):
            causes.append(invalid(p, rule, "must be an object"))
            continue
        if not rule.get("verbs"):
            causes.append(required(f"{p}.verbs", "verbs must contain at least one value"))
        urls = rule.get("nonResourceURLs") or []
        if urls:
            if namespaced:
                causes.append(invalid(f"{p}.nonResourceURLs", urls, "namespaced rules cannot apply to non-resource URLs"))
            if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
                causes.append(invalid(f"{p}.nonResourceURLs", urls,
                                      "rules cannot apply to both regular resources and non-resource URLs"))
            continue
        if not rule.get("apiGroups"):
            causes.append(required(f"{p}.apiGroups", "resource rules must supply at least one api group"))
        if not rule.get("resources"):
            causes.append(required(f"{p}.resources", "resource rules must supply at least one resource"))
    return causes


def validate_role(obj: Obj) -> list[Cause]:
    return validate_policy_rules(obj.get("rules"), namespaced=True)


def validate_cluster_role(obj: Obj) -> list[Cause]:
    causes = validate_policy_rules(obj.get("rules"), namespaced=False)
    agg = obj.get("aggregationRule")
    if agg is not None:
        selectors = (agg or {}).get("clusterRoleSelectors") or []
        if not selectors:
            causes.append(required("aggregationRule.clusterRoleSelectors",
                                   "at least one clusterRoleSelector required if aggregationRule is non-nil"))
        for i, sel in enumerate(selectors):
            causes += validate_label_selector(sel, f"aggregationRule.clusterRoleSelectors[{i}]")
    return causes


def _validate_binding(obj: Obj, namespaced: bool) -> list[Cause]:
    causes: list[Cause] = []
    ref = obj.get("roleRef") or {}
    if ref.get("apiGroup") != RBAC_GROUP:
        causes.append(not_supported("roleRef.apiGroup", ref.get("apiGroup") or "", (RBAC_GROUP,)))
    kinds = ("Role", "ClusterRole") if namespaced else ("ClusterRole",)
    if ref.get("kind") not in kinds:
        causes.append(not_supported("roleRef.kind", ref.get("kind") or "", kinds))
    if not ref.get("name"):
        causes.append(required("roleRef.name"))
    else:
        causes += [invalid("roleRef.name", ref["name"], m) for m in name_is_path_segment(ref["name"], False)]
    for i, subject in enumerate(obj.get("subjects") or ()):
        p = f"subjects[{i}]"
        subject = subject if isinstance(subject, dict) else {}
        name, kind, group = subject.get("name") or "", subject.get("kind") or "", subject.get("apiGroup") or ""
        if not name:
            causes.append(required(f"{p}.name"))
        if kind == "ServiceAccount":
            if name:
                causes += [invalid(f"{p}.name", name, m) for m in is_dns1123_subdomain(name)]
            if group:
                causes.append(not_supported(f"{p}.apiGroup", group, ("",)))
            if not namespaced and not subject.get("namespace"):
                causes.append(required(f"{p}.namespace"))
        elif kind in ("User", "Group"):
            if group != RBAC_GROUP:
                causes.append(not_supported(f"{p}.apiGroup", group, (RBAC_GROUP,)))
        else:
            causes.append(not_supported(f"{p}.kind", kind, ("ServiceAccount", "User", "Group")))
    return causes


def validate_role_binding(obj: Obj) -> list[Cause]:
    return _validate_binding(obj, namespaced=True)


def validate_cluster_role_binding(obj: Obj) -> list[Cause]:
    return _validate_binding(obj, namespaced=False)


def validate_binding_update(obj: Obj, old: Obj) -> list[Cause]:
    ref, old_ref = obj.get("roleRef") or {}, old.get("roleRef") or {}
    if ref != old_ref:
        return [invalid("roleRef", GoLiteral(f'rbac.RoleRef{{APIGroup:"{ref.get("apiGroup", "")}", '
                                             f'Kind:"{ref.get("kind", "")}", Name:"{ref.get("name", "")}"}}'),
                        "cannot change roleRef")]
    return []


RECLAIM_POLICIES = ("Delete", "Retain")
BINDING_MODES = ("Immediate", "WaitForFirstConsumer")


def validate_storageclass(obj: Obj) -> list[Cause]:
    """ValidateStorageClass: a provisioner, and a known reclaim policy and binding mode."""
    causes: list[Cause] = []
    provisioner = obj.get("provisioner")
    if not provisioner:
        causes.append(required("provisioner"))
    elif not isinstance(provisioner, str) or len(provisioner) > 63 * 4:
        causes.append(invalid("provisioner", provisioner, "must be a qualified name"))
    parameters = obj.get("parameters")
    if parameters is not None and (not isinstance(parameters, dict)
                                   or not all(isinstance(v, str) for v in parameters.values())):
        causes.append(invalid("parameters", GoLiteral("map[string]string{...}"), "must map names to strings"))
    policy = obj.get("reclaimPolicy")
    if policy not in RECLAIM_POLICIES:
        causes.append(not_supported("reclaimPolicy", policy or "", RECLAIM_POLICIES))
    mode = obj.get("volumeBindingMode")
    if mode not in BINDING_MODES:
        causes.append(not_supported("volumeBindingMode", mode or "", BINDING_MODES))
    return causes


def validate_storageclass_update(obj: Obj, old: Obj) -> list[Cause]:
    causes: list[Cause] = []
    for key in ("parameters", "provisioner", "reclaimPolicy"):
        if obj.get(key) != old.get(key):
            causes.append(forbidden(key, f"updates to {key} are forbidden."))
    if obj.get("volumeBindingMode") != old.get("volumeBindingMode"):
        causes.append(invalid("volumeBindingMode", obj.get("volumeBindingMode"), "field is immutable"))
    return causes
