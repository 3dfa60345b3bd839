"""``kconsole fidelity``: run the fidelity scenarios with the real kubectl against any cluster and
show, step by step, where its output differs from upstream's."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path

from kconsole.fidelity.runner import Kubectl, ScenarioResult, run_scenario, scenario_paths, update
from kconsole.kubeconfig import KUBECONFIG


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("scenarios", nargs="*", metavar="SCENARIO",
                   help="scenario names or files (default: every scenario of the suite)")
    p.add_argument("--kubeconfig", default=None,
                   help="kubeconfig of the cluster (default: the data folder's if it exists, else as kubectl: "
                        "$KUBECONFIG, ~/.kube/config)")
    p.add_argument("--data-dir", default=".kconsole", help="data folder whose kubeconfig is the default (default .kconsole)")
    p.add_argument("--context", default=None, help="kubeconfig context (default: its current context)")
    p.add_argument("--update", action="store_true",
                   help="rewrite the expected outputs from this cluster (steps marked known_difference are kept)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")


async def run_all(kubeconfig: str | None, context: str | None, names: list[str] | None = None) -> list[ScenarioResult]:
    with tempfile.TemporaryDirectory(prefix="kconsole-fidelity-") as work:
        kubectl = Kubectl(kubeconfig, context, Path(work))
        return [await run_scenario(kubectl, path) for path in scenario_paths(names)]


def report(results: list[ScenarioResult]) -> str:
    lines = []
    for result in results:
        lines.append(f"== {result.name}")
        if result.error:
            lines.append(f"ERROR {result.error}")
        for i, step in enumerate(result.steps, 1):
            note = f"  ({step.known_difference})" if step.known_difference else ""
            lines.append(f"{step.status:<5} {i:>2} kubectl {step.run}{note}")
            if step.status in ("FAIL", "KNOWN") and step.diff:
                lines.extend("      " + line for line in step.diff.rstrip("\n").splitlines())
    counts = {s: sum(st.status == s for r in results for st in r.steps) for s in ("PASS", "FAIL", "KNOWN", "FIXED")}
    lines.append(", ".join(f"{n} {s.lower()}" for s, n in counts.items())
                 + f" in {len(results)} scenarios" + (" (FIXED: a declared difference no longer seen)" if counts["FIXED"] else ""))
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    kubeconfig = args.kubeconfig
    if kubeconfig is None and (Path(args.data_dir) / KUBECONFIG).exists():
        kubeconfig = str(Path(args.data_dir) / KUBECONFIG)
    try:
        results = asyncio.run(run_all(kubeconfig, args.context, args.scenarios))
    except (FileNotFoundError, ValueError) as e:
        print(f"kconsole fidelity: {e}", file=sys.stderr)
        return 2
    if args.update:
        for result in results:
            if not result.error and (n := update(result.path, result)):
                print(f"updated {n} steps of {result.path}", file=sys.stderr)
    if args.json:
        print(json.dumps([{"scenario": r.name, "error": r.error, "steps": [
            {"run": s.run, "status": s.status, "known_difference": s.known_difference, "diff": s.diff}
            for s in r.steps]} for r in results], indent=2))
    else:
        sys.stdout.write(report(results))
    return 1 if any(r.failed for r in results) and not args.update else 0
