"""A real cluster (etcd members on SQLite, API server, controllers, scheduler, kubelets) on a virtual
clock and a fixed seed, and helpers to drive the console over it with Textual's Pilot."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from kconsole.cluster import Cluster, ClusterConfig
from kconsole.clock import VirtualClock

T = TypeVar("T")


async def drive(clock: VirtualClock, aw: Awaitable[T], step: float = 0.1, limit: float = 120.0) -> T:
    """Await ``aw`` while moving simulated time forward (Raft ticks, leases) in ``step`` increments."""
    task = asyncio.ensure_future(aw)
    spent = 0.0
    while not task.done():
        if spent > limit:
            task.cancel()
            raise TimeoutError(f"not done within {limit} simulated seconds")
        await clock.advance(step)
        spent += step
    return await task


async def until(clock: VirtualClock, pred: Callable[[], bool], pilot: Any = None, limit: float = 60.0,
                step: float = 0.5) -> float:
    """Advance simulated time until ``pred()`` holds, letting the app process messages in between."""
    spent = 0.0
    while True:
        if pilot is not None:
            await pilot.pause()
            app = pilot.app
            if getattr(app, "ready", False):
                app.render_pending()
        if pred():
            return spent
        if spent >= limit:
            raise TimeoutError(f"condition not met within {limit} simulated seconds")
        await clock.advance(step)
        spent += step


def make_cluster(tmp_path: Path, nodes: int = 2, control_planes: int = 3, seed: int = 1,
                 manifests: Path | None = None, controllers: dict[str, dict[str, Any]] | None = None,
                 ) -> tuple[Cluster, VirtualClock]:
    clock = VirtualClock()
    config = ClusterConfig(nodes=nodes, control_planes=control_planes, seed=seed, http=False,
                           data_dir=tmp_path / "data", manifests=manifests, controllers=controllers or {})
    return Cluster(config, clock=clock), clock
