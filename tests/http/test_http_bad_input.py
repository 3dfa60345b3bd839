"""Bad input never freezes or crashes the API: bodies from callers who do not authenticate are never
read, YAML alias bombs are refused before they expand, big bodies are decoded off the event loop,
slow or idle connections are closed, descriptors running out costs idle connections rather than the
service, and in-flight limits answer 429.

"The loop stays responsive" is measured in event-loop turns: a task counts the turns while the test
waits for ``/readyz`` sent beside the bad request; the answer must come within :data:`TURNS`."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from http_env import Cluster, start_cluster, stop_cluster

from kconsole.api.types import UserInfo
from kconsole.http.server import HTTPFront

pytestmark = pytest.mark.asyncio(loop_scope="module")

CM = "/api/v1/namespaces/default/configmaps"
#: Loop turns within which /readyz must be answered while a bad request is being dealt with.
TURNS = 50

#: The 1,054-byte ConfigMap of the report: nine levels of nine aliases (9^9 values once expanded).
BOMB = "\n".join(["apiVersion: v1", "kind: ConfigMap", "metadata:", "  name: lol", "data:",
                  '  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
                 + [f"  {c}: &{c} [{','.join([f'*{p}'] * 9)}]" for p, c in zip("abcdefgh", "bcdefghi")]) + "\n"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def plain(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Cluster]:
    c = await start_cluster(tmp_path_factory.mktemp("bad-input"), tls=False)
    yield c
    await stop_cluster(c)


@pytest_asyncio.fixture(loop_scope="module")
async def http(plain: Cluster) -> AsyncIterator[aiohttp.ClientSession]:
    headers = {"Authorization": f"Bearer {plain.front.admin_token}"}
    async with aiohttp.ClientSession(plain.front.url, headers=headers) as session:
        yield session


class Turns:
    """Counts event-loop turns: a task that yields once per turn."""

    def __init__(self) -> None:
        self.count = 0
        self._task = asyncio.get_running_loop().create_task(self._spin())

    async def _spin(self) -> None:
        while True:
            self.count += 1
            await asyncio.sleep(0)

    def stop(self) -> None:
        self._task.cancel()


async def readyz_turns(url: str) -> int:
    """How many loop turns /readyz took to answer ``ok``, on a connection of its own."""
    turns = Turns()
    try:
        async with aiohttp.ClientSession(url) as fresh:
            start = turns.count
            async with fresh.get("/readyz") as r:
                assert r.status == 200 and await r.text() == "ok"
            return turns.count - start
    finally:
        turns.stop()


async def post(session: aiohttp.ClientSession, path: str, body: bytes, content_type: str,
               headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    async with session.post(path, data=body, headers={"Content-Type": content_type, **(headers or {})}) as r:
        return r.status, await r.json()


async def test_a_body_from_a_caller_without_a_token_is_never_read_or_parsed(plain: Cluster) -> None:
    """3 MiB of unterminated YAML flow sequence: parsed, it would be a 400 after many seconds of the
    event loop; refused first, it is a 401 and /readyz answers in a few turns meanwhile."""
    body = b"[" + b"1," * (1_500_000 - 2)
    async with aiohttp.ClientSession(plain.front.url) as anonymous:
        bad = asyncio.ensure_future(post(anonymous, CM, body, "application/yaml"))
        turns = await readyz_turns(plain.front.url)
        code, status = await asyncio.wait_for(bad, 60)
        for content_type in ("application/json", "application/apply-patch+yaml"):
            async with anonymous.patch(f"{CM}/x", data=b"{not even json", headers={"Content-Type": content_type}) as r:
                assert r.status == 401
    assert code == 401 and status["reason"] == "Unauthorized"
    assert turns <= TURNS
    assert plain.api.audit_recent(5)[-1].code == 401, "the refusal is audited as any 401"


async def test_a_big_yaml_body_is_decoded_off_the_loop(plain: Cluster, http: aiohttp.ClientSession) -> None:
    """Authenticated, the same flow sequence, well-formed, takes the decoder seconds: on a worker
    thread, /readyz is answered while it runs."""
    body = b"[" + b"1," * 1_400_000 + b"1]\n"
    assert len(body) < 3 * 1024 * 1024
    big = asyncio.ensure_future(post(http, CM, body, "application/yaml"))
    turns = await readyz_turns(plain.front.url)
    assert not big.done(), "the big body was answered before /readyz"
    code, status = await asyncio.wait_for(big, 120)
    assert turns <= TURNS
    assert code == 400 and "must be an object" in status["message"], status


async def test_yaml_alias_bombs_are_refused_before_they_expand(plain: Cluster, http: aiohttp.ClientSession) -> None:
    bad = asyncio.ensure_future(post(http, CM, BOMB.encode(), "application/yaml"))
    turns = await readyz_turns(plain.front.url)
    code, status = await asyncio.wait_for(bad, 60)
    assert code == 400 and "excessive aliasing" in status["message"], status
    assert turns <= TURNS
    # The same through server-side apply, whose patch is YAML too.
    await plain.admin("create", "configmaps", namespace="default",
                      body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "lol"}})
    async with http.patch(f"{CM}/lol", params={"fieldManager": "bomb"}, data=BOMB.encode(),
                          headers={"Content-Type": "application/apply-patch+yaml"}) as r:
        assert r.status == 400 and "excessive aliasing" in (await r.json())["message"]
    # A bomb just past go-yaml's allowed share (old kconsole expanded and stored it: 201).
    small = "\n".join(["apiVersion: v1", "kind: ConfigMap", "metadata: {name: small}",
                       "a: &a [x, x, x, x, x, x, x, x, x, x]", f"b: &b [{', '.join(['*a'] * 10)}]",
                       f"c: &c [{', '.join(['*b'] * 10)}]", f"d: [{', '.join(['*c'] * 50)}]"]) + "\n"
    code, status = await post(http, CM, small.encode(), "application/yaml")
    assert code == 400 and "excessive aliasing" in status["message"], status
    # Few aliases of big values: within the share, past the body limit once expanded -> 413.
    wide = "\n".join(["apiVersion: v1", "kind: ConfigMap", "metadata: {name: wide}", "data:",
                      f"  a: &a {'y' * 100_000}"] + [f"  k{i}: *a" for i in range(40)]) + "\n"
    code, status = await post(http, CM, wide.encode(), "application/yaml")
    assert code == 413 and status["reason"] == "RequestEntityTooLarge", status
    # Modest aliasing is ordinary YAML, and aliased values are copies, not one shared map.
    shared = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared, labels: &l {app: web}, "
              "annotations: *l}\ndata: *l\n")
    code, created = await post(http, CM, shared.encode(), "application/yaml")
    assert code == 201 and created["data"] == {"app": "web"} == created["metadata"]["labels"]


async def test_undecodable_json_gets_upstreams_answer(http: aiohttp.ClientSession) -> None:
    deep = ('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"x":' + "[" * 990 + "]" * 990
            + "}").encode()
    code, status = await post(http, CM, deep, "application/json")
    assert code == 400 and "deeper than" in status["message"]
    surrogate = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"sur"},"data":{"a":"x\\ud800y"}}'
    code, created = await post(http, CM, surrogate, "application/json")
    assert code == 201 and created["data"]["a"] == "x\ufffdy"
    pair = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"pair"},"data":{"a":"\\ud83d\\ude00"}}'
    code, created = await post(http, CM, pair, "application/json")
    assert code == 201 and created["data"]["a"] == "\U0001F600"


async def test_wrong_json_types_are_4xx_not_500(plain: Cluster, http: aiohttp.ClientSession) -> None:
    await plain.admin("create", "configmaps", namespace="default",
                      body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "typed"}})
    for field, value in (("metadata", "x"), ("data", "x"), ("binaryData", [1])):
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "t"}, field: value}
        code, status = await post(http, CM, json.dumps(body).encode(), "application/json")
        assert code == 400 and "cannot unmarshal" in status["message"], status
    patches = [("application/merge-patch+json", {"metadata": {"managedFields": "x"}}),
               ("application/strategic-merge-patch+json", {"data": "x"}),
               ("application/json-patch+json", [{"op": "replace", "path": "/metadata", "value": "x"}])]
    for content_type, patch in patches:
        async with http.patch(f"{CM}/typed", json=patch, headers={"Content-Type": content_type}) as r:
            status = await r.json()
            assert r.status == 422 and status["details"]["causes"][0]["field"] == "patch", status
    async with http.patch(f"{CM}/typed", params={"fieldManager": "t"}, headers={"Content-Type": "application/apply-patch+yaml"},
                          data=b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: typed}\nbinaryData: x\n") as r:
        assert r.status == 400 and "cannot unmarshal" in (await r.json())["message"]
    for options in ({"gracePeriodSeconds": "abc"}, {"preconditions": [1, 2]}):
        async with http.delete(f"{CM}/typed", json=options) as r:
            assert r.status == 400 and "cannot unmarshal" in (await r.json())["message"]
    assert (await plain.admin("get", "configmaps", namespace="default", name="typed"))["metadata"]["name"] == "typed"


async def _raw(front: HTTPFront) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    host, port = front.url.removeprefix("http://").split(":")
    return await asyncio.open_connection(host, int(port))


async def test_slow_heads_slow_bodies_and_silent_connections_are_closed(tmp_path: Path) -> None:
    """Real-time network limits (as Go's http.Server), shortened here: the server hangs up."""
    c = await start_cluster(tmp_path, tls=False)
    await c.front.stop()
    c.front = HTTPFront(c.api, port=0, tls=False, data_dir=tmp_path / "data", clock=c.clock,
                        header_timeout=0.2, body_timeout=0.2, keepalive_timeout=30)
    await c.front.start()
    token = c.front.admin_token
    try:
        silent = await _raw(c.front)
        slow_head = await _raw(c.front)
        slow_head[1].write(b"GET /api HTTP/1.1\r\nHost: x\r\n")
        slow_body = await _raw(c.front)
        slow_body[1].write(f"POST {CM} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
                           f"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"kind\"".encode())
        chunked = await _raw(c.front)
        chunked[1].write(f"POST {CM} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
                         f"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{{\"kin\r\n".encode())
        for reader, _ in (silent, slow_head, slow_body):
            assert await asyncio.wait_for(reader.read(), 10) == b""
        answer = await asyncio.wait_for(chunked[0].read(), 10)
        assert answer == b"" or answer.startswith(b"HTTP/1.1 408"), answer[:80]
        for _, writer in (silent, slow_head, slow_body, chunked):
            writer.close()
        async with aiohttp.ClientSession(c.front.url, headers={"Authorization": f"Bearer {token}"}) as http:
            async with http.get(CM) as r:
                assert r.status == 200
    finally:
        await stop_cluster(c)


async def test_in_flight_limits_answer_429_and_spare_masters_and_watches(tmp_path: Path) -> None:
    c = await start_cluster(tmp_path, tls=False)
    await c.front.stop()
    c.front = HTTPFront(c.api, port=0, tls=False, data_dir=tmp_path / "data", clock=c.clock,
                        max_requests_inflight=1, max_mutating_requests_inflight=1)
    await c.front.start()
    admin = c.front.admin_token
    user = c.api.tokens.issue(UserInfo("someone"))
    reader, writer = await _raw(c.front)
    try:
        # A mutating request held open by a body that has not all arrived (chunked: aiohttp reads it).
        writer.write(f"POST {CM} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {admin}\r\n"
                     f"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".encode())
        await writer.drain()
        for _ in range(200):
            if c.front.inflight["mutating"] == 1:
                break
            await asyncio.sleep(0)
        assert c.front.inflight["mutating"] == 1
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "second"}}
        async with aiohttp.ClientSession(c.front.url, headers={"Authorization": f"Bearer {user}"}) as http:
            async with http.post(CM, json=body) as r:
                status = await r.json()
                assert r.status == 429 and r.headers["Retry-After"] == "1" and status["reason"] == "TooManyRequests"
                assert status["details"]["retryAfterSeconds"] == 1
            async with http.get(CM, params={"watch": "true", "timeoutSeconds": "1"}) as r:
                assert r.status in (200, 403)  # long-running: not counted, not refused for the limit
        async with aiohttp.ClientSession(c.front.url, headers={"Authorization": f"Bearer {admin}"}) as http:
            async with http.post(CM, json=body) as r:
                assert r.status == 201, "system:masters is exempt, as upstream"
        held = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "held"}}).encode()
        writer.write(f"{len(held):x}\r\n".encode() + held + b"\r\n0\r\n\r\n")
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        assert head.startswith(b"HTTP/1.1 201")
        assert c.front.inflight == {"readOnly": 0, "mutating": 0}
    finally:
        writer.close()
        await stop_cluster(c)


