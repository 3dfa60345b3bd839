"""Helpers for tests/attach: the served process and wall-clock waits on conditions."""

from __future__ import annotations

import asyncio
import os
import select
import subprocess
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Generous wall-clock bound for a condition on a real cluster (a failure, never a measurement).
BOUND = 90.0


@dataclass
class Served:
    proc: subprocess.Popen[str]
    folder: Path
    kubeconfig: Path


def read_until(proc: subprocess.Popen[str], needle: str, timeout: float) -> str:
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    seen = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and needle.encode() not in seen:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            seen += chunk
    return seen.decode(errors="replace")


async def eventually(pred: Callable[[], Any | Awaitable[Any]], what: str, bound: float = BOUND,
                     pilot: Any = None) -> Any:
    """Poll ``pred`` (wall clock: the served cluster runs on its own) until it is truthy."""
    deadline = time.monotonic() + bound
    while True:
        if pilot is not None:
            await pilot.pause()
            if getattr(pilot.app, "ready", False):
                pilot.app.render_pending(force=True)
        result = pred()
        if isinstance(result, Awaitable):
            result = await result
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {bound:g} s: {what}")
        await asyncio.sleep(0.25)
