"""``RealEtcd``: the KV contract (:mod:`kconsole.store.kv`) over a real etcd cluster (3.4, 3.5).

It speaks etcd's v3 gRPC API (``KV.Range``, ``KV.Txn``, ``KV.Compact``, ``Maintenance.Status`` and
``Alarm``, one ``Watch`` stream per watch) through :mod:`kconsole.store.etcdrpc`, one HTTP/2 channel
per member, with kube-apiserver's TLS client options. Why gRPC and not etcd's JSON gateway: the
gateway cost etcd about twice the CPU per write and capped the rate at half (see that module). The
few calls that are not on the write path (status, alarms, compaction) keep the gateway's JSON shape
(``header.member_id``, ``dbSize``, 64-bit integers as strings), so the member view reads them as
before; the writes, reads and watches are built and read as protobuf messages directly.

The watch cache needs to know when its stream holds every event up to the store's revision (see
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
etcd's own client does. The client sends to the member that leads when it knows it (the highest
Raft term a status answer showed): a follower would forward every write to the leader, one more
hop and more CPU on a small machine. A watch on a member cut off from its leader is closed by etcd
and reopened elsewhere from the revision after the last one delivered.

Compaction as kube-apiserver schedules it: every ``compaction_interval`` (5 minutes) one API
server wins a compare-and-swap on the key ``compact_rev_key`` and compacts to the revision it saw
one interval earlier, the key's value naming that revision (as upstream writes it).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import ssl
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
from google.protobuf import json_format

from kconsole.store import etcdrpc
from kconsole.store.etcdkeys import KeyLayout
from kconsole.store.etcdpb import etcd_pb2 as pb
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
#: How many of this client's own written values are kept for its watches to hand back (see
#: :meth:`RealEtcd.own_value`).
OWN_VALUES = 16_384
#: A stream further behind than this many revisions is not proven settled revision by revision.
SETTLE_SCAN = 4096

_COMPARE_TARGET = {"mod": (pb.Compare.MOD, "mod_revision"), "create": (pb.Compare.CREATE, "create_revision"),
                   "version": (pb.Compare.VERSION, "version"), "value": (pb.Compare.VALUE, "value")}
_COMPARE_RESULT = {"=": pb.Compare.EQUAL, "!=": pb.Compare.NOT_EQUAL, "<": pb.Compare.LESS,
                   ">": pb.Compare.GREATER}
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


def _key(text: str) -> bytes:
    return text.encode()


def _pb_kv(kv: Any, back: Callable[[str], str]) -> KeyValue:
    return KeyValue(back(kv.key.decode()), kv.value, kv.create_revision, kv.mod_revision, kv.version, kv.lease)


def _b64(text: str | bytes) -> str:
    """A key or value as the JSON-shaped calls (:meth:`RealEtcd._call`) carry it."""
    return base64.b64encode(text.encode() if isinstance(text, str) else text).decode("ascii")


def _kv(doc: dict[str, Any], back: Callable[[str], str]) -> KeyValue:
    """A key-value of a JSON-shaped answer (:meth:`RealEtcd._call`)."""
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

    def credentials(self) -> grpc.ChannelCredentials:
        return etcdrpc.credentials(*(str(p) if p else None for p in (self.cafile, self.certfile, self.keyfile)))

    def context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=str(self.cafile) if self.cafile else None)
        if self.certfile is not None:
            ctx.load_cert_chain(str(self.certfile), str(self.keyfile) if self.keyfile else None)
        return ctx


def parse_servers(text: str | list[str] | tuple[str, ...], *, flag: str = "--etcd-servers") -> list[str]:
    """``URL[,URL...]`` as kube-apiserver's --etcd-servers, checked: http(s)://host:port each. ``flag``
    is the option the errors name (``kconsole attach`` takes the same list as ``--etcd-endpoints``)."""
    items = text.split(",") if isinstance(text, str) else list(text)
    urls = [u.strip().rstrip("/") for u in items if u.strip()]
    if not urls:
        raise ValueError(f"{flag} needs at least one URL (https://127.0.0.1:2379)")
    for url in urls:
        scheme, sep, rest = url.partition("://")
        if scheme not in ("http", "https") or not sep or not rest or "/" in rest:
            raise ValueError(f"{flag}: {url!r} is not an etcd client URL (http[s]://host:port)")
    return urls


class RealEtcd:
    """The KV contract over etcd's gRPC API, plus etcdctl's view of the members.

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
        self._leader_term = 0  # the highest Raft term in which a member was seen leading
        #: Each member's gRPC channel (None: not connected or closed).
        self._channels: dict[str, etcdrpc.Channel] | None = None
        self._revision = 0
        self._own: dict[int, tuple[str, ...]] = {}
        self._own_order: deque[int] = deque()
        self._own_values: dict[tuple[str, int], bytes] = {}
        self._compactor: asyncio.Task[None] | None = None
        self._closed = False
        self.compactions = 0
        #: The revision this client last compacted to (etcd's status does not tell).
        self.compacted = 0

    # ----- connection ---------------------------------------------------------------------------
    async def start(self) -> None:
        """Connect, check that some endpoint answers (a clear error otherwise), and find the leader."""
        self.open_channels()
        await self.status()
        if len(self.servers) > 1:
            await asyncio.gather(*(self.endpoint_status(url) for url in self.servers))
        if self.compaction_interval > 0:
            self._compactor = asyncio.get_running_loop().create_task(self._compact_loop(), name="etcd-compactor")

    def open_channels(self) -> None:
        """One gRPC channel per member (once; they connect on first use and reconnect by themselves)."""
        if self._channels is not None:
            return
        creds = self.tls.credentials() if any(u.startswith("https://") for u in self.servers) else None
        self._channels = {url: etcdrpc.open_channel(url, creds) for url in self.servers}

    def _seen(self, header: Any) -> None:
        rev = header.revision
        if rev > self._revision:
            self._revision = rev

    async def _rpc(self, path: str, request: Any, *, endpoint: str | None = None, retry_elsewhere: bool = True,
                   require_leader: bool = True, idempotent: bool = True) -> Any:
        """Call ``path`` (a gateway path, see :data:`etcdrpc.UNARY`); on a member that cannot answer, the
        next endpoint (each once). A write whose connection broke after it was sent is not sent again
        (etcd's client does not repeat a transaction either): its outcome is unknown, and the error
        says so."""
        channels = self._channels
        if channels is None or self._closed:
            raise UnavailableError("etcdserver: server stopped")
        order = [endpoint] if endpoint else self.servers[self._current:] + self.servers[:self._current]
        metadata = etcdrpc.REQUIRE_LEADER if require_leader else None
        last: StoreError | None = None
        answered: StoreError | None = None  # a member's own refusal beats a member that is not there
        for i, url in enumerate(order):
            try:
                with self._io():
                    resp = await channels[url].method(path)(request, timeout=REQUEST_TIMEOUT, metadata=metadata)
            except grpc.aio.AioRpcError as err:
                code, message = err.code(), etcdrpc.failure_text(err)
                if code == grpc.StatusCode.DEADLINE_EXCEEDED:
                    raise UnavailableError("etcdserver: request timed out") from None
                if "etcdserver:" in message or "mvcc:" in message:
                    failed = store_error(message)
                    if retry_elsewhere and any(t in message for t in _TRY_ELSEWHERE):
                        answered = failed
                        continue
                    raise failed from None
                if code == grpc.StatusCode.RESOURCE_EXHAUSTED and "larger than max" in message:
                    raise TooLargeError() from None  # over gRPC's own limit, above etcd's request limit
                if code != grpc.StatusCode.UNAVAILABLE:
                    raise StoreError(f"etcd {url}{path}: {code.name}: {message}") from None
                if not idempotent and not any(t in message for t in etcdrpc.NEVER_SENT):
                    raise UnavailableError(f"etcd {url}: the connection closed before etcd answered "
                                           f"({message}): the write may have been applied") from None
                last = UnavailableError(f"etcd {url}: {message}")
                if not retry_elsewhere:
                    raise last from None
                continue
            if endpoint is None and i:
                self._current = self.servers.index(url)
            self._seen(resp.header)
            return resp
        failed = answered or last
        assert failed is not None
        raise failed

    async def _call(self, path: str, body: dict[str, Any], *, endpoint: str | None = None,
                    retry_elsewhere: bool = True, require_leader: bool = True,
                    idempotent: bool = True) -> dict[str, Any]:
        """:meth:`_rpc` with the request and answer in etcd's JSON gateway shape (fields by their
        proto names, keys and values in base64, 64-bit integers as strings), for the calls off the
        write path, whose readers were written against the gateway's documents."""
        request = json_format.ParseDict(body, etcdrpc.UNARY[path][1]())
        resp = await self._rpc(path, request, endpoint=endpoint, retry_elsewhere=retry_elsewhere,
                               require_leader=require_leader, idempotent=idempotent)
        return json_format.MessageToDict(resp, preserving_proto_field_name=True)

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
        req = pb.RangeRequest(key=_key(layout.to_etcd(key)), revision=revision, limit=limit, count_only=count_only,
                              keys_only=keys_only, serializable=serializable)
        if end is not None:
            req.range_end = _key(layout.end_to_etcd(end))  # type: ignore[arg-type]
        return self._range_result(await self._rpc("/v3/kv/range", req))

    def _range_result(self, resp: Any) -> RangeResult:
        back = self.layout.from_etcd
        return RangeResult([_pb_kv(k, back) for k in resp.kvs], resp.count, resp.more, resp.header.revision)

    async def txn(self, compares: list[Compare], success: list[Op], failure: list[Op] | None = None) -> TxnResult:
        failure = failure or []
        validate_txn(compares, success, failure)
        layout = self.layout
        req = pb.TxnRequest(compare=[_compare(c, layout) for c in compares], success=[_op(o, layout) for o in success],
                            failure=[_op(o, layout) for o in failure])
        resp = await self._rpc("/v3/kv/txn", req, idempotent=False)
        succeeded = resp.succeeded
        ops = success if succeeded else failure
        responses = [self._response(op, r) for op, r in zip(ops, resp.responses)]
        rev = resp.header.revision
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
        if succeeded:
            values = self._own_values
            for o in ops:
                if isinstance(o, Put):
                    values[(o.key, rev)] = o.value
            while len(values) > OWN_VALUES:
                del values[next(iter(values))]
        return TxnResult(succeeded, rev, responses)

    def create(self, key: str, value: bytes, lease: int = 0) -> Any:
        return self.txn([Compare(key, "mod", "=", 0)], [Put(key, value, lease)], [Get(key)])

    def update(self, key: str, value: bytes, mod_revision: int, lease: int = 0) -> Any:
        return self.txn([Compare(key, "mod", "=", mod_revision)], [Put(key, value, lease)], [Get(key)])

    def _response(self, op: Op, resp: Any) -> object:
        """One op's answer as the revision log gives it (a Put's prior value is not asked for: the API
        server never reads it, and it would double what every update carries back)."""
        if isinstance(op, Get):
            return self._range_result(resp.response_range)
        if isinstance(op, Put):
            return None
        prev = [_pb_kv(k, self.layout.from_etcd) for k in resp.response_delete_range.prev_kvs]
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

    async def watch_docs(self, request: dict[str, Any], url: str | None = None) -> AsyncIterator[dict[str, Any]]:
        """One watch stream's answers in the gateway's shape (``{"result": {...}}``): ``request`` is
        the gateway's ``{"create_request": {...}}``. It ends when etcd ends the stream; a failure is
        raised as the store error it names (``UnavailableError`` when the member is gone)."""
        channels = self._channels
        if channels is None or self._closed:
            raise UnavailableError("etcdserver: server stopped")
        url = url or self.servers[self._current]
        call = channels[url].watch()(metadata=etcdrpc.REQUIRE_LEADER)
        try:
            await call.write(json_format.ParseDict(request, pb.WatchRequest()))
            while True:
                msg = await call.read()
                if msg is grpc.aio.EOF:
                    return
                yield {"result": json_format.MessageToDict(msg, preserving_proto_field_name=True)}
        except grpc.aio.AioRpcError as err:
            message = etcdrpc.failure_text(err)
            raise (store_error(message) if "etcdserver:" in message or "mvcc:" in message
                   else UnavailableError(f"etcd {url}: {message}")) from None
        finally:
            call.cancel()

    def own_value(self, key: str, mod_revision: int, value: bytes) -> bytes:
        """The very bytes object this client wrote as ``key`` at ``mod_revision``, else ``value``: the
        API server's storage knows its own writes by the identity of the value it wrote and then skips
        parsing them again when the watch delivers them, as it does on the embedded store."""
        own = self._own_values.pop((key, mod_revision), None)
        return own if own is not None and own == value else value

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
            async with asyncio.timeout(STATUS_TIMEOUT):  # not wait_for: it can drop the poller's stop
                doc = await self._call("/v3/maintenance/status", {}, endpoint=url, retry_elsewhere=False,
                                       require_leader=False)
        except (StoreError, asyncio.TimeoutError):
            return None
        self._prefer_leader(url, doc)
        return doc

    def _prefer_leader(self, url: str, doc: dict[str, Any]) -> None:
        """Send to the member that leads in the highest term seen (an isolated old leader's term is lower)."""
        term = int(doc.get("raftTerm", 0))
        leader = doc.get("leader")
        if leader and leader == doc.get("header", {}).get("member_id") and term >= self._leader_term:
            self._leader_term = term
            self._current = self.servers.index(url)

    async def close(self) -> None:
        self._closed = True
        if self._compactor is not None:
            self._compactor.cancel()
            try:
                await self._compactor
            except (asyncio.CancelledError, Exception):  # noqa: BLE001 - stopping anyway
                pass
        if self._channels is not None:
            channels, self._channels = self._channels, None
            for ch in channels.values():
                await ch.channel.close()


