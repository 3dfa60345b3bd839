"""``--replica-processes``: each scheduler and controller-manager replica in its own OS process over
HTTPS. The Deployment → ReplicaSet → Pod → binding chain crosses three processes, and killing the
scheduler leader hands its Lease to the other replica, which goes on scheduling. Real processes on
a real clock at a high speed: the waits are generous wall-clock bounds on conditions."""

from __future__ import annotations

from pathlib import Path

from attach_env import eventually

from kconsole.cluster import Cluster, ClusterConfig
from kconsole.clock import RealClock
from kconsole.replicaproc import ReplicaProcess


def _deployment(name: str, replicas: int) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}}


async def test_leader_failover_between_processes(tmp_path: Path) -> None:
    config = ClusterConfig(nodes=2, control_planes=2, replica_processes=True, port=0, data_dir=tmp_path / "data",
                           manifests=None, speed=5, addons=())
    cluster = Cluster(config, clock=RealClock(speed=5))
    await cluster.start()
    try:
        assert all(isinstance(r, ReplicaProcess) and r.running for r in [*cluster.schedulers,
                                                                          *cluster.controller_managers])
        client = cluster.api_client()

        async def running(app: str) -> int:
            pods = await client.list_all("pods", "default", label_selector=f"app={app}")
            return sum((p.get("status") or {}).get("phase") == "Running" for p in pods)

        async def at_least(app: str, n: int) -> bool:
            return await running(app) >= n

        await client.create(_deployment("before", 2))
        await eventually(lambda: at_least("before", 2), "the chain across processes runs 2 pods")
        leader = next(r for r in cluster.schedulers if r.is_leader)
        fault = await cluster.faults.apply("kill-scheduler-leader", "leader")
        assert fault.target == leader.identity and not leader.running

        def other_leads() -> bool:
            return any(r.is_leader and r is not leader for r in cluster.schedulers)

        await eventually(other_leads, "the other scheduler process takes the Lease")
        await client.create(_deployment("after", 2))
        await eventually(lambda: at_least("after", 2), "the new leader schedules")
        await cluster.faults.heal(fault.id)
        assert leader.running
    finally:
        await cluster.stop()
