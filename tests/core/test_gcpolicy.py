"""The serving process' collector policy: every collection freezes its survivors; uninstall undoes it."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import sys
import weakref
from collections.abc import Iterator

import pytest

from kconsole import gcpolicy


def test_collections_freeze_survivors_and_uninstall_restores() -> None:
    before = gc.get_threshold()
    gcpolicy.install(12_345)
    try:
        assert gcpolicy.installed() and gc.get_threshold()[0] == 12_345
        survivor = [{"kind": "Pod"} for _ in range(1000)]
        gc.unfreeze()
        gc.collect()
        assert gc.get_freeze_count() >= len(survivor), "survivors of a full collection are frozen"
        frozen = gc.get_freeze_count()
        young = [{"kind": "Pod", "spec": {}} for _ in range(500)]
        gc.collect(0)
        assert gc.get_freeze_count() >= frozen + len(young), "survivors of a young collection are frozen too"
        assert not gc.get_objects(generation=1), "nothing is left for the middle generation to walk again"
        garbage: list[object] = []
        garbage.append(garbage)  # a cycle made after the freeze is still collected
        del garbage
        assert gc.collect() >= 1
    finally:
        gcpolicy.uninstall()
    assert not gcpolicy.installed() and gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_nonsense_threshold_is_refused() -> None:
    with pytest.raises(ValueError, match="young_threshold"):
        gcpolicy.install(0)
    assert not gcpolicy.installed()


def test_cycles_frozen_while_alive_are_reclaimed_once_the_heap_doubles(monkeypatch: pytest.MonkeyPatch) -> None:
    class Node:
        def __init__(self) -> None:
            self.me = self

    monkeypatch.setattr(gcpolicy, "SWEEP_FLOOR", 0)
    gcpolicy.install()
    try:
        node = Node()
        gone = weakref.ref(node)
        gc.collect(0)
        assert gc.get_freeze_count() and gcpolicy.sweeps() == 0, "a live cycle is frozen like everything else"
        del node
        gc.collect()
        assert gone() is not None, "a frozen cycle is not reclaimed before the heap grew"
        grown = [[i] for i in range(sys.getallocatedblocks())]  # 2-3 blocks each
        gc.collect(0)
        assert gone() is not None, "growing the heap only arms the sweep"
        gc.collect()
        assert gone() is None, "the next full pass reclaimed the dropped cycle"
        assert gcpolicy.sweeps() == 1 and gc.get_freeze_count() >= len(grown), "survivors are frozen again"
    finally:
        gcpolicy.uninstall()


class _Node:
    def __init__(self) -> None:
        self.me = self


def _dropped_frozen_cycle() -> "weakref.ref[_Node]":
    """A cycle frozen while alive, then dropped: only a sweep reclaims it."""
    node = _Node()
    gone = weakref.ref(node)
    gc.collect(0)
    del node
    return gone


def _grow_heap(factor: float, base: int) -> list[list[int]]:
    """Live objects until the heap holds ``factor`` times ``base`` allocated blocks."""
    grown: list[list[int]] = []
    while sys.getallocatedblocks() < factor * base:
        grown.extend([i] for i in range(1_000))
    return grown


@contextlib.contextmanager
def _policy(monkeypatch: pytest.MonkeyPatch, settle_s: float) -> Iterator[tuple[int, int]]:
    """The policy installed with no sweep floor: (sweeps so far, allocated blocks at install)."""
    monkeypatch.setattr(gcpolicy, "SWEEP_FLOOR", 0)
    monkeypatch.setattr(gcpolicy, "SETTLE_S", settle_s)
    gcpolicy.install()
    try:
        yield gcpolicy.sweeps(), sys.getallocatedblocks()
    finally:
        gcpolicy.uninstall()


async def _until_reclaimed(gone: "weakref.ref[_Node]", seconds: float = 5.0) -> None:
    """Let the loop run (the sweep waits on its timers, in real time) until the cycle is reclaimed."""
    for _ in range(int(seconds / 0.01)):
        if gone() is None:
            return
        await asyncio.sleep(0.01)


async def test_on_an_event_loop_the_sweep_waits_until_the_heap_stops_growing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A serving loop runs the due full pass itself (CPython's own needs a quarter of the heap promoted),
    but not in the middle of a burst that is still growing the heap."""
    with _policy(monkeypatch, 0.03) as (swept, base):
        gone = _dropped_frozen_cycle()
        grown = _grow_heap(2.1, base)  # the sweep is due (the heap doubled), not past the allowance
        gc.collect(0)
        await asyncio.sleep(0)
        assert gone() is not None and gcpolicy.sweeps() == swept, "a due sweep does not run at once"
        burst = []
        for _ in range(4):  # a burst: the heap grows ~2% between checks (quiet is under 0.12% in 30 ms)
            burst.extend(_grow_heap(1.02, sys.getallocatedblocks()))
            await asyncio.sleep(0.01)
        assert gone() is not None and gcpolicy.sweeps() == swept, "not while the heap grows fast"
        await _until_reclaimed(gone)
        assert gone() is None, "once the heap stopped growing the full pass reclaimed the dropped cycle"
        assert gcpolicy.sweeps() == swept + 1 and gc.get_freeze_count() >= len(grown) + len(burst), \
            "survivors are frozen again"


