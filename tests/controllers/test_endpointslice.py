"""EndpointSlice and Endpoints controllers: Services follow their pods' readiness."""

from __future__ import annotations

from typing import Any

from ctrl_env import Ctrl, ctrl, node, pod  # noqa: F401 - ctrl is the fixture

SLICES = "endpointslice-controller"
ENDPOINTS = "endpoints-controller"


def service(name: str, selector: dict[str, str] | None, ports: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "default"},
                            "spec": {"ports": ports, **spec}}
    if selector is not None:
        body["spec"]["selector"] = selector
    return body


async def slices(ctrl: Ctrl, svc: str) -> list[dict[str, Any]]:
    return await ctrl.admin.list_all("endpointslices", "default", label_selector=f"kubernetes.io/service-name={svc}")


async def endpoints_by_pod(ctrl: Ctrl, svc: str) -> dict[str, dict[str, Any]]:
    out = {}
    for es in await slices(ctrl, svc):
        for ep in es.get("endpoints") or ():
            out[ep["targetRef"]["name"]] = {"ip": ep["addresses"][0], **ep["conditions"], "ports": es["ports"]}
    return out


async def start_pods(ctrl: Ctrl, n: int, labels: dict[str, str], ports: list[dict[str, Any]] | None = None,
                     prefix: str = "web") -> None:
    await ctrl.admin.create(node("n1", zone="z1"))
    for i in range(n):
        await ctrl.admin.create(pod(f"{prefix}-{i}", labels=labels, node_name="n1", ports=ports))
        await ctrl.set_pod_status(f"{prefix}-{i}", ip=f"10.244.0.{10 + i}", ready=True)


