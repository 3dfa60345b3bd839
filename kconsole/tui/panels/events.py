"""Events: newest first by timestamp (never by the rendered age), warnings coloured, and optionally
only those about the selected object."""

from __future__ import annotations

from typing import Any

from kconsole.client import object_key
from kconsole.objects.printers import age, human_duration, parse_time
from kconsole.tui.model import ClusterModel, event_time, newest_first
from kconsole.tui.panels.base import Panel
from kconsole.tui.widgets import Fit, Row

Obj = dict[str, Any]

COLUMNS = ("Last Seen", "Type", "Reason", "Object", "From", "Message")
#: REASON, OBJECT and MESSAGE say what happened to what: REASON and OBJECT whole, MESSAGE takes
#: the width left (on 80 columns at least its start; z zooms the panel for all of it).
FITS = {"OBJECT": Fit(keep=0), "MESSAGE": Fit(keep=0, shrink_to=12, grow=True), "LAST SEEN": Fit(keep=2),
        "TYPE": Fit(keep=3), "FROM": Fit(keep=4)}
#: Rows kept on screen; the cache holds every event, the panel shows the newest.
LIMIT = 300


def last_seen(ev: Obj, now: float) -> str:
    """kubectl's LAST SEEN: ``5m`` or ``5m (x3 over 10m)``."""
    series = ev.get("series") or {}
    count = int(series.get("count") or ev.get("count") or 1)
    last = human_duration(now - event_time(ev))
    if count <= 1:
        return last
    first = parse_time(ev.get("firstTimestamp") or ev.get("eventTime"))
    over = age(ev.get("firstTimestamp") or ev.get("eventTime"), now) if first is not None else last
    return f"{last} (x{count} over {over})"


def event_cells(ev: Obj, now: float) -> tuple[str, ...]:
    inv = ev.get("involvedObject") or {}
    target = f"{(inv.get('kind') or '').lower()}/{inv.get('name', '')}"
    source = ev.get("source") or {}
    component = source.get("component") or ev.get("reportingComponent") or ""
    host = source.get("host") or ""
    origin = f"{component}, {host}" if host else component
    message = " ".join((ev.get("message") or "").split())
    return (last_seen(ev, now), ev.get("type", ""), ev.get("reason", ""), target, origin, message)


class EventsPanel(Panel):
    title = "Events"
    fits = FITS

    def __init__(self, model: ClusterModel, *, id: str | None = "events") -> None:
        super().__init__(model, id=id)
        self.about: Obj | None = None
        self._objects: dict[str, Obj] = {}
        #: key -> (resourceVersion, sort key): timestamps are parsed once per event version.
        self._order_keys: dict[str, tuple[str, tuple[float, str]]] = {}

    def show_about(self, obj: Obj | None) -> None:
        """Only events about ``obj`` (None: all events)."""
        self.about = obj
        meta = (obj or {}).get("metadata") or {}
        self.set_title(f"Events of {obj.get('kind', '').lower()}/{meta.get('name')}" if obj else self.title)
        self.sync(force=True)

    def inputs(self) -> Any:
        w = self.model.watched.get("events")
        return (w.version if w is not None else -1, int(self.now()), id(self.about))

    def rebuild(self) -> None:
        watched = self.model.watched.get("events")
        if watched is None:
            return
        now = self.now()
        if self.about is not None:
            events = self.model.events_for(self.about)
        else:
            events = sorted(watched.objects(), key=self._newest_first)
        rows = []
        objects = {}
        for ev in events[:LIMIT]:
            key = object_key(ev)
            objects[key] = ev
            state = "warning" if ev.get("type") == "Warning" else None
            rows.append(Row(key, event_cells(ev, now), state, watched.mark(key),
                            str((ev.get("metadata") or {}).get("resourceVersion", ""))))
        self._objects = objects
        self.table.empty_text = "No events." if watched.informer.has_synced else "loading…"
        self.set_rows(COLUMNS, rows)

    def _newest_first(self, ev: Obj) -> tuple[float, str]:
        meta = ev.get("metadata") or {}
        key = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
        rv = meta.get("resourceVersion", "")
        found = self._order_keys.get(key)
        if found is None or found[0] != rv:
            if len(self._order_keys) > 50_000:
                self._order_keys.clear()
            found = (rv, newest_first(ev))
            self._order_keys[key] = found
        return found[1]

    def selected(self) -> Obj | None:
        key = self.table.cursor_key
        return self._objects.get(key) if key else None
