"""Simulated container logs, readable through pods/log (``kubectl logs [-f] [--tail N] [--since D]
[--timestamps] [--limit-bytes N] [--previous]``).

Each container instance (a restart is a new instance, as with containerd) has a bounded buffer of
lines, each kept with the simulated time it was written, as the CRI log file keeps them: what its
program prints (see :mod:`kconsole.nodes.runtime`; an image whose output it cannot know logs one
``[kconsole] <image> started`` line) and probe requests a server logs; nothing else, so a script
reading a Job's ``kubectl logs`` gets exactly the program's output. Reads apply the kubelet's ReadLogs
order: the tail first, then the since filter, the timestamp prefix, and the byte limit on what is
written. A follow stream yields the existing lines, then new ones as they are written, and ends when
the instance exits or the byte limit is reached.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable
from datetime import datetime, timezone

from kconsole.objects.podlog import LogOptions

#: Lines kept per container instance (the runtime rotates logs; 10 MiB upstream).
MAX_LINES = 5000

_Line = tuple[float, str]


def rfc3339_nano(t: float) -> str:
    """Go's ``time.RFC3339Nano`` (trailing fraction zeros dropped), to the microsecond a float holds."""
    micros = round(t * 1_000_000)
    seconds, frac = divmod(micros, 1_000_000)
    text = datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    if frac:
        text += "." + f"{frac:06d}".rstrip("0")
    return text + "Z"


def _tail(lines: list[_Line], tail_lines: int | None) -> list[_Line]:
    if tail_lines is None:
        return lines
    return lines[-tail_lines:] if tail_lines > 0 else []


class _Writer:
    """The kubelet's LogWriter: since filter, timestamp prefix, and the byte budget across lines."""

    __slots__ = ("options", "remain")

    def __init__(self, options: LogOptions) -> None:
        self.options = options
        self.remain = options.limit_bytes

    @property
    def full(self) -> bool:
        return self.remain is not None and self.remain <= 0

    def line(self, t: float, text: str) -> str | None:
        """The text to send for one stored line, or None when it is filtered out or nothing fits."""
        opts = self.options
        if (opts.since is not None and t < opts.since) or self.full:
            return None
        out = f"{rfc3339_nano(t)} {text}\n" if opts.timestamps else f"{text}\n"
        if self.remain is not None:
            data = out.encode()
            if len(data) > self.remain:
                cut = self.remain
                while cut < len(data) and data[cut] & 0xC0 == 0x80:
                    cut += 1  # inside a character: keep it whole here, the HTTP front sends the exact bytes
                out = data[:cut].decode()
                self.remain = 0
            else:
                self.remain -= len(data)
        return out


class LogBuffer:
    """One container instance's log."""

    __slots__ = ("lines", "closed", "_waiters", "_now")

    def __init__(self, now: Callable[[], float] = lambda: 0.0) -> None:
        self.lines: deque[_Line] = deque(maxlen=MAX_LINES)
        self.closed = False
        self._waiters: list[asyncio.Queue[_Line | None]] = []
        self._now = now

    def write(self, line: str) -> None:
        if self.closed:
            return
        entry = (self._now(), line)
        self.lines.append(entry)
        for q in self._waiters:
            q.put_nowait(entry)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for q in self._waiters:
            q.put_nowait(None)

    def text(self, options: LogOptions = LogOptions()) -> str:
        writer = _Writer(options)
        parts = []
        for t, line in _tail(list(self.lines), options.tail_lines):
            out = writer.line(t, line)
            if out is not None:
                parts.append(out)
            elif writer.full:
                break
        return "".join(parts)

    def follow(self, options: LogOptions = LogOptions()) -> LogFollower:
        return LogFollower(self, options)

    def _subscribe(self) -> asyncio.Queue[_Line | None]:
        q: asyncio.Queue[_Line | None] = asyncio.Queue()
        self._waiters.append(q)
        if self.closed:
            q.put_nowait(None)
        return q

    def _unsubscribe(self, q: asyncio.Queue[_Line | None]) -> None:
        if q in self._waiters:
            self._waiters.remove(q)


class LogFollower:
    """A followed log: the API server's LogStream (async-iterable lines without their newline, which
    the HTTP front adds, and ``close()``)."""

    def __init__(self, buffer: LogBuffer, options: LogOptions) -> None:
        self._backlog = _tail(list(buffer.lines), options.tail_lines)
        self._writer = _Writer(options)
        self._buffer = buffer
        self._queue = buffer._subscribe()
        self._closed = False

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        writer = self._writer
        try:
            for t, line in self._backlog:
                out = writer.line(t, line)
                if out:
                    yield out.removesuffix("\n")
                if writer.full:
                    return
            self._backlog = []
            while not self._closed:
                entry = await self._queue.get()
                if entry is None:
                    return
                out = writer.line(*entry)
                if out:
                    yield out.removesuffix("\n")
                if writer.full:
                    return
        finally:
            self._buffer._unsubscribe(self._queue)

    async def close(self) -> None:
        self._closed = True
        self._queue.put_nowait(None)
        self._buffer._unsubscribe(self._queue)
