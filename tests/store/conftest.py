"""Fixtures for the revision log: a real SQLite file in tmp_path on a virtual clock."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kconsole.clock import VirtualClock
from kconsole.store.revlog import RevisionLog


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "member.db"


@pytest.fixture
async def log(db_path: Path, clock: VirtualClock) -> AsyncIterator[RevisionLog]:
    store = await RevisionLog.open(db_path, clock=clock)
    yield store
    await store.close()
