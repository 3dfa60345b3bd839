"""Subresources: scale, pods/binding, pods/eviction with PDBs, pods/log, namespaces/finalize, access reviews."""

from __future__ import annotations

from api_helpers import Client, pod
from test_storage_semantics import deployment

from kconsole.api.server import APIServer
from kconsole.api.types import Credentials, Request, UserInfo
from kconsole.objects.podlog import LogOptions


async def test_scale_get_update_patch(admin: Client) -> None:
    await admin.ok("create", "deployments", group="apps", namespace="default", body=deployment("web", 2))
    scale = await admin.ok("get", "deployments", group="apps", namespace="default", name="web", subresource="scale")
    assert scale["kind"] == "Scale" and scale["apiVersion"] == "autoscaling/v1"
    assert scale["spec"] == {"replicas": 2} and scale["status"] == {"replicas": 0, "selector": "app=web"}
    # kubectl scale: a merge patch on /scale
    out = await admin.ok("patch", "deployments", group="apps", namespace="default", name="web", subresource="scale",
                         patch_type="merge", body={"spec": {"replicas": 5}})
    assert out["spec"]["replicas"] == 5
    dep = await admin.ok("get", "deployments", group="apps", namespace="default", name="web")
    assert dep["spec"]["replicas"] == 5 and dep["metadata"]["generation"] == 2
    scale = await admin.ok("get", "deployments", group="apps", namespace="default", name="web", subresource="scale")
    scale["spec"]["replicas"] = 1
    out = await admin.ok("update", "deployments", group="apps", namespace="default", name="web", subresource="scale",
                         body=scale)
    assert out["spec"]["replicas"] == 1
    scale["spec"]["replicas"] = 3  # stale resourceVersion now
    resp = await admin.do("update", "deployments", group="apps", namespace="default", name="web",
                          subresource="scale", body=scale)
    assert resp.code == 409
    resp = await admin.do("patch", "deployments", group="apps", namespace="default", name="web",
                          subresource="scale", patch_type="merge", body={"spec": {"replicas": -1}})
    assert resp.code == 422 and "spec.replicas" in resp.body["message"]


async def test_binding_sets_node_once(admin: Client) -> None:
    await admin.ok("create", "pods", namespace="default", body=pod("b"))
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "b"},
               "target": {"apiVersion": "v1", "kind": "Node", "name": "node-1"}}
    out = await admin.ok("create", "pods", namespace="default", name="b", subresource="binding", body=binding)
    assert out["status"] == "Success"
    got = await admin.ok("get", "pods", namespace="default", name="b")
    assert got["spec"]["nodeName"] == "node-1"
    assert {"type": "PodScheduled", "status": "True"}.items() <= got["status"]["conditions"][-1].items()
    binding["target"]["name"] = "node-2"
    resp = await admin.do("create", "pods", namespace="default", name="b", subresource="binding", body=binding)
    assert resp.code == 409
    assert resp.body["message"] == ('Operation cannot be fulfilled on pods/binding "b": pod b is already assigned '
                                    'to node "node-1"')


async def test_eviction_honours_pod_disruption_budget(admin: Client) -> None:
    for n in ("e1", "e2"):
        await admin.ok("create", "pods", namespace="default", body=pod(n, {"app": "db"}, nodeName="node-1"))
    await admin.ok("create", "poddisruptionbudgets", group="policy", namespace="default", body={
        "metadata": {"name": "db"}, "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "db"}}}})
    pdb = await admin.ok("get", "pdb", namespace="default", name="db")
    pdb["status"] = {"disruptionsAllowed": 1, "currentHealthy": 2, "desiredHealthy": 1, "expectedPods": 2,
                     "observedGeneration": pdb["metadata"]["generation"]}
    await admin.ok("update", "pdb", namespace="default", name="db", subresource="status", body=pdb)
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "e1", "namespace": "default"}}
    out = await admin.ok("create", "pods", namespace="default", name="e1", subresource="eviction", body=eviction)
    assert out["status"] == "Success"
    evicted = await admin.ok("get", "pods", namespace="default", name="e1")
    assert evicted["metadata"]["deletionTimestamp"]  # deleted gracefully (bound pod)
    pdb = await admin.ok("get", "pdb", namespace="default", name="db")
    assert pdb["status"]["disruptionsAllowed"] == 0 and "e1" in pdb["status"]["disruptedPods"]
    eviction["metadata"]["name"] = "e2"
    resp = await admin.do("create", "pods", namespace="default", name="e2", subresource="eviction", body=eviction)
    assert resp.code == 429 and resp.body["reason"] == "TooManyRequests"
    assert resp.body["message"] == "Cannot evict pod as it would violate the pod's disruption budget."
    assert resp.body["details"]["causes"][0]["reason"] == "DisruptionBudget"
    assert not (await admin.ok("get", "pods", namespace="default", name="e2"))["metadata"].get("deletionTimestamp")


