"""History reads over HTTP: ``POST /apis/history.kconsole.io/v1/historyqueries`` answers what the
in-process client gets, while a paged list continued past compaction still gets upstream's 410."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest
import pytest_asyncio

from http_env import Cluster, start_cluster, stop_cluster

pytestmark = pytest.mark.asyncio(loop_scope="module")

CMS = "/api/v1/namespaces/default/configmaps"
QUERIES = "/apis/history.kconsole.io/v1/historyqueries"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def plain(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Cluster]:
    c = await start_cluster(tmp_path_factory.mktemp("history"), tls=False)
    yield c
    await stop_cluster(c)


@pytest_asyncio.fixture(loop_scope="module")
async def http(plain: Cluster) -> AsyncIterator[aiohttp.ClientSession]:
    headers = {"Authorization": f"Bearer {plain.front.admin_token}"}
    async with aiohttp.ClientSession(plain.front.url, headers=headers) as session:
        yield session


async def _query(http: aiohttp.ClientSession, **spec: object) -> tuple[int, dict]:
    body = {"apiVersion": "history.kconsole.io/v1", "kind": "HistoryQuery", "metadata": {}, "spec": spec}
    async with http.post(QUERIES, json=body) as resp:
        return resp.status, await resp.json()


async def test_history_reads_over_http_past_compaction(plain: Cluster, http: aiohttp.ClientSession) -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}, "data": {"k": "one"}}
    async with http.post(CMS, json=cm) as resp:
        first = int((await resp.json())["metadata"]["resourceVersion"])
    cm["data"] = {"k": "two"}
    async with http.put(f"{CMS}/cfg", json={**cm, "metadata": {"name": "cfg", "resourceVersion": str(first)}}) as resp:
        second = int((await resp.json())["metadata"]["resourceVersion"])
    async with http.get(CMS, params={"limit": "1"}) as resp:
        token = (await resp.json())["metadata"].get("continue")
    await plain.api.kv.compact(second, 1)
    if token:
        async with http.get(CMS, params={"limit": "1", "continue": token}) as resp:
            assert resp.status == 410

    code, answer = await _query(http, op="listAt", resource="configmaps", namespace="default", revision=first)
    assert code == 201, answer
    assert [item["data"] for item in answer["status"]["items"] if item["metadata"]["name"] == "cfg"] == [{"k": "one"}]
    code, answer = await _query(http, op="changes", after=first - 1, upto=second, resource="configmaps",
                                namespace="default", name="cfg")
    assert [(c["type"], c["revision"]) for c in answer["status"]["changes"]] == [("ADDED", first), ("MODIFIED", second)]
    code, answer = await _query(http, op="bounds")
    assert answer["status"]["oldest"] == 1 and answer["status"]["current"] >= second
    code, answer = await _query(http, op="listAt", resource="configmaps", revision=10**9)
    assert code == 504


async def test_kubectl_creates_a_history_query(tmp_path_factory: pytest.TempPathFactory) -> None:
    tls = await start_cluster(tmp_path_factory.mktemp("history-tls"))
    try:
        query = ('{"apiVersion": "history.kconsole.io/v1", "kind": "HistoryQuery", "metadata": {},'
                 ' "spec": {"op": "bounds"}}')
        answer = (await tls.kubectl("create", "-o", "json", "-f", "-", stdin=query)).json()
    finally:
        await stop_cluster(tls)
    assert answer["kind"] == "HistoryQuery" and answer["status"]["current"] >= answer["status"]["oldest"] >= 1
