"""Object validation: exact field paths and upstream's messages, as a 422 would show them."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kconsole.api.admission import mutating_plugins
from kconsole.api.registry import Registry
from kconsole.api.stages import AdmissionContext
from kconsole.api.types import StatusError, UserInfo
from kconsole.api.validation import ObjectValidator

REGISTRY = Registry()
VALIDATOR = ObjectValidator()
NS = {"metadata": {"name": "default"}, "status": {"phase": "Active"}}


def ctx_for(resource: str, group: str, op: str, subresource: str | None = None) -> AdmissionContext:
    spec = REGISTRY.get(group, resource)
    assert spec is not None
    return AdmissionContext(operation=op, info=spec.info, user=UserInfo("alice"),
                            namespace="default" if spec.info.namespaced else None, name=None, subresource=subresource,
                            now="2026-01-01T00:00:00Z", rng=random.Random(5),
                            get_object=lambda r, n, name: NS if r == "namespaces" else None,
                            allocate_cluster_ip=lambda: "10.96.0.9")


def check(obj: dict[str, Any], resource: str = "pods", group: str = "", op: str = "CREATE",
          old: dict[str, Any] | None = None, default: bool = True) -> list[str]:
    """'field: message' lines for the object, after defaulting as the server would do."""
    ctx = ctx_for(resource, group, op)
    if default:
        for plugin in mutating_plugins():
            plugin.admit(ctx, obj, old)
    causes = VALIDATOR.validate(ctx, obj, old)
    for c in causes:
        assert set(c) == {"reason", "message", "field"}
    return [f"{c['field']}: {c['message']}" for c in causes]


def pod(name: str = "web", **spec: Any) -> dict[str, Any]:
    containers = spec.pop("containers", [{"name": "app", "image": "nginx"}])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": containers, **spec}}


def test_valid_pod_has_no_causes() -> None:
    assert check(pod()) == []


SUBDOMAIN_ERR = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
                 "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
                 "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL_ERR = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
             "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
DNS1035_ERR = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
               "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
               "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")


POD_CASES = [
    (pod(containers=[{"name": "app"}]), ["spec.containers[0].image: Required value"]),
    (pod(containers=[]), ["spec.containers: Required value"]),
    (pod(containers=[{"image": "x"}]), ["spec.containers[0].name: Required value"]),
    (pod(containers=[{"name": "App", "image": "x"}]), [f'spec.containers[0].name: Invalid value: "App": {LABEL_ERR}']),
    (pod(containers=[{"name": "a", "image": "x"}, {"name": "a", "image": "y"}]),
     ['spec.containers[1].name: Duplicate value: "a"']),
    (pod(initContainers=[{"name": "a", "image": "x"}], containers=[{"name": "a", "image": "y"}]),
     ['spec.containers[0].name: Duplicate value: "a"']),
    (pod("Web_1"), [f'metadata.name: Invalid value: "Web_1": {SUBDOMAIN_ERR}']),
    (pod(restartPolicy="Sometimes"),
     ['spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"']),
    (pod(containers=[{"name": "a", "image": "x", "ports": [{"containerPort": 70000}]}]),
     ["spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive"]),
    (pod(containers=[{"name": "a", "image": "x", "ports": [{"containerPort": 80, "protocol": "HTTP"}]}]),
     ['spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"']),
    (pod(containers=[{"name": "a", "image": "x", "ports": [{"name": "http", "containerPort": 80},
                                                           {"name": "http", "containerPort": 81}]}]),
     ['spec.containers[0].ports[1].name: Duplicate value: "http"']),
    (pod(containers=[{"name": "a", "image": "x", "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}]),
     ['spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1']),
    (pod(containers=[{"name": "a", "image": "x", "resources": {"requests": {"memory": "lots"}}}]),
     ['spec.containers[0].resources.requests[memory]: Invalid value: "lots": quantities must match the regular '
      "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"]),
    (pod(containers=[{"name": "a", "image": "x", "resources": {"limits": {"cpu": "-1"}}}]),
     ['spec.containers[0].resources.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0',
      'spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0']),
    (pod(containers=[{"name": "a", "image": "x", "volumeMounts": [{"name": "data", "mountPath": "/d"}]}]),
     ['spec.containers[0].volumeMounts[0].name: Not found: "data"']),
    (pod(tolerations=[{"key": "k", "operator": "Exists", "value": "v"}]),
     ['spec.tolerations[0].operator: Invalid value: "v": value must be empty when `operator` is \'Exists\'']),
    (pod(tolerations=[{"key": "k", "effect": "NoSchedule", "tolerationSeconds": 5}]),
     ['spec.tolerations[0].effect: Invalid value: "NoSchedule": effect must be \'NoExecute\' when '
      '`tolerationSeconds` is set']),
    (pod(topologySpreadConstraints=[{"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]),
     ["spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero"]),
    (pod(nodeSelector={"disk": "ssd!"}),
     ['spec.nodeSelector: Invalid value: "ssd!": a valid label must be an empty string or consist of alphanumeric '
      "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
      "'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"]),
]


@pytest.mark.parametrize(("obj", "expected"), POD_CASES, ids=[str(i) for i in range(len(POD_CASES))])
def test_pod_causes(obj: dict[str, Any], expected: list[str]) -> None:
    assert check(obj) == expected


def test_the_422_reads_like_upstream() -> None:
    causes = VALIDATOR.validate(ctx_for("pods", "", "CREATE"), pod("foo", containers=[{"name": "app"}]) | {
        "spec": {"containers": [{"name": "app", "imagePullPolicy": "Always"}], "restartPolicy": "Always",
                 "dnsPolicy": "ClusterFirst"}, "metadata": {"name": "foo", "namespace": "default"}}, None)
    err = StatusError.invalid("Pod", "foo", causes)
    assert err.code == 422
    assert err.message == 'Pod "foo" is invalid: spec.containers[0].image: Required value'
    assert err.causes == [{"reason": "FieldValueRequired", "message": "Required value",
                           "field": "spec.containers[0].image"}]


def test_metadata_rules() -> None:
    assert check({"kind": "ConfigMap", "metadata": {}}, "configmaps") == [
        "metadata.name: Required value: name or generateName is required"]
    assert check({"kind": "ConfigMap", "metadata": {"name": "c", "labels": {"bad key": "v"}}}, "configmaps") == [
        'metadata.labels: Invalid value: "bad key": name part must consist of alphanumeric characters, \'-\', \'_\' '
        "or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
        "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"]
    assert check({"kind": "Namespace", "metadata": {"name": "Team_A"}}, "namespaces") == [
        f'metadata.name: Invalid value: "Team_A": {LABEL_ERR}']
    assert check({"kind": "Namespace", "metadata": {"name": "a.b"}}, "namespaces") == [
        'metadata.name: Invalid value: "a.b": must not contain dots']
    svc = {"kind": "Service", "metadata": {"name": "1web"}, "spec": {"ports": [{"port": 80}]}}
    assert check(svc, "services") == [f'metadata.name: Invalid value: "1web": {DNS1035_ERR}']
    role = {"kind": "ClusterRole", "metadata": {"name": "system:thing"}, "rules": []}
    assert check(role, "clusterroles", "rbac.authorization.k8s.io") == []
    long = {"kind": "ConfigMap", "metadata": {"name": "a" * 254}}
    assert check(long, "configmaps")[0] == f'metadata.name: Invalid value: "{"a" * 254}": must be no more than 253 characters'


def test_a_namespace_that_is_not_a_string_is_invalid_not_a_crash() -> None:
    from kconsole.api.validators.meta import validate_object_meta

    for _ in range(2):  # the second time, a valid name of the same namespace has been remembered
        assert validate_object_meta({"metadata": {"name": "a", "namespace": "team-a"}}, True, lambda n, p: []) == []
        causes = validate_object_meta({"metadata": {"name": "a", "namespace": ["team-a"]}}, True, lambda n, p: [])
        assert [c["field"] for c in causes] == ["metadata.namespace"]


def test_config_data_is_capped_at_one_mebibyte() -> None:
    big = {"kind": "ConfigMap", "metadata": {"name": "big"}, "data": {"x": "a" * (1024 * 1024 + 1)}}
    causes = VALIDATOR.validate(ctx_for("configmaps", "", "CREATE"), big | {
        "metadata": {"name": "big", "namespace": "default"}}, None)
    assert StatusError.invalid("ConfigMap", "big", causes).message == (
        'ConfigMap "big" is invalid: []: Too long: may not be more than 1048576 bytes')  # upstream's words
    ok = {"kind": "ConfigMap", "metadata": {"name": "ok"}, "data": {"x": "a" * (1024 * 1024)}}
    assert check(ok, "configmaps") == []


def test_namespace_in_body_must_match_request() -> None:
    obj = {"kind": "ConfigMap", "metadata": {"name": "c", "namespace": "other"}}
    with pytest.raises(StatusError) as err:
        check(obj, "configmaps")
    assert err.value.code == 400
    assert err.value.message == "the namespace of the provided object does not match the namespace sent on the request"


def deployment(labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": labels or {"app": "web"}},
                                  "spec": {"containers": [{"name": "app", "image": "nginx"}]}}, **spec}}


def test_deployment_rules() -> None:
    assert check(deployment(), "deployments", "apps") == []
    assert check(deployment({"app": "api"}), "deployments", "apps") == [
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"api"}: `selector` does not match '
        "template `labels`"]
    assert check(deployment(replicas=-1), "deployments", "apps") == [
        "spec.replicas: Invalid value: -1: must be greater than or equal to 0"]
    never = deployment()
    never["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    assert check(never, "deployments", "apps") == [
        'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"']
    zero = deployment(strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}})
    assert check(zero, "deployments", "apps") == [
        "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0"]
    no_selector = deployment()
    del no_selector["spec"]["selector"]
    assert check(no_selector, "deployments", "apps") == ["spec.selector: Required value"]


def test_deployment_selector_is_immutable() -> None:
    old = deployment()
    check(old, "deployments", "apps")
    new = deployment({"app": "web", "tier": "fe"})
    new["metadata"] = dict(old["metadata"])
    new["spec"]["selector"] = {"matchLabels": {"app": "web", "tier": "fe"}}
    assert check(new, "deployments", "apps", op="UPDATE", old=old) == [
        'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"web", "tier":"fe"}, '
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"]


def job(restart: str | None = "Never", **spec: Any) -> dict[str, Any]:
    tspec: dict[str, Any] = {"containers": [{"name": "c", "image": "perl"}]}
    if restart:
        tspec["restartPolicy"] = restart
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi"},
            "spec": {"template": {"spec": tspec}, **spec}}


def test_job_rules() -> None:
    assert check(job(), "jobs", "batch") == []
    assert check(job(None), "jobs", "batch") == [
        'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"']
    assert check(job(backoffLimit=-1), "jobs", "batch") == [
        "spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0"]
    assert check(job(completionMode="Indexed", parallelism=2), "jobs", "batch") == [
        "spec.completions: Required value: when completion mode is Indexed"]
    manual = job(manualSelector=True, selector={"matchLabels": {"x": "y"}})
    assert check(manual, "jobs", "batch") == [
        "spec.template.metadata.labels: Invalid value: map[string]string{}: `selector` does not match template "
        "`labels`"]


def test_job_template_is_immutable() -> None:
    old = job()
    check(old, "jobs", "batch")
    new = {**old, "spec": {**old["spec"], "template": {**old["spec"]["template"]}}}
    new["spec"]["template"]["spec"] = dict(old["spec"]["template"]["spec"], containers=[{"name": "c", "image": "x"}])
    out = check(new, "jobs", "batch", op="UPDATE", old=old)
    assert out == ["spec.template: Invalid value: core.PodTemplateSpec{...}: field is immutable"]


def test_cronjob_schedule() -> None:
    cj = {"kind": "CronJob", "metadata": {"name": "c"},
          "spec": {"schedule": "every minute", "jobTemplate": {"spec": job()["spec"]}}}
    assert check(cj, "cronjobs", "batch") == [
        'spec.schedule: Invalid value: "every minute": expected exactly 5 fields, found 2: [every minute]']
    cj["spec"]["schedule"] = "*/5 * * * *"
    assert check(cj, "cronjobs", "batch") == []
    cj["spec"]["schedule"] = "61 * * * *"
    assert check(cj, "cronjobs", "batch")[0].startswith('spec.schedule: Invalid value: "61 * * * *"')


def test_service_rules() -> None:
    svc = {"kind": "Service", "metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}, {"port": 81}]}}
    assert check(svc, "services") == ["spec.ports[0].name: Required value", "spec.ports[1].name: Required value"]
    bad = {"kind": "Service", "metadata": {"name": "web"}, "spec": {"type": "NodePort", "ports": [
        {"port": 80, "nodePort": 80}]}}
    assert check(bad, "services") == ["spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid "
                                      "range. The range of valid ports is 30000-32767"]
    assert check({"kind": "Service", "metadata": {"name": "w"}, "spec": {}}, "services") == [
        "spec.ports: Required value"]


def test_service_cluster_ip_is_immutable() -> None:
    old = {"kind": "Service", "metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}}
    check(old, "services")
    new = {"kind": "Service", "metadata": dict(old["metadata"]),
           "spec": {"ports": [{"port": 80}], "clusterIP": "10.96.0.99"}}
    assert check(new, "services", op="UPDATE", old=old) == [
        'spec.clusterIPs[0]: Invalid value: []string{"10.96.0.99"}: may not change once set']


def test_pod_updates_only_change_images_and_add_tolerations() -> None:
    old = pod()
    check(old, "pods")
    base = {k: v for k, v in old.items() if k != "status"}

    def updated(**changes: Any) -> list[str]:
        new = {**base, "metadata": dict(base["metadata"]), "spec": {**base["spec"], **changes}}
        return check(new, "pods", op="UPDATE", old=old)

    image = [dict(old["spec"]["containers"][0], image="nginx:1.27")]
    assert updated(containers=image) == []
    more = old["spec"]["tolerations"] + [{"key": "k", "operator": "Exists"}]
    assert updated(tolerations=more) == []
    assert updated(activeDeadlineSeconds=60) == []
    forbidden = updated(restartPolicy="Never")
    assert len(forbidden) == 1 and forbidden[0].startswith(
        "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`")
    assert updated(tolerations=[]) == [
        "spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds"]


def test_status_updates_skip_spec_rules() -> None:
    old = pod()
    check(old, "pods")
    new = {**old, "spec": dict(old["spec"], restartPolicy="Never")}
    assert VALIDATOR.validate(ctx_for("pods", "", "UPDATE", "status"), new, old) == []


@pytest.mark.parametrize(("obj", "resource", "group", "expected"), [
    ({"kind": "PodDisruptionBudget", "metadata": {"name": "p"}, "spec": {"minAvailable": 1, "maxUnavailable": 1}},
     "poddisruptionbudgets", "policy",
     ["spec: Invalid value: policy.PodDisruptionBudgetSpec{...}: minAvailable and maxUnavailable cannot be both set"]),
    ({"kind": "PodDisruptionBudget", "metadata": {"name": "p"}, "spec": {"minAvailable": "150%"}},
     "poddisruptionbudgets", "policy", ['spec.minAvailable: Invalid value: "150%": must not be greater than 100%']),
    ({"kind": "HorizontalPodAutoscaler", "metadata": {"name": "h"},
      "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "minReplicas": 5, "maxReplicas": 2}},
     "horizontalpodautoscalers", "autoscaling",
     ["spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`"]),
    ({"kind": "PriorityClass", "metadata": {"name": "system-mine"}, "value": 10}, "priorityclasses",
     "scheduling.k8s.io",
     ["metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only"]),
    ({"kind": "PriorityClass", "metadata": {"name": "huge"}, "value": 2000000000}, "priorityclasses",
     "scheduling.k8s.io", ["value: Forbidden: maximum allowed value of a user defined priority is 1000000000"]),
    ({"kind": "Lease", "metadata": {"name": "l"}, "spec": {"leaseDurationSeconds": 0}}, "leases",
     "coordination.k8s.io", ["spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"]),
    ({"kind": "Role", "metadata": {"name": "r"}, "rules": [{"verbs": [], "resources": ["pods"]}]}, "roles",
     "rbac.authorization.k8s.io", ["rules[0].verbs: Required value: verbs must contain at least one value",
                                   "rules[0].apiGroups: Required value: resource rules must supply at least one api "
                                   "group"]),
    ({"kind": "ClusterRoleBinding", "metadata": {"name": "b"},
      "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
      "subjects": [{"kind": "ServiceAccount", "name": "sa"}]}, "clusterrolebindings", "rbac.authorization.k8s.io",
     ['roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"',
      "subjects[0].namespace: Required value"]),
    ({"kind": "Node", "metadata": {"name": "n"}, "spec": {"taints": [{"key": "k", "effect": "Sometimes"}]}}, "nodes",
     "", ['spec.taints[0].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", '
          '"PreferNoSchedule", "NoExecute"']),
    ({"kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"bad key": "v"}}, "configmaps", "",
     ["data[bad key]: Invalid value: \"bad key\": a valid config key must consist of alphanumeric characters, '-', "
      "'_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"]),
])
def test_other_kinds(obj: dict[str, Any], resource: str, group: str, expected: list[str]) -> None:
    assert check(obj, resource, group) == expected


def test_statefulset_containers_may_mount_their_volume_claim_templates() -> None:
    """Nearly every real StatefulSet mounts a claim template by name; that was 'Not found'."""
    def sts(mount: str) -> dict[str, Any]:
        return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "default"},
                "spec": {"serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                         "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [
                             {"name": "c", "image": "postgres", "volumeMounts": [{"name": mount, "mountPath": "/d"}]}]}},
                         "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                             "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}}
    assert check(sts("data"), "statefulsets", "apps") == []
    assert check(sts("nope"), "statefulsets", "apps") == [
        'spec.template.spec.containers[0].volumeMounts[0].name: Not found: "nope"']


def test_an_object_being_deleted_gains_no_finalizers() -> None:
    old = {"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "cm", "namespace": "default", "uid": "u1", "finalizers": ["a/keep"],
                        "deletionTimestamp": "2026-01-01T00:00:00Z"}}
    new = {**old, "metadata": {**old["metadata"], "finalizers": ["a/keep", "z/y", "x/x"]}}
    assert check(new, "configmaps", op="UPDATE", old=old) == [
        'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, '
        'found new finalizers []string{"x/x", "z/y"}']
    fewer = {**old, "metadata": {**old["metadata"], "finalizers": []}}
    assert check(fewer, "configmaps", op="UPDATE", old=old) == []
    live = {**old, "metadata": {k: v for k, v in old["metadata"].items() if k != "deletionTimestamp"}}
    assert check({**new, "metadata": {**new["metadata"], "deletionTimestamp": None}}, "configmaps", op="UPDATE",
                 old=live) == []


def test_a_tls_secret_needs_its_certificate_and_key() -> None:
    tls = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "tls"}, "type": "kubernetes.io/tls",
           "data": {"tls.crt": "Y2VydA=="}}
    assert check(tls, "secrets") == ["data[tls.key]: Required value"]
    tls["data"] = {}
    assert check(tls, "secrets") == ["data[tls.crt]: Required value", "data[tls.key]: Required value"]
    from_strings = {**tls, "data": {"tls.crt": "Y2VydA=="}, "stringData": {"tls.key": "key"}}
    assert check(from_strings, "secrets") == []
    assert check({**tls, "type": "Opaque"}, "secrets") == []


def claim(storage: str | None = "1Gi", **spec: Any) -> dict[str, Any]:
    resources = {"requests": {"storage": storage}} if storage else {}
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "default"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": resources, **spec}}


def test_volumes_state_capacity_and_claims_storage() -> None:
    volume = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
              "spec": {"accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/data"}}}
    assert check(volume, "persistentvolumes") == ["spec.capacity: Required value"]
    volume["spec"]["capacity"] = {"storage": "1Gi"}
    assert check(volume, "persistentvolumes") == []
    assert check(claim(None), "persistentvolumeclaims") == ["spec.resources[storage]: Required value"]
    assert check(claim(), "persistentvolumeclaims") == []


def test_a_claim_spec_is_fixed_but_a_bound_claim_may_grow() -> None:
    old = claim(volumeName="", storageClassName="standard")
    old["status"] = {"phase": "Bound"}
    bound = claim(volumeName="pv1", storageClassName="standard")  # the binder names the volume once
    assert check(bound, "persistentvolumeclaims", op="UPDATE", old=old, default=False) == []
    old["spec"]["volumeName"] = "pv1"
    grown = claim("2Gi", volumeName="pv1", storageClassName="standard")
    assert check(grown, "persistentvolumeclaims", op="UPDATE", old=old, default=False) == []
    shrunk = claim("512Mi", volumeName="pv1", storageClassName="standard")
    assert check(shrunk, "persistentvolumeclaims", op="UPDATE", old=old, default=False) == [
        "spec.resources.requests.storage: Forbidden: field can not be less than previous value"]
    modes = claim(volumeName="pv1", storageClassName="standard", accessModes=["ReadWriteMany"])
    assert check(modes, "persistentvolumeclaims", op="UPDATE", old=old, default=False) == [
        "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName "
        "for bound claims\n  core.PersistentVolumeClaimSpec{\n"
        '- \tAccessModes: []core.PersistentVolumeAccessMode{"ReadWriteOnce"},\n'
        '+ \tAccessModes: []core.PersistentVolumeAccessMode{"ReadWriteMany"},\n'
        "  \tSelector:    nil,\n"
        '  \tResources:   {Requests: {s"storage": {i: {...}, s: "1Gi", Format: "BinarySI"}}},\n'
        "  \t... // 6 identical fields\n  }\n"]
    old["status"] = {"phase": "Pending"}
    pending = check(grown, "persistentvolumeclaims", op="UPDATE", old=old, default=False)
    assert len(pending) == 1 and pending[0].startswith("spec: Forbidden: spec is immutable")


def ingress(host: str = "a.example.com", **path: Any) -> dict[str, Any]:
    backend = {"service": {"name": "web", "port": {"number": 80}}}
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "web"},
            "spec": {"rules": [{"host": host, "http": {"paths": [{"path": "/", "pathType": "Prefix",
                                                                   "backend": backend, **path}]}}]}}


def test_ingress_rules_are_validated() -> None:
    assert check(ingress(), "ingresses", "networking.k8s.io") == []
    assert check(ingress("*.example.com"), "ingresses", "networking.k8s.io") == []
    no_type = ingress()
    del no_type["spec"]["rules"][0]["http"]["paths"][0]["pathType"]
    assert check(no_type, "ingresses", "networking.k8s.io") == [
        "spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified"]
    assert check(ingress("*.*.example.com"), "ingresses", "networking.k8s.io") == [
        "spec.rules[0].host: Invalid value: \"*.*.example.com\": a wildcard DNS-1123 subdomain must start with '*.', "
        "followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and "
        "end with an alphanumeric character (e.g. '*.example.com', regex used for validation is "
        "'\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"]
    assert check(ingress(path="api"), "ingresses", "networking.k8s.io") == [
        'spec.rules[0].http.paths[0].path: Invalid value: "api": must be an absolute path']
    assert check(ingress(path="/a/../b", pathType="Exact"), "ingresses", "networking.k8s.io") == [
        "spec.rules[0].http.paths[0].path: Invalid value: \"/a/../b\": must not contain '/../'"]
    assert check(ingress(path="", pathType="ImplementationSpecific"), "ingresses", "networking.k8s.io") == []
    assert check(ingress("10.0.0.1"), "ingresses", "networking.k8s.io") == [
        'spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address']
    assert check(ingress(pathType="Regex"), "ingresses", "networking.k8s.io") == [
        'spec.rules[0].http.paths[0].pathType: Unsupported value: "Regex": supported values: "Exact", '
        '"ImplementationSpecific", "Prefix"']


def test_apiservice_name_is_version_dot_group() -> None:
    def apiservice(name: str, **spec: Any) -> dict[str, Any]:
        return {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": name},
                "spec": {"groupPriorityMinimum": 100, "versionPriority": 10, **spec}}

    grp = "apiregistration.k8s.io"
    assert check(apiservice("v1.", version="v1"), "apiservices", grp) == []
    assert check(apiservice("v1.apps", group="apps", version="v1"), "apiservices", grp) == []
    assert check(apiservice("v1.apps", group="batch", version="v1"), "apiservices", grp) == [
        'metadata.name: Invalid value: "v1.apps": must be `spec.version+"."+spec.group`']
    assert check(apiservice("v1.x", group="x", version="v1", versionPriority=0), "apiservices", grp) == [
        "spec.versionPriority: Invalid value: 0: must be positive and less than 1000"]


def test_objects_stored_before_template_defaults_still_update() -> None:
    """A Job or StatefulSet written before templates carried creationTimestamp: null (and claim
    templates their defaults) is not refused as changed when an update adds them."""
    from kconsole.api.validators.apps import validate_statefulset_update
    from kconsole.api.validators.batch import validate_job_update

    template = {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}
    old_job = {"spec": {"selector": {"matchLabels": {"a": "b"}}, "template": template}}
    new_job = {"spec": {"selector": {"matchLabels": {"a": "b"}},
                        "template": {**template, "metadata": {"creationTimestamp": None, "labels": {"a": "b"}}}}}
    assert validate_job_update(new_job, old_job) == []
    claim = {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
    defaulted = {"metadata": {"creationTimestamp": None, "name": "data"},
                 "spec": {"accessModes": ["ReadWriteOnce"], "volumeMode": "Filesystem"}, "status": {"phase": "Pending"}}
    assert validate_statefulset_update({"spec": {"volumeClaimTemplates": [defaulted]}},
                                       {"spec": {"volumeClaimTemplates": [claim]}}) == []
    assert validate_statefulset_update({"spec": {"volumeClaimTemplates": [defaulted]}},
                                       {"spec": {"volumeClaimTemplates": []}}) != []
