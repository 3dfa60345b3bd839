"""``kconsole bench converge``: N nodes Ready, then an M-replica Deployment fully Running.

The whole control plane is composed by :class:`kconsole.cluster.Cluster` as ``kconsole serve``
would (one etcd member, API server, controller-manager, scheduler, the node fleet), without the
HTTP front, on a :class:`~kconsole.clock.RealClock` at speed 1: heartbeats, leases and resyncs
run at their real rates, so the figures include that background load. Pods start with zero
simulated pull/start delay (``pod_delay_factor=0``), as kwok's gate measures.

Phase 1 (``nodes_ready_s``): wall seconds from a cold start until every node is Ready.
Phase 2 (``pods_running_s``): wall seconds from creating the Deployment until every replica is
Running, watched through an informer.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import resource
import sys
import time
from typing import Any

from kconsole.client import SharedInformer
from kconsole.objects.meta import condition_status


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--nodes", type=int, default=1000, help="worker nodes (default 1000)")
    p.add_argument("--pods", type=int, default=10000, help="Deployment replicas (default 10000)")
    p.add_argument("--timeout", type=float, default=600.0, help="give up on a phase after this many wall seconds")


def _peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


async def _until(predicate: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"bench converge: {what} not reached within {timeout:.0f} s")
        await asyncio.sleep(0.05)


def _deployment(replicas: int) -> dict[str, Any]:
    labels = {"app": "converge"}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "converge", "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}],
                                           "terminationGracePeriodSeconds": 0}}}}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from kconsole.cluster import Cluster, ClusterConfig

    if args.nodes < 1 or args.pods < 0:
        raise SystemExit("kconsole bench converge: --nodes must be >= 1 and --pods >= 0")
    has_cm = importlib.util.find_spec("kconsole.controllers.manager") is not None
    config = ClusterConfig(nodes=args.nodes, control_planes=1, http=False, ephemeral=True, pod_delay_factor=0.0,
                           speed=1.0)
    cluster = Cluster(config)
    figures: dict[str, Any] = {"bench": "converge", "nodes": args.nodes, "pods": args.pods}
    started = time.monotonic()
    try:
        await cluster.start()
        admin = cluster.api_client()
        nodes = SharedInformer(admin, "nodes", clock=cluster.clock)
        await nodes.start()
        await nodes.wait_synced()
        total = args.nodes + config.control_planes
        await _until(lambda: sum(condition_status(n, "Ready") == "True" for n in nodes.list()) >= total,
                     args.timeout, f"{total} nodes Ready")
        figures["nodes_ready_s"] = round(time.monotonic() - started, 2)
        await nodes.stop()
        if not has_cm or not cluster.controller_managers:
            print("kconsole bench converge: the controller-manager (kconsole.controllers.manager) is not "
                  "available; cannot run the Deployment phase", file=sys.stderr)
            figures["pods_running_s"] = None
        else:
            running: set[str] = set()

            def seen(pod: dict[str, Any]) -> None:
                key = pod["metadata"]["name"]
                if (pod.get("status") or {}).get("phase") == "Running":
                    running.add(key)
                else:
                    running.discard(key)

            pods = SharedInformer(admin, "pods", "default", label_selector="app=converge", clock=cluster.clock)
            pods.add_event_handler(on_add=seen, on_update=lambda _o, n: seen(n),
                                   on_delete=lambda p: running.discard(p["metadata"]["name"]))
            await pods.start()
            await pods.wait_synced()
            begin = time.monotonic()
            await admin.create(_deployment(args.pods))
            await _until(lambda: len(running) >= args.pods, args.timeout, f"{args.pods} pods Running")
            figures["pods_running_s"] = round(time.monotonic() - begin, 2)
            await pods.stop()
    finally:
        figures["peak_rss_mb"] = _peak_rss_mb()
        await cluster.stop()
    return figures
