"""The module-scoped HTTP cluster fixture; the helpers live in http_env.py (a unique module name:
test folders are imported by basename, so ``from conftest import`` would pick another folder's)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from http_env import Cluster, start_cluster, stop_cluster


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Cluster]:
    c = await start_cluster(tmp_path_factory.mktemp("http"))
    yield c
    await stop_cluster(c)
