"""``kconsole bench http``: pod creates/s and latency over HTTP(S), and a 10,000-pod Table list.

The server (the etcd members ``kconsole serve`` runs, APIServer, HTTPFront on 127.0.0.1:0; the store's
mode is named in the figures, ``--members``/``--no-sync`` pick another) runs in this process, over HTTPS with
its generated CA and serving certificate unless ``--insecure-http`` (what users get by default); the load
comes from a child process (``python -m kconsole.bench.http --client ...``) with ``--concurrency``
keep-alive connections, so client and server each get a core, as kubectl and an apiserver would. The
client authenticates with the admin bearer token, as the generated kubeconfig does.
Targets: >= 2,000 creates/s, p99 <= 50 ms at 64 connections; the Table list <= 1 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import ssl
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from kconsole.bench.common import add_gc_argument, add_store_arguments, open_bench_store, percentile, store_mode, \
    under_gc_policy

TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--concurrency", type=int, default=64, help="concurrent HTTP connections (default 64)")
    p.add_argument("--creates", type=int, default=10_000, help="pods to create (default 10,000)")
    p.add_argument("--insecure-http", action="store_true", help="plain HTTP instead of HTTPS")
    add_store_arguments(p)
    add_gc_argument(p)


def _pod(i: int) -> bytes:
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"bench-{i}", "labels": {"app": "b"}},
                       "spec": {"containers": [{"name": "c", "image": "busybox"}]}}).encode()


class _Connection(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection of the load generator: one request in flight at a time.

    Written on asyncio's transport directly (the request's head and body in one write, as Go's
    net/http client sends a small request; the response read by its Content-Length) so the load
    generator spends little CPU per request and the figure is the server's, not the client's.
    """

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.answer: asyncio.Future[tuple[int, bytes]] | None = None
        self.head_end = -1
        self.status = 0
        self.total = -1

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def send(self, request: bytes) -> asyncio.Future[tuple[int, bytes]]:
        assert self.transport is not None
        self.answer = asyncio.get_running_loop().create_future()
        self.transport.write(request)
        return self.answer

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if self.total < 0:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(self.buffer[:end]).decode("latin-1").split("\r\n")
            self.status = int(head[0].split(" ", 2)[1])
            length = next((int(line.split(":", 1)[1]) for line in head[1:]
                           if line[:15].lower() == "content-length:"), None)
            if length is None:
                self._fail(RuntimeError(f"response without Content-Length: {head!r}"))
                return
            self.head_end = end + 4
            self.total = self.head_end + length
        if len(self.buffer) >= self.total:
            body = bytes(self.buffer[self.head_end:self.total])
            del self.buffer[:self.total]
            self.total = -1
            if self.answer is not None and not self.answer.done():
                self.answer.set_result((self.status, body))

    def _fail(self, err: Exception) -> None:
        if self.answer is not None and not self.answer.done():
            self.answer.set_exception(err)

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(ConnectionError(f"the server closed the connection: {exc}"))


async def _client(url: str, token: str, ca: str | None, creates: int, concurrency: int) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    parsed = urlsplit(url)
    host, port = parsed.hostname or "127.0.0.1", parsed.port or (443 if parsed.scheme == "https" else 80)
    ctx = ssl.create_default_context(cafile=ca) if ca else None
    head = (f"POST /api/v1/namespaces/default/pods HTTP/1.1\r\nHost: {parsed.netloc}\r\n"
            f"User-Agent: kconsole-bench-http\r\nAccept: application/json, */*\r\n"
            f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n").encode()
    latencies: list[float] = []
    counter = iter(range(creates))

    async def worker() -> None:
        _, conn = await loop.create_connection(_Connection, host, port, ssl=ctx,
                                               server_hostname=host if ctx else None)
        try:
            for i in counter:
                body = _pod(i)
                request = b"%sContent-Length: %d\r\n\r\n%s" % (head, len(body), body)
                start = time.perf_counter()
                status, answer = await conn.send(request)
                if status != 201:
                    raise RuntimeError(f"create failed: {status} {answer.decode(errors='replace')}")
                latencies.append(time.perf_counter() - start)
        finally:
            if conn.transport is not None:
                conn.transport.close()

    began = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed = time.perf_counter() - began
    latencies.sort()
    return {"elapsed": elapsed, "p50": percentile(latencies, 0.50), "p99": percentile(latencies, 0.99)}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    return await under_gc_policy(args, _run)


async def _run(args: argparse.Namespace) -> dict[str, Any]:
    import aiohttp

    from kconsole.api.server import APIServer
    from kconsole.clock import RealClock
    from kconsole.http.server import HTTPFront
    tls = not args.insecure_http
    with tempfile.TemporaryDirectory(prefix="kconsole-bench-http-") as tmp:
        clock = RealClock()
        kv = await open_bench_store(args, Path(tmp) / "etcd", clock)
        api = APIServer(kv, clock, seed=1)
        await api.start()
        front = HTTPFront(api, port=0, tls=tls, data_dir=Path(tmp) / "data", clock=clock)
        await front.start()
        ca = str(front.data_dir / "ca.crt") if tls else ""
        try:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "kconsole.bench.http", "--client", front.url, front.admin_token, ca or "-",
                str(args.creates), str(args.concurrency), stdout=asyncio.subprocess.PIPE)
            out, _ = await proc.communicate()
            if proc.returncode != 0:
                raise RuntimeError("the load generator failed")
            load = json.loads(out)
            ctx = ssl.create_default_context(cafile=ca) if tls else False
            async with aiohttp.ClientSession(front.url, connector=aiohttp.TCPConnector(ssl=ctx),
                                             headers={"Authorization": f"Bearer {front.admin_token}"}) as session:
                began = time.perf_counter()
                async with session.get("/api/v1/namespaces/default/pods", headers={"Accept": TABLE_ACCEPT}) as resp:
                    table = await resp.json()
                table_s = time.perf_counter() - began
        finally:
            await front.stop()
            await api.stop()
            await kv.close()
    return {
        "bench": "http",
        "tls": tls,
        **store_mode(args).figures(),
        "concurrency": args.concurrency,
        "creates": args.creates,
        "writes_per_s": round(args.creates / load["elapsed"], 1),
        "p50_ms": round(load["p50"] * 1000, 2),
        "p99_ms": round(load["p99"] * 1000, 2),
        "table_list_pods": len(table.get("rows", [])),
        "table_list_s": round(table_s, 3),
    }


if __name__ == "__main__" and len(sys.argv) == 7 and sys.argv[1] == "--client":
    _, _, url, token, ca, creates, concurrency = sys.argv
    result = asyncio.run(_client(url, token, None if ca == "-" else ca, int(creates), int(concurrency)))
    print(json.dumps(result))
