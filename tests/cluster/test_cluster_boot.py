"""The composed cluster boots like a real one: etcd quorum, bootstrap RBAC, leaders elected."""

from __future__ import annotations

import asyncio
from pathlib import Path

from kconsole.cluster import Cluster, ClusterConfig
from kconsole.clock import VirtualClock


async def boot(tmp_path: Path, **kw: object) -> tuple[Cluster, VirtualClock]:
    clock = VirtualClock()
    config = ClusterConfig(http=False, data_dir=tmp_path / "data", manifests=None, **kw)  # type: ignore[arg-type]
    cluster = Cluster(config, clock=clock)
    task = asyncio.create_task(cluster.start())
    await clock.run_until(task.done, timeout=60, step=0.1)
    task.result()
    return cluster, clock


async def test_bootstrap_rbac_and_leaders(tmp_path: Path) -> None:
    cluster, clock = await boot(tmp_path, nodes=0, control_planes=3)
    try:
        admin = cluster.api_client()
        crbs = await admin.list_all("clusterrolebindings")
        names = {o["metadata"]["name"] for o in crbs}
        assert "cluster-admin" in names and "system:kube-scheduler" in names
        await clock.run_until(lambda: any(s.is_leader for s in cluster.schedulers), timeout=30)
        await clock.run_until(lambda: any(c.is_leader for c in cluster.controller_managers), timeout=30)
        assert sum(s.is_leader for s in cluster.schedulers) == 1
        assert sum(c.is_leader for c in cluster.controller_managers) == 1
        lease = await admin.get("leases", "kube-scheduler", "kube-system")
        assert lease["spec"]["holderIdentity"].endswith("_kube-scheduler")
    finally:
        task = asyncio.create_task(cluster.stop())
        await clock.run_until(task.done, timeout=30, step=0.1)
