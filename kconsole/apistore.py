"""The etcd panel of an attached cluster, from what its API server exposes.

A console attached by kubeconfig cannot reach the etcd members; the API server tells what it knows:
its ``/readyz?verbose`` etcd checks, ``apiserver_storage_objects`` (objects per resource),
``apiserver_storage_size_bytes`` (or ``etcd_db_total_size_in_bytes`` before 1.28) and the store
revision a list answers with. :class:`APIStoreView` offers these through the handle the console's
etcd panel samples (``member_status``, ``quorum``, ``status``), one row for the store as the API
server sees it; what it cannot know (leader, term, indexes) shows empty.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

from kconsole.api.types import StatusError

_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)')
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
DB_SIZE_METRICS = ("apiserver_storage_size_bytes", "etcd_db_total_size_in_bytes")


def parse_metrics(text: str, names: tuple[str, ...]) -> dict[str, list[tuple[dict[str, str], float]]]:
    """Samples of the named families in Prometheus text format."""
    out: dict[str, list[tuple[dict[str, str], float]]] = {n: [] for n in names}
    for line in text.splitlines():
        if not line or line[0] == "#":
            continue
        m = _SAMPLE.match(line)
        if m is None or m.group(1) not in out:
            continue
        try:
            value = float(m.group(3))
        except ValueError:
            continue
        out[m.group(1)].append((dict(_LABEL.findall(m.group(2) or "")), value))
    return out


def parse_readyz(text: str) -> list[tuple[str, bool, str]]:
    """``[+]etcd ok`` / ``[-]etcd failed: reason`` lines as (check, ok, text)."""
    checks = []
    for line in text.splitlines():
        m = re.match(r"^\[([+-])\](\S+)\s*(.*)$", line.strip())
        if m:
            checks.append((m.group(2), m.group(1) == "+", m.group(3)))
    return checks


@dataclass(slots=True)
class StoreRow:
    """The etcd panel's row for the store behind an API server (etcdctl's columns it can fill)."""

    name: str
    endpoint: str
    id: str = ""
    version: str = ""
    running: bool = True
    paused: bool = False
    healthy: bool = False
    is_leader: str = ""
    role: str = ""
    raft_term: str = ""
    raft_index: str = ""
    raft_applied_index: str = ""
    db_size: int = 0
    errors: list[str] = field(default_factory=list)
    last_commit_ms: float | None = None
    objects: int = 0
    checks: str = ""
    NO_ANSWER: ClassVar[str] = "no answer"


@dataclass(frozen=True, slots=True)
class StoreHealth:
    """What stands for the quorum line: the API server's verdict on its store."""

    ok: bool
    summary: str

    def line(self) -> str:
        return self.summary

    @property
    def header(self) -> str:
        """The console header's etcd part: members and quorum are not visible from here."""
        return "etcd [$success]ok[/] (readyz)" if self.ok else "etcd [$error]readyz failed[/]"


@dataclass(slots=True)
class StoreStatus:
    revision: str
    compact_revision: str = "?"
    db_size: int = 0
    alarms: list[str] = field(default_factory=list)


class APIStoreView:
    """An etcd handle for the console over an API server's health checks and metrics."""

    def __init__(self, entry: Any, client: Any) -> None:
        self.entry = entry
        self.client = client
        self.members: list[Any] = []  # none the fault catalog could touch
        self._row: StoreRow | None = None
        self._health: StoreHealth | None = None
        self._status = StoreStatus("?")

    async def member_status(self) -> list[StoreRow]:
        server = self.entry.config.server
        row = StoreRow("etcd", f"via {server}")
        code, text = await self.entry.get_text("/readyz?verbose")
        checks = [c for c in parse_readyz(text) if c[0].startswith("etcd")]
        if code == 403 or code == 401:
            row.errors.append(f"/readyz: {code} (this user may not read health checks)")
        row.healthy = bool(checks) and all(ok for _, ok, _ in checks)
        row.checks = ", ".join(f"{name} {'ok' if ok else 'failed'}" for name, ok, _ in checks) or "no etcd check"
        row.errors.extend(f"{name}: {why}" for name, ok, why in checks if not ok)
        code, text = await self.entry.get_text("/metrics")
        top = ""
        if code < 300:
            samples = parse_metrics(text, ("apiserver_storage_objects", *DB_SIZE_METRICS))
            objects = [(labels.get("resource", "?"), int(v)) for labels, v in samples["apiserver_storage_objects"]
                       if v >= 0]
            row.objects = sum(n for _, n in objects)
            objects.sort(key=lambda x: (-x[1], x[0]))
            top = ", ".join(f"{r} {n}" for r, n in objects[:3])
            for name in DB_SIZE_METRICS:
                if samples[name]:
                    row.db_size = int(max(v for _, v in samples[name]))
                    break
        else:
            row.errors.append(f"/metrics: {code}")
        version = ""
        try:
            code, text = await self.entry.get_text("/version")
            if code < 300:
                version = str(json.loads(text).get("gitVersion", ""))
        except (StatusError, ValueError):
            pass
        row.version = version
        try:
            listed = await self.client.list("namespaces", limit=1)
            self._status = StoreStatus(str((listed.get("metadata") or {}).get("resourceVersion", "?")),
                                       db_size=row.db_size)
        except StatusError as err:
            row.errors.append(f"list: {err.message}")
        verdict = "ok" if row.healthy else "FAILED"
        summary = f"etcd via the API server: readyz {row.checks} ({verdict}) · {row.objects} objects"
        if top:
            summary += f" (most: {top})"
        self._row, self._health = row, StoreHealth(row.healthy, summary)
        return [row]

    def quorum(self) -> StoreHealth | None:
        return self._health

    async def status(self) -> StoreStatus:
        return self._status
