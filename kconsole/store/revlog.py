"""The single-member etcd: an MVCC revision log on SQLite with group commit and push watches.

Every committed transaction that writes gets the next global revision; its writes are rows
``(revision, sub)`` in one SQLite table (see :mod:`kconsole.store.backend`). Compares are evaluated
against an in-memory index of each live key's (create_revision, mod_revision, version, lease, row id),
like etcd's treeIndex, so a compare-and-swap never reads SQLite; values come from a bounded cache of
recent values or from SQLite.

Reads: a single key at the current revision is answered from the index and the value cache; a
multi-key range takes the sorted live keys from memory, puts keys written after a past revision
back to their state at it (one SQLite query), and reads only the returned page's values, so a
``limit=500`` page costs the same at 10 or 100,000 keys apart from a linear pass over the names.

Group commit: :meth:`RevisionLog.txn` queues the request; the flusher takes what is queued,
evaluates the transactions in order against the index plus the writes of earlier transactions
(serializable), and queues one function on aiosqlite's thread that inserts all rows with a single
autocommit INSERT (insert, commit and fsync in one statement) and reads what the transactions
asked for. Up to :data:`PIPELINE` such batches are on the thread at once: batch N+1 is evaluated
while N fsyncs, on top of N's uncommitted writes. Watchers are fed, and callers answered, in order
and only after their batch's commit returned. If a commit fails, that batch and every batch queued
behind it fail as a whole (the thread refuses them: they were evaluated on top of it); the index is
only ever updated from committed batches, so nothing half-written is seen.

Durability: WAL mode. A caller is answered once its group commit returned from SQLite (so a killed
process, kill -9, keeps it). With ``synchronous="FULL"`` (default) it is also durable on the device
when answered (power loss keeps it), as in etcd: SQLite runs ``NORMAL`` (no fsync of its own per
commit) and each group commit's rows go to a preallocated journal beside the file with one
``O_DIRECT | O_DSYNC`` write that overlaps the SQLite commit (:mod:`kconsole.store.journal`: it
cycles after SQLite's files were fsynced in the background, and a reopened log replays what SQLite
lost). ``"NORMAL"`` survives kill -9 but may lose the last commits on power loss; ``"EXTRA"`` keeps
SQLite's own fsync on every commit and no journal. When nothing is in flight, a small batch is
committed on the event loop itself (SQLite's step and the journal write release the GIL): a lone
writer pays no thread round trip. A txn that finds the log idle and nothing else ready to run
commits in its own task without the flusher, and lets the loop turn while its journal record is on
the device (before the index is published, so nothing of it is seen before it is durable). Reads use a second, read-only connection so they never queue behind an fsync; WAL
checkpoints run on a third connection beside the commits, so commits rarely pay for copying the WAL
into the database file. Once the WAL holds ``backend.BACKSTOP_CHECKPOINT_PAGES`` the writer copies
the few frames the background checkpoints left and the WAL starts over from its beginning (a
checkpoint beside a writer that never pauses never catches up by itself): the WAL file keeps its
size, so a commit's fdatasync overwrites blocks the file has and records no new file size.

Compaction ``compact(C)``: ranges below ``C`` fail with :class:`CompactedError`; for each key only
its latest write below ``C`` survives (none if that write was a deletion), everything from ``C`` on
is kept, so a range at ``C`` and a watch from ``C`` still work. Automatic compaction (revision mode,
like ``--auto-compaction-mode=revision``): every ``auto_compact_interval`` simulated seconds the log
compacts to ``revision - auto_compact_retention`` when that is above the current compact revision.
Rows are deleted in chunks, each its own short SQLite transaction, so writers are never held up
for long.

Quota: a write that would take the pages in use past ``quota_bytes`` fails with
:class:`NoSpaceError` and raises the ``NOSPACE`` alarm; while it is raised only reads, deletes and
compaction succeed. :meth:`RevisionLog.disarm` clears it (after compaction freed space). The alarm
is not stored: on open it is raised again if the pages in use exceed the quota.

The file is locked (``<path>.lock``, flock) so two processes never run two logs on one file.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import fcntl
import heapq
import logging
import os
import weakref
from collections import OrderedDict, deque
from collections.abc import Callable, Coroutine, Mapping, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import aiosqlite

from kconsole.clock import Clock, io_tracker
from kconsole.store import backend
from kconsole.store.backend import MAX_SUB, SUB_BITS, RangeSpec, Row, row_id
from kconsole.store.journal import (
    DEFAULT_JOURNAL_BYTES,
    Journal,
    JournalError,
    check_size,
    journal_path,
    scan,
    sync_files,
)
from kconsole.store.loopaio import LoopAio
from kconsole.store.kv import (
    DEFAULT_QUOTA_BYTES,
    MAX_REQUEST_BYTES,
    ClosedError,
    CompactedError,
    Compare,
    Delete,
    Event,
    FutureRevisionError,
    Get,
    KeyValue,
    NoSpaceError,
    Op,
    Put,
    RangeResult,
    Status,
    StoreError,
    TooLargeError,
    TxnResult,
)
from kconsole.store.watch import DEFAULT_WATCH_BUFFER, Watcher

#: A live key in the index: (create_revision, mod_revision, version, lease, row id).
Meta = tuple[int, int, int, int, int]

#: Bytes a write costs in the quota beyond its key and value (row header, index entry).
ROW_OVERHEAD = 64
#: Transactions folded into one group commit at most.
MAX_BATCH = 4096
#: Group commits on the SQLite thread at once (one commits while the next is evaluated).
PIPELINE = 2
#: The same with :attr:`RevisionLog.publish_early`: nobody waits on the commits, they only queue.
PIPELINE_EARLY = 8
#: Bytes of published batches held for one commit (:attr:`RevisionLog.commit_interval`) at most.
HELD_COST_LIMIT = 4 * 1024 * 1024
#: WAL bytes (estimated) committed between two background WAL checkpoints; several per WAL cycle
#: (``backend.BACKSTOP_CHECKPOINT_PAGES``), so the writer's own checkpoint at its end is short.
CHECKPOINT_BYTES = 4 * 1024 * 1024
#: WAL bytes a group commit writes beyond its rows' own bytes: a page for the commit, and an index
#: leaf per row (keys are spread over the name index, so a batch touches about one leaf per row).
PAGE_BYTES = 4096
#: Checkpoint passes in a row while the writer keeps adding frames: the last ones are short, and
#: one that copies every frame lets the writer restart the WAL from its beginning.
CHECKPOINT_PASSES = 4
#: A pass that found at least this many new frames runs again for the ones added meanwhile.
CHECKPOINT_CATCH_UP_FRAMES = 512
#: Group commits between two measurements of the pages in use (quota accounting).
MEASURE_EVERY = 32
#: Below twice this many queued txns, an idle pipeline takes them all in one batch rather than two.
SPLIT_MIN = 8
#: An idle pipeline commits a batch of at most this many txns on the event loop itself (SQLite and
#: the journal write release the GIL): no thread hop and no extra loop turn for a lone writer.
INLINE_MAX = 4
#: Bytes of recent values kept in memory.
DEFAULT_VALUE_CACHE_BYTES = 64 * 1024 * 1024
#: Revisions deleted per compaction chunk (one short SQLite transaction each).
COMPACT_CHUNK_REVISIONS = 2000

log = logging.getLogger(__name__)

SYNCHRONOUS_MODES = ("FULL", "NORMAL", "EXTRA")
COMPARE_TARGETS = ("mod", "create", "version", "value")
COMPARE_OPS = ("=", "!=", "<", ">")


class InvalidRequestError(StoreError, ValueError):
    """A malformed request (empty key, duplicate key in one transaction, wrong types)."""


class BackendError(StoreError):
    """SQLite failed to commit; nothing of the affected transactions was kept."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(f"etcdserver: backend commit failed: {cause}")


class StoreLockedError(StoreError):
    def __init__(self, path: str) -> None:
        super().__init__(f"etcdserver: {path} is in use by another process")


class _Pending:
    """A queued transaction waiting for the next group commit.

    Answered through its own future (:meth:`RevisionLog.txn`) or through a slot of a
    :class:`_Group` (:meth:`RevisionLog.txn_batch`: one future for the whole batch).
    """

    __slots__ = ("compares", "success", "failure", "future", "cost", "ranged", "quiet", "group", "slot", "stamp")

    def __init__(
        self, compares: Sequence[Compare], success: Sequence[Op], failure: Sequence[Op],
        future: asyncio.Future[TxnResult] | None, cost: int, ranged: bool, quiet: bool = False,
        group: _Group | None = None, slot: int = 0,
    ) -> None:
        self.compares = compares
        self.success = success
        self.failure = failure
        self.future = future
        self.cost = cost
        self.ranged = ranged
        self.quiet = quiet  # nobody reads the answer: resolve with None, build no responses
        self.group = group
        self.slot = slot
        self.stamp: float | None = None  # the simulated time it is written at (None: the log's clock)

    def resolve(self, result: TxnResult | None) -> None:
        if self.group is not None:
            self.group.settle(self.slot, result)
        elif self.future is not None and not self.future.done():
            self.future.set_result(result)  # type: ignore[arg-type]

    def fail(self, exc: BaseException) -> None:
        if self.group is not None:
            self.group.settle(self.slot, exc)
        elif self.future is not None and not self.future.done():
            self.future.set_exception(exc)


