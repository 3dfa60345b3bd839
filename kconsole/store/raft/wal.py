"""Each member's durable Raft state: hard state, log entries, compaction point, applied position.

etcd keeps a write-ahead log of segment files; so does this. A record is
``<u32 length><u32 crc32><marshal payload>``; payloads are ``("h", term, vote, commit)``,
``("e", [(index, term, data), ...])`` (the first index truncates any tail it overwrites),
``("s", index, term, restore)`` (entries up to index are compacted; ``restore``: all of them, a
snapshot replaced the log) and ``("a", index, revision, alarms)`` (the state machine holds entries
up to index, at that store revision, with those alarms raised). A new segment starts with the
full h/s/a state, so segments whose entries all lie below the compaction point can be deleted.

Writes go to the OS at once (they survive the process being killed, as the revision log's WAL
mode does); ``fsync=True`` also forces them to the device (survives power loss, costs latency).
A torn record at the tail of the last segment (a crash mid-write) is wiped when loading: records
end at the first zero header, which preallocated room is made of.
:class:`MemoryStorage` has the same interface for tests that run without files.
"""

from __future__ import annotations

import marshal
import os
import struct
import threading
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from kconsole.store.fileio import datasync, fill_zeros, sync_dir, write_all, zero_file
from kconsole.store.raft.core import HardState
from kconsole.store.raft.log import Entry

_HEADER = struct.Struct("<II")
#: Segment size after which a new segment file is started.
SEGMENT_BYTES = 64 * 1024 * 1024
#: :meth:`FileStorage.save_for_sync`'s answer when the write is left to a thread (it would rotate).
ROTATES = -2


class WalCorrupt(Exception):
    """A WAL record in the middle of the log failed its checksum: refuse to guess."""


@dataclass(slots=True)
class WalState:
    hard_state: HardState = field(default_factory=HardState)
    snap_index: int = 0
    snap_term: int = 0
    entries: list[Entry] = field(default_factory=list)
    applied: int = 0
    applied_revision: int = 0
    alarms: int = 0  # replicated alarms (NOSPACE) in force at ``applied``


class MemoryStorage:
    """In-memory storage that survives a member's stop/start (tests without files)."""

    def __init__(self) -> None:
        self.state = WalState()
        self.writes = 0
        self.image: tuple[int, bytes] | None = None

    def load(self) -> WalState:
        s = self.state
        return WalState(s.hard_state, s.snap_index, s.snap_term, list(s.entries), s.applied, s.applied_revision,
                        s.alarms)

    def save(self, hard_state: HardState | None, entries: list[Entry]) -> None:
        self.writes += 1
        if entries:
            _splice(self.state, entries)
        if hard_state is not None:
            self.state.hard_state = hard_state

    def save_snapshot(self, index: int, term: int, restore: bool = False) -> None:
        _compact(self.state, index, term, restore)

    def save_applied(self, index: int, revision: int, alarms: int = 0) -> None:
        self.state.applied, self.state.applied_revision, self.state.alarms = index, revision, alarms

    def save_image(self, index: int, image: bytes) -> None:
        self.image = (index, image)

    def load_image(self) -> tuple[int, bytes] | None:
        return self.image

    def drop_image(self) -> None:
        self.image = None

    def size(self) -> int:
        return sum(len(e.data) + 24 for e in self.state.entries)

    def growth(self) -> int:
        return 0

    fsync = False

    def save_durably(self, hard_state: HardState | None, entries: list[Entry]) -> None:
        self.save(hard_state, entries)

    def sync(self) -> None:
        pass

    def close(self) -> None:
        pass


def _splice(state: WalState, entries: list[Entry]) -> None:
    first = entries[0].index
    keep = first - state.snap_index - 1
    if keep < 0:
        entries = [e for e in entries if e.index > state.snap_index]
        keep = 0
    del state.entries[keep:]
    state.entries.extend(entries)


def _compact(state: WalState, index: int, term: int, restore: bool = False) -> None:
    if restore:
        state.entries = []
        state.snap_index, state.snap_term = index, term
        return
    if index <= state.snap_index:
        return
    drop = index - state.snap_index
    del state.entries[:drop]
    if state.entries and state.entries[0].index != index + 1:
        state.entries = []
    state.snap_index, state.snap_term = index, term


