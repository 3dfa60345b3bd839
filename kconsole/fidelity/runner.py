"""Runs fidelity scenarios: each step is a kubectl command line whose normalised output is compared
with what upstream kube-apiserver and kubectl 1.32 print.

A scenario file is YAML: ``about`` (what it checks), ``cleanup`` (kubectl command lines for
cluster-scoped objects, run after the steps whatever happened) and ``steps``, each with ``run`` (the
kubectl arguments, shell-quoted), optional ``stdin``, and the expected ``stdout``, ``stderr`` and
``exit`` after normalisation; a key left out is not compared. ``known_difference: why`` marks a step
where kconsole is known to differ from upstream: the run reports it as known, not as a failure.
``needs: controllers`` marks a scenario whose output comes from kube-controller-manager's controllers
(an API server alone cannot pass it). Every
scenario runs in a fresh namespace (``-n`` comes first on every command line; ``<ns>`` in ``run`` or ``stdin``
stands for its name, as in the normalised output), created and deleted here.
"""

from __future__ import annotations

import asyncio
import difflib
import os
import secrets
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kconsole.fidelity.normalize import normalize

SCENARIOS = Path(__file__).parent / "scenarios"
COMPARED = ("stdout", "stderr", "exit")


@dataclass
class StepResult:
    run: str
    status: str  # PASS, FAIL, KNOWN (differs as declared), FIXED (declared difference no longer seen)
    diff: str = ""
    known_difference: str | None = None
    actual: dict[str, Any] = field(default_factory=dict)


@dataclass
class ScenarioResult:
    name: str
    path: Path
    steps: list[StepResult] = field(default_factory=list)
    error: str | None = None

    @property
    def failed(self) -> bool:
        return self.error is not None or any(s.status == "FAIL" for s in self.steps)


class Kubectl:
    """The real kubectl with a fixed kubeconfig/context and a private HOME and cache."""

    def __init__(self, kubeconfig: str | None, context: str | None, workdir: Path, binary: str | None = None) -> None:
        found = binary or shutil.which("kubectl")
        if found is None:
            raise FileNotFoundError("kubectl is not on PATH: the fidelity suite drives the real kubectl")
        self.binary = found
        self.context = context
        env = dict(os.environ)  # kubectl as the user runs it, with its own cache and HOME
        if kubeconfig:
            env["KUBECONFIG"] = kubeconfig
        env.setdefault("KUBECONFIG", str(Path.home() / ".kube" / "config"))
        self.env = {**env, "HOME": str(workdir), "KUBECACHEDIR": str(workdir / "kube-cache")}

    async def __call__(self, args: list[str], stdin: str | None = None, timeout: float = 60) -> dict[str, Any]:
        if self.context:
            args = ["--context", self.context, *args]
        proc = await asyncio.create_subprocess_exec(
            self.binary, *args, stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=self.env)
        try:
            out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin is not None else None), timeout)
        except asyncio.TimeoutError:
            proc.kill()
            await proc.wait()
            return {"stdout": "", "stderr": f"kubectl {shlex.join(args)}: no answer within {timeout:g}s\n", "exit": -1}
        return {"stdout": out.decode(errors="replace"), "stderr": err.decode(errors="replace"),
                "exit": proc.returncode or 0}


def scenario_paths(names: list[str] | None = None) -> list[Path]:
    """The scenario files named (a name, or a path to a file), or all of them in order."""
    if not names:
        return sorted(SCENARIOS.glob("*.yaml"))
    paths = []
    for name in names:
        path = Path(name)
        if not path.exists():
            path = SCENARIOS / (name if name.endswith(".yaml") else f"{name}.yaml")
        if not path.exists():
            raise FileNotFoundError(f"no scenario {name!r} (known: {', '.join(p.stem for p in scenario_paths())})")
        paths.append(path)
    return paths


def load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text())
    if not isinstance(data, dict) or not isinstance(data.get("steps"), list):
        raise ValueError(f"{path.name}: a scenario is a mapping with a list of steps")
    for i, step in enumerate(data["steps"], 1):
        if not isinstance(step, dict) or not isinstance(step.get("run"), str):
            raise ValueError(f"{path.name}: step {i} needs run: a kubectl command line")
    return data


def compare(step: dict[str, Any], actual: dict[str, Any]) -> str:
    """A unified diff of the compared keys, empty when they match (a missing final newline is marked, as diff does)."""
    lines: list[str] = []
    for key in COMPARED:
        want, got = str(step.get(key, "")), str(actual[key])
        if key in step and want != got:
            for line in difflib.unified_diff(want.splitlines(keepends=True), got.splitlines(keepends=True),
                                             f"expected {key}", f"actual {key}"):
                lines.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(lines)


async def run_scenario(kubectl: Kubectl, path: Path) -> ScenarioResult:
    data = load(path)
    result = ScenarioResult(path.stem, path)
    ns = f"fidelity-{path.stem.replace('_', '-')[:40]}-{secrets.token_hex(3)}"
    created = await kubectl(["create", "namespace", ns])
    if created["exit"] != 0:
        result.error = f"could not create namespace {ns}: {created['stderr'].strip()}"
        return result
    try:
        for step in data["steps"]:
            stdin = step.get("stdin")
            raw = await kubectl(["-n", ns, *shlex.split(step["run"].replace("<ns>", ns))],
                                None if stdin is None else stdin.replace("<ns>", ns))
            actual = {"stdout": normalize(raw["stdout"], ns), "stderr": normalize(raw["stderr"], ns),
                      "exit": raw["exit"]}
            diff = compare(step, actual)
            known = step.get("known_difference")
            status = ("KNOWN" if known else "FAIL") if diff else ("FIXED" if known else "PASS")
            result.steps.append(StepResult(step["run"], status, diff, known, actual))
    finally:
        for line in data.get("cleanup") or []:
            await kubectl([*shlex.split(line), "--ignore-not-found"])
        await kubectl(["delete", "namespace", ns, "--wait=false"])
    return result


def update(path: Path, result: ScenarioResult) -> int:
    """Rewrite the expected outputs of ``path`` from ``result``; declared differences keep upstream's text."""
    data = load(path)
    changed = 0
    for step, got in zip(data["steps"], result.steps):
        if step.get("known_difference") or got.status == "PASS" and all(k in step for k in COMPARED):
            continue
        for key in COMPARED:
            step[key] = got.actual[key]
        changed += 1
    if changed:
        path.write_text(dump(data))
    return changed


class _Dumper(yaml.SafeDumper):
    def analyze_scalar(self, scalar: str) -> Any:
        """Tabs (go-cmp's diffs indent with them) may sit in a block scalar: analysed as spaces, written as tabs."""
        analysis = super().analyze_scalar(scalar.replace("\t", " "))
        analysis.scalar = scalar
        return analysis


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value and not any(line != line.rstrip() for line in value.splitlines()) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def dump(data: dict[str, Any]) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=120)
