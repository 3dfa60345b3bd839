"""Drills: every built-in drill passes headless; verdicts name expected, seen and simulated time;
the same seed gives the same events; bad files are reported as file:line:col."""

from __future__ import annotations

import json
import re
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from kconsole import cli
from kconsole.drills.runner import DrillRunner, RunResult, StepState
from kconsole.drills.spec import KEYS, DrillError, builtin_paths, load, parse

ROOT = Path(__file__).resolve().parents[2]

NAMESPACE = """
manifests:
  - name: web.yaml
    content:
      - {apiVersion: v1, kind: Namespace, metadata: {name: t}}
      - apiVersion: apps/v1
        kind: Deployment
        metadata: {name: web, namespace: t}
        spec:
          replicas: 2
          selector: {matchLabels: {app: web}}
          template:
            metadata: {labels: {app: web}}
            spec: {containers: [{name: web, image: "nginx:1.25"}]}
"""


def drill(tmp_path: Path, body: str, name: str = "d.yaml") -> Path:
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return path


async def run(path: Path, seed: int | None = None, data_dir: Path | None = None) -> tuple[RunResult, list[str]]:
    seen: list[str] = []

    def listener(state: StepState) -> None:
        seen.append(f"{state.step.index}:{state.status}:{len(state.verdicts)}")

    result = await DrillRunner(load(path), seed=seed, data_dir=data_dir, listener=listener).run()
    return result, seen


@pytest.mark.parametrize("name", sorted(builtin_paths()))
async def test_each_builtin_drill_passes(name: str) -> None:
    result, _ = await run(builtin_paths()[name])
    failed = {f"{s.step.index}. {s.step.name}": [s.detail, *(v.text for v in s.verdicts if not v.passed)]
              for s in result.steps if s.status == "failed"}
    assert result.passed, (result.setup_errors, failed, [str(v) for v in result.referee.violations])
    assert all(s.status in ("passed", "skipped") for s in result.steps)
    assert result.referee is not None and result.referee.events > 0, "the referee watched, silently"


def test_builtin_drills_ask_before_they_act() -> None:
    """A course drill asks at least one prediction, and each has a title and a goal."""
    for name, path in builtin_paths().items():
        d = load(path)
        assert d.title and d.goal, name
        assert any(s.predict is not None for s in d.steps), f"{name} asks no prediction"


async def test_a_wrong_expectation_fails_naming_expected_seen_and_time(tmp_path: Path) -> None:
    path = drill(tmp_path, "title: wrong\ngoal: fails\n" + NAMESPACE + """
steps:
  - expect:
      - count: {namespace: t, selector: app=web, phase: Running}
        equals: 2
        within: 60s
  - name: three expected, two run
    expect:
      - count: {namespace: t, selector: app=web, phase: Running}
        equals: 3
        within: 20s
      - object: {kind: Deployment, namespace: t, name: web}
        field: .spec.replicas
        equals: 2
""")
    result, seen = await run(path)
    assert not result.passed
    first, second = result.steps
    assert first.status == "passed" and second.status == "failed"
    bad = [v for v in second.verdicts if not v.passed]
    good = [v for v in second.verdicts if v.passed]
    assert len(bad) == 1 and len(good) == 1
    text = bad[0].text
    assert "expected exactly 3 Pod objects in t -l app=web phase Running (within 20s)" in text
    assert re.search(r"seen 2 \(web-[a-z0-9]+-[a-z0-9]+ Running worker-\d", text), text
    started = second.started or 0.0
    assert bad[0].at - started == pytest.approx(20.0)
    assert re.search(r"at simulated \d+s \(20s after the step\)", text), text
    assert "2:running:0" in seen and seen[-1] == "2:failed:2", "observers see each step start, verdicts, end"