def _compare(c: Compare, layout: KeyLayout) -> Any:
    target, field_name = _COMPARE_TARGET[c.target]
    cmp = pb.Compare(key=_key(layout.to_etcd(c.key)), target=target, result=_COMPARE_RESULT[c.op])
    value = c.value.encode() if c.target == "value" and isinstance(c.value, str) else c.value
    setattr(cmp, field_name, value)
    return cmp


def _op(op: Op, layout: KeyLayout) -> Any:
    if isinstance(op, Put):
        return pb.RequestOp(request_put=pb.PutRequest(key=_key(layout.to_etcd(op.key)), value=op.value,
                                                      lease=op.lease))
    if isinstance(op, Delete):
        delete = pb.DeleteRangeRequest(key=_key(layout.to_etcd(op.key)), prev_kv=True)
        if op.end is not None:
            delete.range_end = _key(layout.end_to_etcd(op.end))  # type: ignore[arg-type]
        return pb.RequestOp(request_delete_range=delete)
    get = pb.RangeRequest(key=_key(layout.to_etcd(op.key)))
    if op.end is not None:
        get.range_end = _key(layout.end_to_etcd(op.end))  # type: ignore[arg-type]
    return pb.RequestOp(request_range=get)


class RealWatch:
    """One ``Watch`` stream, reopened on another endpoint from the revision after the last
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
            req = pb.WatchCreateRequest(key=_key(layout.to_etcd(self.key)), start_revision=self.next_rev,
                                        progress_notify=self.progress, prev_kv=self.prev_kv)
            if self.end is not None:
                req.range_end = _key(layout.end_to_etcd(self.end))  # type: ignore[arg-type]
            url = etcd.servers[etcd._current]
            channels = etcd._channels
            if channels is None:
                return
            call = channels[url].watch()(metadata=etcdrpc.REQUIRE_LEADER)
            try:
                await call.write(pb.WatchRequest(create_request=req))
                idle = etcd.watch_idle_timeout
                task = asyncio.current_task()
                while True:
                    # asyncio.timeout, not wait_for: wait_for drops a cancellation that arrives as the
                    # read completes, and the reader's stop would then wait for a stream that goes on.
                    async with asyncio.timeout(idle):
                        msg = await call.read()
                    if task is not None and task.cancelling():
                        raise asyncio.CancelledError  # grpc's stream setup can swallow one too
                    if msg is grpc.aio.EOF:
                        break
                    out = self._response(msg)
                    if out is None:
                        continue
                    failures = 0
                    yield out
                    if out.canceled:
                        return
            except grpc.aio.AioRpcError as err:
                message = etcdrpc.failure_text(err)
                if "compacted" in message:
                    yield WatchResponse([], self.delivered, canceled=True, compact_revision=self.next_rev)
                    return
                log.debug("etcd watch on %s at %s broke: %s", self.key, url, message)
            except (asyncio.TimeoutError, grpc.aio.UsageError) as err:
                log.debug("etcd watch on %s at %s broke: %s", self.key, url, err)
            except _Reopen:
                pass
            finally:
                call.cancel()
            # The stream ended (member stopped, lost its leader, connection reset): try the next one.
            failures += 1
            etcd._current = (etcd._current + 1) % len(etcd.servers)
            await asyncio.sleep(min(1.0, 0.05 * failures))

    def _response(self, msg: Any) -> WatchResponse | None:
        header = msg.header
        self.etcd._seen(header)
        rev = header.revision
        if msg.canceled:
            if msg.compact_revision:
                return WatchResponse([], rev, canceled=True, compact_revision=msg.compact_revision)
            raise _Reopen(msg.cancel_reason or "canceled")
        if msg.created:
            return None
        back = self.etcd.layout.from_etcd
        own = self.etcd.own_value
        events = []
        for e in msg.events:
            kv = _pb_kv(e.kv, back)
            if e.type == pb.Event.DELETE:
                kind = "DELETE"
            else:
                kind = "PUT"
                kv.value = own(kv.key, kv.mod_revision, kv.value)
            events.append(Event(kind, kv, _pb_kv(e.prev_kv, back) if e.HasField("prev_kv") else None))
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
