"""A real terminal: kconsole under tmux, and ``:deploy`` + Enter sent in one ``send-keys`` (the keys
reach the console in one burst, as a paste does). The console must show Deployments, not lose the
keys or take ``d`` for describe. tmux is required, like kubectl (.ci/run checks for both)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: Wall seconds a real process gets to start or answer before the test gives up (a deadline for a
#: hang, not a performance figure).
DEADLINE = 90.0


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Callable[..., str]]:
    if shutil.which("tmux") is None:
        pytest.fail("tmux is not on PATH: this test drives the console in a real tmux (apt-get install tmux)")
    socket = f"kc-{os.getpid()}-{tmp_path.name}"

    def run(*args: str) -> str:
        return subprocess.run(["tmux", "-L", socket, *args], check=True, capture_output=True, text=True).stdout

    yield run
    subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)


def wait_for(capture: Callable[[], str], found: Callable[[str], bool]) -> str:
    deadline = time.monotonic() + DEADLINE
    screen = ""
    while time.monotonic() < deadline:
        screen = capture()
        if found(screen):
            return screen
        time.sleep(0.2)
    raise AssertionError(f"not seen within {DEADLINE} s; the screen:\n{screen}")


def test_pasted_kind_switch_in_tmux_shows_deployments(tmux: Callable[..., str], tmp_path: Path) -> None:
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    env = f"PYTHONPATH={ROOT}"
    command = (f"cd {tmp_path} && {env} {sys.executable} -m kconsole --ephemeral --nodes 1 --control-planes 1 "
               f"--port 0 {manifests}")
    tmux("new-session", "-d", "-s", "kc", "-x", "120", "-y", "40", command)

    def capture() -> str:
        return tmux("capture-pane", "-p", "-t", "kc")

    wait_for(capture, lambda s: "nodes 2/2 Ready" in s and "pods (all)" in s)
    tmux("send-keys", "-t", "kc", ":deploy", "Enter")
    screen = wait_for(capture, lambda s: "deployments.apps (all)" in s)
    # Still the main screen (no describe view opened by the d of "deploy"), the prompt closed.
    assert "kconsole " in screen.splitlines()[0] and "deployments" in screen.splitlines()[0]
    assert "Describe ·" not in screen and ":kind" not in screen
    tmux("send-keys", "-t", "kc", "q")
