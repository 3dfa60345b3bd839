"""``kconsole trace export [--from REV|TIME] [--to REV|TIME] FILE``: write a trace of a data folder's
cluster (its history and recorded inputs; stopped, or running and read over its HTTP front) to FILE
(docs/history.md, "Traces").

Exit status: 0 written; 1 the folder or the history refused (in use, no data, compacted revision);
2 bad arguments.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from kconsole.trace.fileformat import TraceError, write_trace
from kconsole.trace.when import parse_when, resolve


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", required=True, metavar="export")
    e = sub.add_parser("export", help="write the history and inputs of a data folder to a trace file (JSON lines)")
    e.add_argument("file", help="the trace file to write")
    e.add_argument("--from", dest="start", default=None, metavar="REV|TIME",
                   help="first revision (its state is the trace's starting picture): a revision, an RFC 3339 "
                        "time or -5m (default: the oldest kept revision)")
    e.add_argument("--to", dest="end", default=None, metavar="REV|TIME", help="last revision (default: the newest)")
    e.add_argument("--data-dir", default=None, help="the cluster's data folder (default DIR/.kconsole)")
    e.add_argument("--dir", default=".", help="manifest folder whose .kconsole to use (default: .)")
    e.add_argument("--force", action="store_true", help="overwrite FILE if it exists")


def run(args: argparse.Namespace) -> int:
    try:
        start = parse_when(args.start) if args.start else None
        end = parse_when(args.end) if args.end else None
    except ValueError as err:
        print(f"kconsole trace export: {err}", file=sys.stderr)
        return 2
    target = Path(args.file)
    if target.exists() and not args.force:
        print(f"kconsole trace export: {target} already exists (--force overwrites it)", file=sys.stderr)
        return 2
    data_dir = Path(args.data_dir) if args.data_dir else Path(args.dir) / ".kconsole"
    try:
        lines, header = asyncio.run(_export(data_dir, target, start, end))
    except (TraceError, OSError) as err:
        print(f"kconsole trace export: {err}", file=sys.stderr)
        return 1
    except Exception as err:  # noqa: BLE001 - the folder's lock, an expired revision: one line
        from kconsole.cluster import START_FAILURES
        from kconsole.client import StatusError

        if isinstance(err, (StatusError, *START_FAILURES)):
            print(f"kconsole trace export: {getattr(err, 'message', None) or err}", file=sys.stderr)
            return 1
        raise
    span = f"revisions {header['from']['revision']}..{header['to']['revision']}"
    inputs = "" if header["inputsRecorded"] else " (no inputs recorded in this folder)"
    print(f"wrote {target}: {lines} lines, {span}{inputs}")
    return 0


async def _export(data_dir: Path, target: Path, start: object, end: object) -> tuple[int, dict]:
    from kconsole.trace.export import build_trace
    from kconsole.trace.offline import open_folder
    from kconsole.trace.recorder import INPUTS_FILE

    async with open_folder(data_dir) as opened:
        first = await resolve(start, opened.history) if start is not None else None  # type: ignore[arg-type]
        last = await resolve(end, opened.history) if end is not None else None  # type: ignore[arg-type]
        trace = await build_trace(opened.history, opened.client, opened.data_dir / INPUTS_FILE,
                                  first=first, last=last)
    tmp = target.with_name(target.name + ".part")
    with tmp.open("w", encoding="utf-8") as out:
        lines = write_trace(out, trace)
    os.replace(tmp, target)
    return lines, trace.header