async def test_eviction_without_budget_deletes(admin: Client) -> None:
    await admin.ok("create", "pods", namespace="default", body=pod("free"))
    await admin.ok("create", "pods", namespace="default", name="free", subresource="eviction",
                   body={"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "free"}})
    assert (await admin.do("get", "pods", namespace="default", name="free")).code == 404


async def test_pod_log_from_registered_source(api: APIServer, admin: Client) -> None:
    await admin.ok("create", "pods", namespace="default", body=pod("l"))
    resp = await admin.do("get", "pods", namespace="default", name="l", subresource="log")
    assert resp.code == 400 and resp.body["message"] == 'container "c" in pod "l" is not available'
    calls = []

    def source(ns: str, name: str, container: str, options: LogOptions) -> str:
        calls.append((ns, name, container, options.follow, options.tail_lines))
        return "line 1\nline 2\n"

    api.set_log_source(source)
    text = await admin.ok("get", "pods", namespace="default", name="l", subresource="log",
                          params={"tailLines": "2"})
    assert text == "line 1\nline 2\n" and calls == [("default", "l", "c", False, 2)]
    resp = await admin.do("get", "pods", namespace="default", name="l", subresource="log",
                          params={"container": "nope"})
    assert resp.code == 400 and "nope" in resp.body["message"]


async def test_pod_log_of_an_init_container_and_upstreams_choice_message(api: APIServer, admin: Client) -> None:
    """kubectl logs -c <init container> (the first thing to read when a pod sits in Init:0/1) was a 400."""
    body = pod("multi")
    body["spec"]["containers"].append({"name": "side", "image": "busybox"})
    body["spec"]["initContainers"] = [{"name": "migrate", "image": "busybox"}]
    await admin.ok("create", "pods", namespace="default", body=body)
    api.set_log_source(lambda ns, name, container, options: f"{container} says hi\n")
    text = await admin.ok("get", "pods", namespace="default", name="multi", subresource="log",
                          params={"container": "migrate"})
    assert text == "migrate says hi\n"
    choose = await admin.do("get", "pods", namespace="default", name="multi", subresource="log")
    assert choose.code == 400 and choose.body["message"] == (
        "a container name must be specified for pod multi, choose one of: [c side] "
        "or one of the init containers: [migrate]")


async def test_namespace_deletion_waits_for_finalize(admin: Client) -> None:
    await admin.ok("create", "namespaces", body={"metadata": {"name": "team"}})
    ns = await admin.ok("delete", "namespaces", name="team")
    assert ns["spec"]["finalizers"] == ["kubernetes"] and ns["status"]["phase"] == "Terminating"
    assert (await admin.ok("get", "namespaces", name="team"))["metadata"]["deletionTimestamp"]
    ns["spec"]["finalizers"] = []
    await admin.ok("update", "namespaces", name="team", subresource="finalize", body=ns)
    assert (await admin.do("get", "namespaces", name="team")).code == 404


async def test_access_reviews_answer_from_rbac(api: APIServer, admin: Client) -> None:
    bob = Credentials(token=api.tokens.issue(UserInfo("bob")))
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
              "spec": {"resourceAttributes": {"namespace": "default", "verb": "create", "resource": "pods"}}}
    resp = await api.handle(Request("create", "selfsubjectaccessreviews", group="authorization.k8s.io",
                                    body=review, credentials=bob))
    assert resp.code == 201 and resp.body["status"]["allowed"] is False
    resp = await admin.do("create", "selfsubjectaccessreviews", group="authorization.k8s.io", body=review)
    assert resp.body["status"]["allowed"] is True
    sar = {"spec": {"user": "system:kube-scheduler",
                    "resourceAttributes": {"namespace": "default", "verb": "create", "resource": "pods",
                                           "subresource": "binding"}}}
    resp = await admin.do("create", "subjectaccessreviews", group="authorization.k8s.io", body=sar)
    assert resp.body["status"]["allowed"] is True
    rules = await admin.ok("create", "selfsubjectrulesreviews", group="authorization.k8s.io",
                           body={"spec": {"namespace": "default"}})
    assert rules["status"]["resourceRules"] and rules["status"]["incomplete"] is False
    # Reviews are answers, never stored objects.
    resp = await admin.do("list", "selfsubjectaccessreviews", group="authorization.k8s.io")
    assert resp.code == 405


async def test_service_cluster_ips_allocated_and_released(api: APIServer, admin: Client) -> None:
    svc = await admin.ok("create", "services", namespace="default",
                         body={"metadata": {"name": "a"}, "spec": {"ports": [{"port": 80}]}})
    ip = svc["spec"]["clusterIP"]
    assert ip.startswith("10.") and api.ipalloc.is_allocated(ip)
    resp = await admin.do("create", "services", namespace="default",
                          body={"metadata": {"name": "b"}, "spec": {"clusterIP": ip, "ports": [{"port": 80}]}})
    assert resp.code == 422 and "already allocated" in resp.body["message"]
    await admin.ok("delete", "services", namespace="default", name="a")
    assert not api.ipalloc.is_allocated(ip)
    await admin.ok("create", "services", namespace="default",
                   body={"metadata": {"name": "b"}, "spec": {"clusterIP": ip, "ports": [{"port": 80}]}})
    assert api.ipalloc.is_allocated(ip)
    # A failed create gives its address back.
    n = len(api.ipalloc)
    resp = await admin.do("create", "services", namespace="default",
                          body={"metadata": {"name": "b"}, "spec": {"ports": [{"port": 80}]}})
    assert resp.code == 409 and len(api.ipalloc) == n
