"""``kconsole bench NAME [--json]``: dispatch to the benchmark modules of :data:`BENCHES`."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import sys

from kconsole.bench import BENCHES


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="name", required=True, metavar="NAME")
    for name, (module, help_text) in BENCHES.items():
        bp = sub.add_parser(name, help=help_text, description=help_text)
        bp.add_argument("--json", action="store_true", help="print one JSON object")
        try:
            importlib.import_module(module).add_arguments(bp)
        except ModuleNotFoundError:
            bp.set_defaults(_missing=module)


def run(args: argparse.Namespace) -> int:
    if getattr(args, "_missing", None):
        print(f"kconsole bench {args.name}: not built yet ({args._missing})", file=sys.stderr)
        return 2
    module = importlib.import_module(BENCHES[args.name][0])
    figures = asyncio.run(module.run(args))
    if args.json:
        print(json.dumps(figures))
    else:
        flat = _flat(figures)
        width = max((len(k) for k in flat), default=0)
        for key, value in flat.items():
            print(f"{key:<{width}}  {value}")
    return 0


def _flat(figures: dict[str, object], prefix: str = "") -> dict[str, object]:
    """Nested figures (a second store's, under ``real_etcd``) as ``real_etcd.writes_per_s`` lines."""
    out: dict[str, object] = {}
    for key, value in figures.items():
        if isinstance(value, dict):
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out
