"""Benchmarks: figures, not tests. ``kconsole bench NAME [--json]``.

Each benchmark is a table entry naming a module with ``add_arguments(parser)`` and
``async def run(args) -> dict`` returning the figures it prints.
"""

from __future__ import annotations

BENCHES: dict[str, tuple[str, str]] = {
    "store": ("kconsole.bench.store", "revision log: durable writes/s and latency at N concurrent writers"),
    "api": ("kconsole.bench.api", "API server: pod creates/s through the full pipeline, watch fan-out latency"),
    "http": ("kconsole.bench.http", "HTTP front: pod creates/s over 64 connections, 10,000-pod Table list"),
    "scheduler": ("kconsole.bench.scheduler", "scheduler: pods/s at N nodes with the default profile"),
    "converge": ("kconsole.bench.converge", "1,000 nodes Ready, then a 10,000-replica Deployment Running"),
    "ui": ("kconsole.bench.ui", "console: key-to-screen and change-to-row latency under churn"),
    "drill": ("kconsole.bench.drill", "the built-in drill course: simulated seconds per wall second, referee on"),
    "history": ("kconsole.bench.history", "history reads at 1,000 nodes / 10,000 pods and N revisions, and its MB/hour"),
}