async def test_time_bounds_not_before_and_stays(tmp_path: Path) -> None:
    """notBefore fails a condition that holds too early; stays fails one that stops holding."""
    path = drill(tmp_path, "title: bounds\ngoal: fail early and stop holding\n" + NAMESPACE + """
steps:
  - expect:
      - count: {namespace: t, selector: app=web}
        equals: 2
        notBefore: 30s
        within: 60s
  - fault: {type: kubelet-stop, target: worker-1}
    expect:
      - object: {kind: Node, name: worker-1}
        field: .status.conditions[?(@.type=="Ready")].status
        equals: true
        stays: 5m
""")
    result, _ = await run(path)
    early = result.steps[0].verdicts[0]
    assert not early.passed and "not before 30s" in early.text and "held already 0s after the step" in early.text
    stopped = result.steps[1].verdicts[0]
    assert not stopped.passed and "staying for 5m0s" in stopped.text, stopped.text
    assert "it held from simulated 0s" in stopped.text, "an unquoted true is the condition's \"True\""
    assert re.search(r'but stopped: seen .* = "Unknown" at simulated [0-9ms.]+$', stopped.text), stopped.text
    assert 40 <= stopped.at - (result.steps[1].started or 0) <= 60, "NotReady after the node grace period"


async def test_same_seed_same_events_in_the_same_order(tmp_path: Path) -> None:
    path = builtin_paths()["self-healing"]
    first, _ = await run(path, seed=7, data_dir=tmp_path / "a")
    second, _ = await run(path, seed=7, data_dir=tmp_path / "b")
    assert first.passed and second.passed
    keys = [(e.time, *e.key()) for e in first.events]
    assert len(keys) > 40
    assert keys == [(e.time, *e.key()) for e in second.events]
    other, _ = await run(path, seed=8, data_dir=tmp_path / "c")
    assert [e.key() for e in other.events] != [e.key() for e in first.events], "the seed names the pods"


async def test_manifests_are_copied_into_the_workspace_never_edited_in_place(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: '1'}\n")
    before = (source / "cm.yaml").read_text()
    path = drill(source, """
title: copy
goal: the drill's own folder
manifests: [cm.yaml]
files:
  - {name: edit.yaml, saveAs: cm.yaml, content: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {a: "2"}}}
steps:
  - apply: edit.yaml
    expect:
      - object: {kind: ConfigMap, name: c}
        field: .data.a
        equals: "2"
  - kubectl: {command: "get configmaps c -o jsonpath={.data.a}", output: "^2$"}
  - kubectl: {command: get cm, output: "^NAME   DATA   AGE\\nc      1      0s$"}
  - delete: {file: cm.yaml}
    expect:
      - object: {kind: ConfigMap, name: c}
        exists: false
        within: 5s
""")
    data = tmp_path / "data"
    result, _ = await run(path, data_dir=data)
    assert result.passed, [(s.detail, [v.text for v in s.verdicts]) for s in result.steps]
    assert (source / "cm.yaml").read_text() == before
    assert not (data / "workspace" / "cm.yaml").exists() and (data / "workspace" / "edit.yaml").exists() is False
    assert (data / "cluster").is_dir()


async def test_restart_resumes_from_the_store(tmp_path: Path) -> None:
    path = drill(tmp_path, "title: restart\ngoal: the store outlives the processes\n" + NAMESPACE + """
steps:
  - patch: {kind: Deployment, namespace: t, name: web, patch: {metadata: {labels: {mark: before}}}}
  - restart: true
    expect:
      - object: {kind: Deployment, namespace: t, name: web}
        field: .metadata.labels.mark
        equals: before
      - count: {namespace: t, selector: app=web, phase: Running}
        equals: 2
        within: 60s
""")
    result, _ = await run(path)
    assert result.passed, [(s.detail, [v.text for v in s.verdicts]) for s in result.steps]
    assert result.steps[1].detail.startswith("restarted the cluster on its store")


