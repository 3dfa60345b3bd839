"""What every benchmark measures the same way: percentiles, the serving GC policy, how much of the
machine the host took away meanwhile, and the store as ``kconsole serve`` opens it."""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kconsole.clock import Clock
from kconsole.store.durability import StoreMode

if TYPE_CHECKING:
    from kconsole.cluster import ClusterConfig
    from kconsole.store.facade import EtcdCluster


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile by rank (0.0 for no samples); ``values`` need not be sorted."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def add_gc_argument(parser: argparse.ArgumentParser) -> None:
    """``--default-gc``: the one switch every serving benchmark offers to compare with CPython's collector."""
    parser.add_argument("--default-gc", action="store_true",
                        help="keep CPython's collector settings instead of the serving policy (kconsole.gcpolicy)")


#: /proc/stat's first line: user nice system idle iowait irq softirq steal (guest time is inside user).
_STEAL, _COUNTED = 7, 8


def _cpu_ticks() -> list[int] | None:
    """The machine's CPU time counters (Linux), None where there are none."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            fields = f.readline().split()
        return [int(x) for x in fields[1 : 1 + _COUNTED]]
    except (OSError, ValueError):
        return None


def steal_pct(before: list[int] | None, after: list[int] | None) -> float | None:
    """Share of CPU time the hypervisor gave to others between two readings: on a shared virtual
    machine the same code's figures move with it, so a run reports it beside them."""
    if before is None or after is None or len(before) != len(after) or len(after) <= _STEAL:
        return None
    total = sum(after) - sum(before)
    return round(100 * (after[_STEAL] - before[_STEAL]) / total, 1) if total > 0 else 0.0


async def under_gc_policy(args: argparse.Namespace,
                          run: Callable[[argparse.Namespace], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
    """Run a serving benchmark with the GC policy ``kconsole serve`` installs (``--default-gc`` to
    compare), and report the CPU steal over the run (``cpu_steal_pct``, where the machine tells)."""
    from kconsole import gcpolicy

    tuned = not getattr(args, "default_gc", False)
    if tuned:
        gcpolicy.install()
    ticks = _cpu_ticks()
    try:
        result = await run(args)
    finally:
        if tuned:
            gcpolicy.uninstall()
    result["gc_policy"] = tuned
    stolen = steal_pct(ticks, _cpu_ticks())
    if stolen is not None:
        result["cpu_steal_pct"] = stolen
    return result


def add_store_arguments(parser: argparse.ArgumentParser) -> None:
    """``--members`` and ``--no-sync``: the store a benchmark runs on, by default exactly what
    ``kconsole serve`` runs (three etcd members, synced); the mode is named in the figures."""
    parser.add_argument("--members", type=int, default=3,
                        help="etcd members (default 3, as serve's --control-planes)")
    parser.add_argument("--no-sync", action="store_true",
                        help="writes reach the OS unsynced, as an --ephemeral cluster runs "
                             "(default: synced, as serve runs: acknowledged once on disk)")
    parser.add_argument("--member-processes", action="store_true",
                        help="each etcd member in its own process, as serve --member-processes runs them")


def store_mode(args: argparse.Namespace) -> StoreMode:
    if args.members < 1:
        raise SystemExit("kconsole bench: --members must be at least 1")
    return StoreMode(args.members, synced=not args.no_sync, processes=getattr(args, "member_processes", False))


async def open_bench_store(args: argparse.Namespace, folder: Path, clock: Clock) -> EtcdCluster:
    """The store as ``serve`` opens it (or as the flags say), its leader elected."""
    from kconsole.store.durability import open_store

    cluster = await open_store(folder, clock=clock, mode=store_mode(args))
    await wait_leader(cluster)
    return cluster


async def wait_leader(cluster: EtcdCluster, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while cluster.leader() is None:
        if time.monotonic() > deadline:
            await cluster.close()
            raise SystemExit(f"kconsole bench: no etcd leader elected within {timeout:g} s")
        await asyncio.sleep(0.01)


def served_cluster_config(args: argparse.Namespace, data_dir: Path, **kwargs: Any) -> ClusterConfig:
    """A whole cluster whose store is what ``serve`` runs (or the flags' mode): one control plane per
    etcd member, its files in ``data_dir`` (not an ephemeral cluster, which would not sync)."""
    from kconsole.cluster import ClusterConfig

    mode = store_mode(args)
    return ClusterConfig(control_planes=mode.members, store_sync=mode.synced, member_processes=mode.processes,
                         data_dir=data_dir, manifests=None,
                         **kwargs)


def add_real_etcd_arguments(parser: argparse.ArgumentParser, *, servers: bool = True) -> None:
    """``--etcd local`` (and ``--etcd-servers``): measure on real etcd too, beside the embedded store."""
    parser.add_argument("--etcd", choices=("embedded", "local"), default="embedded",
                        help="local: run the bench a second time on real etcd members started on loopback "
                             "(--members of them, the etcd binary), and print both")
    parser.add_argument("--etcd-binary", default=None, help="etcd binary for --etcd local (default: etcd on PATH)")
    if servers:
        parser.add_argument("--etcd-servers", default=None, metavar="URL[,URL...]",
                            help="run the bench a second time on this real etcd cluster, and print both")
        parser.add_argument("--etcd-cafile", default=None, help="CA of the etcd servers' certificates")
        parser.add_argument("--etcd-certfile", default=None, help="client certificate for etcd")
        parser.add_argument("--etcd-keyfile", default=None, help="client key for etcd")


def wants_real_etcd(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "etcd_servers", None)) or getattr(args, "etcd", "embedded") == "local"


async def open_real_bench_store(args: argparse.Namespace, folder: Path, clock: Clock) -> Any:
    """The real etcd the flags name: ``--etcd-servers``, or ``--members`` members run in ``folder``."""
    from kconsole.store.etcdgw import TLSFiles
    from kconsole.store.etcdreal import open_real

    if getattr(args, "etcd_servers", None):
        tls = TLSFiles(*(Path(p) if p else None for p in (args.etcd_cafile, args.etcd_certfile, args.etcd_keyfile)))
        return await open_real(servers=args.etcd_servers.split(","), tls=tls, clock=clock)
    return await open_real(local_dir=folder, members=args.members, binary=args.etcd_binary, clock=clock)


def real_etcd_figures(kv: Any) -> dict[str, Any]:
    """What a benchmark prints about the real etcd it measured."""
    local = kv.local is not None
    return {"store": "real-etcd", "members": len(kv.members), "servers": "local" if local else ",".join(kv.servers),
            "durability": "synced"}


def beside(embedded: dict[str, Any], real: dict[str, Any], ratios: tuple[str, ...]) -> dict[str, Any]:
    """The embedded store's figures, the real etcd's under ``real_etcd``, and real/embedded ratios."""
    out = dict(embedded)
    out["real_etcd"] = real
    for key in ratios:
        a, b = embedded.get(key), real.get(key)
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and a:
            out[f"real_vs_embedded_{key}"] = round(b / a, 2)
    return out
