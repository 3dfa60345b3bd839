"""What every benchmark measures the same way: percentiles, and the serving GC policy."""

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


async def under_gc_policy(args: argparse.Namespace,
                          run: Callable[[argparse.Namespace], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
    """Run a serving benchmark with the GC policy ``kconsole serve`` installs (``--default-gc`` to compare)."""
    from kconsole.api import gcpolicy

    tuned = not getattr(args, "default_gc", False)
    if tuned:
        gcpolicy.install()
    try:
        result = await run(args)
    finally:
        if tuned:
            gcpolicy.uninstall()
    result["gc_policy"] = tuned
    return result
