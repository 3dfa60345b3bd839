"""Linux native AIO (``io_setup``, ``io_submit``, ``io_getevents``) through ``ctypes``.

The standard library has no binding and the journal's direct writes and the Raft WAL's syncs need
only three calls, so this module holds the kernel ABI they share (system call numbers, ``struct
iocb``, ``struct io_event``) and opens a context. Callers keep their own submit and reap loops: each
write or sync is on a hot path, and they differ in how they wait.
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: System call numbers per machine: io_setup, io_destroy, io_getevents, io_submit.
_SYSCALLS = {"x86_64": (206, 207, 208, 209), "aarch64": (0, 1, 4, 2)}
#: struct iocb: data, key, rw_flags, opcode, reqprio, fd, buf, nbytes, offset, reserved2, flags, resfd.
IOCB = struct.Struct("<QIIHhIQQqQII")
#: struct io_event: data, obj, res, res2.
IO_EVENT = struct.Struct("<QQqq")
CMD_PWRITE = 1
CMD_FDSYNC = 3
#: iocb flag: signal the completion on the eventfd in ``resfd``.
FLAG_RESFD = 1
EINTR = 4
#: struct aio_ring (fs/aio.c), which the context id points at in the caller's memory: id, nr,
#: head, tail, magic. The kernel adds completions at ``tail``; io_getevents takes them from ``head``.
_RING = struct.Struct("<IIIII")
_RING_HEAD, _RING_TAIL = 8, 12
RING_MAGIC = 0xA10A10A1


@dataclass(frozen=True, slots=True)
class Numbers:
    setup: int
    destroy: int
    getevents: int
    submit: int


def _libc_syscall(lib: ctypes.CDLL) -> Any:
    fn = lib.syscall
    fn.restype = ctypes.c_long
    return fn


_WAITING = _libc_syscall(ctypes.CDLL(None, use_errno=True))
_QUICK = _libc_syscall(ctypes.PyDLL(None, use_errno=True))


def syscall(*, releases_gil: bool) -> Any:
    """libc's ``syscall``. A call that may wait must release the GIL (``releases_gil``); one that
    returns at once keeps it, which is cheaper than handing it over and taking it back."""
    return _WAITING if releases_gil else _QUICK


def error(call: str) -> OSError:
    """The OSError for a failed system call, from ctypes' saved errno."""
    err = ctypes.get_errno()
    return OSError(err, f"{call} failed: {os.strerror(err)}")


def setup(depth: int) -> tuple[Numbers, ctypes.c_ulong]:
    """A new AIO context for ``depth`` requests in flight (OSError where the machine has none)."""
    found = _SYSCALLS.get(platform.machine())
    if found is None:
        raise OSError("no native AIO on this machine")
    numbers = Numbers(*found)
    ctx = ctypes.c_ulong(0)
    if syscall(releases_gil=False)(ctypes.c_long(numbers.setup), ctypes.c_long(depth), ctypes.byref(ctx)) != 0:
        raise error("io_setup")
    return numbers, ctx


def completions_waiting(ctx: ctypes.c_ulong) -> Callable[[], bool] | None:
    """A check, without a system call, for completions waiting to be taken from the context's
    ring (libaio's ``io_getevents`` reads the same two fields); None where the ring is not the
    layout above. Only valid until the context is destroyed (its ring is unmapped then)."""
    base = ctx.value
    if _RING.unpack(ctypes.string_at(base, _RING.size))[4] != RING_MAGIC:
        return None
    head = ctypes.c_uint.from_address(base + _RING_HEAD)
    tail = ctypes.c_uint.from_address(base + _RING_TAIL)
    return lambda: head.value != tail.value


def destroy(numbers: Numbers, ctx: ctypes.c_ulong) -> None:
    """Free the context; waits for requests still in flight (and an RCU grace period), so it may block."""
    syscall(releases_gil=True)(ctypes.c_long(numbers.destroy), ctx)