def test_validate_reports_file_line_col(tmp_path: Path) -> None:
    path = drill(tmp_path, """title: broken
goal: every mistake located
steps:
  - wait: soon
  - apply: missing.yaml
  - fault: {type: etcd-explode, target: leader}
  - expect:
      - count: {namespace: x}
        equal: 3
  - predict: {question: q, choices: [a, b], answer: c}
  - kubectl: get pods
    scale: {kind: deploy, name: web, replicas: 2}
  - restore: never-saved
""")
    with pytest.raises(DrillError) as info:
        load(path)
    errors = info.value.errors
    where = str(path)
    assert f"{where}:4:11: wait must be a duration like 30s, 5m or 1m30s, got 'soon'" in errors
    assert f"{where}:5:12: apply: no file 'missing.yaml' in files or manifests, nor beside the drill" in errors
    assert any(e.startswith(f"{where}:6:19: unknown fault type 'etcd-explode'") for e in errors)
    assert any(e.startswith(f"{where}:9:9: unknown key 'equal' in an expectation") for e in errors)
    assert f"{where}:10:53: answer must be one of the choices or its number 1..2, got 'c'" in errors
    assert f"{where}:8:9: a count expectation needs equals, atLeast or atMost" in errors
    assert f"{where}:11:5: step 6 has two actions (scale and kubectl); split it" in errors
    assert f"{where}:13:14: restore: no earlier step saves a snapshot named 'never-saved'" in errors
    assert all(re.match(rf"{re.escape(where)}:\d+:\d+: ", e) for e in errors), errors


def test_validate_reports_yaml_syntax_and_missing_keys(tmp_path: Path) -> None:
    with pytest.raises(DrillError) as info:
        parse("title: x\nsteps: [\n", tmp_path / "s.yaml")
    assert re.match(rf"{re.escape(str(tmp_path / 's.yaml'))}:3:1: YAML syntax error", info.value.errors[0])
    inline = "title: t\ngoal: g\nmanifests:\n  - name: x.yaml\n    content: |\n      kind: ConfigMap\n      a: {b\nsteps: [{wait: 1s}]\n"
    with pytest.raises(DrillError) as info:
        parse(inline, tmp_path / "i.yaml")
    assert info.value.errors == [f"{tmp_path / 'i.yaml'}:5:14: x.yaml:3:1: YAML syntax error: did not find expected ',' or '}}'"]
    with pytest.raises(DrillError) as info:
        parse("title: x\n", tmp_path / "m.yaml")
    assert f"{tmp_path / 'm.yaml'}:1:1: missing required key 'goal'" in info.value.errors


def test_every_key_is_documented() -> None:
    doc = (ROOT / "docs" / "drills.md").read_text(encoding="utf-8")
    missing = [f"{section}.{key}" for section, keys in KEYS.items() for key in keys if f"`{key}`" not in doc]
    assert not missing, missing
    for name in builtin_paths():
        assert f"`{name}`" in doc, f"built-in drill {name} is not listed in docs/drills.md"


