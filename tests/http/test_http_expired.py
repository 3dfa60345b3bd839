"""Expired resourceVersions over HTTP, as client-go expects them: a watch from a version the watch cache
no longer holds gets one in-stream ERROR event carrying a 410 Expired Status (then the stream ends, so
the client relists), and a paged list whose continue token points at a compacted revision gets a 410
Status answer. Own cluster: the test compacts the store."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import aiohttp
import pytest
import pytest_asyncio

from http_env import Cluster, start_cluster, stop_cluster

pytestmark = pytest.mark.asyncio(loop_scope="module")

NS = "/api/v1/namespaces/default/configmaps"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def plain(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Cluster]:
    c = await start_cluster(tmp_path_factory.mktemp("expired"), tls=False)
    yield c
    await stop_cluster(c)


@pytest_asyncio.fixture(loop_scope="module")
async def http(plain: Cluster) -> AsyncIterator[aiohttp.ClientSession]:
    headers = {"Authorization": f"Bearer {plain.front.admin_token}"}
    async with aiohttp.ClientSession(plain.front.url, headers=headers) as session:
        yield session


async def _create(http: aiohttp.ClientSession, name: str) -> int:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": name}}
    async with http.post(NS, json=cm) as resp:
        assert resp.status == 201, await resp.text()
        return int((await resp.json())["metadata"]["resourceVersion"])


async def test_a_watch_from_a_version_the_cache_dropped_gets_410_in_stream(plain: Cluster,
                                                                          http: aiohttp.ClientSession) -> None:
    first = await _create(http, "old-0")
    await plain.clock.advance(plain.api.storage.caches["configmaps"].history_seconds + 5)
    for i in range(plain.api.storage.caches["configmaps"].min_events + 5):
        await _create(http, f"new-{i}")

    async with http.get(NS, params={"watch": "true", "resourceVersion": str(first - 1),
                                    "timeoutSeconds": "5"}) as resp:
        assert resp.status == 200 and resp.headers["Content-Type"] == "application/json"
        event = json.loads(await resp.content.readline())
        assert event["type"] == "ERROR", f"expected an ERROR event first, got {event}"
        assert await resp.content.readline() == b"", "the stream goes on after the ERROR event"
    status = event["object"]
    assert (status["kind"], status["status"], status["code"], status["reason"]) == ("Status", "Failure", 410, "Expired")
    assert "too old resource version" in status["message"]


async def test_a_paged_list_continued_after_compaction_gets_410(plain: Cluster, http: aiohttp.ClientSession) -> None:
    for i in range(3):
        await _create(http, f"page-{i}")
    async with http.get(NS, params={"limit": "2"}) as resp:
        assert resp.status == 200
        first_page = await resp.json()
    token = first_page["metadata"]["continue"]
    assert token and len(first_page["items"]) == 2
    async with http.get(NS, params={"limit": "2", "continue": token}) as resp:
        assert resp.status == 200, "the continue token works before the compaction"

    latest = await _create(http, "after-list")
    await plain.api.kv.compact(latest)
    async with http.get(NS, params={"limit": "2", "continue": token}) as resp:
        assert resp.status == 410
        status = await resp.json()
    assert (status["kind"], status["code"], status["reason"]) == ("Status", 410, "Expired")
    assert "continue parameter is too old" in status["message"]
