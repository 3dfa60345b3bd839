"""Scheme defaulting per kind: the values upstream fills in when decoding a request body.

Runs on CREATE and UPDATE (upstream defaults every decoded body, so a ``kubectl replace`` that
omits a defaulted field does not look like a change). What only happens on create — a Pod's
fresh status, a Job's generated selector, a Namespace's finalizer — is guarded by operation.
"""

from __future__ import annotations

import base64
import marshal
from collections.abc import Callable
from typing import Any

from kconsole.api.admission.podspec import (
    default_claim_template,
    default_container,
    default_pod_only,
    default_pod_spec,
    default_pod_template,
    null_timestamp,
    qos_class,
)
from kconsole.api.stages import AdmissionContext
from kconsole.objects.meta import deep_copy

Obj = dict[str, Any]
Defaulter = Callable[[AdmissionContext, Obj], None]

#: The DaemonSet's template generation, as apps/v1 carries upstream's internal field.
DAEMONSET_TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"
JOB_NAME_LABELS = ("batch.kubernetes.io/job-name", "job-name")
CONTROLLER_UID_LABELS = ("batch.kubernetes.io/controller-uid", "controller-uid")


def _spec(obj: Obj) -> Obj:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    return spec


def _sub(parent: Obj, key: str) -> Obj:
    child = parent.get(key)
    if not isinstance(child, dict):
        child = parent[key] = {}
    return child


#: Defaulted pod specs (marshalled) and their QoS class by the marshalled spec as sent: the pods of
#: one template arrive identical, and defaulting reads nothing but the spec. Bounded; cleared when full.
_DEFAULTED_SPECS: dict[bytes, tuple[bytes, str]] = {}
_DEFAULTED_SPECS_SIZE = 2048


def _default_pod_spec(obj: Obj, spec: Obj) -> tuple[Obj, str]:
    """The defaulted spec (in ``obj``: always a private copy, the spec handed in is left alone) and
    its QoS class."""
    try:
        key = marshal.dumps(spec)
    except ValueError:  # not plain JSON data: default a deep copy
        key = None
    known = _DEFAULTED_SPECS.get(key) if key is not None else None
    if known is not None:
        spec = obj["spec"] = marshal.loads(known[0])
        return spec, known[1]
    spec = obj["spec"] = marshal.loads(key) if key is not None else deep_copy(spec)
    default_pod_spec(spec)
    default_pod_only(spec)
    qos = qos_class(spec)
    if key is not None:
        if len(_DEFAULTED_SPECS) >= _DEFAULTED_SPECS_SIZE:
            _DEFAULTED_SPECS.clear()
        _DEFAULTED_SPECS[key] = (marshal.dumps(spec), qos)
    return spec, qos


def default_pod(ctx: AdmissionContext, obj: Obj) -> None:
    spec, qos = _default_pod_spec(obj, _spec(obj))
    if ctx.operation == "CREATE":
        obj["status"] = {"phase": "Pending", "qosClass": qos}
        if spec.get("schedulingGates"):
            # Upstream's PrepareForCreate: kubectl's STATUS column then reads SchedulingGated.
            obj["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                                            "lastTransitionTime": None, "reason": "SchedulingGated",
                                            "message": "Scheduling is blocked due to non-empty scheduling gates"}]


def default_deployment(ctx: AdmissionContext, obj: Obj) -> None:
    spec = _spec(obj)
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    strategy = _sub(spec, "strategy")
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
    if strategy["type"] == "RollingUpdate":
        rolling = _sub(strategy, "rollingUpdate")
        if rolling.get("maxUnavailable") is None:
            rolling["maxUnavailable"] = "25%"
        if rolling.get("maxSurge") is None:
            rolling["maxSurge"] = "25%"
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    if spec.get("progressDeadlineSeconds") is None:
        spec["progressDeadlineSeconds"] = 600
    default_pod_template(spec.get("template"))


def default_replicaset(ctx: AdmissionContext, obj: Obj) -> None:
    spec = _spec(obj)
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    default_pod_template(spec.get("template"))


