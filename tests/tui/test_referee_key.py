"""``R`` in the console: the referee watches the running cluster on request, and pressed again judges
what it recorded and shows the report, on a real cluster over a virtual clock."""

from __future__ import annotations

import re
from typing import Any

import pytest

from kconsole.cluster import ADMIN
from kconsole.tui.app import ConsoleApp
from kconsole.tui.refereeview import REFEREE_USER
from kconsole.tui.screens import HelpScreen, RefereeScreen

from tui_helpers import until

pytestmark = pytest.mark.asyncio(loop_scope="module")

SIZE = (160, 44)


async def ready(app: ConsoleApp, clock: Any, pilot: Any) -> None:
    await until(clock, lambda: app.ready, pilot)


async def judged(app: ConsoleApp, clock: Any, pilot: Any, key: str = "R") -> RefereeScreen:
    """Press the key again and let simulated time move while the referee catches up and judges."""
    await pilot.press(key)
    await until(clock, lambda: isinstance(app.screen, RefereeScreen), pilot, limit=90.0)
    assert isinstance(app.screen, RefereeScreen)
    return app.screen


async def test_referee_key_watches_and_reports_no_violation(cluster: Any) -> None:
    c, clock = cluster
    app = ConsoleApp(c, live=False, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, clock, pilot)
        await pilot.press("R")
        await until(clock, lambda: app.console_referee.watching, pilot)
        assert "referee watching" in app.status_line.message
        client = c.api_client(ADMIN)
        await client.create({"apiVersion": "v1", "kind": "ConfigMap",
                             "metadata": {"name": "judged", "namespace": "default"}, "data": {"n": "1"}})
        for n in range(2, 5):
            cm = await client.get("configmaps", "judged", "default")
            cm["data"]["n"] = str(n)
            await client.update(cm)
        await clock.advance(5.0)
        screen = await judged(app, clock, pilot)
        assert not app.console_referee.watching
        text = screen.report
        assert text.startswith("referee: ")
        assert text.endswith(": no violation"), text
        events = int(text.split(" watch events")[0].rsplit(" ", 1)[1])
        answers = int(text.split(" answers")[0].rsplit(" ", 1)[1])
        assert events >= 4 and answers > 0, text
        assert app.status_line.message == text  # the summary line is the whole report
        # The referee read as a user of its own: the API log keeps its reads apart.
        assert any(r.user == REFEREE_USER.name for r in c.api.audit_recent(10000))


async def test_referee_key_shows_a_violation_with_its_history(cluster: Any) -> None:
    """A second Lease holder written through the API while the kube-scheduler's leader renews; the
    key remapped in the config, and listed by its id in ``?``."""
    c, clock = cluster
    app = ConsoleApp(c, live=False, watch_themes=False, keymap_overrides={"referee.toggle": "V"})
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, clock, pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        assert re.search(r"V\s+Referee\s+referee\.toggle", app.screen.plain_text()), app.screen.plain_text()
        await pilot.press("escape")
        await pilot.press("V")
        await until(clock, lambda: app.console_referee.watching, pilot)
        client = c.api_client(ADMIN)
        lease = await client.get("leases.coordination.k8s.io", "kube-scheduler", "kube-system")
        now = clock.rfc3339_micro()
        lease["spec"].update(holderIdentity="intruder", acquireTime=now, renewTime=now)
        await client.update(lease)
        await clock.advance(5.0)
        screen = await judged(app, clock, pilot, "V")
        text = screen.report
        assert ": 1 violation(s)" in text.splitlines()[0], text
        assert "VIOLATION at simulated" in text and "[two Lease holders]" in text
        assert "Lease kube-system/kube-scheduler: intruder took it at rv" in text
        assert "while control-plane-" in text and "_kube-scheduler's renewal held it until" in text
        history = text.splitlines()[2:]
        assert history and all(line.startswith("    +") for line in history), text
        assert any("MODIFIED leases.coordination.k8s.io kube-system/kube-scheduler (holder=intruder" in line
                   for line in history), text
        assert app.status_line.message == text.splitlines()[0]
