"""A full disk: writes are refused with etcd's NOSPACE error, reads go on, writes come back once
space is freed, and nothing that was not durable is ever applied (so every start after it works).

The disk is a small tmpfs this test mounts where it may (root); the short-write test runs anywhere,
making the kernel's write return short through a hook on ``os.pwrite``."""

from __future__ import annotations

import asyncio
import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kconsole.clock import VirtualClock
from kconsole.store import fileio
from kconsole.store.durability import StoreMode, open_store
from kconsole.store.facade import EtcdCluster
from kconsole.store.kv import NoSpaceError, Put, StoreError, prefix_end
from kconsole.store.raft.core import HardState
from kconsole.store.raft.log import Entry
from kconsole.store.raft.wal import FileStorage

MiB = 1024 * 1024


def test_a_short_wal_write_is_an_error_and_counts_for_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    storage = FileStorage(tmp_path / "wal")
    storage.load()
    storage.save(HardState(1, 1, 0), [Entry(i, 1, b"entry-%d" % i) for i in range(1, 4)])
    real = os.pwrite
    calls = [0]

    def short(fd: int, data: Any, offset: int) -> int:  # the disk fills up half-way through the record
        calls[0] += 1
        if calls[0] == 1:
            return real(fd, bytes(data[: len(data) // 2]), offset)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(fileio.os, "pwrite", short)
    with pytest.raises(OSError) as raised:
        storage.save(HardState(1, 1, 3), [Entry(4, 1, b"entry-4" * 50)])
    assert raised.value.errno == errno.ENOSPC and fileio.is_disk_full(raised.value)
    monkeypatch.setattr(fileio.os, "pwrite", real)
    storage.close()

    again = FileStorage(tmp_path / "wal")
    state = again.load()  # the torn half record is wiped, not read as entry 4
    assert [e.index for e in state.entries] == [1, 2, 3]
    again.save(HardState(1, 1, 3), [Entry(4, 1, b"entry-4")])
    again.close()
    assert [e.index for e in FileStorage(tmp_path / "wal").load().entries] == [1, 2, 3, 4]


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 40 MiB tmpfs (skipped where this process may not mount one)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root; the short-write test covers the write path")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=40m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(disk: Path, leave: int) -> Path:
    """A filler file taking all the free space of ``disk`` but ``leave`` bytes."""
    filler = disk / "filler"
    st = os.statvfs(disk)
    size = max(0, st.f_bavail * st.f_frsize - leave)
    with open(filler, "ab") as f:
        chunk = bytes(MiB)
        while size > 0:
            try:
                size -= f.write(chunk[: min(size, MiB)])
                f.flush()
            except OSError as err:
                assert err.errno == errno.ENOSPC
                break
    return filler


async def settle(clock: VirtualClock, aw: Any, timeout: float = 60.0) -> Any:
    task = asyncio.ensure_future(aw)
    await clock.run_until(task.done, timeout, step=0.05)
    return task.result()


async def write_until_refused(clock: VirtualClock, cluster: EtcdCluster, acked: dict[str, bytes], tag: str,
                              step: float, limit: int = 4000) -> list[BaseException]:
    """Concurrent puts of 4 KiB values until they are refused; the errors met, in order."""
    errors: list[BaseException] = []

    async def one(i: int) -> None:
        key, value = f"/registry/fill/{tag}-{i:05d}", os.urandom(2048).hex().encode()
        try:
            await cluster.txn([], [Put(key, value)])
        except StoreError as err:
            errors.append(err)
            return
        acked[key] = value

    for start in range(0, limit, 16):
        await settle(clock, asyncio.gather(*(one(i) for i in range(start, start + 16))))
        if errors:
            return errors
        await clock.advance(step)  # backend commits; with a step, the cluster's looks at the disk
    raise AssertionError(f"{limit} writes of 4 KiB were all accepted on a nearly full disk")


async def reopen_and_check(disk: Path, clock: VirtualClock, acked: dict[str, bytes], mode: StoreMode) -> None:
    """Every start after a full disk works, and holds every acknowledged write."""
    again = await open_store(disk / "etcd", clock=clock, mode=mode, disk_reserve_bytes=4 * MiB)
    try:
        await clock.run_until(lambda: again.leader() is not None, 10, step=0.1)
        got = await settle(clock, again.range("/registry/fill/", prefix_end("/registry/fill/")))
        have = {kv.key: kv.value for kv in got.kvs}
        missing = [k for k, v in acked.items() if have.get(k) != v]
        assert missing == [], f"{len(missing)} acknowledged writes lost"
    finally:
        await settle(clock, again.close())


async def test_below_the_reserve_puts_get_nospace_reads_go_on_and_freed_space_brings_writes_back(
        small_disk: Path) -> None:
    clock = VirtualClock()
    mode = StoreMode(1, synced=True)
    cluster = await open_store(small_disk / "etcd", clock=clock, mode=mode, disk_reserve_bytes=4 * MiB)
    acked: dict[str, bytes] = {}
    try:
        await clock.run_until(lambda: cluster.leader() is not None, 10, step=0.1)
        filler = fill(small_disk, leave=cluster.disk_reserve() + 3 * MiB)
        await clock.advance(0.5)
        errors = await write_until_refused(clock, cluster, acked, "a", step=0.3)
        assert all(isinstance(e, NoSpaceError) for e in errors), errors
        assert str(errors[0]) == "etcdserver: mvcc: database space exceeded"
        assert acked, "the reserve was hit before any write"
        got = await settle(clock, cluster.range("/registry/fill/", prefix_end("/registry/fill/")))
        assert got.count == len(acked)  # reads go on
        filler.unlink()
        await clock.advance(1.0)  # the next look at the disk sees the room
        await settle(clock, cluster.txn([], [Put("/registry/fill/after", b"back")]))
        acked["/registry/fill/after"] = b"back"
    finally:
        await settle(clock, cluster.close())
    await reopen_and_check(small_disk, clock, acked, mode)


@pytest.mark.parametrize("synced", [True, False], ids=["synced", "unsynced"])
async def test_a_disk_that_fills_under_the_writes_never_bricks_the_store(small_disk: Path, synced: bool) -> None:
    """No reserve, and the disk filled behind the cluster's back between two looks at it: writes
    really meet ENOSPC (in the WAL's appends unsynced, in SQLite's files synced). What was not
    durable is not applied; once space is freed the member is started again and takes writes."""
    clock = VirtualClock()
    mode = StoreMode(1, synced=synced)
    cluster = await open_store(small_disk / "etcd", clock=clock, mode=mode, disk_reserve_bytes=0)
    acked: dict[str, bytes] = {}
    try:
        await clock.run_until(lambda: cluster.leader() is not None, 10, step=0.1)
        filler = fill(small_disk, leave=40 * 1024)  # room for part of a batch: a short write
        errors = await write_until_refused(clock, cluster, acked, "b", step=0.0)
        assert errors
        await clock.advance(1.0)
        member = cluster.members[0]
        assert not member.running and fileio.is_disk_full(member.failure), (member.running, member.errors)
        with pytest.raises(NoSpaceError):
            await settle(clock, cluster.txn([], [Put("/registry/fill/refused", b"x")]))
        filler.unlink()
        await clock.run_until(lambda: member.running and cluster.leader() is not None, 30, step=0.1)
        await settle(clock, cluster.txn([], [Put("/registry/fill/after", b"back")]))
        acked["/registry/fill/after"] = b"back"
    finally:
        await settle(clock, cluster.close())
    await reopen_and_check(small_disk, clock, acked, mode)