def default_daemonset(ctx: AdmissionContext, obj: Obj) -> None:
    spec = _spec(obj)
    strategy = _sub(spec, "updateStrategy")
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
    if strategy["type"] == "RollingUpdate":
        rolling = _sub(strategy, "rollingUpdate")
        if rolling.get("maxUnavailable") is None:
            rolling["maxUnavailable"] = 1
        if rolling.get("maxSurge") is None:
            rolling["maxSurge"] = 0
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    if ctx.operation == "CREATE":  # the strategy moves it on updates of the template
        annotations = obj.setdefault("metadata", {}).setdefault("annotations", {})
        annotations[DAEMONSET_TEMPLATE_GENERATION] = "1"
    default_pod_template(spec.get("template"))


def default_networkpolicy(ctx: AdmissionContext, obj: Obj) -> None:
    """SetDefaults_NetworkPolicy: policyTypes from the rules given, ports' protocol TCP."""
    spec = _spec(obj)
    if not spec.get("policyTypes"):
        spec["policyTypes"] = ["Ingress", "Egress"] if spec.get("egress") else ["Ingress"]
    for direction in ("ingress", "egress"):
        for rule in spec.get(direction) or ():
            for port in (rule.get("ports") or ()) if isinstance(rule, dict) else ():
                if isinstance(port, dict) and not port.get("protocol"):
                    port["protocol"] = "TCP"


def default_statefulset(ctx: AdmissionContext, obj: Obj) -> None:
    spec = _spec(obj)
    if not spec.get("podManagementPolicy"):
        spec["podManagementPolicy"] = "OrderedReady"
    strategy = _sub(spec, "updateStrategy")
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
    if strategy["type"] == "RollingUpdate":
        rolling = _sub(strategy, "rollingUpdate")
        if rolling.get("partition") is None:
            rolling["partition"] = 0
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    retention = _sub(spec, "persistentVolumeClaimRetentionPolicy")
    retention.setdefault("whenDeleted", "Retain")
    retention.setdefault("whenScaled", "Retain")
    default_pod_template(spec.get("template"))
    for claim in spec.get("volumeClaimTemplates") or ():
        default_claim_template(claim)


def default_job(ctx: AdmissionContext, obj: Obj) -> None:
    spec = _spec(obj)
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    if spec.get("parallelism") is None:
        spec["parallelism"] = 1
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = 2147483647 if spec.get("backoffLimitPerIndex") is not None else 6
    if not spec.get("completionMode"):
        spec["completionMode"] = "NonIndexed"
    if spec.get("suspend") is None:
        spec["suspend"] = False
    if not spec.get("podReplacementPolicy"):
        spec["podReplacementPolicy"] = "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed"
    template = spec.get("template")
    meta = obj.setdefault("metadata", {})
    if ctx.operation == "CREATE" and not spec.get("manualSelector") and isinstance(template, dict):
        generate_job_selector(obj, spec, template)
    # After the selector's labels: upstream defaults the Job again when it is read back from storage,
    # so a Job without labels shows its template's, controller-uid and job-name included.
    template_labels = ((template or {}).get("metadata") or {}).get("labels") if isinstance(template, dict) else None
    if template_labels and not meta.get("labels"):
        meta["labels"] = dict(template_labels)
    default_pod_template(template)


def generate_job_selector(obj: Obj, spec: Obj, template: Obj) -> None:
    """upstream's generateSelector: pods labelled with the job's uid and name, selected by uid.
    Labels the user set are left for validation to judge."""
    meta = obj.get("metadata") or {}
    labels = _sub(_sub(template, "metadata"), "labels")
    for key in JOB_NAME_LABELS:
        labels.setdefault(key, meta.get("name", ""))
    for key in CONTROLLER_UID_LABELS:
        labels.setdefault(key, meta.get("uid", ""))
    selector = _sub(spec, "selector")
    match_labels = _sub(selector, "matchLabels")
    match_labels.setdefault(CONTROLLER_UID_LABELS[0], meta.get("uid", ""))


def default_podtemplate(ctx: AdmissionContext, obj: Obj) -> None:
    default_pod_template(obj.get("template"))


def default_cronjob(ctx: AdmissionContext, obj: Obj) -> None:
    spec = _spec(obj)
    if not spec.get("concurrencyPolicy"):
        spec["concurrencyPolicy"] = "Allow"
    if spec.get("suspend") is None:
        spec["suspend"] = False
    if spec.get("successfulJobsHistoryLimit") is None:
        spec["successfulJobsHistoryLimit"] = 3
    if spec.get("failedJobsHistoryLimit") is None:
        spec["failedJobsHistoryLimit"] = 1
    job_template = spec.get("jobTemplate")
    if isinstance(job_template, dict):
        null_timestamp(job_template)
        if isinstance(job_template.get("spec"), dict):
            default_pod_template(job_template["spec"].get("template"))


