"""What must hold before a cluster may start here: the data folder is ours alone, the port is free.

Both fail as one line that names the problem and what to do (``kconsole serve`` and the console print
it and exit 1), never as a traceback from deep inside the store or the HTTP front.
"""

from __future__ import annotations

import errno
import fcntl
import os
import socket
from pathlib import Path

#: The file in a data folder whose lock a running cluster holds, with its process id inside.
LOCK_FILE = "kconsole.lock"


class StartError(Exception):
    """A cluster cannot start; the message says why in one line."""


def lock_data_folder(folder: Path) -> int:
    """Hold ``folder``'s lock for as long as the returned descriptor is open (the process's life:
    the kernel drops it on any exit, ``kill -9`` included)."""
    fd = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as err:
        holder = _holder(fd)
        os.close(fd)
        if err.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
            raise
        raise StartError(f"data folder {folder} is in use by {holder}: stop it first, or use another "
                         "--data-dir") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def release_data_folder(fd: int) -> None:
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)


def check_data_folder(folder: Path) -> None:
    """Fail now if another process holds ``folder`` (the console asks before it takes the terminal)."""
    if folder.is_dir():
        release_data_folder(lock_data_folder(folder))


def _holder(fd: int) -> str:
    """``process 1234 (kconsole serve ...)`` from the pid the holder wrote into the lock file."""
    try:
        pid = int(os.pread(fd, 32, 0).decode().strip())
    except (OSError, ValueError):
        return "another process"
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return f"process {pid}"
    args = [a for a in raw.decode(errors="replace").split("\0") if a]
    if len(args) >= 3 and args[1] == "-m":  # python -m kconsole serve ...
        args = args[2:]
    command = " ".join(Path(args[0]).name if i == 0 else a for i, a in enumerate(args[:3]))
    return f"process {pid} ({command})" if command else f"process {pid}"


def port_in_use(address: str, port: int) -> StartError:
    return StartError(f"port {port} on {address} is already in use: pick another with --port, "
                      "or --port 0 for any free port")


def check_port(address: str, port: int) -> None:
    """Fail now if ``address:port`` cannot be bound (port 0 always can)."""
    if port == 0:
        return
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((address, port))
        except OSError as err:
            if err.errno == errno.EADDRINUSE:
                raise port_in_use(address, port) from None
            raise StartError(f"cannot serve on {address}:{port}: {err.strerror}") from None
