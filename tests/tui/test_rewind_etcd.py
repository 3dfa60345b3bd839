"""The console's rewind over a cluster on a real etcd member (``--etcd local``): a jump back lists
the Deployment as it was, a step forward applies the next write, and `L` is live again."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from tui_helpers import drive, until

from kconsole.client.history import HistoryClient
from kconsole.cluster import ADMIN, Cluster, ClusterConfig
from kconsole.clock import VirtualClock
from kconsole.tui.app import CONSOLE_USER, ConsoleApp

pytestmark = [pytest.mark.asyncio(loop_scope="module"),
              pytest.mark.skipif(shutil.which("etcd") is None,
                                 reason="no etcd binary on PATH (CI installs Debian's etcd-server)")]

SIZE = (160, 48)


def deployment(image: str) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "web", "image": image}]}}}}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[Cluster, VirtualClock]]:
    clock = VirtualClock()
    config = ClusterConfig(nodes=1, control_planes=1, seed=1, http=False, etcd="local",
                           data_dir=Path(tmp_path_factory.mktemp("etcd-rewind")) / "data")
    c = Cluster(config, clock=clock)
    await drive(clock, c.start())
    try:
        yield c, clock
    finally:
        await drive(clock, c.stop(), limit=60.0)


def image_cell(app: ConsoleApp) -> str:
    """The image of default/web in the cache the Resources panel renders from (live or past)."""
    watched = app.resources.watched
    obj = watched.informer.get_by_name("default", "web") if watched is not None else None
    return obj["spec"]["template"]["spec"]["containers"][0]["image"] if obj else ""


async def test_rewind_on_real_etcd(cluster: Any) -> None:
    c, clock = cluster
    admin = c.api_client(ADMIN)
    first = await drive(clock, admin.apply(deployment("nginx:1.27"), field_manager="kubectl"))
    await clock.advance(5)
    await drive(clock, admin.apply(deployment("nginx:1.28"), field_manager="kubectl", force=True))
    await clock.advance(5)
    history = HistoryClient(c.api_client(CONSOLE_USER))
    at = int(first["metadata"]["resourceVersion"])
    assert (await drive(clock, history.bounds())).oldest <= at

    app = ConsoleApp(c, live=False, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(clock, lambda: app.ready and app.rewind is not None, pilot)
        assert app.switch_kind_safely("deploy")
        await until(clock, lambda: "nginx:1.28" in image_cell(app), pilot)
        await pilot.press("t")
        from textual.widgets import Input

        field = app.screen.query_one(Input)
        field.value = f"r{at}"
        await pilot.press("enter")
        await until(clock, lambda: app.rewind.revision == at and "nginx:1.27" in image_cell(app), pilot, step=0.05)
        assert f"at rev {at} · " in app.header.text
        for _ in range(200):  # one write at a time, up to the rollout
            if "nginx:1.28" in image_cell(app):
                break
            revision = app.rewind.revision
            await pilot.press("right_square_bracket")
            await until(clock, lambda: app.rewind.revision != revision, pilot, step=0.05)
        assert "nginx:1.28" in image_cell(app) and app.rewind.revision > at
        await pilot.press("L")
        await until(clock, lambda: "]LIVE[/]" in app.header.text, pilot, step=0.05)
