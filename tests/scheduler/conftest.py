"""A real API server on a real SQLite revision log and a virtual clock, with a scheduler acting as
``system:kube-scheduler`` (RBAC applies), and helpers to build nodes and pods as plain objects."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from kconsole.api.server import APIServer
from kconsole.api.types import UserInfo
from kconsole.client import Client
from kconsole.clock import VirtualClock
from kconsole.scheduler.config import SchedulerConfig
from kconsole.scheduler.scheduler import Scheduler
from kconsole.store.revlog import RevisionLog


def node(name: str, cpu: str = "4", memory: str = "8Gi", pods: int = 110, labels: dict[str, str] | None = None,
         taints: list[dict[str, str]] | None = None, unschedulable: bool = False) -> dict[str, Any]:
    alloc = {"cpu": cpu, "memory": memory, "pods": str(pods)}
    obj: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": {},
        "status": {"allocatable": alloc, "capacity": alloc,
                   "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]},
    }
    if taints:
        obj["spec"]["taints"] = taints
    if unschedulable:
        obj["spec"]["unschedulable"] = True
    return obj


def pod(name: str, cpu: str | None = "100m", memory: str | None = None, labels: dict[str, str] | None = None,
        namespace: str = "default", **spec: Any) -> dict[str, Any]:
    requests = {}
    if cpu:
        requests["cpu"] = cpu
    if memory:
        requests["memory"] = memory
    container: dict[str, Any] = {"name": "app", "image": "nginx:1.27"}
    if requests:
        container["resources"] = {"requests": requests}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
            "spec": {"containers": [container], "terminationGracePeriodSeconds": 0, **spec}}


@dataclass
class Env:
    clock: VirtualClock
    kv: RevisionLog
    api: APIServer
    admin: Client
    sched_client: Client
    schedulers: list[Scheduler] = field(default_factory=list)

    async def scheduler(self, seed: int = 1, config: SchedulerConfig | None = None) -> Scheduler:
        s = Scheduler(self.sched_client, self.clock, rng=random.Random(seed), config=config, identity="test")
        await s.start()
        self.schedulers.append(s)
        return s

    async def get_pod(self, name: str, namespace: str = "default") -> dict[str, Any]:
        return await self.admin.get("pods", name, namespace)

    async def node_of(self, name: str, namespace: str = "default") -> str:
        return (await self.get_pod(name, namespace))["spec"].get("nodeName", "")

    async def wait(self, predicate: Callable[[], Any], timeout: float = 30.0) -> float:
        return await self.clock.run_until(predicate, timeout, step=0.5)

    async def wait_bound(self, *names: str, timeout: float = 30.0) -> dict[str, str]:
        async def done() -> bool:
            return all([await self.node_of(n) for n in names])

        await self.clock.run_until(done, timeout, step=0.5)
        return {n: await self.node_of(n) for n in names}

    async def events(self, name: str, reason: str) -> list[dict[str, Any]]:
        evs = await self.admin.list_all("events", "default")
        return [e for e in evs if e["involvedObject"]["name"] == name and e["reason"] == reason]


@pytest.fixture
async def env(tmp_path: Path) -> AsyncIterator[Env]:
    clock = VirtualClock()
    kv = await RevisionLog.open(tmp_path / "db.sqlite", clock=clock, synchronous="NORMAL")
    api = APIServer(kv, clock, seed=1)
    await api.start()
    admin = Client(api, api.tokens.issue(UserInfo("admin", ("system:masters",))), clock)
    sched = Client(api, api.tokens.issue(UserInfo("system:kube-scheduler")), clock)
    e = Env(clock, kv, api, admin, sched)
    try:
        yield e
    finally:
        for s in e.schedulers:
            await s.stop()
        await api.stop()
        await kv.close()
