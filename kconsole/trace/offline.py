"""A stopped cluster's data folder opened for history reads: its etcd members and an API server, no
components, nothing serving. ``kconsole trace export`` and ``kconsole fork`` read through it, as the
console's user, with the history read path (:class:`kconsole.client.history.HistoryClient`).

It runs on a virtual clock set to the time the cluster last saw and moved only while the members
elect a leader (real etcd members: as fast as real time, while they start), so no timer of the API
server (Event expiry, compaction) fires and nothing is written: the folder is read as it was left."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kconsole.trace.fileformat import TraceError

log = logging.getLogger(__name__)

#: Simulated seconds the members may take to elect a leader before opening gives up.
OPEN_TIMEOUT = 60.0


@dataclass
class Opened:
    client: Any  # kconsole.client.Client acting as the console's user
    history: Any  # kconsole.client.history.HistoryClient over it
    data_dir: Path


def member_count(data_dir: Path) -> int:
    from kconsole.store.facade import MEMBERS_DIR

    root = data_dir / MEMBERS_DIR
    return sum(1 for p in root.glob("etcd-*") if p.is_dir() and p.name[5:].isdigit()) if root.is_dir() else 0


def on_real_etcd(data_dir: Path) -> bool:
    """Whether the folder's cluster ran on real etcd members it runs itself (``--etcd local``)."""
    from kconsole.store.etcdlocal import LOCAL_DIR

    return (data_dir / LOCAL_DIR / "ports.json").is_file()


@contextlib.asynccontextmanager
async def open_folder(data_dir: Path) -> AsyncIterator[Opened]:
    """History reads of a data folder: its store and an API server of our own under the folder's
    lock when it is stopped; the running cluster's HTTP front (its kubeconfig) when one holds it."""
    from kconsole.client.history import HistoryClient
    from kconsole.preflight import StartError, lock_data_folder, release_data_folder

    folder = data_dir.resolve()
    if member_count(folder) == 0 and not on_real_etcd(folder):
        from kconsole.store.facade import MEMBERS_DIR

        raise TraceError(f"{data_dir}: no cluster data here (no {MEMBERS_DIR}/etcd-N folders); "
                         "give the cluster's data folder with --data-dir")
    try:
        lock = lock_data_folder(folder)
    except StartError as err:
        from kconsole.kubeconfig import KUBECONFIG
        from kconsole.trace.remote import RemoteClient

        if not (folder / KUBECONFIG).is_file():
            raise TraceError(f"{err} (it serves no HTTP front to read the history through)") from None
        remote = await RemoteClient.open(folder / KUBECONFIG)
        try:
            yield Opened(remote, HistoryClient(remote), folder)
        finally:
            await remote.close()
        return
    release_data_folder(lock)
    async with _stopped(folder) as opened:
        yield opened


@contextlib.asynccontextmanager
async def _stopped(data_dir: Path) -> AsyncIterator[Opened]:
    """The folder's store and API server, held under the folder's lock until the block ends."""
    from kconsole.api.server import APIServer
    from kconsole.client import Client
    from kconsole.client.history import HistoryClient
    from kconsole.cluster import CONSOLE, HISTORY_DIR, ClusterConfig, user_agent_for
    from kconsole.clock import VirtualClock
    from kconsole.kubeconfig import service_account_key
    from kconsole.preflight import lock_data_folder, release_data_folder
    from kconsole.store.durability import StoreMode, open_store
    from kconsole.store.facade import MEMBERS_DIR

    folder = data_dir.resolve()
    members = member_count(folder)
    lock = lock_data_folder(folder)
    clock = VirtualClock(start=_last_seen(folder))
    parts: dict[str, Any] = {}

    async def opening() -> None:
        if members:
            parts["etcd"] = await open_store(folder / MEMBERS_DIR, clock=clock, mode=StoreMode(members, synced=True))
        else:
            from kconsole.store.etcdreal import open_stopped_local

            parts["etcd"] = await open_stopped_local(folder, clock, history_dir=folder / HISTORY_DIR)
        parts["api"] = APIServer(parts["etcd"], clock, transformers=ClusterConfig().encryption_transformers(folder),
                                 sa_key=service_account_key(folder))
        await parts["api"].start()

    try:
        task = asyncio.ensure_future(opening())
        if members:
            await clock.run_until(task.done, timeout=OPEN_TIMEOUT, step=0.1)
        else:
            await _real_time(clock, task)
        task.result()
        api = parts["api"]
        client = Client(api, api.tokens.issue(CONSOLE), clock, user_agent=user_agent_for(CONSOLE))
        yield Opened(client, HistoryClient(client), folder)
    finally:
        closing = asyncio.ensure_future(_close(parts))
        if members:
            await clock.run_until(closing.done, timeout=OPEN_TIMEOUT, step=0.1)
        else:
            try:
                await _real_time(clock, closing)
            except TraceError as err:  # what was read stands; the members end with this process
                log.warning("%s: %s", folder, err)
        release_data_folder(lock)


async def _real_time(clock: Any, task: asyncio.Future[Any]) -> None:
    """Until ``task`` is done, simulated time moving with real time: real etcd members start, stop
    and tell their watches' progress (every real second) at their own pace."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + OPEN_TIMEOUT
    while not task.done():
        if loop.time() > deadline:
            task.cancel()
            raise TraceError(f"the etcd members did not start or stop within {OPEN_TIMEOUT:g} s")
        await asyncio.sleep(0.05)
        await clock.advance(0.05)


async def _close(parts: dict[str, Any]) -> None:
    if "api" in parts:
        await parts["api"].stop()
    if "etcd" in parts:
        await parts["etcd"].close()


def _last_seen(folder: Path) -> float:
    """The simulated time the cluster last saved (a cluster on a virtual clock saves none)."""
    from kconsole.cluster import CLOCK_FILE
    from kconsole.clock import VIRTUAL_EPOCH

    try:
        return float((folder / CLOCK_FILE).read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return VIRTUAL_EPOCH
