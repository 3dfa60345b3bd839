"""``kconsole drill NAME|FILE`` (the console) and ``kconsole drill run|validate|list|chaos`` (headless, CI).

``kconsole drill NAME`` is short for ``kconsole drill open NAME``: the first argument is an action
when it is one (``open``, ``run``, ``validate``, ``list``, ``chaos``) or a flag, else the drill to open. A drill
file named like an action opens with ``open`` or a path (``kconsole drill ./run``).

``run FILE|NAME`` prints each step's verdicts as they land, then the referee's, and exits 0 only
when every expectation held and the referee found no violation (1 otherwise, 2 for a drill file that
does not validate). ``--json`` prints one JSON document instead; ``--junit FILE`` also writes a JUnit
XML report (one test case per step, one for the referee). ``chaos`` runs seeded fault schedules
(:mod:`kconsole.drills.chaos`) and prints the command that replays a failing seed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any, TextIO
from xml.etree import ElementTree as ET

from kconsole.cluster import ConfigError
from kconsole.drills.spec import DrillError, builtin_paths, load, resolve


#: The first words ``kconsole drill`` reads as an action; anything else is a drill to open.
ACTIONS = ("open", "run", "validate", "list", "chaos")


def shorthand(argv: list[str]) -> list[str]:
    """``kconsole drill NAME ...`` -> ``kconsole drill open NAME ...``."""
    if argv and argv[0] not in ACTIONS and not argv[0].startswith("-"):
        return ["open", *argv]
    return argv


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.usage = "kconsole drill [-h] NAME|FILE [open flags] | {open,run,validate,list} ..."
    sub = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    show = sub.add_parser("open", help="open the console with the Drill panel (the default: kconsole drill NAME)")
    show.add_argument("drill", help="a drill file, or a built-in drill's name (kconsole drill list)")
    show.add_argument("--seed", type=int, default=None, help="seed (default: the drill's, else 1)")
    show.add_argument("--speed", type=float, default=1.0, help="simulated seconds per wall second (default 1; "
                                                                "+ and - change it in the console)")
    show.add_argument("--port", type=int, default=6443, help="HTTPS port for kubectl (0 = any free port)")
    show.add_argument("--address", default="127.0.0.1", help="address to serve on (default loopback only)")
    show.add_argument("--insecure-http", action="store_true", help="serve plain HTTP (a token is still required)")
    show.add_argument("--data-dir", default=None, help="the drill's data folder, new or empty (default: a "
                                                       "temporary folder, removed on exit)")
    show.add_argument("--theme", default=None, help="theme name or themes/*.yaml file")
    show.add_argument("--readonly", action="store_true", help="disable the dangerous keys")
    run = sub.add_parser("run", help="run a drill headless on the virtual clock")
    run.add_argument("drill", help="a drill file, or a built-in drill's name (kconsole drill list)")
    run.add_argument("--seed", type=int, default=None, help="seed (default: the drill's, else 1)")
    run.add_argument("--json", action="store_true", help="print one JSON document with steps, verdicts, events")
    run.add_argument("--junit", default=None, metavar="FILE", help="also write a JUnit XML report")
    run.add_argument("--verbose", action="store_true", help="also print the components' log lines")
    run.add_argument("--data-dir", default=None, help="keep the drill's workspace and store here "
                                                      "(default: a temporary folder, removed afterwards)")
    run.add_argument("--no-referee", action="store_true",
                     help="run without the referee (its checkers judge every run by default)")
    chaos = sub.add_parser("chaos", help="random, seeded fault schedules over a busy workload, the referee on")
    chaos.add_argument("--seed", type=int, default=1, help="the first seed (default 1)")
    chaos.add_argument("--seeds", type=int, default=1, help="how many seeds to run, from --seed on (default 1)")
    chaos.add_argument("--duration", default="10m", help="simulated time of each schedule (default 10m)")
    chaos.add_argument("--json", action="store_true", help="print one JSON document per seed")
    chaos.add_argument("--verbose", action="store_true", help="also print each seed's schedule")
    validate = sub.add_parser("validate", help="check drill files; errors as file:line:col: problem")
    validate.add_argument("files", nargs="+", help="drill files or built-in names")
    sub.add_parser("list", help="list the built-in drills, one line each")


def run(args: argparse.Namespace) -> int:
    if args.action == "open":
        from kconsole.tui.launch import run_drill_console

        return run_drill_console(args)
    if args.action == "list":
        for name, path in builtin_paths().items():
            try:
                title = load(path).title
            except DrillError as err:
                title = f"(invalid: {err.errors[0]})"
            print(f"{name:<28}{title}")
        return 0
    if args.action == "chaos":
        return _chaos(args)
    if args.action == "validate":
        status = 0
        for item in args.files:
            try:
                drill = load(resolve(item))
                print(f"{drill.path}: ok ({len(drill.steps)} steps)")
            except DrillError as err:
                print("\n".join(err.errors), file=sys.stderr)
                status = 2
        return status
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    from kconsole.drills.runner import DrillRunner, StepState

    try:
        drill = load(resolve(args.drill))
    except DrillError as err:
        print("\n".join(err.errors), file=sys.stderr)
        return 2
    out = sys.stdout
    if not args.verbose:  # the components' complaints (a write refused without quorum) are the drill's point
        logging.getLogger("kconsole").setLevel(logging.CRITICAL + 1)

    printed: dict[int, tuple[bool, int]] = {}  # step index -> (detail shown, verdicts shown)

    def show(state: StepState) -> None:
        """Print what is new about the step: its header, its action's result, each verdict, its end."""
        if args.json:
            return
        step = state.step
        if step.index not in printed:
            out.write(f"[{_t(state.started)}] step {step.index}: {step.name}\n")
            if step.say:
                out.write(f"            {' '.join(step.say.split())}\n")
            if step.predict is not None:
                out.write(f"            predict: {step.predict.question}\n")
            printed[step.index] = (False, 0)
        detail_shown, verdicts_shown = printed[step.index]
        if state.detail and not detail_shown:
            for line in state.detail.splitlines():
                out.write(f"            {line}\n")
            detail_shown = True
        for v in state.verdicts[verdicts_shown:]:
            out.write(f"            {'ok  ' if v.passed else 'FAIL'} {v.text}\n")
        printed[step.index] = (detail_shown, len(state.verdicts))
        if state.status in ("passed", "failed", "skipped"):
            answer = f" (prediction {state.prediction})" if state.prediction else ""
            out.write(f"[{_t(state.ended)}] step {step.index} {state.status.upper()}{answer}\n")
        out.flush()

    if args.data_dir and Path(args.data_dir).is_dir() and any(Path(args.data_dir).iterdir()):
        print(f"kconsole drill run: {args.data_dir} is not empty; a drill's data folder must be new or empty",
              file=sys.stderr)
        return 2
    runner = DrillRunner(drill, seed=args.seed, data_dir=Path(args.data_dir) if args.data_dir else None,
                         listener=show, referee=not args.no_referee)
    if not args.json:
        print(f"drill {drill.name}: {drill.title} (seed {runner.seed})")
    wall = time.monotonic()
    try:
        result = asyncio.run(runner.run())
    except ConfigError as err:
        print(f"{drill.path}: cluster: {err}", file=sys.stderr)
        return 2
    except FileExistsError as err:
        print(f"kconsole drill run: {err}", file=sys.stderr)
        return 2
    wall = time.monotonic() - wall
    if args.junit:
        write_junit(result, Path(args.junit), wall)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        for error in result.setup_errors:
            print(f"setup failed: {error}")
        if result.referee is not None:
            print_referee(result.referee, out)
        failed = [s for s in result.steps if s.status == "failed"]
        verdict = "PASSED" if result.passed else f"FAILED ({len(failed)} of {len(result.steps)} steps)"
        if result.referee is not None and not result.referee.passed:
            verdict = f"FAILED ({len(failed)} of {len(result.steps)} steps, {len(result.referee.violations)} " \
                      f"referee violation(s))"
        print(f"drill {drill.name} {verdict}: {result.duration:g} simulated seconds in {wall:.1f} s")
    return 0 if result.passed else 1


