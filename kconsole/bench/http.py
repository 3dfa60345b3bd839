"""``kconsole bench http``: pod creates/s and latency over HTTP(S), and a 10,000-pod Table list.

The server (RevisionLog + APIServer + HTTPFront on 127.0.0.1:0) runs in this process; the load comes
from a child process (``python -m kconsole.bench.http --client ...``) with ``--concurrency`` keep-alive
connections, so client and server each get a core, as kubectl and an apiserver would.
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

from kconsole.bench.common import percentile, under_gc_policy

TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--concurrency", type=int, default=64, help="concurrent HTTP connections (default 64)")
    p.add_argument("--creates", type=int, default=10_000, help="pods to create (default 10,000)")
    p.add_argument("--insecure-http", action="store_true", help="plain HTTP instead of HTTPS")
    p.add_argument("--synchronous", default="FULL", choices=("FULL", "NORMAL"),
                   help="store durability: FULL fsyncs every commit (default), NORMAL survives kill -9 only")
    p.add_argument("--default-gc", action="store_true",
                   help="keep CPython's collector settings instead of the serving policy (kconsole.api.gcpolicy)")


def _pod(i: int) -> bytes:
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"bench-{i}", "labels": {"app": "b"}},
                       "spec": {"containers": [{"name": "c", "image": "busybox"}]}}).encode()


async def _client(url: str, token: str, ca: str | None, creates: int, concurrency: int) -> dict[str, Any]:
    import aiohttp

    ctx = ssl.create_default_context(cafile=ca) if ca else None
    latencies: list[float] = []
    counter = iter(range(creates))
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    connector = aiohttp.TCPConnector(limit=concurrency, ssl=ctx if ctx else False)
    async with aiohttp.ClientSession(url, connector=connector, headers=headers) as session:
        async def worker() -> None:
            for i in counter:
                body = _pod(i)
                start = time.perf_counter()
                async with session.post("/api/v1/namespaces/default/pods", data=body) as resp:
                    await resp.read()
                    if resp.status != 201:
                        raise RuntimeError(f"create failed: {resp.status} {await resp.text()}")
                latencies.append(time.perf_counter() - start)

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
    from kconsole.store.revlog import RevisionLog

    tls = not args.insecure_http
    with tempfile.TemporaryDirectory(prefix="kconsole-bench-http-") as tmp:
        clock = RealClock()
        kv = await RevisionLog.open(Path(tmp) / "store.db", clock=clock, synchronous=args.synchronous)
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
        "synchronous": args.synchronous,
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
