"""The module-scoped served cluster for the kubectl tests (helpers in crd_env.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from crd_env import Served, start_served, stop_served


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def served(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Served]:
    s = await start_served(tmp_path_factory.mktemp("crd"))
    yield s
    await stop_served(s)