class FileStorage:
    """Segmented WAL in ``directory``.

    With ``fsync`` on, segments are preallocated as etcd's are, but zero-filled and synced rather
    than fallocated: a record then overwrites blocks the file already has, so its fdatasync sends
    the data alone (plus a cache flush), never a new file size or an extent conversion through the
    filesystem's journal, where it would queue behind every other file's metadata (the members'
    SQLite files share the disk). The next segment is zero-filled on a thread of its own while the
    current one fills (etcd's file pipeline); the first is small and each next one twice the size,
    up to ``segment_bytes``, so a small cluster's folder stays small. A segment's records end at
    the first zero header.
    """

    def __init__(self, directory: str | os.PathLike[str], *, fsync: bool = False,
                 segment_bytes: int = SEGMENT_BYTES) -> None:
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.fsync = fsync
        self.segment_bytes = segment_bytes
        self._state = WalState()
        self._segments: list[tuple[int, int]] = []  # (sequence, highest entry index written into it)
        self._fd = -1
        self._size = 0  # where the next record goes in the current segment
        self._limit = segment_bytes  # a record that would end past this starts a new segment
        self._head = 0  # bytes of the current segment's opening state records
        self._next: _Preallocation | None = None
        # save_durably runs on a worker thread while the event loop may record an applied position
        # or a compaction: every write, state change and the fd itself are used under this lock.
        self._lock = threading.Lock()

    # ----- loading -----------------------------------------------------------------------------
    @staticmethod
    def peek(directory: str | os.PathLike[str]) -> WalState:
        """Read the state without changing anything (for tools looking at a data folder)."""
        state = WalState()
        for path in sorted(Path(directory).glob("*.wal")):
            _scan(path.read_bytes(), state)
        return state

    def load(self) -> WalState:
        state = WalState()
        for stale in self.dir.glob("*.wal.tmp"):  # a preallocation a crash interrupted
            stale.unlink(missing_ok=True)
        paths = sorted(self.dir.glob("*.wal"))
        self._segments = []
        end = 0
        for n, path in enumerate(paths):
            data = path.read_bytes()
            end, top = _scan(data, state)
            written = len(data.rstrip(b"\0")) if end < len(data) else end
            if written > end:
                if n != len(paths) - 1:
                    raise WalCorrupt(f"{path}: damaged record at byte {end} before the last segment")
                _zero(path, end, written, self.fsync)  # a torn tail from a crash mid-write: wipe it
            self._segments.append((int(path.stem, 16), top))
        self._state = state
        if self._segments:
            path = self._path(self._segments[-1][0])
            self._fd = os.open(path, os.O_WRONLY)
            self._size = end
            allocated = os.fstat(self._fd).st_size
            self._limit = allocated if self.fsync and allocated > end else self.segment_bytes
            self._head = 0
            if end == 0:  # a crash right after the segment was created: give it its opening state
                self._write_head()
        else:
            self._start_segment(1)
        return WalState(state.hard_state, state.snap_index, state.snap_term, list(state.entries),
                        state.applied, state.applied_revision, state.alarms)

    # ----- writing -----------------------------------------------------------------------------
    def save(self, hard_state: HardState | None, entries: list[Entry]) -> None:
        with self._lock:
            self._save(hard_state, entries)

    def save_durably(self, hard_state: HardState | None, entries: list[Entry]) -> None:
        """:meth:`save` then :meth:`sync`, in one call meant for a worker thread: encoding and writing
        a large batch of entries then costs the event loop nothing. A closed storage (the member
        crashed meanwhile) writes nothing."""
        with self._lock:
            if self._fd < 0:
                return
            self._save(hard_state, entries)
            if not self.fsync:
                return
            fd = os.dup(self._fd)  # a segment rotated by another write after this one cannot close it
        try:
            datasync(fd)
        finally:
            os.close(fd)

    def save_for_sync(self, hard_state: HardState | None, entries: list[Entry]) -> int:
        """:meth:`save`, then the descriptor whose fdatasync makes it durable, for a caller that syncs
        without a thread. -1: closed, nothing written. ``ROTATES``: nothing written, because the
        write would start a new segment (a sync of the old one, perhaps a zero-fill, a directory
        sync: blocking work for :meth:`save_durably` on a thread). Only valid until the next write:
        a rotation closes it."""
        with self._lock:
            if self._fd < 0:
                return -1
            data = _encode(hard_state, entries)
            if self._rotates(len(data)):
                return ROTATES
            self._save_encoded(data, hard_state, entries)
            return self._fd

    def _save(self, hard_state: HardState | None, entries: list[Entry]) -> None:
        self._save_encoded(_encode(hard_state, entries), hard_state, entries)

    def _save_encoded(self, data: bytes, hard_state: HardState | None, entries: list[Entry]) -> None:
        if entries:
            _splice(self._state, entries)
        if hard_state is not None:
            self._state.hard_state = hard_state
        if data:
            self._write(data)
        if entries:
            seq, top = self._segments[-1]
            self._segments[-1] = (seq, max(top, entries[-1].index))

    def save_snapshot(self, index: int, term: int, restore: bool = False) -> None:
        """Entries up to ``index`` are no longer needed (``restore``: none at all); drop old segments."""
        with self._lock:
            _compact(self._state, index, term, restore)
            self._write(_record(("s", index, term, int(restore))))
            while len(self._segments) > 1 and self._segments[0][1] <= index:
                seq, _ = self._segments.pop(0)
                self._path(seq).unlink(missing_ok=True)

    def save_applied(self, index: int, revision: int, alarms: int = 0) -> None:
        with self._lock:
            self._state.applied, self._state.applied_revision, self._state.alarms = index, revision, alarms
            self._write(_record(("a", index, revision, alarms)))

    def save_image(self, index: int, image: bytes) -> None:
        """Keep a received snapshot durable until the state machine has installed it."""
        tmp = self.dir / "snapshot.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            write_all(fd, marshal.dumps((index, image)), 0)
            if self.fsync:
                datasync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, self.dir / "snapshot.img")
        if self.fsync:
            sync_dir(self.dir)

    def load_image(self) -> tuple[int, bytes] | None:
        path = self.dir / "snapshot.img"
        if not path.exists():
            return None
        index, image = marshal.loads(path.read_bytes())
        return int(index), bytes(image)

    def drop_image(self) -> None:
        (self.dir / "snapshot.img").unlink(missing_ok=True)

    def size(self) -> int:
        """Bytes the segments take on disk (preallocated room included, as etcd's WAL folder)."""
        return sum(self._path(seq).stat().st_size for seq, _ in self._segments if self._path(seq).exists())

    def growth(self) -> int:
        """Bytes of disk the WAL will claim at once, before a write can fail for the lack of them:
        the next segment's preallocation while it is not made yet (synced WALs only)."""
        with self._lock:
            return self._next_size() if self.fsync and self._next is None and self._fd >= 0 else 0

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
            if self._next is not None:
                self._next.cancel()
                self._next = None

    def _rotates(self, size: int) -> bool:
        """A record of ``size`` bytes starts a new segment."""
        return self._size + size > self._limit and self._size > self._head

    def _write(self, data: bytes) -> None:
        if self._rotates(len(data)):
            self._rotate()
        write_all(self._fd, data, self._size)  # raises on a short write: nothing of it counts as written
        self._size += len(data)
        if self.fsync and self._next is None and self._size * 2 > self._limit:
            seq = self._segments[-1][0] + 1
            self._next = _Preallocation(self._path(seq), self._next_size())

    def sync(self) -> None:
        """Force what was written to the device (when ``fsync`` is on); blocking, so callers run it
        on a thread."""
        with self._lock:
            if not self.fsync or self._fd < 0:
                return
            fd = os.dup(self._fd)
        try:
            datasync(fd)
        finally:
            os.close(fd)

    def _rotate(self) -> None:
        if self.fsync:
            datasync(self._fd)  # the old segment's tail (applied records) must not be torn behind a newer one
        os.close(self._fd)
        self._start_segment(self._segments[-1][0] + 1)

    def _next_size(self) -> int:
        return min(self.segment_bytes, max(FIRST_SEGMENT_BYTES, 2 * self._limit))

    def _start_segment(self, seq: int) -> None:
        path = self._path(seq)
        if self.fsync:
            size = min(self.segment_bytes, FIRST_SEGMENT_BYTES) if seq == 1 and not self._segments else self._next_size()
            ready = self._next
            self._next = None
            if ready is None or not ready.finish(path, size):
                zero_file(path, size, ".tmp")
            sync_dir(self.dir)
            self._fd = os.open(path, os.O_WRONLY)
            self._limit = size
        else:
            self._fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
            self._limit = self.segment_bytes
        self._segments.append((seq, 0))
        self._size = 0
        self._write_head()

    def _write_head(self) -> None:
        s = self._state
        head = (
            _record(("h", s.hard_state.term, s.hard_state.vote, s.hard_state.commit))
            + _record(("s", s.snap_index, s.snap_term))
            + _record(("a", s.applied, s.applied_revision, s.alarms))
        )
        write_all(self._fd, head, self._size)
        self._size += len(head)
        self._head = self._size
        if self.fsync:
            datasync(self._fd)

    def _path(self, seq: int) -> Path:
        return self.dir / f"{seq:016x}.wal"


