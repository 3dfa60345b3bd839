"""``kconsole fork --at REV|TIME NEWDIR``: a new data folder whose cluster starts as it was at a past
revision, to try another ending.

The fork is the store itself cut at that revision, not objects written again: a consistent copy of
the most advanced member's revision log (as ``kconsole snapshot save`` takes it) loses every
revision after REV (in each of its tables that records revisions), and NEWDIR gets it as every
member's log, as ``kconsole snapshot restore`` builds a cluster. So every object (Leases and Events
included) has the uid, resourceVersion and timestamps it had at REV, Secrets stay encrypted, and
the new cluster's next write takes revision REV+1. The source's encryption and service-account keys
are copied so its Secrets and tokens stay readable; the new cluster makes its own CA and kubeconfig.
Leases keep the holders they had: they expire on the new cluster's clock (which never starts before
REV's time) and the components take them over, as after a restart. The history's write log and the
recorded inputs are copied up to REV's time, so the fork's past reads as the source's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sqlite3
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from kconsole.trace.fileformat import TraceError
from kconsole.trace.when import When, parse_when, resolve

#: Files of the source data folder the fork needs (Secrets' key, service-account token key).
COPIED = ("encryption-key", "encryption-bound", "sa.key")


@dataclass(frozen=True, slots=True)
class Forked:
    revision: int
    time: float
    keys: int
    members: int


async def fork(data_dir: Path, at: When, new_dir: Path) -> Forked:
    from kconsole.store import snapshot
    from kconsole.trace.offline import member_count, on_real_etcd, open_folder

    if member_count(Path(data_dir).resolve()) == 0 and on_real_etcd(Path(data_dir).resolve()):
        raise TraceError(f"{data_dir}: its cluster runs on real etcd; a fork copies the embedded store's files "
                         "(export a trace and replay it, or save etcd with etcdctl snapshot save)")
    new_dir = Path(new_dir)
    if new_dir.exists() and (not new_dir.is_dir() or any(new_dir.iterdir())):
        raise TraceError(f"{new_dir} already exists and is not empty; fork into a new folder")
    async with open_folder(data_dir) as opened:
        bounds = await opened.history.bounds()
        revision = await resolve(at, opened.history)
        if revision < bounds.oldest:
            raise TraceError(f"revision {revision} is older than the oldest kept revision {bounds.oldest}")
        if revision > bounds.current:
            raise TraceError(f"revision {revision} is in the future (the newest revision is {bounds.current})")
        time = await opened.history.time_of(revision)
        members = member_count(opened.data_dir)
    with tempfile.TemporaryDirectory(prefix="kconsole-fork-") as tmp:
        copy = Path(tmp) / "fork.sqlite"
        snapshot.save(data_dir, copy)
        cut(copy, revision)
        new_dir.mkdir(parents=True, exist_ok=True)
        new_dir.chmod(0o700)
        st = snapshot.restore(copy, new_dir, members)
    for name in COPIED:
        source = Path(data_dir) / name
        if source.exists():
            shutil.copy2(source, new_dir / name)
    from kconsole.cluster import CLOCK_FILE

    (new_dir / CLOCK_FILE).write_text(f"{time:.6f}\n", encoding="utf-8")
    _copy_writes(Path(data_dir), new_dir, time)
    _copy_inputs(Path(data_dir), new_dir, time)
    return Forked(revision, time, st.total_keys, members)


def _copy_writes(source: Path, new_dir: Path, time: float) -> None:
    """Who wrote what (the history's write log), up to the fork's time."""
    from kconsole.cluster import HISTORY_DIR

    log = source / HISTORY_DIR / "writes.sqlite"
    if not log.is_file():
        return
    (new_dir / HISTORY_DIR).mkdir(mode=0o700, exist_ok=True)
    src = sqlite3.connect(f"{log.resolve().as_uri()}?mode=ro", uri=True)
    dst = sqlite3.connect(new_dir / HISTORY_DIR / "writes.sqlite")
    try:
        src.backup(dst)
        dst.execute("DELETE FROM writes WHERE time > ?", (time,))
        dst.commit()
    finally:
        src.close()
        dst.close()


def _copy_inputs(source: Path, new_dir: Path, time: float) -> None:
    """The recorded inputs up to the fork's time, so a trace of the fork replays them too."""
    from kconsole.trace.export import read_inputs
    from kconsole.trace.recorder import INPUTS_FILE

    kept = [r for r in read_inputs(source / INPUTS_FILE) if float(r.get("time") or 0) <= time]
    if kept:
        with (new_dir / INPUTS_FILE).open("w", encoding="utf-8") as out:
            out.writelines(json.dumps(r, separators=(",", ":"), sort_keys=True) + "\n" for r in kept)


def cut(path: Path, revision: int) -> None:
    """Drop every revision after ``revision`` from a revision-log copy."""
    db = sqlite3.connect(path)
    try:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            columns = {r[1] for r in db.execute(f'PRAGMA table_info("{table}")')}
            if "revision" in columns:
                db.execute(f'DELETE FROM "{table}" WHERE revision > ?', (revision,))
        db.execute("INSERT OR REPLACE INTO meta (name, value) VALUES ('revision_floor', ?)", (revision,))
        db.execute("UPDATE meta SET value = ? WHERE name IN ('compact_revision', 'history_floor') AND value > ?",
                   (revision, revision))
        db.commit()
        db.execute("VACUUM")
    finally:
        db.close()


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("new_dir", metavar="NEWDIR", help="the new data folder (must not exist, or be empty)")
    p.add_argument("--at", required=True, metavar="REV|TIME",
                   help="the revision to start from: a revision, an RFC 3339 time or -5m")
    p.add_argument("--data-dir", default=None, help="the source cluster's data folder (default DIR/.kconsole)")
    p.add_argument("--dir", default=".", help="manifest folder whose .kconsole to fork (default: .)")


def run(args: argparse.Namespace) -> int:
    try:
        at = parse_when(args.at)
    except ValueError as err:
        print(f"kconsole fork: --at: {err}", file=sys.stderr)
        return 2
    data_dir = Path(args.data_dir) if args.data_dir else Path(args.dir) / ".kconsole"
    try:
        done = asyncio.run(fork(data_dir, at, Path(args.new_dir)))
    except (TraceError, OSError, sqlite3.Error, ValueError) as err:
        print(f"kconsole fork: {err}", file=sys.stderr)
        return 1
    except Exception as err:  # noqa: BLE001 - the folder's lock, an expired revision: one line
        from kconsole.client import StatusError
        from kconsole.cluster import START_FAILURES

        if isinstance(err, (StatusError, *START_FAILURES)):
            print(f"kconsole fork: {getattr(err, 'message', None) or err}", file=sys.stderr)
            return 1
        raise
    print(f"forked {data_dir} at revision {done.revision} into {args.new_dir} ({done.keys} keys, "
          f"{done.members} etcd members)")
    print(f"  start it: kconsole serve --data-dir {args.new_dir}   (or: kconsole DIR --data-dir {args.new_dir})")
    return 0
