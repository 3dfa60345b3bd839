"""Durable I/O without a thread: Linux native AIO (``IOCB_CMD_FDSYNC``, and ``IOCB_CMD_PWRITE`` on a
direct, ``O_DSYNC`` file), each completion signalled on an eventfd that the event loop's selector
watches like a socket.

Every Raft round waits for a WAL sync on each member, and every group commit of a lone revision log
for its journal record. On a worker thread a sync needs the GIL to
start, again after its write and again to report back, and the event loop holds the GIL while it
proposes, steps and applies: each of those hand-offs waited behind up to a millisecond of loop
work, three members a round. Submitting the sync is one short system call from the loop; the kernel
runs it on its own worker (fs/aio.c, Linux 4.18+) and bumps the eventfd when it is done. A direct
write goes to the device from the submitting call and completes from its interrupt.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import threading

from kconsole.store import linuxaio
from kconsole.store.linuxaio import CMD_FDSYNC, CMD_PWRITE, FLAG_RESFD, IO_EVENT, IOCB

_MAX_EVENTS = 8  # completions taken per io_getevents call
_QUEUE_DEPTH = 64  # requests that may be in flight at once


class LoopAio:
    """Durable I/O requests of one event loop; each resolves a future once its data is on the device
    (with the result the kernel gave: 0 for a sync, the bytes written for a write)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        if not hasattr(os, "eventfd"):
            raise OSError("no eventfd on this machine")
        self._numbers, self._ctx = linuxaio.setup(_QUEUE_DEPTH)
        # Every call here returns at once (getevents with a zero timeout): keep the GIL.
        self._syscall = linuxaio.syscall(releases_gil=False)
        self._efd = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        self._iocb = ctypes.create_string_buffer(IOCB.size)  # the kernel copies it at submit
        self._iocbs = (ctypes.c_void_p * 1)(ctypes.addressof(self._iocb))
        self._events = ctypes.create_string_buffer(IO_EVENT.size * _MAX_EVENTS)
        self._no_wait = (ctypes.c_long * 2)(0, 0)
        # The system calls' constant arguments, converted once (each WAL sync pays for every conversion).
        self._submit_args = (ctypes.c_long(self._numbers.submit), self._ctx, ctypes.c_long(1), self._iocbs)
        self._reap_args = (ctypes.c_long(self._numbers.getevents), self._ctx, ctypes.c_long(0),
                           ctypes.c_long(_MAX_EVENTS), self._events, self._no_wait)
        self._pending: dict[int, tuple[asyncio.Future[int], str]] = {}  # token: (future, what failed)
        self._token = 0
        self._loop = loop
        try:
            loop.add_reader(self._efd, self._reap)
        except NotImplementedError:  # a loop without file-descriptor readers
            linuxaio.destroy(self._numbers, self._ctx)
            os.close(self._efd)
            raise OSError("the event loop cannot watch an eventfd") from None

    @classmethod
    def create(cls, probe_fd: int) -> LoopAio | None:
        """One for the running loop, or None where native AIO cannot sync ``probe_fd``'s file
        (callers use a thread then)."""
        try:
            syncer = cls(asyncio.get_running_loop())
        except OSError:
            return None
        if not syncer._works(probe_fd):
            syncer.close()
            return None
        return syncer

    def _works(self, fd: int) -> bool:
        """An old kernel or a filesystem without fsync refuses FDSYNC (EINVAL) at submit: find out once."""
        try:
            self._submit_sync(fd, 0)
        except OSError:
            return False
        self._reap_blocking()
        return True

    def fdatasync(self, fd: int) -> asyncio.Future[int]:
        """Start syncing ``fd``'s data; the kernel holds its own reference, so the caller may close it."""
        self._token += 1
        self._submit_sync(fd, self._token)
        return self._expect(self._token, "fdatasync")

    def pwrite(self, fd: int, address: int, size: int, offset: int) -> asyncio.Future[int]:
        """Start writing ``size`` bytes at ``address`` (kept unchanged until the future is done) to
        ``offset`` of ``fd``; on an ``O_DIRECT | O_DSYNC`` file the future resolves once they are durable."""
        self._token += 1
        IOCB.pack_into(self._iocb, 0, self._token, 0, 0, CMD_PWRITE, 0, fd, address, size, offset, 0, FLAG_RESFD, self._efd)
        if self._syscall(*self._submit_args) != 1:
            raise linuxaio.error("io_submit(PWRITE)")
        return self._expect(self._token, "direct write")

    def _expect(self, token: int, what: str) -> asyncio.Future[int]:
        fut = self._loop.create_future()
        self._pending[token] = (fut, what)
        return fut

    def _submit_sync(self, fd: int, token: int) -> None:
        IOCB.pack_into(self._iocb, 0, token, 0, 0, CMD_FDSYNC, 0, fd, 0, 0, 0, 0, FLAG_RESFD, self._efd)
        if self._syscall(*self._submit_args) != 1:
            raise linuxaio.error("io_submit(FDSYNC)")

    def _reap(self) -> None:
        try:
            os.eventfd_read(self._efd)
        except BlockingIOError:
            pass
        while True:
            got = self._syscall(*self._reap_args)
            if got <= 0:
                return
            for i in range(got):
                token, _, res, _ = IO_EVENT.unpack_from(self._events, i * IO_EVENT.size)
                fut, what = self._pending.pop(token, (None, ""))
                if fut is None or fut.done():
                    continue
                if res < 0:
                    fut.set_exception(OSError(-res, f"{what} failed: {os.strerror(-res)}"))
                else:
                    fut.set_result(res)
            if got < _MAX_EVENTS:
                return

    def _reap_blocking(self) -> None:
        """Wait for the probe's completion (before the syncer is in use), letting other threads run."""
        wait = linuxaio.syscall(releases_gil=True)
        while True:
            got = wait(ctypes.c_long(self._numbers.getevents), self._ctx, ctypes.c_long(1), ctypes.c_long(1), self._events, None)
            if got == 1 or (got < 0 and ctypes.get_errno() != linuxaio.EINTR):
                break
        try:
            os.eventfd_read(self._efd)
        except BlockingIOError:
            pass

    def close(self) -> None:
        """Stop listening. io_destroy waits for requests still in flight and then for an RCU grace
        period (30-40 ms here), so it runs on a thread of its own: a member's crash and restart
        must not stall the loop."""
        self._loop.remove_reader(self._efd)
        for fut, _ in self._pending.values():
            fut.cancel()
        self._pending.clear()
        threading.Thread(target=_destroy, args=(self._numbers, self._ctx, self._efd), name="loop-aio-close",
                         daemon=True).start()


def _destroy(numbers: linuxaio.Numbers, ctx: ctypes.c_ulong, efd: int) -> None:
    linuxaio.destroy(numbers, ctx)
    os.close(efd)
