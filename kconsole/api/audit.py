"""The API request log: a bounded ring of audit records plus live followers.

Every request the API server answers lands here once. Followers (the console's request panel) get
new records through their own bounded queue; a follower that falls behind loses records rather than
slowing the API server, and its ``dropped`` count says how many.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import deque
from collections.abc import AsyncIterator

from kconsole.api.types import AuditRecord


class AuditFollower:
    """An async iterator of new records; close it (or stop iterating) to unsubscribe."""

    def __init__(self, log: AuditLog, capacity: int) -> None:
        self._log = log
        self._queue: deque[AuditRecord] = deque()
        self._capacity = capacity
        self._waiter: asyncio.Future[None] | None = None
        self._closed = False
        self.dropped = 0

    def _push(self, record: AuditRecord) -> None:
        if len(self._queue) >= self._capacity:
            self.dropped += 1
            return
        self._queue.append(record)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def __aiter__(self) -> AsyncIterator[AuditRecord]:
        return self

    async def __anext__(self) -> AuditRecord:
        while not self._queue:
            if self._closed:
                raise StopAsyncIteration
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return self._queue.popleft()

    def close(self) -> None:
        self._closed = True
        self._log._followers.discard(self)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def aclose(self) -> None:
        self.close()


class AuditLog:
    def __init__(self, capacity: int = 10_000, follower_capacity: int = 1_000) -> None:
        self._ring: deque[AuditRecord] = deque(maxlen=capacity)
        self._seq = itertools.count(1)
        self._followers: set[AuditFollower] = set()
        self.follower_capacity = follower_capacity

    def next_seq(self) -> int:
        return next(self._seq)

    def add(self, record: AuditRecord) -> None:
        self._ring.append(record)
        for follower in self._followers:
            follower._push(record)

    def recent(self, n: int = 500) -> list[AuditRecord]:
        if n <= 0:
            return []
        ring = self._ring
        if n >= len(ring):
            return list(ring)
        return list(itertools.islice(ring, len(ring) - n, None))

    def follow(self) -> AuditFollower:
        follower = AuditFollower(self, self.follower_capacity)
        self._followers.add(follower)
        return follower

    def __len__(self) -> int:
        return len(self._ring)
