"""``RealEtcd``: the KV contract (:mod:`kconsole.store.kv`) over a real etcd cluster (3.4, 3.5).

It speaks etcd's v3 JSON gateway (grpc-gateway: ``POST /v3/kv/range``, ``/v3/kv/txn``,
``/v3/kv/compaction``, ``/v3/maintenance/status``, streaming ``/v3/watch``; keys and values in
base64, 64-bit integers as strings) over the aiohttp client the project already has, with
kube-apiserver's TLS client options. Why the gateway and not gRPC: every etcd since 3.3 serves it on
the client port, it needs no generated stubs nor a gRPC runtime, and what the API server asks of etcd
(unary calls and one server-streamed watch per resource) maps onto it one to one.

What the gateway cannot do is send on a watch stream once it is open (HTTP/1.1: etcd's server reads
the whole request body before it answers), so a watch cannot ask for a progress notification. The
watch cache needs to know when its stream holds every event up to the store's revision (see
:meth:`RealWatch.settled`); a stream knows that up to the last revision it delivered (an event
batch's or a progress notification's), and this client knows every revision its own writes made: a
stream is settled when each revision after what it delivered is one of this client's writes to
keys outside the stream's range. A revision written by anyone else is waited for on the stream
(etcd's periodic progress notifications; ``kconsole etcd up`` sets them to every second).

Errors are etcd's own texts, as the in-process members raise them: ``etcdserver: no leader``,
``etcdserver: request timed out``, ``etcdserver: too many requests`` (UnavailableError, 503/504),
``etcdserver: mvcc: database space exceeded`` (NoSpaceError), ``... has been compacted``
(CompactedError). Requests carry gRPC's ``hasleader`` metadata, so a member cut off from the leader
answers ``no leader`` at once instead of timing out, and the client tries the next endpoint, as
etcd's own client does; a watch on such a member is closed by etcd and reopened elsewhere from the
revision after the last one delivered.

Compaction as kube-apiserver schedules it: every ``compaction_interval`` (5 minutes) one API
server wins a compare-and-swap on the key ``compact_rev_key`` and compacts to the revision it saw
one interval earlier, the key's value naming that revision (as upstream writes it).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import ssl
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from kconsole.store.etcdkeys import KeyLayout
from kconsole.store.kv import (
    CompactedError,
    Compare,
    Delete,
    Event,
    FutureRevisionError,
    Get,
    KeyValue,
    NoSpaceError,
    Op,
    Put,
    RangeResult,
    Status,
    StoreError,
    TooLargeError,
    TxnResult,
    UnavailableError,
    WatchResponse,
)
from kconsole.store.revlog import validate_txn

log = logging.getLogger(__name__)

#: Wall seconds one request may take (etcd's own server-side limit for a write is 5 s plus two
#: election timeouts; the client waits a little longer so etcd's answer, not ours, is what is seen).
REQUEST_TIMEOUT = 8.0
#: Wall seconds a member gets to tell its status before it counts as down (etcdctl's default
#: --command-timeout is 5 s; a busy machine may keep a live member from answering within one).
STATUS_TIMEOUT = 3.0
#: kube-apiserver's --etcd-compaction-interval.
COMPACTION_INTERVAL = 300.0
#: The key kube-apiserver's compactor coordinates on.
COMPACT_KEY = "compact_rev_key"
#: How many of this client's own recent write revisions are remembered for :meth:`RealWatch.settled`.
OWN_WINDOW = 200_000
#: A stream further behind than this many revisions is not proven settled revision by revision.
SETTLE_SCAN = 4096

_COMPARE_TARGET = {"mod": ("MOD", "mod_revision"), "create": ("CREATE", "create_revision"),
                   "version": ("VERSION", "version"), "value": ("VALUE", "value")}
_COMPARE_RESULT = {"=": "EQUAL", "!=": "NOT_EQUAL", "<": "LESS", ">": "GREATER"}
#: etcd's texts for the errors the API server tells apart, by the exception they become.
_ERRORS: tuple[tuple[str, type[StoreError] | None], ...] = (
    ("required revision has been compacted", CompactedError),
    ("required revision is a future revision", FutureRevisionError),
    ("database space exceeded", NoSpaceError),
    ("request is too large", TooLargeError),
    ("no leader", UnavailableError),
    ("timed out", UnavailableError),
    ("too many requests", UnavailableError),
    ("leader changed", UnavailableError),
    ("server stopped", UnavailableError),
    ("not capable", UnavailableError),
    ("unhealthy cluster", UnavailableError),
)
#: Errors after which the next endpoint is tried: this member cannot answer, another may.
_TRY_ELSEWHERE = ("no leader", "server stopped", "not capable", "unhealthy cluster")


#: Asks a member to answer even without a leader (gRPC metadata through the gateway's headers).
_ANY_LEADER = {"Grpc-Metadata-hasleader": "false"}


def _b64(text: str | bytes) -> str:
    return base64.b64encode(text.encode() if isinstance(text, str) else text).decode("ascii")


def _kv(doc: dict[str, Any], back: Callable[[str], str]) -> KeyValue:
    return KeyValue(back(base64.b64decode(doc["key"]).decode()), base64.b64decode(doc.get("value", "")),
                    int(doc.get("create_revision", 0)), int(doc.get("mod_revision", 0)),
                    int(doc.get("version", 0)), int(doc.get("lease", 0)))


def store_error(message: str) -> StoreError:
    """etcd's error text as the store error the API server maps (unknown texts: plain StoreError)."""
    for text, cls in _ERRORS:
        if text in message:
            if cls is CompactedError:
                return CompactedError(0)
            if cls in (FutureRevisionError, NoSpaceError, TooLargeError):
                return cls()  # type: ignore[call-arg,misc]
            return UnavailableError(message)
    return StoreError(message)


