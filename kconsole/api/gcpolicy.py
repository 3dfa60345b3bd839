"""Cycle-collector policy for a process that serves the API.

The watch caches keep every object of the cluster alive: hundreds of thousands of dicts and lists
that hold no reference cycles and are freed by reference counting. CPython's full collection still
walks all of them, and with 20,000 Pods in the caches one pass stops the event loop for 100-600 ms,
which is the whole p99 of a write. After each full collection the survivors are frozen (moved out
of the collector's generations), so the next pass walks only what was allocated since; a larger
young generation makes the collector run less often. Frozen objects are still freed by reference
counting; only cyclic garbage among them stays, which JSON objects never form.

Process-wide, so opt-in: the serving entry points (``kconsole serve``, the benches) install it;
library code and tests do not.
"""

from __future__ import annotations

import gc
from typing import Any

#: Allocations between young collections (CPython's default is 700).
YOUNG_THRESHOLD = 10_000

_state: dict[str, Any] = {"installed": False, "threshold": None}


def _freeze_after_full(phase: str, info: dict[str, Any]) -> None:
    if phase == "stop" and info.get("generation") == 2:
        gc.freeze()


def install(young_threshold: int = YOUNG_THRESHOLD) -> None:
    """Freeze what exists now and after every full collection; collect the young less often."""
    if young_threshold < 1:
        raise ValueError(f"young_threshold must be at least 1, got {young_threshold}")
    if _state["installed"]:
        return
    _state["installed"] = True
    _state["threshold"] = gc.get_threshold()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(young_threshold, middle, old)
    gc.callbacks.append(_freeze_after_full)
    gc.freeze()


def uninstall() -> None:
    """Back to CPython's behaviour; frozen objects return to the collector."""
    if not _state["installed"]:
        return
    _state["installed"] = False
    if _freeze_after_full in gc.callbacks:
        gc.callbacks.remove(_freeze_after_full)
    gc.set_threshold(*_state["threshold"])
    gc.unfreeze()


def installed() -> bool:
    return bool(_state["installed"])
