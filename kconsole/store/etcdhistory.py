"""History on real etcd: the revisions etcd keeps until it is compacted, read as the embedded store's.

etcd keeps every revision of every key until it is compacted, and kconsole schedules the compaction
(kube-apiserver's compactor, :meth:`RealEtcd.compact_once`). So the history needs no copy of the
data: API compaction only *marks* revisions as gone for API clients (:attr:`EtcdHistory.compacted`,
held in the value of ``compact_rev_key`` as upstream writes it, so a restart or another API server
agrees), and real etcd is compacted only down to the **history floor**, bounded like the embedded
store's by ``history-retention`` and ``history-max-bytes``. Reads and watches below the API's
compacted revision still answer ``compacted`` (410 upstream); history reads go down to the floor.

- ``listAt`` is a range at the revision (etcd serves any kept revision).
- ``changes`` reads the API server's own writes back by key: it notes which keys each of its
  writes changed, so a window whose every revision it wrote is two ranges per write (the key at
  its revision and at the one before), batched in read-only transactions. Otherwise (someone else
  wrote in the window, or it is large) one watch from ``after + 1`` with ``prev_kv``: filtered by
  key on the server, every write in revision order with its previous value, deletes included. Not
  always the watch: etcd 3.4 catches a watch up by reading every revision from its start to now,
  so a one-revision step far back would cost the whole history since. A watch has no end, so it
  is opened over a range that holds a key written at or after ``upto`` (found with one keys-only
  range): its event arrives after every earlier one, and ends the read. (A progress request would
  end it too, but etcd 3.4 answers it before a catching-up watcher's events.)
- Revision times are kept in a sidecar SQLite file in the data folder (``history/etcd-revtime.sqlite``),
  one row each time the clock moves, with the bytes this API server wrote, and the keys each of its
  writes changed (no values): not in etcd, because
  every key written there is a revision of its own (a time key in each write's transaction would
  add a key version to every write, change which transactions make a revision, and still need a
  read per revision to tell a time), and because ``timeOf``/``revisionAt`` answer from memory.
  Revisions written by other clients take the time of the mark before them.
- The size bound: etcd's ``dbSizeInUse`` (maintenance status) says how many bytes are over
  ``history-max-bytes`` (or half of etcd's quota, if smaller: history must not raise NOSPACE); the
  byte counts of the marks say which oldest revisions to drop to free about that many. Live
  objects cannot be dropped: past the bound by them alone, no history is kept.
"""

from __future__ import annotations

import asyncio
import base64
import bisect
import contextlib
import logging
import sqlite3
from pathlib import Path
from typing import Any

from kconsole.store.etcdgw import COMPACT_KEY, RealEtcd, _b64, _kv
from kconsole.store.kv import (
    CompactedError,
    Compare,
    Delete,
    Event,
    FutureRevisionError,
    KeyValue,
    Op,
    Put,
    RangeResult,
    StoreError,
    TxnResult,
    UnavailableError,
    WatchResponse,
)

log = logging.getLogger(__name__)

#: The sidecar file under the data folder's ``history`` folder.
REVTIME_FILE = "etcd-revtime.sqlite"
#: Bytes a write costs beyond its key and value (as the embedded store counts).
ROW_BYTES = 64
#: Marks kept in memory only, at most, before they are appended to the file (a crash loses no more).
SAVE_EVERY = 1000
#: Writes a history read reads by key at most (more are read with one watch).
INDEX_MOST = 2000
#: Ranges in one read-only transaction (etcd's --max-txn-ops defaults to 128).
TXN_OPS = 128
#: Wall seconds a history watch may take to deliver its window.
CHANGES_TIMEOUT = 30.0


