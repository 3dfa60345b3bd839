"""``kconsole serve`` as a real process: SIGTERM and SIGINT stop it even while its cluster cannot
finish starting (the console too), and a busy data folder or port is one line and exit 1.

A process is real I/O: the waits here are generous wall-clock bounds on the process ending (a test
fails if it is still alive after them), never speed assertions."""

from __future__ import annotations

import asyncio
import os
import pty
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kconsole.api.encryption import KEY_FILE
from kconsole.cluster import Cluster, ClusterConfig
from kconsole.clock import VirtualClock
from kconsole.preflight import lock_data_folder, release_data_folder

ROOT = Path(__file__).resolve().parents[2]
#: Generous: the promise is 10 s; a test only fails when the process outlives this.
EXIT_BOUND = 20.0


def serve(folder: Path, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "kconsole", "serve", str(folder), "--nodes", "0",
                             "--control-planes", "1", *extra], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env=env, cwd=ROOT)


def read_until(proc: subprocess.Popen[str], needle: str, timeout: float) -> str:
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    seen = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and needle.encode() not in seen:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            seen += chunk
    return seen.decode(errors="replace")


async def folder_with_a_secret_and_no_key(tmp_path: Path) -> Path:
    """A data folder holding a Secret encrypted under a key that is then lost (a restore without
    the source's key): the secrets informer retries ``unable to transform key`` forever."""
    folder = tmp_path / "manifests"
    folder.mkdir()
    data = folder / ".kconsole"
    clock = VirtualClock()
    cluster = Cluster(ClusterConfig(http=False, data_dir=data, manifests=None, nodes=0, control_planes=1), clock=clock)
    task = asyncio.ensure_future(cluster.start())
    await clock.run_until(task.done, timeout=60, step=0.1)
    task.result()
    create = asyncio.ensure_future(cluster.api_client().create(
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "topsecret", "namespace": "default"},
         "stringData": {"a": "b"}}))
    await clock.run_until(create.done, timeout=30, step=0.1)
    create.result()
    stop = asyncio.ensure_future(cluster.stop())
    await clock.run_until(stop.done, timeout=60, step=0.1)
    (data / KEY_FILE).unlink()
    return folder


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_a_signal_stops_serve_while_an_informer_cannot_sync(tmp_path: Path, sig: signal.Signals) -> None:
    folder = await folder_with_a_secret_and_no_key(tmp_path)
    proc = serve(folder, "--port", "0")
    try:
        seen = read_until(proc, "unable to transform key", 90)
        assert "unable to transform key" in seen, seen[-2000:]
        proc.send_signal(sig)
        proc.wait(EXIT_BOUND)
    except subprocess.TimeoutExpired:
        pytest.fail(f"kconsole serve still running {EXIT_BOUND:g} s after {sig.name}")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0


def test_a_data_folder_in_use_is_one_line_naming_the_process(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    held = lock_data_folder(data)
    try:
        proc = serve(tmp_path, "--data-dir", str(data), "--port", "0")
        out, _ = proc.communicate(timeout=60)
    finally:
        release_data_folder(held)
    assert proc.returncode == 1
    lines = out.strip().splitlines()
    assert len(lines) == 1, out
    assert f"data folder {data} is in use by process {os.getpid()}" in lines[0]


def test_a_taken_port_says_so_and_suggests_port_0(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = serve(tmp_path, "--port", str(port))
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 1
    lines = out.strip().splitlines()
    assert len(lines) == 1, out
    assert f"port {port} on 127.0.0.1 is already in use" in lines[0] and "--port 0" in lines[0]


def test_sigterm_ends_the_console_while_an_informer_cannot_sync(tmp_path: Path) -> None:
    """The console on the same folder, on a pseudo-terminal: SIGTERM ends it (128 + 15) in time."""
    folder = asyncio.run(folder_with_a_secret_and_no_key(tmp_path))
    data = folder / ".kconsole"
    log = data / "console.log"
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["TERM"] = "xterm-256color"
        os.environ["PYTHONPATH"] = str(ROOT)
        os.execv(sys.executable, [sys.executable, "-m", "kconsole", str(folder), "--port", "0", "--nodes", "0",
                                  "--control-planes", "1"])
    status = None
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and "unable to transform key" not in _text(log):
            _drain(fd, 0.2)
        assert "unable to transform key" in _text(log)
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + EXIT_BOUND
        while status is None and time.monotonic() < deadline:
            done, code = os.waitpid(pid, os.WNOHANG)
            status = code if done else None
            _drain(fd, 0.1)
    finally:
        if status is None:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)
    assert status is not None, f"the console was still running {EXIT_BOUND:g} s after SIGTERM"
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 128 + signal.SIGTERM


def _text(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


def _drain(fd: int, timeout: float) -> None:
    """Read the console's terminal so its writes never block on a full pty."""
    ready, _, _ = select.select([fd], [], [], timeout)
    if ready:
        try:
            os.read(fd, 65536)
        except OSError:
            pass


def test_a_store_that_cannot_be_opened_is_one_line_and_exit_1(tmp_path: Path) -> None:
    data = tmp_path / "data"
    member = data / "etcd" / "etcd-0"
    member.mkdir(parents=True)
    (member / "db.sqlite").write_bytes(b"not a database, " * 512)
    proc = serve(tmp_path, "--data-dir", str(data), "--port", "0")
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 1
    lines = out.strip().splitlines()
    assert len(lines) == 1, out
    assert f"etcd member etcd-0 in {data.resolve() / 'etcd' / 'etcd-0'} cannot be opened" in lines[0]
