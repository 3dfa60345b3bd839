"""kubeadm's addons: kube-proxy on every node, CoreDNS behind kube-dns, created when missing."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from kconsole.addons import DNS_SERVICE_IP, ensure_addons
from kconsole.cluster import Cluster, ClusterConfig, ConfigError
from kconsole.clock import VirtualClock
from kconsole.objects.meta import condition_status


async def boot(tmp_path: Path, clock: VirtualClock, **kw: Any) -> Cluster:
    config = ClusterConfig(http=False, data_dir=tmp_path / "data", manifests=None, pod_delay_factor=0.0, **kw)
    cluster = Cluster(config, clock=clock)
    task = asyncio.create_task(cluster.start())
    await clock.run_until(task.done, timeout=60, step=0.1)
    task.result()
    return cluster


async def stop(cluster: Cluster, clock: VirtualClock) -> None:
    task = asyncio.create_task(cluster.stop())
    await clock.run_until(task.done, timeout=60, step=0.1)


async def running(cluster: Cluster, selector: str) -> list[dict[str, Any]]:
    pods = await cluster.api_client().list_all("pods", "kube-system", label_selector=selector)
    return [p for p in pods if condition_status(p, "Ready") == "True"]


async def test_every_node_runs_kube_proxy_and_coredns_answers_behind_kube_dns(tmp_path: Path) -> None:
    clock = VirtualClock()
    cluster = await boot(tmp_path, clock, nodes=3, control_planes=1)
    try:
        admin = cluster.api_client()

        async def settled() -> bool:
            return len(await running(cluster, "k8s-app=kube-proxy")) == 4 \
                and len(await running(cluster, "k8s-app=kube-dns")) == 2

        await clock.run_until(settled, timeout=120, step=0.5)
        proxies = await running(cluster, "k8s-app=kube-proxy")
        # One per node, the tainted control plane included (the DaemonSet tolerates every taint).
        assert sorted(p["spec"]["nodeName"] for p in proxies) == ["control-plane", "worker-1", "worker-2", "worker-3"]
        assert all(p["spec"]["hostNetwork"] and p["spec"]["priorityClassName"] == "system-node-critical"
                   for p in proxies)
        dns = await running(cluster, "k8s-app=kube-dns")
        assert len({p["spec"]["nodeName"] for p in dns}) == 2, "the preferred anti-affinity spreads the replicas"
        assert all(p["metadata"]["name"].startswith("coredns-") and p["spec"]["serviceAccountName"] == "coredns"
                   for p in dns)

        service = await admin.get("services", "kube-dns", "kube-system")
        assert service["spec"]["clusterIP"] == DNS_SERVICE_IP
        assert service["metadata"]["labels"]["kubernetes.io/cluster-service"] == "true"  # kubectl cluster-info

        async def dns_endpoints() -> bool:
            slices = await admin.list_all("endpointslices", "kube-system",
                                          label_selector="kubernetes.io/service-name=kube-dns")
            addresses = sorted(a for s in slices for e in s.get("endpoints") or [] for a in e["addresses"])
            return addresses == sorted(p["status"]["podIP"] for p in dns)

        await clock.run_until(dns_endpoints, timeout=30)
        # kube-proxy's account may list what it proxies, as system:node-proxier allows.
        review = await cluster.api_client("system:serviceaccount:kube-system:kube-proxy").create({
            "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "metadata": {},
            "spec": {"resourceAttributes": {"verb": "watch", "group": "discovery.k8s.io",
                                            "resource": "endpointslices"}}})
        assert review["status"]["allowed"] is True
        await clock.advance(30)  # a few readiness probes
        logs = str(await admin.logs("kube-system", dns[0]["metadata"]["name"])).splitlines()
        assert logs[0] == ".:53" and logs[2] == "CoreDNS-1.11.3"
        assert not [line for line in logs if "kube-probe" in line], "CoreDNS does not log the kubelet's probes"
    finally:
        await stop(cluster, clock)


async def test_a_nodes_service_rules_follow_only_while_its_kube_proxy_pod_runs(tmp_path: Path) -> None:
    clock = VirtualClock()
    cluster = await boot(tmp_path, clock, nodes=1, control_planes=1)
    try:
        admin = cluster.api_client()
        proxy = cluster.proxies["worker-1"]

        def services() -> set[str]:
            return {r["service"] for r in proxy.rules()}

        await clock.run_until(lambda: proxy.running, timeout=60, step=0.5)
        await clock.run_until(lambda: "kube-system/kube-dns" in services(), timeout=60, step=0.5)
        # The DaemonSet goes, its pods with it: the rules stay as they were and stop following.
        await admin.delete("daemonsets", "kube-proxy", "kube-system")
        await clock.run_until(lambda: not proxy.running, timeout=60, step=0.5)
        await admin.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
                            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}})
        await clock.advance(10)
        assert "kube-system/kube-dns" in services() and "default/web" not in services()
    finally:
        await stop(cluster, clock)
    # Without the addon the proxy is part of the node's machine and follows from the start.
    clock = VirtualClock()
    cluster = await boot(tmp_path / "bare", clock, nodes=1, control_planes=1, addons=())
    try:
        assert cluster.proxies["worker-1"].running
        await clock.run_until(lambda: "default/kubernetes" in {r["service"] for r in cluster.proxies["worker-1"].rules()},
                              timeout=30, step=0.5)
    finally:
        await stop(cluster, clock)


async def test_a_crash_looping_kube_proxy_freezes_its_nodes_rules_until_healed(tmp_path: Path) -> None:
    """The rehearsal the addon makes possible: kube-proxy crash-looping on one node. Its rules stop
    following (a Service created meanwhile is missing there, present elsewhere) until it runs again."""
    clock = VirtualClock()
    cluster = await boot(tmp_path, clock, nodes=2, control_planes=1)
    try:
        admin = cluster.api_client()
        sick, well = cluster.proxies["worker-1"], cluster.proxies["worker-2"]
        await clock.run_until(lambda: sick.running and well.running, timeout=60, step=0.5)
        pod = next(p for p in await admin.list_all("pods", "kube-system", label_selector="k8s-app=kube-proxy")
                   if p["spec"]["nodeName"] == "worker-1")
        faults = cluster.faults
        assert faults is not None
        fault = await faults.apply("crash-loop", f"kube-system/{pod['metadata']['name']}")
        await clock.run_until(lambda: not sick.running, timeout=60, step=0.5)
        await admin.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "late", "namespace": "default"},
                            "spec": {"selector": {"app": "late"}, "ports": [{"port": 80}]}})
        await clock.advance(2)
        assert "default/late" in {r["service"] for r in well.rules()}
        assert "default/late" not in {r["service"] for r in sick.rules()}
        await faults.heal(fault.id)
        await clock.run_until(lambda: "default/late" in {r["service"] for r in sick.rules()}, timeout=400, step=1)
        assert sick.running
    finally:
        await stop(cluster, clock)


async def test_a_restart_brings_back_what_was_deleted_and_keeps_what_was_changed(tmp_path: Path) -> None:
    clock = VirtualClock()
    cluster = await boot(tmp_path, clock, nodes=1, control_planes=1)
    admin = cluster.api_client()
    await admin.patch("deployments", "coredns", {"spec": {"replicas": 1}}, "kube-system")
    await admin.delete("configmaps", "kube-proxy", "kube-system")
    await stop(cluster, clock)

    cluster = await boot(tmp_path, clock, nodes=1, control_planes=1)
    try:
        admin = cluster.api_client()
        assert "config.conf" in (await admin.get("configmaps", "kube-proxy", "kube-system"))["data"]
        assert (await admin.get("deployments", "coredns", "kube-system"))["spec"]["replicas"] == 1
    finally:
        await stop(cluster, clock)


async def test_addons_can_be_turned_off_and_a_taken_address_does_not_stop_the_rest(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown addon 'dashboard'"):
        ClusterConfig(addons=("kube-proxy", "dashboard")).validate()
    clock = VirtualClock()
    cluster = await boot(tmp_path, clock, nodes=1, control_planes=1, addons=())
    try:
        admin = cluster.api_client()
        assert await admin.list_all("daemonsets", "kube-system") == []
        assert await admin.list_all("storageclasses") == []
        await admin.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "squatter", "namespace": "default"},
                            "spec": {"clusterIP": DNS_SERVICE_IP, "ports": [{"port": 80}]}})
        problems = await ensure_addons(admin, ("coredns",))
        assert len(problems) == 1 and problems[0].startswith("addon coredns: Service kube-dns:")
        assert DNS_SERVICE_IP in problems[0]
        assert (await admin.get("deployments", "coredns", "kube-system"))["spec"]["replicas"] == 2
    finally:
        await stop(cluster, clock)