_UNSET = object()


class _Group:
    """The answers of one :meth:`RevisionLog.txn_batch` call: a slot per transaction, one future
    resolved when the last slot is settled (no future per transaction)."""

    __slots__ = ("results", "left", "future")

    def __init__(self, size: int, future: asyncio.Future[None]) -> None:
        self.results: list[Any] = [_UNSET] * size
        self.left = size
        self.future = future

    def settle(self, slot: int, result: Any) -> None:
        if self.results[slot] is not _UNSET:
            return
        self.results[slot] = result
        self.left -= 1
        if self.left == 0 and not self.future.done():
            self.future.set_result(None)


#: Tags of answers-to-be in a prepared batch.
_KV, _KVS, _GET, _RANGE = "kv", "kvs", "get", "range"


class _Batch:
    """One group commit: its transactions, rows and reads, and how to answer each caller."""

    __slots__ = ("items", "seq", "overlay", "known", "fetch", "rows", "ranges", "changes", "plans", "errors",
                 "created", "last_revision", "cost", "task", "io", "published", "record", "times")

    def __init__(self, items: list[_Pending], seq: int) -> None:
        self.items = items
        self.seq = seq
        self.overlay: dict[str, Meta | None] = {}  # the batch's final state of each key it wrote
        self.known: dict[int, bytes] = {}  # values it needs that were in memory
        self.fetch: set[int] = set()  # values it needs from SQLite
        self.rows: list[Row] = []
        self.ranges: list[RangeSpec] = []
        self.changes: list[tuple[str, Meta | None, Meta | None, int]] = []  # (key, new or None, prev, revision)
        self.plans: list[tuple[_Pending, bool, int, list[Any]]] = []
        self.errors: list[tuple[_Pending, StoreError]] = []
        self.created: list[str] = []  # keys this batch brought into existence (for the sorted key list)
        self.last_revision = 0
        self.cost = sum(item.cost for item in items)
        self.task: asyncio.Future[backend.BatchResult] | None = None
        self.io: contextlib.AbstractContextManager[Any] | None = None
        self.published = False
        self.record: asyncio.Future[int] | None = None  # its journal record's write, started from the loop
        self.times: list[backend.TimeMark] = []  # time marks of its revisions (see backend.TimeMark)



def _ready_callbacks(loop: asyncio.AbstractEventLoop) -> int:
    """Callbacks ready to run on the loop's next turn, from asyncio's private ready queue; a loop
    without one (not asyncio's own) counts as busy, so the lone-writer paths stay off."""
    ready = getattr(loop, "_ready", None)
    return len(ready) if ready is not None else -1

