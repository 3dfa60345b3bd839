"""``kconsole etcdctl endpoint status|endpoint health|member list|quorum [-w table|json|simple]``.

Prints etcdctl 3.5's layouts. The figures come from the data folder (``--data-dir``, default
``./.kconsole``; its members live in ``etcd/etcd-0``, ...): each member's WAL (term, raft index,
applied index), its revision log file (revision, db size, size in use) and the ``member.json`` a
running member rewrites whenever its role or pause changes (ignored when the process that wrote it
is gone). ``quorum`` (kconsole's own) prints how many members answer, how many are needed and how
many more may fail, from the members that answer; ``endpoint health`` adds that line on stderr.
Everything is opened
read-only, so it works beside a running kconsole. A running process's in-memory view is
``EtcdCluster.member_status()``; :func:`render_status` renders either.

A data folder whose cluster ran on real etcd members (``--etcd local``: ``DATA/etcd-real``) is
asked over the network instead, with that folder's client certificate: the members' own status,
from etcd's maintenance API, in the same layouts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

from kconsole.objects.humanize import human_bytes
from kconsole.store.facade import MEMBERS_DIR, Quorum, client_port
from kconsole.store.members import VERSION, MemberStatus, member_id
from kconsole.store.raft.wal import FileStorage

DEFAULT_DATA_DIR = ".kconsole"


def table(headers: list[str], rows: list[list[str]]) -> str:
    """etcdctl's tablewriter look: centred headers, right-aligned cells."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    line = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    out = [line, "|" + "|".join(f" {_centred(h, w)} " for h, w in zip(headers, widths)) + "|", line]
    out += ["|" + "|".join(f" {c.rjust(w)} " for c, w in zip(r, widths)) + "|" for r in rows]
    out.append(line)
    return "\n".join(out)


def _centred(text: str, width: int) -> str:
    """tablewriter's centring: an odd gap puts the extra space on the right (str.center may not)."""
    left = (width - len(text)) // 2
    return " " * left + text + " " * (width - len(text) - left)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _db_figures(path: Path) -> tuple[int, int, int]:
    """(revision, db size incl. WAL, bytes in use) of a member's revision log, read-only."""
    size = sum(os.path.getsize(f"{path}{s}") for s in ("", "-wal") if os.path.exists(f"{path}{s}"))
    if not path.exists():
        return 0, 0, 0
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        top = db.execute("SELECT MAX(revision) FROM kv").fetchone()[0] or 0
        floor = db.execute("SELECT value FROM meta WHERE name = 'revision_floor'").fetchone()
        page = db.execute("PRAGMA page_size").fetchone()[0]
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        free = db.execute("PRAGMA freelist_count").fetchone()[0]
    finally:
        db.close()
    return max(top, floor[0] if floor else 0), size, (pages - free) * page


def _member_dirs(folder: Path) -> list[Path]:
    found = [p for p in folder.glob("etcd-*") if p.is_dir() and p.name[5:].isdigit()]
    return sorted(found, key=lambda p: int(p.name[5:]))


def members_root(data_dir: str | os.PathLike[str]) -> Path:
    """The folder holding the members' ``etcd-N`` folders: a kconsole data folder's ``etcd/``, or
    ``data_dir`` itself when it holds them (an :class:`EtcdCluster` opened on a folder of its own)."""
    root = Path(data_dir)
    nested = root / MEMBERS_DIR
    if _member_dirs(nested) or not _member_dirs(root):
        return nested
    return root


