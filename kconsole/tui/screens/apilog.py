"""The API request log: who asked for what, the answer's code and latency, and the pipeline stage
that rejected it — newest first, refreshed twice a second from the API server's audit ring."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Static

from kconsole.client import Client
from kconsole.tui.widgets import Row, VirtualTable

COLUMNS = ("Time", "User", "Verb", "Resource", "Object", "Code", "Latency", "Rejected by", "Message")
LIMIT = 2000


def record_row(r: Any) -> Row:
    when = datetime.fromtimestamp(r.time, tz=timezone.utc).strftime("%H:%M:%S")
    obj = "/".join(x for x in (r.namespace, r.name) if x)
    state = "failed" if r.code >= 400 else None
    return Row(str(r.seq), (when, r.user, r.verb, r.resource, obj, str(r.code), f"{r.latency_ms:.1f}ms",
                            r.stage or "", r.message), state, None, str(r.seq))


class ApiLogScreen(Screen[None]):
    DEFAULT_CSS = """
    ApiLogScreen > #title { height: 1; background: $primary; color: $text; padding: 0 1; text-style: bold; }
    """
    BINDINGS = [
        Binding("escape,q", "app.pop_screen", "Back", id="screen.back"),
        Binding("x", "toggle_errors", "Errors only", id="apilog.errors"),
    ]

    def __init__(self, client: Client) -> None:
        super().__init__()
        self.client = client
        self.table = VirtualTable(id="apilog")
        self.errors_only = False
        self._last_seq = -1

    def compose(self) -> ComposeResult:
        yield Static("API requests · newest first · x: rejected only", id="title", markup=False)
        yield self.table
        yield Footer()

    def on_mount(self) -> None:
        self.reload()
        self.table.focus()
        self.set_interval(0.5, self.reload)

    def action_toggle_errors(self) -> None:
        self.errors_only = not self.errors_only
        self._last_seq = -1
        self.reload()

    def reload(self) -> None:
        records = self.client.entry.audit_recent(LIMIT)
        last = records[-1].seq if records else 0
        if last == self._last_seq:
            return
        self._last_seq = last
        rows = [record_row(r) for r in reversed(records) if not self.errors_only or r.code >= 400]
        self.table.empty_text = "no requests yet"
        self.table.set_rows(COLUMNS, rows)