@dataclass(frozen=True, slots=True)
class TLSFiles:
    """kube-apiserver's --etcd-cafile/--etcd-certfile/--etcd-keyfile."""

    cafile: Path | None = None
    certfile: Path | None = None
    keyfile: Path | None = None

    def context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=str(self.cafile) if self.cafile else None)
        if self.certfile is not None:
            ctx.load_cert_chain(str(self.certfile), str(self.keyfile) if self.keyfile else None)
        return ctx


def parse_servers(text: str | list[str] | tuple[str, ...]) -> list[str]:
    """``URL[,URL...]`` as kube-apiserver's --etcd-servers, checked: http(s)://host:port each."""
    items = text.split(",") if isinstance(text, str) else list(text)
    urls = [u.strip().rstrip("/") for u in items if u.strip()]
    if not urls:
        raise ValueError("--etcd-servers needs at least one URL (https://127.0.0.1:2379)")
    for url in urls:
        scheme, sep, rest = url.partition("://")
        if scheme not in ("http", "https") or not sep or not rest or "/" in rest:
            raise ValueError(f"--etcd-servers: {url!r} is not an etcd client URL (http[s]://host:port)")
    return urls


class RealEtcd:
    """The KV contract over etcd's JSON gateway, plus etcdctl's view of the members.

    ``local`` is set when kconsole runs the members itself (:mod:`kconsole.store.etcdlocal`): then
    the member handles act on real processes and the fault catalog can break them."""

    def __init__(self, servers: list[str], *, tls: TLSFiles | None = None, clock: Any = None,
                 compaction_interval: float = COMPACTION_INTERVAL, local: Any = None,
                 watch_idle_timeout: float | None = None) -> None:
        self.servers = parse_servers(servers)
        self.tls = tls or TLSFiles()
        self.clock = clock
        self.compaction_interval = compaction_interval
        self.local = local
        #: kube-apiserver's keys in etcd, kconsole's above (see :mod:`kconsole.store.etcdkeys`).
        self.layout = KeyLayout()
        #: Wall seconds a watch may stay silent before it is reopened elsewhere (a frozen member
        #: keeps its connection open). Only with periodic progress notifications shorter than it.
        self.watch_idle_timeout = watch_idle_timeout
        self._current = 0  # index of the endpoint tried first
        self._session: aiohttp.ClientSession | None = None
        self._revision = 0
        self._own: dict[int, tuple[str, ...]] = {}
        self._own_order: deque[int] = deque()
        self._compactor: asyncio.Task[None] | None = None
        self._closed = False
        self.compactions = 0
        #: The revision this client last compacted to (etcd's status does not tell).
        self.compacted = 0

    # ----- connection ---------------------------------------------------------------------------
    async def start(self) -> None:
        """Connect and check that some endpoint answers (a clear error otherwise)."""
        self.open_session()
        await self.status()
        if self.compaction_interval > 0:
            self._compactor = asyncio.get_running_loop().create_task(self._compact_loop(), name="etcd-compactor")

    def open_session(self) -> None:
        """The pooled HTTP client (once)."""
        if self._session is not None:
            return
        ssl_ctx: ssl.SSLContext | bool = False
        if any(u.startswith("https://") for u in self.servers):
            ssl_ctx = self.tls.context()
        connector = aiohttp.TCPConnector(limit=256, ssl=ssl_ctx, enable_cleanup_closed=True)
        self._session = aiohttp.ClientSession(
            connector=connector, timeout=aiohttp.ClientTimeout(total=REQUEST_TIMEOUT),
            headers={"Grpc-Metadata-hasleader": "true"}, json_serialize=json.dumps)

    def _seen(self, header: dict[str, Any] | None) -> None:
        if header:
            rev = int(header.get("revision", 0))
            if rev > self._revision:
                self._revision = rev

    async def _call(self, path: str, body: dict[str, Any], *, endpoint: str | None = None,
                    retry_elsewhere: bool = True, headers: dict[str, str] | None = None,
                    idempotent: bool = True) -> dict[str, Any]:
        """POST ``body`` to ``path``; on a member that cannot answer, the next endpoint (each once).
        A write whose connection broke after it was sent is not sent again (etcd's client does not
        repeat a transaction either): its outcome is unknown, and the error says so."""
        if self._session is None or self._closed:
            raise UnavailableError("etcdserver: server stopped")
        order = [endpoint] if endpoint else self.servers[self._current:] + self.servers[:self._current]
        last: StoreError | None = None
        answered: StoreError | None = None  # a member's own refusal beats a member that is not there
        for i, url in enumerate(order):
            try:
                with self._io():
                    async with self._session.post(url + path, json=body, headers=headers) as resp:
                        doc = await resp.json(content_type=None)
            except asyncio.TimeoutError:
                raise UnavailableError("etcdserver: request timed out") from None
            except aiohttp.ClientConnectorError as err:  # never connected: nothing was sent
                last = UnavailableError(f"etcd {url}: {err.__class__.__name__}: connection refused")
                if not retry_elsewhere:
                    raise last from None
                continue
            except (aiohttp.ClientConnectionError, OSError) as err:
                if not idempotent:
                    raise UnavailableError(f"etcd {url}: the connection closed before etcd answered "
                                           f"({err.__class__.__name__}): the write may have been applied") from None
                last = UnavailableError(f"etcd {url}: {err.__class__.__name__}: connection reset")
                if not retry_elsewhere:
                    raise last from None
                continue
            except (ValueError, aiohttp.ContentTypeError):
                raise StoreError(f"etcd {url}{path} answered something that is not JSON") from None
            if resp.status == 200 and isinstance(doc, dict) and "error" not in doc:
                if endpoint is None and i:
                    self._current = self.servers.index(url)
                self._seen(doc.get("header"))
                return doc
            message = str(doc.get("message") or doc.get("error") or f"HTTP {resp.status}") \
                if isinstance(doc, dict) else f"HTTP {resp.status}"
            err = store_error(message)
            if retry_elsewhere and any(t in message for t in _TRY_ELSEWHERE):
                answered = err
                continue
            raise err
        failed = answered or last
        assert failed is not None
        raise failed

    def _io(self) -> Any:
        """Marks the request as real I/O in flight, so a virtual clock waits for etcd's answer."""
        from kconsole.clock import io_tracker

        return io_tracker(self.clock) if self.clock is not None else contextlib.nullcontext()

    # ----- KV contract --------------------------------------------------------------------------
    @property
    def revision(self) -> int:
        """The highest store revision any answer carried."""
        return self._revision

    async def range(self, key: str, end: str | None = None, *, revision: int = 0, limit: int = 0,
                    count_only: bool = False, keys_only: bool = False, serializable: bool = False) -> RangeResult:
        layout = self.layout
        body: dict[str, Any] = {"key": _b64(layout.to_etcd(key))}
        if end is not None:
            body["range_end"] = _b64(layout.end_to_etcd(end))  # type: ignore[arg-type]
        if revision:
            body["revision"] = revision
        if limit:
            body["limit"] = limit
        if count_only:
            body["count_only"] = True
        if keys_only:
            body["keys_only"] = True
        if serializable:
            body["serializable"] = True
        return self._range_result(await self._call("/v3/kv/range", body))

    def _range_result(self, doc: dict[str, Any]) -> RangeResult:
        back = self.layout.from_etcd
        kvs = [_kv(k, back) for k in doc.get("kvs", ())]
        return RangeResult(kvs, int(doc.get("count", 0)), bool(doc.get("more", False)),
                           int(doc.get("header", {}).get("revision", 0)))

    async def txn(self, compares: list[Compare], success: list[Op], failure: list[Op] | None = None) -> TxnResult:
        failure = failure or []
        validate_txn(compares, success, failure)
        layout = self.layout
        body = {"compare": [_compare(c, layout) for c in compares], "success": [_op(o, layout) for o in success],
                "failure": [_op(o, layout) for o in failure]}
        doc = await self._call("/v3/kv/txn", body, idempotent=False)
        succeeded = bool(doc.get("succeeded", False))
        ops = success if succeeded else failure
        responses = [self._response(op, r) for op, r in zip(ops, doc.get("responses", ()))]
        rev = int(doc["header"]["revision"])
        # This client's write made revision ``rev`` only if it changed something (a delete of nothing
        # leaves the revision someone else made); a ranged delete's keys are not listed, so its
        # revision is left unproven (see RealWatch.settled).
        changed = any(isinstance(o, Put) or (isinstance(o, Delete) and r) for o, r in zip(ops, responses))
        ranged = any(isinstance(o, Delete) and o.end is not None for o in ops)
        written = tuple(o.key for o in ops if not isinstance(o, Get))
        if changed and not ranged and rev not in self._own:
            self._own[rev] = written
            self._own_order.append(rev)
            while len(self._own_order) > OWN_WINDOW:
                self._own.pop(self._own_order.popleft(), None)
        return TxnResult(succeeded, rev, responses)

    def create(self, key: str, value: bytes, lease: int = 0) -> Any:
        return self.txn([Compare(key, "mod", "=", 0)], [Put(key, value, lease)], [Get(key)])

    def update(self, key: str, value: bytes, mod_revision: int, lease: int = 0) -> Any:
        return self.txn([Compare(key, "mod", "=", mod_revision)], [Put(key, value, lease)], [Get(key)])

    def _response(self, op: Op, doc: dict[str, Any]) -> object:
        """One op's answer as the revision log gives it (a Put's prior value is not asked for: the API
        server never reads it, and it would double what every update carries back)."""
        if isinstance(op, Get):
            return self._range_result(doc.get("response_range", {}))
        if isinstance(op, Put):
            return None
        prev = [_kv(k, self.layout.from_etcd) for k in doc.get("response_delete_range", {}).get("prev_kvs", ())]
        if op.end is not None:
            return prev
        return prev[0] if prev else None

    async def compact(self, revision: int) -> None:
        await self._call("/v3/kv/compaction", {"revision": revision})
        self.compacted = max(self.compacted, revision)

    async def status(self) -> Status:
        doc, alarms, keys = await asyncio.gather(  # at once: the console gives the three half a second
            self._call("/v3/maintenance/status", {}), self.alarms(),
            self.range("\0", "\0", count_only=True, serializable=True))
        return Status(int(doc["header"]["revision"]), self.compacted, int(doc.get("dbSize", 0)),
                      int(doc.get("dbSizeInUse", doc.get("dbSize", 0))), keys.count, alarms)

    async def alarms(self) -> list[str]:
        doc = await self._call("/v3/maintenance/alarm", {"action": "GET"})
        return sorted({a.get("alarm", "NONE") for a in doc.get("alarms", ())} - {"NONE"})

    async def disarm(self) -> None:
        """``etcdctl alarm disarm``: every alarm of every member deactivated."""
        doc = await self._call("/v3/maintenance/alarm", {"action": "GET"})
        for alarm in doc.get("alarms", ()):
            await self._call("/v3/maintenance/alarm", {"action": "DEACTIVATE", "memberID": alarm.get("memberID", 0),
                                                       "alarm": alarm.get("alarm", "NOSPACE")})

    def watch(self, key: str, end: str | None = None, *, start_revision: int = 0, prev_kv: bool = True,
              progress_notify: bool = False) -> RealWatch:
        return RealWatch(self, key, end, start_revision, prev_kv, progress_notify)

    def own_writes_outside(self, after: int, upto: int, key: str, end: str | None) -> bool:
        """Whether every revision in (after, upto] is one of this client's writes, none in [key, end)."""
        if upto - after > SETTLE_SCAN:
            return False
        own = self._own
        for rev in range(after + 1, upto + 1):
            keys = own.get(rev)
            if keys is None:
                return False
            for k in keys:
                if (k == key) if end is None else (key <= k < end):
                    return False
        return True

    # ----- kube-apiserver's compactor -----------------------------------------------------------
    async def _compact_loop(self) -> None:
        """Every interval: win the CAS on ``compact_rev_key`` (one API server of many), then compact
        to the revision that key held one interval ago (upstream's ``compactor.go``)."""
        version, target = 0, 0
        while not self._closed:
            await self._sleep(self.compaction_interval)
            try:
                version, target = await self.compact_once(version, target)
            except StoreError as err:
                log.info("etcd compaction skipped: %s", err)

    async def compact_once(self, version: int, target: int) -> tuple[int, int]:
        """One round of the compactor: returns the (version, revision) to pass to the next round."""
        res = await self.txn([Compare(COMPACT_KEY, "version", "=", version)], [Put(COMPACT_KEY, str(target).encode())],
                             [Get(COMPACT_KEY)])
        if not res.succeeded:
            got = res.responses[0] if res.responses else None
            kvs = got.kvs if isinstance(got, RangeResult) else []
            return (kvs[0].version if kvs else 0), res.revision
        if target > 0:
            try:
                await self.compact(target)
                self.compactions += 1
            except CompactedError:
                pass
        return version + 1, res.revision

    async def _sleep(self, seconds: float) -> None:
        if self.clock is not None:
            await self.clock.sleep(seconds)
        else:
            await asyncio.sleep(seconds)

    # ----- members, as etcdctl and the console see them -----------------------------------------
    async def endpoint_status(self, url: str) -> dict[str, Any] | None:
        """``etcdctl endpoint status`` of one endpoint (None: it does not answer)."""
        try:
            # Without ``hasleader``: a member cut off from the leader still tells its term and index.
            return await asyncio.wait_for(self._call("/v3/maintenance/status", {}, endpoint=url,
                                                     retry_elsewhere=False, headers=_ANY_LEADER),
                                          STATUS_TIMEOUT)
        except (StoreError, asyncio.TimeoutError):
            return None

    async def close(self) -> None:
        self._closed = True
        if self._compactor is not None:
            self._compactor.cancel()
            try:
                await self._compactor
            except (asyncio.CancelledError, Exception):  # noqa: BLE001 - stopping anyway
                pass
        if self._session is not None:
            await self._session.close()
            self._session = None


