"""Test support for tests/crd: an API server on a real RevisionLog (virtual clock) behind the real HTTP
front, and the real kubectl against it; the CRD and Widget manifests are in ``fixtures/``."""

from __future__ import annotations

import asyncio
import copy
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kconsole.api.server import APIServer
from kconsole.api.types import Credentials, Request, Response, UserInfo
from kconsole.clock import VirtualClock
from kconsole.http.server import HTTPFront
from kconsole.store.revlog import RevisionLog

FIXTURES = Path(__file__).parent / "fixtures"


@dataclass
class Served:
    api: APIServer
    front: HTTPFront
    clock: VirtualClock
    dir: Path

    async def kubectl(self, *args: str, stdin: str | None = None, check: bool = True) -> tuple[int, str, str]:
        binary = shutil.which("kubectl")
        if binary is None:
            pytest.fail("kubectl is not on PATH: these tests drive the real kubectl 1.32")
        assert self.front.kubeconfig_path is not None
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(self.dir), "KUBECONFIG": str(self.front.kubeconfig_path)}
        proc = await asyncio.create_subprocess_exec(
            binary, "--cache-dir", str(self.dir / "kube-cache"), *args,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env)
        out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin is not None else None), 30)
        code = proc.returncode or 0
        if check and code != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({code}):\n{err.decode()}\n{out.decode()}")
        return code, out.decode(), err.decode()


async def handle(api: APIServer, verb: str, resource: str, **kw: Any) -> Response:
    token = api.tokens.issue(UserInfo("admin", ("system:masters",)))
    resp = await api.handle(Request(verb, resource, credentials=Credentials(token=token), **kw))
    assert isinstance(resp, Response)
    return resp


async def established(api: APIServer, clock: VirtualClock, crd: dict[str, Any]) -> None:
    """Create ``crd`` and wait (simulated time) until its kind is served."""
    resp = await handle(api, "create", "customresourcedefinitions", group="apiextensions.k8s.io",
                        body=copy.deepcopy(crd))
    assert resp.code == 201, resp.body

    def served() -> bool:
        return api.registry.get(crd["spec"]["group"], crd["spec"]["names"]["plural"]) is not None

    for _ in range(50):
        if served():
            return
        await clock.advance(0.01)
        await asyncio.sleep(0)
    raise AssertionError(f"{crd['metadata']['name']} never served")


async def open_api(dir: Path, clock: VirtualClock) -> APIServer:
    kv = await RevisionLog.open(dir / "store.db", clock=clock, synchronous="NORMAL")
    api = APIServer(kv, clock, seed=5)
    await api.start()
    return api


async def close_api(api: APIServer) -> None:
    await api.stop()
    await api.kv.close()


async def start_served(dir: Path) -> Served:
    clock = VirtualClock()
    api = await open_api(dir, clock)
    front = HTTPFront(api, port=0, tls=True, data_dir=dir / "data", clock=clock)
    await front.start()
    return Served(api, front, clock, dir)


async def stop_served(served: Served) -> None:
    await served.front.stop()
    await close_api(served.api)
