"""The real kubectl 1.32 against a workload test environment, through an HTTP front on loopback."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from workload_env import Env, wl  # noqa: F401 - wl is the fixture

from kconsole.http.server import HTTPFront


class Kubectl:
    def __init__(self, front: HTTPFront, home: Path) -> None:
        self.front = front
        self.home = home

    async def __call__(self, *args: str, stdin: str | None = None, check: bool = True) -> str:
        """kubectl's standard output; a non-zero exit fails the test with what it said (unless ``check`` is off)."""
        binary = shutil.which("kubectl")
        if binary is None:
            pytest.fail("kubectl is not on PATH: these tests drive the real kubectl 1.32")
        assert self.front.kubeconfig_path is not None
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(self.home),
               "KUBECONFIG": str(self.front.kubeconfig_path), "KUBECACHEDIR": str(self.home / "kube-cache")}
        proc = await asyncio.create_subprocess_exec(binary, *args, stdin=asyncio.subprocess.PIPE,
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                                                    env=env)
        out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin else None), 30)
        if check and proc.returncode:
            raise AssertionError(f"kubectl {' '.join(args)} failed:\n{err.decode()}{out.decode()}")
        return out.decode()


@pytest_asyncio.fixture
async def kubectl(wl: Env, tmp_path: Path) -> AsyncIterator[Kubectl]:  # noqa: F811 - the fixture
    front = HTTPFront(wl.api, port=0, tls=True, data_dir=tmp_path / "front", clock=wl.clock)
    await front.start()
    try:
        yield Kubectl(front, tmp_path)
    finally:
        await front.stop()