#: The first preallocated segment of a new WAL; each next one is twice its predecessor's size.
FIRST_SEGMENT_BYTES = 1024 * 1024


class _Preallocation:
    """The next segment, zero-filled and synced under a temporary name by a thread of its own."""

    def __init__(self, path: Path, size: int) -> None:
        self.tmp = path.with_name(path.name + ".tmp")
        self.size = size
        self._cancelled = False
        self._error: OSError | None = None
        self._thread = threading.Thread(target=self._fill, name=f"wal-prealloc-{path.parent.parent.name}",
                                         daemon=True)
        self._thread.start()

    def _fill(self) -> None:
        try:
            fill_zeros(self.tmp, self.size, lambda: self._cancelled)
        except OSError as err:
            self._error = err
        if self._cancelled:
            self.tmp.unlink(missing_ok=True)

    def finish(self, path: Path, size: int) -> bool:
        """Put the file in place as ``path`` if it is what is wanted; False: make one afresh."""
        self._thread.join()
        if self._error is not None or size != self.size:
            self.tmp.unlink(missing_ok=True)
            return False
        os.replace(self.tmp, path)
        return True

    def cancel(self) -> None:
        self._cancelled = True
        self._thread.join()
        self.tmp.unlink(missing_ok=True)


def _zero(path: Path, start: int, end: int, sync: bool) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        write_all(fd, bytes(end - start), start)
        if sync:
            datasync(fd)
    finally:
        os.close(fd)


