"""The console's model fed by a recording instead of informers, so the console's own panels show a film.

:class:`FilmModel` is a :class:`~kconsole.tui.model.ClusterModel` whose informers are
:class:`RecordedInformer` s over a :class:`~kconsole.trace.film.Film`: when the film moves, each
object that differs between the two positions reaches the informers' handlers as an add, update or
delete, exactly as a watch event would, so the panels' marks, counts and incremental updates work
unchanged. Its clock reads the film's simulated time; its client answers discovery from the built-in
resource table and refuses every request (nothing in a recording can be changed).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from types import SimpleNamespace
from typing import Any

from kconsole.api.types import StatusError, status_body
from kconsole.client import Client, object_key
from kconsole.clock import Clock, TimerHandle
from kconsole.trace.film import Film, Key
from kconsole.tui.model import BASE_RESOURCES, ClusterModel
from kconsole.tui.rewind import SnapshotInformer

Obj = dict[str, Any]


class FilmClock(Clock):
    """Simulated time is where the film is."""

    def __init__(self, film: Film) -> None:
        self.film = film

    def now(self) -> float:
        return self.film.now

    def call_later(self, delay: float, callback: Callable[[], Any]) -> TimerHandle:
        raise RuntimeError("a recording has no timers")


class RecordedEntry:
    """The API as a recording can answer it: discovery only."""

    resources_version = 0

    def __init__(self) -> None:
        from kconsole.api.registry import Registry

        self._resources = Registry().resources()

    async def handle(self, request: Any) -> Any:
        raise StatusError(status_body(405, "MethodNotAllowed", "a recording is read-only: nothing can be changed"))

    def resources(self) -> list[Any]:
        return list(self._resources)

    def audit_recent(self, n: int = 500) -> list[Any]:
        return []

    async def _nothing(self) -> AsyncIterator[Any]:
        return
        yield

    def audit_follow(self) -> AsyncIterator[Any]:
        return self._nothing()


class RecordedInformer(SnapshotInformer):
    """What panels and :class:`~kconsole.tui.model.Watched` read of an informer, over the film: the
    console rewind's snapshot cache, moved by the film instead of the history."""

    def __init__(self, resource: str, film: Film) -> None:
        super().__init__(resource, list(film.objects(resource)))
        self.has_synced = False

    def remove_event_handler(self, handle: object) -> None:
        if handle in self._handlers:
            self._handlers.remove(handle)  # type: ignore[arg-type]

    def moved(self, old: Obj | None, new: Obj | None) -> None:
        """One object changed between two positions of the film."""
        if new is not None:
            self.put(object_key(new), new)
        elif old is not None:
            self.put(object_key(old), None)

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None


class _Factory:
    def __init__(self, film: Film) -> None:
        self.film = film
        self.informers: dict[str, RecordedInformer] = {}

    def informer(self, resource: str) -> RecordedInformer:
        found = self.informers.get(resource)
        if found is None:
            found = self.informers[resource] = RecordedInformer(resource, self.film)
        return found

    async def start_all(self) -> None:
        return None

    async def stop_all(self) -> None:
        return None


class FilmModel(ClusterModel):
    """A ClusterModel over a film: no cluster, no etcd figures, informers fed by :meth:`Film.seek`."""

    def __init__(self, film: Film) -> None:
        self.film = film
        super().__init__(SimpleNamespace(clock=FilmClock(film), etcd=None, faults=None, sync=None))
        self.client = Client(RecordedEntry(), "", self.clock)
        self.factory = _Factory(film)  # type: ignore[assignment]
        film.listeners.append(self._moved)
        for resource in BASE_RESOURCES:
            self.watch(resource)

    def watch(self, resource: str) -> Any:
        watched = super().watch(resource)
        watched.informer.has_synced = True
        return watched

    def _moved(self, key: Key, old: Obj | None, new: Obj | None) -> None:
        informer = self.factory.informers.get(key[0])  # type: ignore[attr-defined]
        if informer is not None:
            informer.moved(old, new)
