"""The fidelity suite against kconsole: the real kubectl 1.32 runs every scenario against the API
server behind its HTTP front (virtual clock, no controllers), and every step either prints what
upstream prints or is a declared known difference."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

sys.path.insert(0, str(Path(__file__).parent.parent / "http"))

from http_env import Cluster, start_cluster, stop_cluster  # noqa: E402

from kconsole.fidelity.cmd import report, run_all  # noqa: E402
from kconsole.fidelity.runner import load, scenario_paths  # noqa: E402

pytestmark = pytest.mark.kubectl


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Cluster]:
    c = await start_cluster(tmp_path_factory.mktemp("fidelity"))
    yield c
    await stop_cluster(c)


def test_every_scenario_loads_and_says_what_it_checks() -> None:
    paths = scenario_paths()
    assert len(paths) >= 12
    for path in paths:
        data = load(path)
        assert data.get("about"), f"{path.name} has no about"
        for step in data["steps"]:
            assert "exit" in step, f"{path.name}: {step['run']} has no expected exit code"


@pytest.mark.asyncio(loop_scope="module")
async def test_the_suite_passes_or_declares_its_differences(cluster: Cluster) -> None:
    results = await run_all(str(cluster.kubeconfig), None)
    text = report(results)
    assert not any(r.failed for r in results), text
    assert sum(len(r.steps) for r in results) >= 30, text
