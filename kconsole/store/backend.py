"""The SQLite side of the revision log: schema, and the functions that run on aiosqlite's thread.

One row per write, kine-style. A row's ``id`` is ``revision << 20 | sub`` (``sub`` numbers the writes
of one transaction), so "the state as of write (revision, sub)" is simply ``id < bound`` and the
history of a revision window is an ``id`` range scan on the table's own b-tree. A deletion is a row
with ``deleted = 1`` (a tombstone). ``prev_id`` points at the key's previous row (0 when the write
created the key), which serves ``prev_kv`` for watches replayed from history.

Everything here is synchronous and runs on the connection's thread; the revision log calls each
function through :func:`run_on_thread` so a whole group commit costs one thread round trip (or, for
a small group commit when nothing else is in flight, calls :func:`apply_batch` on the loop itself).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any, TypeVar

import aiosqlite

from kconsole.store.journal import Journal, Record

T = TypeVar("T")

#: Writes per transaction are numbered in the low 16 bits of a row id.
SUB_BITS = 20
MAX_SUB = (1 << SUB_BITS) - 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS kv (
    id INTEGER PRIMARY KEY,
    revision INTEGER NOT NULL,
    name TEXT NOT NULL,
    deleted INTEGER NOT NULL,
    create_revision INTEGER NOT NULL,
    prev_id INTEGER NOT NULL,
    version INTEGER NOT NULL,
    lease INTEGER NOT NULL,
    value BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS kv_name ON kv (name);
CREATE TABLE IF NOT EXISTS meta (
    name TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS revtime (
    revision INTEGER PRIMARY KEY,
    time REAL NOT NULL,
    bytes INTEGER NOT NULL
);
"""

#: A time mark: from ``revision`` on, revisions were written at simulated ``time``, and ``bytes``
#: is the running total of bytes written before ``revision`` (what the history's size is told from).
TimeMark = tuple[int, float, int]

#: A row as inserted: (id, revision, name, deleted, create_revision, prev_id, version, lease, value).
Row = tuple[int, int, str, int, int, int, int, int, bytes]

INSERT_HEAD = "INSERT INTO kv (id, revision, name, deleted, create_revision, prev_id, version, lease, value) VALUES "

#: A key's state: (create_revision, mod_revision, version, lease, row id).
Meta = tuple[int, int, int, int, int]

#: A range result row: (name, value, create_revision, mod_revision, version, lease).
KVRow = tuple[str, bytes, int, int, int, int]

#: A history row: (revision, name, deleted, create_revision, version, lease, value,
#: prev_create_revision, prev_revision, prev_version, prev_lease, prev_value) — prev_* NULL when none.
HistoryRow = tuple[int, str, int, int, int, int, bytes, Any, Any, Any, Any, Any]


def row_id(revision: int, sub: int) -> int:
    return (revision << SUB_BITS) | sub


async def run_on_thread(conn: aiosqlite.Connection, fn: Callable[..., T], *args: Any) -> T:
    """Run ``fn(raw_connection, *args)`` on the connection's thread in one round trip.

    aiosqlite exposes only statement-at-a-time helpers publicly; a group commit wants insert,
    reads and COMMIT in one hop, so this uses its (long-stable) ``_execute`` queue directly.
    """
    return await conn._execute(_with_raw, conn, fn, args)  # noqa: SLF001


