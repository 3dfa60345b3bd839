"""HTTP/1.1 connections that serve plain request/response exchanges without aiohttp's per-request machinery.

aiohttp spends ~130 us of the event loop per request (message queue, a waiter future, a task per request,
a request object, a response object and its header negotiation) where a create through the whole API
pipeline costs ~400 us: over TLS with 64 clients that was a quarter of the loop. Most of what kubectl
and the clients send is a small request with a Content-Length answered by one JSON body, so this
protocol reads such a request itself, hands it to the front's dispatch, and writes the answer as one
prepared head and body.

Everything else goes to aiohttp, for the rest of the connection's life: a request that streams (watch,
pods/log, exec/attach/port-forward upgrades), a chunked or oversized body, ``Expect``, HTTP/1.0, an
encoded or dot-segment path, or anything this parser does not recognise (aiohttp answers malformed
requests with its 400). The switch happens between requests, so aiohttp sees the connection's remaining
bytes from the start of a request, as if it had read them all along.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, cast
from urllib.parse import parse_qsl

from multidict import CIMultiDict, CIMultiDictProxy, MultiDict, MultiDictProxy

from kconsole.http import rest

log = logging.getLogger(__name__)

JSON = "application/json"
NO_CACHE = "no-cache, private"

#: A request head larger than this is left to aiohttp (which answers it with its own limits).
MAX_HEAD_BYTES = 64 * 1024
_METHODS = frozenset(("GET", "POST", "PUT", "PATCH", "DELETE"))
#: Headers that ask for more than one exchange of a small body: aiohttp handles those.
_HANDED_OVER = frozenset(("transfer-encoding", "upgrade", "expect"))
_STREAMING = frozenset(("log", *rest.STREAMING_SUBRESOURCES))
_REASONS = {int(s): s.phrase for s in HTTPStatus}


@dataclass(slots=True)
class Reply:
    """A complete answer: status, body bytes and the few headers the API sends."""

    status: int
    body: bytes
    content_type: str = JSON
    cache_control: str | None = NO_CACHE
    warning: str | None = None
    retry_after: int | None = None
    etag: str | None = None

    def headers(self) -> dict[str, str]:
        headers = {"Content-Type": self.content_type}
        if self.cache_control is not None:
            headers["Cache-Control"] = self.cache_control
        if self.warning is not None:
            headers["Warning"] = self.warning
        if self.retry_after is not None:
            headers["Retry-After"] = str(self.retry_after)
        if self.etag is not None:
            headers["Etag"] = self.etag
        return headers

    def encode(self, date: str, close: bool) -> bytes:
        """The HTTP/1.1 message: head and body in one buffer (one TLS record, one send)."""
        head = [f"HTTP/1.1 {self.status} {_REASONS.get(self.status, 'Unknown')}\r\n"
                f"Content-Type: {self.content_type}\r\n"]
        if self.cache_control is not None:
            head.append(f"Cache-Control: {self.cache_control}\r\n")
        if self.warning is not None:
            head.append(f"Warning: {_header_value(self.warning)}\r\n")
        if self.retry_after is not None:
            head.append(f"Retry-After: {self.retry_after}\r\n")
        if self.etag is not None:
            head.append(f"Etag: {self.etag}\r\n")
        if close:
            head.append("Connection: close\r\n")
        head.append(f"Date: {date}\r\nContent-Length: {len(self.body)}\r\n\r\n")
        return "".join(head).encode() + self.body


def _header_value(value: str) -> str:
    """A header value cannot carry a line break (it would end the head)."""
    return value.replace("\r", " ").replace("\n", " ")


class RequestView:
    """What the front's dispatch reads of a request, under the names aiohttp's request gives them."""

    __slots__ = ("method", "path", "query_string", "headers", "transport", "protocol", "_query")

    def __init__(self, method: str, path: str, query_string: str, headers: CIMultiDictProxy[str],
                 transport: asyncio.BaseTransport, protocol: Connection) -> None:
        self.method = method
        self.path = path
        self.query_string = query_string
        self.headers = headers
        self.transport = transport
        self.protocol = protocol
        self._query: MultiDictProxy[str] | None = None

    @property
    def query(self) -> MultiDictProxy[str]:
        if self._query is None:
            self._query = MultiDictProxy(MultiDict(parse_qsl(self.query_string, keep_blank_values=True)))
        return self._query


class _Dates:
    """The Date header, formatted once per second of the loop's clock."""

    def __init__(self) -> None:
        self.second = -1
        self.text = ""

    def now(self) -> str:
        second = int(asyncio.get_running_loop().time())
        if second != self.second:
            self.second = second
            self.text = email.utils.formatdate(usegmt=True)
        return self.text


