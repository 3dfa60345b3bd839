"""A kubelet's link to the API server, which a partition cuts and a crash closes.

Each kubelet incarnation talks through its own :class:`GatedEntry` wrapped around the API server's
entry. While partitioned, requests fail like an unreachable server (``ConnectionRefusedError``),
so the event recorder retries and the heartbeat backs off exactly as they would; once the kubelet
is stopped, the old incarnation's requests are refused with a 503 so nothing it queued lands late.
"""

from __future__ import annotations

from typing import Any

from kconsole.client import StatusError


class LinkDown(ConnectionRefusedError):
    """The node cannot reach the API server."""


class GatedEntry:
    """An :class:`~kconsole.api.types.Entry` that can be cut."""

    def __init__(self, entry: Any, address: str) -> None:
        self._entry = entry
        self.address = address
        self.partitioned = False
        self.closed = False

    async def handle(self, request: Any) -> Any:
        if self.closed:
            raise StatusError.unavailable("kubelet stopped")
        if self.partitioned:
            raise LinkDown(f"dial tcp {self.address}:6443: connect: no route to host")
        return await self._entry.handle(request)

    def resources(self) -> Any:
        return self._entry.resources()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._entry, name)
