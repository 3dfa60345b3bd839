"""Writes while the watch cache lags the store: they must not wait for it (nor fail with 504).

Under load (1,000 kubelets, a 10,000-pod burst) the event loop runs seconds per turn and a
resource's watch cache trails the writes this server acknowledged by more than its 3 s wait bound;
patches of Events then failed with 'Timeout: Too large resource version: N, current: N'. Here the
cache's store feed is stopped outright, the extreme of that lag.
"""

from __future__ import annotations

import asyncio

from api_helpers import Client, pod

from kconsole.api.server import APIServer
from kconsole.clock import VirtualClock


async def _stall_pods_cache(api: APIServer) -> None:
    cache = api.storage.caches["pods"]
    task = cache._task
    assert task is not None
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass


async def test_patch_and_delete_succeed_while_cache_lags(admin: Client, api: APIServer,
                                                         clock: VirtualClock) -> None:
    await _stall_pods_cache(api)
    created = await admin.ok("create", "pods", namespace="default", body=pod("lag", nodeName="node-1"))
    patch = asyncio.ensure_future(admin.do("patch", "pods", namespace="default", name="lag", patch_type="merge",
                                           body={"metadata": {"labels": {"seen": "yes"}}}))
    await clock.advance(3.5)
    resp = await patch
    assert resp.code == 200, resp.body
    assert resp.body["metadata"]["labels"] == {"seen": "yes"}
    assert int(resp.body["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
    gone = asyncio.ensure_future(admin.do("delete", "pods", namespace="default", name="lag",
                                          body={"gracePeriodSeconds": 0}))
    await clock.advance(3.5)
    resp = await gone
    assert resp.code == 200, resp.body
    assert await api.storage.read(api.registry.get("", "pods"), api.storage.key(
        api.registry.get("", "pods"), "default", "lag")) is None


async def test_stale_resource_version_still_conflicts_while_cache_lags(admin: Client, api: APIServer,
                                                                       clock: VirtualClock) -> None:
    await _stall_pods_cache(api)
    first = await admin.ok("create", "pods", namespace="default", body=pod("cas", nodeName="node-1"))
    await admin.ok("patch", "pods", namespace="default", name="cas", patch_type="merge",
                   body={"metadata": {"labels": {"v": "2"}}})
    stale = dict(first, metadata=dict(first["metadata"], labels={"v": "old"}))
    resp = await admin.do("update", "pods", namespace="default", name="cas", body=stale)
    assert resp.code == 409 and resp.body["reason"] == "Conflict", resp.body


async def test_consistent_get_answers_from_the_store_while_cache_lags(admin: Client, api: APIServer,
                                                                     clock: VirtualClock) -> None:
    """Leader election renews with a get (no resourceVersion) then an update; under load the get
    failed with 504 and the leader lost its lease. Upstream serves such gets from etcd."""
    await _stall_pods_cache(api)
    await admin.ok("create", "pods", namespace="default", body=pod("lease-like", nodeName="node-1"))
    await admin.ok("patch", "pods", namespace="default", name="lease-like", patch_type="merge",
                   body={"metadata": {"labels": {"renewed": "1"}}})
    got = asyncio.ensure_future(admin.do("get", "pods", namespace="default", name="lease-like"))
    await clock.advance(3.5)
    resp = await got
    assert resp.code == 200, resp.body
    assert resp.body["metadata"]["labels"] == {"renewed": "1"}
    missing = asyncio.ensure_future(admin.do("get", "pods", namespace="default", name="never-made"))
    await clock.advance(3.5)
    assert (await missing).code == 404


def _count_store_reads(api: APIServer) -> list[str]:
    """Every authoritative read the storage makes from here on, by key."""
    reads: list[str] = []
    storage = api.storage
    read = storage.read

    async def counted(spec, key):  # type: ignore[no-untyped-def]
        reads.append(key)
        return await read(spec, key)

    storage.read = counted  # type: ignore[method-assign]
    return reads


async def _patch(admin: Client, clock: VirtualClock, name: str, labels: dict[str, str]) -> dict:
    resp = asyncio.ensure_future(admin.do("patch", "pods", namespace="default", name=name, patch_type="merge",
                                          body={"metadata": {"labels": labels}}))
    await clock.advance(3.5)
    done = await resp
    assert done.code == 200, done.body
    return done.body


async def test_writes_on_a_lagging_cache_start_from_its_copy_without_reading_the_store(
        admin: Client, api: APIServer, clock: VirtualClock) -> None:
    """Upstream's GuaranteedUpdate starts from the watch cache's copy: a stale one fails the
    compare-and-swap, whose failure branch returns the stored object. On real etcd a read is a Raft
    round per write, so a lagging cache must not turn every update into a read and a write."""
    await admin.ok("create", "pods", namespace="default", body=pod("suggested", nodeName="node-1"))
    await clock.advance(0.1)
    await _stall_pods_cache(api)
    reads = _count_store_reads(api)
    await _patch(admin, clock, "suggested", {"v": "1"})  # the cache's copy is current: one write
    body = await _patch(admin, clock, "suggested", {"v": "2"})  # stale copy: CAS fails, retried from its answer
    assert body["metadata"]["labels"] == {"v": "2"}
    assert reads == []


async def test_a_no_op_against_a_stale_copy_is_checked_against_the_store(
        admin: Client, api: APIServer, clock: VirtualClock) -> None:
    """The cache's stale copy says the label is already "1"; the store says "2": the patch must
    write, not answer 'unchanged' from the stale copy."""
    await admin.ok("create", "pods", namespace="default", body=pod("noop", nodeName="node-1", labels={"v": "1"}))
    await clock.advance(0.1)
    await _stall_pods_cache(api)
    await _patch(admin, clock, "noop", {"v": "2"})
    body = await _patch(admin, clock, "noop", {"v": "1"})
    assert body["metadata"]["labels"] == {"v": "1"}
    spec = api.registry.get("", "pods")
    stored = await api.storage.read(spec, api.storage.key(spec, "default", "noop"))
    assert stored is not None and stored["metadata"]["labels"] == {"v": "1"}
