"""Who wrote each object, and which stage refused writes to it: the write requests, kept per object.

The audit ring (:mod:`kconsole.api.audit`) keeps the last requests of every kind, in memory; an
object's history needs its writes for as long as the history goes back, across restarts. So every
write request (create, update, patch, delete, deletecollection) is also recorded here, per object:
the user, the verb and subresource, the field manager it named, the answer's code, the revision it
wrote (the object's resourceVersion in the answer) or the pipeline stage that refused it. Node
heartbeat Leases and Events, which only repeat themselves, are left out.

Records are kept in memory (bounded, oldest dropped first) and, with a path, appended to a SQLite
file beside the store (``DATA/history/writes.sqlite``) on the clock every :data:`FLUSH_INTERVAL`
simulated seconds, in one transaction on a thread; the newest records are loaded again on start.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections import deque
from pathlib import Path
from typing import Any

from kconsole.clock import Clock, TimerHandle, io_tracker

log = logging.getLogger(__name__)

WRITE_VERBS = frozenset(("create", "update", "patch", "delete", "deletecollection"))
#: Records kept (in memory and in the file) at most.
DEFAULT_CAPACITY = 200_000
#: Simulated seconds between two appends to the file.
FLUSH_INTERVAL = 1.0
#: Resources whose writes are not recorded: they only repeat themselves.
SKIPPED = frozenset(("events", "events.events.k8s.io"))
SKIPPED_NAMESPACES = frozenset(("kube-node-lease",))

#: (time, user, verb, resource, subresource, namespace, name, code, stage, message, revision, field manager)
Row = tuple[float, str, str, str, str, str, str, int, str, str, int, str]
FIELDS = ("time", "user", "verb", "resource", "subresource", "namespace", "name", "code", "stage", "message",
          "revision", "fieldManager")

SCHEMA = """
CREATE TABLE IF NOT EXISTS writes (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    time REAL, user TEXT, verb TEXT, resource TEXT, subresource TEXT, namespace TEXT, name TEXT,
    code INTEGER, stage TEXT, message TEXT, revision INTEGER, manager TEXT
);
"""


class WriteLog:
    """Write requests by object (group resource, namespace, name), oldest first."""

    def __init__(self, clock: Clock, path: Path | None = None, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity <= 0:
            raise ValueError(f"write log capacity must be positive, not {capacity}")
        self.clock = clock
        self.path = path
        self.capacity = capacity
        self._by_object: dict[tuple[str, str, str], deque[Row]] = {}
        self._order: deque[tuple[str, str, str]] = deque()
        self._unsaved: list[Row] = []
        self._timer: TimerHandle | None = None
        self._flushing: asyncio.Task[None] | None = None
        self._db: sqlite3.Connection | None = None  # opened on first use; used by one flush at a time

    def load(self) -> int:
        """Read the newest records of the file back (blocking: called once, before serving)."""
        if self.path is None:
            return 0
        db = self._connection()
        rows = db.execute(
            "SELECT time, user, verb, resource, subresource, namespace, name, code, stage, message, revision,"
            " manager FROM writes ORDER BY seq DESC LIMIT ?", (self.capacity,)).fetchall()
        for row in reversed(rows):
            self._keep(tuple(row))  # type: ignore[arg-type]
        return len(rows)

    def _connection(self) -> sqlite3.Connection:
        """The file, in WAL mode without a sync per commit: losing the last second of who-wrote-what
        to a power cut is acceptable, a sync every simulated second at 60x speed is not."""
        if self._db is None:
            assert self.path is not None
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(SCHEMA)
            self._db = db
        return self._db

    def record(self, time: float, user: str, verb: str, resource: str, subresource: str | None,
               namespace: str | None, name: str | None, code: int, stage: str | None, message: str,
               revision: int, field_manager: str | None) -> None:
        """One answered write request (called by the API server for every write verb)."""
        if resource in SKIPPED or namespace in SKIPPED_NAMESPACES or not name:
            return
        row: Row = (time, user, verb, resource, subresource or "", namespace or "", name, code, stage or "",
                    message, revision, field_manager or "")
        self._keep(row)
        if self.path is not None:
            self._unsaved.append(row)
            if self._timer is None:
                self._timer = self.clock.call_later(FLUSH_INTERVAL, self._flush_due)

    def _keep(self, row: Row) -> None:
        key = (row[3], row[5], row[6])
        rows = self._by_object.get(key)
        if rows is None:
            rows = self._by_object[key] = deque()
        rows.append(row)
        self._order.append(key)
        if len(self._order) > self.capacity:
            old = self._order.popleft()
            bucket = self._by_object.get(old)
            if bucket:
                bucket.popleft()
                if not bucket:
                    del self._by_object[old]

    def for_object(self, resource: str, namespace: str | None, name: str) -> list[dict[str, Any]]:
        """The recorded write requests of one object, oldest first, as plain dicts."""
        rows = self._by_object.get((resource, namespace or "", name), ())
        return [dict(zip(FIELDS, row)) for row in rows]

    def _flush_due(self) -> None:
        self._timer = None
        if self._flushing is None and self._unsaved:
            self._flushing = asyncio.get_running_loop().create_task(self.flush())

    async def flush(self) -> None:
        """Append what is not in the file yet (one transaction, on a thread)."""
        rows, self._unsaved = self._unsaved, []
        try:
            if rows and self.path is not None:
                with io_tracker(self.clock):
                    await asyncio.to_thread(_append, self._connection(), rows, self.capacity)
        except (OSError, sqlite3.Error) as err:  # history of writers is lost, the cluster goes on
            log.warning("cannot record writes in %s: %s", self.path, err)
        finally:
            self._flushing = None

    async def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._flushing is not None:
            await self._flushing
        await self.flush()
        if self._db is not None:
            self._db.close()
            self._db = None


def _append(db: sqlite3.Connection, rows: list[Row], capacity: int) -> None:
    db.execute("BEGIN")
    try:
        db.executemany(
            "INSERT INTO writes (time, user, verb, resource, subresource, namespace, name, code, stage, message,"
            " revision, manager) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", rows)
        top = db.execute("SELECT MAX(seq) FROM writes").fetchone()[0] or 0
        if top % 1000 < len(rows):  # now and then, drop what is beyond the capacity
            db.execute("DELETE FROM writes WHERE seq <= ?", (top - capacity,))
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
