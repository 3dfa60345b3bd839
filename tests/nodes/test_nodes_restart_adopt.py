"""A kconsole restart leaves running containers alone, as a kubelet restart does upstream: the
kubelets adopt the stored status instead of pulling, creating and starting everything again."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from kconsole.cluster import Cluster, ClusterConfig
from kconsole.clock import VirtualClock

Obj = dict[str, Any]


async def boot(data_dir: Path, clock: VirtualClock) -> tuple[Cluster, VirtualClock]:
    cluster = Cluster(ClusterConfig(http=False, data_dir=data_dir, manifests=None, nodes=1, control_planes=1),
                      clock=clock)
    task = asyncio.create_task(cluster.start())
    await clock.run_until(task.done, timeout=60, step=0.1)
    task.result()
    return cluster, clock


async def shutdown(cluster: Cluster, clock: VirtualClock) -> None:
    task = asyncio.create_task(cluster.stop())
    await clock.run_until(task.done, timeout=60, step=0.1)


def container_facts(pod: Obj) -> list[tuple[str, int, str, str]]:
    return [(c["name"], c["restartCount"], c["state"].get("running", {}).get("startedAt", ""), c.get("containerID", ""))
            for c in pod["status"]["containerStatuses"]]


async def kubelet_events(cluster: Cluster) -> list[tuple[str, str, str]]:
    """The kubelets' pod events (a restarted kubelet records its node's 'Starting kubelet.' again)."""
    events = await cluster.api_client().list_all("events", "default")
    return sorted((e["involvedObject"]["name"], e["reason"], e["metadata"]["name"]) for e in events
                  if e["source"].get("component") == "kubelet" and e["involvedObject"]["kind"] == "Pod")


async def test_restart_adopts_running_pods_without_new_events_or_restarts(tmp_path: Path) -> None:
    cluster, clock = await boot(tmp_path / "data", VirtualClock())
    try:
        admin = cluster.api_client()
        await admin.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
                            "spec": {"containers": [
                                {"name": "app", "image": "nginx:1.25",
                                 "readinessProbe": {"httpGet": {"path": "/", "port": 80}, "periodSeconds": 5}},
                                {"name": "side", "image": "busybox:1.36", "command": ["sleep", "60"]}]}})

        async def ready() -> bool:
            pod = await admin.get("pods", "web", "default")
            return any(c["type"] == "Ready" and c["status"] == "True" for c in pod["status"].get("conditions") or ())

        await clock.run_until(ready, timeout=60, step=0.5)
        await clock.advance(5)
        before = await admin.get("pods", "web", "default")
        events_before = await kubelet_events(cluster)
        assert {r for _, r, _ in events_before} >= {"Pulling", "Pulled", "Created", "Started"}
    finally:
        await shutdown(cluster, clock)

    # Simulated time goes on from where it stopped (kconsole serve keeps it in the data folder).
    cluster, clock = await boot(tmp_path / "data", VirtualClock(start=clock.now() + 1))
    try:
        admin = cluster.api_client()
        await clock.advance(20)
        after = await admin.get("pods", "web", "default")
        assert after["status"]["phase"] == "Running"
        assert container_facts(after) == container_facts(before)
        assert after["status"]["podIP"] == before["status"]["podIP"]
        assert all(c["ready"] for c in after["status"]["containerStatuses"])
        assert await kubelet_events(cluster) == events_before
        starts = [e["count"] for e in await admin.list_all("events", "default")
                  if e["reason"] == "Starting" and e["involvedObject"]["name"] == "worker-1"]
        assert starts == [1, 1], "a restarted kubelet's correlator is new: one more 'Starting kubelet.' event"
        # The adopted sleep still ends 60 s after it started, and restarts as the second instance.
        await clock.advance(40)
        later = await admin.get("pods", "web", "default")
        assert [c["restartCount"] for c in later["status"]["containerStatuses"]] == [0, 1]
    finally:
        await shutdown(cluster, clock)
