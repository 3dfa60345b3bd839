"""Mutating admission: metadata, scheme defaults per kind, allocation, priority, tolerations."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kconsole.api.admission import mutating_plugins
from kconsole.objects.names import NAME_ALPHABET
from kconsole.api.registry import Registry
from kconsole.api.stages import AdmissionContext
from kconsole.api.types import StatusError, UserInfo

REGISTRY = Registry()
NOW = "2026-01-01T00:00:00Z"


class World:
    """What admission may read besides the object: a few stored objects and an IP allocator."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str | None, str], dict[str, Any]] = {
            ("namespaces", None, "default"): {"metadata": {"name": "default"}, "status": {"phase": "Active"}},
        }
        self.next_ip = 10

    def get(self, resource: str, ns: str | None, name: str) -> dict[str, Any] | None:
        return self.objects.get((resource, ns, name))

    def list(self, resource: str, ns: str | None) -> list[dict[str, Any]]:
        return [o for (r, n, _), o in self.objects.items() if r == resource and (ns is None or n == ns)]

    def allocate(self) -> str:
        self.next_ip += 1
        return f"10.96.0.{self.next_ip}"

    def put(self, resource: str, obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        self.objects[(resource, meta.get("namespace"), meta["name"])] = obj


def admit(obj: dict[str, Any], resource: str, group: str = "", op: str = "CREATE", old: dict[str, Any] | None = None,
          world: World | None = None, seed: int = 7, namespace: str = "default") -> dict[str, Any]:
    world = world or World()
    spec = REGISTRY.get(group, resource)
    assert spec is not None
    ctx = AdmissionContext(operation=op, info=spec.info, user=UserInfo("alice"),
                           namespace=namespace if spec.info.namespaced else None,
                           name=(obj.get("metadata") or {}).get("name"), now=NOW, rng=random.Random(seed),
                           get_object=world.get, allocate_cluster_ip=world.allocate, list_objects=world.list)
    for plugin in mutating_plugins():
        plugin.admit(ctx, obj, old)
    return obj


def bare_pod(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
            "spec": {"containers": [{"name": "app", "image": "nginx"}], **spec}}


def test_bare_pod_gets_every_default() -> None:
    pod = admit(bare_pod(), "pods")
    meta, spec, c = pod["metadata"], pod["spec"], pod["spec"]["containers"][0]
    assert meta["namespace"] == "default"
    assert meta["creationTimestamp"] == NOW
    assert len(meta["uid"]) == 36 and meta["uid"][14] == "4"
    assert "generation" not in meta
    assert spec["restartPolicy"] == "Always"
    assert spec["dnsPolicy"] == "ClusterFirst"
    assert spec["schedulerName"] == "default-scheduler"
    assert spec["terminationGracePeriodSeconds"] == 30
    assert spec["enableServiceLinks"] is True
    assert spec["securityContext"] == {}
    assert spec["serviceAccountName"] == spec["serviceAccount"] == "default"
    assert spec["priority"] == 0 and spec["preemptionPolicy"] == "PreemptLowerPriority"
    assert c["imagePullPolicy"] == "Always"
    assert c["terminationMessagePath"] == "/dev/termination-log"
    assert c["terminationMessagePolicy"] == "File"
    assert c["resources"] == {}
    assert spec["tolerations"] == [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    ]
    assert pod["status"] == {"phase": "Pending", "qosClass": "BestEffort"}


@pytest.mark.parametrize(("image", "policy"), [
    ("nginx", "Always"), ("nginx:latest", "Always"), ("nginx:1.27", "IfNotPresent"),
    ("localhost:5000/app", "Always"), ("localhost:5000/app:v2", "IfNotPresent"),
    ("nginx@sha256:" + "a" * 64, "IfNotPresent"),
])
def test_image_pull_policy_follows_the_tag(image: str, policy: str) -> None:
    pod = admit(bare_pod(), "pods")
    pod2 = bare_pod()
    pod2["spec"]["containers"][0]["image"] = image
    assert admit(pod2, "pods")["spec"]["containers"][0]["imagePullPolicy"] == policy
    assert pod["spec"]["containers"][0]["imagePullPolicy"] == "Always"


def test_existing_tolerations_are_kept_and_not_duplicated() -> None:
    mine = {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
            "tolerationSeconds": 6000}
    pod = admit(bare_pod(tolerations=[mine]), "pods")
    tols = pod["spec"]["tolerations"]
    assert mine in tols and len(tols) == 2
    assert {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
            "tolerationSeconds": 300} in tols
    everything = admit(bare_pod(tolerations=[{"operator": "Exists"}]), "pods")
    assert everything["spec"]["tolerations"] == [{"operator": "Exists"}]


@pytest.mark.parametrize(("resources", "qos"), [
    ({}, "BestEffort"),
    ({"requests": {"cpu": "100m"}}, "Burstable"),
    ({"limits": {"cpu": "1", "memory": "1Gi"}}, "Guaranteed"),
    ({"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "1Gi"}}, "Burstable"),
])
def test_qos_class(resources: dict[str, Any], qos: str) -> None:
    pod = bare_pod()
    pod["spec"]["containers"][0]["resources"] = resources
    admitted = admit(pod, "pods")
    assert admitted["status"]["qosClass"] == qos
    if "limits" in resources and "requests" not in resources:
        assert admitted["spec"]["containers"][0]["resources"]["requests"] == resources["limits"]


def test_generate_name_is_deterministic_for_a_seed() -> None:
    def make(seed: int) -> str:
        pod = bare_pod()
        pod["metadata"] = {"generateName": "web-"}
        return admit(pod, "pods", seed=seed)["metadata"]["name"]

    first = make(42)
    assert first.startswith("web-") and len(first) == len("web-") + 5
    assert all(ch in NAME_ALPHABET for ch in first[4:])
    assert make(42) == first
    assert len({make(s) for s in range(20)}) == 20


def test_generate_name_cuts_long_bases() -> None:
    pod = bare_pod()
    pod["metadata"] = {"generateName": "x" * 70}
    assert len(admit(pod, "pods")["metadata"]["name"]) == 63


def test_priority_from_class_and_global_default() -> None:
    world = World()
    world.put("priorityclasses", {"metadata": {"name": "high"}, "value": 1000, "preemptionPolicy": "Never"})
    pod = admit(bare_pod(priorityClassName="high"), "pods", world=world)
    assert pod["spec"]["priority"] == 1000 and pod["spec"]["preemptionPolicy"] == "Never"
    world.put("priorityclasses", {"metadata": {"name": "normal"}, "value": 50, "globalDefault": True})
    pod = admit(bare_pod(), "pods", world=world)
    assert pod["spec"]["priorityClassName"] == "normal" and pod["spec"]["priority"] == 50
    critical = admit(bare_pod(priorityClassName="system-node-critical"), "pods", world=world)
    assert critical["spec"]["priority"] == 2000001000


def test_unknown_priority_class_is_forbidden() -> None:
    with pytest.raises(StatusError) as err:
        admit(bare_pod(priorityClassName="gold"), "pods")
    assert err.value.code == 403
    assert err.value.message == 'pods "web" is forbidden: no PriorityClass with name gold was found'


def test_stated_priority_must_match_its_class() -> None:
    with pytest.raises(StatusError) as err:
        admit(bare_pod(priority=7), "pods")
    assert err.value.code == 403
    assert "the integer value of priority (7) must not be provided in pod spec" in err.value.message


def test_update_redefaults_but_keeps_create_only_fields_alone() -> None:
    old = admit(bare_pod(), "pods")
    new = bare_pod()
    new["metadata"] = dict(old["metadata"])
    admit(new, "pods", op="UPDATE", old=old)
    assert new["spec"]["restartPolicy"] == "Always"
    assert "tolerations" not in new["spec"] and "status" not in new
    assert new["metadata"]["uid"] == old["metadata"]["uid"]


def deployment(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "generation": 9},
            "spec": {"selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}, **spec}}


def test_deployment_defaults() -> None:
    d = admit(deployment(), "deployments", "apps")
    spec = d["spec"]
    assert d["metadata"]["generation"] == 1
    assert spec["replicas"] == 1
    assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
    assert spec["revisionHistoryLimit"] == 10
    assert spec["progressDeadlineSeconds"] == 600
    tspec = spec["template"]["spec"]
    assert tspec["restartPolicy"] == "Always" and tspec["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    assert "tolerations" not in tspec and "serviceAccountName" not in tspec and "enableServiceLinks" not in tspec
    recreate = admit(deployment(strategy={"type": "Recreate"}), "deployments", "apps")
    assert recreate["spec"]["strategy"] == {"type": "Recreate"}


def test_workload_defaults() -> None:
    template = {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "x:1"}]}}
    rs = admit({"kind": "ReplicaSet", "metadata": {"name": "r"}, "spec": {"template": dict(template)}},
               "replicasets", "apps")
    assert rs["spec"]["replicas"] == 1
    ds = admit({"kind": "DaemonSet", "metadata": {"name": "d"}, "spec": {"template": dict(template)}},
               "daemonsets", "apps")
    assert ds["spec"]["updateStrategy"] == {"type": "RollingUpdate",
                                            "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
    sts = admit({"kind": "StatefulSet", "metadata": {"name": "s"}, "spec": {"template": dict(template)}},
                "statefulsets", "apps")
    assert sts["spec"]["podManagementPolicy"] == "OrderedReady"
    assert sts["spec"]["replicas"] == 1
    assert sts["spec"]["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    cj = admit({"kind": "CronJob", "metadata": {"name": "c"},
                "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": dict(template)}}}},
               "cronjobs", "batch")
    assert {k: cj["spec"][k] for k in ("concurrencyPolicy", "suspend", "successfulJobsHistoryLimit",
                                       "failedJobsHistoryLimit")} == {
        "concurrencyPolicy": "Allow", "suspend": False, "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1}
    assert cj["spec"]["jobTemplate"]["spec"]["template"]["spec"]["dnsPolicy"] == "ClusterFirst"
    hpa = admit({"kind": "HorizontalPodAutoscaler", "metadata": {"name": "h"},
                 "spec": {"maxReplicas": 5, "scaleTargetRef": {"kind": "Deployment", "name": "web"}}},
                "horizontalpodautoscalers", "autoscaling")
    assert hpa["spec"]["minReplicas"] == 1
    pc = admit({"kind": "PriorityClass", "metadata": {"name": "p", "namespace": "x"}, "value": 5},
               "priorityclasses", "scheduling.k8s.io")
    assert pc["preemptionPolicy"] == "PreemptLowerPriority" and "namespace" not in pc["metadata"]


def test_job_defaults_and_generated_selector() -> None:
    job = admit({"kind": "Job", "metadata": {"name": "pi"},
                 "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "perl"}],
                                                "restartPolicy": "Never"}}}}, "jobs", "batch")
    spec, uid = job["spec"], job["metadata"]["uid"]
    assert (spec["completions"], spec["parallelism"], spec["backoffLimit"], spec["completionMode"]) == (
        1, 1, 6, "NonIndexed")
    assert spec["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert spec["template"]["metadata"]["labels"] == {
        "batch.kubernetes.io/controller-uid": uid, "controller-uid": uid,
        "batch.kubernetes.io/job-name": "pi", "job-name": "pi"}
    parallel = admit({"kind": "Job", "metadata": {"name": "p"},
                      "spec": {"parallelism": 3, "template": {"spec": {"containers": []}}}}, "jobs", "batch")
    assert parallel["spec"]["parallelism"] == 3 and "completions" not in parallel["spec"]


