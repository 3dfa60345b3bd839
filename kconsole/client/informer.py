"""Shared informers: client-go's reflector + indexer + processor in one asyncio task.

An informer keeps a local, indexed cache of one resource in sync with the API server (list, then
watch from the list's resourceVersion) and calls event handlers in event order. Controllers read
the cache instead of the server and only enqueue keys from handlers.

The cached objects are the very dicts the server returned and are shared by every reader:
treat them as read-only and copy (``kconsole.objects.meta.deep_copy``) before mutating.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kconsole.api.types import StatusError
from kconsole.clock import Clock

from .client import DEFAULT_PAGE_SIZE, Client

log = logging.getLogger(__name__)

Obj = dict[str, Any]
IndexFunc = Callable[[Obj], list[str]]

#: Reflector back-off after a failed list or watch (client-go: 800 ms doubling to 30 s).
BACKOFF_INITIAL = 0.8
BACKOFF_MAX = 30.0
#: Handlers run synchronously; yield to the loop this often while delivering a big relist or resync.
YIELD_EVERY = 500


def object_key(obj: Obj) -> str:
    """client-go's MetaNamespaceKeyFunc: ``"ns/name"`` or ``"name"`` for cluster-scoped objects."""
    meta = obj["metadata"]
    ns = meta.get("namespace")
    return f"{ns}/{meta['name']}" if ns else meta["name"]


def index_by_namespace(obj: Obj) -> list[str]:
    ns = obj["metadata"].get("namespace")
    return [ns] if ns else []


def index_by_node_name(obj: Obj) -> list[str]:
    """Pods by ``spec.nodeName`` (unscheduled pods are not indexed)."""
    node = (obj.get("spec") or {}).get("nodeName")
    return [node] if node else []


def index_by_owner_uid(obj: Obj) -> list[str]:
    """Objects by the uid of their controlling ownerReference."""
    for ref in obj["metadata"].get("ownerReferences") or ():
        if ref.get("controller"):
            return [ref["uid"]]
    return []


@dataclass(slots=True)
class _Handler:
    on_add: Callable[[Obj], None] | None
    on_update: Callable[[Obj, Obj], None] | None
    on_delete: Callable[[Obj], None] | None


class _Relist(Exception):
    """The watch cannot continue from our resourceVersion (410): list again."""