_dates = _Dates()


@dataclass(frozen=True, slots=True)
class Timeouts:
    """Real-time limits on a connection's reads, in seconds (the front's defaults are
    kube-apiserver's: ReadHeaderTimeout 32, the request timeout 60 for a body, IdleTimeout 90)."""

    header: float
    body: float
    idle: float


Serve = Callable[[RequestView, bytes], Awaitable[Reply]]


class Connection(asyncio.Protocol):
    """One client connection: small exchanges answered here, the rest handed to an aiohttp handler."""

    def __init__(self, serve: Serve, make_handler: Callable[[], asyncio.Protocol],
                 connections: set[Connection], max_body_bytes: int,
                 release: Callable[[], None] | None = None) -> None:
        self._serve = serve
        self._max_body_bytes = max_body_bytes
        self._make_handler = make_handler
        self._connections = connections
        #: Called once when the connection ends (the listener's count of open connections).
        self._release = release
        self.transport: asyncio.Transport | None = None
        self.handler: Any = None
        #: The front's per-connection authentication memo: (Authorization header, its Credentials).
        self.credentials: tuple[str, Any] | None = None
        self._buffer = bytearray()
        self._busy: asyncio.Task[None] | None = None
        self._paused = False
        self._close_when_idle = False
        self._reading_paused = False
        self._loop = asyncio.get_running_loop()
        self.last_active = self._loop.time()
        #: When the request being read began to arrive (None: none is), and when its head was
        #: complete with the body still to come: the header and body read timeouts count from these.
        self._request_since: float | None = None
        self._head_since: float | None = None
        self._answered = 0

    # ------------------------------------------------------------------ asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's TLS transport is no asyncio.Transport subclass
        self._connections.add(self)

    def data_received(self, data: bytes) -> None:
        if self.handler is not None:
            self.handler.data_received(data)
            return
        self._buffer += data
        self.last_active = self._loop.time()
        if self._busy is None:
            self._next()
        elif len(self._buffer) > self._max_body_bytes + MAX_HEAD_BYTES and self.transport is not None:
            # More than a whole request queued behind the one being answered: stop reading until it is.
            self._reading_paused = True
            self.transport.pause_reading()

    def eof_received(self) -> bool | None:
        if self.handler is not None:
            return self.handler.eof_received()  # type: ignore[no-any-return]
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self._connections.discard(self)
        if self.handler is not None:
            self.handler.connection_lost(exc)
        self.transport = None
        release, self._release = self._release, None
        if release is not None:
            release()

    def pause_writing(self) -> None:
        self._paused = True
        if self.handler is not None:
            self.handler.pause_writing()

    def resume_writing(self) -> None:
        self._paused = False
        if self.handler is not None:
            self.handler.resume_writing()

    # ------------------------------------------------------------------ exchanges

    @property
    def idle(self) -> bool:
        return self.handler is None and self._busy is None

    def expire(self, now: float, timeouts: Timeouts) -> None:
        """Close the connection if it has waited past a limit, as Go's http.Server does for
        kube-apiserver: a request head not complete within ``header`` seconds of its first byte
        (or of the connection, for its first request), a body not complete within ``body`` seconds
        of its head, no new request within ``idle`` seconds of the last answer."""
        transport = self.transport
        if self._busy is not None or self.handler is not None or transport is None or transport.is_closing():
            return
        if self._head_since is not None:
            late = now - self._head_since > timeouts.body
        elif self._request_since is not None:
            late = now - self._request_since > timeouts.header
        elif self._answered == 0:
            late = now - self.last_active > timeouts.header
        else:
            late = now - self.last_active > timeouts.idle
        if late:
            transport.close()

    @property
    def idle_since(self) -> float | None:
        """Since when this connection has waited for a request with nothing of one read; None if
        it is reading or answering one (or aiohttp serves it, or it is closing)."""
        transport = self.transport
        if self._busy is not None or self.handler is not None or self._buffer or transport is None \
                or transport.is_closing():
            return None
        return self.last_active

    def close_when_idle(self) -> asyncio.Task[None] | None:
        """Shutdown: close now if no request is being answered, else after its answer (returned task)."""
        self._close_when_idle = True
        if self._busy is None and self.handler is None and self.transport is not None:
            self.transport.close()
        return self._busy

    def _next(self) -> None:
        """Answer the buffered request if it is complete and ours to answer; hand over if it is not ours."""
        buffer = self._buffer
        if self._request_since is None:
            self._request_since = self._loop.time()
        end = buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(buffer) > MAX_HEAD_BYTES:
                self._hand_over()
            return
        parsed = self._parse_head(bytes(buffer[:end]))
        if parsed is None:
            self._hand_over()
            return
        method, path, query_string, headers, length, close = parsed
        total = end + 4 + length
        if len(buffer) < total:
            if self._head_since is None:
                self._head_since = self._loop.time()
            return
        self._request_since = self._head_since = None
        view = RequestView(method, path, query_string, CIMultiDictProxy(CIMultiDict(headers)), self.transport, self)
        if _streams(view):
            self._hand_over()
            return
        body = bytes(buffer[end + 4:total])
        del buffer[:total]
        self._busy = asyncio.get_running_loop().create_task(self._answer(view, body, close))

    def _parse_head(self, head: bytes) -> tuple[str, str, str, list[tuple[str, str]], int, bool] | None:
        """None: not a request this protocol answers (aiohttp will)."""
        if not head.isascii():
            return None
        lines = head.decode("ascii").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or parts[2] != "HTTP/1.1" or parts[0] not in _METHODS:
            return None
        method, target = parts[0], parts[1]
        path, _, query_string = target.partition("?")
        if not path.startswith("/") or "%" in path or "/." in path or "#" in target:
            return None
        headers: list[tuple[str, str]] = []
        length = -1
        close = False
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep or not name or name[-1] in " \t" or name[0] in " \t":
                return None
            lower = name.lower()
            value = value.strip(" \t")
            if lower in _HANDED_OVER:
                return None
            if lower == "content-length":
                if length >= 0 or not value.isdigit():
                    return None
                length = int(value)
                if length > self._max_body_bytes:
                    return None
            elif lower == "connection":
                close = "close" in value.lower()
            headers.append((name, value))
        return method, path, query_string, headers, max(length, 0), close

    async def _answer(self, view: RequestView, body: bytes, close: bool) -> None:
        try:
            reply = await self._serve(view, body)
        except Exception:  # noqa: BLE001 - the dispatch answers every error; this is a bug, not a request's fault
            log.exception("HTTP %s %s failed without an answer", view.method, view.path)
            if self.transport is not None:
                self.transport.close()
            return
        finally:
            self._busy = None
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        close = close or self._close_when_idle
        transport.write(reply.encode(_dates.now(), close))
        self.last_active = self._loop.time()
        self._answered += 1
        if close:
            transport.close()
            return
        if self._reading_paused:
            self._reading_paused = False
            transport.resume_reading()
        if self._buffer:
            self._next()

    def _hand_over(self) -> None:
        """From now on aiohttp serves this connection, starting with the buffered bytes."""
        self._connections.discard(self)
        handler = self._make_handler()
        self.handler = handler
        handler.connection_made(self.transport)
        if self._paused:
            handler.pause_writing()
        data = bytes(self._buffer)
        self._buffer.clear()
        if data:
            handler.data_received(data)


def _streams(view: RequestView) -> bool:
    """A watch, a log or an upgrade-only subresource: answered as a stream (by aiohttp)."""
    path = view.path
    if not path.startswith(("/api/", "/apis/")):
        return False
    if view.query_string and view.query.get("watch") in ("true", "True", "1"):
        return True
    try:
        route = rest.resource_route(path)
    except Exception:  # noqa: BLE001 - a bad path is answered (404) by the dispatch, not streamed
        return False
    return route is not None and (route.watch_prefix or route.subresource in _STREAMING)
