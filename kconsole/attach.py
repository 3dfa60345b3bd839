"""``kconsole attach``: the console over any cluster, through its kubeconfig.

Resources, Events, Leases, the chain view, YAML/describe/logs work as on the embedded cluster, over
the HTTPS client (:mod:`kconsole.client.https`); Scheduling comes from the scheduler's Events and
the etcd panel from the API server's checks and metrics, or from the members themselves with
``--etcd-endpoints`` (:mod:`kconsole.attached`). Read-only
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
    p.add_argument("--etcd-endpoints", default=None, metavar="URL[,URL]",
                   help="the cluster's etcd members: the etcd panel shows their own status (leader, raft "
                        "term and index, db size) instead of what the API server tells")
    p.add_argument("--etcd-cafile", default=None, help="CA that signed the etcd members' certificates")
    p.add_argument("--etcd-certfile", default=None, help="client certificate for the etcd members")
    p.add_argument("--etcd-keyfile", default=None, help="client key for the etcd members")
    p.add_argument("--theme", default=None, help="theme name or themes/*.yaml file")
    p.add_argument("--log", default=None, help="write the console's log to this file")


def run(args: argparse.Namespace) -> int:
    from kconsole.attached import AttachedCluster
    from kconsole.client.kubeconfig import KubeconfigError
    from kconsole.store.etcdgw import TLSFiles
    from kconsole.tui import launch

    try:
        tls = TLSFiles(*(Path(f) if f else None for f in (args.etcd_cafile, args.etcd_certfile, args.etcd_keyfile)))
        for flag, path in (("--etcd-cafile", tls.cafile), ("--etcd-certfile", tls.certfile),
                           ("--etcd-keyfile", tls.keyfile)):
            if path is not None and not path.is_file():
                raise ValueError(f"{flag}: no file {path}")
        cluster = AttachedCluster(Path(args.kubeconfig) if args.kubeconfig else None, args.context,
                                  allow_writes=args.allow_writes,
                                  etcd_endpoints=args.etcd_endpoints.split(",") if args.etcd_endpoints else None,
                                  etcd_tls=tls)
    except (KubeconfigError, ValueError) as err:
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
