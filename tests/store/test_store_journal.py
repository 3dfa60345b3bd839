"""The FULL-durability journal: acknowledged writes are on the device in it, and a reopened log
replays what SQLite lost. A power loss is staged by putting back copies of the SQLite files taken
before later commits reached them (their WAL frames were never synced), beside the journal as it was."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from kconsole.clock import VirtualClock
from kconsole.store import backend
from kconsole.store import journal as journal_module
from kconsole.store.journal import BLOCK, JournalError, journal_path, scan
from kconsole.store.kv import KeyValue
from kconsole.store.revlog import BackendError, RevisionLog

SUFFIXES = ("", "-wal")


@pytest.fixture(params=["overlapped", "after-commit"], autouse=True)
def journal_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test runs with the journal write overlapping SQLite's commit (native AIO) and with
    the blocking write after the commit that other systems get."""
    if request.param == "after-commit":
        def unavailable() -> None:
            raise OSError("no native AIO here")

        monkeypatch.setattr(journal_module, "_Aio", unavailable)
    return request.param


def _copy_sqlite(db: Path, to: Path) -> None:
    to.mkdir()
    for suffix in SUFFIXES:
        src = Path(f"{db}{suffix}")
        if src.exists():
            shutil.copyfile(src, to / f"db{suffix}")


