"""How etcd members in their own processes talk: frames on loopback sockets, marshalled tuples.

A frame is ``<u32 length><marshal payload>``, the payload a list of messages: a sender packs what
it queued during one turn of its event loop into one frame (one write, one read, one ``loads``).
``marshal`` encodes tuples of str/bytes/int/float/None quickly and executes nothing when loading.
Raft messages, store results and store errors have a tuple form here; store commands travel in the
form :mod:`kconsole.store.raft.codec` already gives Raft entries.
"""

from __future__ import annotations

import asyncio
import marshal
import struct
from collections.abc import Callable
from typing import Any

from kconsole.store import kv as kvmod
from kconsole.store.kv import Event, KeyValue, RangeResult, StoreError, TxnResult, WatchResponse
from kconsole.store.members import NotProposed
from kconsole.store.raft.core import Message, Snapshot
from kconsole.store.raft.log import Entry

_LEN = struct.Struct("<I")
#: A frame larger than this is refused (a snapshot of a big store is the largest thing sent).
MAX_FRAME = 1 << 31


def frame(messages: list[Any]) -> bytes:
    data = marshal.dumps(messages)
    return _LEN.pack(len(data)) + data


async def read_frame(reader: asyncio.StreamReader) -> list[Any]:
    """The next frame's messages; ``asyncio.IncompleteReadError`` at the end of the stream."""
    size = _LEN.unpack(await reader.readexactly(4))[0]
    if size > MAX_FRAME:
        raise ValueError(f"frame of {size} bytes is larger than {MAX_FRAME}")
    out = marshal.loads(await reader.readexactly(size))
    if not isinstance(out, list):
        raise ValueError("a frame must hold a list of messages")
    return out


class Outbox:
    """Messages for one stream, sent as one frame at the end of the current loop turn."""

    __slots__ = ("writer", "_queued", "_loop", "before_flush")

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer
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
        if queued and not self.writer.is_closing():
            self.writer.write(frame(queued))

    @property
    def closed(self) -> bool:
        return self.writer.is_closing()


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


async def listen(handler: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Any]) -> tuple[asyncio.AbstractServer, str]:
    """A listening socket on any free loopback port, and its address (``127.0.0.1:PORT``)."""
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    return server, f"127.0.0.1:{server.sockets[0].getsockname()[1]}"


async def connect(address: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    host, _, port = address.rpartition(":")
    return await asyncio.open_connection(host, int(port))


async def serve_frames(reader: asyncio.StreamReader, handle: Callable[[Any], None]) -> None:
    """Hand each message of each frame to ``handle`` until the stream ends."""
    try:
        while True:
            for message in await read_frame(reader):
                handle(message)
    except (asyncio.IncompleteReadError, ConnectionError):
        return
