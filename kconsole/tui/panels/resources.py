"""Resources: kubectl's columns for one kind, with namespace, filter and sort, from an informer cache.

Cells come from :mod:`kconsole.objects.printers` (the same the API server's Table answers use), so
the panel reads like ``kubectl get``. Cells are cached per object resourceVersion; only the AGE
column is recomputed as time passes, so a refresh of 10,000 rows stays cheap.
"""

from __future__ import annotations

import re
import time
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from kconsole.client import StatusError
from kconsole.objects.printers import parse_time
from kconsole.objects.selectors import LabelSelector, SelectorError, parse_label_selector
from kconsole.tui.model import ClusterModel, Watched, event_time, newest_first
from kconsole.tui.panels.base import Panel
from kconsole.tui.widgets import Row

Obj = dict[str, Any]

_FAILED = ("Failed", "Error", "CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "OOMKilled", "NotReady",
           "Unknown", "Evicted", "CreateContainerConfigError", "Lost", "Terminating")
_PENDING = ("Pending", "ContainerCreating", "PodInitializing", "Init:", "SchedulingDisabled", "Progressing")


#: k9s's aliases for kinds kubectl gives no short name (k9s muscle memory).
K9S_ALIASES = {"sec": "secrets", "dp": "deployments", "rb": "rolebindings", "crb": "clusterrolebindings",
               "crd": "customresourcedefinitions", "crds": "customresourcedefinitions"}


def resolve_kind(client: Any, name: str) -> Any:
    """The discovery entry for a name as kubectl takes it: plural, singular, short name or kind,
    each optionally qualified by its group (``deployment.apps``, ``cronjob.v1.batch``); or a k9s
    alias. Raises the client's StatusError naming what is unknown."""
    name = name.strip()
    try:
        return client.resource_info(K9S_ALIASES.get(name.lower(), name))
    except StatusError:
        head, dot, group = name.partition(".")
        if not dot:
            raise
        try:
            info = client.resource_info(head)
        except StatusError:
            info = None
        if info is None or group.lower() not in (info.group.lower(), f"{info.version}.{info.group}".lower()):
            raise
        return info


class FilterError(ValueError):
    """A filter the panel cannot use (bad regex or label selector)."""


@dataclass(frozen=True)
class RowFilter:
    """``/text`` (substring, case-insensitive), ``/re:...`` or a text with regex metacharacters
    (regex), ``/-l app=web`` (label selector); ``/!text`` keeps the rows that do not match, as
    k9s's inverse filter does (``/!Running``)."""

    text: str = ""
    pattern: re.Pattern[str] | None = None
    selector: LabelSelector | None = None
    inverse: bool = False

    @classmethod
    def parse(cls, text: str) -> RowFilter:
        text = text.strip()
        if not text:
            return cls()
        if text.startswith("!") and text[1:].strip():
            inner = cls.parse(text[1:])
            return cls(text, inner.pattern, inner.selector, inverse=True)
        if text.startswith("-l"):
            try:
                return cls(text, selector=parse_label_selector(text[2:].strip()))
            except SelectorError as err:
                raise FilterError(f"label selector: {err}") from None
        body = text[3:] if text.startswith("re:") else text
        if text.startswith("re:") or any(ch in body for ch in ".*+?[]()|^$\\"):
            try:
                return cls(text, pattern=re.compile(body, re.IGNORECASE))
            except re.error as err:
                raise FilterError(f"regex {body!r}: {err}") from None
        return cls(text, pattern=re.compile(re.escape(body), re.IGNORECASE))

    def matches(self, obj: Obj, cells: tuple[str, ...]) -> bool:
        if self.selector is not None:
            return self.selector.matches((obj.get("metadata") or {}).get("labels") or {}) != self.inverse
        if self.pattern is not None:
            return any(self.pattern.search(c) for c in cells) != self.inverse
        return True


def row_state(group_resource: str, obj: Obj, cells: tuple[str, ...], columns: tuple[str, ...]) -> str | None:
    """running / pending / failed / warning, from the status the columns already show."""
    if group_resource == "events":
        return "warning" if obj.get("type") == "Warning" else None
    if "Status" in columns:
        status = cells[columns.index("Status")]
        if group_resource == "nodes":
            if "NotReady" in status or "Unknown" in status:
                return "failed"
            return "pending" if "SchedulingDisabled" in status else "running"
        if status in ("Running", "Active", "Bound"):
            return "running"
        if status == "Completed" or status == "Succeeded":
            return None
        if any(status.startswith(p) for p in _FAILED):
            return "failed"
        if any(status.startswith(p) for p in _PENDING):
            return "pending"
    if "Ready" in columns:
        ready = cells[columns.index("Ready")]
        if "/" in ready:
            have, _, want = ready.partition("/")
            return "running" if have == want else "pending"
    return None


