"""What simulated containers do, read from their command and image."""

from __future__ import annotations

import pytest

from kconsole.nodes.images import ImageStore, normalize
from kconsole.nodes.runtime import next_backoff, program_for, should_restart


@pytest.mark.parametrize(("container", "run", "code", "serves"), [
    ({"image": "busybox", "command": ["sleep", "30"]}, 30, 0, False),
    ({"image": "busybox", "args": ["sleep", "2m"]}, 120, 0, False),
    ({"image": "busybox", "command": ["sh", "-c", "exit 3"]}, 0, 3, False),
    ({"image": "busybox", "command": ["sh", "-c", "sleep 5 && exit 2"]}, 5, 2, False),
    ({"image": "busybox", "command": ["sh", "-c", "false || exit 0"]}, 0, 0, False),
    ({"image": "busybox"}, 0, 0, False),
    ({"image": "nginx:1.25"}, float("inf"), 0, True),
    ({"image": "redis", "args": ["--port", "7000"]}, float("inf"), 0, True),
    ({"image": "busybox", "command": ["sh", "-c", "while true; do sleep 1; done"]}, float("inf"), 0, False),
    ({"image": "python:3.12", "command": ["python", "-m", "http.server"]}, float("inf"), 0, True),
])
def test_programs(container: dict, run: float, code: int, serves: bool) -> None:
    p = program_for(container)
    assert (p.run_seconds, p.exit_code, p.serves) == (run, code, serves)


def test_restart_policy_and_backoff() -> None:
    assert should_restart("Always", 0) and should_restart("OnFailure", 1)
    assert not should_restart("OnFailure", 0) and not should_restart("Never", 1)
    delays, b = [], 0.0
    for _ in range(8):
        b = next_backoff(b)
        delays.append(b)
    assert delays == [10, 20, 40, 80, 160, 300, 300, 300]


def test_image_pulls_are_serialised_and_joined() -> None:
    assert normalize("nginx") == "docker.io/library/nginx:latest"
    assert normalize("quay.io/x/y:1") == "quay.io/x/y:1"
    store = ImageStore()
    a = store.plan_pull("nginx:1.25", 100.0, 1.0)
    b = store.plan_pull("redis:7", 100.0, 1.0)
    c = store.plan_pull("nginx:1.25", 100.0, 1.0)
    assert b.done_at > a.done_at and b.total_seconds > b.pull_seconds  # waited behind nginx
    assert c.done_at == a.done_at
    store.finish_pull("nginx:1.25")
    assert store.has("docker.io/library/nginx:1.25")
