"""The WAL's thread-free fdatasync (native AIO, completion on an eventfd the loop watches)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from kconsole.store.loopaio import LoopAio


async def test_syncs_complete_on_the_loop_and_bad_descriptors_are_refused(tmp_path: Path) -> None:
    fd = os.open(tmp_path / "f", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        syncer = LoopAio.create(fd)
        if syncer is None:
            pytest.skip("no native AIO fdatasync on this kernel")
        for i in range(20):
            os.pwrite(fd, b"x" * 5000, i * 5000)
            await asyncio.wait_for(syncer.fdatasync(fd), 5)
        together = [syncer.fdatasync(fd) for _ in range(12)]  # more than one reap's worth
        await asyncio.wait_for(asyncio.gather(*together), 5)
        closed = os.dup(fd)
        os.close(closed)
        with pytest.raises(OSError):
            syncer.fdatasync(closed)
        syncer.close()
    finally:
        os.close(fd)


async def test_a_file_without_fsync_gets_no_syncer() -> None:
    r, w = os.pipe()  # a pipe has no fsync: the caller falls back to its thread
    try:
        assert LoopAio.create(w) is None
    finally:
        os.close(r)
        os.close(w)
