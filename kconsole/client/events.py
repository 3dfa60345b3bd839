"""The event recorder: client-go's ``record`` package (broadcaster + EventCorrelator + sink).

Components call :meth:`EventRecorder.event` from hot paths; it never blocks and never raises for
server trouble. A few background writers correlate and write ``core/v1`` Events concurrently; the
events of one involved object always go to the same writer, so they are written (and aggregated) in
the order they were recorded:

* repeats of the same (source, involvedObject, type, reason, message) PATCH the existing Event's
  ``count``, ``lastTimestamp`` and ``message`` instead of creating a new one (EventLogger);
* more than 10 distinct messages for the same (source, object, type, reason) within 10 minutes
  collapse into one "(combined from similar events): ..." Event (EventAggregator);
* each (source, object, type) gets a token bucket of 25 events refilled one per 5 minutes; past
  it, events are dropped (EventSourceObjectSpamFilter).

Events are named ``<object name>.<hex of the nanosecond timestamp>`` as upstream; names are kept
unique within the process even when simulated time stands still.
"""

from __future__ import annotations

import asyncio
import logging
import zlib
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from kconsole.api.types import StatusError
from kconsole.clock import Clock

from .client import Client
from .errors import is_already_exists, is_not_found

log = logging.getLogger(__name__)

EVENT_TYPES = ("Normal", "Warning")
#: Events waiting to be written, across all writers: a 10,000-pod burst (one Scheduled event each,
#: plus retries) must fit. client-go's 1000 assumes a far faster sink than one write at a time.
MAX_QUEUED_EVENTS = 25_000
#: Concurrent writers; each owns the events of the objects that hash to it.
EVENT_WRITERS = 8
#: client-go's limits.
LRU_CACHE_SIZE = 4096
AGGREGATE_MAX_EVENTS = 10
AGGREGATE_INTERVAL = 600.0
SPAM_BURST = 25
SPAM_QPS = 1.0 / 300.0
#: Write retries on transport failures (not on a Status answer), 10 s apart.
MAX_TRIES = 12
RETRY_SLEEP = 10.0
COMBINED_PREFIX = "(combined from similar events): "

_last_nanos = 0


def _unique_nanos(now: float) -> int:
    """Nanosecond timestamp for an event name, strictly increasing within the process."""
    global _last_nanos
    nanos = max(int(now * 1e9), _last_nanos + 1)
    _last_nanos = nanos
    return nanos


def event_name(object_name: str, now: float) -> str:
    """Upstream's ``<object>.<hex nanoseconds>``, unique across every writer of Events in the process."""
    return f"{object_name}.{_unique_nanos(now):x}"


def object_reference(obj: dict[str, Any]) -> dict[str, Any]:
    """An ObjectReference to ``obj`` (or ``obj`` itself when it already is one)."""
    meta = obj.get("metadata")
    if meta is None:
        if not obj.get("name"):
            raise ValueError("event: the involved object has neither metadata nor a name")
        return {k: v for k, v in obj.items() if v not in (None, "")}
    ref: dict[str, Any] = {}
    for field, value in (("kind", obj.get("kind")), ("namespace", meta.get("namespace")),
                         ("name", meta.get("name")), ("uid", meta.get("uid")),
                         ("apiVersion", obj.get("apiVersion")),
                         ("resourceVersion", meta.get("resourceVersion"))):
        if value:
            ref[field] = value
    if "name" not in ref:
        raise ValueError("event: the involved object has no metadata.name")
    return ref


class _LRU(OrderedDict[str, Any]):
    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def put(self, key: str, value: Any) -> None:
        self[key] = value
        self.move_to_end(key)
        if len(self) > self.size:
            self.popitem(last=False)

    def fetch(self, key: str) -> Any:
        value = self.get(key)
        if value is not None:
            self.move_to_end(key)
        return value


@dataclass(slots=True)
class _Observation:
    count: int
    first_timestamp: str
    name: str
    resource_version: str


@dataclass(slots=True)
class _Bucket:
    tokens: float
    last: float


