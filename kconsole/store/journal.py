"""The revision log's durable journal: what makes an acknowledged write survive power loss.

etcd's design: a small write-ahead record on the device per group commit, the database behind it
committed without its own fsync. With ``synchronous="FULL"`` the revision log's SQLite connection
runs ``NORMAL`` (its commits reach the OS, which survives ``kill -9``) and each group commit's rows
are written here as one record with ``O_DIRECT | O_DSYNC`` (``O_DSYNC`` alone where the filesystem
has no direct I/O): one write of a few 4 KiB blocks into a preallocated, zero-filled file, so the
device is asked for the data only, never for a new file size. On Linux with direct I/O the write is
started (native AIO) before SQLite commits and waited for after, so the two overlap; elsewhere it
follows the commit. A caller is answered once both are done. A group commit of the pipeline has its
record started from the event loop (:meth:`Journal.write_ahead`, completions on an eventfd the loop
watches) before it is queued for the writer's thread, which then only commits; an idle log's lone
commit starts and waits for its record on the loop itself (:meth:`Journal.start`), polling the
completion ring for a moment before it sleeps (``_Aio._poll``).

Layout: the file is two regions of equal size. Each region holds one chain of records written in
order from its first block, every record starting on a fresh block (an acknowledged record is never
rewritten, so a torn write only loses the record being written, which nobody was answered for). A
record is a 36-byte header (magic, epoch, first and last revision, payload length, crc32 of header
and payload) followed by the batch's rows (``marshal``). Every record of a chain has its chain's
epoch, and revisions continue from one record to the next; a chain ends at the first block that is
not such a record (zeros, a torn or stale record of an older epoch).

Recycling: when a region is full the journal moves to the other one under the next epoch. Before it
overwrites that region, everything the region held must be durable in SQLite: on every switch the
journal fsyncs SQLite's ``-wal`` and database files in the background (NORMAL checkpoints sync
what they copy before the WAL restarts, so the two fsyncs cover every commit made before them), and
the next switch waits for that to finish. A record written from the loop may still wait for its
commit when the journal switches: that sync is queued on the writer's thread behind every commit
queued so far (the revision log's ``_sync_behind_commits``). So at any moment SQLite's synced state plus the two chains
hold every acknowledged write.

Recovery (:func:`scan` then the revision log's replay): the valid records of both chains, the older
epoch first; those above the top revision SQLite kept are inserted again, in order, stopping at the
first gap. Besides what SQLite lost to a power loss, this may bring back the one group commit that
was in flight when the process died (its record is started before SQLite commits it): never
acknowledged, it may be applied or not, like an entry in etcd's WAL; it was evaluated on top of
every commit before it, so revisions stay whole. Then SQLite is synced and a new epoch starts in the first region. A group commit that
SQLite refused after its record was started is withdrawn: a cancel record (``first == last + 1``,
no rows) follows it, and recovery drops every earlier record from that revision on (the revisions
are given out again after the cancel). Without the overlap a refused commit never had a record. A
record whose own write failed breaks the log (the caller is not answered, SQLite has the batch, a
restart serves it from the file).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import errno
import marshal
import mmap
import os
import struct
import time
import zlib
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kconsole.store import linuxaio
from kconsole.store.loopaio import LoopAio
from kconsole.store.fileio import sync_dir, zero_file
from kconsole.store.linuxaio import CMD_PWRITE, IO_EVENT, IOCB

#: Device block: every record starts on one, and direct I/O writes whole ones.
BLOCK = 4096
#: Default journal file size (two regions).
DEFAULT_JOURNAL_BYTES = 16 * 1024 * 1024
MAGIC = b"KJR1"
#: magic, epoch, first revision, last revision, payload bytes, crc32 of header (crc 0) and payload.
HEADER = struct.Struct("<4sQQQII")
#: The header's crc field, filled in after the crc is computed over the header with 0 there.
_CRC = struct.Struct("<I")
_CRC_AT = HEADER.size - _CRC.size
#: Write-ahead records (:meth:`Journal.write_ahead`) that may be on their way to the device at once.
WRITE_AHEAD_DEPTH = 4
#: How long a lone commit polls for its record's completion before it sleeps (see ``_Aio._poll``):
#: a few device writes' time; a slower device is waited for in the kernel.
POLL_SECONDS = 0.001
#: Padding of a record's last block (always less than a block).
_ZEROS = memoryview(bytes(BLOCK))


class JournalError(OSError):
    """The journal could not be written: an acknowledgement cannot be given for the batch."""


@dataclass(frozen=True)
class Record:
    epoch: int
    first: int
    last: int
    rows: list[Any]


def journal_path(db_path: Path | str) -> Path:
    return Path(f"{db_path}.jnl")


def _region_bounds(size: int) -> list[tuple[int, int]]:
    half = size // 2 // BLOCK * BLOCK
    return [(0, half), (half, 2 * half)]


def check_size(size: int) -> None:
    if size < 4 * BLOCK or size % (2 * BLOCK):
        raise ValueError(f"journal_bytes must be a multiple of {2 * BLOCK} and at least {4 * BLOCK}, not {size}")


def _read_chain(fd: int, lo: int, hi: int) -> list[Record]:
    out: list[Record] = []
    offset = lo
    epoch = None
    expected = None
    while offset + BLOCK <= hi:
        head = os.pread(fd, BLOCK, offset)
        if len(head) < HEADER.size:
            break
        magic, rec_epoch, first, last, length, crc = HEADER.unpack_from(head)
        if magic != MAGIC or (epoch is not None and rec_epoch != epoch) or first > last + 1:
            break
        cancel = first == last + 1
        if expected is not None and (first > expected if cancel else first != expected):
            break
        total = HEADER.size + length
        span = -(-total // BLOCK) * BLOCK
        if offset + span > hi:
            break
        data = head if span == BLOCK else head + os.pread(fd, span - BLOCK, offset + BLOCK)
        if len(data) < total:
            break
        payload = data[HEADER.size:total]
        check = zlib.crc32(HEADER.pack(magic, rec_epoch, first, last, length, 0))
        if zlib.crc32(payload, check) != crc:
            break
        try:
            rows = marshal.loads(payload)
        except (ValueError, EOFError, TypeError):
            break
        if cancel and rows:
            break
        out.append(Record(rec_epoch, first, last, rows))
        epoch = rec_epoch
        expected = last + 1
        offset += span
    return out


def _apply_cancels(records: list[Record]) -> list[Record]:
    """Drop the records a cancel record (``first == last + 1``, no rows) withdrew, and the cancels."""
    out: list[Record] = []
    for record in records:
        if record.first == record.last + 1:
            while out and out[-1].first >= record.first:
                out.pop()
        else:
            out.append(record)
    return out


def scan(path: Path) -> tuple[list[Record], int]:
    """Valid records of both chains (older epoch first, withdrawn ones dropped) and the highest
    epoch seen (0 if none)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return [], 0
    try:
        actual = os.fstat(fd).st_size
        chains = [_read_chain(fd, lo, hi) for lo, hi in _region_bounds(actual)] if actual >= 4 * BLOCK else []
    finally:
        os.close(fd)
    chains = [c for c in chains if c]
    chains.sort(key=lambda c: c[0].epoch)
    top = max((c[0].epoch for c in chains), default=0)
    return _apply_cancels([record for chain in chains for record in chain]), top


