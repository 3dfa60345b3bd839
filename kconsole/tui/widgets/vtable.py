"""A table that renders only the rows on screen (Textual's Line API).

``set_rows`` swaps in a whole new row list (the panel builds it from an informer cache, sorted and
filtered); drawing then costs one line per visible row whatever the row count, so a 10,000-pod
table scrolls and refreshes as fast as a 10-pod one. The header stays on the first line. Rows
carry a state (running / pending / failed / warning) and a change mark (added / modified /
deleted) that pick their colours from the theme's state slots; every cell, blank or not, carries
the theme's background (alternate rows a shade apart), so no row falls back to the terminal's own.

Columns are as wide as their content; :mod:`~kconsole.tui.widgets.fit` decides which show, and
how wide, in the width the table has now (``widths`` is the content, ``shown_widths`` the drawn).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import ceil

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.scrollbar import ScrollBar
from textual.strip import Strip

from kconsole.objects.printers import human_duration
from kconsole.tui.themes import STATE_DEFAULTS
from kconsole.tui.widgets.fit import GAP, Fit, fit_widths, fits_for


@dataclass(slots=True)
class Row:
    key: str
    cells: tuple[str, ...]
    state: str | None = None
    mark: str | None = None
    #: What identifies this version of the row (the object's resourceVersion, usually).
    tag: str = ""
    #: Epoch seconds the age column counts from: ages are computed only for drawn rows.
    born: float | None = None


def _thumb(size: int, virtual: float, window: float, position: float) -> tuple[int, int]:
    """Where a vertical scrollbar draws its thumb, in eighths of a cell (as Textual's
    ScrollBarRender.render_bar places it): equal thumbs draw the same scrollbar."""
    virtual, window = ceil(virtual), ceil(window)
    window = window if window < virtual else 0
    if not (window and size and virtual and size != virtual):
        return (-1, -1)
    thumb = max(1.0, window / (virtual / size))
    start = int((size - thumb) * (position / (virtual - window)) * 8)
    return (start, start + ceil(thumb * 8))


class VirtualTable(ScrollView, can_focus=True):
    """Header plus rows; a cursor row; only visible lines are built."""

    DEFAULT_CSS = """
    VirtualTable { height: 1fr; scrollbar-size-vertical: 1; scrollbar-size-horizontal: 0; scrollbar-gutter: stable; }
    """

    BINDINGS = [
        Binding("up,k", "cursor(-1)", "Up", show=False, id="table.up"),
        Binding("down,j", "cursor(1)", "Down", show=False, id="table.down"),
        Binding("pageup,ctrl+b", "page(-1)", "Page up", show=False, id="table.page_up"),
        Binding("pagedown,ctrl+f", "page(1)", "Page down", show=False, id="table.page_down"),
        Binding("home,g", "jump(0)", "Top", show=False, id="table.top"),
        Binding("end,G", "jump(-1)", "Bottom", show=False, id="table.bottom"),
        Binding("left", "scroll_columns(-8)", "Scroll left", show=False, id="table.left"),
        Binding("right", "scroll_columns(8)", "Scroll right", show=False, id="table.right"),
    ]

    class CursorMoved(Message):
        def __init__(self, table: VirtualTable, key: str | None) -> None:
            super().__init__()
            self.table = table
            self.key = key

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.columns: tuple[str, ...] = ()
        self.rows: list[Row] = []
        self.widths: list[int] = []
        #: Drawn widths (0: hidden), fitted from ``widths`` into the table's width.
        self.shown_widths: list[int] = []
        #: How each column gives way when space runs out, by upper-cased header (see fit.py).
        self.fits: dict[str, Fit] = {}
        #: Leading columns that stay in place while the rest scroll sideways (a matrix's NODE).
        self.frozen_columns = 0
        self.sort_column: int | None = None
        self.sort_reverse = False
        self.cursor = 0
        self._index: dict[str, int] = {}
        self._index_valid = True
        self._drawn_as: tuple[int | None, bool, str, int | None] | None = None
        #: Since the last commit_rows: every line must be redrawn / only these row indexes.
        self._redraw_all = False
        self._redraw_rows: set[int] = set()
        #: Per column: cell width -> how many rows have it, so a column shrinks when its widest rows go.
        self._width_counts: list[dict[int, int]] = []
        self._widths_moved = False
        #: Age text as last drawn, by row index: passing time redraws only the lines whose age moved.
        self._drawn_ages: dict[int, str] = {}
        self._styles: dict[str, Style] = {k: Style(color=v) for k, v in STATE_DEFAULTS.items()}
        self._header_style = Style(bold=True)
        self._cursor_style = Style(reverse=True)
        self._base_style = Style()
        self._zebra_style = Style()
        self.empty_text = ""
        #: Column showing the age of ``Row.born`` at draw time, and the clock it reads.
        self.age_column: int | None = None
        self.now: Callable[[], float] | None = None
        #: key -> tag of the row as last drawn: lets the benchmark see when a change reached the screen.
        self.painted: dict[str, str] = {}
        self.paints = 0

    # ------------------------------------------------------------------ data

    def set_theme_styles(self, states: dict[str, str], header: str, cursor_bg: str, cursor_fg: str,
                         background: str | None = None, foreground: str | None = None,
                         zebra: str | None = None) -> None:
        """Colours from the theme: states and marks, header, cursor, and the row backgrounds."""
        self._styles = {k: Style(color=v) for k, v in states.items()}
        self._base_style = Style(color=foreground, bgcolor=background)
        self._zebra_style = Style(color=foreground, bgcolor=zebra or background)
        self._header_style = self._base_style + Style(bold=True, color=header)
        self._cursor_style = Style(bgcolor=cursor_bg, color=cursor_fg, bold=True)
        self.refresh()

    def set_rows(self, columns: Sequence[str], rows: list[Row], *, keep_widths: bool = False) -> None:
        """Swap in a new row list; ``keep_widths`` (same rows, new order) skips measuring every cell.
        An identical list changes nothing, so panels rebuilt on a timer do not repaint for nothing."""
        columns = tuple(columns)
        drawn_as = (self.sort_column, self.sort_reverse, self.empty_text, self.age_column)
        if columns == self.columns and self._drawn_as == drawn_as and (
                rows is self.rows or len(rows) == len(self.rows) and rows == self.rows):
            return
        self._drawn_as = drawn_as
        old_key = self.cursor_key
        measure = not keep_widths or columns != self.columns
        self.columns = columns
        if measure:
            n = len(columns)
            counts: list[dict[int, int]] = [{} for _ in range(n)]
            for row in rows:
                cells = row.cells
                for i in range(min(n, len(cells))):
                    w = len(cells[i])
                    c = counts[i]
                    c[w] = c.get(w, 0) + 1
            self._width_counts = counts
            self.widths = self._measured_widths()
            self._fit()
            self._widths_moved = False
        self.rows = rows
        self._index_valid = False
        if old_key is not None:
            self.cursor = next((i for i, row in enumerate(rows) if row.key == old_key), self.cursor)
        self._rows_done(old_key)

    def _measured_widths(self) -> list[int]:
        """Each column as wide as its header or its widest cell."""
        widths = [max(len(name), max(counts, default=0)) for name, counts in zip(self.columns, self._width_counts)]
        if self.age_column is not None and self.age_column < len(widths):
            widths[self.age_column] = max(widths[self.age_column], 6)
        return widths

    def _fit(self) -> bool:
        """Fit the content widths into the width the table has now; True when the drawn ones moved."""
        available = self.scrollable_content_region.width
        if available <= 0:
            shown = list(self.widths)
        else:
            shown = fit_widths(self.widths, fits_for(self.columns, self.fits), available)
        if shown == self.shown_widths:
            return False
        self.shown_widths = shown
        return True

    def _line_width(self) -> int:
        drawn = [w for w in self.shown_widths if w]
        return sum(drawn) + GAP * max(0, len(drawn) - 1)

    @property
    def hidden_columns(self) -> list[str]:
        """Headers of the columns that do not fit now (``z`` zooms the panel to show more)."""
        return [c for c, w in zip(self.columns, self.shown_widths) if not w]

    def _count_widths(self, row: Row, delta: int) -> None:
        """Count a row's cell widths in (+1) or out (-1); a column whose widest cell may have
        changed is measured again at commit_rows."""
        widths = self.widths
        cells = row.cells
        for i in range(min(len(self._width_counts), len(cells))):
            w = len(cells[i])
            c = self._width_counts[i]
            left = c.get(w, 0) + delta
            if left > 0:
                c[w] = left
            else:
                c.pop(w, None)
                if w >= widths[i]:
                    self._widths_moved = True
            if delta > 0 and w > widths[i]:
                self._widths_moved = True

    # Incremental edits: a panel that keeps its rows sorted changes only the rows that moved, then
    # calls commit_rows(); the key index is rebuilt lazily, only if someone asks for it.

    def insert_row(self, index: int, row: Row) -> None:
        if index <= self.cursor and self.rows:
            self.cursor += 1
        self.rows.insert(index, row)
        self._index_valid = False
        self._count_widths(row, 1)
        self._touch(index, shifts=True)

    def remove_row(self, index: int) -> None:
        self._count_widths(self.rows[index], -1)
        del self.rows[index]
        if index < self.cursor:
            self.cursor -= 1
        self._index_valid = False
        self._touch(index, shifts=True)

    def replace_row(self, index: int, row: Row) -> None:
        old = self.rows[index]
        if old.cells != row.cells:
            self._count_widths(old, -1)
            self._count_widths(row, 1)
        self.rows[index] = row
        self._touch(index, shifts=False)

    def _touch(self, index: int, shifts: bool) -> None:
        """Note whether an edit shows: a changed line on screen (that line is redrawn), or rows
        shifting the lines on screen (all are)."""
        top = int(self.scroll_offset.y)
        bottom = top + max(1, self.size.height - 1)
        if index < bottom:
            if shifts:
                self._redraw_all = True
            elif index >= top:
                self._redraw_rows.add(index)

    def commit_rows(self, old_key: str | None) -> None:
        """Finish a batch of edits: keep the cursor in range and resize; redraw only what an edit
        changed on screen (churn among 10,000 rows mostly lands off screen and costs no repaint; a
        changed row in view costs one line)."""
        rows = self.rows
        self.cursor = max(0, min(self.cursor, len(rows) - 1))
        if self._widths_moved:
            self._widths_moved = False
            widths = self._measured_widths()
            if widths != self.widths:
                self.widths = widths
                if self._fit():
                    self._redraw_all = True  # every line's columns move
        self._set_virtual_size(Size(self._line_width(), len(rows) + 1))
        if self._redraw_all:
            self.refresh()
        else:
            for index in self._redraw_rows:
                self.refresh_line(index + 1)  # line 0 is the header
        self._redraw_all = False
        self._redraw_rows.clear()
        if old_key != self.cursor_key:
            self.post_message(self.CursorMoved(self, self.cursor_key))

    def _set_virtual_size(self, size: Size) -> None:
        """Resize the scrolled area. A row count that changes no scrollbar's visibility needs no
        layout pass (the table's own size does not depend on it): under churn each one redid the
        screen's layout and repainted the scrollbar's whole column, which made the lines beside it
        repaint too; the scrollbar is repainted only when its thumb moves."""
        old = self.virtual_size
        if size == old:
            return
        height = self.container_size.height
        bar = self._vertical_scrollbar
        auto = self.styles.height is None or self.styles.height.is_auto  # then its own size follows the rows
        overflows = old.height > height
        if (auto or size.width != old.width or not height or bar is None
                or (size.height > height) != overflows or self.show_vertical_scrollbar != overflows):
            self.virtual_size = size
            return
        self.set_reactive(VirtualTable.virtual_size, size)
        if self.show_vertical_scrollbar:
            before = _thumb(bar.size.height, bar.window_virtual_size, bar.window_size, bar.position)
            bar.set_reactive(ScrollBar.window_virtual_size, size.height)
            if _thumb(bar.size.height, size.height, bar.window_size, bar.position) != before:
                bar.refresh()
        self.scroll_y = self.validate_scroll_y(self.scroll_y)

    def _rows_done(self, old_key: str | None) -> None:
        rows = self.rows
        self.cursor = max(0, min(self.cursor, len(rows) - 1))
        self._set_virtual_size(Size(self._line_width(), len(rows) + 1))
        self._redraw_all = False
        self._redraw_rows.clear()
        self.refresh()
        if old_key != self.cursor_key:
            self.post_message(self.CursorMoved(self, self.cursor_key))

    @property
    def cursor_key(self) -> str | None:
        if 0 <= self.cursor < len(self.rows):
            return self.rows[self.cursor].key
        return None

    @property
    def cursor_row(self) -> Row | None:
        if 0 <= self.cursor < len(self.rows):
            return self.rows[self.cursor]
        return None

    def index_of(self, key: str) -> int | None:
        return self._key_index().get(key)

    def _key_index(self) -> dict[str, int]:
        if not self._index_valid:
            self._index = {row.key: i for i, row in enumerate(self.rows)}
            self._index_valid = True
        return self._index

    def refresh_ages(self) -> None:
        """Redraw the lines on screen whose age reads differently now: time passing changes no row,
        so nothing else would draw it."""
        if self.age_column is None or self.now is None:
            return
        now = self.now()
        top = int(self.scroll_offset.y)
        rows = self.rows
        drawn = self._drawn_ages
        for index in range(top, min(len(rows), top + max(0, self.size.height - 1))):
            born = rows[index].born
            if drawn.get(index) != ("<unknown>" if born is None else human_duration(now - born)):
                self.refresh_line(index + 1)

    def visible_keys(self) -> list[str]:
        top = int(self.scroll_offset.y)
        height = max(0, self.size.height - 1)
        return [row.key for row in self.rows[top:top + height]]

    # ------------------------------------------------------------------ cursor

    def move_cursor(self, index: int) -> None:
        if not self.rows:
            return
        index = max(0, min(index, len(self.rows) - 1))
        if index == self.cursor:
            return
        self.cursor = index
        self._scroll_to_cursor()
        self.refresh()
        self.post_message(self.CursorMoved(self, self.cursor_key))

    def select_key(self, key: str) -> bool:
        index = self._key_index().get(key)
        if index is None:
            return False
        self.move_cursor(index)
        return True

    def _scroll_to_cursor(self) -> None:
        top = int(self.scroll_offset.y)
        height = max(1, self.size.height - 1)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False)

    def action_cursor(self, delta: int) -> None:
        self.move_cursor(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        self.move_cursor(self.cursor + direction * max(1, self.size.height - 2))

    def action_jump(self, where: int) -> None:
        self.move_cursor(len(self.rows) - 1 if where < 0 else 0)

    def action_scroll_columns(self, cells: int) -> None:
        self.scroll_to(x=max(0, self.scroll_offset.x + cells), animate=False)

    def on_click(self, event: events.Click) -> None:
        if event.y >= 1:
            self.move_cursor(int(self.scroll_offset.y) + event.y - 1)

    # ------------------------------------------------------------------ drawing

    def _line_text(self, cells: Sequence[str]) -> str:
        parts = []
        widths = self.shown_widths
        last = max((i for i, w in enumerate(widths) if w), default=-1)
        for i, w in enumerate(widths):
            if not w:
                continue
            cell = cells[i] if i < len(cells) else ""
            if len(cell) > w:
                cell = cell[: w - 1] + "…"
            parts.append(cell if i == last else cell.ljust(w))
        return (" " * GAP).join(parts)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        scroll_x, scroll_y = self.scroll_offset
        if y == 0:
            headers = list(self.columns)
            if self.sort_column is not None and 0 <= self.sort_column < len(headers):
                headers[self.sort_column] += "↓" if self.sort_reverse else "↑"
            text = self._line_text([h.upper() for h in headers])
            strip = Strip([Segment(text, self._header_style)])
            return self._scrolled(strip, scroll_x, width, self._header_style)
        index = scroll_y + y - 1
        base = self._zebra_style if index % 2 and index < len(self.rows) else self._base_style
        if index >= len(self.rows):
            if index == 0 and self.empty_text:
                return Strip([Segment(self.empty_text, base + Style(dim=True))]).crop_extend(0, width, base)
            return Strip.blank(width, base)
        row = self.rows[index]
        style = base + self._styles.get(row.mark or row.state or "", Style())
        if row.mark == "deleted":
            style += Style(strike=True)
        elif row.mark is not None:
            style += Style(bold=True)
        if index == self.cursor and self.has_focus:
            style += self._cursor_style
        elif index == self.cursor:
            style += Style(underline=True)
        self.painted[row.key] = row.tag
        self.paints += 1
        cells = row.cells
        if self.age_column is not None and self.now is not None and self.age_column < len(cells):
            age = "<unknown>" if row.born is None else human_duration(self.now() - row.born)
            self._drawn_ages[index] = age
            cells = cells[:self.age_column] + (age,) + cells[self.age_column + 1:]
        strip = Strip([Segment(self._line_text(cells), style)])
        return self._scrolled(strip, scroll_x, width, style if index == self.cursor else base)

    def _scrolled(self, strip: Strip, scroll_x: int, width: int, fill: Style) -> Strip:
        """The visible part of a line: frozen columns stay at the left, the rest from ``scroll_x``."""
        frozen = sum(w + GAP for w in self.shown_widths[:self.frozen_columns] if w)
        if not frozen or not scroll_x or frozen >= width:
            return strip.crop_extend(scroll_x, scroll_x + width, fill)
        left = strip.crop_extend(0, frozen, fill)
        right = strip.crop_extend(frozen + scroll_x, frozen + scroll_x + width - frozen, fill)
        return Strip.join([left, right])

    def on_mount(self) -> None:
        styles = getattr(self.app, "table_styles", None)
        if callable(styles):
            self.set_theme_styles(*styles())

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def on_resize(self) -> None:
        if self._fit():
            self._set_virtual_size(Size(self._line_width(), len(self.rows) + 1))
            self.refresh()
        self._scroll_to_cursor()
