"""A cluster of real members over the simulated network and virtual clock, with in-memory stores.

Shared by the property tests; each member's MemKV and MemoryStorage play its disk, so they
survive the member's crash and restart.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from etcd_memkv import MemKV, MemMachine

from kconsole.clock import VirtualClock
from kconsole.store.facade import EtcdCluster, member_names
from kconsole.store.members import Member, RaftConfig
from kconsole.store.network import Network
from kconsole.store.raft.core import Role
from kconsole.store.raft.wal import MemoryStorage


@dataclass
class Sim:
    clock: VirtualClock
    cluster: EtcdCluster
    disks: dict[str, MemKV]
    leaders_by_term: dict[int, set[str]] = field(default_factory=dict)

    @property
    def members(self) -> list[Member]:
        return self.cluster.members

    def observe(self) -> None:
        for m in self.members:
            if m.running and m.node is not None and m.node.role is Role.LEADER:
                self.leaders_by_term.setdefault(m.node.term, set()).add(m.name)


def make_sim(n: int, seed: int, *, delay: float = 0.002, jitter: float = 0.004,
             config: RaftConfig | None = None) -> Sim:
    clock = VirtualClock()
    disks: dict[str, MemKV] = {}

    def machine(name: str):  # type: ignore[no-untyped-def]
        disks[name] = MemKV()

        async def open_machine() -> MemMachine:
            return MemMachine(disks[name])

        return open_machine

    net = Network(clock, random.Random(seed * 7919 + 1), delay=delay, jitter=jitter)
    cluster = EtcdCluster.build(
        member_names(n), clock=clock, seed=seed, storage=lambda name: MemoryStorage(), machine=machine,
        config=config or RaftConfig(snapshot_catchup=6, snapshot_count=6), network=net,
    )
    sim = Sim(clock, cluster, disks)
    for m in cluster.members:
        inner = m.on_change

        def hook(inner=inner) -> None:  # type: ignore[no-untyped-def]
            sim.observe()
            inner()

        m.on_change = hook
    return sim