class RevTimes:
    """Revision -> simulated time marks (and bytes written), in memory and in a SQLite file."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.revs: list[int] = []
        self.times: list[float] = []
        self.bytes: list[int] = []  # bytes this client had written before each mark's revision
        self.written = 0
        self._unsaved = 0
        #: (revision, op index, key, deleted) of this client's writes not in the file yet.
        self._keys: list[tuple[int, int, str, int]] = []
        self._db: sqlite3.Connection | None = None

    def open(self) -> None:
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        db = self._db = sqlite3.connect(str(self.path) if self.path is not None else ":memory:",
                                        isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("CREATE TABLE IF NOT EXISTS revtime (rev INTEGER PRIMARY KEY, time REAL, bytes INTEGER)")
        db.execute("CREATE TABLE IF NOT EXISTS revkey (rev INTEGER, sub INTEGER, key TEXT, deleted INTEGER, "
                   "PRIMARY KEY (rev, sub)) WITHOUT ROWID")
        db.execute("CREATE INDEX IF NOT EXISTS revkey_key ON revkey (key, rev)")
        db.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value)")
        for rev, t, b in db.execute("SELECT rev, time, bytes FROM revtime ORDER BY rev"):
            self.revs.append(rev)
            self.times.append(t)
            self.bytes.append(b)
        row = db.execute("SELECT value FROM meta WHERE name = 'written'").fetchone()
        self.written = int(row[0]) if row else (self.bytes[-1] if self.bytes else 0)
        self._unsaved = len(self.revs)

    def mark(self, revision: int, time: float, cost: int) -> None:
        """Revision ``revision`` was written at ``time``, costing ``cost`` bytes."""
        if not self.revs or (time != self.times[-1] and revision > self.revs[-1]):
            self.revs.append(revision)
            self.times.append(time)
            self.bytes.append(self.written)
            if len(self.revs) - self._unsaved >= SAVE_EVERY:
                self.save()
        self.written += cost

    def bind(self, cluster_id: str) -> None:
        """Marks and keys are of the etcd cluster ``cluster_id``: another one's (the data folder
        pointed at a new etcd) are dropped, since its revisions are not these."""
        db = self._db
        if db is None:
            return
        row = db.execute("SELECT value FROM meta WHERE name = 'cluster'").fetchone()
        if row is not None and str(row[0]) == cluster_id:
            return
        if row is not None:
            log.info("revision times of another etcd cluster (%s) dropped", row[0])
            db.execute("DELETE FROM revtime")
            db.execute("DELETE FROM revkey")
            self.revs.clear(), self.times.clear(), self.bytes.clear(), self._keys.clear()
            self.written = self._unsaved = 0
        db.execute("INSERT OR REPLACE INTO meta VALUES ('cluster', ?)", (cluster_id,))

    def wrote(self, revision: int, keys: list[tuple[str, bool]]) -> None:
        """Revision ``revision`` wrote these keys (True: deleted), in the transaction's order."""
        if self._db is None:
            return
        self._keys.extend((revision, i, key, int(deleted)) for i, (key, deleted) in enumerate(keys))
        if len(self._keys) >= SAVE_EVERY:
            self.save()

    def written_in(self, key: str, end: str | None, after: int, upto: int, most: int
                   ) -> list[tuple[int, str, bool]] | None:
        """The (revision, key, deleted) writes to ``[key, end)`` in ``(after, upto]``, oldest first,
        when every revision of the window is one of this client's writes and there are at most
        ``most`` of them; None otherwise (the window must be read from etcd's revisions)."""
        db = self._db
        if db is None:
            return None
        self.save()
        known = db.execute("SELECT COUNT(DISTINCT rev) FROM revkey WHERE rev > ? AND rev <= ?",
                           (after, upto)).fetchone()[0]
        if known != upto - after:
            return None
        if end is None:
            rows = db.execute("SELECT rev, key, deleted FROM revkey WHERE key = ? AND rev > ? AND rev <= ? "
                              "ORDER BY rev, sub LIMIT ?", (key, after, upto, most + 1)).fetchall()
        elif end == "\0":
            rows = db.execute("SELECT rev, key, deleted FROM revkey WHERE rev > ? AND rev <= ? AND key >= ? "
                              "ORDER BY rev, sub LIMIT ?", (after, upto, key, most + 1)).fetchall()
        else:
            rows = db.execute("SELECT rev, key, deleted FROM revkey WHERE rev > ? AND rev <= ? AND key >= ? "
                              "AND key < ? ORDER BY rev, sub LIMIT ?", (after, upto, key, end, most + 1)).fetchall()
        if len(rows) > most:
            return None
        return [(rev, k, bool(d)) for rev, k, d in rows]

    def save(self) -> None:
        """Append the marks and keys written since the last save (and the bytes count)."""
        if self._db is None:
            return
        if self._keys:
            self._db.executemany("INSERT OR IGNORE INTO revkey VALUES (?, ?, ?, ?)", self._keys)
            self._keys.clear()
        new = len(self.revs) - self._unsaved
        if new > 0:
            rows = zip(self.revs[-new:], self.times[-new:], self.bytes[-new:])
            self._db.executemany("INSERT OR REPLACE INTO revtime VALUES (?, ?, ?)", rows)
            self._unsaved = len(self.revs)
        self._db.execute("INSERT OR REPLACE INTO meta VALUES ('written', ?)", (self.written,))

    def drop_below(self, floor: int) -> None:
        """Forget the marks no history read can use any more (the one in force at ``floor`` stays)."""
        if self._db is not None:
            self.save()
            self._db.execute("DELETE FROM revkey WHERE rev < ?", (floor,))
        i = bisect.bisect_right(self.revs, floor) - 1
        if i <= 0:
            return
        cut = self.revs[i]
        del self.revs[:i], self.times[:i], self.bytes[:i]
        self._unsaved = max(0, self._unsaved - i)
        if self._db is not None:
            self._db.execute("DELETE FROM revtime WHERE rev < ?", (cut,))

    def close(self) -> None:
        if self._db is not None:
            self.save()
            self._db.close()
            self._db = None

    def time_of(self, revision: int) -> float:
        i = bisect.bisect_right(self.revs, revision) - 1
        if i < 0:
            return self.times[0] if self.times else 0.0
        return self.times[i]

    def revision_at(self, time: float, current: int) -> int:
        i = bisect.bisect_right(self.times, time)
        if i >= len(self.revs):
            return current
        return max(self.revs[i] - 1, 0)

    def floor_for(self, floor: int, current: int, now: float, retention: float, excess: int) -> int:
        """The floor keeping ``retention`` seconds before ``now`` and freeing ``excess`` bytes."""
        if retention > 0:
            floor = max(floor, self.revision_at(now - retention, current))
        if excess > 0:
            if not self.bytes:
                return current
            i = max(bisect.bisect_right(self.revs, floor) - 1, 0)
            j = bisect.bisect_left(self.bytes, self.bytes[i] + excess)
            floor = max(floor, self.revs[j] if j < len(self.revs) else current)
        return min(floor, current)


