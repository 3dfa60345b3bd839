"""``kconsole snapshot save|status|restore``, like ``etcdctl snapshot`` / ``etcdutl snapshot``.

A snapshot is one SQLite file: a consistent copy of the most advanced member's revision log (the
one at the highest revision), taken with SQLite's online backup API, which reads a committed
state while the cluster keeps writing. ``save`` works on a data folder whether or not kconsole
is running there.

``restore FILE --data-dir D`` builds a fresh cluster in the data folder D (like etcdutl, new
membership): every member (``D/etcd/etcd-N``) gets a copy of the file as its revision log and a
new Raft log that starts at index 1 with that state applied, so a cluster started on D serves the
same objects at the same revision and its next write takes the next revision. Secrets stay
encrypted as they were stored: as upstream needs the same EncryptionConfiguration, D needs the
source's ``encryption-key`` (or the cluster the same ``encryption-config``) to read them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path

from kconsole.objects.humanize import human_bytes
from kconsole.store.etcdctl import DEFAULT_DATA_DIR, folder_status, members_root, table
from kconsole.store.facade import MEMBERS_DIR, member_names
from kconsole.store.raft.core import HardState
from kconsole.store.raft.wal import FileStorage


#: etcdctl's fileutil.PrivateFileMode.
SNAPSHOT_MODE = 0o600


@dataclass(frozen=True, slots=True)
class SnapshotStatus:
    hash: int
    revision: int
    total_keys: int
    total_size: int


def save(data_dir: str | os.PathLike[str], dest: str | os.PathLike[str]) -> SnapshotStatus:
    """Copy the most advanced member's revision log to ``dest``."""
    target = Path(dest)
    if target.exists():
        raise FileExistsError(f"{target} already exists")
    statuses = folder_status(data_dir)
    best = max(statuses, key=lambda s: (s.revision, s.is_leader))
    source = members_root(data_dir) / best.name / "db.sqlite"
    tmp = target.with_name(target.name + ".part")
    # The copy holds every Secret: owner-only, as etcdctl creates its file (0600), before any byte.
    tmp.unlink(missing_ok=True)
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, SNAPSHOT_MODE))
    src = sqlite3.connect(f"{source.resolve().as_uri()}?mode=ro", uri=True)
    dst = sqlite3.connect(tmp)
    try:
        src.backup(dst)
        dst.execute("PRAGMA journal_mode=DELETE")
    finally:
        src.close()
        dst.close()
    os.replace(tmp, target)
    return status(target)


def status(path: str | os.PathLike[str]) -> SnapshotStatus:
    """Revision, live keys, size, and a hash of the live key-values (same keyspace, same hash)."""
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"{file}: no such snapshot file")
    try:
        db = sqlite3.connect(f"{file.resolve().as_uri()}?mode=ro", uri=True)
        try:
            top = db.execute("SELECT MAX(revision) FROM kv").fetchone()[0] or 0
            floor = db.execute("SELECT value FROM meta WHERE name = 'revision_floor'").fetchone()
            crc = 0
            keys = 0
            for name, value, create, mod, version in db.execute(
                "SELECT name, value, create_revision, revision, version FROM kv"
                " WHERE id IN (SELECT MAX(id) FROM kv GROUP BY name) AND deleted = 0 ORDER BY name"
            ):
                keys += 1
                crc = zlib.crc32(f"{name}\0{create}\0{mod}\0{version}\0".encode(), crc)
                crc = zlib.crc32(value, crc)
        finally:
            db.close()
    except sqlite3.DatabaseError as err:
        raise ValueError(f"{file}: not a kconsole snapshot ({err})") from None
    return SnapshotStatus(crc, max(top, floor[0] if floor else 0), keys, file.stat().st_size)


def restore(path: str | os.PathLike[str], data_dir: str | os.PathLike[str], members: int = 3) -> SnapshotStatus:
    """A fresh ``members``-member cluster in ``data_dir`` holding the snapshot's state."""
    if members < 1:
        raise ValueError(f"--members must be at least 1, got {members}")
    st = status(path)
    data = Path(data_dir)
    root = data / MEMBERS_DIR
    for folder in (data, root):
        if folder.exists() and any(folder.glob("etcd-*")):
            raise FileExistsError(f"{data} already holds etcd members; restore into a new folder")
    root.mkdir(parents=True, exist_ok=True)
    for name in member_names(members):
        folder = root / name
        folder.mkdir()
        shutil.copyfile(path, folder / "db.sqlite")
        wal = FileStorage(folder / "wal")
        wal.load()
        wal.save_snapshot(1, 1, restore=True)
        wal.save_applied(1, st.revision)
        wal.save(HardState(term=1, vote=0, commit=1), [])
        wal.close()
    return st


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", required=True, metavar="save|status|restore")
    s = sub.add_parser("save", help="save a consistent copy of the store to FILE")
    s.add_argument("file")
    s.add_argument("--data-dir", default=DEFAULT_DATA_DIR, help=f"data folder (default {DEFAULT_DATA_DIR})")
    st = sub.add_parser("status", help="revision, keys, size and hash of a snapshot FILE")
    st.add_argument("file")
    st.add_argument("-w", "--write-out", default="simple", choices=("simple", "table", "json"))
    r = sub.add_parser("restore", help="build a new data folder from a snapshot FILE")
    r.add_argument("file")
    r.add_argument("--data-dir", required=True, help="new data folder for the restored cluster")
    r.add_argument("--members", type=int, default=3, help="etcd members of the restored cluster (default 3)")


def _render(st: SnapshotStatus, fmt: str) -> str:
    if fmt == "json":
        return json.dumps({"hash": st.hash, "revision": st.revision, "totalKey": st.total_keys,
                           "totalSize": st.total_size})
    row = [f"{st.hash:x}", str(st.revision), str(st.total_keys), human_bytes(st.total_size)]
    if fmt == "table":
        return table(["HASH", "REVISION", "TOTAL KEYS", "TOTAL SIZE"], [row])
    return ", ".join(row)


def run(args: argparse.Namespace) -> int:
    try:
        if args.action == "save":
            st = save(args.data_dir, args.file)
            print(f"Snapshot saved at {args.file} (revision {st.revision}, {st.total_keys} keys)")
        elif args.action == "status":
            print(_render(status(args.file), args.write_out))
        else:
            st = restore(args.file, args.data_dir, args.members)
            print(f"Restored {args.members} members into {args.data_dir} at revision {st.revision}")
            print("Secrets stay encrypted with the source cluster's key: copy its encryption-key into "
                  f"{args.data_dir} (or give the cluster the same encryption-config) before starting it")
    except (FileNotFoundError, FileExistsError, ValueError, sqlite3.Error) as err:
        print(f"kconsole snapshot {args.action}: {err}", file=sys.stderr)
        return 1
    return 0