class SharedInformer:
    """Cache + handlers for one (resource, namespace, selectors), fed by list and watch."""

    def __init__(self, client: Client, resource: str, namespace: str | None = None, *, label_selector: str = "",
                 field_selector: str = "", resync_period: float = 0,
                 indexers: dict[str, IndexFunc] | None = None, clock: Clock | None = None,
                 keep: Callable[[Obj], bool] | None = None) -> None:
        """``keep``: a selector the API cannot express, applied as a field selector is: objects it
        refuses are not cached, and one that stops matching is delivered as deleted."""
        if resync_period < 0:
            raise ValueError(f"informer {resource}: resync_period must be >= 0, got {resync_period}")
        self.client = client
        self.resource = resource
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.resync_period = float(resync_period)
        self.clock = clock or client.clock
        self.keep = keep
        self._items: dict[str, Obj] = {}
        self._indexers: dict[str, IndexFunc] = {"namespace": index_by_namespace}
        #: index name -> value -> keys; and index name -> key -> the values it is filed under.
        self._indices: dict[str, dict[str, set[str]]] = {"namespace": {}}
        self._filed: dict[str, dict[str, list[str]]] = {"namespace": {}}
        for name, fn in (indexers or {}).items():
            self.add_indexer(name, fn)
        self._handlers: list[_Handler] = []
        self._rv = ""
        self._events_since_list = 0
        self._synced = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._resync_task: asyncio.Task[None] | None = None
        self._resync_changed = asyncio.Event()
        #: Counters for the console and tests.
        self.relists = 0
        self.watches = 0

    # ------------------------------------------------------------------ handlers and indexes

    def add_event_handler(self, on_add: Callable[[Obj], None] | None = None,
                          on_update: Callable[[Obj, Obj], None] | None = None,
                          on_delete: Callable[[Obj], None] | None = None) -> object:
        """Register handlers; returns a handle for :meth:`remove_event_handler`.

        Added after the cache holds objects, ``on_add`` is called at once for each of them (as
        upstream). Handlers must not block: they usually just enqueue a key.
        """
        handler = _Handler(on_add, on_update, on_delete)
        self._handlers.append(handler)
        if on_add is not None:
            for obj in list(self._items.values()):
                self._call(on_add, obj)
        return handler

    def remove_event_handler(self, handle: object) -> None:
        if handle in self._handlers:
            self._handlers.remove(handle)  # type: ignore[arg-type]

    def add_indexer(self, name: str, fn: IndexFunc) -> None:
        if name in self._indexers:
            if self._indexers[name] is fn:
                return
            raise ValueError(f"informer {self.resource}: indexer {name!r} already exists")
        self._indexers[name] = fn
        self._indices[name] = {}
        self._filed[name] = {}
        for key, obj in self._items.items():
            self._file(name, fn, key, obj)

    def set_resync_period(self, period: float) -> None:
        """Resync at least this often (0 keeps the current period); the shortest request wins."""
        if period > 0 and (self.resync_period == 0 or period < self.resync_period):
            self.resync_period = float(period)
            self._resync_changed.set()

    # ------------------------------------------------------------------ cache reads

    def get(self, key: str) -> Obj | None:
        return self._items.get(key)

    def get_by_name(self, namespace: str | None, name: str) -> Obj | None:
        return self._items.get(f"{namespace}/{name}" if namespace else name)

    def list(self) -> list[Obj]:
        return list(self._items.values())

    def keys(self) -> list[str]:
        return list(self._items)

    def list_by_index(self, index_name: str, value: str) -> list[Obj]:
        try:
            keys = self._indices[index_name].get(value)
        except KeyError:
            raise KeyError(f"informer {self.resource}: no index named {index_name!r}") from None
        if not keys:
            return []
        items = self._items
        return [items[k] for k in keys]

    def index_keys(self, index_name: str, value: str) -> list[str]:
        return list(self._indices[index_name].get(value, ()))

    def __len__(self) -> int:
        return len(self._items)

    @property
    def resource_version(self) -> str:
        """The last resourceVersion seen (list, event or bookmark)."""
        return self._rv

    @property
    def has_synced(self) -> bool:
        return self._synced.is_set()

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        if self._task is not None:
            return
        self._task = asyncio.create_task(self._run(), name=f"informer:{self.resource}")
        self._resync_task = asyncio.create_task(self._resync_loop(), name=f"informer-resync:{self.resource}")

    async def stop(self) -> None:
        tasks = [t for t in (self._task, self._resync_task) if t is not None]
        self._task = self._resync_task = None
        for task in tasks:
            task.cancel()
        for task in tasks:
            try:
                await task
            except asyncio.CancelledError:
                pass

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def wait_synced(self, timeout: float | None = None) -> None:
        """Wait (``timeout`` in simulated seconds) until the first list reached the handlers."""
        if self._synced.is_set():
            return
        try:
            await self.clock.wait_for(self._synced.wait(), timeout)
        except TimeoutError:
            raise TimeoutError(f"informer {self.resource}: cache not synced within {timeout} s") from None

    # ------------------------------------------------------------------ reflector

    async def _run(self) -> None:
        backoff = BACKOFF_INITIAL
        need_list = True
        while True:
            try:
                if need_list:
                    await self._list_and_replace()
                    need_list = False
                started = self.clock.monotonic()
                if await self._watch() or self.clock.monotonic() - started >= 1.0:
                    backoff = BACKOFF_INITIAL
                    continue  # the server closed the watch (timeout, restart): re-watch from our RV
                # A watch that ended at once with nothing in it: back off rather than spin (as upstream).
                log.info("informer %s: watch closed immediately; retrying in %.1f s", self.resource, backoff)
            except _Relist:
                log.info("informer %s: resourceVersion %s is too old; relisting", self.resource, self._rv)
                need_list = True
                if self._events_since_list:
                    backoff = BACKOFF_INITIAL
                    continue
                # Expired again straight after a relist: back off instead of relisting in a loop.
            except asyncio.CancelledError:
                raise
            except StatusError as err:
                if err.code == 410:
                    need_list = True
                    continue
                log.warning("informer %s: %s (retrying in %.1f s)", self.resource, err, backoff)
            except Exception:  # noqa: BLE001 - the reflector must survive anything and retry
                log.exception("informer %s: failed (retrying in %.1f s)", self.resource, backoff)
            await self.clock.sleep(backoff)
            backoff = min(backoff * 2, BACKOFF_MAX)

    async def _list_and_replace(self) -> None:
        items, rv = await self.client.list_pages(
            self.resource, self.namespace, label_selector=self.label_selector,
            field_selector=self.field_selector, limit=DEFAULT_PAGE_SIZE)
        self.relists += 1
        await self._replace(items, rv)

    async def _replace(self, items: list[Obj], rv: str) -> None:
        """Make the cache equal ``items``, delivering adds, updates (changed RV) and deletes."""
        fresh: dict[str, Obj] = {}
        keep = self.keep
        for obj in items:
            if keep is None or keep(obj):
                fresh[object_key(obj)] = obj
        n = 0
        for key, obj in fresh.items():
            old = self._items.get(key)
            if old is None:
                self._store(key, obj)
                self._deliver_add(obj)
            elif _rv_of(old) != _rv_of(obj):
                self._store(key, obj)
                self._deliver_update(old, obj)
            n += 1
            if n % YIELD_EVERY == 0:
                await asyncio.sleep(0)
        for key in [k for k in self._items if k not in fresh]:
            old = self._items[key]
            self._remove(key, old)
            self._deliver_delete(old)
        self._rv = rv
        self._events_since_list = 0
        self._synced.set()

    async def _watch(self) -> int:
        """Follow one watch stream until it ends; returns how many events it carried."""
        self.watches += 1
        n = 0
        async with self.client.watch(self.resource, self.namespace, resource_version=self._rv or None,
                                     label_selector=self.label_selector, field_selector=self.field_selector,
                                     allow_watch_bookmarks=True) as events:
            async for event in events:
                if event.get("type") != "BOOKMARK":
                    n += 1
                self._apply_event(event)
        return n

    def _apply_event(self, event: dict[str, Any]) -> None:
        etype = event.get("type")
        obj = event.get("object") or {}
        if etype == "BOOKMARK":
            rv = (obj.get("metadata") or {}).get("resourceVersion")
            if rv:
                self._rv = str(rv)
            return
        if etype == "ERROR":
            err = StatusError(obj) if obj.get("kind") == "Status" else StatusError.internal(str(obj))
            if err.code == 410:
                raise _Relist()
            raise err
        key = object_key(obj)
        old = self._items.get(key)
        self._events_since_list += 1
        kept = self.keep is None or self.keep(obj)
        if etype == "ADDED" or etype == "MODIFIED":
            if kept:
                self._store(key, obj)
                if old is None:
                    self._deliver_add(obj)
                else:
                    self._deliver_update(old, obj)
            elif old is not None:  # stopped matching: gone from this cache, as a field selector's watch says
                self._remove(key, old)
                self._deliver_delete(old)
        elif etype == "DELETED":
            if old is not None:
                self._remove(key, old)
            if old is not None or kept:
                self._deliver_delete(obj)
        else:
            log.warning("informer %s: ignoring watch event of type %r", self.resource, etype)
            return
        rv = obj["metadata"].get("resourceVersion")
        if rv:
            self._rv = str(rv)

    # ------------------------------------------------------------------ resync

    async def _resync_loop(self) -> None:
        await self._synced.wait()
        while True:
            period = self.resync_period
            if period <= 0:
                await self._resync_changed.wait()
                self._resync_changed.clear()
                continue
            self._resync_changed.clear()
            await self.clock.sleep(period)
            await self.resync()

    async def resync(self) -> None:
        """Re-deliver ``on_update(obj, obj)`` for every cached object (level-triggered nudge)."""
        n = 0
        for obj in list(self._items.values()):
            self._deliver_update(obj, obj)
            n += 1
            if n % YIELD_EVERY == 0:
                await asyncio.sleep(0)

    # ------------------------------------------------------------------ cache writes

    def _store(self, key: str, obj: Obj) -> None:
        self._items[key] = obj
        for name, fn in self._indexers.items():
            self._file(name, fn, key, obj)

    def _file(self, name: str, fn: IndexFunc, key: str, obj: Obj) -> None:
        try:
            values = fn(obj)
        except Exception:  # noqa: BLE001 - a broken index function must not stop the informer
            log.exception("informer %s: index %r failed on %s", self.resource, name, key)
            values = []
        filed = self._filed[name]
        before = filed.get(key)
        if before == values:
            return
        if before:
            self._unfile(name, key, before)
        if values:
            index = self._indices[name]
            for value in values:
                index.setdefault(value, set()).add(key)
            filed[key] = list(values)
        else:
            filed.pop(key, None)

    def _remove(self, key: str, old: Obj) -> None:
        del self._items[key]
        for name, filed in self._filed.items():
            before = filed.pop(key, None)
            if before:
                self._unfile(name, key, before)

    def _unfile(self, name: str, key: str, values: list[str]) -> None:
        """Take ``key`` out of index ``name`` under ``values``; emptied buckets go, so lookups stay cheap."""
        index = self._indices[name]
        for value in values:
            keys = index.get(value)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del index[value]

    # ------------------------------------------------------------------ delivery

    def _deliver_add(self, obj: Obj) -> None:
        for h in self._handlers:
            if h.on_add is not None:
                self._call(h.on_add, obj)

    def _deliver_update(self, old: Obj, new: Obj) -> None:
        for h in self._handlers:
            if h.on_update is not None:
                self._call(h.on_update, old, new)

    def _deliver_delete(self, obj: Obj) -> None:
        for h in self._handlers:
            if h.on_delete is not None:
                self._call(h.on_delete, obj)

    def _call(self, fn: Callable[..., None], *args: Obj) -> None:
        try:
            fn(*args)
        except Exception:  # noqa: BLE001 - one bad handler must not starve the others
            log.exception("informer %s: event handler %r failed", self.resource, fn)


