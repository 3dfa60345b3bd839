"""``kconsole attach``: the console over any cluster, through its kubeconfig.

Resources, Events, Leases, the chain view, YAML/describe/logs work as on the embedded cluster, over
the HTTPS client (:mod:`kconsole.client.https`); Scheduling comes from the scheduler's Events and
the etcd panel from the API server's checks and metrics (:mod:`kconsole.attached`). Read-only
unless ``--allow-writes``; then the faults the API allows (:mod:`kconsole.apifaults`), every
confirmation naming the context.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kubeconfig", default=None,
                   help="kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
    p.add_argument("--context", default=None, help="kubeconfig context (default: its current-context)")
    p.add_argument("--allow-writes", action="store_true",
                   help="let the console write: delete, edit, and the faults the API allows")
    p.add_argument("--theme", default=None, help="theme name or themes/*.yaml file")
    p.add_argument("--log", default=None, help="write the console's log to this file")


def run(args: argparse.Namespace) -> int:
    from kconsole.attached import AttachedCluster
    from kconsole.client.kubeconfig import KubeconfigError
    from kconsole.tui import launch

    try:
        cluster = AttachedCluster(Path(args.kubeconfig) if args.kubeconfig else None, args.context,
                                  allow_writes=args.allow_writes)
    except KubeconfigError as err:
        print(f"kconsole attach: {err}", file=sys.stderr)
        return 2
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    if args.log:
        root.addHandler(logging.FileHandler(args.log, encoding="utf-8"))
        root.setLevel(logging.INFO)
    else:
        root.addHandler(logging.NullHandler())
    settings = {"theme": args.theme, "readonly": not args.allow_writes}
    launch._save_terminal()
    return asyncio.run(launch.run_app(None, settings, cluster=cluster))
