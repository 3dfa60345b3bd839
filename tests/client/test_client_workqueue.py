"""The work queue's upstream semantics, on the virtual clock."""

from __future__ import annotations

import asyncio

import pytest

from kconsole.api.types import StatusError
from kconsole.client.workqueue import QueueShutDown, WorkQueue, run_workers
from kconsole.clock import VirtualClock


async def drain_now(q: WorkQueue) -> list[object]:
    """Everything get() hands out without waiting, each marked done."""
    out = []
    while len(q):
        item = await q.get()
        q.done(item)
        out.append(item)
    return out


async def take(q: WorkQueue) -> object:
    return await asyncio.wait_for(q.get(), 1)


@pytest.mark.parametrize(
    "adds, expected",
    [
        (["a"], ["a"]),
        (["a", "a", "a"], ["a"]),
        (["a", "b", "a", "c", "b"], ["a", "b", "c"]),
        ([("ns", 1), ("ns", 1), ("ns", 2)], [("ns", 1), ("ns", 2)]),
    ],
)
async def test_add_deduplicates_and_keeps_fifo_order(adds: list[object], expected: list[object]) -> None:
    q = WorkQueue(VirtualClock())
    for item in adds:
        q.add(item)
    assert len(q) == len(expected)
    got = [await take(q) for _ in expected]
    assert got == expected
    assert len(q) == 0


async def test_item_added_while_processing_is_requeued_only_after_done() -> None:
    q = WorkQueue(VirtualClock())
    q.add("a")
    item = await take(q)
    q.add("a")
    q.add("a")
    assert len(q) == 0, "must not hand the same item to a second worker"
    second = asyncio.create_task(q.get())
    await asyncio.sleep(0)
    assert not second.done()
    q.done(item)
    assert await asyncio.wait_for(second, 1) == "a"
    q.done("a")
    assert len(q) == 0 and q.processing == 0


async def test_done_without_re_add_does_not_requeue() -> None:
    q = WorkQueue(VirtualClock())
    q.add("a")
    q.done(await take(q))
    assert len(q) == 0


async def test_get_blocks_until_add_and_each_item_goes_to_one_getter() -> None:
    q = WorkQueue(VirtualClock())
    getters = [asyncio.create_task(q.get()) for _ in range(3)]
    await asyncio.sleep(0)
    q.add("x")
    q.add("y")
    await asyncio.sleep(0)
    done = [g for g in getters if g.done()]
    assert sorted(g.result() for g in done) == ["x", "y"]
    q.shutdown()
    pending = [g for g in getters if not g.done()]
    with pytest.raises(QueueShutDown):
        await asyncio.wait_for(pending[0], 1)


async def test_cancelled_getter_does_not_strand_an_item() -> None:
    q = WorkQueue(VirtualClock())
    first = asyncio.create_task(q.get())
    second = asyncio.create_task(q.get())
    await asyncio.sleep(0)
    q.add("a")  # wakes `first` ...
    first.cancel()  # ... which is cancelled before it runs
    await asyncio.gather(first, return_exceptions=True)
    assert await asyncio.wait_for(second, 1) == "a"


async def test_add_after_waits_on_the_clock_and_shorter_delay_wins() -> None:
    clock = VirtualClock()
    q = WorkQueue(clock)
    q.add_after("a", 10)
    q.add_after("a", 30)  # later: ignored
    q.add_after("b", 20)
    q.add_after("b", 5)  # sooner: replaces
    assert len(q) == 0 and q.waiting == 2
    await clock.advance(4.9)
    assert len(q) == 0
    await clock.advance(0.2)
    assert await drain_now(q) == ["b"]
    await clock.advance(4.7)
    assert len(q) == 0
    await clock.advance(0.2)
    assert await drain_now(q) == ["a"]
    await clock.advance(100)
    assert len(q) == 0, "the replaced and the ignored timers must not fire"


async def test_add_after_zero_adds_now_and_delayed_item_dedups_with_queued() -> None:
    clock = VirtualClock()
    q = WorkQueue(clock)
    q.add_after("a", 0)
    assert len(q) == 1
    q.add_after("a", 1)
    await clock.advance(1)
    assert await drain_now(q) == ["a"]


@pytest.mark.parametrize(
    "base, cap, failures, expected",
    [
        (0.005, 1000.0, 1, [0.005]),
        (0.005, 1000.0, 5, [0.005, 0.01, 0.02, 0.04, 0.08]),
        (1.0, 10.0, 6, [1, 2, 4, 8, 10, 10]),
        (0.005, 1000.0, 200, None),  # must not overflow; ends at the cap
    ],
)
def test_rate_limit_backoff_is_exponential_and_capped(
    base: float, cap: float, failures: int, expected: list[float] | None
) -> None:
    q = WorkQueue(VirtualClock(), base_delay=base, max_delay=cap)
    delays = [q.when("k") for _ in range(failures)]
    if expected is not None:
        assert delays == pytest.approx(expected)
    assert delays[-1] == cap or failures < 10
    assert q.num_requeues("k") == failures
    assert q.num_requeues("other") == 0
    q.forget("k")
    assert q.num_requeues("k") == 0
    assert q.when("k") == base


