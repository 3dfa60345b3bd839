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
import uuid
from pathlib import Path
from typing import Any

from kconsole.api.server import APIServer
from kconsole.api.types import Credentials, Request, Response, UserInfo
from kconsole.bench.common import add_gc_argument, add_real_etcd_arguments, add_store_arguments, beside, \
    open_bench_store, open_real_bench_store, percentile, real_etcd_figures, store_mode, under_gc_policy, \
    wants_real_etcd
from kconsole.clock import RealClock


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--concurrency", type=int, default=64, help="concurrent in-process clients (default 64)")
    p.add_argument("--creates", type=int, default=20_000, help="pods to create in phase 1 (default 20,000)")
    p.add_argument("--watchers", type=int, default=100, help="concurrent watchers in phase 2 (default 100)")
    p.add_argument("--fanout-writes", type=int, default=1_000, help="pods created one by one in phase 2")
    add_store_arguments(p)
    p.add_argument("--data-dir", default=None, help="where the store's files go (default: a temporary folder)")
    add_gc_argument(p)
    add_real_etcd_arguments(p)


def _pod(name: str, i: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "bench", "shard": str(i % 16)}},
        "spec": {"containers": [{"name": "app", "image": "nginx:1.27",
                                 "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]},
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    """The embedded store's figures; with ``--etcd-servers``/``--etcd local``, real etcd's beside them
    (the same run, the same flags, one after the other)."""
    embedded = await under_gc_policy(args, _run)
    if not wants_real_etcd(args):
        return embedded
    real = await under_gc_policy(args, lambda a: _run(a, real=True))
    return beside(embedded, real, ("writes_per_s", "p50_ms", "p99_ms", "watch_fanout_p50_ms"))


async def _run(args: argparse.Namespace, real: bool = False) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="kconsole-bench-api-") as tmp:
        folder = Path(args.data_dir) if args.data_dir else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        clock = RealClock()
        if real:
            kv = await open_real_bench_store(args, folder / "api-bench-real-etcd", clock)
            store = real_etcd_figures(kv)
        else:
            kv = await open_bench_store(args, folder / "api-bench-etcd", clock)
            store = store_mode(args).figures()
        api = APIServer(kv, clock, seed=1)
        await api.start()
        # A shared etcd may hold an earlier run's pods: this run's namespaces are its own.
        suffix = f"-{uuid.uuid4().hex[:8]}" if real else ""
        try:
            creds = Credentials(token=api.tokens.issue(UserInfo("bench-admin", ("system:masters",))))
            for ns in ("bench", "fanout"):
                await api.handle(Request("create", "namespaces", body={"metadata": {"name": ns + suffix}},
                                         credentials=creds))
            writes_per_s, latencies = await _creates(api, creds, args.concurrency, args.creates, "bench" + suffix)
            fanout = await _fanout(api, creds, args.watchers, args.fanout_writes, "fanout" + suffix)
        finally:
            await api.stop()
            await kv.close()
    return {
        "bench": "api",
        **store,
        "concurrency": args.concurrency,
        "creates": args.creates,
        "writes_per_s": round(writes_per_s),
        "p50_ms": round(statistics.median(latencies) * 1000, 2),
        "p99_ms": round(percentile(latencies, 0.99) * 1000, 2),
        "watchers": args.watchers,
        "watch_fanout_p50_ms": round(percentile(fanout, 0.50) * 1000, 2),
        "watch_fanout_p99_ms": round(percentile(fanout, 0.99) * 1000, 2),
    }


async def _creates(api: APIServer, creds: Credentials, concurrency: int, total: int,
                   namespace: str = "bench") -> tuple[float, list[float]]:
    latencies: list[float] = []
    next_index = 0

    async def client() -> None:
        nonlocal next_index
        while next_index < total:
            i = next_index
            next_index += 1
            req = Request("create", "pods", namespace=namespace, body=_pod(f"pod-{i:06d}", i), credentials=creds)
            t0 = time.perf_counter()
            resp = await api.handle(req)
            latencies.append(time.perf_counter() - t0)
            if not isinstance(resp, Response) or resp.code != 201:
                raise RuntimeError(f"create failed: {getattr(resp, 'body', resp)}")

    start = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(concurrency)))
    elapsed = time.perf_counter() - start
    return total / elapsed, latencies


async def _fanout(api: APIServer, creds: Credentials, watchers: int, writes: int,
                  namespace: str = "fanout") -> list[float]:
    issued: dict[str, float] = {}
    delays: list[float] = []
    done = asyncio.Event()
    remaining = watchers * writes
    streams = []
    for _ in range(watchers):
        stream = await api.handle(Request("watch", "pods", namespace=namespace, resource_version="0",
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
        resp = await api.handle(Request("create", "pods", namespace=namespace, body=_pod(name, i), credentials=creds))
        if not isinstance(resp, Response) or resp.code != 201:
            raise RuntimeError(f"create failed: {getattr(resp, 'body', resp)}")
    await asyncio.wait_for(done.wait(), 60)
    for s in streams:
        await s.close()
    await asyncio.gather(*tasks, return_exceptions=True)
    return delays
