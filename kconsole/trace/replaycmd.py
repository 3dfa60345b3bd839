"""``kconsole replay FILE``: play a trace as a film in the console, with no cluster running;
``kconsole replay FILE --rerun [--config OTHER.yaml] [--json]``: run its inputs again on a fresh
cluster on the virtual clock and print how each workload's outcome compares with the recording.

Exit status: 0 done (a rerun that differs is still 0: the differences are its answer); 1 the trace
or the config cannot be used; 2 bad arguments.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from kconsole.trace.fileformat import TraceError, read_trace


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="a trace file written by `kconsole trace export`")
    p.add_argument("--rerun", action="store_true",
                   help="re-execute the recorded inputs on a fresh cluster (virtual clock, same seed) and compare")
    p.add_argument("--config", default=None, metavar="OTHER.yaml",
                   help="with --rerun: change the recorded cluster (scheduler profile, node pool, controller "
                        "settings) by this config file's keys")
    p.add_argument("--json", action="store_true", help="with --rerun: print the comparison as JSON")


def run(args: argparse.Namespace) -> int:
    if not args.rerun and (args.config or args.json):
        print(f"kconsole replay: {'--config' if args.config else '--json'} needs --rerun", file=sys.stderr)
        return 2
    try:
        trace = read_trace(args.file)
    except TraceError as err:
        print(f"kconsole replay: {err}", file=sys.stderr)
        return 1
    if not args.rerun:
        from kconsole.trace.film import Film
        from kconsole.trace.filmapp import run_film

        return run_film(Path(args.file), Film(trace))
    from kconsole.cluster import START_FAILURES, ConfigError
    from kconsole.trace.outcome import render
    from kconsole.trace.rerun import check_rerunnable, rerun, rerun_config

    try:
        check_rerunnable(trace)
        rerun_config(trace, Path(args.config) if args.config else None)  # a bad file fails before any work
        result = asyncio.run(rerun(trace, Path(args.config) if args.config else None))
    except (TraceError, ConfigError) as err:
        print(f"kconsole replay: {err}", file=sys.stderr)
        return 1
    except START_FAILURES as err:
        print(f"kconsole replay: the rerun's cluster cannot start: {err}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, sort_keys=True))
        return 0
    changed = f" with {', '.join(result.changed_config)} from {args.config}" if result.changed_config else \
        (f" with {args.config} (changing nothing)" if args.config else " with the recorded config")
    print(f"rerun of {args.file}{changed}: {result.replayed} inputs replayed, {len(result.refused)} refused")
    for refused in result.refused[:10]:
        print(f"  refused at +{refused['time'] - trace.header['from']['time']:.1f}s: {refused['what']}: "
              f"{refused['code']} {refused['message']}")
    print()
    print(render(result.original, result.rerun, result.differences))
    return 0