def print_referee(report: Any, out: TextIO) -> None:
    """The referee's summary line, then each violation with the history that shows it."""
    out.write(report.summary() + "\n")
    for v in report.violations:
        out.write(f"  VIOLATION at simulated {_t(v.time).strip()}: {v}\n")


def _chaos(args: argparse.Namespace) -> int:
    from kconsole.drills.chaos import replay_command, run_chaos
    from kconsole.objects.duration import parse_duration

    try:
        duration = float(parse_duration(str(args.duration)))
    except ValueError as err:
        print(f"kconsole drill chaos: --duration: {err}", file=sys.stderr)
        return 2
    if duration <= 0 or args.seeds < 1:
        print("kconsole drill chaos: --duration must be positive and --seeds at least 1", file=sys.stderr)
        return 2
    if not args.verbose:
        logging.getLogger("kconsole").setLevel(logging.CRITICAL + 1)
    failing = []
    wall = time.monotonic()
    for seed in range(args.seed, args.seed + args.seeds):
        result = asyncio.run(run_chaos(seed, duration))
        if args.json:
            print(json.dumps(result.to_dict()))
        else:
            log = result.log
            print(f"seed {seed}: {'PASSED' if result.passed else 'FAILED'} ({log.faults} faults, {log.operations} "
                  f"operations, {log.increments} counter increments) in {result.wall:.1f} s")
            if args.verbose or not result.passed:
                for line in log.lines if args.verbose else ():
                    print(f"    {line}")
                for error in result.run.setup_errors:
                    print(f"  setup failed: {error}")
                if result.run.referee is not None and not result.run.referee.passed:
                    print_referee(result.run.referee, sys.stdout)
                if not result.passed:
                    print(f"  replay: {replay_command(seed, duration)}")
        if not result.passed:
            failing.append(seed)
        sys.stdout.flush()
    if not args.json and args.seeds > 1:
        print(f"{args.seeds - len(failing)} of {args.seeds} seeds passed in {time.monotonic() - wall:.1f} s"
              + (f"; failing: {', '.join(map(str, failing))}" if failing else ""))
    return 1 if failing else 0


