"""Plain HTTP on the TLS port gets Go's answer instead of a silent close.

Go's http.Server looks at the first five bytes of a connection to a TLS listener: when they read like
an HTTP request (``GET /``, ``HEAD ``, ``POST ``, ``PUT /``, ``OPTIO``) it writes
``HTTP/1.0 400 Bad Request`` with "Client sent an HTTP request to an HTTPS server." and closes, so
``curl http://`` against kube-apiserver says what is wrong. Python's TLS layer would only fail the
handshake. :class:`TLSSniffer` reads those bytes first, then either answers them so or starts TLS on
the connection (``loop.start_tls``), hands the bytes it read to the TLS protocol, and passes the
decrypted connection to the real protocol as if TLS had been there from the start.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

#: What Go's net/http writes (server.go), byte for byte.
PLAIN_HTTP_ANSWER = b"HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n"
#: Go's tlsRecordHeaderLooksLikeHTTP.
HTTP_HEADS = (b"GET /", b"HEAD ", b"POST ", b"PUT /", b"OPTIO")
HEAD = 5


class TLSSniffer(asyncio.Protocol):
    """The protocol of one raw connection until its first bytes tell whether it speaks TLS; then the
    TLS layer's application protocol, forwarding everything to the real one."""

    def __init__(self, make_app: Callable[[], asyncio.Protocol], context: ssl.SSLContext, *,
                 handshake_timeout: float, abandoned: Callable[[], None]) -> None:
        self._make_app = make_app
        self._context = context
        #: The first bytes and the TLS handshake must be done within this many (real) seconds.
        self._handshake_timeout = handshake_timeout
        #: Called once when the connection ends before the real protocol had it (which then releases).
        self._abandoned: Callable[[], None] | None = abandoned
        self._expiry: asyncio.TimerHandle | None = None
        self._raw: asyncio.Transport | None = None
        self._head = b""
        self._app: asyncio.Protocol | None = None
        self._pending: list[bytes] = []
        self._ready = False
        self._loop = asyncio.get_running_loop()

    # ------------------------------------------------------------------ raw side, before TLS

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if self._raw is None:
            self._raw = transport  # type: ignore[assignment]
            self._expiry = self._loop.call_later(self._handshake_timeout, self._expire)

    def _expire(self) -> None:
        """A connection silent or still in its handshake past the header timeout is closed."""
        if not self._ready and self._raw is not None:
            self._raw.close()
            self._abandon()

    def _abandon(self) -> None:
        if self._expiry is not None:
            self._expiry.cancel()
        abandoned, self._abandoned = self._abandoned, None
        if abandoned is not None:
            abandoned()

    def data_received(self, data: bytes) -> None:
        if self._app is not None:  # decrypted data of the TLS connection
            if self._ready:
                self._app.data_received(data)
            else:
                self._pending.append(data)
            return
        self._head += data
        if len(self._head) < HEAD:
            return
        raw = self._raw
        assert raw is not None
        if self._head[:HEAD] in HTTP_HEADS:
            raw.write(PLAIN_HTTP_ANSWER)
            raw.close()
            self._abandon()
            return
        raw.pause_reading()  # from here on, what arrives is TLS's decrypted data
        self._app = self._make_app()
        self._loop.create_task(self._start_tls(raw, self._head), name="tls-handshake")

    async def _start_tls(self, raw: asyncio.Transport, first: bytes) -> None:
        self._loop.call_soon(self._feed, raw, first)
        try:
            tls = await self._loop.start_tls(raw, self, self._context, server_side=True,
                                             ssl_handshake_timeout=self._handshake_timeout)
        except (OSError, ssl.SSLError, ConnectionError, TimeoutError) as err:
            log.debug("TLS handshake failed: %s", err)
            raw.close()
            self._abandon()
            return
        if tls is None:
            self._abandon()
            return
        app = self._app
        assert app is not None
        if self._expiry is not None:
            self._expiry.cancel()
        self._abandoned = None
        app.connection_made(tls)
        self._ready = True
        for data in self._pending:
            app.data_received(data)
        self._pending.clear()

    def _feed(self, raw: asyncio.Transport, first: bytes) -> None:
        """Give the TLS protocol the bytes read while sniffing, once start_tls has installed it."""
        if raw.is_closing():
            return
        proto: Any = raw.get_protocol()
        if proto is self:
            self._loop.call_soon(self._feed, raw, first)
            return
        if isinstance(proto, asyncio.BufferedProtocol):
            view = memoryview(first)
            while view:
                buf = proto.get_buffer(len(view))
                n = min(len(buf), len(view))
                buf[:n] = view[:n]
                proto.buffer_updated(n)
                view = view[n:]
        else:
            proto.data_received(first)

    # ------------------------------------------------------------------ TLS side

    def eof_received(self) -> bool | None:
        if self._app is not None and self._ready:
            return self._app.eof_received()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        if self._app is not None and self._ready:
            self._app.connection_lost(exc)
        else:
            self._abandon()

    def pause_writing(self) -> None:
        if self._app is not None and self._ready:
            self._app.pause_writing()

    def resume_writing(self) -> None:
        if self._app is not None and self._ready:
            self._app.resume_writing()
