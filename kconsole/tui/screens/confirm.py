"""Yes/no before a dangerous action (faults, kills, cordons)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static


class ConfirmScreen(ModalScreen[bool]):
    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical { width: 72; max-width: 100%; height: auto; max-height: 100%; border: thick $error; background: $surface; padding: 1 2; }
    ConfirmScreen #hint { color: $text-muted; margin-top: 1; }
    """
    BINDINGS = [
        Binding("y,enter", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
    ]

    def __init__(self, question: str, detail: str = "") -> None:
        super().__init__()
        self.question = question
        self.detail = detail

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.question, id="question", markup=False)
            if self.detail:
                yield Static(self.detail, id="detail", markup=False)
            yield Static("y / enter: do it    n / escape: cancel", id="hint")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
