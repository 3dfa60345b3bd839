"""``kconsole serve [DIR]``: the same cluster as the console, headless, until SIGINT/SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys

from kconsole.cluster import Cluster, ClusterConfig, ConfigError


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
    _log_manifest_sync()
    cluster = Cluster(config)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await cluster.start()
    except (OSError, ConfigError) as err:
        await cluster.stop()
        print(f"kconsole serve: cannot start: {err}", file=sys.stderr)
        return 1
    print(f"kconsole: cluster running (data {cluster.data_dir})", flush=True)
    if cluster.kubeconfig_path:
        print(f"  export KUBECONFIG={cluster.kubeconfig_path.resolve()}", flush=True)
        print(f"  API server {cluster.server_url}", flush=True)
    print("  press Ctrl-C to stop", flush=True)
    await stop.wait()
    print("kconsole: stopping", flush=True)
    await cluster.stop()
    return 0


def run(args: argparse.Namespace) -> int:
    try:
        config = ClusterConfig.from_args(args)
    except ConfigError as err:
        print(f"kconsole serve: {err}", file=sys.stderr)
        return 2
    from kconsole.api import gcpolicy

    gcpolicy.install()  # a serving process: full GC passes over the watch caches would stall every request
    return asyncio.run(serve_until_signalled(config))