def default_service(ctx: AdmissionContext, obj: Obj) -> None:
    spec = _spec(obj)
    if not spec.get("type"):
        spec["type"] = "ClusterIP"
    if not spec.get("sessionAffinity"):
        spec["sessionAffinity"] = "None"
    for port in spec.get("ports") or ():
        if not isinstance(port, dict):
            continue
        if not port.get("protocol"):
            port["protocol"] = "TCP"
        if port.get("targetPort") in (None, 0, "") and port.get("port") is not None:
            port["targetPort"] = port["port"]
    if spec["type"] != "ExternalName":
        if not spec.get("internalTrafficPolicy"):
            spec["internalTrafficPolicy"] = "Cluster"
        if not spec.get("ipFamilies"):
            spec["ipFamilies"] = ["IPv4"]
        if not spec.get("ipFamilyPolicy"):
            spec["ipFamilyPolicy"] = "SingleStack"
    if spec["type"] in ("NodePort", "LoadBalancer") and not spec.get("externalTrafficPolicy"):
        spec["externalTrafficPolicy"] = "Cluster"
    if spec["type"] == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is None:
        spec["allocateLoadBalancerNodePorts"] = True


def default_namespace(ctx: AdmissionContext, obj: Obj) -> None:
    meta = obj.setdefault("metadata", {})
    name = meta.get("name")
    if name:
        labels = meta.get("labels")
        if not isinstance(labels, dict):
            labels = meta["labels"] = {}
        labels["kubernetes.io/metadata.name"] = name
    if ctx.operation == "CREATE":
        _spec(obj)["finalizers"] = ["kubernetes"]
        obj["status"] = {"phase": "Active"}


def default_secret(ctx: AdmissionContext, obj: Obj) -> None:
    """stringData is write-only: merged into data (base64, winning over the same key) and dropped,
    as upstream's v1 conversion does, so it is never stored or read back. A malformed one is left
    for validation to name."""
    if not obj.get("type"):
        obj["type"] = "Opaque"
    string_data = obj.get("stringData")
    if isinstance(string_data, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in string_data.items()):
        data = obj.get("data")
        if data is None or isinstance(data, dict):
            merged = dict(data or {})
            merged.update((k, base64.b64encode(v.encode()).decode()) for k, v in string_data.items())
            obj["data"] = merged
            del obj["stringData"]