class EventCorrelator:
    """Decides, per new event, whether to create it, patch an earlier one, or drop it."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._aggregate: _LRU = _LRU(LRU_CACHE_SIZE)  # aggregate key -> (messages, last time)
        self._observed: _LRU = _LRU(LRU_CACHE_SIZE)  # event key -> _Observation
        self._spam: _LRU = _LRU(LRU_CACHE_SIZE)  # spam key -> _Bucket

    @staticmethod
    def _object_part(event: dict[str, Any]) -> tuple[str, ...]:
        src, ref = event["source"], event["involvedObject"]
        return (src.get("component", ""), src.get("host", ""), ref.get("kind", ""), ref.get("namespace", ""),
                ref.get("name", ""), ref.get("uid", ""), ref.get("apiVersion", ""), event["type"])

    def correlate(self, event: dict[str, Any],
                  now: float) -> tuple[dict[str, Any], dict[str, Any] | None, str] | None:
        """``(event, None, key)`` to create, ``(event, merge patch for the existing one, key)``, or
        ``None`` to drop; ``key`` goes back to :meth:`update_state` once written."""
        obj_part = self._object_part(event)
        event, key = self._aggregate_event(event, obj_part, now)
        event, patch = self._observe(event, key)
        if self._spam_filtered(obj_part, now):
            return None
        return event, patch, key

    def _aggregate_event(self, event: dict[str, Any], obj_part: tuple[str, ...],
                         now: float) -> tuple[dict[str, Any], str]:
        event_key = "\x00".join((*obj_part, event["reason"], event["message"]))
        aggregate_key = "\x00".join((*obj_part, event["reason"]))
        record = self._aggregate.fetch(aggregate_key)
        if record is None or now - record[1] > AGGREGATE_INTERVAL:
            record = (OrderedDict(), now)
        messages: OrderedDict[str, None] = record[0]
        messages[event["message"]] = None
        self._aggregate.put(aggregate_key, (messages, now))
        if len(messages) < AGGREGATE_MAX_EVENTS:
            return event, event_key
        messages.popitem(last=False)  # keep the set bounded, dropping the oldest message
        combined = {**event, "message": COMBINED_PREFIX + event["message"]}
        return combined, aggregate_key

    def _observe(self, event: dict[str, Any], key: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
        last: _Observation | None = self._observed.fetch(key)
        patch = None
        if last is not None and last.count > 0:
            event = {**event, "metadata": {**event["metadata"], "name": last.name},
                     "firstTimestamp": last.first_timestamp, "count": last.count + 1}
            patch = {"count": event["count"], "lastTimestamp": event["lastTimestamp"], "message": event["message"]}
        self._observed.put(key, _Observation(event["count"], event["firstTimestamp"], event["metadata"]["name"],
                                             last.resource_version if last else ""))
        return event, patch

    def _spam_filtered(self, obj_part: tuple[str, ...], now: float) -> bool:
        """The (source, object, type) bucket; the aggregated event keeps the original's object part."""
        key = "\x00".join(obj_part)
        bucket: _Bucket | None = self._spam.fetch(key)
        if bucket is None:
            bucket = _Bucket(float(SPAM_BURST), now)
        bucket.tokens = min(float(SPAM_BURST), bucket.tokens + (now - bucket.last) * SPAM_QPS)
        bucket.last = now
        self._spam.put(key, bucket)
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return False
        return True

    def update_state(self, key: str, written: dict[str, Any]) -> None:
        """Remember what the server stored (name, count, first timestamp, resourceVersion)."""
        meta = written.get("metadata") or {}
        self._observed.put(key, _Observation(int(written.get("count") or 1), str(written.get("firstTimestamp") or ""),
                                             str(meta.get("name") or ""), str(meta.get("resourceVersion") or "")))


