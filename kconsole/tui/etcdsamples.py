"""etcd member state as the console sampled it, by revision, for the etcd panel in the past.

Member state (running, leader, term, health) is no object in the revision log, so the history
cannot say it; the console records it while live: a sample each time a member's state or the
quorum changes, and at least every :data:`EVERY_REVISIONS` revisions, kept in memory and appended
to ``<data dir>/console-etcd-samples.jsonl`` so a later console over the same data folder can show
it too. A past revision shows the last sample at or before it.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from bisect import bisect_right
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

log = logging.getLogger(__name__)

FILE_NAME = "console-etcd-samples.jsonl"
#: Samples kept (in memory, and read back from the file).
KEEP = 20_000
#: A sample at least this often (in revisions), so the raft figures stay close to the revision.
EVERY_REVISIONS = 1_000
#: What a member answers that is not its state (volatile figures) is left out of the comparison.
_STATE_FIELDS = ("name", "running", "paused", "healthy", "is_leader", "leader", "role", "raft_term", "errors")
_NO_ANSWER = "context deadline exceeded"


@dataclass(frozen=True, slots=True)
class RecordedQuorum:
    """The quorum figures as recorded (the same line the live panel shows)."""

    members: int
    alive: int
    needed: int
    failures_tolerated: int

    @property
    def ok(self) -> bool:
        return self.alive >= self.needed

    def line(self) -> str:
        if not self.ok:
            return f"quorum LOST: {self.alive} alive / {self.needed} needed"
        return f"quorum ok: {self.alive} alive / {self.needed} needed / tolerates {self.failures_tolerated}"


@dataclass(frozen=True, slots=True)
class Sample:
    revision: int
    time: float
    members: list[Any]
    quorum: Any
    status: Any


_QUORUM_FIELDS = ("members", "alive", "needed", "failures_tolerated")


def _fields(obj: Any) -> dict[str, Any]:
    if obj is None:
        return {}
    if dataclasses.is_dataclass(obj):
        return dataclasses.asdict(obj)  # type: ignore[arg-type]
    return dict(vars(obj))


def _member(raw: dict[str, Any]) -> SimpleNamespace:
    return SimpleNamespace(**{"errors": [], "last_commit_ms": 0.0, **raw, "NO_ANSWER": _NO_ANSWER})


class EtcdSamples:
    """Recorded samples, oldest first; ``path`` None keeps them in memory only."""

    def __init__(self, data_dir: Path | None) -> None:
        self.path = data_dir / FILE_NAME if data_dir is not None else None
        self.samples: list[Sample] = []
        self.revisions: list[int] = []
        self._last_state: Any = None
        self._load()

    def _load(self) -> None:
        if self.path is None or not self.path.exists():
            return
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
            if len(lines) > KEEP * 2:  # the file keeps the newest KEEP samples across consoles
                lines = lines[-KEEP:]
                self.path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        except OSError as err:
            log.warning("etcd samples %s unreadable: %s", self.path, err)
            return
        lines = lines[-KEEP:]
        for line in lines:
            try:
                raw = json.loads(line)
                sample = Sample(int(raw["revision"]), float(raw["time"]),
                                [_member(m) for m in raw["members"]],
                                RecordedQuorum(**raw["quorum"]) if raw.get("quorum") else None,
                                SimpleNamespace(**raw["status"]) if raw.get("status") else None)
            except (ValueError, KeyError, TypeError) as err:
                log.warning("etcd samples %s: skipping a bad line: %s", self.path, err)
                continue
            self._append(sample)

    def _append(self, sample: Sample) -> None:
        if self.revisions and sample.revision < self.revisions[-1]:
            return  # a restored data folder: revisions went back; the older samples stand
        self.samples.append(sample)
        self.revisions.append(sample.revision)
        if len(self.samples) > KEEP * 2:
            del self.samples[:KEEP]
            del self.revisions[:KEEP]

    def record(self, members: list[Any], quorum: Any, status: Any, time: float) -> bool:
        """Keep this sample when the member state changed (or the revision moved far); True if kept."""
        revision = getattr(status, "revision", None)
        if revision is None:
            revision = max((getattr(m, "revision", 0) for m in members), default=0)
        if not isinstance(revision, int) or not all(hasattr(quorum, k) for k in _QUORUM_FIELDS):
            return False  # an attached cluster: no member state a revision could be shown with
        state = (tuple(tuple(str(_fields(m).get(f)) for f in _STATE_FIELDS) for m in members), str(quorum))
        if state == self._last_state and self.revisions and revision - self.revisions[-1] < EVERY_REVISIONS:
            return False
        self._last_state = state
        raw_members = [_fields(m) for m in members]
        sample = Sample(revision, time, [_member(m) for m in raw_members],
                        RecordedQuorum(**{k: getattr(quorum, k) for k in _QUORUM_FIELDS}),
                        SimpleNamespace(**_fields(status)) if status is not None else None)
        self._append(sample)
        if self.path is not None:
            line = json.dumps({"revision": revision, "time": time, "members": raw_members,
                               "quorum": dataclasses.asdict(sample.quorum) if sample.quorum else None,
                               "status": _fields(status) or None}, default=str)
            try:
                with self.path.open("a", encoding="utf-8") as f:
                    f.write(line + "\n")
            except OSError as err:
                log.warning("etcd samples not saved to %s: %s", self.path, err)
                self.path = None
        return True

    def at(self, revision: int) -> Sample | None:
        """The last sample at or before ``revision``, its status saying ``revision``."""
        i = bisect_right(self.revisions, revision) - 1
        if i < 0:
            return None
        sample = self.samples[i]
        status = SimpleNamespace(**{**vars(sample.status), "revision": revision}) if sample.status else None
        return Sample(sample.revision, sample.time, sample.members, sample.quorum, status)
