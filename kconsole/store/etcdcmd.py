"""``kconsole etcd up --members 3 [--data-dir D] [--etcd-binary B]``: a local real etcd cluster.

Runs the members in the foreground until SIGINT/SIGTERM and prints, once they elected a leader,
the flags that point ``kconsole serve`` (or a kube-apiserver) at them.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import tempfile

from kconsole.store.kv import StoreError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=("up",), help="up: start the members and keep them running")
    p.add_argument("--members", type=int, default=3, help="etcd members (default 3)")
    p.add_argument("--data-dir", default=None, help="folder for the members' data, certificates and logs "
                                                    "(default: a temporary folder)")
    p.add_argument("--etcd-binary", default=None, help="etcd binary (default: etcd on PATH, Debian's etcd-server)")


async def _up(args: argparse.Namespace) -> int:
    from kconsole.store.etcdreal import open_real

    folder = args.data_dir or tempfile.mkdtemp(prefix="kconsole-etcd-")
    try:
        etcd = await open_real(local_dir=folder, members=args.members, binary=args.etcd_binary)
    except (StoreError, ValueError, OSError) as err:
        print(f"kconsole etcd up: {err}", file=sys.stderr)
        return 1
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    assert etcd.local is not None
    leader = etcd.leader()
    print(f"etcd: {args.members} member(s) in {etcd.local.folder}, leader {leader.name if leader else '?'}")
    for m in etcd.local.members:
        print(f"  {m.name}  {m.endpoint}  id {m.id:x}  log {m.folder.with_suffix('.log')}")
    print(f"kconsole serve {etcd.local.flags()}", flush=True)
    await stop.wait()
    await etcd.close()
    return 0


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_up(args))
