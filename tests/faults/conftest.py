"""A composed cluster (3 etcd members, replicas, 2 simulated workers) on the virtual clock."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kconsole.cluster import Cluster, ClusterConfig
from kconsole.clock import VirtualClock


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    clock = VirtualClock()
    config = ClusterConfig(http=False, data_dir=tmp_path / "data", manifests=None, nodes=2, control_planes=3,
                           pod_delay_factor=0.0)
    c = Cluster(config, clock=clock)
    task = asyncio.create_task(c.start())
    await clock.run_until(task.done, timeout=60, step=0.1)
    task.result()
    await clock.run_until(lambda: any(s.is_leader for s in c.schedulers)
                          and any(m.is_leader for m in c.controller_managers), timeout=30, step=0.5)
    try:
        yield c
    finally:
        stop = asyncio.create_task(c.stop())
        await clock.run_until(stop.done, timeout=60, step=0.1)