def _written(ops: list[Op], responses: list[object]) -> tuple[list[tuple[str, bool]], int]:
    """The keys a transaction's writes changed (True: deleted), in order, and the bytes they cost
    (keys and values as written, plus a row each)."""
    keys: list[tuple[str, bool]] = []
    cost = 0
    for op, resp in zip(ops, responses):
        if isinstance(op, Put):
            keys.append((op.key, False))
            cost += len(op.key) + len(op.value) + ROW_BYTES
        elif isinstance(op, Delete) and resp:
            gone = [kv.key for kv in resp] if isinstance(resp, list) else [op.key]
            keys.extend((k, True) for k in gone)
            cost += sum(len(k) + ROW_BYTES for k in gone)
    return keys, cost


class _CompactedWatch:
    """A watch from below the API's compacted revision: one canceled answer, as etcd gives."""

    def __init__(self, compacted: int) -> None:
        self.compacted = compacted
        self.delivered = 0

    def __aiter__(self) -> _CompactedWatch:
        return self

    async def __anext__(self) -> WatchResponse:
        if self.delivered:
            raise StopAsyncIteration
        self.delivered = 1
        return WatchResponse([], self.compacted, canceled=True, compact_revision=self.compacted)

    async def aclose(self) -> None:
        self.delivered = 1

    def settled(self) -> bool:
        return True