def _scan(data: bytes, state: WalState) -> tuple[int, int]:
    """Replay a segment's valid records into ``state``: (where they end, highest entry index)."""
    pos = top = 0
    while pos + _HEADER.size <= len(data):
        length, crc = _HEADER.unpack_from(data, pos)
        if length == 0:  # preallocated room: the records ended
            break
        body = data[pos + _HEADER.size : pos + _HEADER.size + length]
        if len(body) < length or zlib.crc32(body) != crc:
            break
        top = max(top, _replay(state, marshal.loads(body)))
        pos += _HEADER.size + length
    return pos, top


def _encode(hard_state: HardState | None, entries: list[Entry]) -> bytes:
    """The records of one save: its entries, then its hard state (b"" for neither)."""
    parts: list[bytes] = []
    if entries:
        parts.append(_entries_record(entries))
    if hard_state is not None:
        parts.append(_record(("h", hard_state.term, hard_state.vote, hard_state.commit)))
    return b"".join(parts)


class _SharedRecords:
    """The last few entries records written, for the other members of this process.

    Members in one process share entry objects (see :class:`Entry`), and each one logs the same
    run of entries: the leader, then every follower, within a round. Marshalling and checksumming
    a round's entries (~70 KB at 64 writes of 1 KiB) once instead of once per member saves the
    event loop two of three passes. Keyed by the run's first and last entry objects and its length
    (a run that starts and ends with the same objects is the same run: entries that differ at one
    index differ at every later one); the few held runs are kept alive, so no id is reused.
    """

    SLOTS = 8

    def __init__(self) -> None:
        self._runs: dict[tuple[int, int, int], tuple[Entry, Entry, bytes]] = {}
        self._lock = threading.Lock()  # the loop and the members' device threads both encode

    def record(self, entries: list[Entry]) -> bytes:
        first, last = entries[0], entries[-1]
        key = (id(first), id(last), len(entries))
        held = self._runs.get(key)
        if held is not None and held[0] is first and held[1] is last:
            return held[2]
        data = _record(("e", [(e.index, e.term, e.data) for e in entries]))
        with self._lock:
            self._runs[key] = (first, last, data)
            while len(self._runs) > self.SLOTS:
                del self._runs[next(iter(self._runs))]
        return data


_entries_record = _SharedRecords().record


def _record(payload: tuple[object, ...]) -> bytes:
    body = marshal.dumps(payload)
    return _HEADER.pack(len(body), zlib.crc32(body)) + body


def _replay(state: WalState, rec: tuple[object, ...]) -> int:
    kind = rec[0]
    if kind == "e":
        raw = rec[1]
        assert isinstance(raw, list)
        entries = [Entry(i, t, d) for i, t, d in raw]
        if entries:
            _splice(state, entries)
            return entries[-1].index
    elif kind == "h":
        state.hard_state = HardState(int(rec[1]), int(rec[2]), int(rec[3]))  # type: ignore[arg-type]
    elif kind == "s":
        _compact(state, int(rec[1]), int(rec[2]), len(rec) > 3 and bool(rec[3]))  # type: ignore[arg-type]
    elif kind == "a":
        state.applied, state.applied_revision = int(rec[1]), int(rec[2])  # type: ignore[arg-type]
        state.alarms = int(rec[3]) if len(rec) > 3 else 0  # type: ignore[arg-type]
    return 0
