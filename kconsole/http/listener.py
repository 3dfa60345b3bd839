"""Accepting connections for the HTTP front, within the process's file descriptors.

asyncio's own accept loop, once ``accept()`` fails with EMFILE, keeps calling it for the rest of
its batch (1,024 tries with the front's backlog), logging each failure and scheduling a retry for
each: at a 1,024-descriptor limit a flood of idle connections logged millions of lines a minute
and starved the event loop. This listener instead:

- keeps at most ``max_connections`` connections open (by default the descriptor limit less a
  reserve for the store, the watcher and the rest of the process); at the cap it closes the
  connection idle the longest (a keep-alive client reconnects when it next needs to), and when
  none is idle it stops accepting until one closes (the kernel's backlog holds the rest);
- on EMFILE/ENFILE/ENOBUFS/ENOMEM backs off as Go's ``http.Server`` does (5 ms doubling to 1 s),
  freeing an idle connection if there is one, and logs at most one line per 10 s saying how many
  accepts failed.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import resource
import socket
import ssl
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

#: Descriptors left for everything but client connections (store files, WAL, watcher, pipes, logs).
RESERVE_FDS = 128
_OUT_OF_RESOURCES = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)
_BACKOFF_MIN = 0.005
_BACKOFF_MAX = 1.0
_LOG_EVERY = 10.0
_ACCEPT_BATCH = 64


def default_max_connections() -> int:
    """The descriptor limit (soft) less :data:`RESERVE_FDS`, at least 16."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        soft = 65536
    return max(16, soft - max(RESERVE_FDS, soft // 8))


class Listener:
    """Listens on ``address:port`` and hands each accepted socket to ``protocol_factory``.

    ``evict()`` closes the connection idle the longest and returns whether there was one; every
    connection made must call :meth:`release` once when it ends (the count of open connections).
    """

    def __init__(self, protocol_factory: Callable[[], asyncio.Protocol], *, ssl_context: ssl.SSLContext | None,
                 max_connections: int, evict: Callable[[], bool], backlog: int = 1024,
                 handshake_timeout: float = 32.0) -> None:
        self._factory = protocol_factory
        self._ssl = ssl_context
        self.max_connections = max_connections
        self._evict = evict
        self._backlog = backlog
        #: A TLS handshake not done within this many seconds ends its connection (a header's limit).
        self._handshake_timeout = handshake_timeout
        self._sockets: list[socket.socket] = []
        self._loop = asyncio.get_running_loop()
        self._reading = False
        self._closed = False
        self._retry: asyncio.TimerHandle | None = None
        self._backoff = 0.0
        self._failures = 0
        self._last_log = -_LOG_EVERY
        self._handshakes: set[asyncio.Task[Any]] = set()
        #: Connections accepted and not yet released (a TLS handshake in progress counts).
        self.open = 0
        #: Times the cap closed an idle connection, and accepts that failed for lack of resources.
        self.evicted = 0
        self.accept_failures = 0

    @property
    def port(self) -> int:
        return int(self._sockets[0].getsockname()[1]) if self._sockets else 0

    def bind(self, address: str, port: int) -> None:
        """Bind every address ``address`` resolves to (all interfaces for ""), as asyncio's server does."""
        infos = socket.getaddrinfo(address or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        seen: set[tuple[Any, ...]] = set()
        for family, kind, proto, _, sockaddr in infos:
            if (family, sockaddr) in seen:
                continue
            seen.add((family, sockaddr))
            if port == 0 and self._sockets:  # the other families listen on the port the first one got
                sockaddr = (sockaddr[0], self.port, *sockaddr[2:])
            sock = socket.socket(family, kind, proto)
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                if family == socket.AF_INET6:
                    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                sock.bind(sockaddr)
                sock.listen(self._backlog)
                sock.setblocking(False)
            except OSError:
                sock.close()
                self.close()
                raise
            self._sockets.append(sock)

    def start(self) -> None:
        self._resume()

    def close(self) -> None:
        self._closed = True
        self._pause()
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
        for sock in self._sockets:
            sock.close()
        self._sockets.clear()
        for task in self._handshakes:
            task.cancel()

    def release(self) -> None:
        """A connection ended: one more may be accepted."""
        self.open -= 1
        if not self._reading and self._retry is None and not self._closed and self.open < self.max_connections:
            self._resume()

    # ------------------------------------------------------------------ accepting

    def _resume(self) -> None:
        if self._reading or self._closed:
            return
        self._reading = True
        for sock in self._sockets:
            self._loop.add_reader(sock.fileno(), self._accept, sock)

    def _pause(self) -> None:
        if not self._reading:
            return
        self._reading = False
        for sock in self._sockets:
            if sock.fileno() >= 0:
                self._loop.remove_reader(sock.fileno())

    def _accept(self, sock: socket.socket) -> None:
        for _ in range(_ACCEPT_BATCH):
            if self.open >= self.max_connections:
                if not self._evict():
                    self._pause()  # until a connection ends
                    return
                self.evicted += 1
            try:
                conn, _ = sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except ConnectionAbortedError:
                continue
            except OSError as err:
                if err.errno not in _OUT_OF_RESOURCES:
                    log.warning("accept on %s failed: %s", sock.getsockname(), err)
                    return
                self._out_of_resources(err)
                return
            self._backoff = 0.0
            conn.setblocking(False)
            self.open += 1
            task = self._loop.create_task(self._connect(conn))
            self._handshakes.add(task)
            task.add_done_callback(self._handshakes.discard)

    async def _connect(self, conn: socket.socket) -> None:
        try:
            if self._ssl is None:
                await self._loop.connect_accepted_socket(self._factory, conn)
            else:
                await self._loop.connect_accepted_socket(self._factory, conn, ssl=self._ssl,
                                                         ssl_handshake_timeout=self._handshake_timeout)
        except Exception as err:  # noqa: BLE001 - a failed TLS handshake or a peer gone: that connection only
            log.debug("connection setup failed: %s", err)
            conn.close()
            self.release()

    def _out_of_resources(self, err: OSError) -> None:
        """Back off (5 ms doubling to 1 s), free an idle connection if any, log at most every 10 s."""
        self.accept_failures += 1
        self._failures += 1
        if self._evict():
            self.evicted += 1
        self._backoff = min(_BACKOFF_MAX, self._backoff * 2 if self._backoff else _BACKOFF_MIN)
        now = self._loop.time()
        if now - self._last_log >= _LOG_EVERY:
            log.error("accept failed %d time(s) in the last %.0f s: %s; %d connections open; retrying in %.0f ms",
                      self._failures, min(_LOG_EVERY, now - self._last_log), err.strerror, self.open,
                      self._backoff * 1000)
            self._failures = 0
            self._last_log = now
        self._pause()
        self._retry = self._loop.call_later(self._backoff, self._retry_accept)

    def _retry_accept(self) -> None:
        self._retry = None
        self._resume()