def _power_loss(db: Path, durable: Path, journal_copy: Path | None = None) -> None:
    """Leave on disk what a power loss would: the SQLite files as copied, the journal as it is."""
    for suffix in (*SUFFIXES, "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
        saved = durable / f"db{suffix}"
        if saved.exists():
            shutil.copyfile(saved, f"{db}{suffix}")
    if journal_copy is not None:
        shutil.copyfile(journal_copy, journal_path(db))


async def test_an_acknowledged_write_is_in_the_journal_file(db_path: Path, clock: VirtualClock, journal_mode: str) -> None:
    async with await RevisionLog.open(db_path, clock=clock) as log:
        assert log._journal is not None and log._journal.overlaps == (journal_mode == "overlapped")  # noqa: SLF001
        await log.put("/a", b"one")
        revision = (await log.update("/a", b"two", mod_revision=1)).revision
        records, _ = scan(journal_path(db_path))
        rows = [row for record in records for row in record.rows]
        assert [(row[1], row[2], row[8]) for row in rows] == [(1, "/a", b"one"), (revision, "/a", b"two")]


async def test_reopen_replays_journaled_writes_that_sqlite_lost(tmp_path: Path, db_path: Path, clock: VirtualClock) -> None:
    log = await RevisionLog.open(db_path, clock=clock)
    await log.put("/a", b"1")
    _copy_sqlite(db_path, tmp_path / "durable")
    await log.put("/b", b"2")
    await log.delete("/a")
    await asyncio.gather(*(log.put(f"/c/{i}", b"3") for i in range(20)))  # group commits too
    await log.close()
    _power_loss(db_path, tmp_path / "durable")
    with sqlite3.connect(db_path) as raw:
        assert raw.execute("SELECT MAX(revision) FROM kv").fetchone()[0] == 1  # SQLite alone lost them

    async with await RevisionLog.open(db_path, clock=clock) as log:
        assert log.revision == 23
        assert await log.get("/a") is None
        assert await log.get("/b") == KeyValue("/b", b"2", 2, 2, 1)
        assert (await log.range("/c/", "/c0", count_only=True)).count == 20
        assert (await log.get("/a", revision=2)).value == b"1"  # type: ignore[union-attr]
        assert await log.put("/d", b"4") == 24


async def test_a_torn_record_ends_the_replay(tmp_path: Path, db_path: Path, clock: VirtualClock) -> None:
    log = await RevisionLog.open(db_path, clock=clock)
    await log.put("/a", b"1")
    _copy_sqlite(db_path, tmp_path / "durable")
    for key in ("/b", "/c", "/d"):
        await log.put(key, b"v")
    await log.close()
    _power_loss(db_path, tmp_path / "durable")
    with open(journal_path(db_path), "r+b") as f:  # the write of /c (revision 3, third block) was torn
        f.seek(2 * BLOCK + 40)
        f.write(b"\xff" * 100)

    async with await RevisionLog.open(db_path, clock=clock) as log:
        assert log.revision == 2
        assert await log.get("/b") is not None and await log.get("/c") is None and await log.get("/d") is None
        assert await log.put("/e", b"v") == 3
    async with await RevisionLog.open(db_path, clock=clock) as log:  # the stale record of /d never comes back
        assert log.revision == 3 and await log.get("/d") is None and (await log.get("/e")).mod_revision == 3  # type: ignore[union-attr]


async def test_the_journal_wraps_around_and_still_replays(tmp_path: Path, db_path: Path, clock: VirtualClock) -> None:
    log = await RevisionLog.open(db_path, clock=clock, journal_bytes=4 * 2 * BLOCK)  # two regions of 4 records
    for i in range(30):
        await log.put(f"/w/{i % 3}", str(i).encode())
    assert log._journal is not None and log._journal.switches >= 6  # noqa: SLF001
    records, _ = scan(journal_path(db_path))
    revisions = [row[1] for record in records for row in record.rows]
    assert revisions == list(range(revisions[0], 31)) and len(revisions) >= 5
    _copy_sqlite(db_path, tmp_path / "durable")
    await log.put("/w/0", b"30")
    await log.put("/w/1", b"31")
    await log.close()
    _power_loss(db_path, tmp_path / "durable")

    async with await RevisionLog.open(db_path, clock=clock, journal_bytes=4 * 2 * BLOCK) as log:
        assert log.revision == 32
        assert [(await log.get(f"/w/{i}")).value for i in range(3)] == [b"30", b"31", b"29"]  # type: ignore[union-attr]


@pytest.mark.parametrize("later_write", [False, True])
async def test_a_batch_sqlite_refused_never_comes_back(
        tmp_path: Path, db_path: Path, clock: VirtualClock, later_write: bool) -> None:
    log = await RevisionLog.open(db_path, clock=clock)
    await log.put("/ok", b"1")
    with sqlite3.connect(db_path) as raw:
        raw.execute("CREATE TRIGGER refuse BEFORE INSERT ON kv WHEN NEW.name = '/poison' BEGIN SELECT RAISE(ABORT, 'disk says no'); END")
    _copy_sqlite(db_path, tmp_path / "durable")
    with pytest.raises(BackendError, match="disk says no"):
        await log.put("/poison", b"x")
    if later_write:
        assert await log.put("/after", b"y") == 2  # the refused batch's revision, given out again
    await log.close()
    _power_loss(db_path, tmp_path / "durable")
    with sqlite3.connect(db_path) as raw:
        raw.execute("DROP TRIGGER refuse")  # recovery would insert the poison row if it replayed it

    async with await RevisionLog.open(db_path, clock=clock) as log:
        assert await log.get("/poison") is None
        if later_write:
            assert log.revision == 2 and (await log.get("/after")).value == b"y"  # type: ignore[union-attr]
        else:
            assert log.revision == 1


async def test_a_journal_beside_a_new_database_is_not_its_history(db_path: Path, clock: VirtualClock) -> None:
    log = await RevisionLog.open(db_path, clock=clock)
    for i in range(5):
        await log.put(f"/old/{i}", b"v")
    await log.close()
    for suffix in (*SUFFIXES, "-shm"):
        Path(f"{db_path}{suffix}").unlink(missing_ok=True)  # the user starts over; the journal stays

    async with await RevisionLog.open(db_path, clock=clock) as log:
        assert log.revision == 0 and await log.get("/old/0") is None


async def test_normal_mode_replays_a_journal_then_drops_it(tmp_path: Path, db_path: Path, clock: VirtualClock) -> None:
    log = await RevisionLog.open(db_path, clock=clock)
    await log.put("/a", b"1")
    _copy_sqlite(db_path, tmp_path / "durable")
    await log.put("/b", b"2")
    await log.close()
    _power_loss(db_path, tmp_path / "durable")

    async with await RevisionLog.open(db_path, clock=clock, synchronous="NORMAL") as log:
        assert log.revision == 2 and (await log.get("/b")).value == b"2"  # type: ignore[union-attr]
        assert not journal_path(db_path).exists()


async def test_bad_journal_size_is_refused(db_path: Path, clock: VirtualClock) -> None:
    with pytest.raises(ValueError, match="journal_bytes must be a multiple of 8192"):
        await RevisionLog.open(db_path, clock=clock, journal_bytes=10_000)
    assert not db_path.exists()


async def test_a_journal_write_that_fails_stops_the_log(
        db_path: Path, clock: VirtualClock, monkeypatch: pytest.MonkeyPatch) -> None:
    log = await RevisionLog.open(db_path, clock=clock)
    await log.put("/a", b"1")

    def device_gone(self: journal_module.Journal) -> None:
        raise JournalError(5, "journal write failed: Input/output error")

    with monkeypatch.context() as patch:
        patch.setattr(journal_module.Journal, "finish", device_gone)
        with pytest.raises(BackendError, match="Input/output error"):
            await log.put("/b", b"2")
    with pytest.raises(BackendError):  # SQLite has /b, the device may not: nothing more is trusted
        await log.get("/a")
    await log.close()
    async with await RevisionLog.open(db_path, clock=clock) as log:  # a restart reads the file again
        assert log.revision == 2 and (await log.get("/b")).value == b"2"  # type: ignore[union-attr]


async def test_a_snapshot_put_in_place_of_the_file_ignores_the_old_journal(
        tmp_path: Path, db_path: Path, clock: VirtualClock) -> None:
    log = await RevisionLog.open(db_path, clock=clock)
    await log.put("/a", b"1")
    snapshot = tmp_path / "snap.db"
    assert await log.backup(snapshot) == 1
    await log.put("/b", b"2")  # journaled right after the snapshot's revision
    await log.close()
    for suffix in (*SUFFIXES, "-shm"):
        Path(f"{db_path}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(snapshot, db_path)  # restored in place; the journal stays

    async with await RevisionLog.open(db_path, clock=clock) as log:
        assert log.revision == 1 and await log.get("/b") is None


async def test_a_group_commit_bigger_than_a_journal_region_is_made_durable_by_sqlite(
        tmp_path: Path, db_path: Path, clock: VirtualClock) -> None:
    log = await RevisionLog.open(db_path, clock=clock, journal_bytes=4 * BLOCK)  # regions of 2 blocks
    await log.put("/small", b"1")
    await log.put("/big", b"b" * (3 * BLOCK))  # no record fits: SQLite's files are synced instead
    _copy_sqlite(db_path, tmp_path / "durable")
    await log.put("/after", b"2")
    await log.close()
    _power_loss(db_path, tmp_path / "durable")

    async with await RevisionLog.open(db_path, clock=clock, journal_bytes=4 * BLOCK) as log:
        assert log.revision == 3
        assert (await log.get("/big")).value == b"b" * (3 * BLOCK)  # type: ignore[union-attr]
        assert (await log.get("/after")).mod_revision == 3  # type: ignore[union-attr]


async def test_a_refused_group_commit_in_the_pipeline_never_comes_back(
        tmp_path: Path, db_path: Path, clock: VirtualClock) -> None:
    log = await RevisionLog.open(db_path, clock=clock)
    await log.put("/base", b"0")
    with sqlite3.connect(db_path) as raw:
        raw.execute("CREATE TRIGGER refuse BEFORE INSERT ON kv WHEN NEW.name = '/poison' BEGIN SELECT RAISE(ABORT, 'disk says no'); END")
    _copy_sqlite(db_path, tmp_path / "durable")
    # Two pipelined group commits on the writer's thread; the poison fails the first, and the second with it.
    calls = [log.put("/poison", b"x")] + [log.put(f"/q/{i}", b"v") for i in range(39)]
    results = await asyncio.gather(*calls, return_exceptions=True)
    assert all(isinstance(r, BackendError) for r in results)
    after = await asyncio.gather(*(log.put(f"/r/{i}", b"v") for i in range(40)))
    assert after == list(range(2, 42))
    await log.close()
    _power_loss(db_path, tmp_path / "durable")
    with sqlite3.connect(db_path) as raw:
        raw.execute("DROP TRIGGER refuse")

    async with await RevisionLog.open(db_path, clock=clock) as log:
        assert log.revision == 41
        assert await log.get("/poison") is None
        assert (await log.range("/q/", "/q0", count_only=True)).count == 0
        assert (await log.range("/r/", "/r0", count_only=True)).count == 40


async def test_pipelined_commits_write_their_records_from_the_loop_and_wrap_safely(
        tmp_path: Path, db_path: Path, clock: VirtualClock, monkeypatch: pytest.MonkeyPatch) -> None:
    """Group commits of concurrent writers get their records written from the event loop while
    SQLite commits them. When the journal moves on to a region, SQLite must already hold, durably,
    every record that region held: each sync it asks for runs after the commits of all records
    written before the switch, however slow the disk is to commit them."""
    apply_batch = backend.apply_batch

    def slow_disk(*args: object, **kwargs: object) -> object:
        time.sleep(0.005)  # a slow commit on the writer's thread (I/O, not simulated time)
        return apply_batch(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(backend, "apply_batch", slow_disk)
    log = await RevisionLog.open(db_path, clock=clock, journal_bytes=4 * 2 * BLOCK)  # two regions of 4 records
    try:
        await _write_across_switches(log, db_path, tmp_path)
    finally:
        await log.close()  # a failed assertion must not leave the writer's thread holding the process
    _power_loss(db_path, tmp_path / "durable")

    async with await RevisionLog.open(db_path, clock=clock, journal_bytes=4 * 2 * BLOCK) as log:
        assert [(await log.get(f"/p/{i}")).value for i in range(32)] == [b"last"] * 32  # type: ignore[union-attr]


async def _write_across_switches(log: RevisionLog, db_path: Path, tmp_path: Path) -> None:
    journal = log._journal  # noqa: SLF001
    assert journal is not None
    if log._loop_aio is None:  # noqa: SLF001
        pytest.skip("no native AIO from the loop here")
    seen_at_sync: list[int] = []
    backend_sync = journal._sync_backend  # noqa: SLF001

    def sync() -> None:
        with sqlite3.connect(db_path) as raw:
            seen_at_sync.append(raw.execute("SELECT MAX(revision) FROM kv").fetchone()[0])
        backend_sync()

    journal._sync_backend = sync  # noqa: SLF001
    needed: list[int] = []
    write_ahead = journal.write_ahead

    def recording(first: int, *args: object) -> object:
        switches = journal.switches
        started = write_ahead(first, *args)  # type: ignore[arg-type]
        if journal.switches > switches:
            needed.append(first - 1)  # every revision before this record's is in the region left behind
        return started

    journal.write_ahead = recording  # type: ignore[method-assign]
    async def writer(w: int) -> None:  # 32 of them: pipelined group commits, two on the writer's thread
        for round_ in range(10):
            await log.put(f"/p/{w}", f"{round_}".encode())

    await asyncio.gather(*(writer(w) for w in range(32)))
    assert len(needed) >= 4
    assert journal._synced is not None  # noqa: SLF001
    await asyncio.wrap_future(journal._synced)  # noqa: SLF001  # each switch waited for the one before
    assert len(seen_at_sync) == len(needed)
    assert all(seen >= need for seen, need in zip(seen_at_sync, needed))
    _copy_sqlite(db_path, tmp_path / "durable")
    await asyncio.gather(*(log.put(f"/p/{i}", b"last") for i in range(32)))


def test_a_lone_commit_sees_its_record_land_on_the_completion_ring(tmp_path: Path, journal_mode: str) -> None:
    """A lone commit polls the AIO completion ring instead of sleeping until its record is on the
    device: the ring shows the completion once the device has the write, and nothing after it is
    taken, so the next wait polls again rather than trusting a stale completion."""
    if journal_mode != "overlapped":
        pytest.skip("the ring belongs to native AIO")
    journal = journal_module.Journal.open(tmp_path / "j", 4 * 2 * BLOCK, 0, lambda: None)
    try:
        aio = journal._aio  # noqa: SLF001
        if aio is None or aio._landed is None:  # noqa: SLF001
            pytest.skip("no native AIO ring on this machine")
        for revision in (1, 2, 3):
            assert not aio._landed()  # noqa: SLF001
            journal.start(revision, revision, [(revision, "/k", b"v")])
            deadline = time.monotonic() + 10
            while not aio._landed() and time.monotonic() < deadline:  # noqa: SLF001
                time.sleep(0.0005)
            assert aio._landed()  # noqa: SLF001
            journal.finish()
        assert not aio._landed()  # noqa: SLF001
    finally:
        journal.close()
    records, _ = scan(tmp_path / "j")
    assert [(record.first, record.rows) for record in records] == [(r, [(r, "/k", b"v")]) for r in (1, 2, 3)]
