"""``kconsole serve [DIR]``: the same cluster as the console, headless, until SIGINT/SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys

from kconsole import exitguard
from kconsole.cluster import START_FAILURES, Cluster, ClusterConfig, ConfigError


def add_arguments(p: argparse.ArgumentParser) -> None:
    from kconsole.cli import add_cluster_flags

    p.add_argument("dir", nargs="?", default=".", help="manifest folder (default: current folder)")
    add_cluster_flags(p)


def _log_manifest_sync() -> None:
    """Headless, the log is the only way to learn what a save did (applied, refused, fixed, removed):
    the manifest sync's lines go to stdout beside the cluster's own."""
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("kconsole: %(message)s"))
    logger = logging.getLogger("kconsole.sync")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False


async def serve_until_signalled(config: ClusterConfig) -> int:
    """Start the cluster and serve until SIGINT or SIGTERM; a signal stops it within
    :data:`~kconsole.exitguard.STOP_DEADLINE` seconds even while it is still starting."""
    _log_manifest_sync()
    cluster = Cluster(config)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    signalled: list[int] = []

    def on_signal(signum: int, _frame: object) -> None:
        # A plain handler, not the loop's: it runs even while the loop is stuck in a long call.
        if signalled:
            exitguard.exit_now(128 + signum)  # told twice: stop waiting
        signalled.append(signum)
        exitguard.arm(0)
        loop.call_soon_threadsafe(stop.set)

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        return await _serve(cluster, stop)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


async def _serve(cluster: Cluster, stop: asyncio.Event) -> int:
    starting = asyncio.ensure_future(cluster.start())
    told = asyncio.ensure_future(stop.wait())
    await asyncio.wait({starting, told}, return_when=asyncio.FIRST_COMPLETED)
    if not starting.done():
        print("kconsole: stopping while the cluster was still starting", flush=True)
        starting.cancel()
        await asyncio.wait({starting}, timeout=exitguard.CLEAN_STOP / 2)
        await _stop(cluster)
        return 0
    told.cancel()
    err = starting.exception()
    if err is not None:
        exitguard.arm(1)
        await _stop(cluster)
        if not isinstance(err, START_FAILURES):
            raise err
        print(f"kconsole serve: cannot start: {err}", file=sys.stderr)
        return 1
    print(f"kconsole: cluster running (data {cluster.data_dir})", flush=True)
    print(f"  store: {store_line(cluster)}", flush=True)
    if cluster.kubeconfig_path:
        print(f"  export KUBECONFIG={cluster.kubeconfig_path.resolve()}", flush=True)
        print(f"  API server {cluster.server_url}", flush=True)
    print("  press Ctrl-C to stop", flush=True)
    await stop.wait()
    print("kconsole: stopping", flush=True)
    await _stop(cluster)
    return 0


async def _stop(cluster: Cluster) -> None:
    """Stop the cluster cleanly if it can within :data:`~kconsole.exitguard.CLEAN_STOP` seconds."""
    try:
        await asyncio.wait_for(cluster.stop(), exitguard.CLEAN_STOP)
    except TimeoutError:
        print(f"kconsole: the cluster did not stop within {exitguard.CLEAN_STOP:g} s; exiting anyway",
              file=sys.stderr, flush=True)


def store_line(cluster: Cluster) -> str:
    """What the banner says about the store: the embedded members' mode, or the real etcd's endpoints."""
    if cluster.config.real_etcd and cluster.etcd is not None:
        etcd = cluster.etcd
        where = f"run by kconsole in {etcd.local.folder}" if getattr(etcd, "local", None) else "external"
        return f"real etcd, {len(etcd.members)} member(s) at {','.join(etcd.servers)} ({where})"
    return cluster.store_mode.describe()


def run(args: argparse.Namespace) -> int:
    try:
        config = ClusterConfig.from_args(args)
    except ConfigError as err:
        print(f"kconsole serve: {err}", file=sys.stderr)
        return 2
    from kconsole import gcpolicy

    gcpolicy.install()  # a serving process: full GC passes over the watch caches would stall every request
    code = asyncio.run(serve_until_signalled(config))
    exitguard.arm(code)  # threads a stop left behind must not keep the process alive
    return code
