"""``kconsole bench converge``: N nodes Ready, then an M-replica Deployment fully Running.

The whole control plane is composed by :class:`kconsole.cluster.Cluster` as ``kconsole serve``
would (its store opened as serve opens it: three etcd members, synced, unless ``--members`` or
``--no-sync`` say otherwise, as the figures name; API server, controller-managers, schedulers, the
node fleet), without the HTTP front, on a :class:`~kconsole.clock.RealClock` at speed 1: heartbeats, leases and resyncs
run at their real rates, so the figures include that background load. Pods start with zero
simulated pull/start delay (``pod_delay_factor=0``), as kwok's gate measures. The process runs under
the serving GC policy ``kconsole serve`` installs (``--default-gc`` keeps CPython's).

Phase 1 (``nodes_ready_s``): wall seconds from a cold start until every node is Ready.
Phase 2 (``pods_running_s``): wall seconds from creating the Deployment until every replica is
Running, watched through an informer. ``*_cpu_s`` is the process CPU time of the phase (the
machine is shared, so wall seconds also measure the neighbours).

Every phase is bounded by ``--timeout`` wall seconds: a phase that runs out reports ``null`` seconds,
``<phase>_timed_out: true`` and how far it got (``nodes_ready`` / ``pods_running`` at the deadline);
the cluster's stop is bounded too, so the bench always ends with its figures.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path
from collections.abc import Callable
from typing import Any

from kconsole.addons import DEFAULT_ADDONS
from kconsole.bench.common import add_gc_argument, add_real_etcd_arguments, add_store_arguments, beside, \
    served_cluster_config, store_mode, under_gc_policy, wants_real_etcd
from kconsole.client import SharedInformer
from kconsole.objects.meta import condition_status


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--nodes", type=int, default=1000, help="worker nodes (default 1000)")
    p.add_argument("--pods", type=int, default=10000, help="Deployment replicas (default 10000)")
    p.add_argument("--timeout", type=float, default=300.0, help="give up on a phase after this many wall seconds")
    p.add_argument("--addons", action="store_true",
                   help="with the kube-proxy DaemonSet and CoreDNS (one more pod per node); kwok's gate, "
                        "which this bench follows, has neither")
    p.add_argument("--processes", type=int, default=0,
                   help="also run with the worker nodes' kubelets in N processes over HTTPS, after the one-process "
                        "anchor in the same run, and print the ratio (default 0: one process only)")
    add_store_arguments(p)
    add_gc_argument(p)
    add_real_etcd_arguments(p, servers=False)


#: Wall seconds the cluster's stop may take before the bench reports anyway.
STOP_TIMEOUT = 60.0


def _cpu_s() -> float:
    """Process CPU seconds: on a shared machine steadier than wall time."""
    return time.process_time()


def _peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _peak_rss_of(pid: int) -> int | None:
    """Another process's peak resident set in KiB (Linux's VmHWM); None where /proc cannot say."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


async def _until(predicate: Callable[[], bool], deadline: float) -> bool:
    """Poll until ``predicate`` holds (True) or the wall-clock ``deadline`` passes (False)."""
    while not predicate():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


def _deployment(replicas: int) -> dict[str, Any]:
    labels = {"app": "converge"}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "converge", "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}],
                                           "terminationGracePeriodSeconds": 0}}}}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    """The embedded store's figures; with ``--processes N``, the one-process anchor and the same cluster
    with its kubelets in N worker processes, and their ratio; with ``--etcd local``, a second cluster
    on real etcd members (``--members`` of them) measured the same way, its figures beside."""
    if args.processes < 0:
        raise SystemExit("kconsole bench converge: --processes must be >= 0")
    if args.processes:
        # The one-process anchor first, then the same cluster with its kubelets in worker processes.
        anchor = await under_gc_policy(args, lambda a: _run(a, 0))
        split = await under_gc_policy(args, lambda a: _run(a, args.processes))
        figures = {**split, "one_process": {k: anchor.get(k) for k in _PHASE_FIGURES}}
        for key in ("nodes_ready_s", "pods_running_s"):
            if split.get(key) and anchor.get(key):
                figures[f"{key}_ratio"] = round(split[key] / anchor[key], 2)
        return figures
    embedded = await under_gc_policy(args, lambda a: _run(a, 0))
    if not wants_real_etcd(args):
        return embedded
    real = await under_gc_policy(args, lambda a: _run(a, 0, real=True))
    return beside(embedded, real, ("nodes_ready_s", "pods_running_s", "pods_cpu_s"))


#: The anchor's figures repeated beside a --processes run.
_PHASE_FIGURES = ("nodes_ready_s", "nodes_cpu_s", "pods_running_s", "pods_cpu_s", "peak_rss_mb")


