"""The fidelity suite against kconsole: the real kubectl 1.32 runs every scenario against the API
server behind its HTTP front (virtual clock, no controllers: scenarios that need them are left to
``kconsole fidelity`` against a running cluster), and every step either prints what upstream prints or
is a declared known difference."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

sys.path.insert(0, str(Path(__file__).parent.parent / "http"))

from http_env import Cluster, start_cluster, stop_cluster  # noqa: E402

from kconsole.fidelity.cmd import report, run_all  # noqa: E402
from kconsole.fidelity.runner import dump, load, scenario_paths  # noqa: E402

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
    served = [p.stem for p in scenario_paths() if load(p).get("needs") != "controllers"]
    results = await run_all(str(cluster.kubeconfig), None, served)
    text = report(results)
    assert not any(r.failed for r in results), text
    fixed = [f"{r.name}: {s.run}" for r in results for s in r.steps if s.status == "FIXED"]
    assert not fixed, f"declared differences no longer seen (remove their known_difference): {fixed}"
    assert sum(len(r.steps) for r in results) >= 30, text


async def kconsole(*args: str) -> tuple[int, str, str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "kconsole", *args, env=env,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, out.decode(), err.decode()


@pytest.mark.asyncio(loop_scope="module")
async def test_the_command_shows_a_diff_fails_and_updates(cluster: Cluster, tmp_path: Path) -> None:
    scenario = tmp_path / "wrong.yaml"
    scenario.write_text(dump({"about": "a wrong expectation", "cleanup": [], "steps": [
        {"run": "create configmap c --from-literal=a=1", "stdout": "configmap/c made\n", "exit": 0},
        {"run": "get configmap c -o name", "stdout": "configmap/c\n", "stderr": "", "exit": 0}]}))
    code, out, _ = await kconsole("fidelity", "--kubeconfig", str(cluster.kubeconfig), str(scenario))
    assert code == 1, out
    assert "FAIL   1 kubectl create configmap c --from-literal=a=1" in out
    assert "-configmap/c made\n" in out and "+configmap/c created\n" in out
    assert "PASS   2 kubectl get configmap c -o name" in out

    code, out, err = await kconsole("fidelity", "--kubeconfig", str(cluster.kubeconfig), "--update", str(scenario))
    assert code == 0 and "updated 1 steps" in err, err
    assert load(scenario)["steps"][0] == {"run": "create configmap c --from-literal=a=1",
                                          "stdout": "configmap/c created\n", "stderr": "", "exit": 0}

    code, out, _ = await kconsole("fidelity", "--kubeconfig", str(cluster.kubeconfig), "--json", str(scenario))
    assert code == 0, out
    assert [s["status"] for s in json.loads(out)[0]["steps"]] == ["PASS", "PASS"]


@pytest.mark.asyncio(loop_scope="module")
async def test_an_unknown_scenario_is_named(cluster: Cluster) -> None:
    code, _, err = await kconsole("fidelity", "--kubeconfig", str(cluster.kubeconfig), "no_such_scenario")
    assert code == 2 and "no scenario 'no_such_scenario' (known: api_resources," in err
