"""How etcd members in their own processes talk: frames on loopback sockets, marshalled tuples.

A frame is ``<u32 length><marshal payload>``, the payload a list of messages: a sender packs what
it queued during one turn of its event loop into one frame (one write per peer per turn). A
receiver is a :class:`FrameProtocol`: it cuts frames out of whatever the socket handed over and
hands each message to its handler in the same callback, so a frame costs no reader task, no
future and no extra turn of the loop. ``marshal`` encodes tuples of str/bytes/int/float/None
quickly and executes nothing when loading. Raft messages, store results and store errors have a
tuple form here; store commands travel in the form :mod:`kconsole.store.raft.codec` already gives
Raft entries. The parent's proposals of one turn are one ``("P", ids, commands)`` message and the
leader's answers of one turn one ``("R", ids, results)``, so neither side handles a message per write.

Every connection opens with a hello naming the wire's :data:`VERSION`; a member and its parent come
from the same tree, and one that speaks another version is refused with an error naming both.
"""

from __future__ import annotations

import asyncio
import logging
import marshal
import struct
from collections.abc import Callable
from typing import Any

from kconsole.store import kv as kvmod
from kconsole.store.kv import Event, KeyValue, RangeResult, StoreError, TxnResult, WatchResponse
from kconsole.store.members import NotProposed
from kconsole.store.raft.core import Message, Snapshot
from kconsole.store.raft.log import Entry

log = logging.getLogger(__name__)

#: What a hello says; bumped whenever a message's shape changes.
VERSION = 2
_LEN = struct.Struct("<I")
#: A frame larger than this is refused (a snapshot of a big store is the largest thing sent).
MAX_FRAME = 1 << 31
#: Bytes a connection reads into at a time: a round's entries (64 writes of 1 KiB) fit.
RECEIVE_BUFFER = 256 * 1024


class WireError(ConnectionError):
    """A stream that is not frames of this wire: torn, oversized, not a list, another version."""


def frame(messages: list[Any]) -> bytes:
    data = marshal.dumps(messages)
    return _LEN.pack(len(data)) + data


def hello(kind: str, *rest: Any) -> bytes:
    """The first frame on a connection: who connects (``peer`` or ``client``) and the wire version."""
    return frame([("hello", kind, VERSION, *rest)])


def check_hello(message: Any) -> tuple[str, tuple[Any, ...]]:
    """The kind of a hello and what follows its version; a WireError for anything else."""
    if not (isinstance(message, tuple) and len(message) >= 3 and message[0] == "hello"):
        raise WireError(f"expected a hello, got {str(message)[:80]}")
    if message[2] != VERSION:
        raise WireError(f"a {message[1]} speaks wire version {message[2]}, this side speaks {VERSION}")
    return message[1], message[3:]


def _payload(data: Any) -> list[Any]:
    try:
        out = marshal.loads(data)
    except (EOFError, ValueError, TypeError) as err:
        raise WireError(f"a frame that is not marshal data: {err}") from None
    if not isinstance(out, list):
        raise WireError("a frame must hold a list of messages")
    return out


