"""Fixtures for the API server core tests: a real RevisionLog in tmp_path, a virtual clock, an admin token."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from kconsole.api.server import APIServer
from kconsole.api.types import Credentials, Request, Response, UserInfo
from kconsole.clock import VirtualClock
from kconsole.store.revlog import RevisionLog


class Client:
    """Thin request builder over APIServer.handle with one user's credentials."""

    def __init__(self, api: APIServer, token: str) -> None:
        self.api = api
        self.creds = Credentials(token=token)

    async def do(self, verb: str, resource: str, **kw: Any) -> Any:
        return await self.api.handle(Request(verb, resource, credentials=self.creds, **kw))

    async def ok(self, verb: str, resource: str, **kw: Any) -> Any:
        resp = await self.do(verb, resource, **kw)
        assert isinstance(resp, Response), resp
        assert resp.ok, resp.body
        return resp.body


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock()


@pytest.fixture
async def kv(tmp_path: Path, clock: VirtualClock) -> AsyncIterator[RevisionLog]:
    log = await RevisionLog.open(tmp_path / "store.db", clock=clock, synchronous="NORMAL")
    yield log
    await log.close()


@pytest.fixture
async def api(kv: RevisionLog, clock: VirtualClock) -> AsyncIterator[APIServer]:
    server = APIServer(kv, clock, seed=7)
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
def admin(api: APIServer) -> Client:
    return Client(api, api.tokens.issue(UserInfo("admin", ("system:masters",))))


def pod(name: str, labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                            "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}
    if labels:
        body["metadata"]["labels"] = labels
    return body
