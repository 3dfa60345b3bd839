"""Snapshots of the console (seed 1, virtual clock) at the sizes people use (80x24 and 120x40: one
panel at a time; 200x55: the dashboard) and in every shipped theme.

The cluster starts inside the app, after the first paint, exactly as ``kconsole`` does; simulated
time is moved forward until the nodes are Ready, so every figure on screen is deterministic.
Update with ``pytest tests/tui --snapshot-update`` after checking the report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tui_helpers import make_cluster, until

from kconsole.tui.app import ConsoleApp
from kconsole.tui.themes import THEMES_DIR


def dashboard(tmp_path: Path, theme: str) -> tuple[ConsoleApp, Any]:
    # The node controller notices new nodes on its periodic pass (upstream: every 5 s). Whether
    # its first pass already sees the nodes depends on which of two concurrent requests the
    # store acknowledges first, so a short period keeps the picture's clock and ages fixed.
    c, clock = make_cluster(tmp_path, controllers={"node-lifecycle-controller": {"monitor_period": 0.1}})
    app = ConsoleApp(c, live=False, watch_themes=False, theme=theme)
    app.etcd.show_volatile = False  # file sizes and Raft indexes follow real I/O timing
    app.timeline.show_volatile = False  # which time bucket a write falls in follows real I/O timing too

    async def run_before(pilot: Any) -> None:
        await until(clock, lambda: app.ready, pilot, step=0.1)
        # The picture shows the nodes Ready, the node controller's RegisteredNode events listed, and
        # the 12 static pods with the addons' 7 (kube-proxy on each node, two CoreDNS) Running.
        def pods() -> list[Any]:
            return app.resources.table.rows

        await until(clock, lambda: app.model.node_counts() == (5, 5) and len(pods()) == 19
                    and all(r.state == "running" for r in pods()) and len(app.events_panel.table.rows) >= 5, pilot)
        await app.sample_now()
        # The cursor follows the pod it was on when the first rows came; which CoreDNS replica that
        # was depends on the order their creates were acknowledged: the picture has it at the top.
        app.resources.table.move_cursor(0)
        # Added/modified marks last MARK_SECONDS of wall time, so whether a late event is still
        # highlighted depends on timing, like file sizes: let every mark run out before the picture.
        for watched in app.model.watched.values():
            watched.wall = lambda: float("inf")
        app.render_pending(force=True)
        await pilot.pause()

    return app, run_before


SIZES = [(80, 24), (120, 40), (200, 55)]


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_console_snapshot_per_size(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    app, run_before = dashboard(tmp_path, "kconsole-dark")
    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("theme", sorted(p.stem for p in THEMES_DIR.glob("*.yaml") if p.stem != "kconsole-dark"))
def test_dashboard_snapshot_per_theme(snap_compare: Any, tmp_path: Path, theme: str) -> None:
    app, run_before = dashboard(tmp_path, theme)
    assert snap_compare(app, terminal_size=(200, 55), run_before=run_before)
