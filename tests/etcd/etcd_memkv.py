"""An in-memory KV (the subset of the revision log the members use) for Raft tests without SQLite.

It keeps every key's full history so ranges at past revisions and watches from a revision work,
and it yields to the loop between transactions of a batch so a simulated crash can land mid-batch,
exactly where the member's recovery has to work out what was applied.
"""

from __future__ import annotations

import asyncio
import marshal
from collections.abc import AsyncIterator
from typing import Any

from kconsole.store.kv import (
    CompactedError,
    Compare,
    Delete,
    Event,
    FutureRevisionError,
    Get,
    KeyValue,
    Op,
    Put,
    RangeResult,
    Status,
    TxnResult,
    WatchResponse,
)
from kconsole.store.raft.codec import Command


class MemKV:
    def __init__(self) -> None:
        self.rev = 0
        self.compact_rev = 0
        self.hist: dict[str, list[KeyValue]] = {}  # per key, every write (deletes have version 0)
        self.events: list[Event] = []
        self.watchers: list[asyncio.Queue[WatchResponse]] = []

    @property
    def revision(self) -> int:
        return self.rev

    def _at(self, key: str, revision: int) -> KeyValue | None:
        for kv in reversed(self.hist.get(key, ())):
            if kv.mod_revision <= revision:
                return kv if kv.version else None
        return None

    def _keys(self, key: str, end: str | None) -> list[str]:
        if end is None:
            return [key]
        return sorted(k for k in self.hist if k >= key and (end == "\0" or k < end))

    async def range(self, key: str, end: str | None = None, *, revision: int = 0, limit: int = 0,
                    count_only: bool = False, keys_only: bool = False, serializable: bool = False) -> RangeResult:
        rev = revision or self.rev
        if rev > self.rev:
            raise FutureRevisionError()
        if revision and revision < self.compact_rev:
            raise CompactedError(self.compact_rev)
        kvs = [kv for k in self._keys(key, end) if (kv := self._at(k, rev))]
        count = len(kvs)
        more = bool(limit) and count > limit
        if limit:
            kvs = kvs[:limit]
        return RangeResult([] if count_only else kvs, count, more, self.rev)

    def _cmp(self, c: Compare) -> bool:
        kv = self._at(c.key, self.rev)
        have: Any = {"mod": kv.mod_revision if kv else 0, "create": kv.create_revision if kv else 0,
                     "version": kv.version if kv else 0, "value": kv.value if kv else b""}[c.target]
        return {"=": have == c.value, "!=": have != c.value, "<": have < c.value, ">": have > c.value}[c.op]

    async def txn(self, compares: list[Compare], success: list[Op], failure: list[Op] | None = None) -> TxnResult:
        ok = all(self._cmp(c) for c in compares)
        ops = success if ok else (failure or [])
        new_rev = self.rev + 1
        events: list[Event] = []
        responses: list[object] = []
        for op in ops:
            if isinstance(op, Get):
                responses.append(await self.range(op.key, op.end))
            elif isinstance(op, Put):
                prev = self._at(op.key, self.rev) if not events else self._latest(op.key)
                kv = KeyValue(op.key, op.value, prev.create_revision if prev else new_rev, new_rev,
                              (prev.version if prev else 0) + 1, op.lease)
                self.hist.setdefault(op.key, []).append(kv)
                events.append(Event("PUT", kv, prev))
                responses.append(prev)
            elif isinstance(op, Delete):
                gone = []
                for k in self._keys(op.key, op.end):
                    prev = self._latest(k)
                    if prev:
                        tomb = KeyValue(k, b"", 0, new_rev, 0)
                        self.hist[k].append(tomb)
                        events.append(Event("DELETE", tomb, prev))
                        gone.append(prev)
                responses.append(gone if op.end is not None else (gone[0] if gone else None))
        if events:
            self.rev = new_rev
            self.events.extend(events)
            for q in self.watchers:
                q.put_nowait(WatchResponse(events, new_rev))
        return TxnResult(ok, self.rev, responses)

    def _latest(self, key: str) -> KeyValue | None:
        h = self.hist.get(key)
        return h[-1] if h and h[-1].version else None

    async def compact(self, revision: int) -> None:
        if revision > self.rev:
            raise FutureRevisionError()
        if revision <= self.compact_rev:
            raise CompactedError(self.compact_rev)
        self.compact_rev = revision

    def watch(self, key: str, end: str | None = None, *, start_revision: int = 0, prev_kv: bool = True,
              progress_notify: bool = False) -> AsyncIterator[WatchResponse]:
        return self._watch(key, end, start_revision)

    async def _watch(self, key: str, end: str | None, start: int) -> AsyncIterator[WatchResponse]:
        q: asyncio.Queue[WatchResponse] = asyncio.Queue()
        self.watchers.append(q)
        try:
            start = start or self.rev + 1
            if start < self.compact_rev:
                yield WatchResponse([], self.rev, canceled=True, compact_revision=self.compact_rev)
                return
            mine = lambda e: e.kv.mod_revision >= start and (  # noqa: E731
                e.kv.key == key if end is None else (e.kv.key >= key and (end == "\0" or e.kv.key < end)))
            past = [e for e in self.events if mine(e)]
            seen = self.rev
            if past:
                yield WatchResponse(past, seen)
            while True:
                resp = await q.get()
                events = [e for e in resp.events if mine(e) and e.kv.mod_revision > seen]
                if events:
                    yield WatchResponse(events, resp.revision)
        finally:
            self.watchers.remove(q)

    async def status(self) -> Status:
        live = sum(1 for k in self.hist if self._latest(k))
        size = sum(len(kv.value) + len(kv.key) for h in self.hist.values() for kv in h)
        return Status(self.rev, self.compact_rev, size, size, live)

    async def close(self) -> None:
        pass

    def dump(self) -> bytes:
        return marshal.dumps((self.rev, self.compact_rev, [
            (k, [(kv.value, kv.create_revision, kv.mod_revision, kv.version) for kv in h])
            for k, h in self.hist.items()]))

    def load(self, image: bytes) -> None:
        self.rev, self.compact_rev, hist = marshal.loads(image)
        self.hist = {k: [KeyValue(k, v, c, m, ver) for v, c, m, ver in h] for k, h in hist}
        self.events = sorted(
            (Event("PUT" if kv.version else "DELETE", kv, None) for h in self.hist.values() for kv in h),
            key=lambda e: e.kv.mod_revision)


class MemMachine:
    """A member's state machine over a :class:`MemKV` that survives the member's crash (its 'disk')."""

    def __init__(self, disk: MemKV) -> None:
        self.disk = disk
        self.applied_log: list[tuple[int, Command]] = []

    @property
    def kv(self) -> MemKV:
        return self.disk

    @property
    def revision(self) -> int:
        return self.disk.rev

    async def apply(self, commands: list[Command], answers: bool = True) -> list[object]:
        out: list[object] = []
        for cmd in commands:
            if cmd[0] == "t":
                out.append(await self.disk.txn(*cmd[1:]))
            elif cmd[0] == "c":
                try:
                    await self.disk.compact(cmd[1])
                    out.append(None)
                except Exception as err:  # noqa: BLE001
                    out.append(err)
            else:
                out.append(None)
            await asyncio.sleep(0)  # let a crash land between two transactions of one batch
        return out

    async def image(self) -> bytes:
        return self.disk.dump()

    async def install(self, image: bytes) -> None:
        self.disk.load(image)

    async def status(self) -> Status:
        return await self.disk.status()

    async def close(self) -> None:
        pass