class EventRecorder:
    """Records Events for one component (``source.component``) on one host.

    ``instance`` is events/v1's reportingInstance, for components that record through the new
    events API (upstream's scheduler: ``NewRecorder`` with ``default-scheduler-<host>``): their
    Events carry no ``source.host``. Without it the instance is the host, as client-go's legacy
    recorder fills reportingInstance from the source.
    """

    def __init__(self, client: Client, clock: Clock, *, component: str, host: str = "",
                 instance: str | None = None, queue_size: int = MAX_QUEUED_EVENTS, writers: int = EVENT_WRITERS) -> None:
        if not component:
            raise ValueError("event recorder: component must not be empty")
        if writers < 1:
            raise ValueError(f"event recorder: writers must be at least 1, got {writers}")
        if queue_size < 1:
            raise ValueError(f"event recorder: queue_size must be at least 1, got {queue_size}")
        self.client = client
        self.clock = clock
        self.component = component
        self.host = host
        self.instance = host if instance is None else instance
        self._source = {"component": component, "host": host} if host else {"component": component}
        self.queue_size = queue_size
        self._queues: list[asyncio.Queue[dict[str, Any]]] = [asyncio.Queue() for _ in range(writers)]
        self._writers: list[asyncio.Task[None] | None] = [None] * writers
        self._queued = 0
        self._closed = False
        self.correlator = EventCorrelator(clock)
        self._stamp_second: int | None = None
        self._stamp = ""
        #: Counters for the console and tests.
        self.written = 0
        self.patched = 0
        self.dropped = 0
        self.filtered = 0

    def event(self, obj: dict[str, Any], type: str, reason: str, message: str, *,
              related: dict[str, Any] | None = None) -> None:
        """Queue an Event about ``obj``; returns at once. Must be called from the event loop."""
        if type not in EVENT_TYPES:
            raise ValueError(f'event: type must be "Normal" or "Warning", got {type!r}')
        if self._closed:
            log.warning("%s: event recorder closed; dropping %s %s", self.component, reason, message)
            self.dropped += 1
            return
        now = self.clock.now()
        ref = object_reference(obj)
        second = int(now)
        if second != self._stamp_second:  # one strftime per second, not per event
            self._stamp_second, self._stamp = second, self.clock.rfc3339(now)
        stamp = self._stamp
        event: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": event_name(ref["name"], now), "namespace": ref.get("namespace") or "default"},
            "involvedObject": ref,
            "reason": reason,
            "message": message,
            "type": type,
            "source": dict(self._source),
            "count": 1,
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "eventTime": None,
            "reportingComponent": self.component,
            "reportingInstance": self.instance,
        }
        if related is not None:
            event["related"] = object_reference(related)
        if self._queued >= self.queue_size:
            self.dropped += 1
            log.warning("%s: event queue full (%d); dropping %s event %s on %s", self.component,
                        self.queue_size, type, reason, ref.get("name"))
            return
        shard = zlib.crc32(f"{ref.get('namespace', '')}/{ref['name']}".encode()) % len(self._queues)
        self._queued += 1
        self._queues[shard].put_nowait(event)
        writer = self._writers[shard]
        if writer is None or writer.done():
            self._writers[shard] = asyncio.get_running_loop().create_task(
                self._write_loop(self._queues[shard]), name=f"events:{self.component}:{shard}")

    @property
    def queued(self) -> int:
        """Events recorded but not yet written (or given up on)."""
        return self._queued

    async def flush(self) -> None:
        """Wait until every queued event has been written (or given up on)."""
        for queue in self._queues:
            await queue.join()

    async def close(self) -> None:
        """Write what is queued, then stop; later events are dropped."""
        self._closed = True
        await self.flush()
        writers, self._writers = self._writers, [None] * len(self._writers)
        for writer in writers:
            if writer is None:
                continue
            writer.cancel()
            try:
                await writer
            except asyncio.CancelledError:
                pass

    def abort(self) -> None:
        """Stop at once, as a crashed process: queued events are dropped, writes in flight cancelled.

        For owners that must not wait on API writes that may never complete (a kubelet's stop)."""
        self._closed = True
        writers, self._writers = self._writers, [None] * len(self._writers)
        for writer in writers:
            if writer is not None:
                writer.cancel()
        for queue in self._queues:
            while not queue.empty():
                queue.get_nowait()
                queue.task_done()
                self._queued -= 1
                self.dropped += 1

    async def _write_loop(self, queue: asyncio.Queue[dict[str, Any]]) -> None:
        while True:
            event = await queue.get()
            try:
                await self._record(event)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - the recorder must outlive any one event
                log.exception("%s: writing event %s failed", self.component, event.get("reason"))
            finally:
                self._queued -= 1
                queue.task_done()

    async def _record(self, event: dict[str, Any]) -> None:
        result = self.correlator.correlate(event, self.clock.now())
        if result is None:
            self.filtered += 1
            return
        event, patch, key = result
        for attempt in range(1, MAX_TRIES + 1):
            try:
                written = await self._write(event, patch)
            except StatusError as err:
                if not is_already_exists(err):
                    log.warning("%s: server rejected event %s on %s: %s (will not retry)", self.component,
                                event["reason"], event["involvedObject"].get("name"), err)
                return
            except asyncio.CancelledError:
                raise
            except Exception as err:  # noqa: BLE001 - transport trouble: retry like client-go
                if attempt == MAX_TRIES:
                    log.error("%s: giving up on event %s after %d tries: %s", self.component, event["reason"],
                              attempt, err)
                    return
                log.warning("%s: unable to write event %s: %s (retrying in %.0f s)", self.component,
                            event["reason"], err, RETRY_SLEEP)
                await self.clock.sleep(RETRY_SLEEP)
                continue
            self.correlator.update_state(key, written)
            return

    async def _write(self, event: dict[str, Any], patch: dict[str, Any] | None) -> dict[str, Any]:
        meta = event["metadata"]
        if patch is not None:
            try:
                written = await self.client.patch("events", meta["name"], patch, meta["namespace"])
                self.patched += 1
                return written
            except StatusError as err:
                if not is_not_found(err):
                    raise
                # The earlier Event expired or was deleted: create it afresh, keeping the count.
        try:
            written = await self.client.create(event)
        except StatusError as err:
            if not is_already_exists(err) or patch is not None:
                raise
            # A name collision with another process' event: take a fresh name once.
            renamed = {**event, "metadata": {**meta, "name": event_name(event["involvedObject"]["name"],
                                                                        self.clock.now())}}
            written = await self.client.create(renamed)
        self.written += 1
        return written