def _compare(c: Compare, layout: KeyLayout) -> dict[str, Any]:
    target, field_name = _COMPARE_TARGET[c.target]
    value: Any = _b64(c.value) if c.target == "value" and isinstance(c.value, (bytes, str)) else c.value
    return {"key": _b64(layout.to_etcd(c.key)), "target": target, "result": _COMPARE_RESULT[c.op], field_name: value}


def _op(op: Op, layout: KeyLayout) -> dict[str, Any]:
    if isinstance(op, Put):
        put: dict[str, Any] = {"key": _b64(layout.to_etcd(op.key)), "value": _b64(op.value)}
        if op.lease:
            put["lease"] = op.lease
        return {"request_put": put}
    if isinstance(op, Delete):
        body: dict[str, Any] = {"key": _b64(layout.to_etcd(op.key)), "prev_kv": True}
        if op.end is not None:
            body["range_end"] = _b64(layout.end_to_etcd(op.end))  # type: ignore[arg-type]
        return {"request_delete_range": body}
    body = {"key": _b64(layout.to_etcd(op.key))}
    if op.end is not None:
        body["range_end"] = _b64(layout.end_to_etcd(op.end))  # type: ignore[arg-type]
    return {"request_range": body}


class RealWatch:
    """One watch over ``/v3/watch``, reopened on another endpoint from the revision after the last
    one delivered when its member goes away or loses its leader (compaction ends it, canceled, as
    etcd's does)."""

    def __init__(self, etcd: RealEtcd, key: str, end: str | None, start: int, prev_kv: bool,
                 progress: bool) -> None:
        self.etcd = etcd
        self.key, self.end = key, end
        self.next_rev = start
        self.prev_kv, self.progress = prev_kv, progress
        #: Every event up to this revision was delivered (an event batch's or a progress notification's;
        #: before the start revision, the reader's own list holds them).
        self.delivered = max(0, start - 1)
        self._gen = self._run()

    def __aiter__(self) -> AsyncIterator[WatchResponse]:
        return self._gen

    async def aclose(self) -> None:
        await self._gen.aclose()

    def settled(self) -> bool:
        """Whether this stream holds every event of its range up to the client's revision (see the
        module doc): the reader may claim that revision."""
        current = self.etcd.revision
        return self.delivered >= current or (
            self.delivered > 0 and self.etcd.own_writes_outside(self.delivered, current, self.key, self.end))

    async def _run(self) -> AsyncIterator[WatchResponse]:
        etcd = self.etcd
        failures = 0
        while not etcd._closed:
            if self.next_rev <= 0:
                self.next_rev = (await etcd.range(self.key, self.end, count_only=True)).revision + 1
                self.delivered = max(self.delivered, self.next_rev - 1)
            layout = etcd.layout
            req: dict[str, Any] = {"key": _b64(layout.to_etcd(self.key)), "start_revision": self.next_rev,
                                   "progress_notify": self.progress, "prev_kv": self.prev_kv}
            if self.end is not None:
                req["range_end"] = _b64(layout.end_to_etcd(self.end))  # type: ignore[arg-type]
            url = etcd.servers[etcd._current]
            session = etcd._session
            if session is None:
                return
            try:
                async with session.post(url + "/v3/watch", json={"create_request": req},
                                        timeout=aiohttp.ClientTimeout(total=None, sock_connect=2.0)) as resp:
                    buf = b""
                    idle = etcd.watch_idle_timeout
                    while True:
                        read = resp.content.readany()
                        chunk = await (asyncio.wait_for(read, idle) if idle else read)
                        if not chunk:
                            break
                        buf += chunk
                        while b"\n" in buf:
                            line, buf = buf.split(b"\n", 1)
                            if not line.strip():
                                continue
                            out = self._response(json.loads(line))
                            if out is None:
                                continue
                            failures = 0
                            yield out
                            if out.canceled:
                                return
            except (aiohttp.ClientError, OSError, asyncio.TimeoutError, ValueError) as err:
                log.debug("etcd watch on %s at %s broke: %s", self.key, url, err)
            except _Reopen:
                pass
            # The stream ended (member stopped, lost its leader, connection reset): try the next one.
            failures += 1
            etcd._current = (etcd._current + 1) % len(etcd.servers)
            await asyncio.sleep(min(1.0, 0.05 * failures))

    def _response(self, doc: dict[str, Any]) -> WatchResponse | None:
        if "error" in doc:
            err = doc["error"]
            message = str(err.get("message", err)) if isinstance(err, dict) else str(err)
            if "compacted" in message:
                return WatchResponse([], self.delivered, canceled=True, compact_revision=self.next_rev)
            raise _Reopen(message)
        result = doc.get("result", {})
        header = result.get("header", {})
        self.etcd._seen(header)
        rev = int(header.get("revision", 0))
        if result.get("canceled"):
            compact = int(result.get("compact_revision", 0))
            if compact:
                return WatchResponse([], rev, canceled=True, compact_revision=compact)
            raise _Reopen(str(result.get("cancel_reason", "canceled")))
        if result.get("created"):
            return None
        events = []
        back = self.etcd.layout.from_etcd
        for e in result.get("events", ()):
            kv = _kv(e["kv"], back)
            prev = _kv(e["prev_kv"], back) if "prev_kv" in e else None
            events.append(Event("DELETE" if e.get("type") == "DELETE" else "PUT", kv, prev))
        if events:
            last = events[-1].kv.mod_revision
            self.next_rev = last + 1
            # An event batch's header may carry a later revision while more events are still to
            # come (a catching-up watcher): only the last event's revision is known delivered.
            self.delivered = max(self.delivered, last)
            return WatchResponse(events, last)
        if rev >= self.next_rev - 1:
            self.delivered = max(self.delivered, rev)
            self.next_rev = max(self.next_rev, rev + 1)
            return WatchResponse([], rev, progress=True)
        return None


class _Reopen(Exception):
    """The member closed the watch for a reason another member may not have (no leader)."""