async def test_a_burst_that_grows_the_heap_past_the_allowance_is_swept_at_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The wait is bounded by the heap: past BURST_ALLOWANCE times the mark the sweep runs on the next turn."""
    with _policy(monkeypatch, 3600.0) as (swept, base):
        gone = _dropped_frozen_cycle()
        grown = _grow_heap(2.1, base)
        gc.collect(0)
        await asyncio.sleep(0)
        assert gone() is not None and gcpolicy.sweeps() == swept, "due, waiting for the burst to end"
        more = _grow_heap(2.6, base)  # past 1.25 times the mark (twice the heap at install)
        gc.collect(0)
        assert gone() is not None, "the collector's callback only asks for the pass"
        await asyncio.sleep(0)
        assert gone() is None and gcpolicy.sweeps() == swept + 1, "the loop's next turn ran the full pass"
        assert gc.get_freeze_count() >= len(grown) + len(more), "survivors are frozen again"


async def test_a_sweep_due_when_its_loop_ended_is_armed_again_on_the_next(monkeypatch: pytest.MonkeyPatch) -> None:
    with _policy(monkeypatch, 0.01) as (swept, base):
        grown: list[list[list[int]]] = []

        def on_another_loop() -> None:
            async def grow() -> None:
                grown.append(_grow_heap(2.1, base))
                gc.collect(0)  # due on this loop, which ends before its check

            asyncio.run(grow())

        gone = _dropped_frozen_cycle()
        await asyncio.get_running_loop().run_in_executor(None, on_another_loop)
        assert gone() is not None and gcpolicy.sweeps() == swept
        gc.collect(0)  # the ended loop's sweep is armed on this one
        await _until_reclaimed(gone)
        assert gone() is None and gcpolicy.sweeps() == swept + 1


async def test_a_sweep_made_due_on_another_thread_runs_on_the_serving_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite's thread can run the collection that finds the heap doubled: the loop still runs the sweep."""
    with _policy(monkeypatch, 0.01) as (swept, base):
        gone = _dropped_frozen_cycle()
        grown: list[list[list[int]]] = []

        def on_a_worker_thread() -> None:
            grown.append(_grow_heap(2.1, base))
            gc.collect(0)

        await asyncio.get_running_loop().run_in_executor(None, on_a_worker_thread)
        await _until_reclaimed(gone)
        assert gone() is None and gcpolicy.sweeps() == swept + 1, "the loop ran the sweep the worker found due"
