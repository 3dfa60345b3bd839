"""A real API server on a real SQLite revision log (virtual clock) and a manifest folder in tmp_path."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from sync_env import Env

from kconsole.api.server import APIServer
from kconsole.api.types import UserInfo
from kconsole.client import Client
from kconsole.clock import VirtualClock
from kconsole.store.revlog import RevisionLog
from kconsole.sync import ManifestSync


@pytest.fixture
async def env(tmp_path: Path) -> AsyncIterator[Env]:
    clock = VirtualClock()
    kv = await RevisionLog.open(tmp_path / "db.sqlite", clock=clock, synchronous="NORMAL")
    api = APIServer(kv, clock, seed=3)
    await api.start()
    admin = Client(api, api.tokens.issue(UserInfo("admin", ("system:masters",))), clock, user_agent="tests")
    sync_client = Client(api, api.tokens.issue(UserInfo("system:kconsole-sync")), clock, user_agent="sync")
    folder = tmp_path / "manifests"
    folder.mkdir()
    try:
        yield Env(clock, api, admin, sync_client, folder, folder / ".kconsole")
    finally:
        await api.stop()
        await kv.close()


@pytest.fixture
async def started(env: Env) -> AsyncIterator[Callable[..., ManifestSync]]:
    """Factory for started syncs, stopped at teardown."""
    syncs: list[ManifestSync] = []

    async def make(watch: bool = False) -> ManifestSync:
        sync = env.new_sync(watch=watch)
        await sync.start()
        syncs.append(sync)
        return sync

    yield make  # type: ignore[misc]
    for sync in syncs:
        await sync.stop()
