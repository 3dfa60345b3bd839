"""Entry point: ``kconsole [DIR]``, ``kconsole serve [DIR]``, ``kconsole bench NAME``, ..."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import sys
from collections.abc import Sequence

from kconsole.bench import BENCHES

SUBCOMMANDS = ("serve", "bench")


def add_cluster_flags(p: argparse.ArgumentParser) -> None:
    """Flags shared by every command that builds a cluster."""
    p.add_argument("--nodes", type=int, default=3, help="worker nodes (default 3)")
    p.add_argument("--control-planes", type=int, default=3, help="control-plane replicas and etcd members (default 3)")
    p.add_argument("--speed", type=float, default=1.0, help="simulated seconds per wall second (default 1)")
    p.add_argument("--seed", type=int, default=1, help="seed for names, ties and jitter (default 1)")
    p.add_argument("--port", type=int, default=6443, help="HTTPS port for kubectl (0 = any free port)")
    p.add_argument("--address", default="127.0.0.1", help="address to serve on (default loopback only)")
    p.add_argument("--data-dir", default=None, help="data folder (default DIR/.kconsole)")
    p.add_argument("--ephemeral", action="store_true", help="keep the cluster in a temporary folder")
    p.add_argument("--config", default=None, help="cluster config YAML")


def build_parser(command: str | None) -> argparse.ArgumentParser:
    if command == "serve":
        p = argparse.ArgumentParser(prog="kconsole serve", description="Run the cluster headless until SIGINT/SIGTERM.")
        p.add_argument("dir", nargs="?", default=".", help="manifest folder (default: current folder)")
        add_cluster_flags(p)
        return p
    if command == "bench":
        p = argparse.ArgumentParser(prog="kconsole bench", description="Run a benchmark and print its figures.")
        sub = p.add_subparsers(dest="name", required=True, metavar="NAME")
        for name, (module, help_text) in BENCHES.items():
            bp = sub.add_parser(name, help=help_text, description=help_text)
            bp.add_argument("--json", action="store_true", help="print one JSON object")
            try:
                importlib.import_module(module).add_arguments(bp)
            except ModuleNotFoundError:
                bp.set_defaults(_missing=module)
        return p
    p = argparse.ArgumentParser(prog="kconsole", description="Open the console on a manifest folder.")
    p.add_argument("dir", nargs="?", default=".", help="manifest folder (default: current folder)")
    add_cluster_flags(p)
    p.add_argument("--theme", default=None, help="theme name or themes/*.yaml file")
    p.add_argument("--readonly", action="store_true", help="disable the dangerous keys")
    return p


def run_bench(args: argparse.Namespace) -> int:
    if getattr(args, "_missing", None):
        print(f"kconsole bench {args.name}: not built yet ({args._missing})", file=sys.stderr)
        return 2
    module = importlib.import_module(BENCHES[args.name][0])
    figures = asyncio.run(module.run(args))
    if args.json:
        print(json.dumps(figures))
    else:
        width = max(len(k) for k in figures) if figures else 0
        for key, value in figures.items():
            print(f"{key:<{width}}  {value}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv[0] if argv and argv[0] in SUBCOMMANDS else None
    args = build_parser(command).parse_args(argv[1:] if command else argv)
    if command == "bench":
        return run_bench(args)
    if command == "serve":
        from kconsole.serve import serve

        return serve(args)
    from kconsole.serve import console

    return console(args)


if __name__ == "__main__":
    raise SystemExit(main())
