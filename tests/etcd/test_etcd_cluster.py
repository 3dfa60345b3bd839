"""Three real members (RevisionLog files + WAL files in tmp_path) on the virtual clock."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from kconsole.clock import VirtualClock
from kconsole.store.facade import EtcdCluster
from kconsole.store.kv import Compare, Delete, Get, NoSpaceError, Put, UnavailableError, prefix_end
from kconsole.store.members import BACKEND_COMMIT_INTERVAL, LEADER_COMMIT_INTERVAL, RaftConfig
from kconsole.store.raft.wal import FileStorage


async def run(clock: VirtualClock, aw: Any, timeout: float = 30.0, step: float = 0.05) -> Any:
    """Drive ``aw`` to completion on virtual time; returns its result (or raises its error)."""
    task = asyncio.ensure_future(aw)
    await clock.run_until(task.done, timeout, step=step)
    return task.result()


async def open_cluster(path: Path, clock: VirtualClock, **kw: Any) -> EtcdCluster:
    cluster = await EtcdCluster.open(path, clock=clock, members=3, seed=3, **kw)
    await clock.run_until(lambda: cluster.leader() is not None, 10, step=0.1)
    return cluster


async def test_writes_replicate_and_reads_agree(tmp_path: Path) -> None:
    clock = VirtualClock()
    cluster = await open_cluster(tmp_path, clock)
    for i in range(5):
        res = await run(clock, cluster.txn([], [Put(f"/registry/pods/default/p{i}", b"v%d" % i)]))
        assert res.revision == i + 1
    res = await run(clock, cluster.txn([Compare("/registry/pods/default/p0", "mod", "=", 1)],
                                       [Put("/registry/pods/default/p0", b"new")], [Get("/registry/pods/default/p0")]))
    assert res.succeeded and res.revision == 6
    got = await run(clock, cluster.range("/registry/pods/", prefix_end("/registry/pods/")))
    assert [kv.key for kv in got.kvs] == [f"/registry/pods/default/p{i}" for i in range(5)]
    assert got.revision == 6
    await clock.run_until(lambda: all(m.machine.revision == 6 for m in cluster.members), 5)
    for m in cluster.members:
        kv = (await m.kv.range("/registry/pods/default/p0")).kvs[0]
        assert (kv.value, kv.mod_revision, kv.version) == (b"new", 6, 2)
    statuses = await cluster.member_status()
    assert sum(s.is_leader for s in statuses) == 1
    assert {s.raft_applied_index for s in statuses} == {statuses[0].raft_index}
    assert cluster.quorum().alive == 3 and cluster.quorum().failures_tolerated == 1
    await cluster.close()


async def test_leader_failover_and_catch_up(tmp_path: Path) -> None:
    clock = VirtualClock()
    cluster = await open_cluster(tmp_path, clock)
    await run(clock, cluster.txn([], [Put("/a", b"1")]))
    events: list[int] = []

    async def watch() -> None:
        async for resp in cluster.watch("/", prefix_end("/"), start_revision=1):
            events.extend(e.kv.mod_revision for e in resp.events)

    watcher = asyncio.ensure_future(watch())
    old = await cluster.kill_leader()
    assert old is not None
    start = clock.now()
    res = await run(clock, cluster.txn([], [Put("/b", b"2")]), step=0.01)
    failover = clock.now() - start
    assert res.revision == 2
    assert failover <= 2.5, f"failover took {failover:.2f} simulated s"
    new = cluster.leader()
    assert new is not None and new is not old
    for i in range(10):
        await run(clock, cluster.txn([], [Put(f"/c{i}", b"x")]))
    behind = await old.status()
    assert not behind.running
    await old.start()
    await clock.run_until(lambda: old.machine.revision == 12, 10)
    assert (await old.kv.range("/c9")).kvs[0].mod_revision == 12
    await clock.run_until(lambda: len(events) == 12, 5)
    assert events == list(range(1, 13))
    watcher.cancel()
    await cluster.close()


async def test_no_quorum_times_out_then_nothing_is_lost(tmp_path: Path) -> None:
    clock = VirtualClock()
    cluster = await open_cluster(tmp_path, clock)
    await run(clock, cluster.txn([], [Put("/kept", b"yes")]))
    followers = [m for m in cluster.members if not m.is_leader]
    for m in followers:
        await m.stop()
    start = clock.now()
    with pytest.raises(UnavailableError) as err:
        await run(clock, cluster.txn([], [Put("/lost", b"no")]), step=0.25)
    assert str(err.value) in ("etcdserver: request timed out", "etcdserver: no leader")
    assert 4.5 <= clock.now() - start <= 6.0
    with pytest.raises(UnavailableError):
        await run(clock, cluster.range("/kept"), step=0.25)
    served = await run(clock, cluster.range("/kept", serializable=True))
    assert served.kvs[0].value == b"yes"
    assert not cluster.quorum().ok
    for m in followers:
        await m.start()
    got = await run(clock, cluster.range("/kept"), timeout=10)
    assert got.kvs[0].value == b"yes"
    await cluster.close()


async def test_restart_from_disk_keeps_everything(tmp_path: Path) -> None:
    clock = VirtualClock()
    cluster = await open_cluster(tmp_path, clock)
    for i in range(20):
        await run(clock, cluster.txn([], [Put(f"/k{i % 7}", b"%d" % i)]))
    await run(clock, cluster.txn([], [Delete("/k0")]))
    await cluster.close()
    again = await open_cluster(tmp_path, clock)
    assert again.revision == 21
    got = await run(clock, again.range("/", prefix_end("/")))
    assert len(got.kvs) == 6 and got.revision == 21
    res = await run(clock, again.txn([], [Put("/k1", b"after")]))
    assert res.revision == 22
    await again.close()


async def test_far_behind_follower_gets_a_snapshot(tmp_path: Path) -> None:
    clock = VirtualClock()
    config = RaftConfig(snapshot_catchup=3, snapshot_count=3)
    cluster = await open_cluster(tmp_path, clock, config=config)
    laggard = next(m for m in cluster.members if not m.is_leader)
    await laggard.stop()
    for i in range(30):
        await run(clock, cluster.txn([], [Put(f"/s{i}", b"v")]))
    leader = cluster.leader()
    assert leader is not None and leader.node is not None and leader.node.log.snap_index > 5
    await laggard.start()
    await clock.run_until(lambda: laggard.machine.revision == 30, 10)
    assert laggard.node is not None and laggard.node.log.snap_index >= 5
    got = await laggard.kv.range("/s", "/t")
    assert got.count == 30
    await cluster.close()


async def test_crash_between_commit_and_applied_record_is_not_applied_twice(tmp_path: Path) -> None:
    """The store committed a batch but the WAL's 'applied' record lags: recovery must skip it."""
    clock = VirtualClock()
    cluster = await EtcdCluster.open(tmp_path, clock=clock, members=1, seed=1)
    await clock.run_until(lambda: cluster.leader() is not None, 5)
    m = cluster.members[0]
    await run(clock, cluster.txn([], [Put("/x", b"1")]))
    base_index, base_rev = m.applied, m.machine.revision
    # One entry holding several transactions, some of whose compares fail (no revision for them).
    batch = [
        cluster.txn([Compare("/x", "mod", "=", 1)], [Put("/x", b"2")], [Get("/x")]),
        cluster.txn([Compare("/x", "mod", "=", 1)], [Put("/x", b"3")], [Get("/x")]),
        cluster.txn([], [Put("/y", b"1")]),
        cluster.txn([], [Delete("/missing")]),
    ]
    results = await run(clock, asyncio.gather(*batch))
    assert [r.succeeded for r in results] == [True, False, True, True]
    final_index, final_rev = m.applied, m.machine.revision
    assert final_rev == base_rev + 2
    await cluster.close()
    wal = FileStorage(tmp_path / "etcd-0" / "wal")
    wal.load()
    wal.save_applied(base_index, base_rev)  # the record the crash "lost"
    wal.close()
    again = await EtcdCluster.open(tmp_path, clock=clock, members=1, seed=1)
    m = again.members[0]
    assert m.applied == final_index and m.machine.revision == final_rev
    res = await run(clock, again.txn([], [Put("/z", b"1")]), timeout=5)
    assert res.revision == final_rev + 1
    assert (await m.kv.range("/x")).kvs[0].value == b"2"
    await again.close()