async def _fd_limited_server(tmp_path: Path, soft: int, max_connections: str) -> tuple[Any, dict[str, Any]]:
    script = Path(__file__).with_name("fd_limit_server.py")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path.cwd()), os.environ.get("PYTHONPATH", "")])}
    proc = await asyncio.create_subprocess_exec(sys.executable, str(script), str(tmp_path), str(soft), max_connections,
                                                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE, env=env)
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), 60)
    assert line, (await proc.stderr.read()).decode() if proc.stderr else "no output"
    return proc, json.loads(line)


@pytest.mark.parametrize("max_connections", ["auto", "5000"])
async def test_idle_connections_past_the_descriptor_limit_cost_only_idle_connections(
        tmp_path: Path, max_connections: str) -> None:
    """A server at a 256-descriptor limit, 400 idle connections to it, then real work. ``auto``: the
    cap (the limit less a reserve) closes the longest-idle connection for each new one; ``5000``: a
    cap above the limit, so accept() fails with EMFILE: it backs off, frees an idle connection, and
    logs a line at most every 10 s (asyncio's own loop logged each of its 1,024 retries per turn)."""
    proc, info = await _fd_limited_server(tmp_path, 256, max_connections)
    idle: list[asyncio.StreamWriter] = []
    try:
        for _ in range(400):
            _, writer = await asyncio.open_connection("127.0.0.1", info["port"])
            idle.append(writer)
        headers = {"Authorization": f"Bearer {info['token']}"}
        async with aiohttp.ClientSession(f"http://127.0.0.1:{info['port']}", headers=headers,
                                         timeout=aiohttp.ClientTimeout(total=60)) as http:
            for i in range(20):
                body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"}}
                async with http.post(CM, json=body) as r:
                    assert r.status == 201
            async with http.get(CM) as r:
                assert r.status == 200 and len((await r.json())["items"]) >= 20
            async with http.get("/readyz") as r:
                assert r.status == 200
    finally:
        for writer in idle:
            writer.close()
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        proc.stdin.close()
        counters = json.loads(await asyncio.wait_for(proc.stdout.readline(), 60))
        log = (await asyncio.wait_for(proc.stderr.read(), 60)).decode()
        await asyncio.wait_for(proc.wait(), 60)
    assert counters["evicted"] > 0
    if max_connections == "auto":
        assert info["max"] == 128 and counters["accept_failures"] == 0
    else:
        assert counters["accept_failures"] > 0
    failures_logged = [line for line in log.splitlines() if "accept failed" in line]
    assert len(failures_logged) <= 3 and len(log.splitlines()) < 20, log[-2000:]
