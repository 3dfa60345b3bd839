"""kube-proxy rules from EndpointSlices, init containers, image pull failures, fleet membership."""

from __future__ import annotations

from typing import Any

from kconsole.nodes import NodeConfig
from kconsole.objects.meta import condition_status
from node_env import NodeEnv, pod


def _slice(name: str, service: str, endpoints: list[tuple[str, bool, str]], port: int = 8080) -> dict[str, Any]:
    return {
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": name, "namespace": "default", "labels": {"kubernetes.io/service-name": service}},
        "addressType": "IPv4",
        "ports": [{"name": "http", "port": port, "protocol": "TCP"}],
        "endpoints": [{"addresses": [ip], "conditions": {"ready": ready}, "nodeName": node}
                      for ip, ready, node in endpoints],
    }


async def test_proxy_rules_follow_endpoint_slices(env: NodeEnv) -> None:
    fleet = await env.fleet(workers=2)
    svc = await env.admin.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web",
                                  "namespace": "default"}, "spec": {"selector": {"app": "web"},
                                  "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}})
    cluster_ip = svc["spec"]["clusterIP"]
    await env.admin.create(_slice("web-abc", "web", [("10.244.1.5", True, "worker-1"),
                                                     ("10.244.2.7", False, "worker-2")]))
    await env.clock.advance(0.5)
    rules = fleet.proxies["worker-2"].rules()
    assert [(r["service"], r["clusterIP"], r["port"], r["endpoints"]) for r in rules
            if r["service"] == "default/web"] == [("default/web", cluster_ip, 80, ["10.244.1.5:8080"])]

    sl = await env.admin.get("endpointslices", "web-abc", "default")
    sl["endpoints"][1]["conditions"]["ready"] = True
    await env.admin.update(sl)
    await env.clock.advance(0.5)
    rule = next(r for r in fleet.proxies["worker-1"].rules() if r["service"] == "default/web")
    assert rule["endpoints"] == ["10.244.1.5:8080", "10.244.2.7:8080"]

    # A partitioned node's proxy keeps the rules it had.
    fleet.kubelets["worker-2"].partition()
    await env.admin.delete("endpointslices", "web-abc", "default")
    await env.clock.advance(0.5)
    assert next(r for r in fleet.proxies["worker-1"].rules() if r["service"] == "default/web")["endpoints"] == []
    assert len(next(r for r in fleet.proxies["worker-2"].rules() if r["service"] == "default/web")["endpoints"]) == 2
    fleet.kubelets["worker-2"].heal()
    assert next(r for r in fleet.proxies["worker-2"].rules() if r["service"] == "default/web")["endpoints"] == []


async def test_init_containers_run_first(env: NodeEnv) -> None:
    await env.fleet(workers=1)
    spec = pod("with-init")
    spec["spec"]["initContainers"] = [{"name": "setup", "image": "busybox:1.36", "command": ["sleep", "5"]}]
    await env.admin.create(spec)
    await env.clock.advance(4)
    p = await env.pod("with-init")
    assert p["status"]["phase"] == "Pending" and condition_status(p, "Initialized") == "False"
    assert p["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == "PodInitializing"
    await env.wait(lambda: _running(env, "with-init"), timeout=30)
    p = await env.pod("with-init")
    assert p["status"]["initContainerStatuses"][0]["state"]["terminated"]["reason"] == "Completed"
    order = [(e["reason"], e["involvedObject"].get("fieldPath")) for e in await env.events("with-init")
             if e["reason"] == "Started"]
    assert order == [("Started", "spec.initContainers{setup}"), ("Started", "spec.containers{web}")]


async def _running(env: NodeEnv, name: str) -> bool:
    return (await env.pod(name)).get("status", {}).get("phase") == "Running"


async def test_missing_image_goes_to_image_pull_backoff(env: NodeEnv) -> None:
    await env.fleet(workers=1)
    await env.admin.create(pod("typo", image="nginx:doesnotexist"))
    await env.clock.advance(3)
    waiting = (await env.pod("typo"))["status"]["containerStatuses"][0]["state"]["waiting"]
    assert waiting["reason"] == "ImagePullBackOff"
    failed = [e["message"] for e in await env.events("typo") if e["reason"] == "Failed"]
    assert failed[0].startswith('Failed to pull image "nginx:doesnotexist": ')


async def test_pod_deleted_while_kubelet_is_down_is_cleaned_up_on_start(env: NodeEnv) -> None:
    fleet = await env.fleet(workers=1, delay_factor=0)
    await env.admin.create(pod("orphan", grace=5))
    await env.clock.advance(1)
    kubelet = fleet.kubelets["worker-1"]
    await kubelet.stop()
    await env.admin.delete("pods", "orphan", "default")
    await env.clock.advance(30)
    assert (await env.pod("orphan"))["metadata"].get("deletionTimestamp")  # nobody finishes it
    await kubelet.start()
    await env.clock.advance(2)
    assert not [p for p in await env.admin.list_all("pods", "default") if p["metadata"]["name"] == "orphan"]


async def test_add_and_remove_nodes(env: NodeEnv) -> None:
    fleet = await env.fleet(workers=1)
    kubelet = await fleet.add_node(NodeConfig(name="extra", pod_cidr="10.244.9.0/24", address="172.18.0.99",
                                              extended={"nvidia.com/gpu": "2"}))
    node = await env.admin.get("nodes", "extra")
    assert node["status"]["capacity"]["nvidia.com/gpu"] == "2" and kubelet.running
    await fleet.remove_node("extra")
    assert "extra" not in fleet.kubelets and not kubelet.running
    try:
        await fleet.remove_node("extra")
    except LookupError as err:
        assert "extra" in str(err)
    else:
        raise AssertionError("expected LookupError")