async def test_nospace_alarm_is_replicated_and_disarmed(tmp_path: Path) -> None:
    clock = VirtualClock()
    cluster = await open_cluster(tmp_path, clock)
    await run(clock, cluster.txn([], [Put("/q", b"1")]))
    await run(clock, cluster.exhaust_quota())
    with pytest.raises(NoSpaceError):
        await run(clock, cluster.txn([], [Put("/q2", b"2")]))
    res = await run(clock, cluster.txn([], [Delete("/q")]))
    assert res.revision == 2
    # The followers learn the alarm by applying it, which may wait for their SQLite file's commit
    # on its thread (real time): within a tick of simulated time they hold it too.
    leader = cluster.leader()
    assert leader is not None
    await clock.run_until(lambda: all(m.applied >= leader.applied for m in cluster.members), 0.2, step=0.01)
    statuses = await run(clock, cluster.member_status())
    assert all(any("NOSPACE" in e for e in s.errors) for s in statuses)
    assert (await run(clock, cluster.status())).alarms == ["NOSPACE"]
    await run(clock, cluster.restore_quota())
    assert (await run(clock, cluster.txn([], [Put("/q3", b"3")]))).revision == 3
    await cluster.close()


async def test_move_leader_and_partitioned_leader(tmp_path: Path) -> None:
    clock = VirtualClock()
    cluster = await open_cluster(tmp_path, clock)
    await run(clock, cluster.txn([], [Put("/m", b"0")]))
    target = next(m for m in cluster.members if not m.is_leader)
    moved = await run(clock, cluster.move_leader(target.name))
    assert moved is target and cluster.leader() is target
    cluster.partition([target.name])
    # The cut-off leader still believes it leads: a write sent to it times out, as in etcd...
    start = clock.now()
    with pytest.raises(UnavailableError, match="request timed out"):
        await run(clock, cluster.txn([], [Put("/m", b"lost")]), step=0.1)
    assert 5.0 <= clock.now() - start <= 5.5
    # ...while the majority elected a new leader that takes the next write.
    assert cluster.leader() is not target and not target.is_leader
    res = await run(clock, cluster.txn([], [Put("/m", b"1")]))
    assert res.revision == 2
    assert target.machine.revision == 1  # the cut-off old leader never saw it
    cluster.heal()
    await clock.run_until(lambda: target.machine.revision == 2 and not target.is_leader, 10)
    await cluster.close()


