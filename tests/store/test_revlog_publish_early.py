"""``publish_early`` (a Raft member's revision log): transactions are answered and watchers fed
before the SQLite commit, yet every read sees what was answered, and a failed commit breaks the
log instead of leaving it answering from a state its file does not hold."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from kconsole.clock import VirtualClock
from kconsole.store.kv import Compare, Get, Put, prefix_end
from kconsole.store.revlog import BackendError, RevisionLog


async def test_answered_writes_are_readable_at_once_and_at_their_revision(db_path: Path, clock: VirtualClock) -> None:
    log = await RevisionLog.open(db_path, clock=clock)
    log.publish_early = True
    try:
        watcher = log.watch("/e/", prefix_end("/e/"))
        txns = [([Compare(f"/e/{i}", "mod", "=", 0)], [Put(f"/e/{i}", b"v%d" % i)], [Get(f"/e/{i}")]) for i in range(40)]
        results = await log.txn_batch(txns)
        assert log.flushed_revision < log.revision == 40  # answered before the commit landed
        assert [r.revision for r in results] == list(range(1, 41))  # type: ignore[union-attr]
        for i in (0, 17, 39):  # at a past revision: served from SQLite once the commits caught up
            kv = await log.get(f"/e/{i}", revision=i + 1)
            assert kv is not None and kv.value == b"v%d" % i
        assert log.flushed_revision == 40
        page = await log.range("/e/", prefix_end("/e/"), revision=20)
        assert page.count == 20
        events = []
        async for resp in watcher:
            events.extend(resp.events)
            if len(events) == 40:
                break
        assert [e.kv.mod_revision for e in events] == list(range(1, 41))
        history = await log.read_history("/e/", prefix_end("/e/"), 0, 1 << 62, 100)
        assert len(history) == 40
    finally:
        await log.close()
    again = await RevisionLog.open(db_path, clock=clock)
    try:
        assert again.revision == 40
    finally:
        await again.close()


async def test_a_failed_commit_after_answering_breaks_the_log(db_path: Path, clock: VirtualClock) -> None:
    log = await RevisionLog.open(db_path, clock=clock)
    log.publish_early = True
    try:
        await log.put("/ok", b"1")
        with sqlite3.connect(db_path) as raw:
            raw.execute("CREATE TRIGGER refuse BEFORE INSERT ON kv WHEN NEW.name = '/poison' BEGIN SELECT RAISE(ABORT, 'disk says no'); END")
        results = await log.txn_batch([([], [Put("/poison", b"x")], [])])
        assert results[0] is not None and log.revision == 2  # answered from memory
        with pytest.raises(BackendError, match="disk says no"):
            await log.get("/ok", revision=1)  # waits for the commit, which failed
        with pytest.raises(BackendError):
            await log.put("/after", b"1")  # nothing more is accepted: the owner must reopen from its file
    finally:
        await log.close()
    again = await RevisionLog.open(db_path, clock=clock)
    try:
        assert again.revision == 1 and await again.get("/poison") is None
    finally:
        await again.close()