class FrameProtocol(asyncio.BufferedProtocol):
    """One connection's receiving side: each message of each whole frame goes to :attr:`handle` as
    soon as its bytes are in. :attr:`closed` resolves when the connection ends: to None at a frame
    boundary, else to the error (a torn last frame, garbage, a handler that refused a message).

    The socket is read into one buffer the connection keeps (:data:`RECEIVE_BUFFER`, grown for a
    larger frame and given back once that is read): a fresh 256 KiB buffer per read, as a plain
    protocol gets, costs page faults on every Raft round's entries."""

    def __init__(self, handle: Callable[[Any], None]) -> None:
        self.handle = handle
        self.transport: asyncio.Transport | None = None
        self.closed: asyncio.Future[BaseException | None] = asyncio.get_running_loop().create_future()
        self._buf = bytearray(RECEIVE_BUFFER)
        self._end = 0  # bytes of _buf received and not yet taken as frames
        self._error: BaseException | None = None

    @property
    def refused(self) -> BaseException | None:
        """Why this side ended the connection (bad input), if it did."""
        return self._error

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def get_buffer(self, sizehint: int) -> memoryview:
        buf, end = self._buf, self._end
        if len(buf) - end < RECEIVE_BUFFER // 4:
            buf.extend(bytes(len(buf)))  # a frame larger than the buffer: double it
        elif end == 0 and len(buf) > RECEIVE_BUFFER:
            buf = self._buf = bytearray(RECEIVE_BUFFER)  # the large frame is read: give the memory back
        return memoryview(buf)[end:]

    def buffer_updated(self, nbytes: int) -> None:
        self._end += nbytes
        if self._error is not None:
            return
        buf, end = self._buf, self._end
        pos = 0
        try:
            handle = self.handle
            while end - pos >= 4:
                size = _LEN.unpack_from(buf, pos)[0]
                if size > MAX_FRAME:
                    raise WireError(f"frame of {size} bytes is larger than {MAX_FRAME}")
                if end - pos - 4 < size:
                    break
                with memoryview(buf) as view:
                    messages = _payload(view[pos + 4 : pos + 4 + size])
                pos += 4 + size
                for message in messages:
                    handle(message)
                    handle = self.handle  # a hello may have named the handler for the rest
                if self._error is not None:
                    return
        except Exception as err:  # noqa: BLE001 - bad input ends this connection, never the process
            self.fail(err)
            return
        if pos:
            rest = end - pos
            buf[:rest] = buf[pos:end]  # the start of the next frame moves to the front (same length: no resize)
            self._end = rest

    def fail(self, err: BaseException) -> None:
        """End the connection because of ``err`` (kept as what :attr:`closed` resolves to)."""
        if self._error is None:
            self._error = err
            peer = self.transport.get_extra_info("peername") if self.transport is not None else None
            log.warning("closing the connection from %s: %s", peer, err)
        if self.transport is not None:
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        err = self._error or exc
        if err is None and self._end:
            size = _LEN.unpack_from(self._buf)[0] if self._end >= 4 else None
            err = WireError(f"the stream ended inside a frame: {self._end} bytes of "
                            + (f"a {size + 4}-byte frame" if size is not None else "a frame header"))
        if not self.closed.done():
            self.closed.set_result(err)


class Outbox:
    """Messages for one stream, sent as one frame at the end of the current loop turn."""

    __slots__ = ("transport", "_queued", "_loop", "before_flush")

    def __init__(self, transport: asyncio.WriteTransport) -> None:
        self.transport = transport
        self._queued: list[Any] = []
        self._loop = asyncio.get_running_loop()
        #: Called just before a frame is sent, to add what must travel with it.
        self.before_flush: Callable[[], None] | None = None

    def put(self, message: Any) -> None:
        if not self._queued:
            self._loop.call_soon(self.flush)
        self._queued.append(message)

    def flush(self) -> None:
        if self.before_flush is not None:
            self.before_flush()
        queued, self._queued = self._queued, []
        if queued and not self.transport.is_closing():
            self.transport.write(frame(queued))

    def close(self) -> None:
        self.transport.close()

    @property
    def closed(self) -> bool:
        return self.transport.is_closing()


# ----- Raft messages ---------------------------------------------------------------------------
def pack_message(m: Message) -> tuple[Any, ...]:
    snap = m.snapshot
    return (m.kind, m.src, m.dst, m.term, m.log_term, m.index, [(e.index, e.term, e.data) for e in m.entries],
            m.commit, m.reject, m.hint, m.context, None if snap is None else (snap.index, snap.term, snap.data))


def unpack_message(t: tuple[Any, ...]) -> Message:
    kind, src, dst, term, log_term, index, entries, commit, reject, hint, context, snap = t
    return Message(kind, src, dst, term, log_term, index, [Entry(i, tm, d) for i, tm, d in entries], commit,
                   reject, hint, context, None if snap is None else Snapshot(*snap))


# ----- store results ---------------------------------------------------------------------------
def _kv(k: KeyValue) -> tuple[Any, ...]:
    return (k.key, k.value, k.create_revision, k.mod_revision, k.version, k.lease)


def _unkv(t: tuple[Any, ...]) -> KeyValue:
    return KeyValue(*t)


def pack_range(r: RangeResult) -> tuple[Any, ...]:
    return ("R", [_kv(k) for k in r.kvs], r.count, r.more, r.revision)


