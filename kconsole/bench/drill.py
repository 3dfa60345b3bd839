"""``kconsole bench drill``: simulated seconds per wall second over the built-in course.

Every built-in drill (``kconsole drill list``) runs headless, one after the other, as
``kconsole drill run`` runs it: on the virtual clock, the referee on (``--no-referee`` to measure
without it), each drill's own cluster (its etcd members, on a temporary data folder). The figure is
the simulated seconds the drills covered (boot to the last step) over the wall seconds they took,
boot and the referee's judging included. A drill that fails is named in ``failed``.
"""

from __future__ import annotations

import argparse
import logging
import time
from typing import Any


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-referee", action="store_true", help="run the drills without the referee")
    p.add_argument("--only", nargs="*", default=None, metavar="NAME", help="only these built-in drills")


def _store(runner: Any, figures: dict[str, Any]) -> None:
    """The store the drill ran on: its etcd members and whether their WAL writes were synced."""
    etcd = getattr(runner.cluster, "etcd", None) if runner.cluster is not None else None
    members = list(getattr(etcd, "members", ()) or ())
    figures.setdefault("members", set()).add(len(members))
    synced = any(getattr(getattr(m, "storage", None), "fsync", False) for m in members)
    figures.setdefault("durability", set()).add("synced" if synced else "unsynced")


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from kconsole.drills.runner import DrillRunner
    from kconsole.drills.spec import builtin_paths, load

    logging.getLogger("kconsole").setLevel(logging.CRITICAL + 1)
    paths = builtin_paths()
    names = sorted(paths) if not args.only else args.only
    unknown = [n for n in names if n not in paths]
    if unknown:
        raise SystemExit(f"kconsole bench drill: no built-in drill {', '.join(unknown)} (kconsole drill list)")
    seen: dict[str, Any] = {}
    per_drill: dict[str, float] = {}
    failed: list[str] = []
    simulated = wall = 0.0
    cpu = time.process_time()
    for name in names:
        runner = DrillRunner(load(paths[name]), referee=not args.no_referee)
        runner.listener = lambda _state, r=runner: _store(r, seen)  # at each step, while its cluster runs
        started = time.monotonic()
        result = await runner.run()
        took = time.monotonic() - started
        simulated += result.duration
        wall += took
        per_drill[name] = round(result.duration / took, 1) if took > 0 else 0.0
        if not result.passed:
            failed.append(name)
    return {"bench": "drill", "clock": "virtual clock", "store": "etcd",
            "members": "/".join(str(n) for n in sorted(seen.get("members", ()))),
            "durability": "/".join(sorted(seen.get("durability", ()))),
            "referee": not args.no_referee, "drills": len(names), "simulated_s": round(simulated, 1),
            "wall_s": round(wall, 2), "cpu_s": round(time.process_time() - cpu, 2),
            "sim_s_per_wall_s": round(simulated / wall, 1) if wall > 0 else 0.0,
            "per_drill_sim_s_per_wall_s": per_drill, "failed": failed}
