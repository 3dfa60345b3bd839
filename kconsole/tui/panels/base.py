"""A dashboard panel: a bordered box around a virtual table, redrawn only when its inputs moved."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical

from kconsole.tui.model import ClusterModel
from kconsole.tui.widgets import Fit, Row, VirtualTable

Obj = dict[str, Any]


class Panel(Vertical):
    """Subclasses say what they depend on (:meth:`inputs`) and how to build rows (:meth:`rebuild`)."""

    ALLOW_MAXIMIZE = True
    DEFAULT_CSS = """
    Panel { border: round $foreground 30%; border-title-color: $text-muted; height: 1fr; }
    Panel:focus-within { border: heavy $accent; border-title-color: $background; border-title-background: $accent;
                         border-title-style: bold; }
    """
    title = ""
    #: How the table's columns give way in a narrow panel (see widgets/fit.py).
    fits: dict[str, Fit] = {}

    def __init__(self, model: ClusterModel, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.model = model
        self.table = VirtualTable(id=f"{id}-table" if id else None)
        self.table.fits = self.fits
        self._inputs: Any = None
        self.rebuilds = 0
        self._shown_title = self.title
        self.border_title = self.title

    def compose(self) -> ComposeResult:
        yield self.table

    def inputs(self) -> Any:
        """A value that changes whenever the rows would (versions of the caches read)."""
        return None

    def rebuild(self) -> None:
        raise NotImplementedError

    def sync(self, force: bool = False) -> bool:
        """Rebuild when the inputs moved (or when forced); True when it did."""
        inputs = self.inputs()
        if not force and inputs == self._inputs:
            return False
        self._inputs = inputs
        self.rebuild()
        self.rebuilds += 1
        return True

    def set_title(self, title: str) -> None:
        """Textual repaints the whole panel on every border_title assignment, even of the same text."""
        if title != self._shown_title:
            self._shown_title = title
            self.border_title = title

    def set_rows(self, columns: list[str] | tuple[str, ...], rows: list[Row]) -> None:
        self.table.set_rows(columns, rows)

    def selected(self) -> Obj | None:
        """The object behind the cursor row, if the panel lists objects."""
        return None

    def now(self) -> float:
        return self.model.now()
