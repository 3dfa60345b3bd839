"""The fsync'd Raft WAL: entries written on a worker thread while the event loop records applied
positions, and a 3-member cluster with ``fsync=True`` that loses no acknowledged write to a crash."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from kconsole.clock import VirtualClock
from kconsole.store.facade import EtcdCluster
from kconsole.store.kv import Put, StoreError, prefix_end
from kconsole.store.raft.core import HardState
from kconsole.store.raft.log import Entry
from kconsole.store.raft.wal import ROTATES, FileStorage


async def test_thread_writes_and_loop_records_interleave_across_segments(tmp_path: Path) -> None:
    storage = FileStorage(tmp_path / "wal", fsync=True, segment_bytes=4096)
    storage.load()
    payload = b"v" * 700

    async def entries() -> None:
        for i in range(1, 61):
            await asyncio.to_thread(storage.save_durably, HardState(1, 1, i - 1), [Entry(i, 1, payload + b"%d" % i)])

    async def applied() -> None:
        for i in range(1, 200):
            storage.save_applied(i // 4, i, 0)
            await asyncio.sleep(0)

    await asyncio.gather(entries(), applied())
    storage.close()
    assert storage.save_durably(HardState(1, 1, 60), [Entry(61, 1, b"late")]) is None  # closed: nothing written

    state = FileStorage(tmp_path / "wal", fsync=True, segment_bytes=4096).load()
    assert [e.index for e in state.entries] == list(range(1, 61))
    assert all(e.data == payload + b"%d" % e.index for e in state.entries)
    assert state.hard_state.commit == 59
    assert len(list((tmp_path / "wal").glob("*.wal"))) > 3  # the writes really crossed segment rotations


async def run(clock: VirtualClock, aw: Any, timeout: float = 30.0) -> Any:
    task = asyncio.ensure_future(aw)
    await clock.run_until(task.done, timeout, step=0.05)
    return task.result()


async def test_fsync_cluster_keeps_every_acknowledged_write_through_a_leader_crash(tmp_path: Path) -> None:
    clock = VirtualClock()
    cluster = await EtcdCluster.open(tmp_path, clock=clock, members=3, seed=5, fsync=True, auto_compact_interval=0)
    await clock.run_until(lambda: cluster.leader() is not None, 10, step=0.1)
    acked: dict[str, bytes] = {}

    async def writer(w: int) -> None:
        for i in range(15):
            key, value = f"/registry/d/{w}-{i}", b"%d-%d" % (w, i)
            try:
                await cluster.txn([], [Put(key, value)])
            except StoreError:
                continue
            acked[key] = value

    writers = asyncio.ensure_future(asyncio.gather(*(writer(w) for w in range(8))))
    await clock.run_until(lambda: len(acked) >= 40, 20, step=0.01)
    killed = await cluster.kill_leader()
    await clock.run_until(writers.done, 60, step=0.05)
    writers.result()
    assert killed is not None
    await killed.start()
    await cluster.close()

    again = await EtcdCluster.open(tmp_path, clock=clock, members=3, seed=5, fsync=True, auto_compact_interval=0)
    await clock.run_until(lambda: again.leader() is not None, 10, step=0.1)
    got = await run(clock, again.range("/registry/d/", prefix_end("/registry/d/")))
    have = {kv.key: kv.value for kv in got.kvs}
    assert len(acked) > 40 and all(have.get(k) == v for k, v in acked.items())
    await clock.run_until(lambda: len({m.machine.revision for m in again.members}) == 1, 10, step=0.05)
    await again.close()


async def test_an_acknowledged_write_is_in_a_majority_of_wals_already(tmp_path: Path) -> None:
    """With WAL writes pipelined behind the Raft loop, an ack still never outruns the majority's
    syncs. The followers' syncs are slow (real time): an ack sent before its sync completed, or a
    commit counted before it, would show as a write durable on fewer than two members."""
    clock = VirtualClock()
    cluster = await EtcdCluster.open(tmp_path, clock=clock, members=3, seed=7, fsync=True, auto_compact_interval=0)
    await clock.run_until(lambda: cluster.leader() is not None, 10, step=0.1)
    durable: dict[str, list[bytes]] = {m.name: [] for m in cluster.members}
    for m in cluster.members:
        _track_syncs(m, durable[m.name], slow=not m.is_leader)
    short: list[tuple[str, int]] = []

    def durable_on(key: str) -> int:
        needle = key.encode()
        return sum(any(needle in data for data in logged) for logged in durable.values())

    async def writer(w: int) -> None:
        for i in range(6):
            key = f"/registry/maj/{w}-{i}"
            await cluster.txn([], [Put(key, b"v")])
            if (n := durable_on(key)) < 2:
                short.append((key, n))

    await run(clock, asyncio.gather(*(writer(w) for w in range(6))))
    assert short == []
    assert all(durable.values())  # every member's syncs were seen
    await cluster.close()


def _track_syncs(member: Any, durable: list[bytes], slow: bool) -> None:
    """Note the entries each WAL sync made durable, once it completed; ``slow`` adds 20 ms of real
    device latency to each (on the syncing thread, or before the kernel's completion is seen)."""
    storage, syncer = member.storage, member._syncer
    if syncer is None:
        save = storage.save_durably

        def save_durably(hard_state: Any, entries: list[Entry]) -> None:
            if slow:
                time.sleep(0.02)
            save(hard_state, entries)
            durable.extend(e.data for e in entries)

        storage.save_durably = save_durably
        return
    written: list[bytes] = []
    save_for_sync, fdatasync = storage.save_for_sync, syncer.fdatasync

    def save(hard_state: Any, entries: list[Entry]) -> int:
        written.extend(e.data for e in entries)
        return save_for_sync(hard_state, entries)  # type: ignore[no-any-return]

    def sync(fd: int) -> asyncio.Future[None]:
        batch = written[:]
        written.clear()
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def settle(fut: asyncio.Future[None]) -> None:
            durable.extend(batch)
            done.set_result(fut.result())

        def landed(fut: asyncio.Future[None]) -> None:
            if slow:
                asyncio.get_running_loop().call_later(0.02, settle, fut)
            else:
                settle(fut)

        fdatasync(fd).add_done_callback(landed)
        return done

    storage.save_for_sync = save
    syncer.fdatasync = sync


async def test_the_applied_record_never_runs_ahead_of_the_members_database(tmp_path: Path) -> None:
    """Members answer before their SQLite commit; the WAL's applied position (where a restarted
    member replays from) must only ever name what the database file already holds."""
    clock = VirtualClock()
    cluster = await EtcdCluster.open(tmp_path, clock=clock, members=3, seed=9, fsync=True, auto_compact_interval=0)
    await clock.run_until(lambda: cluster.leader() is not None, 10, step=0.1)
    ahead: list[tuple[str, int, int]] = []
    recorded: list[int] = []
    for m in cluster.members:
        def checked(index: int, revision: int, alarms: int = 0, *, m: Any = m, save: Any = m.storage.save_applied) -> None:
            if revision > m.machine.flushed_revision:
                ahead.append((m.name, revision, m.machine.flushed_revision))
            recorded.append(revision)
            save(index, revision, alarms)

        m.storage.save_applied = checked

    async def writer(w: int) -> None:
        for i in range(20):
            await cluster.txn([], [Put(f"/registry/rec/{w}-{i}", b"v" * 100)])

    await run(clock, asyncio.gather(*(writer(w) for w in range(8))))
    assert cluster.revision == 160
    # The files commit within the backend's batch interval; the record follows them there.
    await clock.run_until(lambda: len(recorded) >= 3 and min(m.machine.flushed_revision for m in cluster.members) == 160,
                          1.0, step=0.05)
    assert ahead == []
    assert max(recorded) == 160
    await cluster.close()


def _entries(first: int, n: int, size: int = 300) -> list[Entry]:
    return [Entry(i, 1, b"%d:" % i + b"e" * size) for i in range(first, first + n)]


def test_fsync_segments_are_preallocated_and_reload_across_rotations(tmp_path: Path) -> None:
    storage = FileStorage(tmp_path / "wal", fsync=True, segment_bytes=64 * 1024)
    storage.load()
    for i in range(1, 401, 4):
        storage.save_durably(HardState(1, 1, i), _entries(i, 4))
    storage.close()
    segments = sorted((tmp_path / "wal").glob("*.wal"))
    assert len(segments) > 2
    # Every segment but the one being written is full-size and ends in zero-filled room.
    assert all(p.stat().st_size == 64 * 1024 for p in segments)
    assert not list((tmp_path / "wal").glob("*.tmp"))
    state = FileStorage(tmp_path / "wal", fsync=True, segment_bytes=64 * 1024).load()
    assert [e.index for e in state.entries] == list(range(1, 401))
    assert state.hard_state.commit == 397


def test_a_torn_tail_in_preallocated_room_is_wiped_and_the_log_goes_on(tmp_path: Path) -> None:
    storage = FileStorage(tmp_path / "wal", fsync=True, segment_bytes=64 * 1024)
    storage.load()
    storage.save_durably(HardState(1, 1, 0), _entries(1, 3))
    end = storage._size
    storage.close()
    last = sorted((tmp_path / "wal").glob("*.wal"))[-1]
    with open(last, "r+b") as f:  # a record half on the device: a plausible header, a cut body
        f.seek(end)
        f.write(b"\x00\x10\x00\x00\x12\x34\x56\x78" + b"garbage" * 300)
    again = FileStorage(tmp_path / "wal", fsync=True, segment_bytes=64 * 1024)
    assert [e.index for e in again.load().entries] == [1, 2, 3]
    for i in range(4, 1200, 4):  # shorter records over the wiped bytes, then rotations past them
        again.save_durably(HardState(1, 1, i), _entries(i, 4, 50))
    again.close()
    assert len(list((tmp_path / "wal").glob("*.wal"))) > 1
    state = FileStorage(tmp_path / "wal", fsync=True, segment_bytes=64 * 1024).load()
    assert [e.index for e in state.entries] == list(range(1, 1200))


def test_damage_before_the_last_segment_is_refused(tmp_path: Path) -> None:
    storage = FileStorage(tmp_path / "wal", fsync=True, segment_bytes=16 * 1024)
    storage.load()
    for i in range(1, 200, 4):
        storage.save_durably(None, _entries(i, 4))
    storage.close()
    first = sorted((tmp_path / "wal").glob("*.wal"))[0]
    data = bytearray(first.read_bytes())
    data[200] ^= 0xFF
    first.write_bytes(bytes(data))
    import pytest

    from kconsole.store.raft.wal import WalCorrupt

    with pytest.raises(WalCorrupt, match="before the last segment"):
        FileStorage(tmp_path / "wal", fsync=True, segment_bytes=16 * 1024).load()


def test_a_write_that_would_start_a_segment_is_left_to_the_thread(tmp_path: Path) -> None:
    """save_for_sync runs on the event loop: a rotation (old segment synced, new one filled and
    synced, directory synced) is blocking file work, so it writes nothing and says ROTATES."""
    storage = FileStorage(tmp_path / "wal", fsync=True, segment_bytes=64 * 1024)
    storage.load()
    index, rotated = 1, False
    for _ in range(100):  # ~48 writes fill the 64 KiB segment
        segments = len(list((tmp_path / "wal").glob("*.wal")))
        fd = storage.save_for_sync(HardState(1, 1, index), _entries(index, 4))
        if fd == ROTATES:
            assert len(list((tmp_path / "wal").glob("*.wal"))) == segments, "nothing was written"
            storage.save_durably(HardState(1, 1, index), _entries(index, 4))  # what the member does then
            rotated = True
        assert fd >= 0 or fd == ROTATES
        index += 4
        if rotated:
            break
    storage.close()
    assert rotated, "a write that starts a segment is refused on the loop"
    state = FileStorage(tmp_path / "wal", fsync=True, segment_bytes=64 * 1024).load()
    assert [e.index for e in state.entries] == list(range(1, index))
    assert len(list((tmp_path / "wal").glob("*.wal"))) == 2
