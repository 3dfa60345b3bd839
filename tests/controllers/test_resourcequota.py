"""ResourceQuota: the controller keeps status.hard/used current as objects come and go, and quota
admission refuses a create past a hard limit with upstream's message, on the real API server."""

from __future__ import annotations

from typing import Any

from ctrl_env import Ctrl, ctrl, open_crd, pod  # noqa: F401 - ctrl is the fixture

from kconsole.client import StatusError

Obj = dict[str, Any]


def quota(hard: dict[str, str]) -> Obj:
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "default"},
            "spec": {"hard": hard}}


def sized(name: str, cpu: str, memory: str) -> Obj:
    p = pod(name)
    p["spec"]["containers"][0]["resources"] = {"requests": {"cpu": cpu, "memory": memory},
                                               "limits": {"cpu": cpu, "memory": memory}}
    return p


async def used(ctrl: Ctrl) -> dict[str, str]:
    return ((await ctrl.admin.get("resourcequotas", "q", "default")).get("status") or {}).get("used") or {}


async def test_status_follows_objects_and_admission_refuses_past_hard(ctrl: Ctrl) -> None:
    await ctrl.manager("resourcequota-controller")
    await ctrl.admin.create(quota({"pods": "2", "requests.cpu": "1", "limits.memory": "1Gi", "configmaps": "3"}))
    want = {"pods": "0", "requests.cpu": "0", "limits.memory": "0", "configmaps": "0"}
    await ctrl.wait(lambda: ctrl.api.list_objects("resourcequotas", "default")[0].get("status", {}).get("used") == want)
    status = (await ctrl.admin.get("resourcequotas", "q", "default"))["status"]
    assert status["hard"] == {"pods": "2", "requests.cpu": "1", "limits.memory": "1Gi", "configmaps": "3"}
    await ctrl.admin.create(sized("a", "500m", "256Mi"))
    await ctrl.admin.create({"apiVersion": "v1", "kind": "ConfigMap",
                             "metadata": {"name": "c", "namespace": "default"}})
    want = {"pods": "1", "requests.cpu": "500m", "limits.memory": "256Mi", "configmaps": "1"}
    await ctrl.wait(lambda: ctrl.api.list_objects("resourcequotas", "default")[0].get("status", {}).get("used") == want)
    try:
        await ctrl.admin.create(sized("b", "600m", "256Mi"))
        raise AssertionError("a pod past requests.cpu was admitted")
    except StatusError as err:
        assert err.code == 403
        assert str(err) == ('pods "b" is forbidden: exceeded quota: q, requested: requests.cpu=600m, '
                                       "used: requests.cpu=500m, limited: requests.cpu=1")
    await ctrl.admin.create(sized("b", "500m", "256Mi"))
    try:
        await ctrl.admin.create(sized("c", "0", "0"))
        raise AssertionError("a third pod was admitted")
    except StatusError as err:
        assert "exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2" in str(err)
    await ctrl.admin.delete("pods", "a", "default")
    want = {"pods": "1", "requests.cpu": "500m", "limits.memory": "256Mi", "configmaps": "1"}
    await ctrl.wait(lambda: ctrl.api.list_objects("resourcequotas", "default")[0].get("status", {}).get("used") == want)
    await ctrl.admin.create(sized("c", "100m", "64Mi"))


async def test_a_scoped_quota_counts_only_the_pods_it_selects(ctrl: Ctrl) -> None:
    await ctrl.manager("resourcequota-controller")
    scoped = quota({"pods": "1"})
    scoped["spec"]["scopes"] = ["BestEffort"]
    await ctrl.admin.create(scoped)
    await ctrl.admin.create(sized("sized", "100m", "64Mi"))
    await ctrl.admin.create(pod("free"))
    await ctrl.admin.create(sized("sized-2", "100m", "64Mi"))
    try:
        await ctrl.admin.create(pod("free-2"))
        raise AssertionError("a second BestEffort pod was admitted")
    except StatusError as err:
        assert "exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1" in str(err)
    await ctrl.wait(lambda: ctrl.api.list_objects("resourcequotas", "default")[0].get("status", {}).get("used")
                    == {"pods": "1"})


async def test_object_counts_of_other_groups(ctrl: Ctrl) -> None:
    await ctrl.manager("resourcequota-controller")
    await ctrl.admin.create(quota({"count/deployments.apps": "1"}))
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default"},
              "spec": {"selector": {"matchLabels": {"app": "d"}},
                       "template": {"metadata": {"labels": {"app": "d"}},
                                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    await ctrl.admin.create(deploy)
    await ctrl.wait(lambda: ctrl.api.list_objects("resourcequotas", "default")[0].get("status", {}).get("used")
                    == {"count/deployments.apps": "1"})
    deploy["metadata"]["name"] = "e"
    try:
        await ctrl.admin.create(deploy)
        raise AssertionError("a second Deployment was admitted")
    except StatusError as err:
        assert str(err) == ('deployments.apps "e" is forbidden: exceeded quota: q, requested: '
                            "count/deployments.apps=1, used: count/deployments.apps=1, "
                            "limited: count/deployments.apps=1")


async def test_an_update_that_adds_node_ports_is_charged(ctrl: Ctrl) -> None:
    await ctrl.admin.create(quota({"services.nodeports": "1"}))
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "default"},
           "spec": {"selector": {"app": "s"}, "ports": [{"name": "a", "port": 80}, {"name": "b", "port": 81}]}}
    stored = await ctrl.admin.create(svc)
    stored["spec"]["type"] = "NodePort"
    try:
        await ctrl.admin.update(stored)
        raise AssertionError("a Service with two node ports was admitted past services.nodeports=1")
    except StatusError as err:
        assert "exceeded quota: q, requested: services.nodeports=2, used: services.nodeports=0, " \
               "limited: services.nodeports=1" in str(err)


async def test_object_counts_of_any_kind_including_one_defined_after_the_quota(ctrl: Ctrl) -> None:
    await ctrl.manager("resourcequota-controller")
    await ctrl.admin.create(quota({"count/leases.coordination.k8s.io": "2", "count/gizmos.example.com": "1"}))

    def used_now() -> dict[str, str]:
        return ctrl.api.list_objects("resourcequotas", "default")[0].get("status", {}).get("used") or {}

    await ctrl.wait(lambda: used_now() == {"count/leases.coordination.k8s.io": "0", "count/gizmos.example.com": "0"})
    await ctrl.admin.create({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                             "metadata": {"name": "l", "namespace": "default"}, "spec": {}})
    await ctrl.wait(lambda: used_now().get("count/leases.coordination.k8s.io") == "1")
    await ctrl.admin.create(open_crd("gizmos", "Gizmo"))
    await ctrl.wait(lambda: any(c.get("type") == "Established" for c in ctrl.api.get_object(
        "customresourcedefinitions", None, "gizmos.example.com").get("status", {}).get("conditions", ())))
    await ctrl.admin.create({"apiVersion": "example.com/v1", "kind": "Gizmo",
                             "metadata": {"name": "g", "namespace": "default"}})
    await ctrl.wait(lambda: used_now() == {"count/leases.coordination.k8s.io": "1", "count/gizmos.example.com": "1"})
    await ctrl.admin.delete("customresourcedefinitions", "gizmos.example.com")
    await ctrl.admin.delete("leases", "l", "default")
    await ctrl.wait(lambda: used_now().get("count/leases.coordination.k8s.io") == "0")
