"""A real API server on a real SQLite revision log, on a virtual clock, for the client tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kconsole.api.server import APIServer
from kconsole.api.types import UserInfo
from kconsole.client import Client
from kconsole.clock import VirtualClock
from kconsole.store.revlog import RevisionLog


@dataclass
class Env:
    clock: VirtualClock
    kv: RevisionLog
    api: APIServer
    token: str
    client: Client

    def new_client(self, entry: Any = None, user_agent: str = "tests") -> Client:
        return Client(entry if entry is not None else self.api, self.token, self.clock, user_agent=user_agent)


@pytest.fixture
async def env(tmp_path: Path) -> AsyncIterator[Env]:
    clock = VirtualClock()
    kv = await RevisionLog.open(tmp_path / "db.sqlite", clock=clock, synchronous="NORMAL")
    api = APIServer(kv, clock, seed=1)
    await api.start()
    token = api.tokens.issue(UserInfo("admin", ("system:masters",)))
    try:
        yield Env(clock, kv, api, token, Client(api, token, clock, user_agent="tests"))
    finally:
        await api.stop()
        await kv.close()