def test_cli_list_and_validate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["drill", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(builtin_paths()) and lines[0].split()[0] == sorted(builtin_paths())[0]
    bad = drill(tmp_path, "title: t\ngoal: g\nsteps:\n  - wait: 1x\n")
    assert cli.main(["drill", "validate", "self-healing", str(bad)]) == 2
    out = capsys.readouterr()
    assert "self-healing.yaml: ok" in out.out
    assert f"{bad}:4:11: wait must be a duration" in out.err


def test_cli_run_json_and_junit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = drill(tmp_path, "title: fails\ngoal: g\n" + NAMESPACE + """
steps:
  - name: runs
    expect:
      - count: {namespace: t, selector: app=web, phase: Running}
        equals: 2
        within: 60s
  - name: wrong
    expect:
      - object: {kind: Deployment, namespace: t, name: web}
        field: .spec.replicas
        equals: 5
""")
    junit = tmp_path / "out" / "junit.xml"
    assert cli.main(["drill", "run", str(path), "--json", "--junit", str(junit), "--seed", "3"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] is False and report["seed"] == 3
    assert [s["status"] for s in report["steps"]] == ["passed", "failed"]
    assert report["steps"][1]["verdicts"][0]["text"].startswith(
        'expected Deployment t/web .spec.replicas equals 5 (at once); seen .spec.replicas = 2 at simulated')
    assert any(e["reason"] == "ScalingReplicaSet" for e in report["events"])
    suite = ET.parse(junit).getroot()
    assert suite.get("tests") == "3" and suite.get("failures") == "1"  # the steps and the referee
    failure = suite.findall("testcase")[1].find("failure")
    assert failure is not None and "equals 5" in (failure.text or "")
    assert cli.main(["drill", "run", str(path)]) == 1
    text = capsys.readouterr().out.splitlines()
    assert text[0] == "drill d: fails (seed 1)"
    assert text[1].split() == ["[", "0s]", "step", "1:", "runs"]
    assert any(line.strip().startswith("ok   exactly 2 Pod objects in t -l app=web phase Running") for line in text)
    assert any(line.strip().startswith("FAIL expected Deployment t/web .spec.replicas equals 5") for line in text)
    assert re.match(r"drill d FAILED \(1 of 2 steps\): \d+ simulated seconds in [\d.]+ s$", text[-1]), text[-1]
    assert cli.main(["drill", "run", "no-such-drill"]) == 2
    assert "no such file nor built-in drill" in capsys.readouterr().err


async def test_a_wrong_proxy_expectation_fails_naming_the_rules_seen(tmp_path: Path) -> None:
    """Proxy rules are component state, read through the node's kube-proxy handle: 2 endpoints are
    not 3, a missing Service has no rule, and the text names expected, seen and simulated time."""
    service = ("      - {apiVersion: v1, kind: Service, metadata: {name: web, namespace: t}, "
               "spec: {selector: {app: web}, ports: [{port: 80}]}}\n")
    path = drill(tmp_path, "title: proxy\ngoal: wrong endpoints\n" + NAMESPACE + service + """
steps:
  - expect:
      - proxy: {node: worker-1, service: t/web}
        equals: 2
        within: 60s
  - name: three endpoints expected, two seen
    expect:
      - proxy: {node: worker-2, service: t/web, port: 80}
        equals: 3
        within: 10s
      - proxy: {node: worker-2, service: t/nothing}
        exists: false
      - proxy: {node: worker-9, service: t/web}
        exists: true
""")
    result, _ = await run(path)
    first, second = result.steps
    assert first.status == "passed" and second.status == "failed"
    wrong, absent, nowhere = second.verdicts
    assert not wrong.passed and absent.passed and not nowhere.passed
    assert ("expected kube-proxy on worker-2 sends Service t/web:80 to exactly 3 endpoint(s) (within 10s)"
            in wrong.text), wrong.text
    assert re.search(r"seen t/web:80 -> 10\.\d+\.\d+\.\d+ on worker-2: 2 endpoint\(s\) \(10\.244\.\d+\.\d+:80, "
                     r"10\.244\.\d+\.\d+:80\) at simulated \d+s \(10s after the step\)", wrong.text), wrong.text
    assert "no rule for t/nothing on worker-2" in absent.text
    assert ("no kube-proxy on node worker-9 (nodes with one: control-plane-0, control-plane-1, control-plane-2, "
            "worker-1, worker-2, worker-3)") in nowhere.text


def test_a_proxy_expectation_names_its_node_and_service(tmp_path: Path) -> None:
    path = drill(tmp_path, """title: bad proxy
goal: refused
steps:
  - expect:
      - proxy: {node: worker-1, service: web}
        equals: 1
      - proxy: {service: t/web, ports: 80}
      - proxy: {node: worker-1, service: t/web}
        exists: true
        equals: 1
""")
    with pytest.raises(DrillError) as info:
        load(path)
    where = str(path)
    assert info.value.errors == [f"{where}:5:42: service must be namespace/name, got 'web'",
                                 f"{where}:7:9: a proxy expectation needs equals, atLeast, atMost (endpoints) "
                                 "or exists",
                                 f"{where}:7:16: node must be a non-empty string, got nothing",
                                 f"{where}:7:33: unknown key 'ports' in proxy (known: node, service, port)",
                                 f"{where}:9:17: exists must be true or false, alone"]
