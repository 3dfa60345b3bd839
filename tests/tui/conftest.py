"""The cluster fixture for console tests (helpers live in tui_helpers.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tui_helpers import drive, make_cluster

from kconsole.cluster import Cluster
from kconsole.clock import VirtualClock


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[tuple[Cluster, VirtualClock]]:
    c, clock = make_cluster(tmp_path)
    await drive(clock, c.start())
    try:
        yield c, clock
    finally:
        await c.stop()