def service(**spec: Any) -> dict[str, Any]:
    return {"kind": "Service", "metadata": {"name": "web"},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}], **spec}}


def test_service_defaults_and_cluster_ip() -> None:
    svc = admit(service(), "services")
    spec = svc["spec"]
    assert spec["type"] == "ClusterIP" and spec["sessionAffinity"] == "None"
    assert spec["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 80}]
    assert spec["clusterIP"] == "10.96.0.11" and spec["clusterIPs"] == ["10.96.0.11"]
    assert spec["ipFamilies"] == ["IPv4"] and spec["internalTrafficPolicy"] == "Cluster"
    headless = admit(service(clusterIP="None"), "services")
    assert headless["spec"]["clusterIP"] == "None" and headless["spec"]["clusterIPs"] == ["None"]
    named = admit(service(ports=[{"port": 80, "targetPort": "http"}]), "services")
    assert named["spec"]["ports"][0]["targetPort"] == "http"


def test_node_ports_are_seeded_in_range_and_avoid_ports_in_use() -> None:
    world = World()
    a = admit(service(type="NodePort"), "services", world=world, seed=3)
    port = a["spec"]["ports"][0]["nodePort"]
    assert 30000 <= port <= 32767
    assert admit(service(type="NodePort"), "services", seed=3)["spec"]["ports"][0]["nodePort"] == port
    world.put("services", a)
    b = service(type="NodePort")
    b["metadata"]["name"] = "other"
    assert admit(b, "services", world=world, seed=3)["spec"]["ports"][0]["nodePort"] != port


def test_service_update_keeps_allocated_values() -> None:
    old = admit(service(type="NodePort"), "services")
    new = service(type="NodePort")
    admit(new, "services", op="UPDATE", old=old)
    assert new["spec"]["clusterIP"] == old["spec"]["clusterIP"]
    assert new["spec"]["ports"][0]["nodePort"] == old["spec"]["ports"][0]["nodePort"]
    back = service(type="ClusterIP", ports=[dict(old["spec"]["ports"][0])])
    admit(back, "services", op="UPDATE", old=old)
    assert "nodePort" not in back["spec"]["ports"][0]


def test_namespace_defaults() -> None:
    ns = admit({"kind": "Namespace", "metadata": {"name": "team"}}, "namespaces", namespace="")
    assert ns["spec"] == {"finalizers": ["kubernetes"]}
    assert ns["status"] == {"phase": "Active"}
    assert ns["metadata"]["labels"] == {"kubernetes.io/metadata.name": "team"}
    assert "namespace" not in ns["metadata"]
