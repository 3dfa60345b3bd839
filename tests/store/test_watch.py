"""Watches: pushed on commit, exactly once across history replay and live, bounded per watcher."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from kconsole.clock import VirtualClock
from kconsole.store import watch as watch_module
from kconsole.store.kv import Event, Put, WatchResponse, prefix_end
from kconsole.store.revlog import RevisionLog


def revisions(responses: list[WatchResponse]) -> list[int]:
    return [e.kv.mod_revision for r in responses for e in r.events]


async def collect(log: RevisionLog, key: str, end: str | None, start: int, until: int) -> list[WatchResponse]:
    out: list[WatchResponse] = []
    async with log.watch(key, end, start_revision=start) as w:
        async for response in w:
            out.append(response)
            if response.canceled or (response.events and response.events[-1].kv.mod_revision >= until):
                break
    return out


async def test_live_events_arrive_in_order_with_prev_kv(log: RevisionLog) -> None:
    w = log.watch("/pods/", prefix_end("/pods/"))
    await log.put("/pods/a", b"1")
    await log.put("/other", b"x")
    await log.put("/pods/a", b"2")
    await log.delete("/pods/a")
    got: list[Event] = []
    async for response in w:
        got.extend(response.events)
        if len(got) == 3:
            break
    await w.close()
    assert [(e.type, e.kv.key, e.kv.mod_revision, e.kv.value) for e in got] == [
        ("PUT", "/pods/a", 1, b"1"), ("PUT", "/pods/a", 3, b"2"), ("DELETE", "/pods/a", 4, b""),
    ]
    assert got[0].prev_kv is None
    assert got[1].prev_kv is not None and got[1].prev_kv.value == b"1"
    assert got[2].prev_kv is not None and (got[2].prev_kv.value, got[2].prev_kv.version) == (b"2", 2)
    assert got[2].kv.version == 0


async def test_events_are_pushed_on_commit_and_settle_waits_for_them(log: RevisionLog, clock: VirtualClock) -> None:
    seen: list[int] = []

    async def consume() -> None:
        async for response in log.watch("/x"):
            seen.extend(revisions([response]))

    consumer = asyncio.create_task(consume())
    await clock.settle()
    writer = asyncio.create_task(log.put("/x", b"1"))
    await clock.settle()
    assert writer.done() and seen == [1]
    consumer.cancel()


async def test_history_replay_hands_over_to_live_without_gap_or_duplicate(
    log: RevisionLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(watch_module, "HISTORY_PAGE", 7)  # many pages, so live writes land mid-replay
    for i in range(40):
        await log.put(f"/h/{i % 5}", str(i).encode())
    w = log.watch("/h/", prefix_end("/h/"), start_revision=3)
    got: list[int] = []
    live_writes = 0
    async for response in w:
        got.extend(revisions([response]))
        if live_writes < 30:
            await asyncio.gather(*(log.put(f"/h/{j % 5}", b"live") for j in range(3)))
            live_writes += 3
        if got and got[-1] == 70:
            break
    await w.close()
    assert got == list(range(3, 71))


async def test_replayed_events_carry_prev_kv(log: RevisionLog) -> None:
    await log.put("/p", b"1")
    await log.put("/p", b"2")
    await log.delete("/p")
    responses = await collect(log, "/p", None, 1, 3)
    events = [e for r in responses for e in r.events]
    assert [(e.type, e.prev_kv.value if e.prev_kv else None) for e in events] == [
        ("PUT", None), ("PUT", b"1"), ("DELETE", b"2"),
    ]


async def test_watch_from_a_compacted_revision_is_cancelled(log: RevisionLog) -> None:
    for i in range(6):
        await log.put("/c", str(i).encode())
    await log.compact(4)
    responses = [r async for r in log.watch("/c", start_revision=2)]
    assert len(responses) == 1
    assert responses[0].canceled and responses[0].compact_revision == 4 and responses[0].events == []
    ok = await collect(log, "/c", None, 4, 6)
    assert revisions(ok) == [4, 5, 6]


async def test_compaction_during_replay_cancels_instead_of_skipping(
    log: RevisionLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(watch_module, "HISTORY_PAGE", 4)
    for i in range(20):
        await log.put("/r", str(i).encode())
    w = log.watch("/r", start_revision=1)
    first = await w.__anext__()
    await log.compact(15)
    rest = [r async for r in w]
    assert revisions([first]) == [1, 2, 3]
    assert rest[-1].canceled and rest[-1].compact_revision == 15
    assert all(e.kv.mod_revision < 15 for r in rest for e in r.events)


async def test_progress_notifications_when_idle(log: RevisionLog, clock: VirtualClock) -> None:
    await log.put("/idle", b"1")
    w = log.watch("/idle", progress_notify=True)
    got: list[WatchResponse] = []

    async def consume() -> None:
        async for response in w:
            got.append(response)

    consumer = asyncio.create_task(consume())
    await clock.advance(9)
    assert got == []
    await clock.advance(1)
    assert [(r.progress, r.revision) for r in got] == [(True, 1)]
    await log.put("/idle", b"2")
    await clock.advance(10)  # an event was delivered in this interval: no progress
    assert [r.progress for r in got] == [True, False]
    await clock.advance(10)
    assert [(r.progress, r.revision) for r in got] == [(True, 1), (False, 2), (True, 2)]
    await w.close()
    await clock.settle()
    assert consumer.done()


async def test_a_slow_watcher_is_cancelled_without_holding_anyone_up(db_path: Path, clock: VirtualClock) -> None:
    log = await RevisionLog.open(db_path, clock=clock, watch_buffer=50)
    try:
        slow = log.watch("/s/", prefix_end("/s/"))
        fast_seen: list[int] = []

        async def fast() -> None:
            async for response in log.watch("/s/", prefix_end("/s/")):
                fast_seen.extend(revisions([response]))

        consumer = asyncio.create_task(fast())
        await clock.settle()
        for batch in range(10):
            await asyncio.gather(*(log.put(f"/s/{i}", b"v") for i in range(20)))
        await clock.settle()
        assert log.revision == 200
        assert fast_seen == list(range(1, 201))
        responses = [r async for r in slow]
        assert len(responses) == 1 and responses[0].canceled and responses[0].compact_revision == 0
        consumer.cancel()
    finally:
        await log.close()


async def test_single_key_watch_and_no_prev_kv(log: RevisionLog) -> None:
    w = log.watch("/one", prev_kv=False)
    await log.put("/one/more", b"no")
    await log.put("/one", b"1")
    await log.put("/one", b"2")
    got = []
    async for response in w:
        got.extend(response.events)
        if len(got) == 2:
            break
    assert [(e.kv.key, e.kv.mod_revision, e.prev_kv) for e in got] == [("/one", 2, None), ("/one", 3, None)]


async def test_closing_the_log_ends_watches_after_buffered_events(db_path: Path, clock: VirtualClock) -> None:
    log = await RevisionLog.open(db_path, clock=clock)
    w = log.watch("/z")
    await log.put("/z", b"1")
    await log.close()
    responses = [r async for r in w]
    assert revisions(responses) == [1]


async def test_watch_from_a_future_revision_waits_for_it(log: RevisionLog) -> None:
    w = log.watch("/f", start_revision=3)
    for i in range(4):
        await log.put("/f", str(i).encode())
    first = await w.__anext__()
    assert revisions([first]) == [3]
    second = await w.__anext__()
    assert revisions([second]) == [4]
    await w.close()


async def test_a_dropped_watcher_is_forgotten(log: RevisionLog) -> None:
    import gc
    import weakref

    w = log.watch("/gone", progress_notify=True)
    await log.put("/gone", b"1")
    ref = weakref.ref(w)
    del w
    gc.collect()
    assert ref() is None  # neither the log nor its progress timer keeps it (and its buffer) alive
    assert await log.put("/gone", b"2") == 2


async def test_closing_mid_replay_ends_the_stream_without_a_gap(
    db_path: Path, clock: VirtualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(watch_module, "HISTORY_PAGE", 3)
    log = await RevisionLog.open(db_path, clock=clock)
    for i in range(10):
        await log.put("/m", str(i).encode())
    w = log.watch("/m", start_revision=1)
    first = await w.__anext__()
    await log.put("/m", b"live")  # held until the replay is done
    await log.close()
    got = revisions([first]) + revisions([r async for r in w])
    assert got == list(range(1, len(got) + 1))  # a prefix of the history, never 1,2,11


async def test_each_watcher_gets_exactly_its_keys_of_a_batch_spanning_many(log: RevisionLog) -> None:
    """One commit writes /b, /d and /f: a watcher sees the batch's writes inside its range (even
    when the range lies between the batch's first and last key) and nothing when the range misses
    them all, its end being exclusive."""
    ranges: dict[str, tuple[str, str | None]] = {
        "key /b": ("/b", None),
        "key /e": ("/e", None),
        "between": ("/c", "/e"),
        "up to /b": ("/a", "/b"),
        "from /f on": ("/f", "\0"),
        "after": ("/g", "\0"),
    }
    watchers = {label: log.watch(key, end) for label, (key, end) in ranges.items()}
    batch = await log.txn([], [Put("/b", b"1"), Put("/d", b"1"), Put("/f", b"1")])
    # A second commit writes a key in every range, so each watcher's first response comes.
    marks = await log.txn([], [Put(key, b"2") for key, _ in ranges.values()])
    seen: dict[str, list[tuple[str, int]]] = {}
    for label, w in watchers.items():
        response = await anext(aiter(w))
        seen[label] = [(e.kv.key, e.kv.mod_revision) for e in response.events]
        await w.close()
    one, two = batch.revision, marks.revision
    assert seen == {
        "key /b": [("/b", one)],
        "key /e": [("/e", two)],
        "between": [("/d", one)],
        "up to /b": [("/a", two)],
        "from /f on": [("/f", one)],
        "after": [("/g", two)],
    }

