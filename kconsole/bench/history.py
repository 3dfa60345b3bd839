"""``kconsole bench history``: history reads at scale, and what the history costs on disk.

The store as ``kconsole serve`` opens it (three etcd members, synced, unless the flags say
otherwise), an API server over it on a real clock, ``--nodes`` Nodes and ``--pods`` Pods created
through the API, then ``--revisions`` writes (pod label patches through the API, 64 at a time), then
a compaction to the current revision as the API server's compactor would make (history kept by the
default settings). Measured through :class:`~kconsole.client.history.HistoryClient` as the
console's user, in wall milliseconds (p50/p95 over ``--samples`` reads each):

- ``story_open``: an object's story (:func:`kconsole.history.story.build`, what ``v`` and
  ``kconsole history`` show) for a random pod;
- ``step``: ``changes(r - 1, r)`` at a random kept revision: one revision, every resource (what the
  console's rewind reads to step);
- ``jump``: ``list_at("pods", r)`` at a random kept revision (what a jump reads), beside its anchor,
  the live list of the same pods (``list`` at the current revision), measured in the same run;
- ``jump_nodes``: ``list_at("nodes", r)``;
- ``rewind_*`` (unless ``--no-console``): the console over the same API server, headless, jumps
  back and steps (:mod:`kconsole.bench.rewind`): a step key to screen, p50/p95 (target: p95
  <= 300 ms), the jump, the Event index built from scratch.

The cost: pages in use on the leader's member file per written revision during the churn (rows,
index and time marks), and from it the MB per hour of history at 200 writes/s, per member and for
the cluster's members together.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from kconsole.api.server import APIServer
from kconsole.api.types import UserInfo
from kconsole.bench.common import add_gc_argument, add_store_arguments, open_bench_store, percentile, store_mode, \
    under_gc_policy
from kconsole.client.client import Client
from kconsole.client.history import HistoryClient
from kconsole.clock import RealClock
from kconsole.history.story import build

#: Writes per second the cost is stated at.
COST_RATE = 200


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--nodes", type=int, default=1000, help="Node objects (default 1000)")
    p.add_argument("--pods", type=int, default=10000, help="Pods (default 10000)")
    p.add_argument("--revisions", type=int, default=500_000,
                   help="revisions of history written after them (default 500,000)")
    p.add_argument("--samples", type=int, default=30, help="reads measured of each kind (default 30)")
    p.add_argument("--concurrency", type=int, default=64, help="concurrent writers (default 64)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--data-dir", default=None, help="where the store's files go (default: a temporary folder)")
    p.add_argument("--no-console", action="store_true", help="skip the console's rewind steps")
    add_store_arguments(p)
    add_gc_argument(p)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    return await under_gc_policy(args, _run)


def _ms(values: list[float], q: float) -> float:
    return round(percentile(values, q) * 1000, 1)


async def _bounded(make: Any, total: int, limit: int) -> None:
    """``make(i)`` for i in range(total), ``limit`` at a time."""
    counter = iter(range(total))

    async def worker() -> None:
        for i in counter:
            await make(i)

    await asyncio.gather(*(worker() for _ in range(max(1, limit))))


async def _timed(samples: int, read: Any) -> list[float]:
    out = []
    for i in range(samples):
        t0 = time.perf_counter()
        await read(i)
        out.append(time.perf_counter() - t0)
    return out


async def _run(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="kconsole-bench-history-") as tmp:
        folder = Path(args.data_dir) if args.data_dir else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        clock = RealClock()
        kv = await open_bench_store(args, folder / "history-bench-etcd", clock)
        api = APIServer(kv, clock, seed=args.seed)
        await api.start()
        try:
            admin = Client(api, api.tokens.issue(UserInfo("bench-admin", ("system:masters",))), clock)
            console = Client(api, api.tokens.issue(UserInfo("system:kconsole-console", ("system:authenticated",))),
                             clock)
            t0 = time.perf_counter()
            nodes = [f"node-{i:04}" for i in range(args.nodes)]
            await _bounded(lambda i: admin.create({"apiVersion": "v1", "kind": "Node", "metadata": {
                "name": nodes[i], "labels": {"kubernetes.io/hostname": nodes[i]}}, "spec": {}}),
                args.nodes, args.concurrency)
            await _bounded(lambda i: admin.create({"apiVersion": "v1", "kind": "Pod", "metadata": {
                "name": f"pod-{i:05}", "namespace": "default", "labels": {"app": f"app-{i % 50}"}},
                "spec": {"nodeName": nodes[i % len(nodes)] if nodes else None,
                         "containers": [{"name": "c", "image": "nginx:1.27",
                                         "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}),
                args.pods, args.concurrency)
            populated = time.perf_counter() - t0
            before = (await kv.status()).db_size_in_use
            first = kv.revision
            t0 = time.perf_counter()
            await _bounded(lambda i: admin.patch("pods", f"pod-{i % args.pods:05}", {
                "metadata": {"labels": {"step": str(i)}}}, "default"), args.revisions, args.concurrency)
            churned = time.perf_counter() - t0
            current = kv.revision
            await kv.compact(current)  # every read below is below the compact revision, as after 5 minutes
            grown = (await kv.status()).db_size_in_use - before
            written = max(current - first, 1)

            history = HistoryClient(console)
            bounds = await history.bounds()
            kept = list(range(max(bounds.oldest, first), current + 1))
            story = await _timed(args.samples, lambda i: build(
                history, "pods", f"pod-{rng.randrange(args.pods):05}", kind="Pod", namespace="default"))
            step = await _timed(args.samples, lambda i: history.changes((r := rng.choice(kept)) - 1, r))
            anchor = await _timed(max(3, args.samples // 3), lambda i: console.list("pods", "default"))
            jump = await _timed(max(3, args.samples // 3), lambda i: history.list_at(
                "pods", rng.choice(kept), namespace="default"))
            jump_nodes = await _timed(max(3, args.samples // 3), lambda i: history.list_at("nodes", rng.choice(kept)))
            per_write = grown / written
            console_figures: dict[str, Any] = {}
            if not args.no_console:
                from kconsole.bench.rewind import console_steps_over_api

                console_figures = await console_steps_over_api(api, clock, pods=args.pods, steps=args.samples * 2)
        finally:
            await api.stop()
            await kv.close()
    mb_hour = per_write * COST_RATE * 3600 / 1e6
    mode = store_mode(args)
    return {
        "bench": "history",
        **mode.figures(),
        "nodes": args.nodes,
        "pods": args.pods,
        "revisions_written": written,
        "history_revisions": current - bounds.oldest + 1,
        "populate_s": round(populated, 1),
        "churn_writes_per_s": round(written / churned),
        "story_open_p50_ms": _ms(story, 0.5),
        "story_open_p95_ms": _ms(story, 0.95),
        "step_p50_ms": _ms(step, 0.5),
        "step_p95_ms": _ms(step, 0.95),
        "jump_pods_p50_ms": _ms(jump, 0.5),
        "jump_pods_p95_ms": _ms(jump, 0.95),
        "live_list_pods_p50_ms": _ms(anchor, 0.5),
        "jump_vs_live_list": round(percentile(jump, 0.5) / max(percentile(anchor, 0.5), 1e-9), 2),
        "jump_nodes_p50_ms": _ms(jump_nodes, 0.5),
        "history_bytes_per_write": round(per_write),
        "history_mb_per_hour_at_200_writes_s_per_member": round(mb_hour),
        "history_mb_per_hour_at_200_writes_s_all_members": round(mb_hour * mode.members),
        **console_figures,
    }