def folder_status(data_dir: str | os.PathLike[str]) -> list[MemberStatus]:
    """Each member's status as its files show it."""
    dirs = _member_dirs(members_root(data_dir))
    if not dirs:
        root = Path(data_dir)
        raise FileNotFoundError(f"no etcd members in {root} (expected {root / MEMBERS_DIR}/etcd-0, etcd-1, ...: "
                                "--data-dir is the data folder a cluster ran with)")
    out: list[MemberStatus] = []
    for i, d in enumerate(dirs):
        wal = FileStorage.peek(d / "wal")
        note: dict[str, Any] = {}
        try:
            note = json.loads((d / "member.json").read_text())
        except (OSError, ValueError):
            pass
        running = bool(note) and bool(note.get("running")) and _alive(int(note.get("pid", 0)))
        paused = running and bool(note.get("paused"))
        revision, size, in_use = _db_figures(d / "db.sqlite")
        last = wal.entries[-1].index if wal.entries else wal.snap_index
        errors = ["alarm:NOSPACE"] if wal.alarms & 1 else []
        out.append(MemberStatus(
            name=d.name, id=note.get("id") or f"{member_id(d.name):x}",
            endpoint=note.get("endpoint") or f"127.0.0.1:{client_port(i)}",
            version=VERSION, running=running, paused=paused,
            healthy=running and not paused and bool(note.get("leader")) and not errors,
            is_leader=running and note.get("role") == "leader", leader=note.get("leader", "") if running else "",
            role=note.get("role", "stopped") if running else "stopped",
            raft_term=wal.hard_state.term, raft_index=last, raft_applied_index=wal.applied, revision=revision,
            db_size=size, db_size_in_use=in_use, wal_size=sum(p.stat().st_size for p in (d / "wal").glob("*.wal")),
            errors=errors,
        ))
    leaders = [s for s in out if s.is_leader]
    if len(leaders) > 1:  # a deposed leader's note can lag: the highest term is the leader
        top = max(leaders, key=lambda s: s.raft_term)
        for s in leaders:
            s.is_leader = s is top
    return out


#: A real member's client URL -> the peer URL its peers reach it at (filled by :func:`real_status`).
_REAL_PEERS: dict[str, str] = {}


def real_status(data_dir: str | os.PathLike[str]) -> list[MemberStatus] | None:
    """The real members of a cluster that ran with ``--etcd local`` (None: it did not)."""
    from kconsole.store.etcdlocal import LOCAL_DIR

    folder = Path(data_dir) / LOCAL_DIR
    if not (folder / "ports.json").exists() or _member_dirs(members_root(data_dir)):
        return None
    return asyncio.run(_ask_real(folder))


async def _ask_real(folder: Path) -> list[MemberStatus]:
    from kconsole.store.etcdgw import TLSFiles
    from kconsole.store.etcdreal import RealEtcdCluster

    ports = json.loads((folder / "ports.json").read_text())
    servers = [f"https://127.0.0.1:{p['client']}" for p in ports]
    for url, p in zip(servers, ports):
        _REAL_PEERS[url] = f"http://127.0.0.1:{p['proxy']}"
    pki = folder / "pki"
    etcd = RealEtcdCluster(servers, tls=TLSFiles(pki / "ca.crt", pki / "client.crt", pki / "client.key"),
                           compaction_interval=0)
    try:
        return await etcd.member_status()
    finally:
        await etcd.close()


def render_status(statuses: list[MemberStatus], fmt: str) -> str:
    if fmt == "json":
        return json.dumps([{
            "Endpoint": s.endpoint,
            "Status": {
                "header": {"member_id": int(s.id, 16), "revision": s.revision, "raft_term": s.raft_term},
                "version": s.version, "dbSize": s.db_size, "dbSizeInUse": s.db_size_in_use,
                "leader": int(s.leader, 16) if s.leader else 0, "raftIndex": s.raft_index,
                "raftTerm": s.raft_term, "raftAppliedIndex": s.raft_applied_index, "errors": s.errors,
                "isLearner": False,
            },
        } for s in statuses])
    rows = [[s.endpoint, s.id, s.version, human_bytes(s.db_size), str(s.is_leader).lower(), "false",
             str(s.raft_term), str(s.raft_index), str(s.raft_applied_index), ", ".join(s.errors)] for s in statuses]
    if fmt == "table":
        return table(["ENDPOINT", "ID", "VERSION", "DB SIZE", "IS LEADER", "IS LEARNER", "RAFT TERM", "RAFT INDEX",
                      "RAFT APPLIED INDEX", "ERRORS"], rows)
    return "\n".join(", ".join(r) for r in rows)


