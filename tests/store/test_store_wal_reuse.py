"""The SQLite WAL of a steadily written store is reused, not grown: durable commits then overwrite
blocks the file already has, and an fdatasync has no file size to record."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest

from kconsole.clock import VirtualClock
from kconsole.store import backend
from kconsole.store.revlog import RevisionLog


async def test_a_steady_writer_reuses_the_wal_file(
    tmp_path: Path, clock: VirtualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The production cycle (64 MB) at a scale a test can write quickly; the ratio is kept.
    pages = 256
    monkeypatch.setattr(backend, "WAL_KEEP_BYTES", backend.WAL_KEEP_BYTES * pages // backend.BACKSTOP_CHECKPOINT_PAGES)
    monkeypatch.setattr(backend, "BACKSTOP_CHECKPOINT_PAGES", pages)
    path = tmp_path / "member.db"
    wal = Path(f"{path}-wal")
    cycle = pages * 4096
    log = await RevisionLog.open(path, clock=clock, synchronous="NORMAL")
    value = b"v" * 6000  # a few WAL pages per write: a cycle fills in ~100 writes
    sizes: list[tuple[int, int]] = []  # (WAL restarts so far, file size) after each write
    try:
        revision = 0
        for _ in range(3000):
            result = await log.update("/registry/configmaps/default/big", value, revision) if revision \
                else await log.create("/registry/configmaps/default/big", value)
            assert result.succeeded
            revision = result.revision
            sizes.append((_checkpoint_sequence(wal), os.path.getsize(wal)))
            if len([1 for restarts, _ in sizes if restarts]) >= 50:
                break
        assert (await log.get("/registry/configmaps/default/big")).mod_revision == revision
    finally:
        await log.close()
    assert sizes[-1][0] >= 1, "the WAL never started over from its beginning"
    after_restart = [size for restarts, size in sizes if restarts >= 1]
    assert min(after_restart) >= cycle, "a restarted WAL was cut back: the next commits grow the file again"


def _checkpoint_sequence(wal: Path) -> int:
    """The WAL header's checkpoint sequence number: SQLite bumps it each time the WAL restarts."""
    with wal.open("rb") as f:
        return struct.unpack(">I", f.read(16)[12:16])[0]
