"""The real ``kconsole`` on a pseudo-terminal, stopped by a signal instead of ``q``: it must stop the
cluster and give the terminal back (leave the alternate screen, turn mouse reporting off).

A process and a terminal are real I/O, so the waits here are wall-clock bounded, never fixed."""

from __future__ import annotations

import os
import pty
import select
import signal
import sys
import time
from pathlib import Path

import pytest

LEAVE_ALT_SCREEN = b"\x1b[?1049l"


def read_until(fd: int, pred: object, timeout: float) -> bytes:
    buf = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not pred(buf):  # type: ignore[operator]
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            buf += chunk
    return buf


def wait_exit(pid: int, timeout: float) -> int | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.05)
    return None


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_quits_like_q_and_restores_the_terminal(tmp_path: Path, sig: signal.Signals) -> None:
    folder = tmp_path / "manifests"
    folder.mkdir()
    pid, fd = pty.fork()
    if pid == 0:  # the child: the console on the pty, smallest cluster
        os.environ["TERM"] = "xterm-256color"
        os.execv(sys.executable, [sys.executable, "-m", "kconsole", str(folder), "--port", "0", "--nodes", "1",
                                  "--control-planes", "1", "--data-dir", str(tmp_path / "data")])
    status: int | None = None
    try:
        # The cluster writes its log once it runs: then the app is up and its handlers are installed.
        log = tmp_path / "data" / "console.log"
        first = read_until(fd, lambda _b: log.exists() and "leading" in log.read_text(errors="replace"), 60)
        assert b"kconsole" in first, first[-500:]
        os.kill(pid, sig)
        rest = read_until(fd, lambda b: LEAVE_ALT_SCREEN in b, 30)
        status = wait_exit(pid, 30)
    finally:
        if status is None:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)
    assert status is not None and os.WIFEXITED(status), f"killed by the signal: status {status}"
    assert os.WEXITSTATUS(status) == 128 + sig
    if sig == signal.SIGTERM:  # after a hang-up nobody reads the terminal; only the exit matters
        assert LEAVE_ALT_SCREEN in rest
    assert "stopped leading" in (tmp_path / "data" / "console.log").read_text()


def spawn_console(folder: Path, data: Path) -> tuple[int, int]:
    pid, fd = pty.fork()
    if pid == 0:  # the child: the console on the pty, smallest cluster
        os.environ["TERM"] = "xterm-256color"
        os.execv(sys.executable, [sys.executable, "-m", "kconsole", str(folder), "--port", "0", "--nodes", "1",
                                  "--control-planes", "1", "--data-dir", str(data)])
    return pid, fd


#: Generous: the promise is 10 s; a test only fails when the process outlives this.
EXIT_BOUND = 20.0


@pytest.mark.parametrize("way", ["SIGTERM", "SIGHUP", "SIGINT", "ctrl+c", "q"])
def test_every_way_out_ends_the_console_while_the_cluster_is_still_starting(tmp_path: Path, way: str) -> None:
    folder = tmp_path / "manifests"
    folder.mkdir()
    pid, fd = spawn_console(folder, tmp_path / "data")
    status: int | None = None
    try:
        first = read_until(fd, lambda b: b"starting the cluster" in b, 60)  # drawn; the cluster not up
        assert b"starting the cluster" in first, first[-500:]
        if way.startswith("SIG"):
            os.kill(pid, getattr(signal, way))
        else:
            os.write(fd, b"\x03" if way == "ctrl+c" else b"q")
        read_until(fd, lambda _b: False, 0.5)  # keep the pty drained
        status = wait_exit_draining(pid, fd, EXIT_BOUND)
    finally:
        if status is None:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)
    assert status is not None, f"the console was still running {EXIT_BOUND:g} s after {way}"
    assert os.WIFEXITED(status), f"killed by a signal: status {status}"


def test_a_data_folder_in_use_is_one_line_before_the_console_takes_the_terminal(tmp_path: Path) -> None:
    import subprocess

    from kconsole.preflight import lock_data_folder, release_data_folder

    data = tmp_path / "data"
    data.mkdir()
    held = lock_data_folder(data)
    try:
        proc = subprocess.run([sys.executable, "-m", "kconsole", str(tmp_path), "--port", "0", "--data-dir", str(data)],
                              capture_output=True, text=True, timeout=60)
    finally:
        release_data_folder(held)
    assert proc.returncode == 1
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and f"kconsole: data folder {data} is in use by process {os.getpid()}" in lines[0], lines


def wait_exit_draining(pid: int, fd: int, timeout: float) -> int | None:
    """Wait for the child while reading its terminal (a full pty would block its last writes)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        read_until(fd, lambda _b: False, 0.1)
    return None
