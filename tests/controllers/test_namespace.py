"""Namespace controller: deleting a namespace removes everything in it, then the namespace."""

from __future__ import annotations

from ctrl_env import Ctrl, ctrl, node, pod  # noqa: F401 - ctrl is the fixture

from kconsole.objects.meta import get_condition

NS = "namespace-controller"
CONTENT = ("pods", "services", "configmaps", "secrets", "serviceaccounts", "deployments", "endpointslices",
           "leases", "jobs")


async def fill(ctrl: Ctrl, ns: str) -> None:
    await ctrl.admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    await ctrl.clock.settle()  # the namespace reaches the admission cache
    objs = [
        pod("p1", namespace=ns), pod("p2", namespace=ns),
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc", "namespace": ns},
         "spec": {"selector": {"app": "x"}, "ports": [{"port": 80}]}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": ns}, "data": {"a": "b"}},
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": ns}, "stringData": {"a": "b"}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot", "namespace": ns}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": ns},
         "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "d"}},
                  "template": {"metadata": {"labels": {"app": "d"}},
                               "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]}}}},
        {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l", "namespace": ns},
         "spec": {}},
    ]
    for obj in objs:
        await ctrl.admin.create(obj)


async def content(ctrl: Ctrl, ns: str) -> dict[str, list[str]]:
    out = {}
    for resource in CONTENT:
        names = await ctrl.names(resource, ns)
        if names:
            out[resource] = names
    return out


async def test_deleting_a_namespace_removes_everything_in_it(ctrl: Ctrl) -> None:
    await ctrl.manager(NS, "serviceaccount-controller")
    await fill(ctrl, "shop")
    await fill(ctrl, "other")
    await ctrl.wait(lambda: ctrl.exists("serviceaccounts", "default", "shop"), timeout=10)
    marked = await ctrl.admin.delete("namespaces", "shop")
    assert marked["status"]["phase"] == "Terminating"
    await ctrl.wait(lambda: _gone(ctrl, "shop"), timeout=30)
    assert await content(ctrl, "shop") == {}
    # Nothing else was touched, and the default account was not brought back into the dying namespace.
    assert set(await content(ctrl, "other")) >= {"pods", "services", "configmaps", "deployments"}
    assert not await ctrl.exists("serviceaccounts", "default", "shop")


async def test_content_that_cannot_go_yet_keeps_the_namespace_terminating_with_upstream_conditions(
        ctrl: Ctrl) -> None:
    await ctrl.manager(NS)
    await ctrl.admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "slow"}})
    await ctrl.clock.settle()
    await ctrl.admin.create(node("n1"))
    stuck = pod("stuck", namespace="slow", node_name="n1", grace=30)
    stuck["metadata"]["finalizers"] = ["example.com/hold"]
    await ctrl.admin.create(stuck)
    await ctrl.admin.delete("namespaces", "slow")
    await ctrl.clock.advance(10)
    ns = await ctrl.admin.get("namespaces", "slow")
    remaining = get_condition(ns["status"], "NamespaceContentRemaining")
    assert remaining is not None and remaining["status"] == "True"
    assert remaining["message"] == "Some resources are remaining: pods has 1 resource instances"
    fins = get_condition(ns["status"], "NamespaceFinalizersRemaining")
    assert fins is not None and fins["status"] == "True"
    assert fins["message"] == ("Some content in the namespace has finalizers remaining: "
                               "example.com/hold in 1 resource instances")
    assert get_condition(ns["status"], "NamespaceDeletionContentFailure")["reason"] == "ContentDeleted"
    assert ns["spec"]["finalizers"] == ["kubernetes"]

    # The finalizer is released and the kubelet's grace passes: the namespace finishes.
    held = await ctrl.admin.get("pods", "stuck", "slow")
    held["metadata"]["finalizers"] = []
    await ctrl.admin.update(held)
    await ctrl.admin.delete("pods", "stuck", "slow", grace_period_seconds=0)
    await ctrl.wait(lambda: _gone(ctrl, "slow"), timeout=120)


async def _gone(ctrl: Ctrl, ns: str) -> bool:
    return not await ctrl.exists("namespaces", ns, None)
