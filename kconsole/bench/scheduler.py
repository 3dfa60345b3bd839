"""``kconsole bench scheduler``: pods/s from the first scheduling attempt to the last binding, and
to the moment the last pod's event and decision record are written too.

Opens the store as ``kconsole serve`` does (three etcd members, synced; ``--members``/``--no-sync``
pick another mode, named in the figures) in a temporary folder, an APIServer and clients in-process, creates ``--nodes``
Node objects (allocatable and a Ready condition; no kubelets) and ``--pods`` pending pods through
the API, then starts a scheduler (default profile, decision records at default retention unless
``--no-records``) and times it. Phases are wall seconds.

Two rates, because records and events are written in the background after the bindings:
``pods_per_s`` counts to the last binding (issue 4's definition, upstream's scheduler_perf
measure); ``pods_per_s_end_to_end`` counts until every record and event has been written (the
flush), so background work cannot flatter the figure. ``cycle_ms_per_pod`` is the scheduler's own
synchronous cycle (filter, score, pick, assume), without the API calls. The ``cpu_ms_per_pod``
figures are process CPU time (all threads) per pod, to the last binding and to the flush: on a
shared machine they vary far less than the wall-clock rates.

The process runs under the GC policy ``kconsole serve`` installs (:mod:`kconsole.gcpolicy`), as
the scheduler does for a user; ``--default-gc`` keeps CPython's collector settings to compare.

Records: ``records_total`` is one per attempt; retention keeps the last 500, so of a 10,000-pod
burst most are retired before the writer (which waits for bindings) reaches them and are never
created (``records_superseded_unwritten``); ``records_written`` are the ones stored, of
``record_bytes_avg`` JSON bytes each. ``events_dropped`` counts Scheduled events the event
recorder's full queue refused (upstream's broadcaster drops them the same way).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from kconsole.api.server import APIServer
from kconsole.api.types import UserInfo
from kconsole.bench.common import add_gc_argument, add_store_arguments, open_bench_store, store_mode, under_gc_policy
from kconsole.client import Client
from kconsole.clock import RealClock
from kconsole.scheduler.config import SchedulerConfig
from kconsole.scheduler.scheduler import Scheduler

CREATE_CONCURRENCY = 64


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--nodes", type=int, default=5000, help="nodes (default 5000)")
    p.add_argument("--pods", type=int, default=10000, help="pods to schedule (default 10000)")
    p.add_argument("--no-records", action="store_true", help="turn decision records off")
    p.add_argument("--seed", type=int, default=1, help="seed for tie-breaking (default 1)")
    p.add_argument("--profile", default=None, help="write a cProfile of the scheduling phase to this file")
    add_store_arguments(p)
    add_gc_argument(p)


def bench_node(i: int) -> dict[str, Any]:
    name = f"node-{i}"
    alloc = {"cpu": "32", "memory": "128Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                  "topology.kubernetes.io/zone": f"zone-{i % 3}"}},
            "spec": {},
            "status": {"allocatable": alloc, "capacity": alloc,
                       "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}


def bench_pod(i: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"pod-{i}", "namespace": "default"},
            "spec": {"containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}}


async def _create_all(client: Client, objs: list[dict[str, Any]]) -> None:
    it = iter(objs)

    async def worker() -> None:
        for obj in it:
            await client.create(obj)

    await asyncio.gather(*(worker() for _ in range(CREATE_CONCURRENCY)))


def _record_bytes(sched: Scheduler) -> int:
    """Mean JSON size of the records still in memory (what each record write hands the API server)."""
    recent = sched.records.recent()
    if not recent:
        return 0
    return round(sum(len(json.dumps(r, separators=(",", ":"))) for r in recent) / len(recent))


async def run(args: argparse.Namespace) -> dict[str, Any]:
    return await under_gc_policy(args, _run)


async def _run(args: argparse.Namespace) -> dict[str, Any]:
    clock = RealClock()
    with tempfile.TemporaryDirectory(prefix="kconsole-bench-sched-") as tmp:
        kv = await open_bench_store(args, Path(tmp) / "etcd", clock)
        api = APIServer(kv, clock, seed=args.seed)
        await api.start()
        admin = Client(api, api.tokens.issue(UserInfo("admin", ("system:masters",))), clock)
        sched_client = Client(api, api.tokens.issue(UserInfo("system:kube-scheduler")), clock)
        phases: dict[str, float] = {}
        t = time.perf_counter()
        await _create_all(admin, [bench_node(i) for i in range(args.nodes)])
        phases["create_nodes"] = round(time.perf_counter() - t, 3)
        t = time.perf_counter()
        await _create_all(admin, [bench_pod(i) for i in range(args.pods)])
        phases["create_pods"] = round(time.perf_counter() - t, 3)

        config = SchedulerConfig(decision_records=not args.no_records)
        sched = Scheduler(sched_client, clock, rng=random.Random(args.seed), config=config, identity="bench")
        done = asyncio.get_running_loop().create_future()
        last = [0.0]
        bound = [0]

        def on_attempt(key: str, result: str, node: str) -> None:
            if result == "Scheduled":
                bound[0] += 1
                last[0] = time.perf_counter()
                if bound[0] >= args.pods and not done.done():
                    done.set_result(None)

        sched.on_attempt = on_attempt
        cycle = [0.0]
        schedule_one = sched.schedule_one

        async def timed_schedule_one(q: Any) -> None:
            t0 = time.perf_counter()
            await schedule_one(q)
            cycle[0] += time.perf_counter() - t0

        sched.schedule_one = timed_schedule_one  # type: ignore[method-assign]
        t = time.perf_counter()
        profiler = None
        if args.profile:
            import cProfile

            profiler = cProfile.Profile()
            profiler.enable()
        await sched.start()
        first = time.perf_counter()
        cpu_first = time.process_time()
        phases["sync"] = round(first - t, 3)
        await done
        cpu_bound = time.process_time()
        phases["schedule"] = round(last[0] - first, 3)
        await sched.records.flush()
        phases["flush_records"] = round(time.perf_counter() - last[0], 3)
        await sched.flush()
        flushed = time.perf_counter()
        cpu_flushed = time.process_time()
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(args.profile)
        phases["flush_records_events"] = round(flushed - last[0], 3)
        record_bytes = _record_bytes(sched)
        recs, events = sched.records, sched.recorder
        await sched.stop()
        await api.stop()
        await kv.close()
    elapsed = last[0] - first
    end_to_end = flushed - first
    return {
        "bench": "scheduler",
        **store_mode(args).figures(),
        "nodes": args.nodes,
        "pods": args.pods,
        "pods_per_s": round(args.pods / elapsed, 1) if elapsed > 0 else None,
        "pods_per_s_end_to_end": round(args.pods / end_to_end, 1) if end_to_end > 0 else None,
        "cycle_ms_per_pod": round(cycle[0] * 1000 / max(sched.attempts, 1), 3),
        "cpu_ms_per_pod": round((cpu_bound - cpu_first) * 1000 / args.pods, 3),
        "cpu_ms_per_pod_end_to_end": round((cpu_flushed - cpu_first) * 1000 / args.pods, 3),
        "phases": phases,
        "records": not args.no_records,
        "records_total": recs.written + recs.superseded + recs.failed,
        "records_written": recs.written,
        "record_bytes_avg": record_bytes,
        "records_superseded_unwritten": recs.superseded,
        "records_deleted": recs.deleted,
        "events_written": events.written,
        "events_dropped": events.dropped,
    }