def submit_on_thread(conn: aiosqlite.Connection, fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
    """Queue ``fn(raw_connection, *args)`` on the connection's thread now; await the future later.

    Lets a pipelined group commit be queued without an extra task step (a hop less per batch).
    """
    future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
    conn._tx.put_nowait((future, partial(_with_raw, conn, fn, args)))  # noqa: SLF001
    return future


def _with_raw(conn: aiosqlite.Connection, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
    return fn(conn._conn, *args)  # noqa: SLF001


def configure(db: sqlite3.Connection, synchronous: str, writer: bool) -> None:
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(f"PRAGMA synchronous={synchronous}")
    db.execute("PRAGMA busy_timeout=10000")
    db.execute("PRAGMA temp_store=MEMORY")
    db.execute("PRAGMA cache_size=-65536")
    if writer:
        # Checkpoints run on their own connection (see ``checkpoint``); the writer finishes one
        # inline when the WAL holds this many pages, so that the WAL starts over.
        db.execute(f"PRAGMA wal_autocheckpoint={BACKSTOP_CHECKPOINT_PAGES}")
        # A restarted WAL keeps up to 80 MB of its file: the next commits overwrite those blocks
        # (no size change to fdatasync); only a WAL the backstop let grow beyond is cut back.
        db.execute(f"PRAGMA journal_size_limit={WAL_KEEP_BYTES}")
        db.executescript(SCHEMA)


#: Bytes of WAL file kept when the WAL restarts (see ``configure``).
WAL_KEEP_BYTES = 80 * 1024 * 1024

#: WAL pages after which the writer itself checkpoints. The background checkpointer has copied all
#: but the latest frames by then, so this is short; and a checkpoint that copied every frame is
#: what lets the writer's next commit restart the WAL at its beginning (a checkpoint beside a
#: writer that never pauses never catches up). The WAL so cycles within WAL_KEEP_BYTES.
BACKSTOP_CHECKPOINT_PAGES = 16384


def checkpoint(db: sqlite3.Connection) -> tuple[int, int, int]:
    """Copy committed WAL frames into the database file without blocking the writer (PASSIVE).

    Run on a connection of its own so the copy and its fsync happen beside group commits
    rather than inside one of them. Returns SQLite's (busy, wal frames, frames checkpointed).
    """
    return db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()


def load_state(db: sqlite3.Connection) -> tuple[int, int, list[tuple[str, int, int, int, int, int]]]:
    """(revision, compact_revision, live keys as (name, create_revision, mod_revision, version, lease, id))."""
    meta = dict(db.execute("SELECT name, value FROM meta").fetchall())
    top = db.execute("SELECT MAX(revision) FROM kv").fetchone()[0] or 0
    revision = max(top, meta.get("revision_floor", 0))
    keys = db.execute(
        "SELECT name, create_revision, revision, version, lease, id FROM kv"
        " WHERE id IN (SELECT MAX(id) FROM kv GROUP BY name) AND deleted = 0"
    ).fetchall()
    return revision, meta.get("compact_revision", 0), keys


def usage(db: sqlite3.Connection) -> tuple[int, int]:
    """(bytes of pages in the file, bytes of pages in use)."""
    return db.execute(
        "SELECT c.page_count * s.page_size, (c.page_count - f.freelist_count) * s.page_size"
        " FROM pragma_page_count() c, pragma_freelist_count() f, pragma_page_size() s"
    ).fetchone()


def fetch_values(db: sqlite3.Connection, ids: Sequence[int]) -> dict[int, bytes]:
    out: dict[int, bytes] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        out.update(db.execute(f"SELECT id, value FROM kv WHERE id IN ({marks})", chunk).fetchall())
    return out


def range_rows(
    db: sqlite3.Connection, key: str, end: str | None, bound: int, limit: int, count_only: bool, keys_only: bool
) -> tuple[list[KVRow], int]:
    """Live keys of ``[key, end)`` as of row id ``bound`` (exclusive), sorted; and their count."""
    if end is None:
        row = db.execute(
            "SELECT name, value, create_revision, revision, version, lease, deleted FROM kv"
            " WHERE name = ? AND id < ? ORDER BY id DESC LIMIT 1",
            (key, bound),
        ).fetchone()
        if row is None or row[6]:
            return [], 0
        if count_only:
            return [], 1
        return [(row[0], b"" if keys_only else row[1], row[2], row[3], row[4], row[5])], 1
    if end == "\0":
        where, params = "name >= ? AND id < ?", (key, bound)
    else:
        where, params = "name >= ? AND name < ? AND id < ?", (key, end, bound)
    latest = f"SELECT MAX(id) FROM kv WHERE {where} GROUP BY name"
    if count_only or limit:
        count = db.execute(f"SELECT COUNT(*) FROM kv WHERE id IN ({latest}) AND deleted = 0", params).fetchone()[0]
        if count_only:
            return [], count
    value = "x''" if keys_only else "value"
    sql = (
        f"SELECT name, {value}, create_revision, revision, version, lease FROM kv"
        f" WHERE id IN ({latest}) AND deleted = 0 ORDER BY name"
    )
    if limit:
        rows = db.execute(sql + " LIMIT ?", (*params, limit)).fetchall()
    else:
        rows = db.execute(sql, params).fetchall()
        count = len(rows)
    return rows, count


RangeSpec = tuple[str, "str | None", int, int, bool, bool]


def read_ranges(db: sqlite3.Connection, specs: Sequence[RangeSpec]) -> list[tuple[list[KVRow], int]]:
    """Several ranges in one read transaction, so they see one snapshot."""
    db.execute("BEGIN")
    try:
        return [range_rows(db, *spec) for spec in specs]
    finally:
        db.execute("COMMIT")


def states_before(db: sqlite3.Connection, key: str, end: str, bound: int) -> dict[str, Meta | None]:
    """Keys of ``[key, end)`` written at or after row id ``bound``, each with its state just
    before ``bound`` ((create_revision, mod_revision, version, lease, id), or None when absent)."""
    if end == "\0":
        cond, params = "name >= ?", (key,)
    else:
        cond, params = "name >= ? AND name < ?", (key, end)
    rows = db.execute(
        f"WITH changed AS (SELECT DISTINCT name FROM kv WHERE id >= ? AND {cond})"
        " SELECT c.name, k.create_revision, k.revision, k.version, k.lease, k.id, k.deleted FROM changed c"
        " LEFT JOIN kv k ON k.id = (SELECT MAX(id) FROM kv p WHERE p.name = c.name AND p.id < ?)",
        (bound, *params, bound),
    ).fetchall()
    return {r[0]: None if r[5] is None or r[6] else (r[1], r[2], r[3], r[4], r[5]) for r in rows}


def history(
    db: sqlite3.Connection, key: str, end: str | None, start_id: int, stop_id: int, limit: int, by_name: bool = False
) -> list[tuple[int, HistoryRow]]:
    """Writes to ``[key, end)`` with ``start_id <= id < stop_id`` in order, each with its previous row.

    ``by_name``: the keys are few (one object, its Events) and the window long: walk the name index
    rather than every row of the window (SQLite has no statistics to choose by itself)."""
    if end is None:
        cond, params = "k.name = ?", (key,)
    elif end == "\0":
        cond, params = "k.name >= ?", (key,)
    else:
        cond, params = "k.name >= ? AND k.name < ?", (key, end)
    rows = db.execute(
        "SELECT k.id, k.revision, k.name, k.deleted, k.create_revision, k.version, k.lease, k.value,"
        " p.create_revision, p.revision, p.version, p.lease, p.value"
        f" FROM kv k {'INDEXED BY kv_name ' if by_name else ''}LEFT JOIN kv p ON p.id = k.prev_id AND k.prev_id != 0"
        f" WHERE k.id >= ? AND k.id < ? AND {cond} ORDER BY k.id LIMIT ?",
        (start_id, stop_id, *params, limit),
    ).fetchall()
    return [(r[0], r[1:]) for r in rows]


BatchResult = tuple[dict[int, bytes], list[tuple[list[KVRow], int]], tuple[int, int] | None]


class Chain:
    """Links pipelined group commits: once one fails, the ones queued behind it (evaluated against
    its writes) must fail too, until the event loop has seen them all and resets ``broken``."""

    __slots__ = ("broken",)

    def __init__(self) -> None:
        self.broken = False


class ChainBroken(Exception):
    def __init__(self) -> None:
        super().__init__("an earlier group commit this one depended on failed")


#: Rows per multi-row INSERT statement (9 parameters each, under SQLite's 32,766 limit).
INSERT_CHUNK = 3000
_ROW_PARAMS = "(?,?,?,?,?,?,?,?,?)"
INSERT_ONE = INSERT_HEAD + _ROW_PARAMS
_insert_sql: dict[int, str] = {}


def insert_rows(db: sqlite3.Connection, rows: Sequence[Row]) -> None:
    """One statement per chunk: one sqlite3_step (one GIL release) instead of one per row."""
    if len(rows) == 1:  # a lone writer's commit: its row is the statement's parameters as it is
        db.execute(INSERT_ONE, rows[0])
        return
    for start in range(0, len(rows), INSERT_CHUNK):
        chunk = rows[start : start + INSERT_CHUNK]
        sql = _insert_sql.get(len(chunk))
        if sql is None:
            sql = INSERT_HEAD + ",".join([_ROW_PARAMS] * len(chunk))
            if len(_insert_sql) < 256:
                _insert_sql[len(chunk)] = sql
        db.execute(sql, [field for row in chunk for field in row])


def apply_batch(
    db: sqlite3.Connection, chain: Chain, rows: Sequence[Row], fetch: Sequence[int], ranges: Sequence[RangeSpec],
    measure: bool, journal: Journal | None = None, wait_journal: bool = True,
    times: Sequence[TimeMark] = (),
) -> BatchResult:
    """One group commit: insert every row, read what the transactions asked for, commit; then,
    with a ``journal``, write the rows to it (durable once this returns).

    Nothing is kept when anything fails: the transaction is rolled back, the chain marked broken
    and the error raised. The common batch (rows only, or rows plus values of earlier rows) is a
    single autocommit INSERT: one sqlite3_step holds insert and commit, so this thread takes the
    GIL back only once instead of once per statement. A failed journal write after the commit
    raises :class:`JournalError`: SQLite holds the batch, the log must not go on as if it did not.
    ``wait_journal=False`` returns with the record's write in flight; the caller finishes it.
    ``times``: the batch's time marks, inserted in the same transaction as its rows.
    """
    if chain.broken:
        raise ChainBroken()
    started = False
    try:
        values = fetch_values(db, fetch) if fetch else {}
        if journal is not None and rows:
            journal.start(rows[0][1], rows[-1][1], rows)  # the device writes while SQLite commits
            started = True
        if ranges or times or len(rows) > INSERT_CHUNK:
            db.execute("BEGIN IMMEDIATE" if rows or times else "BEGIN")
            try:
                insert_rows(db, rows)
                if times:
                    db.executemany(INSERT_TIME, times)
                results = [range_rows(db, *spec) for spec in ranges]
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        else:
            insert_rows(db, rows)
            results = []
        if started:
            started = False
            if wait_journal:
                journal.finish()  # type: ignore[union-attr]
    except BaseException:
        chain.broken = True
        if started:
            journal.withdraw(rows[0][1])  # type: ignore[union-attr]
        raise
    return values, results, usage(db) if measure else None


def replay_journal(db: sqlite3.Connection, records: Sequence[Record], keep_journal: bool) -> int:
    """Insert the journaled rows SQLite lost (power loss before its WAL reached the device).

    Only a journal this database has used counts (``meta.journal``; a journal beside a new or
    replaced database file is not its history). Records above the top revision are inserted in
    order in one transaction, stopping at the first gap. Returns the revisions replayed.
    """
    meta = dict(db.execute("SELECT name, value FROM meta").fetchall())
    replayed = 0
    db.execute("BEGIN IMMEDIATE")
    try:
        if meta.get("journal") and records:
            top = db.execute("SELECT MAX(revision) FROM kv").fetchone()[0] or 0
            top = max(top, meta.get("revision_floor", 0))
            start = top
            for record in records:
                if record.last <= top:
                    continue
                if record.first > top + 1:
                    break
                insert_rows(db, [tuple(row) for row in record.rows if row[1] > top])
                top = record.last
            replayed = top - start
        if keep_journal and not meta.get("journal"):
            db.execute("INSERT INTO meta (name, value) VALUES ('journal', 1) ON CONFLICT (name) DO UPDATE SET value = 1")
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    return replayed


def set_meta(db: sqlite3.Connection, items: Iterable[tuple[str, int]]) -> None:
    db.execute("BEGIN IMMEDIATE")
    try:
        db.executemany("INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value", items)
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def compact_chunk(db: sqlite3.Connection, lo: int, hi: int, bound: int) -> tuple[int, int | None]:
    """Delete superseded rows and tombstones with ``lo <= id < hi`` (all below ``bound``).

    A row below the compaction bound survives only if it is its key's latest write below the bound
    and not a deletion: exactly what a range at the compact revision needs. Returns (rows deleted,
    id of the next row at or after ``hi`` below the bound, or None when done).
    """
    db.execute("BEGIN IMMEDIATE")
    try:
        cur = db.execute(
            "DELETE FROM kv WHERE id >= ? AND id < ? AND (deleted = 1 OR EXISTS"
            " (SELECT 1 FROM kv n WHERE n.name = kv.name AND n.id > kv.id AND n.id < ?))",
            (lo, hi, bound),
        )
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    nxt = db.execute("SELECT MIN(id) FROM kv WHERE id >= ? AND id < ?", (hi, bound)).fetchone()[0]
    return cur.rowcount, nxt


def backup(db: sqlite3.Connection, dest: str) -> int:
    """Copy the database to ``dest`` (a consistent snapshot, online); returns its revision."""
    target = sqlite3.connect(dest)
    try:
        db.backup(target)
        target.execute("PRAGMA journal_mode=DELETE")
        # A copy has no journal history: one found beside it later is not to be replayed into it.
        target.execute("DELETE FROM meta WHERE name = 'journal'")
        target.commit()
        top = target.execute("SELECT MAX(revision) FROM kv").fetchone()[0] or 0
        floor = target.execute("SELECT value FROM meta WHERE name = 'revision_floor'").fetchone()
        return max(top, floor[0] if floor else 0)
    finally:
        target.close()


INSERT_TIME = "INSERT OR REPLACE INTO revtime (revision, time, bytes) VALUES (?, ?, ?)"


def meta_value(db: sqlite3.Connection, name: str) -> int | None:
    row = db.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
    return None if row is None else row[0]


def load_times(db: sqlite3.Connection) -> list[TimeMark]:
    """Every time mark, oldest first."""
    return db.execute("SELECT revision, time, bytes FROM revtime ORDER BY revision").fetchall()


def drop_times_below(db: sqlite3.Connection, revision: int) -> None:
    """Forget the time marks before the one in force at ``revision`` (history below it is gone)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute("DELETE FROM revtime WHERE revision < (SELECT MAX(revision) FROM revtime WHERE revision <= ?)",
                   (revision,))
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def first_id(db: sqlite3.Connection) -> int | None:
    return db.execute("SELECT MIN(id) FROM kv").fetchone()[0]
