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
behind), but a console session makes some (widgets, finished tasks with tracebacks): a cycle that is
alive at some collection and dropped later would stay forever. So, like CPython's own rule for full
passes (only when the long-lived heap grew by a quarter), once the heap has grown by
``SWEEP_GROWTH`` since the last full pass everything is unfrozen, nothing is frozen until the
collector's next full pass has run, and its survivors are frozen again. The heap is measured by
pymalloc's allocated blocks (~0.1 ms to ask): counting the frozen set walks every frozen object
(60-100 ms at two million), and a running total of survivors overcounts without bound when the
frozen objects churn (each new version of a Pod survives a young pass, then the old one is freed). A long session pays one
full pause each time its heap grows by that factor: amortised, and bounded. In a thread running an
event loop that full pass is asked for at once (on the loop's next turn): left to CPython, it only
comes once a quarter of the old heap was promoted by middle passes, and until then every middle pass
walks ten young passes' survivors (14 such passes, 1 s of the loop, in a 4,000-pod converge).

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

_state: dict[str, Any] = {"installed": False, "threshold": None, "swept_at": 0, "sweeping": False,
                          "sweeps": 0}


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
    if sys.getallocatedblocks() >= max(SWEEP_FLOOR, SWEEP_GROWTH * _state["swept_at"]):
        _state["sweeping"] = True
        if not _ask_for_full_pass():
            gc.unfreeze()


def _ask_for_full_pass() -> bool:
    """Run the sweep's full pass on the event loop's next turn (a collector callback cannot collect)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return False
    loop.call_soon(_full_pass)
    return True


def _full_pass() -> None:
    if _state["installed"] and _state["sweeping"]:
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


def uninstall() -> None:
    """Back to CPython's behaviour; frozen objects return to the collector."""
    if not _state["installed"]:
        return
    _state["installed"] = False
    if _freeze_survivors in gc.callbacks:
        gc.callbacks.remove(_freeze_survivors)
    gc.set_threshold(*_state["threshold"])
    gc.unfreeze()


def installed() -> bool:
    return bool(_state["installed"])


def sweeps() -> int:
    """Full passes run since install because the heap had grown (see the module docstring)."""
    return int(_state["sweeps"])
