"""The timeline strip: writes per time bucket over the kept history, warnings and faults marked,
and a cursor at the revision the panels show (at the right end when live).

Two lines: the bars (their height the bucket's writes, yellow when the bucket holds a warning
Event, a red ``◆`` when it holds a fault's, a dim ``·`` while not read yet), then the cursor ``▲`` between the oldest kept time and
now. The figures come from :meth:`kconsole.tui.rewind.Rewind.timeline`; drawing is a pure function
of them, so the strip redraws only when they or the cursor move.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from textual.widgets import Static

BARS = " ▁▂▃▄▅▆▇█"
LABEL = "history "
#: Buckets at most (one history read per bucket edge); a wider strip leaves the rest blank.
MAX_BUCKETS = 160


@dataclass(frozen=True, slots=True)
class TimelineData:
    """Figures per bucket between ``start`` and ``end`` (simulated seconds)."""

    start: float
    end: float
    #: None: not read yet (the strip fills in over a few refreshes).
    writes: tuple[int | None, ...] = ()
    warnings: tuple[int, ...] = ()
    faults: tuple[int, ...] = ()


def clock_text(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).strftime("%H:%M:%S")


def cursor_cell(data: TimelineData, when: float | None) -> int:
    """The bucket holding ``when`` (None: live, the last bucket)."""
    n = len(data.writes)
    if n == 0:
        return 0
    if when is None or data.end <= data.start:
        return n - 1
    i = int((when - data.start) / (data.end - data.start) * n)
    return max(0, min(n - 1, i))


def render_strip(data: TimelineData | None, when: float | None, where: str, volatile: bool = True) -> str:
    """Markup for the two lines; ``where`` is the cursor's label (``LIVE`` or ``rev N``). Without
    ``volatile`` the bars and times are left out (pictures and snapshot tests: which bucket a write
    falls in follows real I/O timing)."""
    pad = " " * len(LABEL)
    if data is None or not data.writes:
        return f"[dim]{LABEL}[/]{where} [dim]· reading the history…[/]\n{pad}▲"
    peak = max((w for w in data.writes if w is not None), default=0) or 1
    cells = []
    for writes, warnings, faults in zip(data.writes, data.warnings, data.faults):
        if not volatile:
            cells.append("·")
        elif faults:
            cells.append("[$error]◆[/]")
        elif writes is None:
            cells.append("[dim]·[/]")
        else:
            bar = BARS[0 if writes == 0 else max(1, round(writes / peak * (len(BARS) - 1)))]
            cells.append(f"[$warning]{bar}[/]" if warnings else bar)
    cursor = cursor_cell(data, when)
    n = len(data.writes)
    left, right = (clock_text(data.start), clock_text(data.end)) if volatile else ("", "")
    under = [" "] * n
    under[cursor] = "▲"
    if cursor > len(left):  # each label whole, or not at all when the cursor is on its place
        under[:len(left)] = left
    # Now's time at the right end, or live just left of the cursor standing there.
    end = n if cursor < n - len(right) - 1 else cursor - 1 if when is None else 0
    if end - len(right) > len(left) + 1:
        under[end - len(right):end] = right
    line2 = "".join(under)
    return f"[dim]{LABEL}[/]{''.join(cells)}\n[b]{where:<{len(LABEL) - 1}}[/] {line2}"


class TimelineStrip(Static):
    """Two lines under the header; the app feeds it figures and the cursor."""

    DEFAULT_CSS = """
    TimelineStrip { height: 2; padding: 0 1; background: $panel; color: $text-muted;
                    text-wrap: nowrap; text-overflow: clip; }
    """

    def __init__(self, *, id: str | None = "timeline") -> None:
        super().__init__("", id=id, markup=True)
        self.data: TimelineData | None = None
        self.when: float | None = None
        self.where = "LIVE"
        self.text = ""
        #: Pictures and snapshot tests turn the bars and times off (see :func:`render_strip`).
        self.show_volatile = True

    def buckets(self) -> int:
        """How many buckets fit the strip's width now."""
        width = self.content_region.width or 80
        return max(10, min(MAX_BUCKETS, width - len(LABEL)))

    def show(self, data: TimelineData | None = None, when: float | None = None, where: str = "LIVE") -> None:
        if data is not None:
            self.data = data
        self.when, self.where = when, where
        text = render_strip(self.data, when, where, self.show_volatile)
        if text != self.text:
            self.text = text
            self.update(text, layout=False)
