"""Leases: kube-system leaders (holder, age of the last renew, duration, transitions), and the
heartbeats of API servers (identity leases) and nodes (fresh / stale counts, stale ones listed)."""

from __future__ import annotations

from typing import Any

from kconsole.client import object_key
from kconsole.objects.printers import human_duration, parse_time
from kconsole.tui.model import ClusterModel
from kconsole.tui.panels.base import Panel
from kconsole.tui.widgets import Fit, Row

Obj = dict[str, Any]

COLUMNS = ("Lease", "Holder", "Renewed", "Duration", "Transitions")
#: Who holds each lease is the point: HOLDER is never cut; the lease name gives way first.
FITS = {"LEASE": Fit(keep=0, shrink_to=16), "HOLDER": Fit(keep=0), "RENEWED": Fit(keep=1),
        "TRANSITIONS": Fit(keep=2), "DURATION": Fit(keep=3)}
#: Upstream's node lease duration: a lease not renewed for this long is stale.
NODE_LEASE_SECONDS = 40
#: An API server's identity lease (upstream's label and duration).
IDENTITY_LABEL = "apiserver.kubernetes.io/identity"
IDENTITY_LEASE_SECONDS = 3600


class _Heartbeats:
    """Leases that only say "still here" (nodes, API servers): one summary row, the stale ones listed."""

    def __init__(self, key: str, title: str, default_seconds: int) -> None:
        self.key = key
        self.title = title
        self.default_seconds = default_seconds
        self.leases: list[tuple[str, Obj, float | None]] = []

    def _seconds(self, lease: Obj) -> int:
        return (lease.get("spec") or {}).get("leaseDurationSeconds") or self.default_seconds

    def rows(self, watched: Any, objects: dict[str, Obj]) -> list[Row]:
        """The summary row and one per stale lease."""
        stale = sorted((entry for entry in self.leases if entry[2] is None or entry[2] > self._seconds(entry[1])),
                       key=lambda entry: entry[0])
        fresh = len(self.leases) - len(stale)
        rows = [Row(self.key, (self.title, f"{fresh} fresh, {len(stale)} stale", "", "", ""),
                    "failed" if stale else "running")]
        for label, lease, ago in stale:
            key = object_key(lease)
            objects[key] = lease
            rows.append(Row(key, (f"  {label}", "stale", "never" if ago is None else f"{human_duration(ago)} ago",
                                  f"{self._seconds(lease)}s", ""), "failed", watched.mark(key)))
        return rows


def renewed_ago(lease: Obj, now: float) -> float | None:
    spec = lease.get("spec") or {}
    ts = parse_time(spec.get("renewTime") or spec.get("acquireTime"))
    return None if ts is None else now - ts


class LeasesPanel(Panel):
    title = "Leases"
    fits = FITS

    def __init__(self, model: ClusterModel, *, id: str | None = "leases") -> None:
        super().__init__(model, id=id)
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
        nodes = _Heartbeats("~node-leases", "node leases", NODE_LEASE_SECONDS)
        apiservers = _Heartbeats("~apiserver-leases", "apiserver identities", IDENTITY_LEASE_SECONDS)
        for lease in watched.informer.list():
            meta = lease.get("metadata") or {}
            ns = meta.get("namespace")
            name = meta.get("name", "")
            if ns == "kube-node-lease":
                nodes.leases.append((f"{ns}/{name}", lease, renewed_ago(lease, now)))
                continue
            if (meta.get("labels") or {}).get(IDENTITY_LABEL):
                apiservers.leases.append((f"{ns}/{name}", lease, renewed_ago(lease, now)))
                continue
            spec = lease.get("spec") or {}
            key = object_key(lease)
            ago = renewed_ago(lease, now)
            duration = spec.get("leaseDurationSeconds")
            expired = ago is not None and duration is not None and ago > duration
            holder = spec.get("holderIdentity") or "<none>"
            rows.append(Row(key, (f"{ns}/{name}", holder,
                                  "-" if ago is None else f"{human_duration(ago)} ago",
                                  f"{duration}s" if duration is not None else "-",
                                  str(spec.get("leaseTransitions", 0))),
                            "failed" if expired or holder == "<none>" else "running", watched.mark(key),
                            str(meta.get("resourceVersion", ""))))
            objects[key] = lease
        rows.sort(key=lambda r: r.key)
        if apiservers.leases:
            rows.extend(apiservers.rows(watched, objects))
        rows.extend(nodes.rows(watched, objects))
        self._objects = objects
        self.set_rows(COLUMNS, rows)

    def selected(self) -> Obj | None:
        key = self.table.cursor_key
        return self._objects.get(key) if key else None
