"""Scheduling decisions: pending pods first (why, in the scheduler's words), then recent attempts
newest first; Enter on an attempt opens its node × plugin matrix. A cluster that keeps no
decision records (any upstream cluster, attached by kubeconfig) shows the attempts its
scheduler's Events tell (:mod:`kconsole.tui.schedevents`)."""

from __future__ import annotations

from typing import Any

from kconsole.client import object_key
from kconsole.objects.printers import age, parse_time
from kconsole.tui import schedevents
from kconsole.tui.model import ClusterModel, event_time
from kconsole.tui.panels.base import Panel
from kconsole.tui.widgets import Fit, Row

Obj = dict[str, Any]

COLUMNS = ("Pod", "Attempt", "Result", "Node", "Feasible", "Age", "Reason")
#: POD, RESULT and REASON carry the panel's meaning; REASON (the scheduler's words) takes the rest.
FITS = {"POD": Fit(keep=0, shrink_to=24), "RESULT": Fit(keep=0), "REASON": Fit(keep=0, shrink_to=16, grow=True),
        "NODE": Fit(keep=1), "FEASIBLE": Fit(keep=2), "ATTEMPT": Fit(keep=3), "AGE": Fit(keep=4)}
LIMIT = 500


def pending_reason(pod: Obj) -> str:
    for cond in (pod.get("status") or {}).get("conditions") or ():
        if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
            return cond.get("message") or cond.get("reason") or ""
    return "waiting for the scheduler"


class SchedulingPanel(Panel):
    title = "Scheduling"
    fits = FITS

    def __init__(self, model: ClusterModel, *, id: str | None = "scheduling") -> None:
        super().__init__(model, id=id)
        self._objects: dict[str, Obj] = {}

    def inputs(self) -> Any:
        d = self.model.watched.get("schedulingdecisions.kconsole.dev")
        if d is None:  # a cluster without decision records: attempts come from Events
            d = self.model.watched.get("events")
        return (d.version if d is not None else -1, self.model.pending_version, int(self.now()))

    def rebuild(self) -> None:
        now = self.now()
        rows: list[Row] = []
        objects: dict[str, Obj] = {}
        pods = self.model.watched.get("pods")
        if pods is not None:
            found = (pods.informer.get(key) for key in sorted(self.model.pending))
            pending = [p for p in found if p is not None]
            for pod in pending[:LIMIT]:
                key = "pending:" + object_key(pod)
                objects[key] = pod
                meta = pod["metadata"]
                rows.append(Row(key, (f"{meta.get('namespace')}/{meta.get('name')}", "", "Pending", "", "",
                                      age(meta.get("creationTimestamp"), now), pending_reason(pod)), "pending"))
        decisions = self.model.watched.get("schedulingdecisions.kconsole.dev")
        if decisions is not None:
            items = decisions.informer.list()
            items.sort(key=lambda d: (parse_time((d.get("spec") or {}).get("time")
                                                 or d["metadata"].get("creationTimestamp")) or 0.0,
                                      d["metadata"].get("resourceVersion", "")), reverse=True)
            for d in items[:LIMIT]:
                key = object_key(d)
                objects[key] = d
                spec, status, meta = d.get("spec") or {}, d.get("status") or {}, d["metadata"]
                nodes = status.get("nodes") or {}
                result = status.get("result") or "?"
                state = {"Scheduled": "running", "Unschedulable": "pending", "Error": "failed"}.get(result)
                when = spec.get("time") or meta.get("creationTimestamp")
                rows.append(Row(key, (f"{meta.get('namespace')}/{spec.get('pod', '')}", str(spec.get("attempt", "")),
                                      result, status.get("node") or "",
                                      f"{nodes.get('feasible', '?')}/{nodes.get('evaluated', '?')}",
                                      age(when, now), " ".join((status.get("message") or "").split())),
                                state, decisions.mark(key), str(meta.get("resourceVersion", ""))))
        elif (events := self.model.watched.get("events")) is not None:
            rows.extend(self._event_rows(events, objects, now))
        self._objects = objects
        self.table.empty_text = "No scheduling attempts yet."
        self.set_rows(COLUMNS, rows)

    @staticmethod
    def _event_rows(events: Any, objects: dict[str, Obj], now: float) -> list[Row]:
        """Attempts from the scheduler's Scheduled and FailedScheduling Events, newest first."""
        found = [ev for ev in events.informer.list() if schedevents.is_scheduler_event(ev)]
        found.sort(key=lambda ev: (-event_time(ev), ev["metadata"].get("name", "")))
        rows = []
        for ev in found[:LIMIT]:
            key = object_key(ev)
            objects[key] = ev
            a = schedevents.attempt(ev)
            state = "running" if a.result == "Scheduled" else "pending"
            rows.append(Row(key, (f"{a.namespace}/{a.pod}", str(a.attempts), a.result, a.node, a.feasible(),
                                  age(ev.get("lastTimestamp") or ev.get("eventTime")
                                      or ev["metadata"].get("creationTimestamp"), now), a.reason_text()),
                            state, events.mark(key), str(ev["metadata"].get("resourceVersion", ""))))
        return rows

    def selected(self) -> Obj | None:
        key = self.table.cursor_key
        return self._objects.get(key) if key else None
