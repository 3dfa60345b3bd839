"""The in-memory Raft log: a compacted prefix (snapshot index/term) followed by live entries.

Pure data structure shared by the Raft core; persistence is the member's job (``wal.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class Entry:
    """One Raft log entry; ``data`` is opaque to Raft (b"" is a new leader's empty entry).

    ``decoded`` caches what the member layer decoded from ``data``; it is never persisted and
    never compared. Members in one process share entry objects through the simulated network,
    so a batch is decoded once, not once per member.
    """

    index: int
    term: int
    data: bytes = b""
    decoded: object = field(default=None, compare=False, repr=False)


class RaftLog:
    """Entries ``snap_index + 1 .. last_index`` plus the commit/apply cursors.

    ``stable`` is the last index handed out for persistence, ``applied`` the last index handed out
    for applying: both only move through :meth:`unstable` and :meth:`next_committed`.
    """

    __slots__ = ("snap_index", "snap_term", "entries", "committed", "applied", "stable")

    def __init__(
        self,
        snap_index: int = 0,
        snap_term: int = 0,
        entries: list[Entry] | None = None,
        committed: int = 0,
        applied: int = 0,
    ) -> None:
        self.snap_index = snap_index
        self.snap_term = snap_term
        self.entries: list[Entry] = list(entries or [])
        for offset, entry in enumerate(self.entries):
            if entry.index != snap_index + 1 + offset:
                raise ValueError(f"raft log has a gap at index {snap_index + 1 + offset}")
        self.stable = self.last_index
        self.committed = min(max(committed, snap_index), self.last_index)
        self.applied = min(max(applied, snap_index), self.committed)

    @property
    def first_index(self) -> int:
        return self.snap_index + 1

    @property
    def last_index(self) -> int:
        return self.snap_index + len(self.entries)

    @property
    def last_term(self) -> int:
        return self.entries[-1].term if self.entries else self.snap_term

    def term(self, index: int) -> int | None:
        """Term of ``index``; None when compacted away or beyond the log."""
        if index == self.snap_index:
            return self.snap_term
        if index < self.snap_index or index > self.last_index:
            return None
        return self.entries[index - self.snap_index - 1].term

    def match_term(self, index: int, term: int) -> bool:
        return self.term(index) == term

    def is_up_to_date(self, last_index: int, term: int) -> bool:
        """Raft's election restriction: a candidate's log is at least as new as ours."""
        return term > self.last_term or (term == self.last_term and last_index >= self.last_index)

    def find_conflict(self, entries: list[Entry]) -> int:
        for entry in entries:
            if not self.match_term(entry.index, entry.term):
                return entry.index
        return 0

    def find_conflict_by_term(self, index: int, term: int) -> tuple[int, int]:
        """Largest index <= ``index`` whose term is <= ``term`` (fast back-off on rejection)."""
        index = min(index, self.last_index)
        while index > self.snap_index:
            t = self.term(index)
            if t is not None and t <= term:
                return index, t
            index -= 1
        return index, self.term(index) or 0

    def append(self, entries: list[Entry]) -> None:
        """Append, truncating whatever conflicts from ``entries[0].index`` on."""
        if not entries:
            return
        start = entries[0].index
        if start <= self.committed:
            raise AssertionError(f"raft: truncating committed entry {start} (committed {self.committed})")
        del self.entries[start - self.snap_index - 1 :]
        self.entries.extend(entries)
        self.stable = min(self.stable, start - 1)

    def maybe_append(self, index: int, log_term: int, committed: int, entries: list[Entry]) -> int | None:
        """The follower side of AppendEntries; returns the last new index or None on mismatch."""
        if not self.match_term(index, log_term):
            return None
        last_new = index + len(entries)
        conflict = self.find_conflict(entries)
        if conflict:
            self.append(entries[conflict - index - 1 :])
        self.commit_to(min(committed, last_new))
        return last_new

    def commit_to(self, index: int) -> None:
        if index > self.committed:
            if index > self.last_index:
                raise AssertionError(f"raft: commit {index} beyond last index {self.last_index}")
            self.committed = index

    def maybe_commit(self, index: int, term: int) -> bool:
        """Commit ``index`` only if it is from ``term`` (Raft never counts replicas of old terms)."""
        if index > self.committed and self.term(index) == term:
            self.commit_to(index)
            return True
        return False

    def slice(self, lo: int, max_bytes: int) -> list[Entry] | None:
        """Entries from ``lo`` up to ``max_bytes`` of data (at least one); None if compacted."""
        if lo <= self.snap_index:
            return None
        out: list[Entry] = []
        size = 0
        for entry in self.entries[lo - self.snap_index - 1 :]:
            size += len(entry.data)
            if out and size > max_bytes:
                break
            out.append(entry)
        return out

    def unstable(self) -> list[Entry]:
        """Entries not yet handed out for persistence; marks them handed out."""
        if self.stable >= self.last_index:
            return []
        out = self.entries[self.stable - self.snap_index :]
        self.stable = self.last_index
        return out

    def next_committed(self) -> list[Entry]:
        """Committed entries not yet handed out for applying; marks them handed out."""
        if self.applied >= self.committed:
            return []
        lo = self.applied - self.snap_index
        out = self.entries[lo : self.committed - self.snap_index]
        self.applied = self.committed
        return out

    def compact(self, index: int) -> None:
        """Forget entries up to ``index`` (already applied and captured in the state machine)."""
        if index <= self.snap_index:
            return
        if index > self.applied:
            raise AssertionError(f"raft: compacting {index} beyond applied {self.applied}")
        term = self.term(index)
        assert term is not None
        del self.entries[: index - self.snap_index]
        self.snap_index, self.snap_term = index, term

    def restore(self, index: int, term: int) -> None:
        """Replace the whole log with a snapshot's position."""
        self.entries = []
        self.snap_index, self.snap_term = index, term
        self.committed = self.applied = self.stable = index