async def test_slow_disk_shows_in_commit_latency(tmp_path: Path) -> None:
    clock = VirtualClock()
    cluster = await open_cluster(tmp_path, clock)
    leader = cluster.leader()
    assert leader is not None
    leader.slow_disk(0.05)
    start = clock.now()
    await run(clock, cluster.txn([], [Put("/d", b"1")]), step=0.01)
    assert clock.now() - start >= 0.05 - 1e-6  # acknowledged as the slow write lands (float clock)
    assert (await leader.status()).last_commit_ms >= 50
    with pytest.raises(ValueError):
        leader.slow_disk(-1)
    await cluster.close()


async def test_followers_apply_beside_their_next_write_or_within_a_tick(tmp_path: Path) -> None:
    """A follower may hold a commit it learned (its CPU goes to the leader's answers first), but
    never past its next WAL write nor past one tick when no write comes."""
    clock = VirtualClock()
    cluster = await open_cluster(tmp_path, clock)
    followers = [m for m in cluster.members if not m.is_leader]
    await run(clock, cluster.txn([], [Put("/f/0", b"x")]), step=0.001)
    start = clock.now()
    await clock.run_until(lambda: all(m.machine.revision == 1 for m in followers), 1, step=0.001)
    assert clock.now() - start <= RaftConfig().tick + 0.002  # the next tick, measured in 1 ms steps
    for i in range(1, 20):
        await run(clock, cluster.txn([], [Put(f"/f/{i}", b"x")]), step=0.001)
        # The write of entry i carried (at least) the commit of entry i-1: applied beside it. The
        # apply may still wait for the follower's SQLite commit on its thread (real time, which
        # simulated time waits for), but not for a tick: a tenth of one is enough.
        await clock.run_until(lambda: all(m.machine.revision >= i for m in followers), RaftConfig().tick / 10,
                              step=0.001)
    await clock.run_until(lambda: all(m.machine.revision == 20 for m in followers), 1, step=0.001)
    for m in followers:
        assert (await m.kv.range("/f/19")).kvs[0].mod_revision == 20
    await cluster.close()


