"""What every controller shares: informers from one factory, a workqueue, workers, an event recorder.

Controllers follow controller-runtime's shape: event handlers only enqueue keys; ``sync(key)``
reads the informer caches, compares desired with observed state and writes through the client.
``sync`` must be level-triggered and idempotent: after a restart it re-observes and converges.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, ClassVar

from kconsole.client import Client, EventRecorder, InformerFactory, SharedInformer, StatusError, WorkQueue
from kconsole.client.workqueue import run_workers
from kconsole.clock import Clock
from kconsole.controllers.podcontrol import owner_key_of
from kconsole.objects.meta import deep_copy, object_key

log = logging.getLogger(__name__)


@dataclass
class ControllerContext:
    """Handed to every controller by the manager; one per active controller-manager replica."""

    client: Client
    informers: InformerFactory
    clock: Clock
    rng: random.Random
    #: Upstream source names ("deployment-controller", ...) -> recorder; created on first use.
    recorders: dict[str, EventRecorder] = field(default_factory=dict)
    #: Per-controller settings from the cluster config (e.g. {"node-lifecycle": {"grace": 50}}).
    settings: dict[str, dict[str, Any]] = field(default_factory=dict)

    def recorder(self, component: str) -> EventRecorder:
        if component not in self.recorders:
            self.recorders[component] = EventRecorder(self.client, self.clock, component=component)
        return self.recorders[component]


class Controller:
    """Base class: subclasses set ``name`` and ``component``, wire informers in ``__init__``,
    and implement :meth:`sync`."""

    name: ClassVar[str] = ""
    component: ClassVar[str] = ""  # the Event source ("replicaset-controller")
    workers: ClassVar[int] = 2

    def __init__(self, ctx: ControllerContext) -> None:
        self.ctx = ctx
        self.client = ctx.client
        self.clock = ctx.clock
        self.queue = WorkQueue(ctx.clock, name=self.name)
        self.recorder = ctx.recorder(self.component) if self.component else None
        self._tasks: list[asyncio.Task[None]] = []
        self._background: set[asyncio.Task[Any]] = set()

    def informer(self, resource: str, **kw: Any) -> SharedInformer:
        return self.ctx.informers.informer(resource, **kw)

    def spawn(self, work: Coroutine[Any, Any, Any]) -> None:
        """Run ``work`` beside the workers (an informer started or stopped from an event handler),
        held until done and cancelled when the controller stops."""
        task = asyncio.get_running_loop().create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def settings(self) -> dict[str, Any]:
        return self.ctx.settings.get(self.name, {})

    def enqueue(self, obj: dict[str, Any]) -> None:
        self.queue.add(object_key(obj))

    def enqueue_owner(self, obj: dict[str, Any], owner_kind: str) -> None:
        """Enqueue the controlling owner of ``obj`` if it is of ``owner_kind``."""
        key = owner_key_of(obj, owner_kind)
        if key is not None:
            self.queue.add(key)

    def _event(self, obj: dict[str, Any], etype: str, reason: str, message: str) -> None:
        """An Event on ``obj`` from this controller's component (none without one)."""
        if self.recorder is not None:
            self.recorder.event(obj, etype, reason, message)

    def handlers(self, enqueue: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
        """Event handlers that enqueue the object itself on add, update and delete."""
        fn = enqueue or self.enqueue
        return {
            "on_add": fn,
            "on_update": lambda old, new: fn(new),
            "on_delete": fn,
        }

    async def write_status(self, obj: dict[str, Any], status: dict[str, Any], ignore: tuple[int, ...] = (404,)) -> None:
        """Write ``status`` unless ``obj`` has it already; the codes in ``ignore`` (an object deleted
        meanwhile, by default) are not errors: the next sync sees what happened."""
        if (obj.get("status") or {}) == status:
            return
        new = deep_copy(obj)  # the informer's copy stays as it was
        new["status"] = status
        try:
            await self.client.update_status(new)
        except StatusError as err:
            if err.code not in ignore:
                raise

    async def sync(self, key: str) -> None:
        raise NotImplementedError

    async def start(self) -> None:
        """Start workers; the manager has already started and synced the informers."""
        self._tasks.append(asyncio.create_task(run_workers(self.queue, self.workers, self.sync),
                                               name=f"controller:{self.name}"))

    async def stop(self) -> None:
        self.queue.shutdown()
        self._tasks.extend(self._background)
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            try:
                await task
            except (asyncio.CancelledError, Exception):  # noqa: BLE001 - stopping; errors were logged by workers
                pass
        self._tasks.clear()
