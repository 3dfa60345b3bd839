"""``kconsole replay FILE``: the console's panels on a recording, played as a film (no cluster).

Resources (pods, or any kind with ``k``), Events, Scheduling and Leases are the console's own panels
(:mod:`kconsole.tui.panels`) over a :class:`~kconsole.trace.filmmodel.FilmModel`; a status line says
where the film is, and the log under it lists the inputs, faults and changes up to that moment.
Keys are :data:`FILM_KEYS` (documented in docs/history.md, "Replay").
"""

from __future__ import annotations

import time
from pathlib import Path

from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Grid
from textual.screen import ModalScreen
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
    ("g", "goto", "go to"),
    ("k", "next_kind", "next kind"),
    ("q", "quit", "quit"),
)
#: The kinds ``k`` cycles the Resources panel through.
KINDS = ("pods", "nodes", "deployments", "replicasets", "services", "leases", "events", "namespaces")
#: What ``g`` takes.
GOTO_HINT = "a revision (1234), a time from the start (+90s, +5m), from the end (-30s) or an RFC 3339 time"
#: Wall seconds between frames while playing.
FRAME = 0.1
LOG_LINES = 8


class ScrubBar(Static):
    """The whole recording as one line: where the film is (``●``), inputs (``›``) and faults (``!``);
    a click moves the film to that point."""

    def __init__(self, film: Film, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.film = film

    def line(self, width: int) -> str:
        f = self.film
        span = max(f.end_time - f.start_time, 1e-9)
        width = max(width, 10)
        cells = ["─"] * width

        def at(t: float) -> int:
            return min(width - 1, max(0, int((t - f.start_time) / span * (width - 1))))

        for m in f.moments:
            if m.kind == "input" and cells[at(m.time)] == "─":
                cells[at(m.time)] = "›"
        for m in f.moments:
            if m.kind == "fault":
                cells[at(m.time)] = "!"
        here = at(f.now)
        for i in range(here):
            if cells[i] == "─":
                cells[i] = "━"
        cells[here] = "●"
        return "".join(cells)

    def refresh_line(self) -> None:
        self.update(self.line(self.size.width or 80))

    def on_resize(self, event: events.Resize) -> None:
        self.refresh_line()

    def on_click(self, event: events.Click) -> None:
        width = max(self.size.width, 10)
        f = self.film
        f.playing = False
        f.seek_time(f.start_time + (f.end_time - f.start_time) * min(1.0, max(0.0, event.x / (width - 1))))
        self.app.redraw()  # type: ignore[attr-defined]


def goto_time(film: Film, text: str) -> None:
    """Move ``film`` to what ``g`` was given (see :data:`GOTO_HINT`); ValueError names the problem."""
    from kconsole.trace.when import parse_when

    value = text.strip()
    if value.startswith("+"):
        ahead = parse_when("-" + value[1:])  # the same units, counted from the start
        assert ahead.ago is not None
        film.seek_time(film.start_time + ahead.ago)
        return
    when = parse_when(value)
    if when.revision is not None:
        film.seek_revision(when.revision)
    elif when.ago is not None:
        film.seek_time(film.end_time - when.ago)
    elif when.time is not None:
        film.seek_time(when.time)


class FilmApp(App[int]):
    TITLE = "kconsole replay"
    CSS = """
    Screen { layout: vertical; }
    #film-status { height: 1; background: $accent 30%; padding: 0 1; }
    #film-scrub { height: 1; padding: 0 1; color: $accent; }
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
        self.scrub = ScrubBar(film, id="film-scrub")
        self.log_view = Static(id="film-log")
        self.kind = 0
        self._shown = -1
        self._wall = time.monotonic()

    def compose(self) -> ComposeResult:
        yield self.status
        yield self.scrub
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
            self.scrub.refresh_line()
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

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While a prompt is open its field takes the keys the film would."""
        return not isinstance(self.screen, ModalScreen)

    def action_goto(self) -> None:
        from kconsole.tui.screens.prompt import PromptScreen

        def done(value: str | None) -> None:
            if not value:
                return
            try:
                goto_time(self.film, value)
            except ValueError as err:
                self.notify(str(err), severity="error", timeout=4)
                return
            self.film.playing = False
            self.redraw()

        self.push_screen(PromptScreen("go to", hint=GOTO_HINT), done)

    def action_next_kind(self) -> None:
        self.kind = (self.kind + 1) % len(KINDS)
        self.resources.switch_kind(KINDS[self.kind])
        self.redraw()


def run_film(path: Path, film: Film) -> int:
    return int(FilmApp(film, name=path.name).run() or 0)