class EtcdHistory(RealEtcd):
    """:class:`RealEtcd` keeping history: API compaction apart from etcd's (see the module doc).

    Without :meth:`keep_history` (``kconsole etcd``, benchmarks) it compacts etcd as before."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.marks: RevTimes | None = None
        self.history_retention = 0.0
        self.history_max_bytes = 0
        #: The oldest revision history reads serve: etcd is compacted to the one before it.
        self.history_floor = 1

    def keep_history(self, path: Path | None, retention: float, max_bytes: int) -> None:
        """Keep history down to the floor these bounds give; revision times in ``path``."""
        self.marks = RevTimes(path)
        self.marks.open()
        self.history_retention = retention
        self.history_max_bytes = max_bytes

    async def start(self) -> None:
        await super().start()
        if self.marks is not None:
            await self._load_compaction()

    async def _load_compaction(self) -> None:
        """The API's compacted revision from ``compact_rev_key``, and etcd's own (the floor)."""
        if self.marks is not None:
            doc = await self._call("/v3/maintenance/status", {})
            self.marks.bind(str(doc.get("header", {}).get("cluster_id", "")))
        res = await super().range(COMPACT_KEY)
        if res.kvs and res.kvs[0].value.isdigit():
            self.compacted = max(self.compacted, int(res.kvs[0].value))
        if res.revision > 1:
            self.history_floor = max(self.history_floor, await self._etcd_compacted())

    async def _etcd_compacted(self) -> int:
        """The floor from etcd's compact revision (one below it, see :meth:`compact`; etcd's status
        does not tell it): a watch of every key from revision 1 is canceled with it, or delivers
        the first write when nothing was compacted."""
        stream = RealEtcd.watch(self, "\0", "\0", start_revision=1, prev_kv=False)
        try:
            async with asyncio.timeout(CHANGES_TIMEOUT):
                async for resp in stream:
                    if resp.canceled:
                        return max(resp.compact_revision + 1, 1)
                    if resp.events:
                        return 1
        except TimeoutError:
            log.info("etcd's compact revision not learnt: history reads may find it compacted")
        finally:
            await stream.aclose()
        return 1

    # ----- the API's view: compacted below ``compacted`` --------------------------------------
    async def range(self, key: str, end: str | None = None, *, revision: int = 0, limit: int = 0,
                    count_only: bool = False, keys_only: bool = False, serializable: bool = False) -> RangeResult:
        if 0 < revision < self.compacted:
            raise CompactedError(self.compacted)
        return await super().range(key, end, revision=revision, limit=limit, count_only=count_only,
                                   keys_only=keys_only, serializable=serializable)

    def watch(self, key: str, end: str | None = None, *, start_revision: int = 0, prev_kv: bool = True,
              progress_notify: bool = False) -> Any:
        if 0 < start_revision < self.compacted:
            return _CompactedWatch(self.compacted)
        return super().watch(key, end, start_revision=start_revision, prev_kv=prev_kv,
                             progress_notify=progress_notify)

    async def txn(self, compares: list[Compare], success: list[Op], failure: list[Op] | None = None) -> TxnResult:
        res = await super().txn(compares, success, failure)
        marks = self.marks
        if marks is not None and self.clock is not None:
            keys, cost = _written(success if res.succeeded else (failure or []), res.responses)
            if keys:
                marks.mark(res.revision, self.clock.now(), cost)
                marks.wrote(res.revision, keys)
        return res

    async def compact(self, revision: int) -> None:
        """API compaction to ``revision``; etcd itself only down to the history floor."""
        marks = self.marks
        if marks is None:
            await super().compact(revision)
            return
        self.compacted = max(self.compacted, revision)
        excess = 0
        bound = self.size_bound()
        if bound > 0:
            doc = await self._call("/v3/maintenance/status", {})
            excess = int(doc.get("dbSizeInUse", doc.get("dbSize", 0))) - bound
        now = self.clock.now() if self.clock is not None else 0.0
        floor = marks.floor_for(self.history_floor, revision, now, self.history_retention, excess)
        marks.save()
        if floor > self.history_floor:
            try:  # one below: the writes at the floor keep their previous values (a watch's prev_kv)
                await self._call("/v3/kv/compaction", {"revision": floor - 1})
            except CompactedError:
                pass
            self.history_floor = floor
            marks.drop_below(floor)

    def size_bound(self) -> int:
        """Bytes etcd's database may hold in use: ``history-max-bytes``, and at most half of etcd's
        quota (``--quota-backend-bytes``), so that history never raises the NOSPACE alarm."""
        quota = int(getattr(self, "quota_bytes", 0) or 0) // 2
        bound = self.history_max_bytes
        return min(bound, quota) if bound > 0 and quota > 0 else (bound or quota)

    async def close(self) -> None:
        await super().close()
        if self.marks is not None:
            self.marks.close()

    # ----- history reads --------------------------------------------------------------------------
    def history_bounds(self) -> tuple[int, int, float, float]:
        current = self.revision
        oldest = min(self.history_floor, current) if current else self.history_floor
        return oldest, current, self.time_of(oldest), self.time_of(current)

    def time_of(self, revision: int) -> float:
        return self.marks.time_of(revision) if self.marks is not None else 0.0

    def revision_at(self, time: float) -> int:
        return self.marks.revision_at(time, self.revision) if self.marks is not None else self.revision

    def _check_window(self, lowest: int, highest: int) -> None:
        if highest > self.revision:
            raise FutureRevisionError()
        if lowest < self.history_floor:
            raise CompactedError(self.history_floor)

    async def history_range(self, key: str, end: str | None, revision: int, limit: int = 0) -> RangeResult:
        """A range at a past revision down to the history floor (below the API's compaction too)."""
        self._check_window(revision, revision)
        try:
            return await super().range(key, end, revision=revision, limit=limit)
        except CompactedError:
            raise CompactedError(self.history_floor) from None

    async def history_changes(self, key: str, end: str | None, after: int, upto: int, limit: int = 0,
                              by_name: bool = False) -> list[Event]:
        """Writes to ``[key, end)`` in revisions ``(after, upto]``, oldest first, with their previous
        values: one watch from ``after + 1`` (see the module doc). ``by_name`` changes nothing here:
        etcd filters by key either way."""
        if upto <= after:
            self._check_window(after + 1, upto)
            return []
        self._check_window(after + 1, upto)
        known = self.marks.written_in(key, end, after, upto, INDEX_MOST) if self.marks is not None else None
        if known is not None:
            return await self._changes_of(known[:limit] if limit else known)
        layout = self.layout
        lo = layout.to_etcd(key)
        hi = layout.end_to_etcd(end) if end is not None else lo + "\0"
        w_lo, w_hi = await self._window(lo, hi, upto)
        out: list[Event] = []
        back = layout.from_etcd
        req = {"create_request": {"key": _b64(w_lo), "range_end": _b64(w_hi),
                                  "start_revision": after + 1, "prev_kv": True}}
        url = self.servers[self._current]
        try:
            with self._io():
                async with asyncio.timeout(CHANGES_TIMEOUT), contextlib.aclosing(self.watch_docs(req, url)) as docs:
                    async for doc in docs:
                        if self._take(doc, lo, hi, upto, back, out, limit):
                            return out
        except TimeoutError:
            raise UnavailableError("etcdserver: request timed out") from None
        raise UnavailableError(f"etcd {url}: the history watch ended early")

    async def _changes_of(self, writes: list[tuple[int, str, bool]]) -> list[Event]:
        """Known writes read back from etcd: each key at its revision and at the one before (its
        previous value), as ranges at those revisions batched in read-only transactions."""
        ops: list[dict[str, Any]] = []
        to_etcd = self.layout.to_etcd
        for rev, key, deleted in writes:
            k = _b64(to_etcd(key))
            ops.append({"request_range": {"key": k, "revision": rev - 1 if deleted else rev}})
            ops.append({"request_range": {"key": k, "revision": max(rev - 1, 1)}})
        answers = await asyncio.gather(*(self._call("/v3/kv/txn", {"success": ops[i:i + TXN_OPS]})
                                         for i in range(0, len(ops), TXN_OPS)))
        found = [((r.get("response_range") or {}).get("kvs") or [None])[0]
                 for doc in answers for r in doc.get("responses", ())]
        if len(found) != len(ops):
            raise StoreError("etcd answered a history read with fewer ranges than it was asked")
        back = self.layout.from_etcd
        out: list[Event] = []
        for i, (rev, key, deleted) in enumerate(writes):
            now_kv, prev_kv = found[2 * i], found[2 * i + 1]
            prev = _kv(prev_kv, back) if prev_kv is not None and rev > 1 else None
            if deleted:
                out.append(Event("DELETE", KeyValue(key, b"", 0, rev, 0, 0), prev))
            elif now_kv is not None:
                out.append(Event("PUT", _kv(now_kv, back), prev))
        return out

    def _take(self, doc: dict[str, Any], lo: str, hi: str, upto: int, back: Any, out: list[Event],
              limit: int) -> bool:
        """One watch answer into ``out``; True when the window is complete."""
        if "error" in doc:
            raise StoreError(str(doc["error"]))
        result = doc.get("result", {})
        if result.get("canceled"):
            if int(result.get("compact_revision", 0) or 0):
                raise CompactedError(self.history_floor)
            raise UnavailableError(str(result.get("cancel_reason", "etcd canceled the history watch")))
        done = False
        for e in result.get("events", ()):
            kv = e["kv"]
            rev = int(kv.get("mod_revision", 0))
            done = done or rev >= upto  # a revision's events come in one answer: this one ends the window
            if rev > upto:
                return True
            raw = base64.b64decode(kv["key"]).decode()
            if raw < lo or (hi != "\0" and raw >= hi):
                continue
            item = _kv(kv, back)
            prev = _kv(e["prev_kv"], back) if "prev_kv" in e else None
            out.append(Event("DELETE" if e.get("type") == "DELETE" else "PUT", item, prev))
            if limit and len(out) >= limit:
                return True
        return done

    async def _window(self, lo: str, hi: str, upto: int) -> tuple[str, str]:
        """The watch range: ``[lo, hi)`` widened to hold a key written at or after ``upto``."""
        async def first(key: str, end: str, descend: bool = False) -> str | None:
            body: dict[str, Any] = {"key": _b64(key), "range_end": _b64(end), "keys_only": True, "limit": 1,
                                    "min_mod_revision": upto}
            if descend:
                body.update(sort_order="DESCEND", sort_target="KEY")
            doc = await self._call("/v3/kv/range", body)
            kvs = doc.get("kvs") or ()
            return base64.b64decode(kvs[0]["key"]).decode() if kvs else None

        if await first(lo, hi) is not None:
            return lo, hi
        above = await first(hi, "\0") if hi != "\0" else None
        if above is not None:
            return lo, above + "\0"
        below = await first("\0", lo, descend=True) if lo > "\0" else None
        if below is not None:
            return below, hi
        return "\0", "\0"  # only deletes since ``upto``: every key (revision ``upto`` has an event)
