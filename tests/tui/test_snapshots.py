"""Snapshots of the dashboard (seed 1, virtual clock) in a dark and a light theme.

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


def dashboard(tmp_path: Path, theme: str) -> tuple[ConsoleApp, Any]:
    # The node controller notices new nodes on its periodic pass (upstream: every 5 s). Whether
    # its first pass already sees the nodes depends on which of two concurrent requests the
    # store acknowledges first, so a short period keeps the picture's clock and ages fixed.
    c, clock = make_cluster(tmp_path, controllers={"node-lifecycle-controller": {"monitor_period": 0.1}})
    app = ConsoleApp(c, live=False, watch_themes=False, theme=theme)
    app.etcd.show_sizes = False  # SQLite file sizes vary run to run; every other figure is fixed

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


@pytest.mark.parametrize("theme", ["kconsole-dark", "kconsole-light"])
def test_dashboard_snapshot(snap_compare: Any, tmp_path: Path, theme: str) -> None:
    app, run_before = dashboard(tmp_path, theme)
    assert snap_compare(app, terminal_size=(160, 45), run_before=run_before)
