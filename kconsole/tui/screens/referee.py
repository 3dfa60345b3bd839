"""The referee's report: its summary line, then each violation with the history that shows it."""

from __future__ import annotations

from rich.text import Text

from kconsole.tui.screens.base import TextScreen


class RefereeScreen(TextScreen):
    def __init__(self, title: str, report: str) -> None:
        super().__init__(title, Text(report))
        self.report = report
