"""A real API server on a real SQLite revision log and a virtual clock, an admin client, clients
per user (kubelets act as ``system:node:<name>``), and helpers to start a fleet of simulated nodes."""

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
from kconsole.nodes import NodeConfig, NodeFleet, default_node_configs
from kconsole.store.revlog import RevisionLog

Obj = dict[str, Any]


@dataclass
class NodeEnv:
    clock: VirtualClock
    kv: RevisionLog
    api: APIServer
    admin: Client
    clients: dict[str, Client] = field(default_factory=dict)
    fleets: list[NodeFleet] = field(default_factory=list)

    def client_for(self, user: UserInfo | str) -> Client:
        if isinstance(user, str):
            user = UserInfo(user, ("system:nodes",) if user.startswith("system:node:") else ())
        if user.name not in self.clients:
            self.clients[user.name] = Client(self.api, self.api.tokens.issue(user), self.clock)
        return self.clients[user.name]

    async def fleet(self, workers: int = 1, control_planes: int = 0, *, delay_factor: float = 1.0,
                    configs: list[NodeConfig] | None = None,
                    static: Callable[[], dict[str, dict[str, bool]]] | None = None, seed: int = 7) -> NodeFleet:
        fleet = NodeFleet(self.client_for, self.clock, configs or default_node_configs(workers, control_planes),
                          rng=random.Random(seed), delay_factor=delay_factor, static_pod_status=static)
        self.fleets.append(fleet)
        await fleet.start()
        self.api.set_log_source(fleet.logs)
        return fleet

    async def wait(self, predicate: Callable[[], Any], timeout: float = 60.0, step: float = 0.5) -> float:
        return await self.clock.run_until(predicate, timeout, step=step)

    async def pod(self, name: str, namespace: str = "default") -> Obj:
        return await self.admin.get("pods", name, namespace)

    async def events(self, name: str | None = None) -> list[Obj]:
        evs = await self.admin.list_all("events", None)
        evs = [e for e in evs if name is None or e["involvedObject"]["name"] == name]
        return sorted(evs, key=lambda e: (e["firstTimestamp"], e["metadata"]["name"]))


def pod(name: str, *, node: str = "worker-1", image: str = "nginx:1.25", command: list[str] | None = None,
        restart: str = "Always", grace: int | None = None, namespace: str = "default", **container: Any) -> Obj:
    c: Obj = {"name": "web", "image": image, **container}
    if command is not None:
        c["command"] = command
    spec: Obj = {"containers": [c], "restartPolicy": restart, "nodeName": node}
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}, "spec": spec}


@pytest.fixture
async def env(tmp_path: Path) -> AsyncIterator[NodeEnv]:
    clock = VirtualClock()
    kv = await RevisionLog.open(tmp_path / "db.sqlite", clock=clock, synchronous="NORMAL")
    api = APIServer(kv, clock, seed=1)
    await api.start()
    admin = Client(api, api.tokens.issue(UserInfo("admin", ("system:masters",))), clock)
    e = NodeEnv(clock, kv, api, admin)
    try:
        yield e
    finally:
        for fleet in e.fleets:
            await fleet.stop()
        await api.stop()
        await kv.close()
