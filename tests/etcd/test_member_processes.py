"""Three etcd members in their own processes (``--member-processes``) pass the store's contract:
writes, reads, watches, a killed leader (a real SIGKILL) with no acknowledged write lost, restarts
that recover from the members' files, partitions. Each test runs on in-process members too, on the
same real clock, so both kinds are held to the same outcomes. Members in processes need the real
clock: the waits below are wall-clock bounds on conditions, never on how fast anything was."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from kconsole.clock import RealClock
from kconsole.store.durability import StoreMode, open_store
from kconsole.store.facade import EtcdCluster
from kconsole.store.kv import Compare, Get, NoSpaceError, Put, StoreError, prefix_end
from kconsole.store.members import RaftConfig

WAIT = 60.0  # wall seconds a condition may take on a loaded machine before the test fails


async def until(cond: Callable[[], bool | Awaitable[bool]], what: str, timeout: float = WAIT) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        got = cond()
        if not isinstance(got, bool):
            got = await got
        if got:
            return
        if loop.time() > deadline:
            raise AssertionError(f"not within {timeout:g} s: {what}")
        await asyncio.sleep(0.02)


async def open_members(path: Path, processes: bool) -> EtcdCluster:
    cluster = await open_store(path, clock=RealClock(), mode=StoreMode(3, synced=True, processes=processes), seed=3)
    await until(lambda: cluster.leader() is not None, "a leader is elected")
    return cluster


async def write(cluster: EtcdCluster, key: str, value: bytes) -> int:
    """Put, retrying what the store refused while it had no leader (as the API server's client does)."""
    while True:
        try:
            return (await cluster.txn([], [Put(key, value)])).revision
        except StoreError:
            await asyncio.sleep(0.02)


@pytest.fixture(params=["processes", "in-process"])
async def members(request: Any, tmp_path: Path) -> Any:
    cluster = await open_members(tmp_path, request.param == "processes")
    yield cluster
    await cluster.close()


async def test_processes_mode_runs_each_member_in_its_own_process(tmp_path: Path) -> None:
    cluster = await open_members(tmp_path, True)
    try:
        pids = {m.process.pid for m in cluster.members}  # type: ignore[attr-defined]
        assert len(pids) == 3 and os.getpid() not in pids
        for m in cluster.members:
            assert (tmp_path / m.name / "db.sqlite").exists() and (tmp_path / m.name / "wal").is_dir()
    finally:
        await cluster.close()
    assert all(m.process.returncode == 0 for m in cluster.members)  # type: ignore[attr-defined]


async def test_writes_replicate_and_reads_agree(members: EtcdCluster) -> None:
    cluster = members
    for i in range(5):
        assert await write(cluster, f"/registry/pods/default/p{i}", b"v%d" % i) == i + 1
    res = await cluster.txn([Compare("/registry/pods/default/p0", "mod", "=", 1)],
                            [Put("/registry/pods/default/p0", b"new")], [Get("/registry/pods/default/p0")])
    assert res.succeeded and res.revision == 6
    lost = await cluster.txn([Compare("/registry/pods/default/p0", "mod", "=", 1)],
                             [Put("/registry/pods/default/p0", b"stale")], [Get("/registry/pods/default/p0")])
    assert not lost.succeeded and lost.responses[0].kvs[0].value == b"new"  # type: ignore[union-attr]
    got = await cluster.range("/registry/pods/", prefix_end("/registry/pods/"))
    assert [kv.key for kv in got.kvs] == [f"/registry/pods/default/p{i}" for i in range(5)] and got.revision == 6
    assert (await cluster.range("/registry/pods/", prefix_end("/registry/pods/"), count_only=True)).count == 5

    async def all_applied() -> bool:
        return all([(await m.status()).revision == 6 for m in cluster.members])

    await until(all_applied, "every member applied revision 6")
    for m in cluster.members:
        kv = (await m.kv.range("/registry/pods/default/p0")).kvs[0]
        assert (kv.value, kv.mod_revision, kv.version) == (b"new", 6, 2)
    statuses = await cluster.member_status()
    assert sum(s.is_leader for s in statuses) == 1
    assert cluster.quorum().alive == 3 and (await cluster.status()).revision == 6


async def test_kill_leader_loses_no_acknowledged_write(members: EtcdCluster) -> None:
    cluster = members
    acknowledged: dict[str, bytes] = {}
    stop = asyncio.Event()

    async def writer(w: int) -> None:
        i = 0
        while not stop.is_set():
            key, value = f"/registry/configmaps/default/w{w}-{i}", b"%d:%d" % (w, i)
            try:
                await cluster.txn([Compare(key, "mod", "=", 0)], [Put(key, value)], [Get(key)])
            except StoreError:
                await asyncio.sleep(0.01)
                continue  # not acknowledged: it may or may not be there, and it is not counted
            acknowledged[key] = value
            i += 1

    writers = [asyncio.ensure_future(writer(w)) for w in range(16)]
    await until(lambda: len(acknowledged) >= 200, "writes are acknowledged before the crash")
    old = await cluster.kill_leader()
    assert old is not None and not old.running
    if hasattr(old, "process"):
        assert old.process.returncode == -9  # type: ignore[attr-defined]  # a real SIGKILL
    before = len(acknowledged)
    await until(lambda: len(acknowledged) >= before + 200, "writes are acknowledged by the next leader")
    stop.set()
    await asyncio.gather(*writers)
    new = cluster.leader()
    assert new is not None and new is not old
    got = await cluster.range("/registry/configmaps/", prefix_end("/registry/configmaps/"))
    held = {kv.key: kv.value for kv in got.kvs}
    assert {k: held.get(k) for k in acknowledged} == acknowledged
    await old.start()
    revision = got.revision

    async def caught_up() -> bool:
        return (await old.status()).revision >= revision

    await until(caught_up, "the restarted member replays its files and catches up")
    mine = await old.kv.range("/registry/configmaps/", prefix_end("/registry/configmaps/"), revision=revision)
    assert {kv.key: kv.value for kv in mine.kvs} == held


async def test_watch_sees_every_revision_once_across_a_failover(members: EtcdCluster) -> None:
    cluster = members
    await write(cluster, "/registry/a", b"1")
    seen: list[int] = []

    async def watch() -> None:
        async for resp in cluster.watch("/registry/", prefix_end("/registry/"), start_revision=1):
            seen.extend(e.kv.mod_revision for e in resp.events)

    watcher = asyncio.ensure_future(watch())
    for i in range(5):
        await write(cluster, f"/registry/b{i}", b"x")
    old = await cluster.kill_leader()
    assert old is not None
    for i in range(5):
        await write(cluster, f"/registry/c{i}", b"y")
    await until(lambda: len(seen) >= 11, "the watch follows the new leader")
    watcher.cancel()
    assert seen == list(range(1, 12))
    await old.start()


async def test_restart_recovers_from_the_members_files(tmp_path: Path) -> None:
    for processes in (True, False):
        folder = tmp_path / ("processes" if processes else "in-process")
        cluster = await open_members(folder, processes)
        for i in range(20):
            await write(cluster, f"/registry/k{i}", b"%d" % i)
        for m in cluster.members:  # every member crashes (SIGKILL in processes) and comes back
            await m.stop()
        for m in cluster.members:
            await m.start()
        await until(lambda: cluster.leader() is not None, "a leader after the crash")
        assert (await cluster.range("/registry/k19")).kvs[0].value == b"19"
        await write(cluster, "/registry/after", b"x")
        await cluster.close()
        cluster = await open_members(folder, processes)  # and a clean reopen of the folder
        got = await cluster.range("/registry/", prefix_end("/registry/"))
        assert len(got.kvs) == 21 and got.revision == 21
        await cluster.close()


async def test_a_cut_off_leader_is_replaced_and_catches_up_after_heal(members: EtcdCluster) -> None:
    cluster = members
    await write(cluster, "/registry/before", b"1")
    old = cluster.leader()
    assert old is not None
    cluster.partition({old.name})
    assert cluster.quorum().ok  # two of three on the majority side

    def replaced() -> bool:
        leader = cluster.leader()
        return leader is not None and leader is not old

    await until(replaced, "the majority elects another leader")
    revision = await write(cluster, "/registry/during", b"2")
    cluster.heal()

    async def caught_up() -> bool:
        st = await old.status()
        return st.revision >= revision and not st.is_leader

    await until(caught_up, "the old leader rejoins as a follower and catches up")
    assert (await old.kv.range("/registry/during")).kvs[0].value == b"2"


async def test_a_paused_member_answers_again_once_resumed(members: EtcdCluster) -> None:
    cluster = members
    follower = next(m for m in cluster.members if not m.is_leader)
    follower.pause()
    assert follower.paused
    revision = await write(cluster, "/registry/while-paused", b"1")
    follower.resume()

    async def caught_up() -> bool:
        return (await follower.status()).revision >= revision

    await until(caught_up, "the resumed member applies what it missed")
    follower.slow_disk(0.05)
    assert (await follower.status()).slow_disk_s == 0.05
    follower.slow_disk(0)


async def test_history_reads_are_served_by_the_leader(members: EtcdCluster) -> None:
    cluster = members
    for i in range(3):
        await write(cluster, f"/registry/h/k{i}", b"%d" % i)
    await write(cluster, "/registry/h/k0", b"again")
    await until(lambda: cluster.history_bounds()[1] == 4 and cluster.time_of(4) > 0,
                "the leader's time marks are known here")
    oldest, current, oldest_time, current_time = cluster.history_bounds()
    assert (oldest, current) == (1, 4) and 0 < oldest_time <= current_time
    assert cluster.revision_at(current_time) == 4 and cluster.revision_at(oldest_time - 1) == 0
    got = await cluster.history_range("/registry/h/", prefix_end("/registry/h/"), 2)
    assert [(kv.key, kv.value) for kv in got.kvs] == [("/registry/h/k0", b"0"), ("/registry/h/k1", b"1")]
    changes = await cluster.history_changes("/registry/h/", prefix_end("/registry/h/"), 0, 4)
    assert [(e.kv.mod_revision, e.prev_kv.value if e.prev_kv else None) for e in changes] == \
        [(1, None), (2, None), (3, None), (4, b"0")]


async def test_a_far_behind_member_is_sent_a_snapshot(tmp_path: Path) -> None:
    for processes in (True, False):
        folder = tmp_path / ("processes" if processes else "in-process")
        cluster = await open_store(folder, clock=RealClock(), seed=3,
                                   mode=StoreMode(3, synced=True, processes=processes),
                                   config=RaftConfig(snapshot_catchup=5, snapshot_count=10))
        try:
            await until(lambda: cluster.leader() is not None, "a leader is elected")
            behind = next(m for m in cluster.members if not m.is_leader)
            await behind.stop()
            for i in range(150):  # one entry each: the leader's log is compacted past the stopped member
                revision = await write(cluster, f"/registry/s/k{i}", b"%d" % i)
            await behind.start()

            async def caught_up() -> bool:
                return (await behind.status()).revision >= revision

            await until(caught_up, "the member installs the leader's snapshot and catches up")
            assert (await behind.kv.range("/registry/s/k149")).kvs[0].value == b"149"
        finally:
            await cluster.close()


async def test_the_nospace_alarm_reaches_every_member_and_is_disarmed(members: EtcdCluster) -> None:
    cluster = members
    await write(cluster, "/registry/q/before", b"1")
    quota = cluster.quota_bytes
    await cluster.exhaust_quota()
    with pytest.raises(NoSpaceError):
        await cluster.txn([], [Put("/registry/q/refused", b"x" * 100)])

    async def alarmed() -> bool:
        return all(["alarm:NOSPACE" in " ".join((await m.status()).errors) for m in cluster.members])

    await until(alarmed, "every member holds the replicated alarm")
    await cluster.restore_quota(quota)
    assert await write(cluster, "/registry/q/after", b"2") > 0


async def test_a_member_process_killed_from_outside_is_started_again(tmp_path: Path) -> None:
    import signal

    from kconsole.store import remote

    cluster = await open_store(tmp_path, clock=RealClock(speed=20), seed=3,
                               mode=StoreMode(3, synced=True, processes=True))
    try:
        await until(lambda: cluster.leader() is not None, "a leader is elected")
        follower = next(m for m in cluster.members if not m.is_leader)
        pid = follower.process.pid  # type: ignore[attr-defined]
        os.kill(pid, signal.SIGKILL)  # not a fault: as an OOM kill or an operator would
        await until(lambda: not follower.running, "the member counts as stopped")
        revision = await write(cluster, "/registry/while-down", b"1")
        # Started again after the back-off (simulated seconds; the clock runs 20x here).
        await until(lambda: follower.running and follower.process.pid != pid,  # type: ignore[attr-defined]
                    f"restarted after {remote.RESTART_BACKOFF:g} simulated s")
        assert follower.restarts == 1

        async def caught_up() -> bool:
            return (await follower.status()).revision >= revision

        await until(caught_up, "the restarted process replays its files and catches up")
        fault_stopped = next(m for m in cluster.members if not m.is_leader)
        await fault_stopped.stop()  # a fault's stop stays stopped: nothing is due to start it
        assert not fault_stopped.running and not fault_stopped.restart_scheduled  # type: ignore[attr-defined]
    finally:
        await cluster.close()
