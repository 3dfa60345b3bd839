"""The node × plugin matrix of one scheduling attempt: each node's total and the winner first, the
weighted score per plugin in compact columns (``v``: raw / normalised / weighted), and the filter
verdict (the plugin that rejected the node and why). NODE stays in place while scrolling sideways."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Static

from kconsole.tui.decisions import score_plugins, summary, verdicts
from kconsole.tui.widgets import Fit, Row, VirtualTable

Obj = dict[str, Any]


def short_name(plugin: str) -> str:
    """A score plugin's column header: the capitals of its name (NodeResourcesFit -> NRF)."""
    caps = "".join(ch for ch in plugin if ch.isupper())
    return caps if len(caps) >= 2 else plugin[:4]


def legend(record: Obj) -> str:
    """What each plugin column header stands for, with its weight."""
    return "scores: " + " · ".join(f"{short_name(name)} {name}×{weight}" for name, weight in score_plugins(record))


def matrix_rows(record: Obj, detail: bool = False) -> tuple[list[str], list[Row]]:
    """NODE, TOTAL and the winner first (visible at any width), then one compact column per score
    plugin (the weighted score; ``detail``: raw/normalised/weighted), then the filter verdict."""
    plugins = score_plugins(record)
    columns = ["Node", "Total", "Winner"] + [short_name(name) for name, _ in plugins] + ["Filter"]
    rows = []
    for v in verdicts(record):
        if v.passed:
            cells = [v.node, "" if v.total is None else str(v.total), "← winner" if v.winner else ""]
            for name, _ in plugins:
                raw, norm, weighted = v.scores.get(name, (0, 0, 0))
                cells.append(f"{raw}/{norm}/{weighted}" if detail else str(weighted))
            cells.append("passed")
            rows.append(Row(v.node, tuple(cells), "running" if v.winner else None))
        else:
            cells = [v.node, "-", ""] + ["-"] * len(plugins) + [f"{v.filter_plugin}: {', '.join(v.reasons)}"]
            rows.append(Row(v.node, tuple(cells), "failed"))
    return columns, rows


class MatrixScreen(Screen[None]):
    DEFAULT_CSS = """
    MatrixScreen > #title { height: 1; background: $primary; color: $text; padding: 0 1; text-style: bold; }
    MatrixScreen > #summary { height: auto; padding: 0 1; color: $text-muted; }
    """
    BINDINGS = [Binding("escape,q", "app.pop_screen", "Back", id="screen.back"),
                Binding("v", "toggle_detail", "Score detail", id="matrix.detail")]

    def __init__(self, record: Obj) -> None:
        super().__init__()
        self.record = record
        self.detail = False
        self.table = VirtualTable(id="matrix")
        # NODE stays put while the plugin columns scroll sideways; none of them is ever hidden.
        self.table.frozen_columns = 1
        self.table.fits = {name: Fit(keep=0) for name in ("NODE", "TOTAL", "WINNER")} | {
            short_name(name): Fit(keep=0) for name, _ in score_plugins(record)} | {
            "FILTER": Fit(keep=0, shrink_to=24, grow=True)}

    def compose(self) -> ComposeResult:
        meta = self.record.get("metadata") or {}
        yield Static(f"Scheduling decision · {meta.get('namespace')}/{meta.get('name')} "
                     "· score cells are weighted (v: raw/normalised/weighted) · ←/→ scroll", id="title",
                     markup=False)
        yield Static("\n".join(summary(self.record) + [legend(self.record)]), id="summary", markup=False)
        yield self.table
        yield Footer()

    def on_mount(self) -> None:
        self.table.empty_text = "no nodes were evaluated"
        self._show()
        self.table.focus()

    def _show(self) -> None:
        columns, rows = matrix_rows(self.record, self.detail)
        self.table.set_rows(columns, rows)

    def action_toggle_detail(self) -> None:
        self.detail = not self.detail
        self._show()
