"""What every benchmark measures the same way: percentiles, the serving GC policy, and how much of
the machine the host took away meanwhile."""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from typing import Any


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile by rank (0.0 for no samples); ``values`` need not be sorted."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def add_gc_argument(parser: argparse.ArgumentParser) -> None:
    """``--default-gc``: the one switch every serving benchmark offers to compare with CPython's collector."""
    parser.add_argument("--default-gc", action="store_true",
                        help="keep CPython's collector settings instead of the serving policy (kconsole.api.gcpolicy)")


#: /proc/stat's first line: user nice system idle iowait irq softirq steal (guest time is inside user).
_STEAL, _COUNTED = 7, 8


def _cpu_ticks() -> list[int] | None:
    """The machine's CPU time counters (Linux), None where there are none."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            fields = f.readline().split()
        return [int(x) for x in fields[1 : 1 + _COUNTED]]
    except (OSError, ValueError):
        return None


def steal_pct(before: list[int] | None, after: list[int] | None) -> float | None:
    """Share of CPU time the hypervisor gave to others between two readings: on a shared virtual
    machine the same code's figures move with it, so a run reports it beside them."""
    if before is None or after is None or len(before) != len(after) or len(after) <= _STEAL:
        return None
    total = sum(after) - sum(before)
    return round(100 * (after[_STEAL] - before[_STEAL]) / total, 1) if total > 0 else 0.0


async def under_gc_policy(args: argparse.Namespace,
                          run: Callable[[argparse.Namespace], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
    """Run a serving benchmark with the GC policy ``kconsole serve`` installs (``--default-gc`` to
    compare), and report the CPU steal over the run (``cpu_steal_pct``, where the machine tells)."""
    from kconsole.api import gcpolicy

    tuned = not getattr(args, "default_gc", False)
    if tuned:
        gcpolicy.install()
    ticks = _cpu_ticks()
    try:
        result = await run(args)
    finally:
        if tuned:
            gcpolicy.uninstall()
    result["gc_policy"] = tuned
    stolen = steal_pct(ticks, _cpu_ticks())
    if stolen is not None:
        result["cpu_steal_pct"] = stolen
    return result
