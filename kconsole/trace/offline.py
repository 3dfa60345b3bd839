"""A stopped cluster's data folder opened for history reads: its etcd members and an API server, no
components, nothing serving. ``kconsole trace export`` and ``kconsole fork`` read through it, as the
console's user, with the history read path (:class:`kconsole.client.history.HistoryClient`)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kconsole.trace.fileformat import TraceError


@dataclass
class Opened:
    client: Any  # kconsole.client.Client acting as the console's user
    history: Any  # kconsole.client.history.HistoryClient over it
    data_dir: Path


def member_count(data_dir: Path) -> int:
    from kconsole.store.facade import MEMBERS_DIR

    root = data_dir / MEMBERS_DIR
    return sum(1 for p in root.glob("etcd-*") if p.is_dir() and p.name[5:].isdigit()) if root.is_dir() else 0


@contextlib.asynccontextmanager
async def open_folder(data_dir: Path) -> AsyncIterator[Opened]:
    """The folder's store and API server, held under the folder's lock until the block ends."""
    from kconsole.api.server import APIServer
    from kconsole.client import Client
    from kconsole.client.history import HistoryClient
    from kconsole.cluster import CONSOLE, ClusterConfig, _resumed_clock, user_agent_for
    from kconsole.kubeconfig import service_account_key
    from kconsole.preflight import lock_data_folder, release_data_folder
    from kconsole.store.durability import StoreMode, open_store
    from kconsole.store.facade import MEMBERS_DIR

    folder = data_dir.resolve()
    members = member_count(folder)
    if members == 0:
        raise TraceError(f"{data_dir}: no cluster data here (no {MEMBERS_DIR}/etcd-N folders); "
                         "give the cluster's data folder with --data-dir")
    lock = lock_data_folder(folder)
    clock = _resumed_clock(1.0, folder / "clock")
    etcd = api = None
    try:
        etcd = await open_store(folder / MEMBERS_DIR, clock=clock, mode=StoreMode(members, synced=True))
        api = APIServer(etcd, clock, transformers=ClusterConfig().encryption_transformers(folder),
                        sa_key=service_account_key(folder))
        await api.start()
        client = Client(api, api.tokens.issue(CONSOLE), clock, user_agent=user_agent_for(CONSOLE))
        yield Opened(client, HistoryClient(client), folder)
    finally:
        if api is not None:
            await api.stop()
        if etcd is not None:
            await etcd.close()
        release_data_folder(lock)
