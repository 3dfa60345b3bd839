"""Durable-file primitives shared by the single-member journal and the Raft WAL.

Both keep their records in preallocated files whose blocks were really written (zeros) and synced
before use: an overwrite then changes no extent and no file size, so its sync sends data only.

Every write goes through :func:`write_all`: a short write (a full disk) is an error, never a record
counted as written.
"""

from __future__ import annotations

import errno
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


def write_all(fd: int, data: bytes | memoryview, offset: int) -> None:
    """Write all of ``data`` at ``offset`` or raise: the kernel may write less than asked (a full
    disk does), and the rest is then tried again, which reports the full disk as ENOSPC."""
    view = memoryview(data)
    while view:
        written = os.pwrite(fd, view, offset)
        if written <= 0:
            raise OSError(errno.ENOSPC, f"{os.strerror(errno.ENOSPC)} (a write of {len(view)} bytes wrote none)")
        view = view[written:]
        offset += written


def is_disk_full(err: BaseException | None) -> bool:
    """Whether ``err`` (or what caused it) is a full disk: ENOSPC, EDQUOT, or SQLite's "disk is full"."""
    seen = 0
    while err is not None and seen < 8:
        if isinstance(err, OSError) and err.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if "disk is full" in str(err) or os.strerror(errno.ENOSPC) in str(err):
            return True
        err = err.__cause__ or err.__context__
        seen += 1
    return False


def fill_zeros(path: Path, size: int, cancelled: Callable[[], bool] = lambda: False) -> bool:
    """Create ``path`` as ``size`` bytes of written, synced zeros; False if ``cancelled`` stopped it."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        chunk = bytes(min(size, FILL_CHUNK))
        for offset in range(0, size, len(chunk)):
            if cancelled():
                return False
            write_all(fd, chunk[: min(len(chunk), size - offset)], offset)
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