def render_health(statuses: list[MemberStatus], fmt: str) -> str:
    def took(s: MemberStatus) -> str:
        return f"{s.last_commit_ms:g}ms" if s.last_commit_ms else "0s"

    def error(s: MemberStatus) -> str:
        if s.healthy:
            return ""
        if not s.running or s.paused:
            return f"failed to commit proposal: {MemberStatus.NO_ANSWER}"
        if s.errors:
            return "Active Alarm(s): " + ", ".join(s.errors)
        return "etcdserver: no leader"

    if fmt == "json":
        return json.dumps([{"endpoint": s.endpoint, "health": s.healthy, "took": took(s),
                            **({"error": error(s)} if not s.healthy else {})} for s in statuses])
    if fmt == "table":
        return table(["ENDPOINT", "HEALTH", "TOOK", "ERROR"],
                     [[s.endpoint, str(s.healthy).lower(), took(s), error(s)] for s in statuses])
    return "\n".join(
        f"{s.endpoint} is healthy: successfully committed proposal: took = {took(s)}" if s.healthy
        else f"{s.endpoint} is unhealthy: {error(s)}" for s in statuses)


def quorum_of(statuses: list[MemberStatus]) -> Quorum:
    """Quorum from what answers: a stopped or frozen member counts as lost."""
    return Quorum.of(len(statuses), sum(1 for s in statuses if s.running and not s.paused))


def render_quorum(statuses: list[MemberStatus], fmt: str) -> str:
    q = quorum_of(statuses)
    if fmt == "json":
        return json.dumps({"members": q.members, "alive": q.alive, "needed": q.needed,
                           "failuresTolerated": q.failures_tolerated, "ok": q.ok})
    return q.line()


def render_members(statuses: list[MemberStatus], fmt: str) -> str:
    def peer(s: MemberStatus) -> str:
        if s.endpoint in _REAL_PEERS:
            return _REAL_PEERS[s.endpoint]
        host, port = s.endpoint.rsplit(":", 1)
        return f"http://{host}:{int(port) + 1}"

    def client(s: MemberStatus) -> str:
        return s.endpoint if "://" in s.endpoint else f"http://{s.endpoint}"

    if fmt == "json":
        return json.dumps({"members": [{"ID": int(s.id, 16), "name": s.name, "peerURLs": [peer(s)],
                                        "clientURLs": [client(s)]} for s in statuses]})
    rows = [[s.id, "started", s.name, peer(s), client(s), "false"] for s in statuses]
    if fmt == "table":
        return table(["ID", "STATUS", "NAME", "PEER ADDRS", "CLIENT ADDRS", "IS LEARNER"], rows)
    return "\n".join(", ".join(r) for r in rows)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("words", nargs="+", metavar="COMMAND",
                   help="endpoint status | endpoint health | member list | quorum")
    p.add_argument("-w", "--write-out", default="simple", choices=("simple", "table", "json"),
                   help="output format (default simple, as etcdctl)")
    p.add_argument("--data-dir", default=DEFAULT_DATA_DIR, help=f"data folder (default {DEFAULT_DATA_DIR})")
    p.add_argument("--cluster", action="store_true", help="accepted for etcdctl compatibility (all members)")


def run(args: argparse.Namespace) -> int:
    command = " ".join(args.words)
    renderers = {"endpoint status": render_status, "endpoint health": render_health, "member list": render_members,
                 "quorum": render_quorum}
    if command not in renderers:
        print(f"kconsole etcdctl: unknown command {command!r} (use: {', '.join(renderers)})", file=sys.stderr)
        return 2
    try:
        statuses = real_status(args.data_dir) or folder_status(args.data_dir)
    except (FileNotFoundError, sqlite3.Error) as err:
        print(f"kconsole etcdctl: {err}", file=sys.stderr)
        return 1
    if command == "endpoint status":
        # A stopped or frozen member does not answer: etcdctl names it on stderr, lists the others
        # and exits 1 (the folder still holds its last state: the console's etcd panel shows that).
        silent = [s for s in statuses if not s.running or s.paused]
        for s in silent:
            print(f"Failed to get the status of endpoint {s.endpoint} ({MemberStatus.NO_ANSWER})", file=sys.stderr)
        print(render_status([s for s in statuses if s not in silent], args.write_out))
        return 1 if silent else 0
    print(renderers[command](statuses, args.write_out))
    if command == "endpoint health" and args.write_out != "json":
        print(quorum_of(statuses).line(), file=sys.stderr)
    if command == "quorum":
        return 0 if quorum_of(statuses).ok else 1
    if command == "endpoint health" and not all(s.healthy for s in statuses):
        return 1
    return 0

