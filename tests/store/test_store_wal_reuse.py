"""The SQLite WAL of a steadily written store is reused, not grown: durable commits then overwrite
blocks the file already has, and an fdatasync has no file size to record."""

from __future__ import annotations

import os
import struct
from pathlib import Path

from kconsole.clock import VirtualClock
from kconsole.store.backend import BACKSTOP_CHECKPOINT_PAGES, WAL_KEEP_BYTES
from kconsole.store.revlog import RevisionLog


async def test_a_single_writer_cycles_within_the_kept_wal(tmp_path: Path, clock: VirtualClock) -> None:
    path = tmp_path / "member.db"
    log = await RevisionLog.open(path, clock=clock, synchronous="NORMAL")
    value = b"v" * 4000  # a page of its own per write: WAL volume grows fast
    restarts: set[int] = set()
    largest = 0
    try:
        revision = 0
        for _ in range(2600):
            result = await log.update("/registry/configmaps/default/big", value, revision) if revision \
                else await log.create("/registry/configmaps/default/big", value)
            assert result.succeeded
            revision = result.revision
            largest = max(largest, os.path.getsize(f"{path}-wal"))
            restarts.add(_checkpoint_sequence(Path(f"{path}-wal")))
        assert (await log.get("/registry/configmaps/default/big")).mod_revision == revision
    finally:
        await log.close()
    assert len(restarts) >= 3, "the WAL never started over from its beginning"
    assert largest <= WAL_KEEP_BYTES, f"the WAL grew to {largest} bytes"
    assert largest >= BACKSTOP_CHECKPOINT_PAGES * 4096 // 2  # each cycle filled the WAL a good way first


def _checkpoint_sequence(wal: Path) -> int:
    """The WAL header's checkpoint sequence number: SQLite bumps it each time the WAL restarts."""
    with wal.open("rb") as f:
        return struct.unpack(">I", f.read(16)[12:16])[0]