class RevisionLog:
    """A single etcd member's keyspace; implements :class:`kconsole.store.kv.KV`."""

    def __init__(
        self, path: Path, clock: Clock, writer: aiosqlite.Connection, reader: aiosqlite.Connection,
        checkpointer: aiosqlite.Connection, lock_fd: int, quota_bytes: int, watch_buffer: int,
        value_cache_bytes: int,
    ) -> None:
        self.path = path
        self._clock = clock
        self._writer = writer
        self._reader = reader
        self._checkpointer = checkpointer
        self._journal: Journal | None = None
        self._writer_calls = 0  # calls queued on the writer's thread besides in-flight batches
        self._checkpoint_task: asyncio.Task[None] | None = None
        self._written_since_checkpoint = 0
        self._checkpoint_after = CHECKPOINT_BYTES  # estimated WAL bytes that start the next one
        self._lock_fd = lock_fd
        self._quota = quota_bytes
        self._watch_buffer = watch_buffer
        self._revision = 0  # last committed
        self._next_revision = 1  # next to assign (batches in flight hold the ones between)
        self._compact_revision = 0
        self._uncommitted: dict[str, tuple[Meta | None, int]] = {}  # writes of in-flight batches, with batch seq
        self._next_seq = 0
        self._chain = backend.Chain()
        self._batches_since_measure = 0
        self._keys: dict[str, Meta] = {}
        # Sorted key list for ranges, maintained lazily (see _sorted_names).
        self._sorted: list[str] = []
        self._sorted_members: set[str] = set()
        self._sorted_added: list[str] = []
        self._sorted_stale = 0
        self._sorted_built = False
        self._values: OrderedDict[int, bytes] = OrderedDict()
        self._values_bytes = 0
        self._values_cap = value_cache_bytes
        self._pending: list[_Pending] = []
        self._inflight: deque[_Batch] = deque()  # batches on the writer's thread, oldest first
        #: Split a large queue into two pipelined commits. Off for a Raft member: it applies a
        #: committed entry's transactions together and waits for all of them, so one commit is cheaper.
        self.split_batches = True
        #: Publish a batch (index, answers, watch events) as soon as it is evaluated, before its
        #: SQLite commit, when it needs nothing read from SQLite. Only for a Raft member: its
        #: durability is the Raft WAL, so the commit may follow; a failed commit breaks the log
        #: (every later call raises) and the member restarts from its WAL. Reads that go to SQLite
        #: wait until the commits caught up with what was published.
        self.publish_early = False
        #: With :attr:`publish_early`, how long published batches may wait to be committed together
        #: (etcd's backend batch interval): one SQLite commit per interval instead of one per batch.
        #: 0 commits each batch at once. Reads that need SQLite, a full batch and close commit sooner.
        self.commit_interval = 0.0
        self._held: list[_Batch] = []  # published, not yet handed to SQLite (oldest first)
        #: Native AIO from the loop: a batch's journal record is written from here while the writer's
        #: thread commits it (see :meth:`_record`). None where direct I/O or AIO is missing.
        self._loop_aio: LoopAio | None = None
        self._cancel_from = 0  # first revision of records SQLite refused: withdrawn once all have landed
        self._held_cost = 0
        self._held_due = False
        self._flushed = 0  # last revision committed to SQLite
        self._flush_waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._broken: StoreError | None = None
        #: Called with the flushed revision after each commit (a member records its position).
        self.on_flushed: Callable[[int], None] | None = None
        self._pending_cost = 0
        self._in_use = 0
        self._alarms: list[str] = []
        # Weak: a watcher its consumer dropped without closing goes away with it.
        self._watchers: weakref.WeakSet[Watcher] = weakref.WeakSet()
        self._closed = False
        self._wakeup = asyncio.Event()
        self._flusher: asyncio.Task[None] | None = None
        self._parked = False  # the flusher waits for work: nothing queued, nothing of its own running
        self._lone = False  # a lone writer's commit is under way in its own task (see _commit_alone)
        self._auto_compactor: asyncio.Task[None] | None = None
        self._compact_lock = asyncio.Lock()
        #: Rows below this revision may be physically gone: history reads stop here.
        self._history_floor = 0
        # Time marks, oldest first (see backend.TimeMark), as three parallel lists for bisect.
        self._mark_revs: list[int] = []
        self._mark_times: list[float] = []
        self._mark_bytes: list[int] = []
        self._written_bytes = 0  # running total of bytes written (quota cost), for the size bound

    # ------------------------------------------------------------------ lifecycle

    @classmethod
    async def open(
        cls,
        path: str | os.PathLike[str],
        *,
        clock: Clock,
        quota_bytes: int = DEFAULT_QUOTA_BYTES,
        auto_compact_retention: int = 0,
        auto_compact_interval: float = 300.0,
        synchronous: str = "FULL",
        watch_buffer: int = DEFAULT_WATCH_BUFFER,
        value_cache_bytes: int = DEFAULT_VALUE_CACHE_BYTES,
        journal_bytes: int = DEFAULT_JOURNAL_BYTES,
    ) -> RevisionLog:
        """Open (or create) the store file at ``path`` and rebuild the index from it.

        With ``synchronous="FULL"`` the log keeps a journal of ``journal_bytes`` beside the file
        (see :mod:`kconsole.store.journal`); whatever the mode, a journal found there is replayed.
        """
        sync = synchronous.upper()
        if sync not in SYNCHRONOUS_MODES:
            raise ValueError(f"synchronous must be one of {', '.join(SYNCHRONOUS_MODES)}, not {synchronous!r}")
        if auto_compact_retention < 0:
            raise ValueError(f"auto_compact_retention must be >= 0, not {auto_compact_retention}")
        if auto_compact_interval <= 0:
            raise ValueError(f"auto_compact_interval must be positive, not {auto_compact_interval}")
        if quota_bytes <= 0:
            raise ValueError(f"quota_bytes must be positive, not {quota_bytes}")
        use_journal = sync == "FULL"
        if use_journal:
            check_size(journal_bytes)
        # FULL durability comes from the journal; SQLite's own commits only need to reach the OS.
        sqlite_sync = "NORMAL" if use_journal else sync
        file = Path(path)
        if not file.parent.is_dir():
            raise FileNotFoundError(f"store folder {str(file.parent)!r} does not exist")
        lock_fd = os.open(f"{file}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(lock_fd)
            raise StoreLockedError(str(file)) from None
        writer: aiosqlite.Connection | None = None
        reader: aiosqlite.Connection | None = None
        checkpointer: aiosqlite.Connection | None = None
        journal: Journal | None = None
        try:
            with io_tracker(clock):
                # check_same_thread=False: an idle pipeline commits on the loop (see INLINE_MAX).
                writer = await aiosqlite.connect(file, isolation_level=None, check_same_thread=False)
                await backend.run_on_thread(writer, backend.configure, sqlite_sync, True)
                jpath = journal_path(file)
                records, epoch = await asyncio.to_thread(scan, jpath)
                await backend.run_on_thread(writer, backend.replay_journal, records, use_journal)
                # Before the journal is reused or dropped, SQLite must hold durably all it held.
                await asyncio.to_thread(sync_files(file))
                if use_journal:
                    journal = await asyncio.to_thread(Journal.open, jpath, journal_bytes, epoch, sync_files(file))
                else:
                    jpath.unlink(missing_ok=True)
                reader = await aiosqlite.connect(file.resolve().as_uri() + "?mode=ro", uri=True, isolation_level=None)
                await backend.run_on_thread(reader, backend.configure, sqlite_sync, False)
                checkpointer = await aiosqlite.connect(file, isolation_level=None)
                await backend.run_on_thread(checkpointer, backend.configure, sqlite_sync, False)
                revision, compacted, keys = await backend.run_on_thread(writer, backend.load_state)
                marks = await backend.run_on_thread(writer, backend.load_times)
                history_floor = await backend.run_on_thread(writer, backend.meta_value, "history_floor")
                _, in_use = await backend.run_on_thread(writer, backend.usage)
        except BaseException:
            for conn in (checkpointer, reader, writer):
                if conn is not None:
                    await conn.close()
            if journal is not None:
                journal.close()
            os.close(lock_fd)
            raise
        log = cls(file, clock, writer, reader, checkpointer, lock_fd, quota_bytes, watch_buffer, value_cache_bytes)
        log._journal = journal
        log._revision = revision
        log._flushed = revision
        log._next_revision = revision + 1
        log._compact_revision = compacted
        log._history_floor = history_floor if history_floor is not None else compacted
        log._load_marks(marks)
        log._keys = {name: (create, mod, version, lease, rid) for name, create, mod, version, lease, rid in keys}
        log._in_use = in_use
        if in_use > quota_bytes:
            log._alarms.append("NOSPACE")
        if journal is not None and journal.direct:
            log._loop_aio = LoopAio.create(journal.fd)
        log._flusher = asyncio.create_task(log._flush_loop(), name="revlog-flusher")
        if auto_compact_retention > 0:
            log._auto_compactor = asyncio.create_task(
                log._auto_compact(auto_compact_retention, auto_compact_interval), name="revlog-auto-compact"
            )
        return log

    async def close(self) -> None:
        """Finish queued transactions, end every watch, close the file."""
        if self._closed:
            return
        self._closed = True
        self._wakeup.set()
        if self._flusher is not None:
            await self._flusher
        if self._auto_compactor is not None:
            self._auto_compactor.cancel()
            try:
                await self._auto_compactor
            except asyncio.CancelledError:
                pass
        async with self._compact_lock:
            for watcher in list(self._watchers):
                watcher.end_stream()
            self._watchers.clear()
            if self._checkpoint_task is not None:
                await self._checkpoint_task
            with io_tracker(self._clock):
                await self._checkpointer.close()
                await self._reader.close()
                await self._writer.close()
                if self._loop_aio is not None:
                    self._loop_aio.close()
                if self._journal is not None:
                    await asyncio.to_thread(self._journal.close)
        fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
        os.close(self._lock_fd)

    async def __aenter__(self) -> RevisionLog:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------------ properties

    @property
    def revision(self) -> int:
        """The last committed revision."""
        return self._revision

    @property
    def compact_revision(self) -> int:
        return self._compact_revision

    @property
    def alarms(self) -> list[str]:
        return list(self._alarms)

    # ------------------------------------------------------------------ reads

    async def range(
        self,
        key: str,
        end: str | None = None,
        *,
        revision: int = 0,
        limit: int = 0,
        count_only: bool = False,
        keys_only: bool = False,
        serializable: bool = False,
        history: bool = False,
    ) -> RangeResult:
        """Keys of ``[key, end)`` (one key when ``end`` is None; ``end="\\0"``: every key >= ``key``).

        ``serializable`` makes no difference on a single member: every read is linearizable.
        ``history``: a revision below the compact revision is served while its rows are kept
        (down to :attr:`history_floor`), for history reads; API clients never set it.
        """
        self._check_open()
        _check_key(key)
        if end is not None and not isinstance(end, str):
            raise InvalidRequestError(f"range end must be a str, not {type(end).__name__}")
        if limit < 0:
            raise InvalidRequestError(f"limit must be >= 0, not {limit}")
        for _ in range(3):
            current = self._revision
            floor = self._history_floor if history else self._compact_revision
            if revision == 0:
                at = current
            elif revision > current:
                raise FutureRevisionError()
            elif revision < floor:
                raise CompactedError(floor)
            else:
                at = revision
            if end is None and at == current:
                result = await self._get_current(key, count_only, keys_only)
            elif end is None:
                rows, count = (await self._read(backend.read_ranges, [(key, end, row_id(at + 1, 0), limit, count_only, keys_only)]))[0]
                result = RangeResult([KeyValue(*r) for r in rows], count, False, at)
            else:
                found = await self._range_indexed(key, end, at, limit, count_only, keys_only)
                if found is None:
                    continue  # a compaction removed rows under us; look again
                result = found
            floor = self._history_floor if history else self._compact_revision
            if at >= floor:
                return result
            if revision:
                raise CompactedError(floor)
        raise StoreError("etcdserver: range kept racing with compaction")

    async def get(self, key: str, revision: int = 0) -> KeyValue | None:
        """The key at ``revision`` (0 = current), or None when absent."""
        result = await self.range(key, revision=revision)
        return result.kvs[0] if result.kvs else None

    async def _range_indexed(
        self, key: str, end: str, at: int, limit: int, count_only: bool, keys_only: bool
    ) -> RangeResult | None:
        """A multi-key range from the in-memory index: live keys at the current revision, with the
        keys written after ``at`` put back to their state at ``at`` (read from SQLite). Values of
        the returned page only are read. None when a compaction raced the value reads."""
        keys = self._keys
        names = self._sorted_names()
        lo = bisect.bisect_left(names, key)
        hi = len(names) if end == "\0" else bisect.bisect_left(names, end)
        entries = [(n, m) for n in names[lo:hi] if (m := keys.get(n)) is not None]
        if at < self._revision:
            before = await self._read(backend.states_before, key, end, row_id(at + 1, 0))
            if before:
                kept = [(n, m) for n, m in entries if n not in before]
                back = sorted((n, m) for n, m in before.items() if m is not None)
                entries = list(heapq.merge(kept, back, key=lambda e: e[0]))
        count = len(entries)
        if count_only:
            return RangeResult([], count, False, at)
        page = entries[:limit] if limit else entries
        if keys_only:
            kvs = [KeyValue(n, b"", m[0], m[1], m[2], m[3]) for n, m in page]
            return RangeResult(kvs, count, count > len(page), at)
        cache = self._values
        missing = [m[4] for _, m in page if m[4] not in cache]
        fetched: dict[int, bytes] = {}
        if missing:
            fetched = await self._read(backend.fetch_values, missing)
            if len(fetched) < len(missing):
                return None
        kvs = []
        for n, m in page:
            value = fetched.get(m[4])
            if value is None:
                value = cache.get(m[4])
                if value is None:  # evicted meanwhile: read it again
                    return None
            kvs.append(KeyValue(n, value, m[0], m[1], m[2], m[3]))
        return RangeResult(kvs, count, count > len(page), at)

    def _sorted_names(self) -> list[str]:
        """Every key that was live since the last rebuild, sorted (deleted ones are filtered by
        the caller). New keys are appended and merged in by the next range, not on each write."""
        if not self._sorted_built or self._sorted_stale > len(self._keys) + 1024:
            self._sorted_built = True
            self._sorted = sorted(self._keys)
            self._sorted_members = set(self._sorted)
            self._sorted_added = []
            self._sorted_stale = 0
        elif self._sorted_added:
            self._sorted.extend(self._sorted_added)
            self._sorted.sort()  # two sorted runs: timsort merges them in linear time
            self._sorted_added = []
        return self._sorted

    async def _get_current(self, key: str, count_only: bool, keys_only: bool) -> RangeResult:
        at = self._revision
        meta = self._keys.get(key)
        if meta is None:
            return RangeResult([], 0, False, at)
        if count_only:
            return RangeResult([], 1, False, at)
        if keys_only:
            return RangeResult([KeyValue(key, b"", meta[0], meta[1], meta[2], meta[3])], 1, False, at)
        value = self._values.get(meta[4])
        if value is None:
            fetched = await self._read(backend.fetch_values, [meta[4]])
            value = fetched.get(meta[4])
            if value is None:
                # Deleted and compacted away while we read: answer as of the row we saw is gone.
                rows, count = (await self._read(backend.read_ranges, [(key, None, row_id(at + 1, 0), 0, False, False)]))[0]
                return RangeResult([KeyValue(*r) for r in rows], count, False, at)
            self._cache_value(meta[4], value)
        return RangeResult([KeyValue(key, value, meta[0], meta[1], meta[2], meta[3])], 1, False, at)

    async def _read(self, fn: Any, *args: Any) -> Any:
        if self._flushed < self._revision:
            await self._until_flushed(self._revision)
        with io_tracker(self._clock):
            return await backend.run_on_thread(self._reader, fn, *args)

    async def read_history(
        self, key: str, end: str | None, start_id: int, stop_id: int, limit: int, by_name: bool = False
    ) -> list[tuple[int, Event]]:
        """Writes to ``[key, end)`` with row ids in ``[start_id, stop_id)``, as watch events."""
        rows = await self._read(backend.history, key, end, start_id, stop_id, limit, by_name)
        out: list[tuple[int, Event]] = []
        for rid, (rev, name, deleted, create, version, lease, value, p_create, p_rev, p_version, p_lease, p_value) in rows:
            prev = None if p_rev is None else KeyValue(name, p_value, p_create, p_rev, p_version, p_lease)
            if deleted:
                out.append((rid, Event("DELETE", KeyValue(name, b"", 0, rev, 0, 0), prev)))
            else:
                out.append((rid, Event("PUT", KeyValue(name, value, create, rev, version, lease), prev)))
        return out

    # ------------------------------------------------------------------ history

    @property
    def history_floor(self) -> int:
        """The oldest revision a history read serves (rows below it may be gone)."""
        return max(self._history_floor, 1)

    def marks_after(self, revision: int) -> tuple[int, int, int, list[tuple[int, float, int]]]:
        """(history floor, bytes written, first marked revision, the time marks after ``revision``
        as (revision, time, bytes written before it)): what a copy of the marks in another process
        needs to answer :meth:`time_of`, :meth:`revision_at` and :meth:`floor_for` as this log does."""
        i = bisect.bisect_right(self._mark_revs, revision)
        new = list(zip(self._mark_revs[i:], self._mark_times[i:], self._mark_bytes[i:]))
        return self._history_floor, self._written_bytes, self._mark_revs[0] if self._mark_revs else 0, new

    def time_of(self, revision: int) -> float:
        """The simulated time ``revision`` was written at (the mark in force at it; 0.0 when the
        file has no marks, as one written before they were kept)."""
        i = bisect.bisect_right(self._mark_revs, revision) - 1
        if i < 0:
            return self._mark_times[0] if self._mark_times else 0.0
        return self._mark_times[i]

    def revision_at(self, time: float) -> int:
        """The last revision written at or before simulated ``time`` (0 when none was)."""
        i = bisect.bisect_right(self._mark_times, time)
        if i >= len(self._mark_revs):
            return self._revision
        return self._mark_revs[i] - 1

    def history_bytes(self) -> int:
        """Bytes written (quota cost) since the history floor: what the size bound is held against."""
        i = bisect.bisect_right(self._mark_revs, self._history_floor) - 1
        return self._written_bytes - (self._mark_bytes[i] if i >= 0 else 0)

    def floor_for(self, now: float, retention: float, max_bytes: int) -> int:
        """The history floor that keeps ``retention`` simulated seconds before ``now`` and at most
        ``max_bytes`` of writes, whichever is less (0 or less: no bound of that kind)."""
        floor = self._history_floor
        if retention > 0:
            floor = max(floor, self.revision_at(now - retention))
        if max_bytes > 0 and self._mark_bytes:
            i = bisect.bisect_left(self._mark_bytes, self._written_bytes - max_bytes)
            floor = max(floor, self._mark_revs[i] if i < len(self._mark_revs) else self._revision)
        return floor

    async def changes(self, key: str, end: str | None, after: int, upto: int, limit: int = 0,
                      by_name: bool = False) -> list[Event]:
        """Writes to ``[key, end)`` in revisions ``(after, upto]``, oldest first, with their previous
        values, from the kept history (a history read: see :attr:`history_floor`). ``by_name``: the
        range holds few keys (one object, its Events): read them by name, not the whole window."""
        self._check_open()
        _check_key(key)
        if upto > self._revision:
            raise FutureRevisionError()
        if after + 1 < self.history_floor:
            raise CompactedError(self.history_floor)
        if upto <= after:
            return []
        rows = await self.read_history(key, end, row_id(after + 1, 0), row_id(upto + 1, 0), limit or -1,
                                       by_name or end is None)
        if after + 1 < self.history_floor:  # a compaction ran meanwhile
            raise CompactedError(self.history_floor)
        return [event for _, event in rows]

    def history_bounds(self) -> tuple[int, int, float, float]:
        """(oldest revision a history read serves, current revision, their simulated times)."""
        oldest, current = min(self.history_floor, self._revision), self._revision
        return oldest, current, self.time_of(oldest), self.time_of(current)

    async def history_range(self, key: str, end: str | None, revision: int, limit: int = 0) -> RangeResult:
        return await self.range(key, end, revision=revision, limit=limit, history=True)

    async def history_changes(self, key: str, end: str | None, after: int, upto: int, limit: int = 0,
                              by_name: bool = False) -> list[Event]:
        return await self.changes(key, end, after, upto, limit, by_name)

    # ------------------------------------------------------------------ writes

    async def txn(
        self, compares: list[Compare], success: list[Op], failure: list[Op] | None = None
    ) -> TxnResult:
        """If every compare holds run ``success`` else ``failure``, atomically, at one new revision."""
        self._check_open()
        failure = failure or []
        cost, ranged = validate_txn(compares, success, failure)
        if cost:
            if self._alarms:
                raise NoSpaceError()
            if self._in_use + self._pending_cost + cost > self._quota:
                self._alarms.append("NOSPACE")
                raise NoSpaceError()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[TxnResult] = loop.create_future()
        item = _Pending(compares, success, failure, future, cost, ranged)
        self._pending_cost += cost
        # Alone: nothing else is ready to run this turn (no other writer about to queue a txn that
        # could share the commit) and the log is idle; asyncio's ready queue says so.
        if self._parked and self._can_commit_inline() and _ready_callbacks(loop) == 0 \
                and not any(c.target == "value" for c in compares):
            await self._commit_alone(item)
            return future.result()
        self._pending.append(item)
        self._wakeup.set()
        return await future

    async def _commit_alone(self, item: _Pending) -> None:
        """A lone writer's txn (the flusher parked, nothing queued, in flight or held) commits in
        its own task, without the flusher's hop: evaluated, journal write started, SQLite
        committed; then the loop turns once while the device writes (I/O, timers and other
        writers run; their txns queue for the flusher, which waits until this one is answered);
        then the index is published and the caller answered once the record is on the device.
        """
        self._lone = True
        try:
            try:
                batch = self._prepare([item])
            except Exception as exc:  # a bug must fail this caller, not hang it
                self._abandon([item], exc, self._inflight)
                return
            await self._commit_inline(batch)
        finally:
            self._lone = False
            if self._pending or self._closed:
                self._wakeup.set()

    async def txn_batch(
        self, txns: Sequence[tuple[Sequence[Compare], Sequence[Op], Sequence[Op]]], *, validated: bool = False,
        answers: bool = True, stamps: Sequence[float | None] | None = None,
    ) -> list[TxnResult | StoreError | None]:
        """Apply many transactions in order, queued together so they share group commits.

        One result per transaction: its :class:`TxnResult`, or the :class:`StoreError` it alone
        failed with (a failed commit of the whole batch raises). ``validated=True`` skips the shape
        checks for transactions already checked before they were proposed (a Raft member applying
        committed entries), leaving only the cheap quota cost to compute. ``answers=False`` yields
        None for every transaction that did not fail: a follower applying entries nobody waits on
        here builds no responses. ``stamps``: each transaction's simulated write time (a Raft
        member's leader stamped its entry), recorded as the time of the revision it writes.
        """
        self._check_open()
        group = _Group(len(txns), asyncio.get_running_loop().create_future())
        pending = self._pending
        quiet = not answers
        for slot, (compares, success, failure) in enumerate(txns):
            if validated:
                cost, ranged = _trusted_cost(success, failure)
            else:
                try:
                    cost, ranged = validate_txn(compares, success, failure)
                except StoreError as err:
                    group.settle(slot, err)
                    continue
            if cost:
                if self._alarms:
                    group.settle(slot, NoSpaceError())
                    continue
                if self._in_use + self._pending_cost + cost > self._quota:
                    self._alarms.append("NOSPACE")
                    group.settle(slot, NoSpaceError())
                    continue
            item = _Pending(compares, success, failure, None, cost, ranged, quiet, group, slot)
            if stamps is not None:
                item.stamp = stamps[slot]
            pending.append(item)
            self._pending_cost += cost
        self._wakeup.set()
        if group.left:
            await group.future
        for result in group.results:
            if isinstance(result, BaseException) and not isinstance(result, StoreError):
                raise result
        return group.results

    async def put(self, key: str, value: bytes, lease: int = 0) -> int:
        """Unconditional put; returns its revision."""
        return (await self.txn([], [Put(key, value, lease)])).revision

    async def delete(self, key: str, end: str | None = None) -> int:
        """Delete a key (or ``[key, end)``); returns the number of keys deleted."""
        result = await self.txn([], [Delete(key, end)])
        response = result.responses[0]
        if isinstance(response, list):
            return len(response)
        return 0 if response is None else 1

    def create(self, key: str, value: bytes, lease: int = 0) -> Coroutine[Any, Any, TxnResult]:
        """Put only if the key does not exist; on failure ``responses[0]`` is the existing key's Get.

        A plain function handing back :meth:`txn`'s coroutine: one coroutine frame less per write."""
        return self.txn([Compare(key, "mod", "=", 0)], [Put(key, value, lease)], [Get(key)])

    def update(self, key: str, value: bytes, mod_revision: int, lease: int = 0) -> Coroutine[Any, Any, TxnResult]:
        """Put only if the key's mod revision is ``mod_revision``; on failure ``responses[0]`` is its Get."""
        return self.txn([Compare(key, "mod", "=", mod_revision)], [Put(key, value, lease)], [Get(key)])

    # ------------------------------------------------------------------ group commit

    async def _flush_loop(self) -> None:
        """Keep up to :data:`PIPELINE` batches on the SQLite thread; answer them in order.

        While batch N commits (its fsync runs without the GIL), batch N+1 is evaluated and queued,
        against the index plus the uncommitted writes of N. If N fails, N+1 fails with it (the
        thread refuses it, see :class:`backend.Chain`) and nothing new starts until both are done.
        """
        inflight = self._inflight
        while True:
            if self._broken is not None and self._pending:  # answered state lost its file: refuse the rest
                items, self._pending = self._pending, []
                self._pending_cost -= sum(item.cost for item in items)
                for item in items:
                    item.fail(self._broken)
            if self._pending and len(inflight) < (PIPELINE_EARLY if self.publish_early else PIPELINE) \
                    and not self._chain.broken and not self._lone:
                if any(c.target == "value" for item in self._pending for c in item.compares):
                    if self._held:
                        inflight.append(self._submit(self._merge_held()))
                    if inflight:  # value compares may need committed values read first: drain
                        await self._finish_batch(inflight.popleft())
                        continue
                    await self._prefetch_compared_values()
                take = len(self._pending)
                if not inflight and take >= 2 * SPLIT_MIN and self.split_batches:
                    take = (take + 1) // 2  # two half batches: one evaluates while the other commits
                take = min(take, MAX_BATCH)
                items = self._pending[:take]
                del self._pending[:take]
                try:
                    batch = self._prepare(items)
                except Exception as exc:  # a bug must fail these callers, not hang every later one
                    self._abandon(items, exc, inflight)
                    continue
                early = self.publish_early and not batch.fetch and not batch.ranges and all(b.published for b in inflight)
                if early and self.commit_interval > 0:
                    self._publish(batch, [])
                    self._hold(batch)
                    continue
                if self._held:  # commit order is revision order
                    inflight.append(self._submit(self._merge_held()))
                if not early and len(items) <= INLINE_MAX and self._can_commit_inline():
                    await self._commit_inline(batch)
                    if len(items) > 1 or _ready_callbacks(asyncio.get_running_loop()) != 1:
                        await asyncio.sleep(0)  # let the writers just answered queue their next txn first
                    # else park: only the writer just answered is about to run, and its next txn
                    # commits itself (see txn)
                    continue
                if not early and self._loop_aio is not None and not self.publish_early and batch.rows:
                    try:
                        recorded = self._record(batch)
                    except JournalError as exc:
                        self._broken = BackendError(exc)
                        self._fail_batch(batch, exc)
                        continue
                    if not recorded:  # the writer's thread writes this one's record: nothing of ours in flight
                        while inflight:
                            await self._finish_batch(inflight.popleft())
                inflight.append(self._submit(batch))
                if early:
                    self._publish(batch, [])
                continue
            if self._held and (self._held_due or self._flush_waiters or self._closed or self._chain.broken
                               or self._held_cost >= HELD_COST_LIMIT or len(self._held) >= MAX_BATCH):
                inflight.append(self._submit(self._merge_held()))
                continue
            if inflight:
                await self._finish_batch(inflight.popleft())
                await asyncio.sleep(0)  # let the writers just answered queue their next txn first
                continue
            if self._chain.broken:
                if self._cancel_from:
                    self._withdraw_records()
                self._chain.broken = False
            if self._closed and not self._pending and not self._lone:
                return
            if not self._pending or self._lone:  # a lone writer's commit wakes it when done
                self._parked = True
                try:
                    await self._wakeup.wait()
                finally:
                    self._parked = False
                self._wakeup.clear()

    async def _prefetch_compared_values(self) -> None:
        ids = []
        for item in self._pending:
            for c in item.compares:
                meta = self._keys.get(c.key) if c.target == "value" else None
                if meta is not None and meta[4] not in self._values:
                    ids.append(meta[4])
        if ids:
            for rid, value in (await self._read(backend.fetch_values, sorted(set(ids)))).items():
                self._cache_value(rid, value)

    def _hold(self, batch: _Batch) -> None:
        """Keep a published batch for the next commit; the first one held arms the interval."""
        if not self._held:
            self._held_due = False
            self._clock.call_later(self.commit_interval, self._commit_due)
        self._held.append(batch)
        self._held_cost += batch.cost

    def commit_soon(self) -> None:
        """Commit the held batches now rather than when :attr:`commit_interval` ends."""
        if self._held:
            self._commit_due()

    def _commit_due(self) -> None:
        self._held_due = True
        self._wakeup.set()

    def _merge_held(self) -> _Batch:
        """The held batches as one group commit (all published: only their rows remain to write)."""
        held, self._held = self._held, []
        self._held_cost = 0
        self._held_due = False
        if len(held) == 1:
            return held[0]
        merged = _Batch([], held[-1].seq)
        for batch in held:
            merged.rows.extend(batch.rows)
        merged.cost = sum(batch.cost for batch in held)
        merged.times = [mark for batch in held for mark in batch.times]
        merged.last_revision = held[-1].last_revision
        merged.published = True
        return merged

    def _prepare(self, items: list[_Pending]) -> _Batch:
        """Evaluate the transactions in order; build rows, reads and answers-to-be (no I/O)."""
        keys = self._keys
        uncommitted = self._uncommitted
        cache = self._values
        cache_limit = self._values_cap // 4
        batch = _Batch(items, self._next_seq)
        self._next_seq += 1
        seq = batch.seq
        overlay = batch.overlay
        known = batch.known
        fetch = batch.fetch
        rows = batch.rows
        ranges = batch.ranges
        changes = batch.changes

        def lookup(name: str) -> Meta | None:
            pending = uncommitted.get(name)
            return keys.get(name) if pending is None else pending[0]

        def need(rid: int) -> None:
            if rid not in known:
                value = cache.get(rid)
                if value is None:
                    fetch.add(rid)
                else:
                    known[rid] = value

        rev = self._next_revision
        cached = 0  # bytes of values put in the cache below
        now = self._clock.now()  # a transaction's own stamp (its Raft entry's) comes first
        last_time = self._mark_times[-1] if self._mark_times else None
        written = self._written_bytes
        for item in items:
            ok = True
            for c in item.compares:
                pending = uncommitted.get(c.key)
                meta = keys.get(c.key) if pending is None else pending[0]
                target = c.target
                if target == "mod":
                    actual: int | bytes = meta[1] if meta else 0
                elif target == "value":
                    if meta is None:
                        actual = b""
                    else:
                        need(meta[4])
                        actual = known[meta[4]]
                elif meta is None:
                    actual = 0
                elif target == "create":
                    actual = meta[0]
                else:
                    actual = meta[2]
                op = c.op
                if not (actual == c.value if op == "=" else _holds(actual, op, c.value)):
                    ok = False
                    break
            ops = item.success if ok else item.failure
            if item.ranged or len(ops) > MAX_SUB:
                writes = sum(_write_bound(op, keys, uncommitted) for op in ops)
                if writes > MAX_SUB:
                    batch.errors.append((item, InvalidRequestError(f"etcdserver: too many writes in one txn ({writes}, max {MAX_SUB})")))
                    continue
            sub = 0
            responses: list[Any] = []
            for op in ops:
                kind = type(op)
                if kind is Put:
                    key = op.key
                    pending = uncommitted.get(key)
                    prev = keys.get(key) if pending is None else pending[0]
                    rid = (rev << SUB_BITS) | sub
                    sub += 1
                    value = op.value
                    if prev is None:
                        meta = (rev, rev, 1, op.lease, rid)
                        rows.append((rid, rev, key, 0, rev, 0, 1, op.lease, value))
                        batch.created.append(key)
                    else:
                        meta = (prev[0], rev, prev[2] + 1, op.lease, rid)
                        rows.append((rid, rev, key, 0, prev[0], prev[4], prev[2] + 1, op.lease, value))
                        prid = prev[4]
                        if prid not in known:  # need(prid), inline: a put is the one op of nearly every write
                            old = cache.get(prid)
                            if old is None:
                                fetch.add(prid)
                            else:
                                known[prid] = old
                    known[rid] = value
                    if len(value) <= cache_limit:
                        cache[rid] = value
                        cached += len(value)
                    overlay[key] = meta
                    uncommitted[key] = (meta, seq)
                    changes.append((key, meta, prev, rev))
                    responses.append((_KV, key, prev))
                elif kind is Delete:
                    if op.end is None:
                        names = [op.key]
                    else:
                        names = sorted(n for n in set(keys).union(uncommitted) if _in(n, op.key, op.end))
                    deleted = []
                    for name in names:
                        prev = lookup(name)
                        if prev is None:
                            continue
                        rid = (rev << SUB_BITS) | sub
                        sub += 1
                        rows.append((rid, rev, name, 1, prev[0], prev[4], 0, 0, b""))
                        need(prev[4])
                        overlay[name] = None
                        uncommitted[name] = (None, seq)
                        changes.append((name, None, prev, rev))
                        deleted.append((name, prev))
                    if op.end is None:
                        responses.append((_KV, op.key, deleted[0][1] if deleted else None))
                    else:
                        responses.append((_KVS, deleted))
                else:  # Get
                    at = rev if sub else rev - 1
                    if op.end is None:
                        meta = lookup(op.key)
                        if meta is not None:
                            need(meta[4])
                        responses.append((_GET, op.key, meta, at))
                    else:
                        ranges.append((op.key, op.end, (rev << SUB_BITS) | sub, 0, False, False))
                        responses.append((_RANGE, len(ranges) - 1, at))
            batch.plans.append((item, ok, rev if sub else rev - 1, responses))
            if sub:
                t = item.stamp
                if t is None:
                    t = now
                if t != last_time:  # a time mark: revisions from here on were written at t
                    last_time = t
                    batch.times.append((rev, t, written))
                written += item.cost
                rev += 1
        self._next_revision = rev
        batch.last_revision = rev - 1
        self._written_bytes = written
        for mark in batch.times:
            self._mark_revs.append(mark[0])
            self._mark_times.append(mark[1])
            self._mark_bytes.append(mark[2])
        if cached:
            self._values_bytes += cached
            self._evict_values()
        return batch

    def _unmark_above(self, revision: int) -> None:
        """Forget the marks of revisions that were given out but never committed."""
        revs = self._mark_revs
        while revs and revs[-1] > revision:
            revs.pop()
            self._mark_times.pop()
            self._mark_bytes.pop()

    def _load_marks(self, marks: Sequence[backend.TimeMark]) -> None:
        self._mark_revs = [m[0] for m in marks]
        self._mark_times = [m[1] for m in marks]
        self._mark_bytes = [m[2] for m in marks]
        self._written_bytes = self._mark_bytes[-1] if marks else 0

    def _measure_now(self) -> bool:
        """Pages in use are measured every few batches, and every batch once near the quota."""
        self._batches_since_measure += 1
        measure = (
            self._batches_since_measure >= MEASURE_EVERY
            or self._in_use + self._pending_cost > self._quota * 0.9
        )
        if measure:
            self._batches_since_measure = 0
        return measure

    def _submit(self, batch: _Batch) -> _Batch:
        batch.task = backend.submit_on_thread(
            self._writer, backend.apply_batch, self._chain, batch.rows, sorted(batch.fetch), batch.ranges,
            self._measure_now(), self._journal if batch.record is None else None, True, batch.times,
        )
        batch.io = io_tracker(self._clock)
        batch.io.__enter__()  # VirtualClock.settle() waits until _finish_batch has taken the result
        return batch

    async def _finish_batch(self, batch: _Batch) -> None:
        assert batch.task is not None and batch.io is not None
        try:
            result = await batch.task
        except BaseException as exc:  # noqa: BLE001 — whatever SQLite raised, the batch failed as a whole
            if batch.record is not None:  # written or not, it must be withdrawn
                with contextlib.suppress(JournalError):
                    await self._record_landed(batch.record)
                self._cancel_from = min(self._cancel_from or batch.rows[0][1], batch.rows[0][1])
            batch.io.__exit__(None, None, None)
            self._batch_failed(batch, exc)
            if isinstance(exc, asyncio.CancelledError):
                raise
            return
        if batch.record is not None:
            try:
                await self._record_landed(batch.record)
            except JournalError as exc:
                batch.io.__exit__(None, None, None)
                self._batch_failed(batch, exc)  # SQLite has it, the device may not: the log is broken
                return
        batch.io.__exit__(None, None, None)
        self._batch_committed(batch, result)

    async def _record_landed(self, record: asyncio.Future[int]) -> None:
        """Wait for a loop-written record (the oldest in flight); raises JournalError if it is not on the device."""
        if not record.done():
            await asyncio.wait([record])
        self._journal.landed(record)  # type: ignore[union-attr]

    def _record(self, batch: _Batch) -> bool:
        """Start the batch's journal record from the loop, before its SQLite commit is queued: the
        writer's thread then only commits (it no longer takes the GIL back to submit the write and
        again after waiting for it), and the device writes while the batch waits in its queue. The
        batch is answered once both are done. False, nothing started, for a record too big for the
        journal: the writer's thread handles that one the classic way (:func:`backend.apply_batch`).
        """
        rows = batch.rows
        batch.record = self._journal.write_ahead(  # type: ignore[union-attr]
            rows[0][1], rows[-1][1], rows, self._loop_aio, self._sync_behind_commits)  # type: ignore[arg-type]
        return batch.record is not None

    def _sync_behind_commits(self) -> Future[None]:
        """The journal moves to a region whose records SQLite may not have committed yet: every
        batch recorded so far is queued on the writer's thread, so a sync queued behind them (its
        queue is in order) makes them durable. The journal waits for it before it overwrites the region."""
        done: Future[None] = Future()
        journal = self._journal
        assert journal is not None

        def sync(_db: Any) -> None:  # on the writer's thread, after the commits queued before
            try:
                synced = journal.sync_in_background()
            except BaseException as exc:  # noqa: BLE001 — the journal's next switch reports it
                done.set_exception(exc)
                return
            synced.add_done_callback(
                lambda f: done.set_exception(f.exception()) if f.exception() else done.set_result(None))  # type: ignore[arg-type]

        backend.submit_on_thread(self._writer, sync)
        return done

    def _withdraw_records(self) -> None:
        """SQLite refused batches whose records are on the device: a cancel record from the first
        one's revision, before those revisions are given out again (see :mod:`~kconsole.store.journal`)."""
        first, self._cancel_from = self._cancel_from, 0
        try:
            self._journal.append(first, first - 1, [])  # type: ignore[union-attr]
        except JournalError as exc:
            self._broken = BackendError(exc)
            self._flushed_to(0)

    def _finish_journal_write(self) -> Callable[[], None] | None:
        """What makes an inline commit's journal record durable (nothing to wait for without one)."""
        return self._journal.finish if self._journal is not None else None

    def _can_commit_inline(self) -> bool:
        """Nothing queued, in flight or held, the writer's thread idle: a commit may run right here."""
        return not self._pending and self._idle()

    def _idle(self) -> bool:
        """Nothing in flight or held, the writer's thread idle: nothing a commit on the loop could overtake."""
        return not (self._inflight or self._held or self._writer_calls or self.publish_early
                    or self._chain.broken or self._closed or self._lone)

    async def _commit_inline(self, batch: _Batch) -> None:
        """Commit ``batch`` on the loop (see :meth:`_can_commit_inline`) and answer its callers.

        The journal write overlaps SQLite's commit; then the loop turns once while the device
        writes (what is ready runs: watchers woken by the previous commit, other writers, whose
        txns queue), and the index is published and the callers answered once the record is on
        the device, so nothing of the batch is seen before it is durable.
        """
        result = self._apply_inline(batch)
        if result is not None:
            try:
                await asyncio.sleep(0)
            finally:  # cancelled or not, the commit happened: publish it
                self._batch_committed(batch, result, self._finish_journal_write())

    def _apply_inline(self, batch: _Batch) -> backend.BatchResult | None:
        """SQLite's commit of ``batch`` on the loop, its journal write left in flight; None (its
        callers failed) when SQLite refused it."""
        try:
            return backend.apply_batch(
                self._writer._conn, self._chain, batch.rows, sorted(batch.fetch), batch.ranges,  # noqa: SLF001
                self._measure_now(), self._journal, wait_journal=False, times=batch.times,
            )
        except Exception as exc:  # noqa: BLE001 — whatever SQLite raised, the batch failed as a whole
            self._batch_failed(batch, exc)
            self._chain.broken = False  # nothing was queued behind it
            return None

    def _batch_failed(self, batch: _Batch, exc: BaseException) -> None:
        if batch.published or isinstance(exc, JournalError):
            # Answered already, or committed without its durable record: this log no longer
            # matches its file (a restart reads the file again).
            self._broken = exc if isinstance(exc, StoreError) else BackendError(exc)
            self._flushed_to(0)
        self._fail_batch(batch, exc)

    def _batch_committed(
        self, batch: _Batch, result: backend.BatchResult, durable: Callable[[], None] | None = None
    ) -> None:
        fetched, range_results, sizes = result
        self._pending_cost -= batch.cost
        self._written_since_checkpoint += batch.cost + PAGE_BYTES * (len(batch.rows) + 1)
        if self._written_since_checkpoint > self._checkpoint_after and self._checkpoint_task is None:
            self._written_since_checkpoint = 0
            self._checkpoint_task = asyncio.create_task(self._checkpoint(), name="revlog-checkpoint")
        if sizes is None:
            self._in_use += batch.cost
        else:
            self._in_use = sizes[1]
        if fetched:
            batch.known.update(fetched)
        if not batch.published and not self._publish(batch, range_results, durable):
            self._flushed_to(0)
            return
        self._flushed_to(batch.last_revision)

    def _publish(self, batch: _Batch, range_results: list[Any], durable: Callable[[], None] | None = None) -> bool:
        """Publish the index, then feed watchers and answer callers (in that order, so a watcher's
        task, such as a watch cache fanning the event out, runs before the callers' next requests).

        ``durable`` waits for the batch's journal record (an inline commit): the answers and
        events are built while the device writes, and given out only once it has. Nothing else
        runs on the loop meanwhile, so nobody sees the index ahead of the device. False when that
        record failed: nobody was answered, and the log is broken.
        """
        batch.published = True
        known = batch.known
        keys = self._keys
        uncommitted = self._uncommitted
        seq = batch.seq
        for name, meta in batch.overlay.items():
            if meta is None:
                if keys.pop(name, None) is not None:
                    self._sorted_stale += 1
            else:
                keys[name] = meta
            pending = uncommitted.get(name)
            if pending is not None and pending[1] == seq:
                del uncommitted[name]
        members = self._sorted_members
        for name in batch.created:
            if name not in members:
                members.add(name)
                self._sorted_added.append(name)
        self._revision = batch.last_revision

        def kv_of(name: str, meta: Meta | None) -> KeyValue | None:
            if meta is None:
                return None
            return KeyValue(name, known[meta[4]], meta[0], meta[1], meta[2], meta[3])

        for item, exc in batch.errors:
            item.fail(exc)
        answers: list[tuple[_Pending, TxnResult | None]] = []
        for item, ok, at, responses in batch.plans:
            if item.quiet:
                answers.append((item, None))
                continue
            out: list[object] = []
            for r in responses:
                tag = r[0]
                if tag is _KV:
                    meta = r[2]
                    out.append(None if meta is None else KeyValue(r[1], known[meta[4]], meta[0], meta[1], meta[2], meta[3]))
                elif tag is _GET:
                    kv = kv_of(r[1], r[2])
                    out.append(RangeResult([kv] if kv else [], 1 if kv else 0, False, r[3]))
                elif tag is _KVS:
                    out.append([kv_of(name, prev) for name, prev in r[1]])
                else:
                    found, count = range_results[r[1]]
                    out.append(RangeResult([KeyValue(*row) for row in found], count, False, r[2]))
            answers.append((item, TxnResult(ok, at, out)))

        events: list[Event] = []
        if batch.changes and self._watchers:
            for name, meta, prev, at in batch.changes:
                prev_kv = kv_of(name, prev)
                if meta is None:
                    events.append(Event("DELETE", KeyValue(name, b"", 0, at, 0, 0), prev_kv))
                else:
                    events.append(Event("PUT", KeyValue(name, known[meta[4]], meta[0], meta[1], meta[2], meta[3]), prev_kv))
        if durable is not None:
            try:
                durable()
            except JournalError as exc:
                # SQLite holds the batch, the device may not: answer nobody, trust nothing more.
                self._broken = BackendError(exc)
                for item, _ in answers:
                    item.fail(self._broken)
                return False
        if events:
            names = [change[0] for change in batch.changes]
            lowest, highest = min(names), max(names)
            for watcher in list(self._watchers):
                watcher.deliver(events, self._revision, lowest, highest)
        for item, result in answers:
            future = item.future
            if item.group is None and future is not None:
                if not future.done():
                    future.set_result(result)  # type: ignore[arg-type]
            else:
                item.resolve(result)
        return True

    async def _checkpoint(self) -> None:
        try:
            with io_tracker(self._clock):
                seen = 0
                for _ in range(CHECKPOINT_PASSES):
                    busy, frames, copied = await backend.run_on_thread(self._checkpointer, backend.checkpoint)
                    if busy or copied < frames or frames - seen < CHECKPOINT_CATCH_UP_FRAMES:
                        break
                    seen = frames
                # Run the next one shortly before the WAL is full, so the writer finds few frames left.
                left = (backend.BACKSTOP_CHECKPOINT_PAGES - frames) * PAGE_BYTES
                self._checkpoint_after = min(CHECKPOINT_BYTES, max(left - CHECKPOINT_BYTES // 4, CHECKPOINT_BYTES // 8))
        except Exception as exc:  # noqa: BLE001 — the writer's backstop checkpoint still bounds the WAL
            log.warning("background checkpoint of %s failed: %s", self.path, exc)
        finally:
            self._checkpoint_task = None

    def _abandon(self, items: list[_Pending], exc: Exception, inflight: deque[_Batch]) -> None:
        """Evaluation itself failed: undo whatever it recorded and fail its transactions."""
        self._pending_cost -= sum(item.cost for item in items)
        self._uncommitted.clear()
        self._unmark_above(self._next_revision - 1)
        for batch in inflight:
            for name, meta in batch.overlay.items():
                self._uncommitted[name] = (meta, batch.seq)
        error = exc if isinstance(exc, StoreError) else BackendError(exc)
        for item in items:
            item.fail(error)

    def _fail_batch(self, batch: _Batch, exc: BaseException) -> None:
        """Nothing of the batch was kept: forget its writes and fail every transaction in it."""
        self._pending_cost -= batch.cost
        error = exc if isinstance(exc, StoreError) else BackendError(exc)
        # Every later in-flight batch fails too (the thread refuses them), so all uncommitted
        # state goes; revisions restart after the last committed one.
        self._uncommitted.clear()
        self._next_revision = self._revision + 1
        self._unmark_above(self._revision)
        for row in batch.rows:
            value = self._values.pop(row[0], None)
            if value is not None:
                self._values_bytes -= len(value)
        for item in batch.items:
            item.fail(error)

    def _cache_value(self, rid: int, value: bytes) -> None:
        size = len(value)
        if size > self._values_cap // 4:
            return
        self._values[rid] = value
        self._values_bytes += size
        self._evict_values()

    def _evict_values(self) -> None:
        """Drop the oldest values until the cache is within its cap (a put's own is put in in
        :meth:`_prepare`, inline: one call per batch instead of one per row)."""
        while self._values_bytes > self._values_cap:
            _, old = self._values.popitem(last=False)
            self._values_bytes -= len(old)

    # ------------------------------------------------------------------ watch

    def watch(
        self, key: str, end: str | None = None, *, start_revision: int = 0, prev_kv: bool = True,
        progress_notify: bool = False,
    ) -> Watcher:
        """Events of ``[key, end)`` from ``start_revision`` (0 = from the next revision) on.

        Registered immediately: nothing committed after this call returns is missed.
        """
        self._check_open()
        _check_key(key)
        if start_revision < 0:
            raise InvalidRequestError(f"start_revision must be >= 0, not {start_revision}")
        watcher = Watcher(
            self, self._clock, key, end, start_revision=start_revision, prev_kv=prev_kv,
            progress_notify=progress_notify, max_buffered=self._watch_buffer, on_close=self._unwatch,
        )
        if watcher.active:
            self._watchers.add(watcher)
        return watcher

    def _unwatch(self, watcher: Watcher) -> None:
        self._watchers.discard(watcher)

    # ------------------------------------------------------------------ compaction, status, alarms

    async def compact(self, revision: int, history_floor: int | None = None) -> None:
        """Refuse reads below ``revision`` (see the module docstring); rows go only below
        ``history_floor`` (default: ``revision``), so history reads still see the ones above it."""
        self._check_open()
        if revision > self._revision:
            raise FutureRevisionError()
        if revision <= self._compact_revision:
            raise CompactedError(self._compact_revision)
        floor = revision if history_floor is None else min(max(history_floor, 0), revision)
        floor = max(floor, self._history_floor)
        self._compact_revision = revision  # refuse older reads from now on, before rows go
        self._history_floor = floor
        async with self._compact_lock:
            with io_tracker(self._clock):
                await self._on_writer(
                    backend.set_meta, [("compact_revision", revision), ("revision_floor", self._revision),
                                       ("history_floor", floor)]
                )
                bound = row_id(floor, 0)
                lo = await self._on_writer(backend.first_id)
                while lo is not None and lo < bound:
                    hi = min(bound, lo + row_id(COMPACT_CHUNK_REVISIONS, 0))
                    _, lo = await self._on_writer(backend.compact_chunk, lo, hi, bound)
                if self._mark_revs and self._mark_revs[0] < floor:
                    await self._on_writer(backend.drop_times_below, floor)
                _, self._in_use = await self._on_writer(backend.usage)
        self._drop_marks_below(floor)
        self._drop_cached_below(bound)

    def _drop_marks_below(self, revision: int) -> None:
        keep = max(bisect.bisect_right(self._mark_revs, revision) - 1, 0)
        if keep:
            del self._mark_revs[:keep], self._mark_times[:keep], self._mark_bytes[:keep]

    def _drop_cached_below(self, bound: int) -> None:
        live = {meta[4] for meta in self._keys.values()} if len(self._values) else set()
        for rid in [r for r in self._values if r < bound and r not in live]:
            self._values_bytes -= len(self._values.pop(rid))

    async def _auto_compact(self, retention: int, interval: float) -> None:
        while not self._closed:
            await self._clock.sleep(interval)
            target = self._revision - retention
            if target > self._compact_revision and not self._closed:
                try:
                    await self.compact(target)
                except (CompactedError, FutureRevisionError, ClosedError):
                    pass

    async def status(self) -> Status:
        self._check_open()
        with io_tracker(self._clock):
            _, in_use = await backend.run_on_thread(self._reader, backend.usage)
        db_size = 0
        for suffix in ("", "-wal"):
            try:
                db_size += os.path.getsize(f"{self.path}{suffix}")
            except FileNotFoundError:
                pass
        return Status(
            revision=self._revision,
            compact_revision=self._compact_revision,
            db_size=db_size,
            db_size_in_use=in_use,
            keys=len(self._keys),
            alarms=list(self._alarms),
        )

    async def backup(self, dest: str | os.PathLike[str]) -> int:
        """Write a consistent copy of the store to ``dest`` while it keeps serving (etcdctl snapshot
        save); returns the revision the copy holds. Open the copy with :meth:`open` to restore."""
        self._check_open()
        target = Path(dest)
        if target.exists():
            raise FileExistsError(f"snapshot target {str(target)!r} already exists")
        if not target.parent.is_dir():
            raise FileNotFoundError(f"snapshot folder {str(target.parent)!r} does not exist")
        await self._until_flushed(self._revision)
        with io_tracker(self._clock):
            return await backend.run_on_thread(self._reader, backend.backup, str(target))

    async def disarm(self) -> None:
        """Clear the NOSPACE alarm (etcdctl alarm disarm); the next write over quota raises it again."""
        self._check_open()
        with io_tracker(self._clock):
            _, self._in_use = await self._on_writer(backend.usage)
        self._alarms.clear()

    async def _on_writer(self, fn: Any, *args: Any) -> Any:
        """Run ``fn`` on the writer's thread; meanwhile no group commit runs on the loop."""
        self._writer_calls += 1
        try:
            return await backend.run_on_thread(self._writer, fn, *args)
        finally:
            self._writer_calls -= 1

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedError()
        if self._broken is not None:
            raise self._broken

    @property
    def broken(self) -> StoreError | None:
        """Why a commit failed (every later call raises it), else None."""
        return self._broken

    @property
    def flushed_revision(self) -> int:
        """The last revision committed to SQLite (behind :attr:`revision` only with ``publish_early``)."""
        return self._flushed

    async def _until_flushed(self, revision: int) -> None:
        while self._flushed < revision:
            if self._broken is not None:
                raise self._broken
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._flush_waiters.append((revision, fut))
            self._wakeup.set()  # held batches commit now
            await fut

    def _flushed_to(self, revision: int) -> None:
        self._flushed = max(self._flushed, revision)
        if self.on_flushed is not None and self._broken is None:
            self.on_flushed(self._flushed)
        if self._flush_waiters:
            still = []
            for rev, fut in self._flush_waiters:
                if rev <= self._flushed or self._broken is not None:
                    if not fut.done():
                        fut.set_result(None)
                else:
                    still.append((rev, fut))
            self._flush_waiters = still


# ---------------------------------------------------------------------- helpers


def _write_bound(op: Op, keys: Mapping[str, object], uncommitted: Mapping[str, object]) -> int:
    """At most how many rows ``op`` writes (live keys plus keys written by batches in flight)."""
    if type(op) is Put:
        return 1
    if type(op) is Delete:
        if op.end is None:
            return 1
        return sum(1 for n in set(keys).union(uncommitted) if _in(n, op.key, op.end))
    return 0


def _in(name: str, key: str, end: str) -> bool:
    return name >= key if end == "\0" else key <= name < end


def _holds(actual: int | bytes, op: str, expected: int | bytes) -> bool:
    if op == "=":
        return actual == expected
    if op == "!=":
        return actual != expected
    if op == "<":
        return actual < expected  # type: ignore[operator]
    return actual > expected  # type: ignore[operator]


def _check_key(key: object) -> None:
    if not isinstance(key, str):
        raise InvalidRequestError(f"key must be a str, not {type(key).__name__}")
    if not key:
        raise InvalidRequestError("etcdserver: key is not provided")


def _trusted_cost(success: Sequence[Op], failure: Sequence[Op]) -> tuple[int, bool]:
    """:func:`validate_txn`'s answer for a transaction it already accepted, without the checks."""
    cost = 0
    ranged = False
    for branch in (success, failure):
        for op in branch:
            kind = type(op)
            if kind is Put:
                cost += len(op.key) * 2 + len(op.value) + ROW_OVERHEAD  # type: ignore[union-attr]
            elif kind is Delete and op.end is not None:  # type: ignore[union-attr]
                ranged = True
    return cost, ranged


def validate_txn(compares: Sequence[Compare], success: Sequence[Op], failure: Sequence[Op]) -> tuple[int, bool]:
    """Check a txn's shape and size before it is queued.

    Returns its quota cost (0 when it puts nothing) and whether it has a ranged delete. Written for
    speed: it runs once per request on the event loop.
    """
    size = 0
    for c in compares:
        if type(c) is not Compare:
            raise InvalidRequestError(f"compares must be Compare, not {type(c).__name__}")
        key = c.key
        if type(key) is not str or not key:
            _check_key(key)
        target = c.target
        if target == "value":
            if type(c.value) is not bytes:
                raise InvalidRequestError(f"a value compare needs bytes, not {type(c.value).__name__}")
            size += len(c.value)
        elif target not in COMPARE_TARGETS:
            raise InvalidRequestError(f"compare target must be one of {COMPARE_TARGETS}, not {target!r}")
        elif type(c.value) is not int:
            raise InvalidRequestError(f"a {target} compare needs an int, not {type(c.value).__name__}")
        if c.op not in COMPARE_OPS:
            raise InvalidRequestError(f"compare op must be one of {COMPARE_OPS}, not {c.op!r}")
        size += len(key)
    cost = 0
    has_ranged = False
    for branch in (success, failure):
        written: set[str] = set()
        ranged: list[tuple[str, str]] = []
        for op in branch:
            kind = type(op)
            key = op.key
            if type(key) is not str or not key:
                _check_key(key)
            if kind is Put:
                value = op.value  # type: ignore[union-attr]
                if type(value) is not bytes:
                    raise InvalidRequestError(f"put value must be bytes, not {type(value).__name__}")
                if key in written:
                    raise InvalidRequestError("etcdserver: duplicate key given in txn request")
                written.add(key)
                size += len(key) + len(value)
                cost += len(key) * 2 + len(value) + ROW_OVERHEAD
            elif kind is Delete or kind is Get:
                end = op.end  # type: ignore[union-attr]
                if end is None:
                    if kind is Delete:
                        if key in written:
                            raise InvalidRequestError("etcdserver: duplicate key given in txn request")
                        written.add(key)
                elif type(end) is not str:
                    raise InvalidRequestError(f"range end must be a str, not {type(end).__name__}")
                else:
                    if kind is Delete:
                        ranged.append((key, end))
                    size += len(end)
                size += len(key)
            else:
                raise InvalidRequestError(f"txn ops must be Put, Delete or Get, not {type(op).__name__}")
        for lo, hi in ranged:
            has_ranged = True
            if any(_in(name, lo, hi) for name in written):
                raise InvalidRequestError("etcdserver: duplicate key given in txn request")
    if size > MAX_REQUEST_BYTES:
        raise TooLargeError()
    return cost, has_ranged
