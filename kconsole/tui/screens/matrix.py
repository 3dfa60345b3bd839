"""The node × plugin matrix of one scheduling attempt: each node's filter verdict (the plugin that
rejected it and why), raw / normalised / weighted score per plugin, total, and the winner."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Static

from kconsole.tui.decisions import score_plugins, summary, verdicts
from kconsole.tui.widgets import Row, VirtualTable

Obj = dict[str, Any]


def matrix_rows(record: Obj) -> tuple[list[str], list[Row]]:
    plugins = score_plugins(record)
    columns = ["Node", "Filter"] + [f"{name}×{weight}" for name, weight in plugins] + ["Total", ""]
    rows = []
    for v in verdicts(record):
        if v.passed:
            cells = [v.node, "passed"]
            for name, _ in plugins:
                raw, norm, weighted = v.scores.get(name, (0, 0, 0))
                cells.append(f"{raw}/{norm}/{weighted}")
            cells += [str(v.total), "← winner" if v.winner else ""]
            rows.append(Row(v.node, tuple(cells), "running" if v.winner else None))
        else:
            cells = [v.node, f"{v.filter_plugin}: {', '.join(v.reasons)}"] + ["-"] * len(plugins) + ["-", ""]
            rows.append(Row(v.node, tuple(cells), "failed"))
    return columns, rows


class MatrixScreen(Screen[None]):
    DEFAULT_CSS = """
    MatrixScreen > #title { height: 1; background: $primary; color: $text; padding: 0 1; text-style: bold; }
    MatrixScreen > #summary { height: auto; padding: 0 1; color: $text-muted; }
    """
    BINDINGS = [Binding("escape,q", "app.pop_screen", "Back", id="screen.back")]

    def __init__(self, record: Obj) -> None:
        super().__init__()
        self.record = record
        self.table = VirtualTable(id="matrix")

    def compose(self) -> ComposeResult:
        meta = self.record.get("metadata") or {}
        yield Static(f"Scheduling decision · {meta.get('namespace')}/{meta.get('name')} "
                     "· score cells are raw/normalised/weighted", id="title", markup=False)
        yield Static("\n".join(summary(self.record)), id="summary", markup=False)
        yield self.table
        yield Footer()

    def on_mount(self) -> None:
        columns, rows = matrix_rows(self.record)
        self.table.empty_text = "no nodes were evaluated"
        self.table.set_rows(columns, rows)
        self.table.focus()