@lru_cache(maxsize=1 << 15)
def cell_order(cell: str) -> tuple[Any, ...]:
    """Sort key of a cell: by its first number when it starts with one (``3/3`` by 3, ``12 (5m
    ago)`` by 12), numbers before text. float() runs only on what could start a number: a raised
    ValueError per text cell made a new sort column cost ~30 ms over 10,000 rows. Memoised: most
    columns repeat a few values (``Running``, ``1/1``, ``0``) over thousands of rows."""
    head = cell.split(" ", 1)[0].split("/", 1)[0]
    first = head[:1]
    if first and (first.isdigit() or first.isspace() or first in "+-.iInN"):
        try:
            return (0, float(head), cell)
        except ValueError:
            pass
    return (1, cell)


#: Under churn the row count in the title changes at most this often (wall seconds): each new
#: title repaints the panel's whole box, which made a one-line change cost a full-panel paint.
TITLE_INTERVAL = 1.0


@dataclass(frozen=True)
class _Layout:
    """What a full rebuild fixed: the printer, which of its columns show, and the namespace column."""

    printer: Any
    shown: tuple[int, ...]
    names: tuple[str, ...]
    columns: tuple[str, ...]
    all_ns: bool
    age_col: int | None


class ResourcesPanel(Panel):
    title = "Resources"

    def __init__(self, model: ClusterModel, *, id: str | None = "resources", resource: str = "pods") -> None:
        super().__init__(model, id=id)
        self.resource = resource
        self.group_resource = resource
        self.kind = ""
        self.namespaced = True
        self.namespace: str | None = None  # None: all namespaces
        self.filter = RowFilter()
        #: The filter the last kind switch cleared ("" when none was).
        self.cleared_filter = ""
        self.sort_column: int | None = None
        self.sort_reverse = False
        self.watched: Watched | None = None
        #: key -> (resourceVersion, cells, state, born): printers run once per object version.
        self._cells: dict[str, tuple[str, tuple[str, ...], str | None, float | None]] = {}
        self._objects: dict[str, Obj] = {}
        self._layout: _Layout | None = None
        #: Shown rows in ascending (sort key, row key) order; the table shows it reversed when descending.
        self._order: list[tuple[Any, str]] = []
        self._sort_keys: dict[str, Any] = {}
        self._descending = False
        self._order_column: int | None = None
        self._dirty: set[str] = set()
        self._dirty_of: Watched | None = None
        self._synced = False
        self._age_second = 0
        #: Incremental updates applied (rebuilds counts the full ones).
        self.updates = 0
        #: Re-sorts of the built rows (sort keys).
        self.resorts = 0
        #: When the title last changed (``wall``, replaceable), and whether its row count is behind.
        self.wall: Callable[[], float] = time.monotonic
        self._titled_at = float("-inf")
        self._title_behind = False

    def on_mount(self) -> None:
        self._update_title()

    # ------------------------------------------------------------------ what to show

    def switch_kind(self, name: str) -> str:
        """Show another kind, by any name kubectl accepts (``po``, ``deploy``, ``leases``,
        ``deployment.apps``) or a k9s alias (``sec``, ``dp``)."""
        try:
            info = resolve_kind(self.model.client, name)
        except StatusError as err:
            raise FilterError(err.message if hasattr(err, "message") else str(err)) from None
        if "list" not in info.verbs or "watch" not in info.verbs:
            raise FilterError(f"{info.resource} cannot be listed and watched")
        # A filter typed for one kind means nothing for another (``/web`` on pods, then ``:no``).
        self.cleared_filter = ""
        if info.group_resource != self.group_resource and self.filter.text:
            self.cleared_filter, self.filter = self.filter.text, RowFilter()
        self.resource = info.resource
        self.group_resource = info.group_resource
        self.kind = info.kind
        self.namespaced = info.namespaced
        self.sort_column = None
        self.sort_reverse = False
        self._cells.clear()
        self.watched = self.model.watch(info.group_resource)
        self._update_title()
        self.sync(force=True)
        return info.group_resource

    def set_namespace(self, namespace: str | None) -> None:
        self.namespace = namespace or None
        self._update_title()
        self.sync(force=True)

    def set_filter(self, text: str) -> None:
        self.filter = RowFilter.parse(text)
        self._update_title()
        self.sync(force=True)

    def sort_next(self) -> None:
        n = len(self.table.columns)
        if n:
            self.sort_column = 0 if self.sort_column is None else (self.sort_column + 1) % n
            self.sync()  # a re-sort of the built rows

    def toggle_reverse(self) -> None:
        self.sort_reverse = not self.sort_reverse
        self.sync()

    def _update_title(self) -> None:
        where = "" if not self.namespaced else f" ({self.namespace or 'all'})"
        count = f" [{len(self.table.rows)}]" if self.table.rows or self.watched is not None else ""
        filt = f" /{self.filter.text}" if self.filter.text else ""
        self._title_behind = False
        title = f"{self.group_resource}{where}{count}{filt}"
        if title != self._shown_title:
            self._titled_at = self.wall()
            self.set_title(title)

    def _count_changed(self) -> None:
        """Rows came or went: the count in the title follows at most every TITLE_INTERVAL."""
        if self.wall() - self._titled_at >= TITLE_INTERVAL:
            self._update_title()
        else:
            self._title_behind = True

    # ------------------------------------------------------------------ rows

    def inputs(self) -> Any:
        # Ages are drawn lazily by the table, so passing time alone does not rebuild 10,000 rows;
        # events' LAST SEEN (x3 over 10m) is a composite cell and is rebuilt each simulated second.
        tick = int(self.now()) if self.group_resource == "events" else 0
        return (self.group_resource, self.namespace, self.filter.text, self.sort_column, self.sort_reverse, tick)

    def sync(self, force: bool = False) -> bool:
        """A full rebuild when what is shown changed (kind, namespace, filter, sort, events' tick);
        otherwise only the rows whose objects or marks changed since the last call."""
        inputs = self.inputs()
        previous = self._inputs
        if (not force and self._layout is not None and previous is not None and inputs != previous
                and inputs[:3] == previous[:3] and inputs[5:] == previous[5:]):
            self._inputs = inputs
            self._resort()
            self.resorts += 1
            previous = inputs
        if force or inputs != previous or self._layout is None:
            self._inputs = inputs
            self.rebuild()
            self.rebuilds += 1
            return True
        synced = self.watched is not None and self.watched.informer.has_synced
        if synced != self._synced:
            self._synced = synced
            self.table.empty_text = self._empty_text()
            self.table.refresh()
        if self._title_behind:
            self._count_changed()
        second = int(self.now())
        if second != self._age_second:
            self._age_second = second
            self.table.refresh_ages()
        if not self._dirty:
            return False
        keys = list(self._dirty)
        self._dirty.clear()
        self._apply(keys)
        self.updates += 1
        return True

    def _subscribe(self, watched: Watched) -> None:
        if self._dirty_of is watched:
            return
        if self._dirty_of is not None:
            self._dirty_of.unsubscribe(self._dirty)
        self._dirty = watched.subscribe()
        self._dirty_of = watched

    def rebuild(self) -> None:
        if self.watched is None:
            self.watched = self.model.watch(self.resource)
            self.group_resource = self.model.group_resource(self.resource)
        watched = self.watched
        self._subscribe(watched)
        self._dirty.clear()
        printer = self.model.printer(self.resource)
        shown = tuple(i for i, c in enumerate(printer.columns) if c.priority == 0)
        names = tuple(printer.columns[i].name for i in shown)
        age_col = names.index("Age") if "Age" in names else None
        all_ns = self.namespaced and self.namespace is None
        columns = (("Namespace",) if all_ns else ()) + names
        if self.group_resource == "events":
            self._cells.clear()  # LAST SEEN moves with time, not with resourceVersion
        self._layout = _Layout(printer, shown, names, columns, all_ns, age_col)
        col = self.sort_column
        name = columns[col] if col is not None and col < len(columns) else None
        self._descending = self.sort_reverse != (name in ("Age", "Last Seen"))
        self._order_column = col
        informer = watched.informer
        pairs = list(zip(informer.keys(), informer.list()))
        pairs.extend(watched.gone.items())
        objects: dict[str, Obj] = {}
        made: dict[str, Row] = {}
        order: list[tuple[Any, str]] = []
        sort_key = self._sort_key()
        for key, obj in pairs:
            row = self._row_for(key, obj)
            if row is None:
                continue
            objects[key] = obj
            made[key] = row
            order.append((sort_key(row, obj), key))
        cache = self._cells
        if len(cache) > len(objects) * 2 + 1000:
            for stale in [k for k in cache if k not in objects]:
                del cache[stale]
        order.sort()
        self._order = order
        self._sort_keys = {key: sk for sk, key in order}
        self._objects = objects
        rows = [made[key] for _, key in order]
        if self._descending:
            rows.reverse()
        self._synced = informer.has_synced
        self.table.sort_column = self.sort_column
        self.table.sort_reverse = self.sort_reverse
        self.table.empty_text = self._empty_text()
        self.table.age_column = None if age_col is None else age_col + (1 if all_ns else 0)
        self.table.now = self.now
        self.set_rows(columns, rows)
        self._update_title()

    def _resort(self) -> None:
        """A new sort over the rows already built (a key press): no printer runs, no row is rebuilt,
        and flipping the direction only reverses the list."""
        assert self._layout is not None
        table = self.table
        columns = self._layout.columns
        col = self.sort_column
        name = columns[col] if col is not None and col < len(columns) else None
        was_descending = self._descending
        self._descending = self.sort_reverse != (name in ("Age", "Last Seen"))
        if col == self._order_column:
            # The table shows the order already, one way or the other.
            rows = table.rows[::-1] if self._descending != was_descending else list(table.rows)
        else:
            by_key = {row.key: row for row in table.rows}
            objects = self._objects
            sort_key = self._sort_key()
            order = [(sort_key(row, objects[key]), key) for key, row in by_key.items()]
            order.sort()
            self._order = order
            self._sort_keys = {key: sk for sk, key in order}
            self._order_column = col
            rows = [by_key[key] for _, key in order]
            if self._descending:
                rows.reverse()
        table.sort_column = self.sort_column
        table.sort_reverse = self.sort_reverse
        table.set_rows(columns, rows, keep_widths=True)

    def _row_for(self, key: str, obj: Obj) -> Row | None:
        """The row of one object under the current layout, or None when filtered out."""
        layout = self._layout
        meta = obj.get("metadata") or {}
        if self.namespace is not None and self.namespaced and meta.get("namespace") != self.namespace:
            return None
        rv = str(meta.get("resourceVersion", ""))
        cached = self._cells.get(key)
        if cached is None or cached[0] != rv:
            try:
                full = layout.printer.cells(obj, self.now())
            except Exception:  # noqa: BLE001 - one odd object must not blank the table
                full = [meta.get("name", "")]
            cells = tuple("" if full[i] is None else str(full[i]) for i in layout.shown if i < len(full))
            state = row_state(self.group_resource, obj, cells, layout.names)
            born = parse_time(meta.get("creationTimestamp")) if layout.age_col is not None else None
            cached = (rv, cells, state, born)
            self._cells[key] = cached
        _, cells, state, born = cached
        if layout.all_ns:
            cells = (meta.get("namespace") or "",) + cells
        flt = self.filter
        if (flt.pattern is not None or flt.selector is not None) and not flt.matches(obj, cells):
            return None
        return Row(key, cells, state, self.watched.mark(key) if self.watched is not None else None, rv, born)

    def _sort_key(self) -> Callable[[Row, Obj], Any]:
        """The ascending sort key of a (row, object) under the current sort column (the row key
        breaks ties; :attr:`_descending` says which way to show). Chosen once per pass, not per row."""
        columns = self._layout.columns
        col = self.sort_column
        if col is None or col >= len(columns):
            if self.group_resource == "events":
                return lambda row, obj: newest_first(obj)
            return lambda row, obj: ""
        name = columns[col]
        if name == "Last Seen":
            return lambda row, obj: event_time(obj)
        if name == "Age":
            return lambda row, obj: row.born or 0.0
        return lambda row, obj: cell_order(row.cells[col] if col < len(row.cells) else "")

    def _apply(self, keys: list[str]) -> None:
        """Move only the changed rows: bisect them out of and into the sorted order."""
        table = self.table
        old_cursor = table.cursor_key
        watched = self.watched
        assert watched is not None
        order = self._order
        sort_keys = self._sort_keys
        objects = self._objects
        desc = self._descending
        informer = watched.informer
        sort_key = self._sort_key()
        for key in keys:
            obj = informer.get(key)
            if obj is None:
                obj = watched.gone.get(key)
            row = self._row_for(key, obj) if obj is not None else None
            new_sk = sort_key(row, obj) if row is not None else None
            old_sk = sort_keys.get(key)
            if old_sk is not None:
                pos = bisect_left(order, (old_sk, key))
                if row is not None and new_sk == old_sk:
                    table.replace_row(len(order) - 1 - pos if desc else pos, row)
                    objects[key] = obj  # type: ignore[assignment]
                    continue
                table.remove_row(len(order) - 1 - pos if desc else pos)
                del order[pos]
                del sort_keys[key]
                objects.pop(key, None)
            if row is not None:
                pos = bisect_left(order, (new_sk, key))
                order.insert(pos, (new_sk, key))
                sort_keys[key] = new_sk
                objects[key] = obj  # type: ignore[assignment]
                table.insert_row(len(order) - 1 - pos if desc else pos, row)
        table.commit_rows(old_cursor)
        self._count_changed()

    def _empty_text(self) -> str:
        if self.watched is not None and not self.watched.informer.has_synced:
            return "loading…"
        where = f" in {self.namespace} namespace" if self.namespaced and self.namespace else ""
        return f"No resources found{where}."

    def selected(self) -> Obj | None:
        key = self.table.cursor_key
        return self._objects.get(key) if key is not None else None