async def test_add_rate_limited_requeues_after_backoff_on_the_clock() -> None:
    clock = VirtualClock()
    q = WorkQueue(clock, base_delay=1.0, max_delay=60.0)
    q.add_rate_limited("a")  # 1 s
    q.add_rate_limited("a")  # 2 s, but the 1 s timer is sooner and stays
    assert q.num_requeues("a") == 2
    await clock.advance(0.99)
    assert len(q) == 0
    await clock.advance(0.02)
    assert await drain_now(q) == ["a"]
    q.add_rate_limited("a")  # third failure: 4 s
    await clock.advance(3.9)
    assert len(q) == 0
    await clock.advance(0.2)
    assert await drain_now(q) == ["a"]


async def test_shutdown_hands_out_queued_items_then_raises_and_ignores_adds() -> None:
    clock = VirtualClock()
    q = WorkQueue(clock)
    q.add("a")
    q.add_after("later", 5)
    q.shutdown()
    q.add("b")
    assert await take(q) == "a"
    with pytest.raises(QueueShutDown):
        await take(q)
    await clock.advance(10)
    assert len(q) == 0, "delayed items are dropped at shutdown"


async def test_shutdown_with_drain_waits_for_items_in_flight() -> None:
    q = WorkQueue(VirtualClock())
    q.add("a")
    item = await take(q)
    drain = asyncio.create_task(q.shutdown_with_drain())
    await asyncio.sleep(0)
    assert not drain.done()
    q.done(item)
    await asyncio.wait_for(drain, 1)


def test_bad_delays_are_rejected_with_a_clear_message() -> None:
    with pytest.raises(ValueError, match="base_delay"):
        WorkQueue(VirtualClock(), name="x", base_delay=0)


async def test_run_workers_retries_failures_with_backoff_and_forgets_on_success() -> None:
    clock = VirtualClock()
    q = WorkQueue(clock, name="t", base_delay=1.0, max_delay=100.0)
    attempts: dict[str, list[float]] = {}

    async def sync(key: str) -> None:
        attempts.setdefault(key, []).append(clock.now() - start)
        if key == "flaky" and len(attempts[key]) < 4:
            raise RuntimeError("not yet")
        if key == "conflict" and len(attempts[key]) < 2:
            raise StatusError.conflict("pods", "p")

    start = clock.now()
    runner = asyncio.create_task(run_workers(q, 2, sync))
    q.add("flaky")
    q.add("ok")
    q.add("conflict")
    await clock.advance(20)
    assert attempts["ok"] == [0]
    assert attempts["conflict"] == [0, 1.0]
    # back-off 1, 2, 4 s between the four attempts
    assert attempts["flaky"] == [0, 1.0, 3.0, 7.0]
    assert q.num_requeues("flaky") == 0, "success forgets the failures"
    assert q.processing == 0 and len(q) == 0
    q.shutdown()
    await asyncio.wait_for(runner, 1)


async def test_run_workers_never_processes_one_key_concurrently() -> None:
    clock = VirtualClock()
    q = WorkQueue(clock, name="t")
    active: set[str] = set()
    overlaps = 0
    runs = 0

    async def sync(key: str) -> None:
        nonlocal overlaps, runs
        if key in active:
            overlaps += 1
        active.add(key)
        runs += 1
        await clock.sleep(1)
        active.discard(key)

    runner = asyncio.create_task(run_workers(q, 4, sync))
    for _ in range(3):
        for k in ("a", "b"):
            q.add(k)
        await clock.advance(0.25)
    await clock.advance(5)
    assert overlaps == 0
    # each key: first run, then exactly one more for all the adds made while it ran
    assert runs == 4
    runner.cancel()
    await asyncio.gather(runner, return_exceptions=True)


async def test_run_workers_requeue_after_returned_delay() -> None:
    clock = VirtualClock()
    q = WorkQueue(clock)
    seen: list[float] = []

    async def sync(key: str) -> float | None:
        seen.append(clock.now() - start)
        return 30.0 if len(seen) < 3 else None

    start = clock.now()
    runner = asyncio.create_task(run_workers(q, 1, sync))
    q.add("deadline")
    await clock.advance(100)
    assert seen == [0, 30.0, 60.0]
    q.shutdown()
    await asyncio.wait_for(runner, 1)


async def test_workers_with_non_suspending_syncs_still_let_other_tasks_run() -> None:
    q = WorkQueue(VirtualClock())
    for i in range(1000):
        q.add(i)
    progress: list[int] = []
    synced = 0

    async def sync(item: int) -> None:
        nonlocal synced
        synced += 1  # never awaits: a pure cache read

    async def other() -> None:
        while synced < 1000:
            progress.append(synced)
            await asyncio.sleep(0)

    bystander = asyncio.create_task(other())
    runner = asyncio.create_task(run_workers(q, 1, sync))
    await asyncio.wait_for(bystander, 5)
    assert len(progress) > 5, "the worker must yield while working through a long queue"
    q.shutdown()
    await asyncio.wait_for(runner, 1)
