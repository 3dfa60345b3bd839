"""``kconsole bench store --members N`` (N > 1): the store benchmark through Raft-replicated members.

The same CAS writers as the single-member benchmark, against :class:`EtcdCluster` on a real clock:
a write is acknowledged once a majority logged it and the leader applied it to its revision log.
Then ``failover_s``: the leader is killed and writers retry until the next write is acknowledged;
the time between is read from the cluster's clock (simulated seconds, equal to wall seconds here).

Beside the store figures: the concurrent phase's CPU per write, of the whole process and of the
event loop's thread alone (every member shares it; the WAL and SQLite threads make up the rest).
On a shared machine these move less than writes/s and say what a change cost.

Durability mirrors etcd: with ``--synchronous FULL`` (or EXTRA) each member fsyncs its Raft WAL
before acknowledging (etcd's WAL fsync), while the revision logs commit with ``NORMAL`` (etcd's
backend commits are batched too); ``--synchronous NORMAL`` skips the WAL fsync (survives a killed
process, not power loss).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from kconsole.clock import RealClock
from kconsole.store.facade import EtcdCluster
from kconsole.store.kv import Put, StoreError


async def _wait_leader(cluster: EtcdCluster, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while cluster.leader() is None:
        if time.monotonic() > deadline:
            raise SystemExit("kconsole bench store: no etcd leader elected within 10 s")
        await asyncio.sleep(0.01)


async def failover(cluster: EtcdCluster, clock: RealClock) -> float:
    """Kill the leader; simulated seconds until a write is acknowledged again."""
    killed = await cluster.kill_leader()
    start = clock.now()
    i = 0
    while True:
        i += 1
        try:
            await cluster.txn([], [Put(f"/registry/bench/failover/{i}", b"x")])
            break
        except StoreError:
            await asyncio.sleep(0.005)
    took = clock.now() - start
    if killed is not None:
        await killed.start()
    return took


async def run(args: argparse.Namespace, phase: Callable[..., Awaitable[tuple[float, list[float]]]],
              figures: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    value = b"x" * args.value_size
    clock = RealClock()
    fsync = args.synchronous.upper() != "NORMAL"
    with tempfile.TemporaryDirectory(prefix="kconsole-bench-etcd-") as tmp:
        folder = Path(args.data_dir) / "bench-etcd" if args.data_dir else Path(tmp)
        if folder.exists() and any(folder.iterdir()):
            raise SystemExit(f"kconsole bench store: {folder} is not empty")
        cluster = await EtcdCluster.open(folder, clock=clock, members=args.members, seed=1, fsync=fsync,
                                         synchronous="NORMAL", auto_compact_interval=0)
        try:
            await _wait_leader(cluster)
            cpu0, loop0 = time.process_time(), time.thread_time()
            elapsed, lat = await phase(cluster, args.concurrency, args.writes, value, "c")
            cpu, loop_cpu = time.process_time() - cpu0, time.thread_time() - loop0
            single_elapsed, single_lat = await phase(cluster, 1, args.single_writes, value, "s")
            took = await failover(cluster, clock)
        finally:
            await cluster.close()
    return {**figures(args, elapsed, lat, single_elapsed, single_lat), "wal_fsync": fsync,
            "failover_s": round(took, 3),
            "process_cpu_us_per_write": round(cpu / args.writes * 1e6, 1),
            "loop_cpu_us_per_write": round(loop_cpu / args.writes * 1e6, 1)}
