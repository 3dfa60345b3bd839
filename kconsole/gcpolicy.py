"""Cycle-collector policy for a process that serves the API.

The watch caches keep every object of the cluster alive: hundreds of thousands of dicts and lists
that hold no reference cycles and are freed by reference counting. CPython's generational collector
walks each of them again in every generation it passes through: a middle-generation pass over the
survivors of ten young passes stopped the event loop for 20-90 ms (the p99 of a write under load),
and a full pass with 20,000 Pods in the caches for 100-600 ms. So the survivors of every collection
are frozen (moved out of the collector's generations): each object is walked once, by the young pass
that finds it alive, and the older passes have nothing to walk. A larger young generation makes the
collector run less often. Frozen objects are still freed by reference counting; only cyclic garbage
among them stays. The API's request path makes none (a create, a conflict and a 404 leave no cycle
behind), but the console makes some (widgets, finished tasks with tracebacks): a cycle that is
alive at some collection and dropped later would stay forever. So, like CPython's own rule for full
passes (only when the long-lived heap grew by a quarter), once the heap has grown by
``SWEEP_GROWTH`` since the last full pass everything is unfrozen, nothing is frozen until the
collector's next full pass has run, and its survivors are frozen again. The heap is measured by
pymalloc's allocated blocks (~0.1 ms to ask): counting the frozen set walks every frozen object
(60-100 ms at two million), and a running total of survivors overcounts without bound when the
frozen objects churn (each new version of a Pod survives a young pass, then the old one is freed). A long-running process pays one
full pause each time its heap grows by that factor: amortised, and bounded. With an event loop
running, the loop runs that full pass itself: left to CPython, it only comes once a quarter of the
old heap was promoted by middle passes, and until then every middle pass walks ten young passes'
survivors (14 such passes, 1 s of the loop, in a 4,000-pod converge).

The heap grows fastest in a burst of writes (each create leaves its object in the caches), which is
when a pause hurts most: with 20,000 Pods cached the full pass takes 70 ms, and at 5,000 creates/s
it holds ~350 requests, the slowest percent of the burst. So the loop's due pass waits (survivors
are still frozen meanwhile) until the heap grows by less than ``QUIET_GROWTH_PER_S`` of itself a
second, checked every ``SETTLE_S``, or until it has grown ``BURST_ALLOWANCE`` times past the mark
that made the pass due, whichever comes first: the wait is bounded by the heap, as the sweep is.

Process-wide, so opt-in: the serving entry points (``kconsole serve``, the benches) install it;
library code and tests do not.
"""

from __future__ import annotations

import asyncio
import gc
import sys
from typing import Any

#: Allocations between young collections (CPython's default is 700).
YOUNG_THRESHOLD = 10_000
#: Growth of the heap (allocated blocks) since the last full pass that lets the next full pass run.
SWEEP_GROWTH = 2.0
#: Below this many allocated blocks (~3 per tracked object) a sweep is not worth a pause.
SWEEP_FLOOR = 600_000
#: Seconds between checks of whether a burst that made a sweep due is over.
SETTLE_S = 0.25
#: A heap growing by less than this share of itself a second is not in a burst.
QUIET_GROWTH_PER_S = 0.04
#: How far past the mark that made it due a burst may grow the heap before the sweep runs anyway.
BURST_ALLOWANCE = 1.25

_state: dict[str, Any] = {"installed": False, "threshold": None, "swept_at": 0, "sweeping": False,
                          "sweeps": 0, "due": 0, "loop": None}


def _freeze_survivors(phase: str, info: dict[str, Any]) -> None:
    if phase != "stop":
        return
    if _state["sweeping"]:
        if info["generation"] < 2:
            return  # let the generations fill so the collector's next full pass walks them all
        _state["sweeping"] = False
        _state["sweeps"] += 1
        _state["swept_at"] = sys.getallocatedblocks()
        gc.freeze()
        return
    gc.freeze()
    blocks = sys.getallocatedblocks()
    due, loop = _state["due"], _state["loop"]
    if due and not loop.is_closed():
        if due > 0 and blocks >= BURST_ALLOWANCE * due:
            _state["due"] = -1  # asked for; the check no longer reschedules itself
            loop.call_soon_threadsafe(_full_pass)  # this collection may run on another thread
        return
    _state["due"] = 0  # (a loop that ended with a sweep due: arm it anew)
    mark = max(SWEEP_FLOOR, SWEEP_GROWTH * _state["swept_at"])
    if blocks >= mark and not _await_quiet(mark, blocks):
        _state["sweeping"] = True
        gc.unfreeze()


def _await_quiet(mark: float, blocks: int) -> bool:
    """On an event loop, schedule the sweep's full pass for when the heap stops growing (a collector
    callback cannot collect); False without one, where CPython's own next full pass is the sweep.
    A collection on another thread (SQLite's) hands the sweep to the loop that last ran one."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        loop = _state["loop"]
        if loop is None or loop.is_closed() or not loop.is_running():
            return False
    _state["due"], _state["loop"] = mark, loop
    loop.call_soon_threadsafe(loop.call_later, SETTLE_S, _settle, loop.time(), blocks)
    return True


def _settle(then: float, before: int) -> None:
    """Run the due sweep if the heap grew slowly since the last check (at ``then``, ``before``
    blocks), else check again later."""
    if not _state["installed"] or _state["due"] <= 0:
        return
    loop = _state["loop"]
    now, blocks = loop.time(), sys.getallocatedblocks()
    if blocks - before <= QUIET_GROWTH_PER_S * (now - then) * blocks:
        _full_pass()
        return
    loop.call_later(SETTLE_S, _settle, now, blocks)


def _full_pass() -> None:
    if _state["installed"] and _state["due"]:
        _state["due"] = 0
        _state["sweeping"] = True
        gc.unfreeze()
        gc.collect()


def install(young_threshold: int = YOUNG_THRESHOLD) -> None:
    """Freeze what exists now and what survives every collection; collect the young less often."""
    if young_threshold < 1:
        raise ValueError(f"young_threshold must be at least 1, got {young_threshold}")
    if _state["installed"]:
        return
    _state["installed"] = True
    _state["threshold"] = gc.get_threshold()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(young_threshold, middle, old)
    gc.callbacks.append(_freeze_survivors)
    gc.freeze()
    _state["swept_at"] = sys.getallocatedblocks()
    _state["sweeping"] = False
    _state["due"] = 0
    try:
        _state["loop"] = asyncio.get_running_loop()
    except RuntimeError:
        _state["loop"] = None


def uninstall() -> None:
    """Back to CPython's behaviour; frozen objects return to the collector."""
    if not _state["installed"]:
        return
    _state["installed"] = False
    if _freeze_survivors in gc.callbacks:
        gc.callbacks.remove(_freeze_survivors)
    gc.set_threshold(*_state["threshold"])
    _state["due"], _state["loop"] = 0, None
    gc.unfreeze()


def installed() -> bool:
    return bool(_state["installed"])


def sweeps() -> int:
    """Full passes run since install because the heap had grown (see the module docstring)."""
    return int(_state["sweeps"])
