"""``kconsole bench api``: pod creates/s through the full pipeline, and watch fan-out latency.

Phase 1: ``--concurrency`` in-process clients create ``--creates`` pods through
``APIServer.handle`` (authentication, RBAC, admission, validation, storage on the etcd members
``kconsole serve`` runs: three, synced; ``--members``/``--no-sync`` pick another mode, named in the
figures).
Phase 2: ``--watchers`` watches on one namespace; pods are created one at a time and the latency
from issuing each create to every watcher receiving its ADDED event is recorded. Wall clock
throughout (the control plane runs on a RealClock here).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from kconsole.api.server import APIServer
from kconsole.api.types import Credentials, Request, Response, UserInfo
from kconsole.bench.common import add_gc_argument, add_store_arguments, open_bench_store, percentile, store_mode, \
    under_gc_policy
from kconsole.clock import RealClock


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--concurrency", type=int, default=64, help="concurrent in-process clients (default 64)")
    p.add_argument("--creates", type=int, default=20_000, help="pods to create in phase 1 (default 20,000)")
    p.add_argument("--watchers", type=int, default=100, help="concurrent watchers in phase 2 (default 100)")
    p.add_argument("--fanout-writes", type=int, default=1_000, help="pods created one by one in phase 2")
    add_store_arguments(p)
    p.add_argument("--data-dir", default=None, help="where the store's files go (default: a temporary folder)")
    add_gc_argument(p)


def _pod(name: str, i: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "bench", "shard": str(i % 16)}},
        "spec": {"containers": [{"name": "app", "image": "nginx:1.27",
                                 "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]},
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    return await under_gc_policy(args, _run)


async def _run(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="kconsole-bench-api-") as tmp:
        folder = Path(args.data_dir) if args.data_dir else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        clock = RealClock()
        kv = await open_bench_store(args, folder / "api-bench-etcd", clock)
        api = APIServer(kv, clock, seed=1)
        await api.start()
        try:
            creds = Credentials(token=api.tokens.issue(UserInfo("bench-admin", ("system:masters",))))
            for ns in ("bench", "fanout"):
                await api.handle(Request("create", "namespaces", body={"metadata": {"name": ns}}, credentials=creds))
            writes_per_s, latencies = await _creates(api, creds, args.concurrency, args.creates)
            fanout = await _fanout(api, creds, args.watchers, args.fanout_writes)
        finally:
            await api.stop()
            await kv.close()
    return {
        "bench": "api",
        **store_mode(args).figures(),
        "concurrency": args.concurrency,
        "creates": args.creates,
        "writes_per_s": round(writes_per_s),
        "p50_ms": round(statistics.median(latencies) * 1000, 2),
        "p99_ms": round(percentile(latencies, 0.99) * 1000, 2),
        "watchers": args.watchers,
        "watch_fanout_p50_ms": round(percentile(fanout, 0.50) * 1000, 2),
        "watch_fanout_p99_ms": round(percentile(fanout, 0.99) * 1000, 2),
    }


async def _creates(api: APIServer, creds: Credentials, concurrency: int, total: int) -> tuple[float, list[float]]:
    latencies: list[float] = []
    next_index = 0

    async def client() -> None:
        nonlocal next_index
        while next_index < total:
            i = next_index
            next_index += 1
            req = Request("create", "pods", namespace="bench", body=_pod(f"pod-{i:06d}", i), credentials=creds)
            t0 = time.perf_counter()
            resp = await api.handle(req)
            latencies.append(time.perf_counter() - t0)
            if not isinstance(resp, Response) or resp.code != 201:
                raise RuntimeError(f"create failed: {getattr(resp, 'body', resp)}")

    start = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(concurrency)))
    elapsed = time.perf_counter() - start
    return total / elapsed, latencies


async def _fanout(api: APIServer, creds: Credentials, watchers: int, writes: int) -> list[float]:
    issued: dict[str, float] = {}
    delays: list[float] = []
    done = asyncio.Event()
    remaining = watchers * writes
    streams = []
    for _ in range(watchers):
        stream = await api.handle(Request("watch", "pods", namespace="fanout", resource_version="0",
                                          credentials=creds))
        streams.append(stream)

    async def consume(stream: Any) -> None:
        nonlocal remaining
        async for event in stream:
            if event["type"] != "ADDED":
                continue
            delays.append(time.perf_counter() - issued[event["object"]["metadata"]["name"]])
            remaining -= 1
            if remaining == 0:
                done.set()

    tasks = [asyncio.ensure_future(consume(s)) for s in streams]
    for i in range(writes):
        name = f"fan-{i:05d}"
        issued[name] = time.perf_counter()
        resp = await api.handle(Request("create", "pods", namespace="fanout", body=_pod(name, i), credentials=creds))
        if not isinstance(resp, Response) or resp.code != 201:
            raise RuntimeError(f"create failed: {getattr(resp, 'body', resp)}")
    await asyncio.wait_for(done.wait(), 60)
    for s in streams:
        await s.close()
    await asyncio.gather(*tasks, return_exceptions=True)
    return delays
