"""Durable-file primitives shared by the single-member journal and the Raft WAL.

Both keep their records in preallocated files whose blocks were really written (zeros) and synced
before use: an overwrite then changes no extent and no file size, so its sync sends data only.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

#: Bytes written (and synced) at a time while zero-filling: syncing a 16-64 MiB file once puts all
#: of it in the device queue, where other files' syncs wait behind it.
FILL_CHUNK = 1024 * 1024


def datasync(fd: int) -> None:
    """fdatasync where the platform has it (data and size reach the device, not the mtime), else fsync."""
    if hasattr(os, "fdatasync"):
        os.fdatasync(fd)
    else:
        os.fsync(fd)


def fill_zeros(path: Path, size: int, cancelled: Callable[[], bool] = lambda: False) -> bool:
    """Create ``path`` as ``size`` bytes of written, synced zeros; False if ``cancelled`` stopped it."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        chunk = bytes(min(size, FILL_CHUNK))
        for offset in range(0, size, len(chunk)):
            if cancelled():
                return False
            os.pwrite(fd, chunk[: min(len(chunk), size - offset)], offset)
            if offset + len(chunk) < size:
                datasync(fd)
        os.fsync(fd)
        return True
    finally:
        os.close(fd)


def zero_file(path: Path, size: int, tmp_suffix: str) -> None:
    """Put ``size`` bytes of written, synced zeros at ``path`` (filled under a temporary name, then
    renamed, so a crash never leaves a short file there); the caller syncs the directory."""
    tmp = path.with_name(path.name + tmp_suffix)
    fill_zeros(tmp, size)
    os.replace(tmp, path)


def sync_dir(directory: Path) -> None:
    """Make a rename or a new file in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
