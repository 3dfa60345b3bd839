"""Simulated container logs, readable through pods/log (``kubectl logs [-f] [--tail N]``).

Each container instance (a restart is a new instance, as with containerd) has a bounded buffer of
lines: what its program prints (see :mod:`kconsole.nodes.runtime`), probe requests a server logs,
and ``[kconsole]`` lines saying when the simulated process started and exited. A follow stream
yields the existing lines, then new ones as they are written, and ends when the instance exits.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator

#: Lines kept per container instance (the runtime rotates logs; 10 MiB upstream).
MAX_LINES = 5000


class LogBuffer:
    """One container instance's log."""

    __slots__ = ("lines", "closed", "_waiters")

    def __init__(self) -> None:
        self.lines: deque[str] = deque(maxlen=MAX_LINES)
        self.closed = False
        self._waiters: list[asyncio.Queue[str | None]] = []

    def write(self, line: str) -> None:
        if self.closed:
            return
        self.lines.append(line)
        for q in self._waiters:
            q.put_nowait(line)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for q in self._waiters:
            q.put_nowait(None)

    def text(self, tail_lines: int | None = None) -> str:
        lines = list(self.lines)
        if tail_lines is not None:
            lines = lines[-tail_lines:] if tail_lines > 0 else []
        return "".join(f"{ln}\n" for ln in lines)

    def follow(self, tail_lines: int | None = None) -> LogFollower:
        return LogFollower(self, tail_lines)

    def _subscribe(self) -> asyncio.Queue[str | None]:
        q: asyncio.Queue[str | None] = asyncio.Queue()
        self._waiters.append(q)
        if self.closed:
            q.put_nowait(None)
        return q

    def _unsubscribe(self, q: asyncio.Queue[str | None]) -> None:
        if q in self._waiters:
            self._waiters.remove(q)


class LogFollower:
    """A followed log: the API server's LogStream (async-iterable lines, ``close()``)."""

    def __init__(self, buffer: LogBuffer, tail_lines: int | None) -> None:
        lines = list(buffer.lines)
        if tail_lines is not None:
            lines = lines[-tail_lines:] if tail_lines > 0 else []
        self._backlog = lines
        self._buffer = buffer
        self._queue = buffer._subscribe()
        self._closed = False

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        try:
            for line in self._backlog:
                yield line
            self._backlog = []
            while not self._closed:
                line = await self._queue.get()
                if line is None:
                    return
                yield line
        finally:
            self._buffer._unsubscribe(self._queue)

    async def close(self) -> None:
        self._closed = True
        self._queue.put_nowait(None)
        self._buffer._unsubscribe(self._queue)
