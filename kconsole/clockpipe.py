"""A child process's simulated clock kept with its parent's, over the child's stdin.

The processes ``--processes`` and ``--replica-processes`` start run their own
:class:`~kconsole.clock.RealClock` from the parent's time and speed. When the console changes the
speed, pauses, resumes or steps, the parent writes one JSON line (``now``, ``speed``, ``paused``)
to each child's stdin and the child's clock follows; the child stops when its stdin closes.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from kconsole.clock import Clock

log = logging.getLogger(__name__)


def clock_line(clock: Clock) -> bytes:
    """What the parent sends after its clock changed."""
    return json.dumps({"now": clock.now(), "speed": clock.speed, "paused": clock.paused}).encode() + b"\n"


async def spawn(module: str, spec: dict[str, Any], clock: Clock) -> asyncio.subprocess.Process:
    """Start ``python -m module`` with this tree importable, its spec and the parent's clock on stdin;
    its stdout and stderr come back on one pipe."""
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (root, os.environ.get("PYTHONPATH"))))}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", module, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(spec).encode() + b"\n" + clock_line(clock))
    await proc.stdin.drain()
    return proc


def send_clock(proc: Any, clock: Clock) -> None:
    """Write the clock line to a running child's stdin (a child that is gone is left alone)."""
    stdin = getattr(proc, "stdin", None)
    if proc is None or proc.returncode is not None or stdin is None or stdin.is_closing():
        return
    try:
        stdin.write(clock_line(clock))
    except (ConnectionError, RuntimeError):
        pass


def read_spec() -> tuple[dict[str, Any], bytes]:
    """In the child: the first line of stdin (its JSON spec), and what was read past it."""
    fd = sys.stdin.fileno()
    data = b""
    while b"\n" not in data:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            raise SystemExit("no spec on stdin")
        data += chunk
    line, rest = data.split(b"\n", 1)
    return json.loads(line), rest


async def follow_stdin(clock: Any, stop: asyncio.Event, pending: bytes = b"") -> None:
    """In the child: apply each clock line to ``clock``; set ``stop`` when stdin closes."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    reader.feed_data(pending)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(sys.stdin.fileno(), "rb", 0))
    try:
        while line := await reader.readline():
            try:
                state = json.loads(line)
                clock.follow(float(state["now"]), float(state["speed"]), bool(state["paused"]))
            except (ValueError, KeyError, TypeError) as err:
                log.warning("ignoring a clock line from the parent: %s", err)
    finally:
        stop.set()
