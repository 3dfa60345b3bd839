"""``kconsole replay FILE``: the console's panels on a recording, played as a film (no cluster).

Resources (pods, or any kind with ``k``), Events, Scheduling and Leases are the console's own panels
(:mod:`kconsole.tui.panels`) over a :class:`~kconsole.trace.filmmodel.FilmModel`; a status line says
where the film is, and the log under it lists the inputs, faults and changes up to that moment.
Keys are :data:`FILM_KEYS` (documented in docs/history.md, "Replay").
"""

from __future__ import annotations

import time
from pathlib import Path

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Grid
from textual.widgets import Footer, Static

from kconsole.trace.film import Film
from kconsole.trace.filmmodel import FilmModel
from kconsole.tui.panels import EventsPanel, LeasesPanel, ResourcesPanel, SchedulingPanel

#: (key, action, description): the film's keys, shown in the footer and in docs/history.md.
FILM_KEYS = (
    ("space", "toggle", "play/pause"),
    ("right", "step(1)", "next change"),
    ("left", "step(-1)", "previous change"),
    ("pagedown", "step(100)", "100 changes on"),
    ("pageup", "step(-100)", "100 changes back"),
    ("n", "moment(1)", "next input or fault"),
    ("p", "moment(-1)", "previous input or fault"),
    ("plus", "faster", "faster"),
    ("minus", "slower", "slower"),
    ("home", "start", "start"),
    ("end", "end", "end"),
    ("k", "next_kind", "next kind"),
    ("q", "quit", "quit"),
)
#: The kinds ``k`` cycles the Resources panel through.
KINDS = ("pods", "nodes", "deployments", "replicasets", "services", "leases", "events", "namespaces")
#: Wall seconds between frames while playing.
FRAME = 0.1
LOG_LINES = 8


class FilmApp(App[int]):
    TITLE = "kconsole replay"
    CSS = """
    Screen { layout: vertical; }
    #film-status { height: 1; background: $accent 30%; padding: 0 1; }
    #film-grid { grid-size: 2 2; grid-rows: 2fr 1fr; grid-columns: 3fr 2fr; height: 1fr; }
    #film-log { height: 10; border: round $foreground 30%; padding: 0 1; color: $text-muted; }
    """
    # Priority: the panels' tables keep up and down for their rows, the film's keys always move the film.
    BINDINGS = [Binding(key, action, text, show=key in ("space", "right", "left", "n", "plus", "minus", "k", "q"),
                        priority=True) for key, action, text in FILM_KEYS]

    def __init__(self, film: Film, *, name: str = "", frame: float = FRAME) -> None:
        super().__init__()
        self.film = film
        self.film_name = name
        self.frame = frame
        self.model = FilmModel(film)
        self.resources = ResourcesPanel(self.model, id="resources")
        self.events_panel = EventsPanel(self.model, id="events")
        self.scheduling = SchedulingPanel(self.model, id="scheduling")
        self.leases = LeasesPanel(self.model, id="leases")
        self.panels = [self.resources, self.events_panel, self.scheduling, self.leases]
        self.status = Static(id="film-status")
        self.log_view = Static(id="film-log")
        self.kind = 0
        self._shown = -1
        self._wall = time.monotonic()

    def compose(self) -> ComposeResult:
        yield self.status
        with Grid(id="film-grid"):
            yield from self.panels
        yield self.log_view
        yield Footer()

    def on_mount(self) -> None:
        self.log_view.border_title = "Inputs, faults, changes"
        self.redraw()
        self.set_interval(self.frame, self._frame)

    def _frame(self) -> None:
        now = time.monotonic()
        wall, self._wall = now - self._wall, now
        self.film.tick(wall)
        self.model.expire_marks()
        self.redraw()

    def redraw(self, force: bool = False) -> None:
        """Redraw the panels whose inputs moved, and the status and log when the film did."""
        for panel in self.panels:
            panel.sync(force)
        if force or self._shown != self.film.version:
            self._shown = self.film.version
            self.status.update(self.status_text())
            self.log_view.update("\n".join(self.log_lines()))

    def status_text(self) -> str:
        f = self.film
        state = "▶ playing" if f.playing else "❚❚ paused"
        stamp = self.model.clock.rfc3339(f.now)
        offset = f.now - f.start_time
        return (f"REPLAY {self.film_name} · rev {f.revision} · change {f.position}/{f.length} · {stamp} "
                f"(+{offset:.0f}s) · {state} ×{f.speed:g}")

    def log_lines(self) -> list[str]:
        lines = []
        for m in self.film.recent(LOG_LINES):
            mark = {"input": "›", "fault": "!", "change": " "}[m.kind]
            offset = f"+{m.time - self.film.start_time:.1f}s"
            lines.append(f"{mark} {offset:>9}  {m.text}")
        return lines or ["(nothing yet)"]

    # ------------------------------------------------------------------ actions

    def _moved(self) -> None:
        self.redraw()

    def action_toggle(self) -> None:
        self.film.toggle()
        self._wall = time.monotonic()
        self.redraw()

    def action_step(self, n: int) -> None:
        self.film.playing = False
        self.film.step(n)
        self.redraw()

    def action_moment(self, direction: int) -> None:
        """Jump to the next (1) or previous (-1) input or fault."""
        f = self.film
        marks = sorted({m.time for m in f.moments if m.kind != "change"})
        target = next((t for t in marks if t > f.now), None) if direction > 0 else \
            next((t for t in reversed(marks) if t < f.now), None)
        if target is None:
            self.notify("no more inputs or faults that way", timeout=2)
            return
        f.playing = False
        f.seek_time(target)
        self.redraw()

    def action_faster(self) -> None:
        self.film.faster()
        self.redraw()

    def action_slower(self) -> None:
        self.film.slower()
        self.redraw()

    def action_start(self) -> None:
        self.film.playing = False
        self.film.seek(0)
        self.redraw()

    def action_end(self) -> None:
        self.film.playing = False
        self.film.seek(self.film.length)
        self.redraw()

    def action_next_kind(self) -> None:
        self.kind = (self.kind + 1) % len(KINDS)
        self.resources.switch_kind(KINDS[self.kind])
        self.redraw()


def run_film(path: Path, film: Film) -> int:
    return int(FilmApp(film, name=path.name).run() or 0)
