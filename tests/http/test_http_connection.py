"""One client connection as a raw socket sees it: small exchanges answered by kconsole.http.connection,
streams and unusual requests handed to aiohttp on the same connection, keep-alive, pipelining, close."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web

from http_env import Cluster, start_cluster, stop_cluster

from kconsole.http.connection import Connection, Reply
from kconsole.http.server import HTTPFront

pytestmark = pytest.mark.asyncio(loop_scope="module")

CM = "/api/v1/namespaces/default/configmaps"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def plain(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Cluster]:
    c = await start_cluster(tmp_path_factory.mktemp("conn"), tls=False)
    yield c
    await stop_cluster(c)


class Raw:
    """A client connection written by hand: what goes on the wire is exactly what the test wrote."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, token: str) -> None:
        self.reader, self.writer, self.token = reader, writer, token

    @classmethod
    async def open(cls, c: Cluster) -> Raw:
        host, port = c.front.url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        return cls(reader, writer, c.front.admin_token)

    def request(self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None) -> bytes:
        data = b"" if body is None else body if isinstance(body, bytes) else json.dumps(body).encode()
        lines = [f"{method} {path} HTTP/1.1", "Host: test", f"Authorization: Bearer {self.token}"]
        all_headers = {"Content-Type": "application/json", **(headers or {})}
        if "Transfer-Encoding" not in all_headers:
            all_headers["Content-Length"] = str(len(data))
        lines += [f"{k}: {v}" for k, v in all_headers.items()]
        return ("\r\n".join(lines) + "\r\n\r\n").encode() + data

    async def response(self) -> tuple[int, dict[str, str], bytes]:
        head = await asyncio.wait_for(self.reader.readuntil(b"\r\n\r\n"), 10)
        lines = head.decode().split("\r\n")
        status = int(lines[0].split(" ")[1])
        headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
        if "content-length" in headers:
            return status, headers, await self.reader.readexactly(int(headers["content-length"]))
        return status, headers, b""

    async def chunk(self) -> bytes:
        size = int((await asyncio.wait_for(self.reader.readline(), 10)).strip(), 16)
        data = await self.reader.readexactly(size + 2)
        return data[:-2]

    def close(self) -> None:
        self.writer.close()


