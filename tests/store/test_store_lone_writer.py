"""A small commit on the event loop (a lone writer's txn in its own task, or the flusher's batch of a
few) lets the loop turn while its journal record is on the device: what runs in that turn sees the
log as it was, queues behind the write, and a cancelled writer's write still lands (it was committed
before the turn). Watchers are fed a commit before the writers waiting on it are woken."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from kconsole.store.kv import KeyValue
from kconsole.store.revlog import RevisionLog


def _during_record_write(log: RevisionLog, action: Callable[[], None]) -> list[bool]:
    """Run ``action`` right after the next journal record is started (the write's turn follows);
    returns a list that records whether a lone writer's commit was under way then."""
    assert log._journal is not None
    real = log._journal.start
    seen: list[bool] = []

    def start(first: int, last: int, rows: Any) -> None:
        real(first, last, rows)
        del log._journal.start  # type: ignore[union-attr]
        seen.append(log._lone)
        action()

    log._journal.start = start  # type: ignore[method-assign]
    return seen


def _read_and_write_meanwhile(
    log: RevisionLog, read: str, write: str, value: bytes,
) -> tuple[list[bool], dict[str, asyncio.Task[Any]]]:
    """:func:`_during_record_write` with a read of ``read`` and a put of ``write`` as the action;
    their tasks come back as ``"read"`` and ``"write"``."""
    tasks: dict[str, asyncio.Task[Any]] = {}

    def meanwhile() -> None:
        tasks["read"] = asyncio.create_task(log.get(read))
        tasks["write"] = asyncio.create_task(log.put(write, value))

    return _during_record_write(log, meanwhile), tasks


async def test_what_runs_while_a_lone_write_is_on_the_device_sees_it_only_once_durable_and_queues_behind(
    log: RevisionLog,
) -> None:
    await log.put("/a", b"1")
    seen, tasks = _read_and_write_meanwhile(log, "/b", "/c", b"3")
    writer = asyncio.create_task(log.put("/b", b"2"))
    await asyncio.wait([writer])
    assert seen == [True]
    assert writer.result() == 2
    assert await tasks["read"] is None  # read in the write's turn: not yet durable, not yet visible
    assert await tasks["write"] == 3  # queued behind it, committed after it
    assert await log.get("/b") == KeyValue("/b", b"2", 2, 2, 1, 0)
    assert await log.get("/c") == KeyValue("/c", b"3", 3, 3, 1, 0)


async def test_a_lone_writer_cancelled_while_its_record_is_written_still_commits(log: RevisionLog) -> None:
    await log.put("/a", b"1")
    writer: asyncio.Task[int] | None = None

    def cancel() -> None:
        assert writer is not None
        writer.cancel()

    seen = _during_record_write(log, cancel)
    writer = asyncio.create_task(log.put("/b", b"2"))
    await asyncio.wait([writer])
    assert seen == [True]
    assert writer.cancelled()
    assert log.revision == 2
    assert await log.get("/b") == KeyValue("/b", b"2", 2, 2, 1, 0)
    assert await log.put("/c", b"3") == 3


async def test_the_flushers_small_batch_lets_the_loop_turn_while_its_record_is_on_the_device(
    log: RevisionLog,
) -> None:
    await log.put("/a", b"1")
    seen, tasks = _read_and_write_meanwhile(log, "/b", "/d", b"4")
    # Two writers at once: neither is alone, the flusher commits both in one batch on the loop.
    first, second = asyncio.create_task(log.put("/b", b"2")), asyncio.create_task(log.put("/c", b"3"))
    await asyncio.wait([first, second])
    assert seen == [False]  # the flusher's commit, not a lone writer's
    assert (first.result(), second.result()) == (2, 3)
    assert await tasks["read"] is None  # ran during the device write: not durable, not visible yet
    assert await tasks["write"] == 4
    assert await log.get("/b") == KeyValue("/b", b"2", 2, 2, 1, 0)


async def test_a_watcher_hears_of_a_commit_before_its_writers_are_woken(log: RevisionLog) -> None:
    order: list[str] = []
    watcher = log.watch("/w", "/x")

    async def consume() -> None:
        async for resp in watcher:
            order.append("watch " + ",".join(str(e.kv.mod_revision) for e in resp.events))
            return

    async def write(key: str) -> None:
        revision = await log.put(key, b"v")
        order.append(f"answer {revision}")

    consumer = asyncio.create_task(consume())
    await asyncio.sleep(0)  # the consumer waits on the stream
    await asyncio.gather(write("/w1"), write("/w2"))  # two at once: the flusher commits them
    await consumer
    assert order == ["watch 1,2", "answer 1", "answer 2"]
