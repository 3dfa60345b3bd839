"""A recorded scenario on the virtual clock: a folder sync apply, a user's bare pod, a cordon fault,
a scale, a delete. Its data folder is what ``kconsole trace export`` and ``kconsole fork`` read."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from kconsole.api.types import UserInfo
from kconsole.cluster import ADMIN, SYNC, Cluster, ClusterConfig
from kconsole.clock import VirtualClock

Obj = dict[str, Any]


def deployment(name: str, replicas: int, cpu: str = "500m") -> Obj:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "app", "image": "nginx:1.25",
                                                           "resources": {"requests": {"cpu": cpu}}}]}}}}


def bare_pod(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "app", "image": "busybox:1.36",
                                     "resources": {"requests": {"cpu": "250m"}}}]}}


def config(data_dir: Path, **kw: Any) -> ClusterConfig:
    settings: dict[str, Any] = {"http": False, "manifests": None, "nodes": 3, "control_planes": 1,
                                "pod_delay_factor": 0.0, **kw}
    return ClusterConfig(data_dir=data_dir, **settings)


async def boot(cfg: ClusterConfig, clock: VirtualClock) -> Cluster:
    cluster = Cluster(cfg, clock=clock)
    task = asyncio.ensure_future(cluster.start())
    await clock.run_until(task.done, timeout=120, step=0.1)
    task.result()
    return cluster


async def stop(cluster: Cluster, clock: VirtualClock) -> None:
    task = asyncio.ensure_future(cluster.stop())
    await clock.run_until(task.done, timeout=120, step=0.1)


async def record_scenario(data_dir: Path) -> dict[str, Any]:
    """Run the scenario and stop the cluster; returns what was seen live (for comparison)."""
    clock = VirtualClock()
    cluster = await boot(config(data_dir), clock)
    seen: dict[str, Any] = {}
    try:
        sync = cluster.api_client(SYNC)
        admin = cluster.api_client(ADMIN)
        alice = cluster.api_client(UserInfo("alice", ("system:masters",)))
        await clock.advance(5)
        await sync.apply(deployment("web", 4), field_manager="kconsole-sync")
        await clock.advance(30)
        await admin.create(bare_pod("solo"))
        await clock.advance(10)
        assert cluster.faults is not None
        await cluster.faults.apply("cordon", "worker-2")
        await clock.advance(5)
        await alice.patch("deployments", "web", {"spec": {"replicas": 6}}, "default")
        await clock.advance(30)
        solo = await admin.get("pods", "solo", "default")
        seen["before_delete"] = solo["metadata"]["resourceVersion"]
        seen["solo_uid"] = solo["metadata"]["uid"]
        await admin.delete("pods", "solo", "default", grace_period_seconds=0)
        await clock.advance(20)
        await cluster.faults.heal("f1")
        await clock.advance(10)
        events = await admin.list_all("events")
        seen["events"] = sorted((e["metadata"].get("namespace"), e["metadata"]["name"], e.get("reason"))
                                for e in events)
        pods = await admin.list_all("pods")
        seen["placements"] = sorted((p["metadata"]["name"], (p.get("spec") or {}).get("nodeName")) for p in pods)
    finally:
        await stop(cluster, clock)
    return seen
