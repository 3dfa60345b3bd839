"""Leases: kube-system leaders (holder, age of the last renew, duration, transitions) and node
heartbeats (fresh / stale counts, stale nodes listed)."""

from __future__ import annotations

from typing import Any

from kconsole.client import object_key
from kconsole.objects.printers import human_duration, parse_time
from kconsole.tui.model import ClusterModel
from kconsole.tui.panels.base import Panel
from kconsole.tui.widgets import Row

Obj = dict[str, Any]

COLUMNS = ("Lease", "Holder", "Renewed", "Duration", "Transitions")
#: Upstream's node lease duration: a lease not renewed for this long is stale.
NODE_LEASE_SECONDS = 40


def renewed_ago(lease: Obj, now: float) -> float | None:
    spec = lease.get("spec") or {}
    ts = parse_time(spec.get("renewTime") or spec.get("acquireTime"))
    return None if ts is None else now - ts


class LeasesPanel(Panel):
    title = "Leases"

    def __init__(self, model: ClusterModel, *, id: str | None = "leases") -> None:
        super().__init__(model, id=id)
        self.fresh = 0
        self.stale: list[str] = []
        self._objects: dict[str, Obj] = {}

    def inputs(self) -> Any:
        w = self.model.watched.get("leases.coordination.k8s.io")
        return (w.version if w is not None else -1, int(self.now()))

    def rebuild(self) -> None:
        watched = self.model.watched.get("leases.coordination.k8s.io")
        if watched is None:
            return
        now = self.now()
        rows: list[Row] = []
        objects: dict[str, Obj] = {}
        node_leases: list[tuple[str, Obj, float | None]] = []
        for lease in watched.informer.list():
            meta = lease.get("metadata") or {}
            ns = meta.get("namespace")
            if ns == "kube-node-lease":
                node_leases.append((meta.get("name", ""), lease, renewed_ago(lease, now)))
                continue
            spec = lease.get("spec") or {}
            key = object_key(lease)
            ago = renewed_ago(lease, now)
            duration = spec.get("leaseDurationSeconds")
            expired = ago is not None and duration is not None and ago > duration
            holder = spec.get("holderIdentity") or "<none>"
            rows.append(Row(key, (f"{ns}/{meta.get('name')}", holder,
                                  "-" if ago is None else f"{human_duration(ago)} ago",
                                  f"{duration}s" if duration is not None else "-",
                                  str(spec.get("leaseTransitions", 0))),
                            "failed" if expired or holder == "<none>" else "running", watched.mark(key),
                            str(meta.get("resourceVersion", ""))))
            objects[key] = lease
        rows.sort(key=lambda r: r.key)
        stale = sorted(name for name, lease, ago in node_leases
                       if ago is None or ago > ((lease.get("spec") or {}).get("leaseDurationSeconds")
                                                or NODE_LEASE_SECONDS))
        self.fresh = len(node_leases) - len(stale)
        self.stale = stale
        rows.append(Row("~node-leases", ("node leases", f"{self.fresh} fresh, {len(stale)} stale", "", "", ""),
                        "failed" if stale else "running"))
        for name in stale:
            lease = next(l for n, l, _ in node_leases if n == name)
            ago = renewed_ago(lease, now)
            key = object_key(lease)
            objects[key] = lease
            rows.append(Row(key, (f"  kube-node-lease/{name}", "stale",
                                  "never" if ago is None else f"{human_duration(ago)} ago",
                                  f"{(lease.get('spec') or {}).get('leaseDurationSeconds', NODE_LEASE_SECONDS)}s",
                                  ""), "failed", watched.mark(key)))
        self._objects = objects
        self.set_rows(COLUMNS, rows)

    def selected(self) -> Obj | None:
        key = self.table.cursor_key
        return self._objects.get(key) if key else None