async def test_a_reopened_member_database_lists_old_keys_beside_replayed_ones(tmp_path: Path) -> None:
    """A member replays committed entries into its reopened revision log before anyone reads it:
    listing afterwards must show the keys the file already held as well as the replayed ones."""
    from kconsole.store.members import RevlogMachine
    from kconsole.store.raft import codec

    clock = VirtualClock()
    machine = await RevlogMachine.open(tmp_path / "db.sqlite", clock=clock)
    await machine.apply([codec.txn_command([], [Put(f"/registry/d/old-{i}", b"v")], []) for i in range(5)], False)
    await machine.close()
    machine = await RevlogMachine.open(tmp_path / "db.sqlite", clock=clock)
    await machine.apply([codec.txn_command([], [Put(f"/registry/d/new-{i}", b"v")], []) for i in range(3)], False)
    listed = await machine.kv.range("/registry/d/", prefix_end("/registry/d/"))
    assert [kv.key for kv in listed.kvs] == [f"/registry/d/new-{i}" for i in range(3)] + [
        f"/registry/d/old-{i}" for i in range(5)]
    assert listed.revision == 8
    await machine.close()


async def test_the_leaders_file_follows_its_writes_sooner_than_a_followers(tmp_path: Path) -> None:
    """The leader commits its revision log every LEADER_COMMIT_INTERVAL (writers wait behind its
    commits), followers every BACKEND_COMMIT_INTERVAL; leadership moves the pace with it."""
    clock = VirtualClock()
    cluster = await open_cluster(tmp_path, clock)

    async def lag(member: Any, key: str) -> float:
        await clock.advance(BACKEND_COMMIT_INTERVAL + 0.01)  # nothing held from before: a fresh interval
        res = await run(clock, cluster.txn([], [Put(key, b"x")]), step=0.001)
        await clock.run_until(lambda: member.machine.revision >= res.revision, 1, step=0.001)
        start = clock.now()
        await clock.run_until(lambda: member.machine.flushed_revision >= res.revision, 1, step=0.001)
        return clock.now() - start

    leader = cluster.leader()
    follower = next(m for m in cluster.members if m is not leader)
    assert await lag(leader, "/pace/a") <= LEADER_COMMIT_INTERVAL + 0.002
    assert LEADER_COMMIT_INTERVAL + 0.01 < await lag(follower, "/pace/b") <= BACKEND_COMMIT_INTERVAL + 0.002
    await run(clock, cluster.move_leader(follower.name))
    await clock.run_until(lambda: cluster.leader() is follower, 5, step=0.01)
    assert await lag(follower, "/pace/c") <= LEADER_COMMIT_INTERVAL + 0.002
    assert LEADER_COMMIT_INTERVAL + 0.01 < await lag(leader, "/pace/d") <= BACKEND_COMMIT_INTERVAL + 0.002
    await cluster.close()


async def test_a_watch_is_settled_only_when_its_reader_holds_everything_up_to_the_revision(tmp_path: Path) -> None:
    """What the API server's watch cache asks before it claims the store's revision: never while an
    event is still between the leader's log and the reader, nor while the watch follows no leader."""
    clock = VirtualClock()
    cluster = await open_cluster(tmp_path, clock)
    stream = cluster.watch("/", prefix_end("/"), start_revision=1)
    seen: list[int] = []
    settled_when_read: list[bool] = []

    async def read() -> None:
        async for resp in stream:
            seen.extend(e.kv.mod_revision for e in resp.events)
            settled_when_read.append(stream.settled())

    reader = asyncio.ensure_future(read())
    await run(clock, cluster.txn([], [Put("/a", b"1")]))
    await clock.run_until(lambda: seen == [1] and stream.settled(), 5)
    res = await run(clock, cluster.txn([], [Put("/b", b"2")]))
    if seen != [1, 2]:  # the writer has its answer while the event is still on its way
        assert not stream.settled()
    await clock.run_until(lambda: seen == [1, 2], 5)
    assert stream.settled() and cluster.revision == res.revision
    old = await cluster.kill_leader()
    assert old is not None and not stream.settled()  # following no leader: nothing is vouched for
    await run(clock, cluster.txn([], [Put("/c", b"3")]), step=0.01)
    await clock.run_until(lambda: seen == [1, 2, 3] and stream.settled(), 10)
    assert all(settled_when_read)  # the reader, at each response, held everything up to it
    reader.cancel()
    await clock.run_until(reader.done, 5)
    await cluster.close()
