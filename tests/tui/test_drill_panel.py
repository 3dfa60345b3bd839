"""The Drill panel (``kconsole drill NAME``) over a real cluster on a virtual clock: a prediction asked
in a dialog and judged, a step the drill does on ``x``, a step the learner does by hand, passing and
failing verdicts in the panel, and the drill's workspace apart from the project's folder."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kconsole.clock import VirtualClock
from kconsole.cluster import ADMIN
from kconsole.drills import cmd
from kconsole.drills.spec import load
from kconsole.tui.app import ConsoleApp
from kconsole.tui.drillrun import DrillSession
from kconsole.tui.screens import ChoiceScreen, RefereeScreen

from tui_helpers import drive, until

SIZE = (160, 44)

DRILL = """
title: Scale and watch
goal: A Deployment's ReplicaSet follows spec.replicas.
cluster: {nodes: 1, controlPlanes: 1, addons: []}
manifests:
  - name: web.yaml
    content:
      - {apiVersion: v1, kind: Namespace, metadata: {name: t}}
      - apiVersion: apps/v1
        kind: Deployment
        metadata: {name: web, namespace: t}
        spec:
          replicas: 1
          selector: {matchLabels: {app: web}}
          template:
            metadata: {labels: {app: web}}
            spec: {containers: [{name: web, image: "nginx:1.25"}]}
steps:
  - name: one replica runs
    expect:
      - count: {namespace: t, selector: app=web, phase: Running}
        equals: 1
        within: 60s
  - name: scale to two
    say: Scale the web Deployment to two replicas.
    hint: kubectl scale deploy web -n t --replicas=2
    predict:
      question: After scaling web to 2, how many web pods run?
      choices: ["1", "2", "3"]
      answer: "2"
      explain: The ReplicaSet creates pods until it owns spec.replicas of them.
    scale: {kind: Deployment, name: web, namespace: t, replicas: 2}
    expect:
      - name: two run
        count: {namespace: t, selector: app=web, phase: Running}
        equals: 2
        within: 60s
      - name: five run
        count: {namespace: t, selector: app=web, phase: Running}
        equals: 5
        within: 5s
  - name: back to one
    say: Scale web back to one replica yourself.
    scale: {kind: Deployment, name: web, namespace: t, replicas: 1}
    expect:
      - count: {namespace: t, selector: app=web, phase: Running}
        equals: 1
        within: 60s
