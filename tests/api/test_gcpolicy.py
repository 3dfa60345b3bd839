"""The serving process' collector policy: every collection freezes its survivors; uninstall undoes it."""

from __future__ import annotations

import gc
import sys

import pytest

from kconsole.api import gcpolicy


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
    import weakref

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


async def test_on_an_event_loop_the_sweep_runs_on_the_next_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    """A serving loop does not wait for CPython's own full pass (it needs a quarter of the heap promoted)."""
    import asyncio
    import weakref

    class Node:
        def __init__(self) -> None:
            self.me = self

    monkeypatch.setattr(gcpolicy, "SWEEP_FLOOR", 0)
    gcpolicy.install()
    swept = gcpolicy.sweeps()
    try:
        node = Node()
        gone = weakref.ref(node)
        gc.collect(0)
        del node
        grown = [[i] for i in range(sys.getallocatedblocks())]  # 2-3 blocks each
        gc.collect(0)
        assert gone() is not None and gcpolicy.sweeps() == swept, "growing the heap only arms the sweep"
        await asyncio.sleep(0)
        assert gone() is None, "the loop's next turn ran the full pass that reclaimed the dropped cycle"
        assert gcpolicy.sweeps() == swept + 1 and gc.get_freeze_count() >= len(grown), "survivors are frozen again"
    finally:
        gcpolicy.uninstall()
