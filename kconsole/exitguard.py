"""A process that was told to stop is gone within :data:`STOP_DEADLINE` seconds, whatever its cluster
is doing (still starting, an informer retrying forever, a member's thread stuck on the device).

The clean stop gets :data:`CLEAN_STOP` seconds. A watchdog thread, armed when the stop begins, ends
the process at :data:`FORCE_AFTER` seconds even if the event loop never comes back: one line on
stderr says so, a last callback (the console gives the terminal back) runs, then ``os._exit``. A
second signal during the stop ends the process at once. These are wall seconds: they bound how
long a real process may take to exit, not simulated time.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable

#: What ``kconsole serve`` and the console promise: stopped this many wall seconds after being told.
STOP_DEADLINE = 10.0
#: Wall seconds the clean stop (components, API server, etcd members) may take.
CLEAN_STOP = 6.0
#: Wall seconds after which the watchdog ends the process, clean stop or not.
FORCE_AFTER = 8.5

_armed = threading.Lock()
_last_words: list[Callable[[], None]] = []


def arm(code: int, before_exit: Callable[[], None] | None = None, after: float = FORCE_AFTER) -> None:
    """Start the watchdog (the first call only): in ``after`` seconds the process exits with ``code``."""
    if before_exit is not None:
        _last_words.append(before_exit)
    if not _armed.acquire(blocking=False):
        return
    threading.Thread(target=_watch, args=(code, after), name="kconsole-exit-watchdog", daemon=True).start()


def exit_now(code: int) -> None:
    """End the process immediately (a second signal): the last callbacks run, nothing else."""
    for fn in _last_words:
        try:
            fn()
        except Exception:  # noqa: BLE001 - exiting regardless
            pass
    os._exit(code)


def _watch(code: int, after: float) -> None:
    threading.Event().wait(after)
    try:
        sys.stderr.write(f"kconsole: the clean stop took longer than {after:g} s; exiting now\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    exit_now(code)