def default_hpa(ctx: AdmissionContext, obj: Obj) -> None:
    spec = _spec(obj)
    if spec.get("minReplicas") is None:
        spec["minReplicas"] = 1
    if not spec.get("metrics"):
        spec["metrics"] = [{"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):  # a behavior given in part is filled out (GenerateHPAScale{Up,Down}Rules)
        for direction, window, policies in (
                ("scaleUp", 0, [{"type": "Pods", "value": 4, "periodSeconds": 15},
                                {"type": "Percent", "value": 100, "periodSeconds": 15}]),
                ("scaleDown", 300, [{"type": "Percent", "value": 100, "periodSeconds": 15}])):
            rules = behavior.get(direction)
            if not isinstance(rules, dict):
                rules = behavior[direction] = {}
            if rules.get("stabilizationWindowSeconds") is None:
                rules["stabilizationWindowSeconds"] = window
            if not rules.get("selectPolicy"):
                rules["selectPolicy"] = "Max"
            if rules.get("policies") is None:
                rules["policies"] = policies


def default_priorityclass(ctx: AdmissionContext, obj: Obj) -> None:
    if not obj.get("preemptionPolicy"):
        obj["preemptionPolicy"] = "PreemptLowerPriority"


def default_endpoint_ports(ports: Any) -> None:
    for port in ports or ():
        if isinstance(port, dict) and not port.get("protocol"):
            port["protocol"] = "TCP"


def default_endpoints(ctx: AdmissionContext, obj: Obj) -> None:
    for subset in obj.get("subsets") or ():
        if isinstance(subset, dict):
            default_endpoint_ports(subset.get("ports"))


def default_endpointslice(ctx: AdmissionContext, obj: Obj) -> None:
    default_endpoint_ports(obj.get("ports"))


def default_binding(ctx: AdmissionContext, obj: Obj) -> None:
    """Subjects name their API group: rbac's for users and groups, core for service accounts."""
    for subject in obj.get("subjects") or ():
        if isinstance(subject, dict) and not subject.get("apiGroup") and subject.get("kind") in ("User", "Group"):
            subject["apiGroup"] = "rbac.authorization.k8s.io"


def default_volume_claim(ctx: AdmissionContext, obj: Obj) -> None:
    spec = _spec(obj)
    if not spec.get("volumeMode"):
        spec["volumeMode"] = "Filesystem"
    if ctx.operation == "CREATE":
        obj["status"] = {"phase": "Pending"}


def default_volume(ctx: AdmissionContext, obj: Obj) -> None:
    spec = _spec(obj)
    if not spec.get("persistentVolumeReclaimPolicy"):
        spec["persistentVolumeReclaimPolicy"] = "Retain"
    if not spec.get("volumeMode"):
        spec["volumeMode"] = "Filesystem"
    if ctx.operation == "CREATE":
        obj["status"] = {"phase": "Pending"}


def default_storageclass(ctx: AdmissionContext, obj: Obj) -> None:
    """SetDefaults_StorageClass."""
    if not obj.get("reclaimPolicy"):
        obj["reclaimPolicy"] = "Delete"
    if not obj.get("volumeBindingMode"):
        obj["volumeBindingMode"] = "Immediate"


def default_replication_controller(ctx: AdmissionContext, obj: Obj) -> None:
    """SetDefaults_ReplicationController: the selector and labels default to the template's labels."""
    spec = _spec(obj)
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    template = spec.get("template")
    labels = ((template or {}).get("metadata") or {}).get("labels") if isinstance(template, dict) else None
    if labels:
        if not spec.get("selector"):
            spec["selector"] = dict(labels)
        meta = obj.setdefault("metadata", {})
        if not meta.get("labels"):
            meta["labels"] = dict(labels)
    default_pod_template(template)


def default_ingress(ctx: AdmissionContext, obj: Obj) -> None:
    if ctx.operation == "CREATE":
        obj["status"] = {"loadBalancer": {}}  # Go's non-pointer struct: upstream always shows it


def default_csr(ctx: AdmissionContext, obj: Obj) -> None:
    """A CertificateSigningRequest names who asked (upstream's PrepareForCreate), whatever the body says."""
    if ctx.operation != "CREATE":
        return
    spec = _spec(obj)
    user = ctx.user
    spec["username"] = user.name
    if user.uid:
        spec["uid"] = user.uid
    else:
        spec.pop("uid", None)
    if user.groups:
        spec["groups"] = list(user.groups)
    else:
        spec.pop("groups", None)
    if user.extra:
        spec["extra"] = {key: list(values) for key, values in user.extra}
    else:
        spec.pop("extra", None)


def _default_rules(rules: Any) -> None:
    for rule in rules or ():
        if isinstance(rule, dict):
            rule.setdefault("scope", "*")


def default_webhooks(ctx: AdmissionContext, obj: Obj) -> None:
    """admissionregistration/v1 SetDefaults_ValidatingWebhook and SetDefaults_MutatingWebhook."""
    mutating = ctx.info.kind == "MutatingWebhookConfiguration"
    for hook in obj.get("webhooks") or ():
        if not isinstance(hook, dict):
            continue
        hook.setdefault("failurePolicy", "Fail")
        hook.setdefault("matchPolicy", "Equivalent")
        hook.setdefault("namespaceSelector", {})
        hook.setdefault("objectSelector", {})
        hook.setdefault("timeoutSeconds", 10)
        if mutating:
            hook.setdefault("reinvocationPolicy", "Never")
        _default_rules(hook.get("rules"))


def _default_match_resources(match: Any) -> None:
    """SetDefaults_MatchResources: a policy's matchConstraints and a binding's matchResources are the
    same type upstream, so they default alike."""
    if isinstance(match, dict):
        match.setdefault("matchPolicy", "Equivalent")
        match.setdefault("namespaceSelector", {})
        match.setdefault("objectSelector", {})
        _default_rules(match.get("resourceRules"))
        _default_rules(match.get("excludeResourceRules"))


def default_admission_policy(ctx: AdmissionContext, obj: Obj) -> None:
    spec = _spec(obj)
    spec.setdefault("failurePolicy", "Fail")
    _default_match_resources(spec.get("matchConstraints"))


def default_policy_binding(ctx: AdmissionContext, obj: Obj) -> None:
    spec = _spec(obj)
    ref = spec.get("paramRef")
    if isinstance(ref, dict):
        ref.setdefault("parameterNotFoundAction", "Deny")
    _default_match_resources(spec.get("matchResources"))


#: (group, kind) -> defaulter.
DEFAULTERS: dict[tuple[str, str], Defaulter] = {
    ("", "Pod"): default_pod,
    ("", "Service"): default_service,
    ("", "Namespace"): default_namespace,
    ("", "Secret"): default_secret,
    ("", "Endpoints"): default_endpoints,
    ("", "PersistentVolumeClaim"): default_volume_claim,
    ("", "PersistentVolume"): default_volume,
    ("", "ReplicationController"): default_replication_controller,
    ("", "PodTemplate"): default_podtemplate,
    ("discovery.k8s.io", "EndpointSlice"): default_endpointslice,
    ("networking.k8s.io", "Ingress"): default_ingress,
    ("networking.k8s.io", "NetworkPolicy"): default_networkpolicy,
    ("apps", "Deployment"): default_deployment,
    ("apps", "ReplicaSet"): default_replicaset,
    ("apps", "DaemonSet"): default_daemonset,
    ("apps", "StatefulSet"): default_statefulset,
    ("batch", "Job"): default_job,
    ("batch", "CronJob"): default_cronjob,
    ("autoscaling", "HorizontalPodAutoscaler"): default_hpa,
    ("scheduling.k8s.io", "PriorityClass"): default_priorityclass,
    ("storage.k8s.io", "StorageClass"): default_storageclass,
    ("certificates.k8s.io", "CertificateSigningRequest"): default_csr,
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): default_webhooks,
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): default_webhooks,
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"): default_admission_policy,
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"): default_policy_binding,
    ("rbac.authorization.k8s.io", "RoleBinding"): default_binding,
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): default_binding,
}


