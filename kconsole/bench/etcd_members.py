"""``kconsole bench store`` on etcd members, opened as ``kconsole serve`` opens them.

The same CAS writers as the bare benchmark, against :class:`EtcdCluster` on a real clock: a write is
acknowledged once a majority logged it (synced, unless ``--no-sync``) and the leader applied it to
its revision log. Then ``failover_s`` (more than one member): the leader is killed and writers
retry until the next write is acknowledged; the time between is read from the cluster's clock
(simulated seconds, equal to wall seconds here).

Beside the store figures: the concurrent phase's CPU per write, of the whole process and of the
event loop's thread alone (every member shares it; the WAL and SQLite threads make up the rest).
On a shared machine these move less than writes/s and say what a change cost.

``--member-processes``: the members run in their own processes (what ``serve --member-processes``
runs); their CPU per write is added (``members_cpu_us_per_write``, of which the leader's
``leader_cpu_us_per_write``, read from /proc), and the same
phases run on in-process members in the same invocation, right before, as the anchor: its figures
under ``in_process`` and the ratios ``writes_per_s_ratio`` and ``p99_ratio`` (processes / in process).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from kconsole.bench.common import open_bench_store
from kconsole.clock import RealClock
from kconsole.store.facade import EtcdCluster
from kconsole.store.kv import Put, StoreError


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


def _children_cpu(cluster: Any) -> dict[str, float]:
    """CPU seconds each member process used so far (user + system), where /proc tells."""
    out: dict[str, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for m in cluster.members:
        proc = getattr(m, "process", None)
        if proc is None or proc.returncode is not None:
            continue
        try:
            fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[m.name] = (int(fields[11]) + int(fields[12])) / tick
    return out


async def run(args: argparse.Namespace, phase: Callable[..., Awaitable[tuple[float, list[float]]]],
              figures: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    if not getattr(args, "member_processes", False):
        return await _run(args, phase, figures)
    def mode(processes: bool) -> argparse.Namespace:
        data_dir = str(Path(args.data_dir) / ("processes" if processes else "in-process")) if args.data_dir else None
        return argparse.Namespace(**{**vars(args), "member_processes": processes, "data_dir": data_dir})

    anchor = await _run(mode(False), phase, figures)
    out = await _run(mode(True), phase, figures)
    out["in_process"] = {k: anchor[k] for k in ("writes_per_s", "p50_ms", "p99_ms", "single_writer_writes_per_s",
                                                 "single_writer_p99_ms", "failover_s", "process_cpu_us_per_write")}
    out["writes_per_s_ratio"] = round(out["writes_per_s"] / anchor["writes_per_s"], 2)
    out["p99_ratio"] = round(out["p99_ms"] / anchor["p99_ms"], 2) if anchor["p99_ms"] else None
    return out


async def _run(args: argparse.Namespace, phase: Callable[..., Awaitable[tuple[float, list[float]]]],
               figures: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    value = b"x" * args.value_size
    clock = RealClock()
    with tempfile.TemporaryDirectory(prefix="kconsole-bench-etcd-") as tmp:
        folder = Path(args.data_dir) / "bench-etcd" if args.data_dir else Path(tmp)
        if folder.exists() and any(folder.iterdir()):
            raise SystemExit(f"kconsole bench store: {folder} is not empty")
        cluster = await open_bench_store(args, folder, clock)
        try:
            cpu0, loop0, kids0 = time.process_time(), time.thread_time(), _children_cpu(cluster)
            elapsed, lat = await phase(cluster, args.concurrency, args.writes, value, "c")
            cpu, loop_cpu = time.process_time() - cpu0, time.thread_time() - loop0
            kids = {name: t - kids0.get(name, 0.0) for name, t in _children_cpu(cluster).items()}
            leader = cluster.leader()
            single_elapsed, single_lat = await phase(cluster, 1, args.single_writes, value, "s")
            took = await failover(cluster, clock) if args.members > 1 else None
        finally:
            await cluster.close()
    out = {**figures(args, elapsed, lat, single_elapsed, single_lat),
           "failover_s": None if took is None else round(took, 3),
           "process_cpu_us_per_write": round(cpu / args.writes * 1e6, 1),
           "loop_cpu_us_per_write": round(loop_cpu / args.writes * 1e6, 1)}
    if getattr(args, "member_processes", False):
        out["members_cpu_us_per_write"] = round(sum(kids.values()) / args.writes * 1e6, 1)
        out["leader_cpu_us_per_write"] = round(kids.get(leader.name, 0.0) / args.writes * 1e6, 1) \
            if leader is not None else None
    return out
