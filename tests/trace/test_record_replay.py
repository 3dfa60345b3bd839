"""Record, replay, compare, fork: the scenario of trace_env recorded on the virtual clock, exported
from its stopped data folder, played as a film, rerun, and forked before its delete."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from kconsole.cli import main
from kconsole.clock import VirtualClock
from kconsole.trace.fileformat import read_trace
from kconsole.trace.film import Film
from kconsole.trace.rerun import rerun
from trace_env import boot, config, record_scenario, stop

Obj = dict[str, Any]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], Path]:
    """(data folder, what was seen live, the exported trace): recorded once for the module."""
    root = tmp_path_factory.mktemp("recorded")
    seen = asyncio.run(record_scenario(root / "data"))
    trace = root / "trace.jsonl"
    assert main(["trace", "export", "--data-dir", str(root / "data"), str(trace)]) == 0
    return root / "data", seen, trace


def test_the_trace_holds_the_inputs_and_faults(recorded: tuple[Path, dict[str, Any], Path]) -> None:
    _, _, path = recorded
    trace = read_trace(path)
    assert trace.header["inputsRecorded"] and trace.header["config"]["nodes"] == 3
    assert [(i["user"], i["verb"], i.get("name")) for i in trace.inputs] == [
        ("system:kconsole-sync", "patch", "web"), ("kubernetes-admin", "create", "solo"),
        ("alice", "patch", "web"), ("kubernetes-admin", "delete", "solo")]
    assert set(trace.inputs[1]["body"]["metadata"]) == {"name", "namespace"}  # as the client sent it
    assert [(f["action"], f["fault"], f["target"]) for f in trace.faults] == [
        ("apply", "cordon", "worker-2"), ("heal", "cordon", "worker-2")]
    revisions = [c["revision"] for c in trace.changes]
    assert revisions == sorted(revisions) and revisions[-1] == trace.last_revision


def test_export_then_replay_shows_the_same_events(recorded: tuple[Path, dict[str, Any], Path]) -> None:
    _, seen, path = recorded
    film = Film(read_trace(path))
    film.seek(film.length)
    shown = sorted(((e["metadata"].get("namespace"), e["metadata"]["name"], e.get("reason")) for e in film.events()))
    assert shown == seen["events"]
    pods = sorted((p["metadata"]["name"], p["spec"].get("nodeName")) for p in film.objects("pods"))
    assert pods == seen["placements"]


async def test_the_film_app_shows_the_recorded_events(recorded: tuple[Path, dict[str, Any], Path]) -> None:
    from kconsole.trace.filmapp import FilmApp

    _, seen, path = recorded
    film = Film(read_trace(path))
    app = FilmApp(film, name=path.name, frame=3600)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("end")
        keys = {r.key for r in app.events_panel.table.rows}
        assert len(seen["events"]) < 300  # the panel's row limit
        assert keys == {f"{ns}/{name}" for ns, name, _ in seen["events"]}


def test_rerun_with_the_same_config_lands_every_pod_where_it_did(
        recorded: tuple[Path, dict[str, Any], Path]) -> None:
    _, _, path = recorded
    trace = read_trace(path)
    result = asyncio.run(rerun(trace))
    assert result.refused == [] and result.replayed == len(trace.inputs) + len(trace.faults)
    assert result.differences == []
    web = result.rerun["default/Deployment/web"].to_dict()
    assert sum(web["placements"].values()) == 6


def test_rerun_with_another_profile_reports_what_moved(recorded: tuple[Path, dict[str, Any], Path],
                                                       tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, _, path = recorded
    other = tmp_path / "pack.yaml"
    other.write_text("scheduler:\n  profiles:\n  - schedulerName: default-scheduler\n    pluginConfig:\n"
                     "    - name: NodeResourcesFit\n      args: {scoringStrategy: {type: MostAllocated}}\n")
    assert main(["replay", str(path), "--rerun", "--config", str(other), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["configChanged"] == ["scheduler"]
    moved = {d["workload"]: d for d in report["differences"]}
    assert "placements" in moved["default/Deployment/web"]["differs"]
    assert main(["replay", str(path), "--rerun", "--config", str(other)]) == 0
    text = capsys.readouterr().out
    assert "default/Deployment/web  [CHANGED]" in text and "with scheduler from" in text


def test_rerun_on_a_smaller_node_pool_reports_pending_pods_and_why(
        recorded: tuple[Path, dict[str, Any], Path], tmp_path: Path) -> None:
    _, _, path = recorded
    small = tmp_path / "small.yaml"
    small.write_text('nodes: 1\nnode-cpu: "2"\n')
    result = asyncio.run(rerun(read_trace(path), small))
    assert sorted(result.changed_config) == ["node-cpu", "nodes"]
    web = result.rerun["default/Deployment/web"].to_dict()
    assert set(web["placements"]) == {"worker-1"} and web["pending"]
    assert {p["reason"] for p in web["pending"]} == {"Unschedulable"}
    assert "Insufficient cpu" in web["pending"][0]["message"]
    moved = {d["workload"]: d["differs"] for d in result.differences}
    assert {"placements", "pending"} <= set(moved["default/Deployment/web"])


def test_fork_before_the_delete_brings_the_pod_back(recorded: tuple[Path, dict[str, Any], Path],
                                                    tmp_path: Path) -> None:
    data, seen, _ = recorded
    new = tmp_path / "fork"
    assert main(["fork", "--at", seen["before_delete"], "--data-dir", str(data), str(new)]) == 0

    async def look() -> tuple[Obj, int]:
        clock = VirtualClock(start=2_000_000_000.0)
        cluster = await boot(config(new), clock)
        try:
            solo = await cluster.api_client().get("pods", "solo", "default")
            revision = int((await cluster.api_client().list("pods", "default"))["metadata"]["resourceVersion"])
            return solo, revision
        finally:
            await stop(cluster, clock)

    solo, revision = asyncio.run(look())
    assert solo["metadata"]["uid"] == seen["solo_uid"]  # the same pod, not a new one of the same name
    from kconsole.trace.export import read_inputs

    inputs = [r for r in read_inputs(new / "trace-inputs.jsonl") if r["type"] == "input"]
    # the source's inputs up to the fork (its delete came after), then none of the fork's own
    assert [(r["verb"], r.get("name")) for r in inputs] == [("patch", "web"), ("create", "solo"), ("patch", "web")]
    assert revision > int(seen["before_delete"])  # the fork's own writes come after REV


@pytest.mark.parametrize("argv, code, message", [
    (["replay", "{missing}"], 1, "no such trace file"),
    (["replay", "{trace}", "--json"], 2, "--json needs --rerun"),
    (["replay", "{trace}", "--config", "x.yaml"], 2, "--config needs --rerun"),
    (["replay", "{trace}", "--rerun", "--config", "{badconfig}"], 1, "'port' does not change a rerun"),
    (["replay", "{trace}", "--rerun", "--config", "{missing}"], 1, "cannot read config"),
    (["trace", "export", "--data-dir", "{empty}", "{out}"], 1, "no cluster data here"),
    (["trace", "export", "--from", "soon", "{out}"], 2, "neither a revision"),
    (["trace", "export", "--data-dir", "{data}", "{trace}"], 2, "already exists (--force overwrites it)"),
    (["trace", "export", "--data-dir", "{data}", "--to", "999999", "{out}"], 1, "in the future"),
    (["fork", "--at", "never", "{out}"], 2, "--at: 'never' is neither"),
    (["fork", "--at", "5", "--data-dir", "{data}", "{nonempty}"], 1, "already exists and is not empty"),
    (["fork", "--at", "999999", "--data-dir", "{data}", "{out}"], 1, "in the future"),
])
def test_bad_arguments_are_named(recorded: tuple[Path, dict[str, Any], Path], tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str], argv: list[str], code: int,
                                 message: str) -> None:
    data, _, trace = recorded
    (tmp_path / "empty").mkdir()
    (tmp_path / "nonempty").mkdir()
    (tmp_path / "nonempty" / "x").write_text("x")
    (tmp_path / "bad.yaml").write_text("port: 1\n")
    names = {"missing": tmp_path / "missing", "trace": trace, "badconfig": tmp_path / "bad.yaml",
             "empty": tmp_path / "empty", "out": tmp_path / "out", "data": data, "nonempty": tmp_path / "nonempty"}
    assert main([a.format(**names) for a in argv]) == code
    assert message in capsys.readouterr().err


async def test_export_reads_a_running_cluster_through_its_http_front(tmp_path: Path) -> None:
    from kconsole.cluster import SYNC
    from trace_env import deployment

    clock = VirtualClock()
    cluster = await boot(config(tmp_path / "data", http=True, port=0), clock)
    try:
        await cluster.api_client(SYNC).apply(deployment("web", 2), field_manager="kconsole-sync")
        await clock.advance(10)
        out = tmp_path / "live.jsonl"
        code = await asyncio.to_thread(main, ["trace", "export", "--data-dir", str(tmp_path / "data"), str(out)])
        assert code == 0
    finally:
        await stop(cluster, clock)
    trace = read_trace(out)
    assert [(i["user"], i["name"]) for i in trace.inputs] == [("system:kconsole-sync", "web")]
    assert any(c["resource"] == "deployments" and c["name"] == "web" for c in trace.changes)
    assert any(o["resource"] == "namespaces" for o in trace.objects)


async def test_the_film_at_any_revision_is_the_history_at_that_revision(
        recorded: tuple[Path, dict[str, Any], Path]) -> None:
    from kconsole.trace.offline import open_folder

    data, _, path = recorded
    film = Film(read_trace(path))
    picks = [film.changes[i]["revision"] for i in (0, film.length // 3, film.length // 2, film.length - 1)]
    async with open_folder(data) as opened:
        for revision in picks:
            film.seek_revision(revision)
            for resource, group in (("pods", ""), ("deployments", "apps"), ("nodes", "")):
                name = f"{resource}.{group}" if group else resource
                then = await opened.history.list_at(resource, revision, group=group)
                assert [o["metadata"]["resourceVersion"] for o in film.objects(name)] == \
                    [o["metadata"]["resourceVersion"] for o in sorted(
                        then, key=lambda o: (o["metadata"].get("namespace") or "", o["metadata"]["name"]))]
