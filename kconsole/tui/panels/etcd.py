"""etcd members: ``etcdctl endpoint status`` columns plus health and last commit latency, and a
quorum line (alive / needed / failures tolerated, revision, compacted revision, db size, writes/s,
and whether the members run in their own processes).

Member status comes from the cluster's etcd handle (an etcdctl-like view), sampled on a timer;
never from objects. At a past revision it is the sample the console recorded at or before it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from rich.table import Table
from textual.app import ComposeResult
from textual.visual import visualize
from textual.widgets import Static

from kconsole.objects.humanize import human_bytes
from kconsole.tui.model import ClusterModel
from kconsole.tui.panels.base import Panel
from kconsole.tui.widgets import Fit, Row

COLUMNS = ("Endpoint", "ID", "Version", "DB Size", "Is Leader", "Is Learner", "Raft Term", "Raft Index",
           "Raft Applied Index", "Errors", "Health", "Commit")
#: Which member answers, which leads and whether it is healthy; the rest as width allows.
FITS = {"ENDPOINT": Fit(keep=0), "IS LEADER": Fit(keep=0), "HEALTH": Fit(keep=0),
        "ERRORS": Fit(keep=1, shrink_to=12, grow=True), "COMMIT": Fit(keep=2), "RAFT TERM": Fit(keep=3),
        "DB SIZE": Fit(keep=4), "RAFT INDEX": Fit(keep=5), "RAFT APPLIED INDEX": Fit(keep=5),
        "ID": Fit(keep=6), "VERSION": Fit(keep=6), "IS LEARNER": Fit(keep=7)}


def member_cells(st: Any) -> tuple[str, ...]:
    """One member's row. A stopped or paused member answers nothing, as etcdctl finds: its
    leadership, term and indexes are unknown ("-"), not what it last believed (a frozen leader
    still thinks it leads while the others elected a new one: two rows saying "true")."""
    errors = ", ".join(st.errors) if st.errors else ""
    if not st.running or st.paused:
        errors = ", ".join(filter(None, (st.NO_ANSWER, errors)))
        return (st.endpoint, st.id, st.version, "-", "-", "-", "-", "-", "-", errors,
                "stopped" if not st.running else "paused", "-")
    health = "healthy" if st.healthy else "unhealthy"
    return (st.endpoint, st.id, st.version, human_bytes(st.db_size), str(st.is_leader).lower(), "false",
            str(st.raft_term), str(st.raft_index), str(st.raft_applied_index), errors, health,
            f"{st.last_commit_ms:.1f}ms" if st.last_commit_ms is not None else "-")


class EtcdPanel(Panel):
    title = "etcd"
    fits = FITS
    #: Database sizes are real SQLite file sizes (page allocation varies run to run), and Raft
    #: indexes count entries, each batching the writes queued behind the previous disk write, so
    #: both depend on real I/O timing. Pictures and snapshot tests turn them off so everything else
    #: on screen can be compared exactly.
    show_volatile = True

    def __init__(self, model: ClusterModel, *, id: str | None = "etcd") -> None:
        super().__init__(model, id=id)
        self.summary = Static("", id=f"{id}-summary" if id else None, classes="summary")

    def compose(self) -> ComposeResult:
        yield self.summary
        yield self.table

    def inputs(self) -> Any:
        return self.model.etcd_version

    def quorum_line(self) -> str:
        m = self.model
        q = m.quorum
        if q is None:
            if m.past:
                return m.etcd_error
            return "no etcd handle" if getattr(m.cluster, "etcd", None) is None else "sampling…"
        parts = [q.line()]
        st = m.kv_status
        if st is not None:
            parts.append(f"rev {st.revision}")
            parts.append(f"compacted {st.compact_revision}")
            if self.show_volatile:
                parts.append(f"db {human_bytes(st.db_size)}")
            if st.alarms:
                parts.append("alarm " + ",".join(st.alarms))
        parts.append(f"writes/s {m.writes_per_s[-1]:.0f}")
        if getattr(getattr(m.cluster, "store_mode", None), "processes", False):
            parts.append("members in processes")
        if m.etcd_error:
            parts.append(m.etcd_error)
        return " · ".join(parts)

    def rebuild(self) -> None:
        rows = []
        for st in self.model.etcd_members:
            state = "failed" if not st.running or st.paused or not st.healthy else (
                "running" if st.is_leader or st.role else None)
            cells = member_cells(st)
            if not self.show_volatile:
                cells = cells[:3] + ("-",) + cells[4:7] + ("-", "-") + cells[9:]
            rows.append(Row(st.name, cells, state, None, str(st.raft_applied_index)))
        q = self.model.quorum
        self.summary.set_class(q is not None and not q.ok, "lost")
        self._set_summary(self.quorum_line())
        self.table.empty_text = ("not recorded" if self.model.past else "no members"
                                 if getattr(self.model.cluster, "etcd", None) is None else "sampling…")
        self.set_rows(COLUMNS, rows)

    def _set_summary(self, line: str) -> None:
        """A new quorum line; a layout pass (which redoes the whole screen) only when the line's
        wrapped height differs from the height laid out now."""
        summary = self.summary
        region = summary.content_region
        height = visualize(summary, line).get_height(summary.styles, region.width) if region.width else 0
        summary.update(line, layout=not region.width or height != region.height)

    def selected_member(self) -> str | None:
        return self.table.cursor_key

    def member_detail(self) -> tuple[str, Table] | None:
        """``d`` on a member: every field of its status (etcdctl's ``endpoint status -w json`` and
        what the panel adds), for the row under the cursor; None without one."""
        name = self.selected_member()
        st = next((m for m in self.model.etcd_members if m.name == name), None)
        if st is None:
            return None
        table = Table(box=None, show_header=False, pad_edge=False)
        table.add_column(style="bold")
        table.add_column()
        fields = dataclasses.asdict(st) if dataclasses.is_dataclass(st) else dict(vars(st))
        for key, value in fields.items():
            shown = ", ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
            table.add_row(key, shown or "-")
        table.add_row("", "")
        table.add_row("quorum", self.quorum_line())
        return f"etcd member {st.name} ({st.endpoint})", table