async def test_slices_follow_readiness_and_named_target_ports(ctrl: Ctrl) -> None:
    await ctrl.manager(SLICES, ENDPOINTS)
    await start_pods(ctrl, 2, {"app": "web"}, ports=[{"name": "http", "containerPort": 8080}])
    await ctrl.admin.create(pod("other", labels={"app": "db"}))
    await ctrl.admin.create(service("web", {"app": "web"}, [{"name": "http", "port": 80, "targetPort": "http"}]))
    await ctrl.wait(lambda: _count(endpoints_by_pod(ctrl, "web"), 2), timeout=10)
    [es] = await slices(ctrl, "web")
    assert es["addressType"] == "IPv4"
    assert es["metadata"]["labels"]["endpointslice.kubernetes.io/managed-by"] == "endpointslice-controller.k8s.io"
    assert es["metadata"]["ownerReferences"][0]["kind"] == "Service"
    assert es["metadata"]["name"].startswith("web-")
    eps = await endpoints_by_pod(ctrl, "web")
    assert eps["web-0"] == {"ip": "10.244.0.10", "ready": True, "serving": True, "terminating": False,
                            "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]}
    assert es["endpoints"][0]["nodeName"] == "n1" and es["endpoints"][0]["zone"] == "z1"

    # Readiness goes away: the endpoint stays, not ready; the v1 Endpoints moves it to notReadyAddresses.
    await ctrl.set_pod_status("web-1", ip="10.244.0.11", ready=False)
    await ctrl.wait(lambda: _field(endpoints_by_pod(ctrl, "web"), "web-1", "ready", False), timeout=10)
    ep = await ctrl.admin.get("endpoints", "web", "default")
    [subset] = ep["subsets"]
    assert [a["ip"] for a in subset["addresses"]] == ["10.244.0.10"]
    assert [a["ip"] for a in subset["notReadyAddresses"]] == ["10.244.0.11"]
    assert subset["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]

    # A terminating pod is kept in the slice as terminating, and leaves the v1 Endpoints.
    await ctrl.admin.delete("pods", "web-0", "default", grace_period_seconds=30)
    await ctrl.wait(lambda: _field(endpoints_by_pod(ctrl, "web"), "web-0", "terminating", True), timeout=10)
    eps = await endpoints_by_pod(ctrl, "web")
    assert eps["web-0"]["ready"] is False and eps["web-0"]["serving"] is True
    await ctrl.clock.advance(1)
    ep = await ctrl.admin.get("endpoints", "web", "default")
    assert [a["ip"] for s in ep["subsets"] for a in s.get("addresses", [])] == []


async def test_a_service_without_pods_gets_a_placeholder_and_deletion_cleans_up(ctrl: Ctrl) -> None:
    await ctrl.manager(SLICES, ENDPOINTS, "garbage-collector-controller")
    await ctrl.admin.create(service("empty", {"app": "none"}, [{"port": 80}]))
    await ctrl.wait(lambda: _count(slices(ctrl, "empty"), 1), timeout=10)
    [es] = await slices(ctrl, "empty")
    assert es.get("endpoints") in (None, []) and es.get("ports") in (None, [])
    # Services without a selector are left to their owner.
    await ctrl.admin.create(service("manual", None, [{"port": 80}]))
    await ctrl.clock.advance(2)
    assert await slices(ctrl, "manual") == []
    assert not await ctrl.exists("endpoints", "manual")
    await ctrl.admin.delete("services", "empty", "default")
    await ctrl.wait(lambda: _count(slices(ctrl, "empty"), 0), timeout=10)
    await ctrl.wait(lambda: _not(ctrl.exists("endpoints", "empty")), timeout=10)


async def test_slices_hold_at_most_the_limit_and_headless_services_are_labelled(ctrl: Ctrl) -> None:
    await ctrl.manager(SLICES, settings={SLICES: {"max_endpoints_per_slice": 2}})
    await start_pods(ctrl, 5, {"app": "db"}, prefix="db")
    await ctrl.admin.create(service("db", {"app": "db"}, [{"port": 5432}], clusterIP="None"))
    await ctrl.wait(lambda: _count(endpoints_by_pod(ctrl, "db"), 5), timeout=10)
    got = await slices(ctrl, "db")
    assert sorted(len(s["endpoints"]) for s in got) == [1, 2, 2]
    assert all(s["metadata"]["labels"]["service.kubernetes.io/headless"] == "" for s in got)
    # Scale down: the extra slice goes away.
    for i in (3, 4):
        await ctrl.admin.delete("pods", f"db-{i}", "default", grace_period_seconds=0)
    await ctrl.wait(lambda: _count(slices(ctrl, "db"), 2), timeout=10)
    assert len(await endpoints_by_pod(ctrl, "db")) == 3


async def test_a_deleted_slice_is_recreated(ctrl: Ctrl) -> None:
    await ctrl.manager(SLICES)
    await start_pods(ctrl, 1, {"app": "web"})
    await ctrl.admin.create(service("web", {"app": "web"}, [{"port": 80, "targetPort": 8080}]))
    await ctrl.wait(lambda: _count(endpoints_by_pod(ctrl, "web"), 1), timeout=10)
    [es] = await slices(ctrl, "web")
    await ctrl.admin.delete("endpointslices", es["metadata"]["name"], "default")
    await ctrl.wait(lambda: _count(endpoints_by_pod(ctrl, "web"), 1), timeout=10)
    assert (await endpoints_by_pod(ctrl, "web"))["web-0"]["ports"] == [{"name": "", "port": 8080, "protocol": "TCP"}]


async def test_writes_carry_the_last_change_trigger_time(ctrl: Ctrl) -> None:
    """upstream's TriggerTimeTracker: the Service's creation when first seen, then the Ready
    transition of the pod whose change caused the write."""
    trigger = "endpoints.kubernetes.io/last-change-trigger-time"
    await ctrl.manager(SLICES, ENDPOINTS)
    await ctrl.admin.create(node("n1", zone="z1"))
    svc = await ctrl.admin.create(service("web", {"app": "web"}, [{"port": 80, "targetPort": 8080}]))
    created = svc["metadata"]["creationTimestamp"]
    await ctrl.wait(lambda: _count(slices(ctrl, "web"), 1), timeout=10)
    await ctrl.wait(lambda: ctrl.exists("endpoints", "web"), timeout=10)
    [es] = await slices(ctrl, "web")
    assert es["metadata"]["annotations"] == {trigger: created}
    ep = await ctrl.admin.get("endpoints", "web", "default")
    assert ep["metadata"]["annotations"] == {trigger: created}

    await ctrl.clock.advance(30)
    await ctrl.admin.create(pod("web-0", labels={"app": "web"}, node_name="n1"))
    ready = ctrl.clock.rfc3339()
    await ctrl.set_pod_status("web-0", ip="10.244.0.10", ready=True)
    await ctrl.wait(lambda: _count(endpoints_by_pod(ctrl, "web"), 1), timeout=10)
    [es] = await slices(ctrl, "web")
    assert ready != created and es["metadata"]["annotations"] == {trigger: ready}
    await ctrl.clock.advance(1)
    ep = await ctrl.admin.get("endpoints", "web", "default")
    assert ep["metadata"]["annotations"] == {trigger: ready}


async def _count(aw: Any, n: int) -> bool:
    return len(await aw) == n


async def _field(aw: Any, name: str, key: str, value: Any) -> bool:
    got = await aw
    return name in got and got[name][key] == value


async def _not(aw: Any) -> bool:
    return not await aw
