"""The API request log: a bounded ring of audit records plus live followers.

Every request the API server answers lands here once. Followers (the console's request panel) get
new records through their own bounded queue; a follower that falls behind loses records rather than
slowing the API server, and its ``dropped`` count says how many.

The server hands a request's fields as a plain tuple (:meth:`AuditLog.add_row`): most records are
overwritten before anyone reads them, and building the frozen record (keyword call, one
``object.__setattr__`` per field) cost more than the rest of the bookkeeping. A row becomes its
:class:`AuditRecord` once, when first read or when a follower is waiting for it.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

from kconsole.api.types import AuditRecord

#: An AuditRecord's fields, in its order, not yet made into one.
AuditRow = tuple[Any, ...]


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
        if capacity <= 0:
            raise ValueError(f"audit capacity must be positive, not {capacity}")
        #: A ring by position (``added % capacity``), so a row read is replaced by its record in place.
        self._ring: list[AuditRecord | AuditRow | None] = [None] * capacity
        self._added = 0
        self._seq = itertools.count(1)
        self._followers: set[AuditFollower] = set()
        self.follower_capacity = follower_capacity

    def next_seq(self) -> int:
        return next(self._seq)

    def add(self, record: AuditRecord) -> None:
        self._store(record)
        for follower in self._followers:
            follower._push(record)

    def add_row(self, row: AuditRow) -> None:
        """A record given as its fields in :class:`AuditRecord` order; made into one only when read."""
        if self._followers:
            self.add(AuditRecord(*row))
        else:
            self._store(row)

    def _store(self, item: AuditRecord | AuditRow) -> None:
        ring = self._ring
        ring[self._added % len(ring)] = item
        self._added += 1

    def recent(self, n: int = 500) -> list[AuditRecord]:
        ring = self._ring
        size = len(ring)
        n = min(n, self._added, size)
        out: list[AuditRecord] = []
        for i in range(self._added - n, self._added):
            at = i % size
            item = ring[at]
            if type(item) is tuple:
                item = ring[at] = AuditRecord(*item)
            out.append(item)  # type: ignore[arg-type]
        return out

    def follow(self) -> AuditFollower:
        follower = AuditFollower(self, self.follower_capacity)
        self._followers.add(follower)
        return follower

    def __len__(self) -> int:
        return min(self._added, len(self._ring))

    @property
    def total(self) -> int:
        """Records ever added, including those the ring has since dropped."""
        return self._added
