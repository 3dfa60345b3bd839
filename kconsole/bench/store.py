"""``kconsole bench store``: acknowledged durable writes/s and latency of the store ``serve`` runs.

By default the store is opened exactly as ``kconsole serve`` opens it (three etcd members, synced:
see :mod:`kconsole.store.durability`); ``--members`` and ``--no-sync`` pick another mode, and
``--bare`` measures the bare revision log of one member without Raft (not what serve runs). The
figures name the mode (``store``, ``members``, ``durability``).

Writers behave like the API server: each owns a set of keys and does compare-and-swap txns on
them (create = "mod == 0 then put", update = "mod == rv then put else get"), so every write pays
for a compare against the index, a prior-value lookup and a watch-ready event. Two phases run on
the same store: ``--concurrency`` writers sharing ``--writes`` txns, then one writer doing
``--single-writes``. Latency is wall time from calling ``txn`` to its acknowledgement. The store's
files are new for each run (preallocated files are zero-filled before the clock starts).
The process runs under the GC policy ``kconsole serve`` installs, as every serving benchmark does
(``--default-gc`` keeps CPython's).

``--bare``: by then the SQLite WAL has cycled (see :mod:`kconsole.store.revlog`), so the single
writer's commits overwrite WAL blocks as a long-running store's do; with ``--synchronous FULL`` an
acknowledgement waits for the group commit's journal record on the device.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from kconsole.bench.common import add_gc_argument, add_store_arguments, percentile, store_mode, under_gc_policy
from kconsole.clock import RealClock
from kconsole.store.revlog import SYNCHRONOUS_MODES, RevisionLog

KEYS_PER_WRITER = 100


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--concurrency", type=int, default=64, help="concurrent writers (default 64)")
    parser.add_argument("--writes", type=int, default=50_000, help="txns in the concurrent phase (default 50,000)")
    parser.add_argument("--single-writes", type=int, default=5_000, help="txns in the one-writer phase (default 5,000)")
    parser.add_argument("--value-size", type=int, default=1024, help="bytes per value (default 1024)")
    add_store_arguments(parser)
    parser.add_argument("--bare", action="store_true",
                        help="the bare revision log of one member, without Raft (not what serve runs)")
    parser.add_argument("--synchronous", default="FULL", choices=SYNCHRONOUS_MODES,
                        help="with --bare: SQLite synchronous mode (default FULL: survives power loss; "
                             "NORMAL: survives kill -9)")
    parser.add_argument("--data-dir", default=None, help="folder for the store file (default: a temporary folder)")
    add_gc_argument(parser)
    parser.add_argument("--against-etcd", metavar="URL", default=None,
                        help="run the same writers against a real etcd's v3 JSON gateway (e.g. http://127.0.0.1:2379)")


def figures(args: argparse.Namespace, elapsed: float, lat: list[float], single_elapsed: float,
            single_lat: list[float]) -> dict[str, Any]:
    """The figures every store run prints, for one member or many, naming the store's mode."""
    if args.bare:
        mode = {"store": "revlog (bare, not what serve runs)", "members": 1, "durability": args.synchronous}
    else:
        mode = store_mode(args).figures()
    return {
        "bench": "store",
        **mode,
        "concurrency": args.concurrency,
        "value_size": args.value_size,
        "writes": args.writes,
        "writes_per_s": round(args.writes / elapsed),
        "p50_ms": round(percentile(lat, 0.50), 3),
        "p99_ms": round(percentile(lat, 0.99), 3),
        "single_writer_writes_per_s": round(args.single_writes / single_elapsed),
        "single_writer_p99_ms": round(percentile(single_lat, 0.99), 3),
    }


def stamp(value: bytes, label: str) -> bytes:
    """A value of the same size that is its own object with its own bytes: a client sends each write
    fresh, and a serialiser that shares repeated objects (marshal does) must not pack 64 writes as one."""
    tail = label.encode()[-len(value):]
    return value[: len(value) - len(tail)] + tail


async def _phase(log: RevisionLog, writers: int, writes: int, value: bytes, tag: str) -> tuple[float, list[float]]:
    """Run ``writes`` CAS txns over ``writers`` concurrent writers; (seconds, sorted latencies in ms)."""
    latencies: list[float] = []
    per_writer = [writes // writers + (1 if w < writes % writers else 0) for w in range(writers)]
    clock = time.perf_counter

    async def writer(w: int, count: int) -> None:
        revisions: dict[str, int] = {}
        for i in range(count):
            key = f"/registry/bench/{tag}-{w}/obj-{i % KEYS_PER_WRITER}"
            known = revisions.get(key, 0)
            data = stamp(value, f"{tag}-{w}:{i}")
            t0 = clock()
            result = await (log.update(key, data, known) if known else log.create(key, data))
            latencies.append((clock() - t0) * 1000)
            if not result.succeeded:
                raise RuntimeError(f"bench writer {w} lost a compare-and-swap on {key}: the store is not serializable")
            revisions[key] = result.revision

    start = clock()
    await asyncio.gather(*(writer(w, n) for w, n in enumerate(per_writer) if n))
    elapsed = clock() - start
    latencies.sort()
    return elapsed, latencies


async def run(args: argparse.Namespace) -> dict[str, Any]:
    return await under_gc_policy(args, _run)


async def _run(args: argparse.Namespace) -> dict[str, Any]:
    for name in ("concurrency", "writes", "single_writes", "value_size", "members"):
        if getattr(args, name) < 1:
            raise SystemExit(f"kconsole bench store: --{name.replace('_', '-')} must be at least 1")
    if args.against_etcd:
        from kconsole.bench import etcd_real

        return await etcd_real.run(args, _phase, figures)
    if not args.bare:
        from kconsole.bench import etcd_members

        return await etcd_members.run(args, _phase, figures)
    value = b"x" * args.value_size
    with tempfile.TemporaryDirectory(prefix="kconsole-bench-store-") as tmp:
        folder = Path(args.data_dir) if args.data_dir else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "bench-store.db"
        for suffix in ("", "-wal", "-shm", ".jnl"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        log = await RevisionLog.open(path, clock=RealClock(), synchronous=args.synchronous)
        try:
            elapsed, lat = await _phase(log, args.concurrency, args.writes, value, "c")
            single_elapsed, single_lat = await _phase(log, 1, args.single_writes, value, "s")
        finally:
            await log.close()
    return figures(args, elapsed, lat, single_elapsed, single_lat)