def _open_for_writes(path: Path) -> tuple[int, bool]:
    """(fd, direct): O_DIRECT|O_DSYNC where the filesystem allows it, else O_DSYNC."""
    direct = getattr(os, "O_DIRECT", 0)
    if direct:
        try:
            return os.open(path, os.O_WRONLY | os.O_DSYNC | direct), True
        except OSError:
            pass
    return os.open(path, os.O_WRONLY | os.O_DSYNC), False


def _zero_fill(path: Path, size: int) -> None:
    """A fully written file: later overwrites change no extent and no size, only data blocks."""
    zero_file(path, size, ".new")
    sync_dir(path.parent)


class _Aio:
    """One in-flight direct write at a time through Linux native AIO (``io_submit``).

    Lets the committing thread start the journal write, run SQLite's commit while the device
    writes, then wait for the write: the two overlap without a second thread. With ``O_DIRECT |
    O_DSYNC`` the completion comes once the data is durable, as for a blocking write.
    """

    def __init__(self) -> None:
        self._numbers, self._ctx = linuxaio.setup(4)
        self._landed = linuxaio.completions_waiting(self._ctx)
        # The submit is short and must not give the GIL away; the wait must.
        self._quick = linuxaio.syscall(releases_gil=False)
        self._slow = linuxaio.syscall(releases_gil=True)
        self._iocb = ctypes.create_string_buffer(IOCB.size)
        self._iocbs = (ctypes.c_void_p * 1)(ctypes.addressof(self._iocb))
        self._event = ctypes.create_string_buffer(IO_EVENT.size)
        # The system call's constant arguments, converted once (a write pays for each conversion).
        self._submit_args = (ctypes.c_long(self._numbers.submit), self._ctx, ctypes.c_long(1), self._iocbs)
        self._wait_args = (ctypes.c_long(self._numbers.getevents), self._ctx, ctypes.c_long(1), ctypes.c_long(1),
                           self._event, None)

    def submit(self, fd: int, address: int, size: int, offset: int) -> None:
        IOCB.pack_into(self._iocb, 0, 1, 0, 0, CMD_PWRITE, 0, fd, address, size, offset, 0, 0, 0)
        if self._quick(*self._submit_args) != 1:
            raise linuxaio.error("io_submit")

    def wait(self) -> int:
        """Bytes written by the submitted write (raises its error)."""
        if self._landed is not None and not self._landed():
            self._poll()
        while True:
            got = self._slow(*self._wait_args)
            if got == 1:
                break
            if got < 0 and ctypes.get_errno() != linuxaio.EINTR:
                raise linuxaio.error("io_getevents")
        res = IO_EVENT.unpack_from(self._event)[2]
        if res < 0:
            raise OSError(-res, os.strerror(-res))
        return res

    def _poll(self) -> None:
        """Watch the completion ring for up to :data:`POLL_SECONDS` before sleeping in the kernel,
        as the block layer's hybrid polling does for fast devices. A sleeping waiter is woken from
        the CPU that took the device's interrupt, which on a virtual machine costs a cross-CPU
        wake-up (an exit to the host) per commit; a polling one just sees the completion. Each
        turn yields the CPU (and the GIL), so the kernel's own completion work, which may need
        this CPU, runs at once.
        """
        landed, pause, now = self._landed, os.sched_yield, time.perf_counter
        assert landed is not None
        deadline = now() + POLL_SECONDS
        while not landed() and now() < deadline:
            pause()

    def close(self) -> None:
        linuxaio.destroy(self._numbers, self._ctx)


