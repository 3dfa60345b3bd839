"""Background tasks of the API server (bootstrap retries, event TTL sweeps, its own control loops)."""

from __future__ import annotations

import asyncio
from typing import Any


async def cancel_and_wait(task: asyncio.Task[Any] | None) -> None:
    """Stop ``task`` and wait until it has: on shutdown, whatever it raised no longer matters."""
    if task is None or task.done():
        return
    task.cancel()
    try:
        await task
    except (asyncio.CancelledError, Exception):  # noqa: BLE001 - shutting down
        pass
