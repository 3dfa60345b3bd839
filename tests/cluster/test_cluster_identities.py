"""The components show up as on a real cluster: managedFields name kube-controller-manager,
kube-scheduler and kubelet (their user agents), and Events name their upstream sources, read with
the real kubectl."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from kconsole.cluster import Cluster, ClusterConfig
from kconsole.clock import VirtualClock

Obj = dict[str, Any]


async def kubectl(cluster: Cluster, home: Path, *args: str) -> str:
    binary = shutil.which("kubectl")
    if binary is None:
        pytest.fail("kubectl is not on PATH: these tests drive the real kubectl 1.32")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "KUBECONFIG": str(cluster.kubeconfig_path),
           "KUBECACHEDIR": str(home / "kube-cache")}
    proc = await asyncio.create_subprocess_exec(binary, *args, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE, env=env)
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 0, err.decode()
    return out.decode()


@contextlib.asynccontextmanager
async def booted(tmp_path: Path, nodes: int, control_planes: int) -> AsyncIterator[tuple[Cluster, VirtualClock]]:
    """A cluster composed as ``kconsole serve`` does, on a virtual clock, stopped on the way out."""
    clock = VirtualClock()
    cluster = Cluster(ClusterConfig(data_dir=tmp_path / "data", manifests=None, nodes=nodes,
                                    control_planes=control_planes, port=0), clock=clock)
    task = asyncio.create_task(cluster.start())
    await clock.run_until(task.done, timeout=60, step=0.1)
    task.result()
    try:
        yield cluster, clock
    finally:
        task = asyncio.create_task(cluster.stop())
        await clock.run_until(task.done, timeout=60, step=0.1)


def managers(obj: Obj) -> set[tuple[str, str]]:
    return {(m["manager"], m.get("subresource", "")) for m in obj["metadata"].get("managedFields") or ()}


async def test_field_managers_and_event_sources_read_as_upstream(tmp_path: Path) -> None:
    async with booted(tmp_path, nodes=1, control_planes=1) as (cluster, clock):
        admin = cluster.api_client()
        await clock.run_until(lambda: any(s.is_leader for s in cluster.schedulers)
                              and any(m.is_leader for m in cluster.controller_managers), timeout=30, step=0.5)
        await admin.create({"apiVersion": "apps/v1", "kind": "Deployment",
                            "metadata": {"name": "web", "namespace": "default"},
                            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                                     "template": {"metadata": {"labels": {"app": "web"}},
                                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})

        async def running() -> bool:
            pods = await admin.list_all("pods", "default")
            return bool(pods) and (pods[0].get("status") or {}).get("phase") == "Running"

        await clock.run_until(running, timeout=120, step=0.5)
        await clock.advance(2)
        rs = (await admin.list_all("replicasets", "default"))[0]
        assert ("kube-controller-manager", "") in managers(rs)
        assert ("kube-scheduler", "") in managers(await admin.get("leases", "kube-scheduler", "kube-system"))
        assert ("kube-controller-manager", "") in managers(
            await admin.get("leases", "kube-controller-manager", "kube-system"))
        pod = (await admin.list_all("pods", "default"))[0]
        assert all(m[0] != "kconsole" for m in managers(pod)), managers(pod)
        events = [e for e in await admin.list_all("events", "default")
                  if e["involvedObject"].get("name") == pod["metadata"]["name"]]
        scheduled = next(e for e in events if e["reason"] == "Scheduled")
        replica = cluster.replica_names()[0]
        assert scheduled["source"] == {"component": "default-scheduler"}
        assert (scheduled["reportingComponent"], scheduled["reportingInstance"]) == (
            "default-scheduler", f"default-scheduler-{replica}")
        started = next(e for e in events if e["reason"] == "Started")
        assert started["source"] == {"component": "kubelet", "host": pod["spec"]["nodeName"]}

        described = await kubectl(cluster, tmp_path, "describe", "pod", pod["metadata"]["name"])
        line = next(x for x in described.splitlines() if "Successfully assigned" in x)
        assert line.split()[3:5] == ["default-scheduler", "Successfully"], line
        assert any(x.split()[3:5] == ["kubelet", "Pulling"] for x in described.splitlines())
        yaml_out = await kubectl(cluster, tmp_path, "get", "rs", rs["metadata"]["name"], "-o", "yaml",
                                 "--show-managed-fields")
        assert "manager: kube-controller-manager" in yaml_out and "manager: kconsole" not in yaml_out


async def test_the_api_server_proxies_to_a_nodes_kubelet(tmp_path: Path) -> None:
    """``kubectl get --raw /api/v1/nodes/<n>/proxy/configz`` shows the kubelet's configuration, the
    timings the simulation runs on; a stopped kubelet is a refused connection, as upstream words it."""
    import json

    from kconsole.api.types import StatusError

    async with booted(tmp_path, nodes=1, control_planes=1) as (cluster, clock):
        config = json.loads(await kubectl(cluster, tmp_path, "get", "--raw", "/api/v1/nodes/worker-1/proxy/configz"))
        kubelet = config["kubeletconfig"]
        assert (kubelet["nodeLeaseDurationSeconds"], kubelet["nodeStatusUpdateFrequency"],
                kubelet["nodeStatusReportFrequency"]) == (40, "10s", "5m0s")
        assert kubelet["maxPods"] == 110 and kubelet["clusterDNS"] == ["10.96.0.10"]
        assert kubelet["podCIDR"] == cluster.node_pool.kubelets["worker-1"].config.pod_cidr  # type: ignore[union-attr]
        assert await kubectl(cluster, tmp_path, "get", "--raw", "/api/v1/nodes/worker-1/proxy/healthz") == "ok"
        await clock.run_until(lambda: cluster.proxies["worker-1"].running, timeout=60)  # its kube-proxy pod runs
        await clock.advance(20)  # Running reaches the informers; a usage period passes (metrics-server's window)
        pods = json.loads(await kubectl(cluster, tmp_path, "get", "--raw", "/api/v1/nodes/worker-1/proxy/pods"))
        assert pods["kind"] == "PodList" and pods["items"]
        assert {p["spec"]["nodeName"] for p in pods["items"]} == {"worker-1"}

        summary = json.loads(await kubectl(cluster, tmp_path, "get", "--raw",
                                           "/api/v1/nodes/worker-1/proxy/stats/summary"))
        assert summary["node"]["nodeName"] == "worker-1" and summary["node"]["cpu"]["usageNanoCores"] > 0
        running = {p["metadata"]["name"] for p in pods["items"] if p.get("status", {}).get("phase") == "Running"}
        assert {p["podRef"]["name"] for p in summary["pods"]} == running
        assert [n for n in running if n.startswith("kube-proxy-")], "an idle pod shows its idle use"
        admin = cluster.api_client()
        with pytest.raises(StatusError) as missing:  # the kubelet serves nothing at /
            await admin.get("nodes", "worker-1", subresource="proxy")
        assert missing.value.code == 404 and missing.value.message == "404 page not found"
        faults = cluster.faults
        assert faults is not None
        await faults.apply("kubelet-stop", "worker-1")
        with pytest.raises(StatusError) as refused:
            await admin.get("nodes", "worker-1", subresource="proxy")
        assert refused.value.code == 503
        address = cluster.node_pool.kubelets["worker-1"].config.address  # type: ignore[union-attr]
        assert refused.value.message == (f"error trying to reach service: dial tcp {address}:10250: "
                                         "connect: connection refused")