class Journal:
    """The open journal file. A commit calls :meth:`start` (the write begins), commits SQLite,
    then :meth:`finish` (the write is durable) or, if the commit failed, :meth:`withdraw`.
    Only one thread commits at a time (the writer's, or the loop when the pipeline is idle).
    """

    def __init__(self, path: Path, size: int, epoch: int, sync_backend: Callable[[], None]) -> None:
        self.path = path
        self.size = size
        self._regions = _region_bounds(size)
        self._region = 0
        self._offset = 0
        self.epoch = epoch
        self._sync_backend = sync_backend
        self._fd, self.direct = _open_for_writes(path)
        self._aio: _Aio | None = None
        if self.direct:
            try:
                self._aio = _Aio()
            except OSError:
                self._aio = None
        # Record buffers: the first for :meth:`start`, one per write-ahead record in flight.
        self._bufs: list[mmap.mmap] = []
        self._addresses: list[int] = []
        self._ahead: deque[tuple[int, int]] = deque()  # (offset, span) of write-ahead records in flight
        self._ahead_slot = 0
        self._started: tuple[int, int] | None = None  # (offset, bytes) of the write in flight
        self._oversize = False  # the started group commit is made durable by syncing SQLite
        self._syncer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="revlog-journal-sync")
        self._synced: Future[None] | None = None
        self.switches = 0

    @classmethod
    def open(cls, path: Path, size: int, epoch_floor: int, sync_backend: Callable[[], None]) -> Journal:
        """Open for writing from the first region under an epoch above ``epoch_floor``.

        The caller has replayed :func:`scan`'s records and synced SQLite: nothing in the file is
        needed any more. A missing file or one of another size is (re)created zero-filled.
        """
        check_size(size)
        try:
            current = os.stat(path).st_size
        except FileNotFoundError:
            current = -1
        if current != size:
            _zero_fill(path, size)
        return cls(path, size, epoch_floor + 1, sync_backend)

    @property
    def fd(self) -> int:
        return self._fd

    @property
    def overlaps(self) -> bool:
        """Whether the journal write runs while SQLite commits (native AIO on direct I/O)."""
        return self._aio is not None

    def append(self, first: int, last: int, rows: Sequence[Any]) -> None:
        """Write one group commit's rows as a record; returns once the device has it."""
        self.start(first, last, rows)
        self.finish()

    def start(self, first: int, last: int, rows: Sequence[Any]) -> None:
        """Lay out the record and, with native AIO, start writing it.

        A group commit too big for a region (a huge ranged delete) gets no record: :meth:`finish`
        makes SQLite's own files durable instead, and the journal starts over in a new epoch.
        """
        if self._started is not None or self._oversize:
            self.finish()  # the buffer is about to be reused: the previous write must be done
        placed = self._lay_out(first, last, rows, self.sync_in_background, 0)
        if placed is None:
            self._oversize = True
            return
        self._started = placed
        if self._aio is not None:
            offset, span = placed
            try:
                self._aio.submit(self._fd, self._addresses[0], span, offset)
            except OSError as exc:
                self._started = None
                raise JournalError(exc.errno, f"journal write failed: {exc.strerror}") from exc

    def write_ahead(
        self, first: int, last: int, rows: Sequence[Any], aio: LoopAio, sync_behind: Callable[[], Future[None]],
    ) -> asyncio.Future[int] | None:
        """Start writing the record of rows SQLite has not committed yet, from the event loop; the
        future resolves once it is on the device. Up to :data:`WRITE_AHEAD_DEPTH` may be in flight;
        pass each, oldest first, to :meth:`landed`. None, and nothing written, when the record is
        too big for a region: the caller commits it the classic way, with none in flight.

        A region switch here cannot sync SQLite at once (it lags the records): ``sync_behind``
        returns a future that resolves once SQLite holds, durably, every record written so far.
        """
        assert self._started is None and not self._oversize and len(self._ahead) < WRITE_AHEAD_DEPTH
        slot = self._ahead_slot
        placed = self._lay_out(first, last, rows, sync_behind, slot)
        if placed is None:
            return None
        offset, span = placed
        try:
            write = aio.pwrite(self._fd, self._addresses[slot], span, offset)
        except OSError as exc:
            raise JournalError(exc.errno, f"journal write failed: {exc.strerror}") from exc
        # A slot is used again WRITE_AHEAD_DEPTH records later, when this one has landed.
        self._ahead_slot = (slot + 1) % WRITE_AHEAD_DEPTH
        self._ahead.append(placed)
        return write

    def landed(self, write: asyncio.Future[int]) -> None:
        """The oldest write-ahead record's write is over: returns if it is on the device."""
        _, span = self._ahead.popleft()
        try:
            written = write.result()
        except OSError as exc:
            raise JournalError(exc.errno, f"journal write failed: {exc.strerror}") from exc
        if written != span:
            raise JournalError(errno.ENOSPC, f"journal write was short ({written} of {span} bytes)")

    def _lay_out(
        self, first: int, last: int, rows: Sequence[Any], schedule_sync: Callable[[], Future[None]], slot: int,
    ) -> tuple[int, int] | None:
        """Put the record in buffer ``slot``, bound for the next place in the region (switching
        regions when full); (offset, span), or None when no region could hold it."""
        payload = marshal.dumps(rows)
        total = HEADER.size + len(payload)
        span = -(-total // BLOCK) * BLOCK
        lo, hi = self._regions[self._region]
        if span > hi - lo:
            return None
        if lo + self._offset + span > hi:
            self._switch(schedule_sync)
            lo, hi = self._regions[self._region]
        buf = self._buffer(slot, span)
        HEADER.pack_into(buf, 0, MAGIC, self.epoch, first, last, len(payload), 0)
        buf[HEADER.size:total] = payload
        _CRC.pack_into(buf, _CRC_AT, zlib.crc32(payload, zlib.crc32(buf[:HEADER.size])))
        if span > total:
            buf[total:span] = _ZEROS[: span - total]
        self._offset += span
        return lo + self._offset - span, span

    def _buffer(self, slot: int, size: int) -> mmap.mmap:
        """Buffer ``slot``, at least ``size`` bytes (page-aligned memory, as direct I/O needs)."""
        while len(self._bufs) <= slot:
            self._bufs.append(mmap.mmap(-1, 16 * BLOCK))
            self._addresses.append(ctypes.addressof(ctypes.c_char.from_buffer(self._bufs[-1])))
        if size > len(self._bufs[slot]):
            self._bufs[slot].close()
            self._bufs[slot] = mmap.mmap(-1, size)
            self._addresses[slot] = ctypes.addressof(ctypes.c_char.from_buffer(self._bufs[slot]))
        return self._bufs[slot]

    def finish(self) -> None:
        """Returns once the started record is on the device."""
        if self._oversize:
            self._oversize = False
            try:
                self._sync_backend()  # every commit so far, this one included, is on the device
            except OSError as exc:
                raise JournalError(exc.errno, f"syncing the database failed: {exc.strerror}") from exc
            self._synced = None
            self._next_region()
            return
        started, self._started = self._started, None
        if started is None:
            return
        offset, span = started
        try:
            if self._aio is not None:
                written = self._aio.wait()
            else:
                view = memoryview(self._bufs[0])[:span]
                try:
                    written = os.pwritev(self._fd, [view], offset)
                finally:
                    view.release()
        except OSError as exc:
            raise JournalError(exc.errno, f"journal write failed: {exc.strerror}") from exc
        if written != span:
            raise JournalError(errno.ENOSPC, f"journal write was short ({written} of {span} bytes)")

    def withdraw(self, first: int) -> None:
        """SQLite refused the batch whose record was started: make sure recovery never replays it.

        Without overlap nothing was written yet. Otherwise the write completes and a cancel record
        for revisions from ``first`` on follows it (revisions are given out again from there).
        """
        self._oversize = False
        if self._started is None:
            return
        if self._aio is None:
            self._offset -= self._started[1]
            self._started = None
            return
        with contextlib.suppress(JournalError):
            self.finish()  # whether or not it reached the device, the cancel record withdraws it
        self.append(first, first - 1, [])

    def _switch(self, schedule_sync: Callable[[], Future[None]]) -> None:
        """Move to the other region; first, SQLite must hold durably what that region held."""
        if self._synced is not None:
            try:
                self._synced.result()
            except OSError as exc:
                raise JournalError(exc.errno, f"syncing the database before reusing the journal failed: {exc.strerror}") from exc
        self._synced = schedule_sync()
        self._next_region()

    def sync_in_background(self) -> Future[None]:
        """Sync SQLite's files on the journal's own thread. From :meth:`start` that covers every
        record written so far: each was committed to SQLite before it was written (same thread)."""
        return self._syncer.submit(self._sync_backend)

    def _next_region(self) -> None:
        self._region = 1 - self._region
        self._offset = 0
        self.epoch += 1
        self.switches += 1

    def close(self) -> None:
        self._syncer.shutdown(wait=True)
        if self._aio is not None:
            self._aio.close()
        os.close(self._fd)
        for buf in self._bufs:
            buf.close()


def sync_files(db_path: Path) -> Callable[[], None]:
    """fsync SQLite's WAL and database file: every commit made before the call becomes durable."""

    def sync() -> None:
        for name in (f"{db_path}-wal", str(db_path)):
            try:
                fd = os.open(name, os.O_RDONLY)
            except FileNotFoundError:
                continue  # no WAL: everything is in the database file
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    return sync