def _cm(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": name}}


async def test_a_keep_alive_connection_answers_in_order_then_streams_a_watch(plain: Cluster) -> None:
    conn = await Raw.open(plain)
    try:
        conn.writer.write(conn.request("POST", CM, _cm("ka-1")))
        status, headers, body = await conn.response()
        assert status == 201 and headers["content-type"] == "application/json"
        assert headers["cache-control"] == "no-cache, private" and headers["date"].endswith("GMT")
        created = json.loads(body)
        assert created["metadata"]["name"] == "ka-1" and created["data"] == {"k": "ka-1"}

        # Two requests in one write (pipelined): two answers, in the order asked.
        conn.writer.write(conn.request("POST", CM, _cm("ka-2")) + conn.request("GET", f"{CM}/ka-1"))
        first, second = await conn.response(), await conn.response()
        assert first[0] == 201 and json.loads(first[2])["metadata"]["name"] == "ka-2"
        assert second[0] == 200 and json.loads(second[2])["metadata"]["uid"] == created["metadata"]["uid"]

        # A watch on the same connection streams its events one by one as chunks.
        rv = json.loads(first[2])["metadata"]["resourceVersion"]
        conn.writer.write(conn.request("GET", f"{CM}?watch=true&resourceVersion={rv}"))
        status, headers, _ = await conn.response()
        assert status == 200 and headers["transfer-encoding"] == "chunked"
        await plain.admin("create", "configmaps", namespace="default", body=_cm("ka-3"))
        event = json.loads(await conn.chunk())
        assert event["type"] == "ADDED" and event["object"]["metadata"]["name"] == "ka-3"
    finally:
        conn.close()


async def test_events_already_queued_go_out_in_one_chunk_in_order(plain: Cluster) -> None:
    # A watch from an earlier revision finds its replay queued: upstream flushes once its channel is
    # empty, so the five events arrive as one write, in revision order.
    listed = await plain.admin("list", "configmaps", namespace="default")
    for i in range(5):
        await plain.admin("create", "configmaps", namespace="default", body=_cm(f"burst-{i}"))
    conn = await Raw.open(plain)
    try:
        conn.writer.write(conn.request("GET", f"{CM}?watch=true&resourceVersion={listed['metadata']['resourceVersion']}"))
        assert (await conn.response())[0] == 200
        events = [json.loads(line) for line in (await conn.chunk()).splitlines()]
        assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == \
            [("ADDED", f"burst-{i}") for i in range(5)]
    finally:
        conn.close()


async def test_a_request_arriving_in_pieces_is_answered_once_whole(plain: Cluster) -> None:
    conn = await Raw.open(plain)
    try:
        data = conn.request("POST", CM, _cm("pieces"))
        for i in range(0, len(data), 7):
            conn.writer.write(data[i:i + 7])
            await conn.writer.drain()
            await asyncio.sleep(0)
        status, _, body = await conn.response()
        assert status == 201 and json.loads(body)["metadata"]["name"] == "pieces"
    finally:
        conn.close()


async def test_connection_close_is_honoured(plain: Cluster) -> None:
    conn = await Raw.open(plain)
    try:
        conn.writer.write(conn.request("GET", f"{CM}/missing", headers={"Connection": "close"}))
        status, headers, body = await conn.response()
        assert status == 404 and json.loads(body)["reason"] == "NotFound"
        assert headers["connection"] == "close"
        assert await asyncio.wait_for(conn.reader.read(), 10) == b""
    finally:
        conn.close()


async def test_chunked_bodies_and_malformed_requests_are_still_understood(plain: Cluster) -> None:
    conn = await Raw.open(plain)
    try:
        body = json.dumps(_cm("chunked")).encode()
        chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
        conn.writer.write(conn.request("POST", CM, chunked, headers={"Transfer-Encoding": "chunked"}))
        status, _, answer = await conn.response()
        assert status == 201 and json.loads(answer)["metadata"]["name"] == "chunked"
    finally:
        conn.close()
    conn = await Raw.open(plain)
    try:
        conn.writer.write(b"NOT-HTTP\r\n\r\n")
        status, _, _ = await conn.response()
        assert status == 400
    finally:
        conn.close()


async def test_stop_closes_idle_keep_alive_connections(tmp_path: Path) -> None:
    c = await start_cluster(tmp_path, tls=False)
    conn = await Raw.open(c)
    try:
        conn.writer.write(conn.request("GET", f"{CM}"))
        status, _, body = await conn.response()
        assert status == 200 and json.loads(body)["kind"] == "ConfigMapList"
        await c.front.stop()
        assert await asyncio.wait_for(conn.reader.read(), 10) == b""
    finally:
        conn.close()
        await c.api.stop()
        await c.api.kv.close()


async def test_idle_keep_alive_connections_close_after_the_limit(tmp_path: Path) -> None:
    c = await start_cluster(tmp_path, tls=False)
    await c.front.stop()
    c.front = HTTPFront(c.api, port=0, tls=False, data_dir=tmp_path / "data", clock=c.clock, keepalive_timeout=0.2)
    await c.front.start()
    conn = await Raw.open(c)
    try:
        conn.writer.write(conn.request("GET", CM))
        status, _, _ = await conn.response()
        assert status == 200
        # A real-time network limit (as aiohttp's keep-alive), not simulated time: the server hangs up.
        assert await asyncio.wait_for(conn.reader.read(), 10) == b""
    finally:
        conn.close()
        await stop_cluster(c)


async def test_a_client_flooding_behind_a_slow_answer_is_paused_until_it_is_answered() -> None:
    release = asyncio.Event()
    connections: set[Connection] = set()

    async def serve(view: Any, body: bytes) -> Reply:
        await release.wait()
        return Reply(200, b'{"kind":"Status"}')

    aiohttp_server = web.Server(lambda request: web.Response(status=204))
    server = await asyncio.get_running_loop().create_server(
        lambda: Connection(serve, aiohttp_server, connections, 1024), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(b"GET /version HTTP/1.1\r\nHost: x\r\n\r\n" + b"x" * 200_000)
        for _ in range(1000):
            if any(c._reading_paused for c in connections):
                break
            await asyncio.sleep(0.001)
        assert any(c._reading_paused for c in connections)
        release.set()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        assert head.startswith(b"HTTP/1.1 200 OK\r\n")
        # Reading resumed: the rest (not HTTP) reaches aiohttp, which answers it with 400.
        rest = await asyncio.wait_for(reader.read(), 10)
        assert b"400" in rest.split(b"\r\n", 1)[0]
    finally:
        writer.close()
        server.close()
