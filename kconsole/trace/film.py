"""A trace played back as a film: the cluster's objects at any point of the recording, with no
cluster running. The position is a number of changes applied on top of the trace's starting picture
(0: as at its first revision); play advances it on simulated time at a speed, scrub moves it
anywhere. Going back starts from the nearest checkpoint kept while going forward, so a jump costs at
most :data:`CHECKPOINT_EVERY` changes."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kconsole.trace.fileformat import Trace

Obj = dict[str, Any]
Key = tuple[str, str, str]  # (group_resource, namespace, name)

CHECKPOINT_EVERY = 512
#: Changes the log leaves out: heartbeats, renewed every few seconds (the Leases panel shows them).
QUIET = frozenset({"leases.coordination.k8s.io"})
SPEEDS = (0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 300.0)


def group_resource(resource: str, group: str | None) -> str:
    return f"{resource}.{group}" if group else resource


@dataclass(frozen=True, slots=True)
class Moment:
    """One line of the film's log: a change, an input or a fault, at its simulated time."""

    time: float
    kind: str  # "change" | "input" | "fault"
    text: str
    revision: int = 0


class Film:
    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.changes = sorted(trace.changes, key=lambda c: c["revision"])
        self.times = [float(c["time"]) for c in self.changes]
        self.start_time = float(trace.header["from"]["time"])
        self.end_time = max([float(trace.header["to"]["time"]), *self.times[-1:]])
        start: dict[Key, Obj] = {}
        for rec in trace.objects:
            obj = rec["object"]
            meta = obj.get("metadata") or {}
            start[(group_resource(rec["resource"], rec.get("group")), meta.get("namespace") or "",
                   meta.get("name") or "")] = obj
        self._checkpoints: dict[int, dict[Key, Obj]] = {0: start}
        self.state: dict[Key, Obj] = dict(start)
        self.position = 0
        self._at: float | None = None
        self.playing = False
        self.speed_index = SPEEDS.index(10.0)
        self.moments = self._moments()
        self._moment_times = [m.time for m in self.moments]
        #: Bumped whenever the picture changes, so a view redraws only then.
        self.version = 0
        #: ``listener(key, old, new)`` for every object that differs after a move (None: absent).
        self.listeners: list[Callable[[Key, Obj | None, Obj | None], None]] = []

    # ------------------------------------------------------------------ where we are

    @property
    def length(self) -> int:
        return len(self.changes)

    @property
    def speed(self) -> float:
        return SPEEDS[self.speed_index]

    @property
    def revision(self) -> int:
        if self.position == 0:
            return int(self.trace.header["from"]["revision"])
        return int(self.changes[self.position - 1]["revision"])

    @property
    def now(self) -> float:
        """Simulated time at the position: the last change's, or a later time it was moved to."""
        at = self.times[self.position - 1] if self.position else self.start_time
        return max(at, self._at) if self._at is not None else at

    # ------------------------------------------------------------------ moving

    def seek(self, position: int) -> None:
        """Show the cluster after ``position`` changes (clamped to the recording)."""
        position = max(0, min(self.length, position))
        if self._at is not None:
            self._at = None
            self.version += 1
        if position == self.position:
            return
        before = self.state
        if position < self.position:
            base = max(p for p in self._checkpoints if p <= position)
            self.state = dict(self._checkpoints[base])
            self.position = base
            touched: set[Key] | None = None  # going back: compare every key
        else:
            self.state = dict(before) if self.listeners else before
            touched = set()
        for i in range(self.position, position):
            key = self._apply(self.changes[i])
            if touched is not None:
                touched.add(key)
            if (i + 1) % CHECKPOINT_EVERY == 0 and (i + 1) not in self._checkpoints:
                self._checkpoints[i + 1] = dict(self.state)
        self.position = position
        self.version += 1
        if self.listeners:
            keys = touched if touched is not None else set(before) | set(self.state)
            for key in sorted(keys):
                old, new = before.get(key), self.state.get(key)
                if old is not new:
                    for listener in self.listeners:
                        listener(key, old, new)

    def step(self, n: int = 1) -> None:
        self.seek(self.position + n)

    def seek_time(self, t: float) -> None:
        """Show the cluster as it was at simulated time ``t`` (every change at or before it)."""
        self.seek(bisect_right(self.times, t))
        self._at = min(max(t, self.start_time), self.end_time)
        self.version += 1

    def seek_revision(self, revision: int) -> None:
        self.seek(bisect_right([int(c["revision"]) for c in self.changes], revision))

    def toggle(self) -> None:
        self.playing = not self.playing
        if self.playing and self.position >= self.length:
            self.seek(0)
        self.version += 1

    def faster(self) -> None:
        self.speed_index = min(len(SPEEDS) - 1, self.speed_index + 1)
        self.version += 1

    def slower(self) -> None:
        self.speed_index = max(0, self.speed_index - 1)
        self.version += 1

    def tick(self, wall_seconds: float) -> None:
        """While playing, move on by ``wall_seconds`` times the speed of simulated time."""
        if not self.playing:
            return
        target = self.now + wall_seconds * self.speed
        self.seek_time(target)
        if target >= self.end_time:
            self.playing = False
            self.version += 1

    def _apply(self, change: Obj) -> Key:
        key = (group_resource(change["resource"], change.get("group")), change.get("namespace") or "",
               change["name"])
        if change["event"] == "DELETED":
            self.state.pop(key, None)
        else:
            self.state[key] = change["object"]
        return key

    # ------------------------------------------------------------------ what is on screen

    def objects(self, resource: str) -> list[Obj]:
        """Every object of ``resource`` (``pods``, ``leases.coordination.k8s.io``) at the position."""
        return [obj for (res, _, _), obj in sorted(self.state.items()) if res == resource]

    def events(self) -> list[Obj]:
        """Events at the position, newest first."""
        from kconsole.tui.model import newest_first

        return sorted(self.objects("events"), key=newest_first)

    def recent(self, n: int = 50) -> list[Moment]:
        """The log's last ``n`` moments at or before the position's time."""
        end = bisect_right(self._moment_times, self.now)
        return self.moments[max(0, end - n):end]

    def _moments(self) -> list[Moment]:
        out = []
        for c in self.changes:
            if group_resource(c["resource"], c.get("group")) in QUIET:
                continue
            where = f"{c['namespace']}/" if c.get("namespace") else ""
            out.append(Moment(float(c["time"]), "change",
                              f"{c['event'].lower():8} {group_resource(c['resource'], c.get('group'))} {where}{c['name']}",
                              int(c["revision"])))
        for i in self.trace.inputs:
            where = f"{i['namespace']}/" if i.get("namespace") else ""
            out.append(Moment(float(i["time"]), "input",
                              f"{i['user']} {i['verb']} {i['resource']} {where}{i.get('name') or ''}".rstrip(),
                              int(i.get("revision") or 0)))
        for f in self.trace.faults:
            out.append(Moment(float(f["time"]), "fault", f"fault {f['action']} {f['fault']} on {f['target']}"))
        order = {"input": 0, "fault": 1, "change": 2}
        out.sort(key=lambda m: (m.time, order[m.kind], m.revision))
        return out