async def _run(args: argparse.Namespace, processes: int, real: bool = False) -> dict[str, Any]:
    from kconsole.cluster import Cluster

    if args.nodes < 1 or args.pods < 0 or args.timeout <= 0:
        raise SystemExit("kconsole bench converge: --nodes must be >= 1, --pods >= 0 and --timeout > 0")
    has_cm = importlib.util.find_spec("kconsole.controllers.manager") is not None
    folder = Path(tempfile.mkdtemp(prefix="kconsole-bench-converge-"))
    extra: dict[str, Any] = {"etcd": "local", "etcd_binary": args.etcd_binary} if real else {}
    # Worker processes reach the API over the HTTPS front, on a free loopback port.
    config = served_cluster_config(args, folder, nodes=args.nodes, http=bool(processes), port=0,
                                   processes=processes, pod_delay_factor=0.0, speed=1.0,
                                   addons=DEFAULT_ADDONS if args.addons else (), **extra)
    cluster = Cluster(config)
    store = {"store": "real-etcd", "members": config.control_planes, "servers": "local", "durability": "synced"} \
        if real else store_mode(args).figures()
    figures: dict[str, Any] = {"bench": "converge", **store, "nodes": args.nodes,
                               "pods": args.pods, "addons": bool(args.addons), "processes": processes}
    started = time.monotonic()
    cpu0 = _cpu_s()
    try:
        await cluster.start()
        admin = cluster.api_client()
        nodes = SharedInformer(admin, "nodes", clock=cluster.clock)
        await nodes.start()
        await nodes.wait_synced()
        total = args.nodes + config.control_planes

        def ready() -> int:
            return sum(condition_status(n, "Ready") == "True" for n in nodes.list())

        if await _until(lambda: ready() >= total, started + args.timeout):
            figures["nodes_ready_s"] = round(time.monotonic() - started, 2)
        else:
            figures.update(nodes_ready_s=None, nodes_timed_out=True, nodes_ready=ready())
        figures["nodes_cpu_s"] = round(_cpu_s() - cpu0, 2)
        await nodes.stop()
        if figures.get("nodes_timed_out"):
            figures["pods_running_s"] = None
        elif not has_cm or not cluster.controller_managers:
            print("kconsole bench converge: the controller-manager (kconsole.controllers.manager) is not "
                  "available; cannot run the Deployment phase", file=sys.stderr)
            figures["pods_running_s"] = None
        else:
            figures.update(await _pods_phase(admin, cluster.clock, args.pods, args.timeout))
    finally:
        figures["peak_rss_mb"] = _peak_rss_mb()
        if processes:
            figures.update(_worker_peaks(cluster, figures["peak_rss_mb"]))
        stopping = time.monotonic()
        try:
            await asyncio.wait_for(cluster.stop(), STOP_TIMEOUT)
        except TimeoutError:
            figures["stop_timed_out"] = True
        figures["stop_s"] = round(time.monotonic() - stopping, 2)
        shutil.rmtree(folder, ignore_errors=True)
    return figures


def _worker_peaks(cluster: Any, own_mb: float) -> dict[str, float]:
    """The biggest worker's peak RSS, read while the workers run, and every process's peak added up (a
    bound on the peak of their total); nothing where /proc cannot say."""
    workers = cluster.workers.workers if cluster.workers is not None else []
    peaks = [_peak_rss_of(w.process.pid) for w in workers if w.process is not None and w.running]
    known = [p for p in peaks if p is not None]
    if not known or len(known) != len(peaks):
        return {}
    return {"worker_peak_rss_mb": round(max(known) / 1024, 1),
            "all_processes_peak_rss_mb": round(own_mb + sum(known) / 1024, 1)}


async def _pods_phase(admin: Any, clock: Any, replicas: int, timeout: float) -> dict[str, Any]:
    running: set[str] = set()

    def seen(pod: dict[str, Any]) -> None:
        key = pod["metadata"]["name"]
        if (pod.get("status") or {}).get("phase") == "Running":
            running.add(key)
        else:
            running.discard(key)

    pods = SharedInformer(admin, "pods", "default", label_selector="app=converge", clock=clock)
    pods.add_event_handler(on_add=seen, on_update=lambda _o, n: seen(n),
                           on_delete=lambda p: running.discard(p["metadata"]["name"]))
    await pods.start()
    await pods.wait_synced()
    begin = time.monotonic()
    cpu0 = _cpu_s()
    await admin.create(_deployment(replicas))
    try:
        if await _until(lambda: len(running) >= replicas, begin + timeout):
            return {"pods_running_s": round(time.monotonic() - begin, 2), "pods_cpu_s": round(_cpu_s() - cpu0, 2)}
        return {"pods_running_s": None, "pods_timed_out": True, "pods_running": len(running),
                "pods_created": len(pods.list()),
                "pods_scheduled": sum(bool((p.get("spec") or {}).get("nodeName")) for p in pods.list()),
                "pods_cpu_s": round(_cpu_s() - cpu0, 2)}
    finally:
        await pods.stop()