def _rv_of(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


class InformerFactory:
    """One shared informer per (resource, namespace, selectors), as client-go's SharedInformerFactory."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self._informers: dict[tuple[str, str | None, str, str], SharedInformer] = {}
        self._started = False

    def _canonical(self, resource: str) -> str:
        try:
            return self.client.resource_info(resource).group_resource
        except StatusError:
            return resource

    def informer(self, resource: str, namespace: str | None = None, *, label_selector: str = "",
                 field_selector: str = "", resync_period: float = 0,
                 indexers: dict[str, IndexFunc] | None = None) -> SharedInformer:
        key = (self._canonical(resource), namespace or None, label_selector, field_selector)
        inf = self._informers.get(key)
        if inf is None:
            inf = SharedInformer(self.client, resource, namespace, label_selector=label_selector,
                                 field_selector=field_selector, resync_period=resync_period, indexers=indexers)
            self._informers[key] = inf
            return inf
        inf.set_resync_period(resync_period)
        for name, fn in (indexers or {}).items():
            inf.add_indexer(name, fn)
        return inf

    @property
    def informers(self) -> Iterable[SharedInformer]:
        return list(self._informers.values())

    async def start_all(self) -> None:
        """Start every informer not yet running (call again after creating more)."""
        self._started = True
        for inf in list(self._informers.values()):
            await inf.start()

    async def wait_for_cache_sync(self, timeout: float | None = None) -> None:
        for inf in list(self._informers.values()):
            await inf.wait_synced(timeout)

    async def stop_all(self) -> None:
        for inf in list(self._informers.values()):
            await inf.stop()
        self._started = False
