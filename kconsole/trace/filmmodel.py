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

Obj = dict[str, Any]
Handler = tuple[Callable[[Obj], None] | None, Callable[[Obj, Obj], None] | None, Callable[[Obj], None] | None]


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


class RecordedInformer:
    """What panels and :class:`~kconsole.tui.model.Watched` read of an informer, over the film."""

    def __init__(self, resource: str, film: Film) -> None:
        self.resource = resource
        self._items: dict[str, Obj] = {object_key(o): o for o in film.objects(resource)}
        self._handlers: list[Handler] = []
        self.synced = False

    def add_event_handler(self, on_add: Callable[[Obj], None] | None = None,
                          on_update: Callable[[Obj, Obj], None] | None = None,
                          on_delete: Callable[[Obj], None] | None = None) -> object:
        handler = (on_add, on_update, on_delete)
        self._handlers.append(handler)
        if on_add is not None:
            for obj in list(self._items.values()):
                on_add(obj)
        return handler

    def remove_event_handler(self, handle: object) -> None:
        if handle in self._handlers:
            self._handlers.remove(handle)  # type: ignore[arg-type]

    def moved(self, old: Obj | None, new: Obj | None) -> None:
        """One object changed between two positions of the film."""
        if new is not None:
            key = object_key(new)
            self._items[key] = new
            for on_add, on_update, _ in list(self._handlers):
                if old is None and on_add is not None:
                    on_add(new)
                elif old is not None and on_update is not None:
                    on_update(old, new)
        elif old is not None:
            self._items.pop(object_key(old), None)
            for _, _, on_delete in list(self._handlers):
                if on_delete is not None:
                    on_delete(old)

    def get(self, key: str) -> Obj | None:
        return self._items.get(key)

    def get_by_name(self, namespace: str | None, name: str) -> Obj | None:
        return self._items.get(f"{namespace}/{name}" if namespace else name)

    def list(self) -> list[Obj]:
        return list(self._items.values())

    def keys(self) -> list[str]:
        return list(self._items)

    def __len__(self) -> int:
        return len(self._items)

    @property
    def has_synced(self) -> bool:
        return self.synced

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
        watched.informer.synced = True
        return watched

    def _moved(self, key: Key, old: Obj | None, new: Obj | None) -> None:
        informer = self.factory.informers.get(key[0])  # type: ignore[attr-defined]
        if informer is not None:
            informer.moved(old, new)
