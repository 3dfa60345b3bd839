"""The cluster fixture for console tests (helpers live in tui_helpers.py).

One cluster per test module: booting three etcd members, controllers and kubelets costs more than
most console tests themselves, and every test starts its own app (own informers) over it. Test
modules using it run on one module-scoped loop (``pytestmark = pytest.mark.asyncio(loop_scope="module")``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from tui_helpers import drive, make_cluster

from kconsole.cluster import Cluster
from kconsole.clock import VirtualClock


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[Cluster, VirtualClock]]:
    c, clock = make_cluster(tmp_path_factory.mktemp("cluster"))
    await drive(clock, c.start())
    try:
        yield c, clock
    finally:
        # Stopping may wait on simulated time (a member's last heartbeat, a lease release).
        await drive(clock, c.stop(), limit=60.0)
