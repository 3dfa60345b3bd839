"""The console's rewind, measured over a cluster that already has its history: a phase of
``kconsole bench history`` (over its API server, through :class:`ServedAPI`), or over a cluster.

The console runs headless over the cluster (as :mod:`kconsole.bench.ui` runs it) with its pods
listed, jumps ``--rewind-back`` revisions into the past (a listing of every kind the panels show)
and then steps: ``[`` one revision back, ``]`` forward, ``{`` ``}`` one Event, ``<`` ``>`` one
warning or fault. Each step is timed key to screen, in wall milliseconds: from the key press
until the screen update that follows the step's redraw has been composed (the step reads the
changes between the two revisions, applies them to the past caches, and the panels redraw the
rows that changed). Target: a step's p95 <= 300 ms at 1,000 nodes / 10,000 pods with 500,000
revisions of history.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from kconsole.bench.common import percentile

#: The keys a step phase presses, in turn (revision steps dominate, as a user scrubbing would).
STEP_KEYS = ("left_square_bracket",) * 4 + ("right_square_bracket",) * 2 + (
    "left_curly_bracket", "right_curly_bracket", "less_than_sign", "greater_than_sign")


def _ms(values: list[float], q: float) -> float:
    return round(percentile(values, q), 1) if values else float("nan")


async def console_steps(cluster: Any, *, steps: int = 100, back: int = 2000, pods: int = 0,
                        size: tuple[int, int] = (200, 60)) -> dict[str, Any]:
    """Open the console over ``cluster``, wait for ``pods`` rows, jump ``back`` revisions and press
    ``steps`` step keys; returns the figures (``rewind_`` prefixed)."""
    from kconsole.tui.app import ConsoleApp
    from kconsole.tui.rewind import EventIndex

    app = ConsoleApp(cluster, watch_themes=False)
    async with app.run_test(size=size):
        deadline = time.monotonic() + 180
        while (not app.ready or app.rewind is None or len(app.resources.table.rows) < pods) \
                and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        if app.rewind is None:
            raise RuntimeError("the console has no history client: the API serves no history reads")
        rewind = app.rewind
        moved = asyncio.Event()
        rewind_step = app._rewind_step

        async def noting_step(what: str, step: int) -> None:
            await rewind_step(what, step)
            app.call_after_refresh(moved.set)

        app._rewind_step = noting_step  # type: ignore[method-assign]

        async def press(key: str) -> float | None:
            """Key to screen, or None when there was nothing to step to (no sample)."""
            moved.clear()
            before = rewind.revision
            t0 = time.monotonic()
            app.simulate_key(key)
            try:
                await asyncio.wait_for(moved.wait(), 30)
            except asyncio.TimeoutError:
                pass
            return (time.monotonic() - t0) * 1000 if rewind.revision != before else None

        bounds = await rewind.history.bounds()
        t0 = time.monotonic()
        index_started = time.monotonic()
        await EventIndex().extend(rewind.history, bounds.oldest, bounds.current)
        index_ms = (time.monotonic() - index_started) * 1000
        jump_started = time.monotonic()
        await rewind.goto(max(bounds.oldest, bounds.current - back))
        app._view_changed()
        jump_ms = (time.monotonic() - jump_started) * 1000
        await asyncio.sleep(0.2)
        by_key: dict[str, list[float]] = {}
        cpu = time.process_time()
        for i in range(steps):
            key = STEP_KEYS[i % len(STEP_KEYS)]
            took = await press(key)
            if took is not None:
                by_key.setdefault(key, []).append(took)
        cpu_ms = (time.process_time() - cpu) * 1000
        every = [v for values in by_key.values() for v in values]
        revision_steps = by_key.get("left_square_bracket", []) + by_key.get("right_square_bracket", [])
        figures = {
            "rewind_history_revisions": bounds.current - bounds.oldest + 1,
            "rewind_pods_listed": len(app.resources.table.rows),
            "rewind_event_index_ms": round(index_ms, 1),  # every Event write indexed, from scratch
            "rewind_jump_ms": round(jump_ms, 1),
            "rewind_steps": len(every),
            "rewind_step_p50_ms": _ms(every, 0.5),
            "rewind_step_p95_ms": _ms(every, 0.95),
            "rewind_revision_step_p95_ms": _ms(revision_steps, 0.95),
            "rewind_event_step_p95_ms": _ms(by_key.get("left_curly_bracket", []) + by_key.get("right_curly_bracket", []),
                                            0.95),
            "rewind_warning_step_p95_ms": _ms(by_key.get("less_than_sign", []) + by_key.get("greater_than_sign", []),
                                              0.95),
            "rewind_step_cpu_ms": round(cpu_ms / max(1, len(every)), 1),
            "rewind_relists": rewind.relists,
            "rewind_total_s": round(time.monotonic() - t0, 1),
        }
        rewind.go_live()
    return figures


class ServedAPI:
    """What the console needs of a cluster, over a bare API server already started (the history
    benchmark's): clients by user, the clock. No etcd handle, no components, no fault catalog."""

    started = True
    config = None

    def __init__(self, api: Any, clock: Any) -> None:
        self.api = api
        self.clock = clock
        self._clients: dict[str, Any] = {}

    def api_client(self, user: Any) -> Any:
        from kconsole.api.types import UserInfo
        from kconsole.client import Client

        if isinstance(user, str):
            user = UserInfo(user)
        if user.name not in self._clients:
            self._clients[user.name] = Client(self.api, self.api.tokens.issue(user), self.clock)
        return self._clients[user.name]

    async def stop(self) -> None:
        """The benchmark stops its API server itself."""


async def console_steps_over_api(api: Any, clock: Any, **kwargs: Any) -> dict[str, Any]:
    """:func:`console_steps` over a bare API server (``kconsole bench history``)."""
    return await console_steps(ServedAPI(api, clock), **kwargs)
