"""Pilot test of the console's rewind over a real cluster (virtual clock, seed 1): a node fails,
its pods are evicted and replaced; the console steps back across the failure and shows the lost
node's pods again, refuses writes while in the past, then returns live."""

from __future__ import annotations

from typing import Any

import pytest

from kconsole.client.history import HistoryClient
from kconsole.cluster import ADMIN
from kconsole.tui.app import CONSOLE_USER, ConsoleApp

from tui_helpers import until

pytestmark = pytest.mark.asyncio(loop_scope="module")

SIZE = (160, 48)
#: The pods tolerate an unreachable or not-ready node this long (upstream's default is 300 s).
TOLERATE = 5
UNREACHABLE = ("node.kubernetes.io/unreachable", "node.kubernetes.io/not-ready")


def deployment(name: str, replicas: int) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}],
                                           "tolerations": [{"key": key, "operator": "Exists", "effect": "NoExecute",
                                                            "tolerationSeconds": TOLERATE}
                                                           for key in UNREACHABLE]}}}}


async def web_pods(client: Any) -> dict[str, str]:
    """Running web pods by name -> node."""
    pods = await client.list_all("pods", "default", label_selector="app=web")
    return {p["metadata"]["name"]: p["spec"].get("nodeName", "") for p in pods
            if (p.get("status") or {}).get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")}


def row_keys(app: ConsoleApp) -> set[str]:
    return {r.key for r in app.resources.table.rows}


def statuses(app: ConsoleApp, names: list[str]) -> list[str]:
    """The STATUS cell of these default pods' rows ("" when not listed)."""
    table = app.resources.table
    col = table.columns.index("Status")
    rows = {r.key: r for r in table.rows}
    return [rows[f"default/{n}"].cells[col] if f"default/{n}" in rows else "" for n in names]


async def type_in(pilot: Any, text: str) -> None:
    from textual.widgets import Input

    field = pilot.app.screen.query_one(Input)
    field.value = text
    await pilot.press("enter")
    await pilot.pause()


async def test_rewind_across_a_node_failure(cluster: Any) -> None:
    c, clock = cluster
    admin = c.api_client(ADMIN)
    await admin.create(deployment("web", 4))
    placed: dict[str, str] = {}

    async def placed_on_workers() -> bool:
        placed.update(await web_pods(admin))
        return len(placed) == 4 and len(set(placed.values())) == 2

    for _ in range(240):
        placed.clear()
        if await placed_on_workers():
            break
        await clock.advance(0.5)
    assert len(placed) == 4, placed
    lost = sorted(placed.values())[0]
    on_lost = sorted(name for name, node in placed.items() if node == lost)
    history = HistoryClient(c.api_client(CONSOLE_USER))
    before = (await history.bounds()).current
    fault = await c.faults.apply("kubelet-stop", lost)
    now: dict[str, str] = {}
    for _ in range(600):  # node-monitor grace (~50 s), the taint, TOLERATE, the replacements Running
        now = await web_pods(admin)
        if len(now) == 4 and lost not in now.values() and not set(on_lost) & set(now):
            break
        await clock.advance(0.5)
    assert len(now) == 4 and lost not in now.values(), now

    app = ConsoleApp(c, live=False, watch_themes=False)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await until(clock, lambda: app.ready and app.rewind is not None, pilot)
            await until(clock, lambda: f"default/{sorted(now)[0]}" in row_keys(app), pilot)
            # Live, the lost node's pods were evicted: Terminating (their kubelet cannot confirm), replaced.
            assert "]LIVE[/]" in app.header.text and statuses(app, on_lost) == ["Terminating"] * len(on_lost)
            await app.refresh_timeline()  # live: a few bucket edges per reading, newest first
            data = app.timeline.data
            assert data is not None and sum(data.faults) >= 1 and "▲" in app.timeline.text
            assert data.writes[-1] is not None

            # Jump back to before the failure: the lost node's pods are there again, on their node.
            await pilot.press("t")
            await type_in(pilot, f"r{before}")
            await until(clock, lambda: app.rewind.revision == before, pilot, step=0.05)
            await pilot.pause()
            assert statuses(app, on_lost) == ["Running"] * len(on_lost)
            replacements = set(now) - set(placed)
            assert len(replacements) == len(on_lost) and not replacements & {r.key[8:] for r in app.resources.table.rows}
            header = app.header.text
            assert f"at rev {before} · " in header and " behind" in header and "LIVE" not in header
            assert app.faults.table.rows == [] and app.rewind.relists == 1
            # In the past the strip reads every bucket edge: its buckets add up to the kept history.
            await app.refresh_timeline()
            bounds = app.rewind.bounds
            assert None not in app.timeline.data.writes
            assert sum(app.timeline.data.writes) == bounds.current - bounds.oldest + 1
            assert f"rev {before}" in app.timeline.text
            # etcd's member state was not recorded then (no console ran): the panel says so.
            assert "member state not recorded at this revision" in app.etcd.quorum_line()

            # Another kind in the past: listed at the revision; the lost node was Ready then.
            assert app.switch_kind_safely("no")
            await until(clock, lambda: app.resources.watched.informer.has_synced
                        and any(r.key == lost for r in app.resources.table.rows), pilot, step=0.05)
            status = app.resources.table.columns.index("Status")
            assert next(r for r in app.resources.table.rows if r.key == lost).cells[status] == "Ready"
            assert app.switch_kind_safely("po")
            await until(clock, lambda: app.resources.watched.informer.has_synced
                        and statuses(app, on_lost) == ["Running"] * len(on_lost), pilot, step=0.05)

            # Forward to the next warning or fault: the kubelet-stop Event; the Faults panel has it.
            for _ in range(10):
                revision = app.rewind.revision
                await pilot.press("greater_than_sign")
                await until(clock, lambda: app.rewind.revision != revision, pilot, step=0.05)
                await pilot.pause()
                if app.faults.table.rows:
                    break
            assert [r.cells[1:3] for r in app.faults.table.rows] == [("kubelet-stop", lost)]
            assert statuses(app, on_lost) == ["Running"] * len(on_lost)
            assert app.rewind.relists == 1 and app.rewind.steps >= 1  # steps, not listings

            # One revision forward and back: incremental steps.
            revision = app.rewind.revision
            await pilot.press("right_square_bracket")
            await until(clock, lambda: app.rewind.revision == revision + 1, pilot, step=0.05)
            await pilot.press("left_square_bracket")
            await until(clock, lambda: app.rewind.revision == revision, pilot, step=0.05)
            assert app.rewind.relists == 1

            # Writes are refused in the past, saying how to return.
            app.resources.table.focus()
            for key in ("ctrl+d", "e", "f", "H"):
                app.status_line.message = ""
                await pilot.press(key)
                await pilot.pause()
                assert app.status_line.message == f"read-only at rev {revision}: press L to return live", key
            assert not app.screen_stack[1:]  # no confirmation opened

            # etcd's member state as the console recorded it (each sample with its revision).
            await app.sample_now()
            recorded = app.etcd_samples.revisions[-1]
            await pilot.press("t")
            await type_in(pilot, f"r{recorded}")
            await until(clock, lambda: app.rewind.revision == recorded, pilot, step=0.05)
            await pilot.pause()
            line = app.etcd.quorum_line()
            assert "quorum ok" in line and f"member state as recorded at rev {recorded}" in line, line
            assert len(app.etcd.table.rows) == 3

            # Return live: the lost node's pods are gone again, the replacements listed.
            await pilot.press("L")
            await until(clock, lambda: "]LIVE[/]" in app.header.text, pilot, step=0.05)
            assert statuses(app, on_lost) == ["Terminating"] * len(on_lost)
            assert {f"default/{n}" for n in now} <= row_keys(app)
            assert app.rewind.view is None and app.faults.table.rows  # the fault is still applied live
    finally:
        await c.faults.heal(fault.id)