def _t(seconds: float | None) -> str:
    from kconsole.objects.duration import format_duration

    return f"{format_duration(round(seconds or 0.0, 1)):>8}"


def write_junit(result: object, path: Path, wall: float) -> None:
    """One testsuite per drill, one testcase per step; a failed step's verdicts are its failure text."""
    from kconsole.drills.runner import RunResult

    assert isinstance(result, RunResult)
    failures = sum(s.status == "failed" for s in result.steps) + (1 if result.setup_errors else 0)
    suite = ET.Element("testsuite", name=f"drill {result.drill.name}", tests=str(len(result.steps)),
                       failures=str(failures), skipped=str(sum(s.status in ("skipped", "pending")
                                                               for s in result.steps)),
                       time=f"{wall:.3f}")
    if result.setup_errors:
        case = ET.SubElement(suite, "testcase", classname=result.drill.name, name="setup")
        ET.SubElement(case, "failure", message="manifests failed to apply").text = "\n".join(result.setup_errors)
    for state in result.steps:
        case = ET.SubElement(suite, "testcase", classname=result.drill.name,
                             name=f"{state.step.index}. {state.step.name}",
                             time=f"{(state.ended or 0) - (state.started or 0):.3f}")
        texts = [v.text for v in state.verdicts if not v.passed]
        if state.status == "failed":
            ET.SubElement(case, "failure", message=(texts or [state.detail])[0][:500]).text = \
                "\n".join([state.detail, *texts]).strip()
        elif state.status in ("skipped", "pending"):
            ET.SubElement(case, "skipped", message="prediction only (headless)" if state.prediction else "not run")
        out = "\n".join([state.detail, *(v.text for v in state.verdicts if v.passed)]).strip()
        if out:
            ET.SubElement(case, "system-out").text = out
    if result.referee is not None:
        suite.set("tests", str(len(result.steps) + 1))
        case = ET.SubElement(suite, "testcase", classname=result.drill.name, name="referee")
        if not result.referee.passed:
            suite.set("failures", str(failures + 1))
            ET.SubElement(case, "failure", message=str(result.referee.violations[0].message)[:500]).text = \
                "\n".join(str(v) for v in result.referee.violations)
        ET.SubElement(case, "system-out").text = result.referee.summary()
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)
