"""Test support for tests/http: a real API server (RevisionLog in a temp folder, virtual clock) behind the real HTTP front on
127.0.0.1:0, shared per test module, plus a helper that runs the real kubectl against it."""

from __future__ import annotations

import asyncio
import json
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
from kconsole.kubeconfig import PKI, kubeconfig_text
from kconsole.store.revlog import RevisionLog


@dataclass
class KubectlResult:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


@dataclass
class Cluster:
    api: APIServer
    front: HTTPFront
    clock: VirtualClock
    dir: Path

    @property
    def kubeconfig(self) -> Path:
        assert self.front.kubeconfig_path is not None
        return self.front.kubeconfig_path

    def kubeconfig_for(self, user: UserInfo) -> Path:
        """A kubeconfig carrying only a bearer token for ``user`` (no admin client certificate)."""
        token = self.api.tokens.issue(user)
        path = self.dir / f"kubeconfig-{user.name.replace(':', '_')}"  # KUBECONFIG splits on ":"
        path.write_text(kubeconfig_text(self.front.url, token, PKI(self.front.data_dir), client_cert=False))
        return path

    async def kubectl(self, *args: str, stdin: str | None = None, check: bool = True,
                      timeout: float = 30, kubeconfig: Path | None = None) -> KubectlResult:
        """Run the real kubectl; a missing kubectl fails the test loudly (never a skip)."""
        binary = shutil.which("kubectl")
        if binary is None:
            pytest.fail("kubectl is not on PATH: the HTTP tests drive the real kubectl 1.32")
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(self.dir), "KUBECONFIG": str(kubeconfig or self.kubeconfig),
               "KUBECACHEDIR": str(self.dir / "kube-cache")}
        proc = await asyncio.create_subprocess_exec(
            binary, *args, stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env)
        out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin is not None else None), timeout)
        # surrogateescape: output cut inside a UTF-8 character (logs --limit-bytes) keeps its bytes
        result = KubectlResult(proc.returncode or 0, out.decode(errors="surrogateescape"), err.decode())
        if check and result.code != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({result.code}):\n{result.err}\n{result.out}")
        return result

    async def admin(self, verb: str, resource: str, **kw: Any) -> Any:
        """A request straight to the entry (to set up state kubectl cannot, e.g. bind a pod)."""
        token = self.api.tokens.issue(UserInfo("admin", ("system:masters",)))
        resp = await self.api.handle(Request(verb, resource, credentials=Credentials(token=token), **kw))
        assert isinstance(resp, Response) and resp.ok, getattr(resp, "body", resp)
        return resp.body


async def start_cluster(dir: Path, *, tls: bool = True) -> Cluster:
    clock = VirtualClock()
    kv = await RevisionLog.open(dir / "store.db", clock=clock, synchronous="NORMAL")
    api = APIServer(kv, clock, seed=3)
    await api.start()
    front = HTTPFront(api, port=0, tls=tls, data_dir=dir / "data", clock=clock)
    await front.start()
    return Cluster(api, front, clock, dir)


async def stop_cluster(cluster: Cluster) -> None:
    await cluster.front.stop()
    await cluster.api.stop()
    await cluster.api.kv.close()
