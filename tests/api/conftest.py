"""Fixtures for the API server core tests: a real RevisionLog in tmp_path, a virtual clock, an admin token."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from api_helpers import Client

from kconsole.api.server import APIServer
from kconsole.api.types import UserInfo
from kconsole.clock import VirtualClock
from kconsole.store.revlog import RevisionLog


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


@pytest.fixture(scope="session")
def real_etcd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Three real etcd members on loopback for the whole run (each test empties the keyspace)."""
    from kconsole.store.etcdlocal import EtcdNotFound, LocalEtcd

    try:
        local = LocalEtcd(tmp_path_factory.mktemp("real-etcd"), members=3, proxied=False)
    except EtcdNotFound as err:
        pytest.skip(f"no etcd binary (CI installs Debian's etcd-server): {err}")
    local.heartbeat_ms, local.election_ms = 300, 3000  # no leader changes when the machine is busy
    local.spawn()
    yield local
    local.terminate()

