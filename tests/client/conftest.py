"""A real API server on a real SQLite revision log, on a virtual clock, for the client tests.

Every test runs twice: with the in-process client, and with the HTTPS client against the same
server behind the real HTTP front over TLS on loopback (credentials from the kubeconfig it writes).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kconsole.api.server import APIServer
from kconsole.api.types import UserInfo
from kconsole.client import Client
from kconsole.client.https import HTTPSEntry
from kconsole.clock import VirtualClock
from kconsole.http.server import HTTPFront
from kconsole.store.revlog import RevisionLog


@dataclass
class Env:
    clock: VirtualClock
    kv: RevisionLog
    api: APIServer
    token: str
    client: Client
    #: What the clients talk to: the API server itself, or the HTTPS client's entry.
    entry: Any

    def new_client(self, entry: Any = None, user_agent: str = "tests") -> Client:
        return Client(entry if entry is not None else self.entry, self.token, self.clock, user_agent=user_agent)


@pytest.fixture(params=["in-process", "https"])
async def env(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Env]:
    clock = VirtualClock()
    kv = await RevisionLog.open(tmp_path / "db.sqlite", clock=clock, synchronous="NORMAL")
    api = APIServer(kv, clock, seed=1)
    await api.start()
    token = api.tokens.issue(UserInfo("admin", ("system:masters",)))
    front: HTTPFront | None = None
    entry: Any = api
    if request.param == "https":
        front = HTTPFront(api, port=0, tls=True, data_dir=tmp_path / "data", clock=clock)
        await front.start()
        assert front.kubeconfig_path is not None
        entry = await HTTPSEntry.connect(front.kubeconfig_path, clock=clock)
    try:
        yield Env(clock, kv, api, token, Client(entry, token, clock, user_agent="tests"), entry)
    finally:
        if front is not None:
            await entry.close()
            await front.stop()
        await api.stop()
        await kv.close()
