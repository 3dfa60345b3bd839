"""The cluster ``serve`` and the console run is durable as etcd is: a create is acknowledged only once
its Raft entry was fdatasync'd in a majority of members' WALs, the syncs are group commits, and each
member's SQLite file syncs its commits. An ephemeral cluster says it does not sync."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from kconsole.cluster import Cluster, ClusterConfig
from kconsole.clock import VirtualClock
from kconsole.store.durability import StoreMode
from kconsole.store.raft.log import Entry


def test_served_store_is_synced_unless_ephemeral(tmp_path: Path) -> None:
    assert ClusterConfig().store_mode() == StoreMode(3, synced=True)
    assert ClusterConfig(control_planes=1).store_mode() == StoreMode(1, synced=True)
    assert ClusterConfig(ephemeral=True).store_mode() == StoreMode(3, synced=False)
    assert ClusterConfig().store_mode(virtual_clock=True).durability == "unsynced"
    assert ClusterConfig(store_sync=True).store_mode(virtual_clock=True).durability == "synced"
    config = tmp_path / "c.yaml"
    config.write_text("store-sync: false\n")
    assert ClusterConfig.from_file(config).store_mode().durability == "unsynced"
    assert "survives power loss" in StoreMode().describe()


class SyncLedger:
    """Which Raft entries each member's WAL had synced when: the real writes and fdatasyncs run, and
    what they covered is noted once the sync returned (on the member's thread or the kernel's AIO)."""

    def __init__(self) -> None:
        self.synced: dict[str, list[bytes]] = {}
        self.syncs: dict[str, int] = {}

    def track(self, member: Any) -> None:
        name, storage, syncer = member.name, member.storage, member._syncer
        assert storage.fsync, f"{name}: the served WAL must sync"
        synced = self.synced.setdefault(name, [])
        self.syncs.setdefault(name, 0)
        written: list[bytes] = []
        save_for_sync, save_durably = storage.save_for_sync, storage.save_durably

        def noted_save_for_sync(hard_state: Any, entries: list[Entry]) -> int:
            fd = save_for_sync(hard_state, entries)
            if fd >= 0:
                written.extend(e.data for e in entries)
            return fd  # type: ignore[no-any-return]

        def noted_save_durably(hard_state: Any, entries: list[Entry]) -> None:
            save_durably(hard_state, entries)  # writes, then fdatasync on this thread
            self.syncs[name] += 1
            synced.extend(e.data for e in entries)

        storage.save_for_sync, storage.save_durably = noted_save_for_sync, noted_save_durably
        if syncer is None:
            return
        fdatasync = syncer.fdatasync

        def noted_fdatasync(fd: int) -> asyncio.Future[int]:
            batch = written[:]
            written.clear()
            fut = fdatasync(fd)

            def landed(f: asyncio.Future[int]) -> None:
                if not f.cancelled() and f.exception() is None:
                    self.syncs[name] += 1
                    synced.extend(batch)

            fut.add_done_callback(landed)
            return fut  # type: ignore[no-any-return]

        syncer.fdatasync = noted_fdatasync

    def members_holding(self, needle: bytes) -> int:
        return sum(any(needle in data for data in entries) for entries in self.synced.values())


async def test_a_create_is_acknowledged_after_its_wal_record_is_synced_on_a_majority(tmp_path: Path) -> None:
    clock = VirtualClock()
    config = ClusterConfig(http=False, data_dir=tmp_path / "data", manifests=None, nodes=0, control_planes=3,
                           addons=(), store_sync=True)
    cluster = Cluster(config, clock=clock)
    task = asyncio.ensure_future(cluster.start())
    await clock.run_until(task.done, timeout=60, step=0.1)
    task.result()
    try:
        assert cluster.store_mode == StoreMode(3, synced=True)
        etcd = cluster.etcd
        assert etcd is not None
        ledger = SyncLedger()
        for member in etcd.members:
            ledger.track(member)
            synchronous = await member.machine.log._on_writer(lambda db: db.execute("PRAGMA synchronous").fetchone()[0])
            assert synchronous == 3, f"{member.name}: SQLite must sync its commits (EXTRA), got {synchronous}"
        admin = cluster.api_client()
        short: list[tuple[str, int]] = []
        creates = 48

        async def create(i: int) -> None:
            name = f"durable-{i:03d}"
            await admin.create({"apiVersion": "v1", "kind": "ConfigMap",
                                "metadata": {"name": name, "namespace": "default"}, "data": {"i": str(i)}})
            held = ledger.members_holding(f"/configmaps/default/{name}".encode())
            if held < 2:
                short.append((name, held))

        work = asyncio.ensure_future(asyncio.gather(*(create(i) for i in range(creates))))
        await clock.run_until(work.done, timeout=60, step=0.01)
        work.result()
        assert short == [], f"acknowledged before a majority synced its WAL record: {short}"
        leader = etcd.leader()
        assert leader is not None
        # Group commit: the leader's WAL synced far fewer times than it took creates.
        assert 0 < ledger.syncs[leader.name] < creates, ledger.syncs
        # One at a time, every create waits for a sync of its own.
        before = dict(ledger.syncs)
        one_by_one = asyncio.ensure_future(_in_order(create, range(creates, creates + 5)))
        await clock.run_until(one_by_one.done, timeout=60, step=0.01)
        one_by_one.result()
        assert short == []
        assert all(ledger.syncs[name] - before[name] >= 5 for name in before), (before, ledger.syncs)
    finally:
        stop = asyncio.ensure_future(cluster.stop())
        await clock.run_until(stop.done, timeout=60, step=0.1)


async def _in_order(create: Any, numbers: range) -> None:
    for i in numbers:
        await create(i)
