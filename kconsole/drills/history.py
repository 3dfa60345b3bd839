"""The recorded event history of a run: every core/v1 Event occurrence, in the order the API served it.

A watch on ``events`` (all namespaces) from the revision the drill starts at records each new Event
and each count increase of an aggregated one as an occurrence, with the simulated time it arrived.
Event expectations read this record, never a fresh list, so "in this order" means the order the
store committed them; the determinism check compares two runs' records.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import asdict, dataclass
from typing import Any

from kconsole.client import Client, StatusError
from kconsole.clock import Clock

log = logging.getLogger(__name__)

#: Simulated seconds between attempts to watch again after the stream ended or failed.
REWATCH_DELAY = 1.0


@dataclass(frozen=True, slots=True)
class Occurrence:
    time: float  # simulated seconds since the run's boot finished
    type: str
    reason: str
    source: str
    kind: str
    namespace: str
    name: str
    message: str
    count: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def key(self) -> tuple[str, ...]:
        """What two runs with the same seed must agree on (names are seeded, so they are included)."""
        return (self.type, self.reason, self.source, self.kind, self.namespace, self.name, self.message)

    def __str__(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"+{self.time:g}s {self.reason} ({self.source}) {self.kind} {where}{self.name}: {self.message}"


def source_of(event: dict[str, Any]) -> str:
    """The component that reported an Event, from either API's fields."""
    return str((event.get("source") or {}).get("component") or event.get("reportingComponent")
               or event.get("reportingController") or "")


class EventLog:
    """Watches Events through ``client`` and keeps every occurrence, oldest first."""

    def __init__(self, client: Client, clock: Clock, origin: float) -> None:
        self.client = client
        self.clock = clock
        self.origin = origin
        self.occurrences: list[Occurrence] = []
        self._counts: dict[str, int] = {}  # event uid -> count seen
        self._rv = ""
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Record from now on; Events written before are known but not occurrences of the run."""
        items, self._rv = await self.client.list_pages("events")
        for event in items:
            self._counts[event["metadata"].get("uid", "")] = int(event.get("count") or 1)
        self._task = asyncio.get_running_loop().create_task(self._follow(), name="drill-event-log")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            try:
                await task
            except (asyncio.CancelledError, Exception):  # noqa: BLE001 - stopping must not fail
                pass

    async def _follow(self) -> None:
        while True:
            try:
                async with self.client.watch("events", resource_version=self._rv) as stream:
                    async for change in stream:
                        if change.get("type") == "ERROR":
                            break
                        self._observe(change)
            except StatusError as err:
                log.debug("event log watch ended: %s", err)
            await self._catch_up()
            await self.clock.sleep(REWATCH_DELAY)

    async def _catch_up(self) -> None:
        """After a broken watch: list, record what was missed, and watch on from the list."""
        try:
            items, rv = await self.client.list_pages("events")
        except StatusError:
            return
        for event in sorted(items, key=lambda e: int(e["metadata"].get("resourceVersion") or 0)):
            self._observe({"type": "MODIFIED", "object": event})
        self._rv = rv

    def _observe(self, change: dict[str, Any]) -> None:
        event = change.get("object") or {}
        meta = event.get("metadata") or {}
        if change.get("type") == "BOOKMARK":
            self._rv = str(meta.get("resourceVersion") or self._rv)
            return
        if change.get("type") not in ("ADDED", "MODIFIED"):
            return
        self._rv = str(meta.get("resourceVersion") or self._rv)
        uid = str(meta.get("uid", ""))
        count = int(event.get("count") or 1)
        if count <= self._counts.get(uid, 0):
            return
        self._counts[uid] = count
        ref = event.get("involvedObject") or event.get("regarding") or {}
        self.occurrences.append(Occurrence(
            round(self.clock.now() - self.origin, 3), str(event.get("type") or ""), str(event.get("reason") or ""),
            source_of(event), str(ref.get("kind") or ""), str(ref.get("namespace") or ""), str(ref.get("name") or ""),
            str(event.get("message") or event.get("note") or ""), count))