def unpack_range(t: tuple[Any, ...]) -> RangeResult:
    return RangeResult([_unkv(k) for k in t[1]], t[2], t[3], t[4])


def _response(r: object) -> Any:
    if r is None:
        return None
    if isinstance(r, KeyValue):
        return ("K", _kv(r))
    if isinstance(r, RangeResult):
        return pack_range(r)
    if isinstance(r, list):
        return ("L", [_kv(k) for k in r])
    raise TypeError(f"not a transaction response: {r!r}")


def _unresponse(t: Any) -> object:
    if t is None:
        return None
    if t[0] == "K":
        return _unkv(t[1])
    if t[0] == "R":
        return unpack_range(t)
    return [_unkv(k) for k in t[1]]


#: Errors that cross the socket by class name; anything else arrives as a StoreError with its text.
#: NotProposed must stay itself: the facade retries it on the next leader (it never reached a log).
_ERRORS: dict[str, type[StoreError]] = {
    c.__name__: c for c in (kvmod.StoreError, kvmod.CompactedError, kvmod.FutureRevisionError,
                            kvmod.TooLargeError, kvmod.NoSpaceError, kvmod.UnavailableError, kvmod.ClosedError,
                            NotProposed)
}


def pack_result(r: object) -> Any:
    """A proposal's or request's outcome: a TxnResult, a RangeResult, an error, or plain data."""
    if isinstance(r, TxnResult):
        return ("T", r.succeeded, r.revision, [_response(x) for x in r.responses])
    if isinstance(r, RangeResult):
        return pack_range(r)
    if isinstance(r, BaseException):
        return pack_error(r)
    return ("V", r)


def unpack_result(t: Any) -> object:
    tag = t[0]
    if tag == "T":
        return TxnResult(t[1], t[2], [_unresponse(x) for x in t[3]])
    if tag == "R":
        return unpack_range(t)
    if tag == "E":
        return unpack_error(t)
    return t[1]


def pack_error(err: BaseException) -> tuple[Any, ...]:
    name = type(err).__name__
    if name not in _ERRORS:
        name = "StoreError"
        text = str(err) if isinstance(err, StoreError) else f"{type(err).__name__}: {err}"
    else:
        text = str(err)
    return ("E", name, text, getattr(err, "compact_revision", 0))


def unpack_error(t: tuple[Any, ...]) -> BaseException:
    _, name, text, compact = t
    cls = _ERRORS.get(name, StoreError)
    if cls is kvmod.CompactedError:
        return kvmod.CompactedError(compact)
    if cls in (kvmod.FutureRevisionError, kvmod.TooLargeError, kvmod.NoSpaceError, kvmod.ClosedError):
        return cls()  # type: ignore[call-arg]
    return cls(text)


# ----- watch responses and history changes ------------------------------------------------------
def pack_events(events: list[Event]) -> list[tuple[Any, ...]]:
    return [(e.type, _kv(e.kv), None if e.prev_kv is None else _kv(e.prev_kv)) for e in events]


def unpack_events(events: list[tuple[Any, ...]]) -> list[Event]:
    return [Event(typ, _unkv(k), None if p is None else _unkv(p)) for typ, k, p in events]


def pack_watch(r: WatchResponse) -> tuple[Any, ...]:
    return (pack_events(r.events), r.revision, r.canceled, r.compact_revision, r.progress)


def unpack_watch(t: tuple[Any, ...]) -> WatchResponse:
    events, revision, canceled, compact, progress = t
    return WatchResponse(unpack_events(events), revision, canceled, compact, progress)


async def listen(protocol: Callable[[], asyncio.Protocol]) -> tuple[asyncio.AbstractServer, str]:
    """A listening socket on any free loopback port, and its address (``127.0.0.1:PORT``)."""
    server = await asyncio.get_running_loop().create_server(protocol, "127.0.0.1", 0)
    return server, f"127.0.0.1:{server.sockets[0].getsockname()[1]}"


async def connect(address: str, handle: Callable[[Any], None]) -> FrameProtocol:
    """A connection to ``address`` whose incoming messages go to ``handle``."""
    host, _, port = address.rpartition(":")
    _, protocol = await asyncio.get_running_loop().create_connection(lambda: FrameProtocol(handle), host, int(port))
    return protocol