"""


def texts(app: ConsoleApp) -> list[tuple[str, ...]]:
    assert app.drill_panel is not None
    return [r.cells for r in app.drill_panel.table.rows]


def session_for(tmp_path: Path) -> tuple[DrillSession, VirtualClock, Path]:
    project = tmp_path / "project"
    project.mkdir()
    path = project / "scale.yaml"
    path.write_text(DRILL, encoding="utf-8")
    clock = VirtualClock()
    return DrillSession(load(path), tmp_path / "drill-data", clock, watch=False), clock, project


async def test_predict_run_by_hand_and_verdicts_in_the_panel(tmp_path: Path) -> None:
    session, clock, project = session_for(tmp_path)
    app = ConsoleApp(session.cluster, live=False, watch_themes=False, drill=session)
    async with app.run_test(size=SIZE) as pilot:
        await until(clock, lambda: app.ready, pilot, limit=120)
        assert app.focused_panel() is app.drill_panel
        states = session.states
        await until(clock, lambda: states[0].status == "passed", pilot, limit=120)

        # predict: the question opens a dialog before the step acts; the choice is recorded and judged.
        await until(clock, lambda: isinstance(app.screen, ChoiceScreen), pilot)
        assert states[1].status == "running" and not states[1].detail  # nothing done before the answer
        await pilot.press("down", "down", "enter")  # "3": wrong
        await until(clock, lambda: session.waiting, pilot)
        assert session.answers == {2: 2} and states[1].prediction == "wrong"
        summary = app.drill_panel.summary.render().plain if app.drill_panel else ""
        assert "wrong: the answer is 2" in str(summary) and "The ReplicaSet creates pods" in str(summary)
        assert "your turn" in str(summary)
        row = next(r for r in texts(app) if r[0] == "2")
        assert row[2] == "your turn" and row[3] == "predicted wrong"

        # hint on request
        await pilot.press("i")
        assert "hint: kubectl scale deploy web -n t --replicas=2" in app.status_line.text

        # R: the drill's referee watches already; the key shows what it recorded so far.
        await pilot.press("R")
        await pilot.pause()
        assert isinstance(app.screen, RefereeScreen)
        assert re.match(r"referee: watching this drill since it began: [1-9]\d* watch events and [1-9]\d* answers "
                        r"recorded so far; it judges them when the drill ends$", app.screen.report), app.screen.report
        assert not app.console_referee.watching  # no second referee over a drill
        await pilot.press("escape")

        # run: x lets the drill do the waiting step's action.
        await pilot.press("x")
        await until(clock, lambda: states[1].status == "failed", pilot, limit=120)
        assert states[1].detail == "scaled Deployment web to 2"

        # verdict: the passing and the failing expectation both land in the panel, under their step.
        rows = texts(app)
        at = rows.index(next(r for r in rows if r[0] == "2"))
        assert rows[at][2:] == ("failed", "predicted wrong · scaled Deployment web to 2")
        ok, fail = rows[at + 1], rows[at + 2]
        assert ok[2] == "ok" and ok[3].startswith("two run: seen 2 (web-")
        assert fail[2] == "FAIL" and fail[3].startswith("expected five run (within 5s); seen 2 (web-")
        assert "at simulated" in fail[3]

        # by hand: the learner scales back (kubectl's request, as the admin); the step sees it done.
        await until(clock, lambda: session.waiting and states[2].status == "waiting", pilot)
        client = session.cluster.api_client(ADMIN)
        await drive(clock, client.patch("deployments.apps", "web", {"spec": {"replicas": 1}}, "t",
                                        subresource="scale"))
        await until(clock, lambda: session.result is not None, pilot, limit=120)
        assert states[2].status == "passed" and states[2].detail.startswith("done by hand")
        assert not session.result.passed  # the failing expectation fails the drill
        assert app.drill_panel.border_title == "Drill scale [3/3]"
        # After the drill: its referee's verdict.
        await pilot.press("R")
        await pilot.pause()
        assert isinstance(app.screen, RefereeScreen)
        assert re.match(r"referee: \d+ checks over ", app.screen.report) and app.screen.report.endswith("no violation")
        await pilot.press("escape")
        await pilot.press("q")

    # The drill's workspace is its own data folder's, never the project's folder.
    assert session.workspace == tmp_path / "drill-data" / "workspace"
    assert (session.workspace / "web.yaml").is_file()
    assert sorted(p.name for p in project.iterdir()) == ["scale.yaml"]


async def test_a_prediction_closed_without_an_answer_is_skipped(tmp_path: Path) -> None:
    session, clock, _ = session_for(tmp_path)
    app = ConsoleApp(session.cluster, live=False, watch_themes=False, drill=session)
    async with app.run_test(size=SIZE) as pilot:
        await until(clock, lambda: isinstance(app.screen, ChoiceScreen), pilot, limit=240)
        await pilot.press("escape")
        await until(clock, lambda: session.waiting, pilot)
        assert session.answers == {2: None} and session.states[1].prediction == "skipped"
        assert "prediction skipped" in str(app.drill_panel.summary.render().plain if app.drill_panel else "")
        await pilot.press("q")


def test_drill_name_alone_opens_the_console() -> None:
    """``kconsole drill NAME`` is ``kconsole drill open NAME``; the actions keep their words."""
    assert cmd.shorthand(["node-failure", "--speed", "10"]) == ["open", "node-failure", "--speed", "10"]
    assert cmd.shorthand(["./run"]) == ["open", "./run"]
    for argv in (["run", "x"], ["validate", "x"], ["list"], ["open", "run"], ["--help"]):
        assert cmd.shorthand(argv) == argv


def test_console_keys_of_a_drill_are_off_without_one(tmp_path: Path) -> None:
    from kconsole.cluster import Cluster, ClusterConfig

    app = ConsoleApp(Cluster(ClusterConfig(nodes=0, control_planes=1, http=False, data_dir=tmp_path)))
    assert app.drill_panel is None and app.check_action("drill_go", ()) is False
    assert app.panels[0] is app.resources


def test_a_drill_refuses_a_data_folder_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "x").write_text("x")
    path = tmp_path / "d.yaml"
    path.write_text(DRILL, encoding="utf-8")
    with pytest.raises(FileExistsError, match="not empty"):
        DrillSession(load(path), tmp_path / "used", VirtualClock(), watch=False)


async def test_the_palette_offers_the_drills_keys_and_the_built_in_drills(tmp_path: Path) -> None:
    from kconsole.cluster import Cluster, ClusterConfig
    from kconsole.tui.commands import drill_commands
    from kconsole.tui.screens import ConfirmScreen

    session, _, _ = session_for(tmp_path)
    in_drill = [name for name, _, _ in drill_commands(ConsoleApp(session.cluster, drill=session))]
    assert in_drill == ["Drill: let the drill do this step", "Drill: hint"]

    # A plain console lists the built-in drills; picking one (after a yes) quits for the launcher to open it.
    plain = ConsoleApp(Cluster(ClusterConfig(nodes=0, control_planes=1, http=False, data_dir=tmp_path / "p")),
                       live=False, watch_themes=False)
    entries = {name: run for name, run, _ in drill_commands(plain)}
    assert "Drill: self-healing" in entries
    async with plain.run_test(size=SIZE) as pilot:
        entries["Drill: self-healing"]()
        await pilot.pause()
        assert isinstance(plain.screen, ConfirmScreen)
        await pilot.press("y")
        await pilot.pause()
    assert plain.next_drill == "self-healing"
