"""Every object's story: the console's history view (``v``) of a Deployment shows its image change
with the field manager that made it, and ``kconsole history`` prints the same, from a running
cluster over HTTPS and from its stopped data folder."""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Any, TypeVar

import pytest
import pytest_asyncio
from textual.widgets import Input

from kconsole.cluster import ADMIN, Cluster, ClusterConfig
from kconsole.clock import VirtualClock
from kconsole.history import cmd
from kconsole.history.story import render_text
from kconsole.tui.app import ConsoleApp
from kconsole.tui.screens import HistoryScreen

pytestmark = pytest.mark.asyncio(loop_scope="module")

T = TypeVar("T")
SIZE = (120, 36)


async def drive(clock: VirtualClock, aw: Awaitable[T], step: float = 0.1, limit: float = 120.0) -> T:
    task = asyncio.ensure_future(aw)
    spent = 0.0
    while not task.done():
        if spent > limit:
            task.cancel()
            raise TimeoutError(f"not done within {limit} simulated seconds")
        await clock.advance(step)
        spent += step
    return await task


async def until(clock: VirtualClock, pilot: Any, pred: Any, limit: float = 60.0) -> None:
    spent = 0.0
    while True:
        await pilot.pause()
        if getattr(pilot.app, "ready", False):
            pilot.app.render_pending()
        if pred():
            return
        if spent >= limit:
            raise TimeoutError(f"condition not met within {limit} simulated seconds")
        await clock.advance(0.25)
        spent += 0.25


def deployment(image: str) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "web", "image": image}]}}}}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[Cluster, VirtualClock]]:
    clock = VirtualClock()
    config = ClusterConfig(nodes=1, control_planes=3, seed=1, port=0, data_dir=tmp_path_factory.mktemp("c") / "data")
    c = Cluster(config, clock=clock)
    await drive(clock, c.start())
    admin = c.api_client(ADMIN)
    await drive(clock, admin.apply(deployment("nginx:1.27"), field_manager="kubectl"))
    await clock.advance(30)
    await drive(clock, admin.apply(deployment("nginx:1.28"), field_manager="rollout-bot", force=True))
    await clock.advance(30)
    try:
        yield c, clock
    finally:
        if c.started:
            await drive(clock, c.stop(), limit=60.0)


async def test_history_view_shows_the_image_change_and_its_field_manager(cluster: Any) -> None:
    c, clock = cluster
    app = ConsoleApp(c, live=False, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(clock, pilot, lambda: app.ready)
        await app.sample_now()
        await pilot.press("colon")
        field = app.screen.query_one(Input)
        await pilot.press("d")
        field.value = "deploy"
        await pilot.press("enter")
        await until(clock, pilot, lambda: any(r.key.endswith("/web") for r in app.resources.table.rows))
        app.resources.table.select_key(next(r.key for r in app.resources.table.rows if r.key.endswith("/web")))
        await pilot.press("v")
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        await until(clock, pilot, lambda: screen.story is not None or bool(screen.error))
        assert screen.error == ""
        text = screen.plain_text()
        assert "History · Deployment default/web" in screen.title_text
        assert "-      - image: nginx:1.27" in text and "+      - image: nginx:1.28" in text
        change = next(line for line in text.splitlines() if "manager rollout-bot" in line)
        assert "MODIFIED" in change and "user kubernetes-admin" in change
        assert "managedFields" not in text and "resourceVersion" not in text
        assert any("ADDED" in line and "manager kubectl" in line for line in text.splitlines())
        await pilot.press("w")
        assert "image: nginx:1.27" not in screen.plain_text()
        await pilot.press("escape")
        assert not isinstance(app.screen, HistoryScreen)


async def test_the_cli_prints_the_story_running_and_stopped(cluster: Any) -> None:
    c, clock = cluster
    args = argparse.Namespace(object="deploy/web", namespace="default", diff=True, json=False)
    running = await drive(clock, cmd._fetch(args, c.data_dir), step=0.05)
    text = render_text(running)
    assert text.startswith("Deployment default/web: ")
    assert "+      - image: nginx:1.28" in text and "manager rollout-bot" in text
    await drive(clock, c.stop(), limit=60.0)
    stopped = await cmd._fetch(args, c.data_dir)
    assert json.dumps(stopped.to_json()) == json.dumps(running.to_json())
    missing = argparse.Namespace(object="deploy/nope", namespace="default", diff=False, json=True)
    assert (await cmd._fetch(missing, c.data_dir)).revisions == []
