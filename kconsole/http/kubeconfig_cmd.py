"""``kconsole kubeconfig [DIR]``: print the kubeconfig a cluster's data folder holds.

``kconsole`` writes ``<data-dir>/kubeconfig`` when its HTTP front starts; this prints it so
``kconsole kubeconfig > ~/.kube/kconsole.yaml`` or ``KUBECONFIG=<(kconsole kubeconfig)`` just work.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kconsole.kubeconfig import KUBECONFIG


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", nargs="?", default=".", help="manifest folder (default: current folder)")
    p.add_argument("--data-dir", default=None, help="data folder (default DIR/.kconsole)")


def run(args: argparse.Namespace) -> int:
    data_dir = Path(args.data_dir) if args.data_dir else Path(args.dir) / ".kconsole"
    path = data_dir / KUBECONFIG
    if not path.exists():
        print(f"kconsole kubeconfig: no kubeconfig at {path}; start the cluster first "
              f"(kconsole {args.dir} or kconsole serve)", file=sys.stderr)
        return 1
    sys.stdout.write(path.read_text())
    return 0
