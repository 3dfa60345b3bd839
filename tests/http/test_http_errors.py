"""Bad input and load over plain HTTP (``--insecure-http``): Status errors that name the problem,
413 for large bodies, 401 without a token, slow clients that block nobody, 1,000 watches at once."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from http_env import Cluster, start_cluster, stop_cluster

from kconsole.api.types import UserInfo

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def plain(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Cluster]:
    c = await start_cluster(tmp_path_factory.mktemp("plain"), tls=False)
    yield c
    await stop_cluster(c)


@pytest_asyncio.fixture(loop_scope="module")
async def http(plain: Cluster) -> AsyncIterator[aiohttp.ClientSession]:
    headers = {"Authorization": f"Bearer {plain.front.admin_token}"}
    async with aiohttp.ClientSession(plain.front.url, headers=headers,
                                     connector=aiohttp.TCPConnector(limit=0)) as session:
        yield session


async def _status(resp: aiohttp.ClientResponse) -> dict[str, Any]:
    assert resp.headers["Content-Type"].startswith("application/json")
    body = await resp.json()
    assert body["kind"] == "Status" and body["code"] == resp.status
    return body


CM = "/api/v1/namespaces/default/configmaps"


async def test_kubeconfig_is_private_and_plain_http_still_needs_a_token(plain: Cluster) -> None:
    assert plain.kubeconfig.stat().st_mode & 0o777 == 0o600
    assert f"server: {plain.front.url}" in plain.kubeconfig.read_text()
    async with aiohttp.ClientSession(plain.front.url) as anonymous:
        for path in (CM, "/api", "/version"):
            async with anonymous.get(path) as resp:
                assert resp.status == 401 and (await _status(resp))["reason"] == "Unauthorized"
        async with anonymous.get("/livez") as resp:
            assert resp.status == 200 and await resp.text() == "ok"
        async with anonymous.get(CM, headers={"Authorization": "Bearer wrong"}) as resp:
            assert resp.status == 401


async def test_each_request_on_a_keep_alive_connection_is_judged_by_its_own_token(plain: Cluster) -> None:
    viewer = plain.api.tokens.issue(UserInfo("nobody-in-particular"))
    admin = f"Bearer {plain.front.admin_token}"
    async with aiohttp.ClientSession(plain.front.url, connector=aiohttp.TCPConnector(limit=1)) as one_connection:
        seen: list[tuple[int, Any]] = []
        for auth in (admin, "Bearer wrong", f"Bearer {viewer}", admin, None):
            headers = {"Authorization": auth} if auth else {}
            async with one_connection.get(CM, headers=headers) as resp:
                await resp.read()
                seen.append((resp.status, resp.connection and id(resp.connection.protocol)))
    assert [code for code, _ in seen] == [200, 401, 403, 200, 401]
    assert len({conn for _, conn in seen}) == 1, "the requests did not share one connection"


async def test_malformed_bodies_get_400_naming_the_problem(http: aiohttp.ClientSession) -> None:
    async with http.post(CM, data=b'{"kind": "ConfigMap", ', headers={"Content-Type": "application/json"}) as r:
        assert r.status == 400 and "invalid JSON" in (await _status(r))["message"]
    async with http.post(CM, data=b"kind: [unclosed", headers={"Content-Type": "application/yaml"}) as r:
        assert r.status == 400 and "invalid YAML" in (await _status(r))["message"]
    bad_proto = b"k8s\x00\x0a\x05\x0a\x02v1"
    async with http.post(CM, data=bad_proto, headers={"Content-Type": "application/vnd.kubernetes.protobuf"}) as r:
        assert r.status == 400 and "invalid protobuf" in (await _status(r))["message"]
    async with http.post(CM, data=b"[1, 2]", headers={"Content-Type": "application/json"}) as r:
        assert r.status == 400 and "must be an object" in (await _status(r))["message"]
    async with http.patch(f"{CM}/x", data=b"{}", headers={"Content-Type": "text/plain"}) as r:
        assert r.status == 415
    async with http.get(CM, params={"limit": "many"}) as r:
        assert r.status == 400 and (await _status(r))["message"] == 'strconv.ParseInt: parsing "many": invalid syntax'


async def test_large_bodies_unknown_resources_and_verbs(http: aiohttp.ClientSession) -> None:
    big = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"},
                      "data": {"x": "y" * (3 * 1024 * 1024)}}).encode()
    async with http.post(CM, data=big, headers={"Content-Type": "application/json"}) as r:
        assert r.status == 413 and (await _status(r))["reason"] == "RequestEntityTooLarge"
    async with http.get("/api/v1/namespaces/default/widgets") as r:
        assert r.status == 404 and (await _status(r))["reason"] == "NotFound"
    async with http.get("/apis/nope.example.com/v1") as r:
        assert r.status == 404
    async with http.post(f"{CM}/named", data=b"{}", headers={"Content-Type": "application/json"}) as r:
        assert r.status == 405 and (await _status(r))["reason"] == "MethodNotAllowed"
    async with http.put(CM, data=b"{}", headers={"Content-Type": "application/json"}) as r:
        assert r.status == 405
    async with http.delete("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews/x") as r:
        assert r.status == 405


async def test_watch_is_chunked_json_lines_and_tables_on_request(plain: Cluster,
                                                                 http: aiohttp.ClientSession) -> None:
    async with http.get(CM, params={"watch": "true", "allowWatchBookmarks": "true"},
                        headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}) as r:
        assert r.headers["Content-Type"] == "application/json" and r.headers["Transfer-Encoding"] == "chunked"
        await plain.admin("create", "configmaps", namespace="default",
                          body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "t1"}})
        await plain.admin("create", "configmaps", namespace="default",
                          body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "t2"}})
        events = []
        while len(events) < 2:
            event = json.loads(await asyncio.wait_for(r.content.readline(), 10))
            if event["type"] != "BOOKMARK":
                events.append(event)
        first, second = events
    assert first["type"] == "ADDED" and first["object"]["kind"] == "Table"
    assert [c["name"] for c in first["object"]["columnDefinitions"]] == ["Name", "Data", "Age"]
    assert first["object"]["rows"][0]["cells"][0] == "t1"
    assert second["object"]["columnDefinitions"] == [] and second["object"]["rows"][0]["cells"][0] == "t2"


async def test_a_stuck_client_blocks_no_one(plain: Cluster, http: aiohttp.ClientSession) -> None:
    host, port = plain.front.url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(f"POST {CM} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n"
                 f"Authorization: Bearer {plain.front.admin_token}\r\n\r\n{{\"kind\":".encode())
    await writer.drain()
    stalled_watch = await http.get(CM, params={"watch": "true"})
    try:
        async with http.get(CM) as r:
            assert r.status == 200
        async with http.post(CM, json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "free"}}) as r:
            assert r.status == 201
    finally:
        stalled_watch.close()
        writer.close()


async def test_a_thousand_watches_all_see_a_write(plain: Cluster, http: aiohttp.ClientSession) -> None:
    responses = await asyncio.gather(*(http.get("/api/v1/namespaces/kube-public/configmaps",
                                                params={"watch": "true", "resourceVersion": str(plain.api.kv.revision)})
                                       for _ in range(1000)))
    try:
        await plain.admin("create", "configmaps", namespace="kube-public",
                          body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "broadcast"}})
        lines = await asyncio.gather(*(asyncio.wait_for(r.content.readline(), 30) for r in responses))
        events = [json.loads(line) for line in lines]
        assert {(e["type"], e["object"]["metadata"]["name"]) for e in events} == {("ADDED", "broadcast")}
        assert len(events) == 1000
    finally:
        for r in responses:
            r.close()


async def test_stop_closes_watches_cleanly(tmp_path: Path) -> None:
    c = await start_cluster(tmp_path, tls=False)
    headers = {"Authorization": f"Bearer {c.front.admin_token}"}
    async with aiohttp.ClientSession(c.front.url, headers=headers) as session:
        async with session.get(CM, params={"watch": "true"}) as r:
            await c.front.stop()
            rest = await asyncio.wait_for(r.content.read(), 10)
    assert rest == b""
    await c.api.stop()
    await c.api.kv.close()


async def test_json_bodies_are_written_as_upstream_encodes_them(http: aiohttp.ClientSession) -> None:
    """Field order and the trailing newline of Go's json.Encoder, byte for byte, so clients comparing
    error text see what a kube-apiserver sends."""
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bytes-cm"}}
    async with http.post(CM, json=cm) as resp:
        assert resp.status == 201
        created = await resp.read()
    assert created.endswith(b"}\n") and json.loads(created)["metadata"]["name"] == "bytes-cm"
    async with http.post(CM, json=cm) as resp:
        assert resp.status == 409
        assert await resp.read() == (
            b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
            b'"message":"configmaps \\"bytes-cm\\" already exists","reason":"AlreadyExists",'
            b'"details":{"name":"bytes-cm","kind":"configmaps"},"code":409}\n')
    async with http.get(CM + "/absent") as resp:
        assert await resp.read() == (
            b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
            b'"message":"configmaps \\"absent\\" not found","reason":"NotFound",'
            b'"details":{"name":"absent","kind":"configmaps"},"code":404}\n')
    async with http.get("/api") as resp:
        discovery = await resp.read()
    assert discovery.startswith(b'{"kind":"APIVersions"') and discovery.endswith(b"}\n")
    async with http.get("/version") as resp:  # WriteRawJSON: indented, no final newline
        version = await resp.read()
    assert version.startswith(b'{\n  "major": "1",') and version.endswith(b"\n}")
