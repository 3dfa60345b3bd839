"""Object validation: the 422 stage, between mutating and validating admission.

:class:`ObjectValidator` checks ObjectMeta with the naming rule of each kind (DNS-1123 subdomain
for most, label for Namespaces, DNS-1035 label for Services, path segment for RBAC), then the
kind's own rules from ``kconsole.api.validators``, then, on update, what may not change. It
returns upstream-shaped causes; the server builds ``Pod "x" is invalid: ...`` from them.
Unknown fields are ignored (field validation 'Strict' is the HTTP front's concern).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kconsole.api.stages import AdmissionContext
from kconsole.api.types import StatusError
from kconsole.api.validators import (
    admissionregistration, apps, batch, certificates, cluster, core, networking, pods, policy, storage)
from kconsole.api.validators.field import Cause, non_negative
from kconsole.api.validators.meta import (
    NameFn, name_is_dns1035_label, name_is_dns_label, name_is_dns_subdomain, name_is_path_segment,
    validate_object_meta, validate_object_meta_update)

Obj = dict[str, Any]
CreateRule = Callable[[Obj], list[Cause]]
UpdateRule = Callable[[Obj, Obj], list[Cause]]

#: Review kinds are answered, never stored; they carry no ObjectMeta worth judging.
UNVALIDATED_GROUPS = frozenset(("authorization.k8s.io", "authentication.k8s.io"))


@dataclass(frozen=True, slots=True)
class KindRules:
    name: NameFn = name_is_dns_subdomain
    create: CreateRule | None = None
    update: UpdateRule | None = None
    #: Checks of a create only (``create`` runs on every write of the whole object).
    new: CreateRule | None = None


RULES: dict[tuple[str, str], KindRules] = {
    ("", "Pod"): KindRules(create=pods.validate_pod, update=pods.validate_pod_update, new=pods.validate_new_pod),
    ("", "Service"): KindRules(name_is_dns1035_label, core.validate_service, core.validate_service_update),
    ("", "Namespace"): KindRules(name_is_dns_label, core.validate_namespace),
    ("", "Node"): KindRules(create=core.validate_node),
    ("", "ConfigMap"): KindRules(create=core.validate_configmap, update=core.validate_configmap_update),
    ("", "Secret"): KindRules(create=core.validate_secret, update=core.validate_secret_update),
    ("", "Event"): KindRules(create=core.validate_event),
    ("", "PersistentVolume"): KindRules(create=storage.validate_persistentvolume),
    ("", "PersistentVolumeClaim"): KindRules(create=storage.validate_persistentvolumeclaim,
                                             update=storage.validate_persistentvolumeclaim_update),
    ("", "ResourceQuota"): KindRules(create=policy.validate_resourcequota),
    ("", "LimitRange"): KindRules(create=policy.validate_limitrange),
    ("networking.k8s.io", "NetworkPolicy"): KindRules(create=policy.validate_networkpolicy),
    ("networking.k8s.io", "Ingress"): KindRules(create=networking.validate_ingress),
    ("apps", "Deployment"): KindRules(create=apps.validate_deployment, update=apps.validate_selector_update),
    ("apps", "ReplicaSet"): KindRules(create=apps.validate_replicaset, update=apps.validate_selector_update),
    ("apps", "DaemonSet"): KindRules(create=apps.validate_daemonset, update=apps.validate_selector_update),
    ("apps", "StatefulSet"): KindRules(create=apps.validate_statefulset, update=apps.validate_statefulset_update),
    ("batch", "Job"): KindRules(create=batch.validate_job, update=batch.validate_job_update),
    ("batch", "CronJob"): KindRules(create=batch.validate_cronjob),
    ("policy", "PodDisruptionBudget"): KindRules(create=cluster.validate_pdb),
    ("autoscaling", "HorizontalPodAutoscaler"): KindRules(name_is_path_segment, cluster.validate_hpa),
    ("scheduling.k8s.io", "PriorityClass"): KindRules(create=cluster.validate_priorityclass,
                                                      update=cluster.validate_priorityclass_update),
    ("storage.k8s.io", "StorageClass"): KindRules(create=cluster.validate_storageclass,
                                                  update=cluster.validate_storageclass_update),
    ("coordination.k8s.io", "Lease"): KindRules(create=cluster.validate_lease),
    ("apiregistration.k8s.io", "APIService"): KindRules(name_is_path_segment, cluster.validate_apiservice),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): KindRules(
        create=admissionregistration.validate_validating_webhooks),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): KindRules(
        create=admissionregistration.validate_mutating_webhooks),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"): KindRules(
        create=admissionregistration.validate_policy),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"): KindRules(
        create=admissionregistration.validate_binding),
    ("certificates.k8s.io", "CertificateSigningRequest"): KindRules(
        create=certificates.validate_csr, update=certificates.validate_csr_update),
    ("rbac.authorization.k8s.io", "Role"): KindRules(name_is_path_segment, cluster.validate_role),
    ("rbac.authorization.k8s.io", "ClusterRole"): KindRules(name_is_path_segment, cluster.validate_cluster_role),
    ("rbac.authorization.k8s.io", "RoleBinding"): KindRules(name_is_path_segment, cluster.validate_role_binding,
                                                            cluster.validate_binding_update),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): KindRules(
        name_is_path_segment, cluster.validate_cluster_role_binding, cluster.validate_binding_update),
}
DEFAULT_RULES = KindRules()

NAMESPACE_MISMATCH = "the namespace of the provided object does not match the namespace sent on the request"


class ObjectValidator:
    """Schema and object validation of creates and updates; returns causes (non-empty -> 422)."""

    name = "Validation"

    def validate(self, ctx: AdmissionContext, obj: dict[str, Any], old: dict[str, Any] | None) -> list[dict[str, str]]:
        if ctx.operation not in ("CREATE", "UPDATE") or ctx.info.group in UNVALIDATED_GROUPS:
            return []
        if ctx.subresource == "scale":
            return non_negative("spec.replicas", (obj.get("spec") or {}).get("replicas"))
        if ctx.subresource and ctx.subresource not in ("status", "ephemeralcontainers", "approval"):
            return []
        if not isinstance(obj, dict):
            raise StatusError.bad_request("the request body must be a JSON object")
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        if ctx.info.namespaced and ctx.namespace and meta.get("namespace") and meta["namespace"] != ctx.namespace:
            raise StatusError.bad_request(NAMESPACE_MISMATCH)
        rules = RULES.get((ctx.info.group, ctx.info.kind), DEFAULT_RULES)
        causes = validate_object_meta(obj, ctx.info.namespaced, rules.name)
        updating = ctx.operation == "UPDATE" and old is not None
        if updating:
            causes += validate_object_meta_update(obj, old)
        if ctx.info.custom is not None:  # a custom kind's schema covers its status too
            causes += ctx.info.custom.validate(obj, old if updating else None)
        if ctx.subresource == "status":
            return causes
        if ctx.subresource == "ephemeralcontainers":
            return causes + (pods.validate_ephemeral_update(obj, old) if updating else [])
        if rules.create is not None:
            causes += rules.create(obj)
        if not updating and rules.new is not None:
            causes += rules.new(obj)
        if updating and rules.update is not None:
            causes += rules.update(obj, old)
        return causes
