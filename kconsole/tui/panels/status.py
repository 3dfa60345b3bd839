"""The status line above the footer: what a key will act on, or what the last key said.

k9s users read the line under the table for "why did nothing happen": every message the console
gives (a key that does not apply here, a read-only refusal, where a screenshot went) shows here for
a few seconds, then the line goes back to naming the focused panel and the object under its cursor
(``f fault on pod kube-system/coredns-…``), so no key acts on something the user did not see.
"""

from __future__ import annotations

from rich.markup import escape
from textual.timer import Timer
from textual.widgets import Static

#: Seconds (wall time: it is for people reading) a message stays before the target line returns.
MESSAGE_SECONDS = 6.0
SEVERITY_STYLE = {"error": "$error", "warning": "$warning", "information": "$accent"}


class StatusLine(Static):
    DEFAULT_CSS = """
    StatusLine { height: 1; padding: 0 1; background: $panel; color: $foreground;
                 text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, *, id: str | None = "status") -> None:
        super().__init__("", id=id, markup=True)
        self.target = ""
        self.message = ""
        self._clear: Timer | None = None

    def show_target(self, markup: str) -> None:
        """The standing line (panel, object under the cursor, the keys that act on it)."""
        if markup == self.target:
            return
        self.target = markup
        if not self.message:
            self.update(markup, layout=False)  # one line in a fixed-height box: no layout pass

    def say(self, text: str, severity: str = "information") -> None:
        """Show a message for a few seconds (plain text: names and errors are not markup)."""
        self.message = text
        colour = SEVERITY_STYLE.get(severity, "$accent")
        self.update(f"[b {colour}]{escape(text)}[/]", layout=False)
        if self._clear is not None:
            self._clear.stop()
        self._clear = self.set_timer(MESSAGE_SECONDS, self._expire)

    def _expire(self) -> None:
        self.message = ""
        self._clear = None
        self.update(self.target, layout=False)

    @property
    def text(self) -> str:
        """What the line says now, without styles."""
        return self.message or _plain(self.target)


def _plain(markup: str) -> str:
    from textual.content import Content

    return Content.from_markup(markup).plain