#: Kinds whose status a create starts afresh, whatever the body says (upstream's PrepareForCreate:
#: ``deployment.Status = apps.DeploymentStatus{}``), as the Go zero value encodes (fields without
#: ``omitempty`` stay): a manifest exported with ``-o yaml`` and applied again must not bring back old
#: replica counts or conditions. Their controllers write it from there. Pods, Namespaces, volumes and
#: Ingresses get their first status from their defaulter; a Node keeps the one its kubelet sends.
FRESH_STATUS: dict[tuple[str, str], Obj] = {
    ("", "Service"): {"loadBalancer": {}},
    ("", "ReplicationController"): {"replicas": 0},
    ("", "ResourceQuota"): {},
    ("apps", "Deployment"): {},
    ("apps", "ReplicaSet"): {"replicas": 0},
    ("apps", "DaemonSet"): {"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0,
                            "numberReady": 0},
    ("apps", "StatefulSet"): {"replicas": 0, "availableReplicas": 0},
    ("batch", "Job"): {},
    ("batch", "CronJob"): {},
    ("autoscaling", "HorizontalPodAutoscaler"): {"desiredReplicas": 0},
    ("certificates.k8s.io", "CertificateSigningRequest"): {},
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"): {},
    ("policy", "PodDisruptionBudget"): {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0,
                                        "expectedPods": 0},
}


class Defaults:
    """Per-kind scheme defaults, on every create and update of the main resource."""

    name = "Defaults"
    #: The (group, kind) pairs this plugin can act on: the server asks it about no other.
    kinds = frozenset(DEFAULTERS) | frozenset(FRESH_STATUS)
    #: Kinds whose spec ``admit`` replaces with a private copy before changing anything in it, so the
    #: spec it is handed may still be the caller's (see APIServer._plugins).
    privatizes_spec = frozenset({("", "Pod")})

    def admit(self, ctx: AdmissionContext, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        if ctx.subresource == "ephemeralcontainers":
            # The decoded Pod is defaulted whole upstream; only the new debug containers lack defaults.
            for c in _spec(obj).get("ephemeralContainers") or ():
                if isinstance(c, dict):
                    default_container(c)
            return
        if ctx.operation not in ("CREATE", "UPDATE") or ctx.subresource:
            return
        kind = (ctx.info.group, ctx.info.kind)
        fresh = FRESH_STATUS.get(kind) if ctx.operation == "CREATE" else None
        if fresh is not None:
            obj["status"] = deep_copy(fresh)  # its own: a controller may fill in the nested ones
        defaulter = DEFAULTERS.get(kind)
        if defaulter is not None:
            defaulter(ctx, obj)
