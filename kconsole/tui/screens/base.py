"""A full-screen view with a title and scrollable content; Escape or q goes back."""

from __future__ import annotations

import io
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static


class TextScreen(Screen[None]):
    DEFAULT_CSS = """
    TextScreen > #title { height: 1; background: $primary; color: $text; padding: 0 1; text-style: bold; }
    TextScreen > VerticalScroll { padding: 0 1; }
    """
    BINDINGS = [Binding("escape,q", "app.pop_screen", "Back", id="screen.back")]

    def __init__(self, title: str, body: Any = "") -> None:
        super().__init__()
        self.title_text = title
        self.content: Any = body
        self.body = Static(body, id="body")

    def compose(self) -> ComposeResult:
        yield Static(self.title_text, id="title", markup=False)
        with VerticalScroll():
            yield self.body
        yield Footer()

    def set_body(self, renderable: Any) -> None:
        self.content = renderable
        self.body.update(renderable)

    def plain_text(self, width: int = 200) -> str:
        """What the body says, without styles (for tests and copying)."""
        from rich.console import Console

        console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
        console.print(self.content)
        return console.export_text()
