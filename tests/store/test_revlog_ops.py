"""Each revision-log operation on its own: what the API server relies on."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from kconsole.clock import VirtualClock
from kconsole.store.kv import (
    MAX_REQUEST_BYTES,
    CompactedError,
    Compare,
    Delete,
    FutureRevisionError,
    Get,
    KeyValue,
    NoSpaceError,
    Put,
    RangeResult,
    TooLargeError,
    prefix_end,
)
from kconsole.store.revlog import BackendError, InvalidRequestError, RevisionLog, StoreLockedError


async def test_create_then_update_tracks_revisions_and_versions(log: RevisionLog) -> None:
    created = await log.create("/registry/pods/default/a", b'{"v":1}')
    assert created.succeeded and created.revision == 1 and created.responses == [None]
    again = await log.create("/registry/pods/default/a", b'{"v":9}')
    assert not again.succeeded and again.revision == 1
    existing = again.responses[0]
    assert isinstance(existing, RangeResult)
    assert existing.kvs == [KeyValue("/registry/pods/default/a", b'{"v":1}', 1, 1, 1)]

    stale = await log.update("/registry/pods/default/a", b'{"v":2}', mod_revision=7)
    assert not stale.succeeded and stale.revision == 1
    updated = await log.update("/registry/pods/default/a", b'{"v":2}', mod_revision=1)
    assert updated.succeeded and updated.revision == 2
    assert updated.responses == [KeyValue("/registry/pods/default/a", b'{"v":1}', 1, 1, 1)]
    assert await log.get("/registry/pods/default/a") == KeyValue("/registry/pods/default/a", b'{"v":2}', 1, 2, 2)
    assert log.revision == 2


async def test_delete_makes_version_zero_and_recreate_starts_over(log: RevisionLog) -> None:
    await log.put("/k", b"1")
    await log.put("/k", b"2")
    result = await log.txn([Compare("/k", "version", "=", 2)], [Delete("/k")])
    assert result.succeeded and result.revision == 3
    assert result.responses == [KeyValue("/k", b"2", 1, 2, 2)]
    assert await log.get("/k") is None
    assert (await log.txn([Compare("/k", "version", "=", 0)], [Put("/k", b"3")])).succeeded
    assert await log.get("/k") == KeyValue("/k", b"3", 4, 4, 1)


async def test_txn_without_writes_keeps_the_revision(log: RevisionLog) -> None:
    await log.put("/a", b"1")
    assert (await log.txn([], [Delete("/missing")])).revision == 1
    assert (await log.txn([], [Get("/a")])).revision == 1
    assert await log.delete("/missing") == 0
    assert log.revision == 1
    assert (await log.put("/b", b"2")) == 2


async def test_gets_inside_a_txn_see_only_earlier_ops(log: RevisionLog) -> None:
    await log.put("/p/a", b"old")
    result = await log.txn([], [Get("/p/a"), Put("/p/a", b"new"), Get("/p/a"), Put("/p/b", b"b"), Get("/p/", prefix_end("/p/"))])
    before, prior, after, _, listing = result.responses
    assert isinstance(before, RangeResult) and before.kvs[0].value == b"old" and before.revision == 1
    assert prior == KeyValue("/p/a", b"old", 1, 1, 1)
    assert isinstance(after, RangeResult) and after.kvs[0].value == b"new" and after.revision == 2
    assert isinstance(listing, RangeResult)
    assert [(kv.key, kv.value, kv.mod_revision) for kv in listing.kvs] == [("/p/a", b"new", 2), ("/p/b", b"b", 2)]


async def test_compare_targets_and_operators(log: RevisionLog) -> None:
    await log.put("/c", b"abc")
    await log.put("/c", b"abd")
    cases = [
        (Compare("/c", "mod", "=", 2), True),
        (Compare("/c", "mod", "<", 2), False),
        (Compare("/c", "create", "=", 1), True),
        (Compare("/c", "version", ">", 1), True),
        (Compare("/c", "version", "!=", 2), False),
        (Compare("/c", "value", "=", b"abd"), True),
        (Compare("/c", "value", ">", b"abc"), True),
        (Compare("/missing", "mod", "=", 0), True),
        (Compare("/missing", "value", "=", b""), True),
    ]
    for compare, expected in cases:
        assert (await log.txn([compare], [])).succeeded is expected, compare


async def test_ranges_limit_count_keys_only_and_open_end(log: RevisionLog) -> None:
    for name in ["b", "a", "d", "c"]:
        await log.put(f"/r/{name}", name.encode())
    await log.put("/s/x", b"x")
    await log.delete("/r/c")
    full = await log.range("/r/", prefix_end("/r/"))
    assert [kv.key for kv in full.kvs] == ["/r/a", "/r/b", "/r/d"] and full.count == 3 and not full.more
    page = await log.range("/r/", prefix_end("/r/"), limit=2)
    assert [kv.key for kv in page.kvs] == ["/r/a", "/r/b"] and page.count == 3 and page.more
    counted = await log.range("/r/", prefix_end("/r/"), count_only=True)
    assert counted.kvs == [] and counted.count == 3
    keys = await log.range("/r/", prefix_end("/r/"), keys_only=True)
    assert [kv.value for kv in keys.kvs] == [b"", b"", b""]
    everything = await log.range("/r/b", "\0")
    assert [kv.key for kv in everything.kvs] == ["/r/b", "/r/d", "/s/x"]
    assert full.revision == log.revision == 6


async def test_range_at_past_and_future_revisions(log: RevisionLog) -> None:
    await log.put("/h/a", b"1")
    await log.put("/h/b", b"1")
    await log.put("/h/a", b"2")
    await log.delete("/h/b")
    at2 = await log.range("/h/", prefix_end("/h/"), revision=2)
    assert [(kv.key, kv.value) for kv in at2.kvs] == [("/h/a", b"1"), ("/h/b", b"1")] and at2.revision == 2
    assert (await log.get("/h/a", revision=3)).value == b"2"  # type: ignore[union-attr]
    assert await log.get("/h/b", revision=4) is None
    with pytest.raises(FutureRevisionError, match="etcdserver: mvcc: required revision is a future revision"):
        await log.range("/h/a", revision=5)


async def test_compaction_refuses_old_revisions_and_keeps_the_rest(log: RevisionLog, db_path: Path, clock: VirtualClock) -> None:
    await log.put("/k/a", b"1")  # 1
    await log.put("/k/b", b"1")  # 2
    await log.put("/k/a", b"2")  # 3
    await log.delete("/k/b")  # 4
    await log.put("/k/c", b"1")  # 5
    await log.compact(4)
    with pytest.raises(CompactedError, match="etcdserver: mvcc: required revision has been compacted") as err:
        await log.range("/k/a", revision=3)
    assert err.value.compact_revision == 4
    at4 = await log.range("/k/", prefix_end("/k/"), revision=4)
    assert [(kv.key, kv.value) for kv in at4.kvs] == [("/k/a", b"2")]
    with pytest.raises(CompactedError):
        await log.compact(4)
    with pytest.raises(FutureRevisionError):
        await log.compact(6)
    status = await log.status()
    assert (status.revision, status.compact_revision, status.keys) == (5, 4, 2)
    await log.close()
    with sqlite3.connect(db_path) as raw:
        revisions = [r for (r,) in raw.execute("SELECT revision FROM kv ORDER BY id")]
    # /k/a@1 was superseded below 4 and went; /k/b@2 stays as the prev_kv of the deletion at 4,
    # which a watch from revision 4 still delivers.
    assert revisions == [2, 3, 4, 5]
    reopened = await RevisionLog.open(db_path, clock=clock)
    try:
        assert (reopened.revision, reopened.compact_revision) == (5, 4)
        with pytest.raises(CompactedError):
            await reopened.get("/k/a", revision=2)
        assert [kv.key for kv in (await reopened.range("/k/", prefix_end("/k/"))).kvs] == ["/k/a", "/k/c"]
    finally:
        await reopened.close()


async def test_compacting_to_current_revision_keeps_the_revision_after_restart(db_path: Path, clock: VirtualClock) -> None:
    log = await RevisionLog.open(db_path, clock=clock)
    await log.put("/x", b"1")
    await log.delete("/x")
    await log.compact(2)
    await log.close()
    log = await RevisionLog.open(db_path, clock=clock)
    try:
        assert log.revision == 2 and await log.put("/y", b"1") == 3
    finally:
        await log.close()


async def test_ranged_delete_returns_the_deleted_keys(log: RevisionLog) -> None:
    for i in range(3):
        await log.put(f"/ns/x/{i}", str(i).encode())
    await log.put("/ns/y", b"y")
    result = await log.txn([], [Delete("/ns/x/", prefix_end("/ns/x/"))])
    deleted = result.responses[0]
    assert isinstance(deleted, list)
    assert [(kv.key, kv.value) for kv in deleted] == [("/ns/x/0", b"0"), ("/ns/x/1", b"1"), ("/ns/x/2", b"2")]
    assert result.revision == 5
    assert [kv.key for kv in (await log.range("/ns/", prefix_end("/ns/"))).kvs] == ["/ns/y"]


async def test_concurrent_compare_and_swap_has_exactly_one_winner(log: RevisionLog) -> None:
    await log.put("/lease", b"nobody")
    results = await asyncio.gather(*(log.update("/lease", f"holder-{i}".encode(), mod_revision=1) for i in range(50)))
    winners = [r for r in results if r.succeeded]
    assert len(winners) == 1 and winners[0].revision == 2
    losers = [r for r in results if not r.succeeded]
    assert all(r.responses[0].kvs[0].mod_revision == 2 for r in losers)  # type: ignore[union-attr]
    assert log.revision == 2


async def test_concurrent_writers_get_gap_free_revisions(log: RevisionLog) -> None:
    revisions = await asyncio.gather(*(log.put(f"/w/{i}", b"v") for i in range(200)))
    assert sorted(revisions) == list(range(1, 201))
    assert (await log.range("/w/", prefix_end("/w/"), count_only=True)).count == 200


async def test_bad_input_is_rejected_with_a_clear_error(log: RevisionLog) -> None:
    with pytest.raises(InvalidRequestError, match="duplicate key"):
        await log.txn([], [Put("/d", b"1"), Put("/d", b"2")])
    with pytest.raises(InvalidRequestError, match="duplicate key"):
        await log.txn([], [Put("/d/a", b"1"), Delete("/d/", prefix_end("/d/"))])
    with pytest.raises(InvalidRequestError, match="key is not provided"):
        await log.put("", b"1")
    with pytest.raises(InvalidRequestError, match="must be bytes"):
        await log.txn([], [Put("/d", "text")])  # type: ignore[arg-type]
    with pytest.raises(InvalidRequestError, match="compare target"):
        await log.txn([Compare("/d", "size", "=", 1)], [])  # type: ignore[arg-type]
    with pytest.raises(InvalidRequestError, match="needs an int"):
        await log.txn([Compare("/d", "mod", "=", b"1")], [])
    assert log.revision == 0


async def test_too_large_value_writes_nothing(log: RevisionLog) -> None:
    await log.put("/big", b"small")
    with pytest.raises(TooLargeError, match="etcdserver: request is too large"):
        await log.put("/big", b"x" * (MAX_REQUEST_BYTES + 1))
    assert log.revision == 1 and (await log.get("/big")).value == b"small"  # type: ignore[union-attr]
    assert await log.put("/big", b"y" * (MAX_REQUEST_BYTES - 10)) == 2


async def test_nospace_alarm_allows_only_reads_deletes_and_compaction(db_path: Path, clock: VirtualClock) -> None:
    log = await RevisionLog.open(db_path, clock=clock, quota_bytes=256 * 1024)
    try:
        written = 0
        with pytest.raises(NoSpaceError, match="etcdserver: mvcc: database space exceeded"):
            for i in range(1000):
                await log.put(f"/q/{i % 10}", bytes(8 * 1024))
                written += 1
        assert 10 < written < 1000
        assert (await log.status()).alarms == ["NOSPACE"]
        with pytest.raises(NoSpaceError):
            await log.put("/q/tiny", b"1")
        assert (await log.get("/q/0")) is not None
        assert await log.delete("/q/", prefix_end("/q/")) == 10
        await log.compact(log.revision)
        with pytest.raises(NoSpaceError):  # still alarmed until disarmed
            await log.put("/q/tiny", b"1")
        await log.disarm()
        assert (await log.status()).alarms == []
        assert await log.put("/q/tiny", b"1") == log.revision
    finally:
        await log.close()


async def test_failed_commit_fails_the_whole_batch_and_keeps_the_index(log: RevisionLog, db_path: Path) -> None:
    await log.put("/ok", b"1")
    with sqlite3.connect(db_path) as raw:
        raw.execute("CREATE TRIGGER refuse BEFORE INSERT ON kv WHEN NEW.name = '/poison' BEGIN SELECT RAISE(ABORT, 'disk says no'); END")
    results = await asyncio.gather(
        log.put("/a", b"1"), log.update("/ok", b"2", mod_revision=1), log.put("/poison", b"x"), log.put("/b", b"1"),
        return_exceptions=True,
    )
    assert all(isinstance(r, BackendError) and "disk says no" in str(r) for r in results)
    assert log.revision == 1
    assert await log.get("/a") is None and (await log.get("/ok")).mod_revision == 1  # type: ignore[union-attr]
    assert (await log.update("/ok", b"2", mod_revision=1)).revision == 2  # the index was not advanced
    assert (await log.status()).keys == 1


async def test_the_file_cannot_be_opened_twice(log: RevisionLog, db_path: Path, clock: VirtualClock) -> None:
    with pytest.raises(StoreLockedError, match="in use by another process"):
        await RevisionLog.open(db_path, clock=clock)


async def test_reopen_rebuilds_the_index(db_path: Path, clock: VirtualClock) -> None:
    log = await RevisionLog.open(db_path, clock=clock)
    await log.put("/a", b"1")
    await log.put("/a", b"2")
    await log.put("/b", b"1")
    await log.delete("/b")
    await log.close()
    log = await RevisionLog.open(db_path, clock=clock)
    try:
        assert log.revision == 4 and (await log.status()).keys == 1
        assert not (await log.create("/a", b"again")).succeeded
        assert (await log.update("/a", b"3", mod_revision=2)).succeeded
        assert await log.get("/a") == KeyValue("/a", b"3", 1, 5, 3)
        assert (await log.create("/b", b"back")).succeeded
    finally:
        await log.close()


async def test_a_reopened_log_lists_old_keys_beside_keys_created_before_the_first_list(
        db_path: Path, clock: VirtualClock) -> None:
    """After a restart, writes that come before anyone lists must not hide what the file held."""
    log = await RevisionLog.open(db_path, clock=clock)
    for i in range(5):
        await log.create(f"/registry/d/old-{i}", b"v")
    await log.close()
    log = await RevisionLog.open(db_path, clock=clock)
    try:
        for i in range(3):
            await log.create(f"/registry/d/new-{i}", b"v")
        listed = await log.range("/registry/d/", prefix_end("/registry/d/"))
        assert [kv.key for kv in listed.kvs] == [f"/registry/d/new-{i}" for i in range(3)] + [
            f"/registry/d/old-{i}" for i in range(5)]
        assert listed.count == 8
    finally:
        await log.close()


async def test_automatic_compaction_keeps_the_retained_revisions(db_path: Path, clock: VirtualClock) -> None:
    log = await RevisionLog.open(db_path, clock=clock, auto_compact_retention=5, auto_compact_interval=300)
    try:
        for i in range(20):
            await log.put("/auto", str(i).encode())
        await clock.advance(299)
        assert log.compact_revision == 0
        await clock.advance(1)
        assert log.compact_revision == 15
        assert (await log.get("/auto", revision=15)).value == b"14"  # type: ignore[union-attr]
        with pytest.raises(CompactedError):
            await log.get("/auto", revision=14)
    finally:
        await log.close()


async def test_status_reports_sizes(log: RevisionLog, db_path: Path) -> None:
    for i in range(50):
        await log.put(f"/s/{i}", bytes(1024))
    status = await log.status()
    assert status.revision == 50 and status.keys == 50
    assert status.db_size_in_use >= 50 * 1024
    assert status.db_size >= db_path.stat().st_size


async def test_bad_open_arguments(tmp_path: Path, clock: VirtualClock) -> None:
    with pytest.raises(ValueError, match="synchronous must be one of"):
        await RevisionLog.open(tmp_path / "x.db", clock=clock, synchronous="OFF")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        await RevisionLog.open(tmp_path / "nope" / "x.db", clock=clock)


async def test_a_failed_commit_also_fails_the_batch_queued_behind_it(log: RevisionLog, db_path: Path) -> None:
    await log.put("/base", b"0")
    with sqlite3.connect(db_path) as raw:
        raw.execute("CREATE TRIGGER refuse BEFORE INSERT ON kv WHEN NEW.name = '/poison' BEGIN SELECT RAISE(ABORT, 'disk says no'); END")
    # 40 writers split into two pipelined group commits; the poison sits in the second one.
    calls = [log.put(f"/p/{i}", b"v") for i in range(30)] + [log.put("/poison", b"x")] + [log.put(f"/p/{i}", b"v") for i in range(30, 39)]
    results = await asyncio.gather(*calls, return_exceptions=True)
    committed = [r for r in results if isinstance(r, int)]
    failed = [r for r in results if isinstance(r, BackendError)]
    assert committed == list(range(2, 2 + len(committed))) and 0 < len(committed) < 40
    assert len(committed) + len(failed) == 40
    listing = await log.range("/p/", prefix_end("/p/"))
    assert sorted(kv.mod_revision for kv in listing.kvs) == committed
    assert log.revision == 1 + len(committed)

    # Now the poison in the first of two batches: the second was evaluated on top of it and fails too.
    calls = [log.put("/poison", b"x")] + [log.put(f"/q/{i}", b"v") for i in range(39)]
    results = await asyncio.gather(*calls, return_exceptions=True)
    assert all(isinstance(r, BackendError) for r in results)
    assert (await log.range("/q/", prefix_end("/q/"), count_only=True)).count == 0
    before = log.revision
    assert await asyncio.gather(*(log.put(f"/r/{i}", b"v") for i in range(40))) == list(range(before + 1, before + 41))


async def test_backup_is_a_consistent_copy_that_opens_as_a_store(log: RevisionLog, tmp_path: Path, clock: VirtualClock) -> None:
    for i in range(20):
        await log.put(f"/b/{i % 4}", str(i).encode())
    snapshot = tmp_path / "snap.db"
    writes = asyncio.gather(*(log.put(f"/b/{i % 4}", b"during") for i in range(20)))
    revision = await log.backup(snapshot)
    await writes
    assert 20 <= revision <= 40
    with pytest.raises(FileExistsError):
        await log.backup(snapshot)
    restored = await RevisionLog.open(snapshot, clock=clock)
    try:
        assert restored.revision == revision
        expected = await log.range("/b/", prefix_end("/b/"), revision=revision)
        assert (await restored.range("/b/", prefix_end("/b/"))).kvs == expected.kvs
    finally:
        await restored.close()


async def test_paging_a_past_revision_while_keys_change(log: RevisionLog) -> None:
    for i in range(30):
        await log.put(f"/pods/p{i:02}", f"v{i}".encode())
    at = log.revision
    snapshot = (await log.range("/pods/", prefix_end("/pods/"))).kvs
    for i in range(0, 30, 3):
        await log.put(f"/pods/p{i:02}", b"changed")
    for i in range(1, 30, 6):
        await log.delete(f"/pods/p{i:02}")
    for i in range(5):
        await log.put(f"/pods/p{i:02}x", b"new")
    pages, start = [], "/pods/"
    while True:
        page = await log.range(start, prefix_end("/pods/"), revision=at, limit=7)
        assert page.revision == at and page.count == 30 - sum(len(p) for p in pages)
        pages.append(page.kvs)
        if not page.more:
            break
        start = page.kvs[-1].key + "\0"
    assert [kv for p in pages for kv in p] == snapshot
    assert [len(p) for p in pages] == [7, 7, 7, 7, 2]
