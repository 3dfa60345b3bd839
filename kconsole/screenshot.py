"""``kconsole screenshot [--size WxH] [--theme T] [--view V] FILE.svg``: one view of the console, as SVG.

The pictures in docs/ come from here, so they show the console as it is, not as it was drawn by
hand. Each run builds a fresh cluster in a temporary folder on a virtual clock with a fixed seed,
applies the example folder, moves simulated time forward until every pod runs, opens the view and
saves Textual's own screenshot. The same command, seed and size give the same picture.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kconsole.cluster import Cluster, ClusterConfig, ConfigError

if TYPE_CHECKING:
    from kconsole.clock import VirtualClock
    from kconsole.tui.app import ConsoleApp

#: The data folder's name beside the manifests, as ``kconsole DIR`` names it.
DATA_DIR_NAME = ".kconsole"
#: Simulated seconds the cluster may take to settle before the picture is taken anyway.
SETTLE_LIMIT = 180.0
#: Simulated seconds without a change in the pods' count or states that count as settled.
SETTLED_FOR = 3.0


class ScreenshotError(Exception):
    """The picture cannot be taken; the message says which view and why."""


@dataclass(frozen=True, slots=True)
class View:
    """A named view: what it shows, and how to open it on a settled console."""

    description: str
    open: Callable[[ConsoleApp, Any], Awaitable[None]]
    #: The docs' picture's terminal size (a panel with a few rows needs no 40-row screen).
    size: tuple[int, int] = (120, 40)


async def _nothing(app: ConsoleApp, pilot: Any) -> None:
    return None


def _select(table: Any, wanted: Callable[[Any], bool], what: str) -> None:
    for index, row in enumerate(table.rows):
        if wanted(row):
            table.move_cursor(index)
            return
    raise ScreenshotError(f"no {what} on screen to open")


def _first_pod_of(app: ConsoleApp, name: str) -> None:
    app.resources.table.focus()
    _select(app.resources.table, lambda row: f"/{name}-" in row.key or row.key.startswith(f"{name}-"),
            f"pod of {name!r}")


def _zoom(panel_attr: str) -> Callable[[ConsoleApp, Any], Awaitable[None]]:
    async def open_view(app: ConsoleApp, pilot: Any) -> None:
        panel = getattr(app, panel_attr)
        panel.table.focus()
        if panel.table.rows:
            panel.table.move_cursor(0)
        await pilot.pause()
        app.action_toggle_maximise()
    return open_view


async def _advance(app: ConsoleApp, pilot: Any, seconds: float, step: float = 0.5) -> None:
    """Let ``seconds`` of simulated time pass with the app handling its messages."""
    for _ in range(int(seconds / step)):
        await app.cluster.clock.advance(step)
        await pilot.pause()


async def _faults(app: ConsoleApp, pilot: Any) -> None:
    """A stopped kubelet: after the 40 s lease and the node controller's grace the node is NotReady."""
    await app.cluster.faults.apply("kubelet-stop", "worker-3")
    await _advance(app, pilot, 60.0)
    app.faults.table.focus()


async def _describe(app: ConsoleApp, pilot: Any) -> None:
    _first_pod_of(app, "web")
    await pilot.pause()
    app.action_describe()


async def _yaml(app: ConsoleApp, pilot: Any) -> None:
    _first_pod_of(app, "web")
    await pilot.pause()
    app.action_yaml()


async def _chain(app: ConsoleApp, pilot: Any) -> None:
    app.resources.switch_kind("deploy")
    await pilot.pause()
    app.render_pending(force=True)
    _select(app.resources.table, lambda row: row.key.endswith("/web") or row.key == "web", "Deployment web")
    await pilot.pause()
    app.action_chain()


async def _matrix(app: ConsoleApp, pilot: Any) -> None:
    table = app.scheduling.table
    table.focus()
    _select(table, lambda row: "web-" in row.key, "scheduling attempt of a web pod")
    await pilot.pause()
    app.action_open_selection()


async def _manifest(app: ConsoleApp, pilot: Any) -> None:
    table = app.manifests.table
    table.focus()
    _select(table, lambda row: "deployment" in row.key, "manifest file deployment.yaml")
    await pilot.pause()
    app.action_describe()


async def _proxy(app: ConsoleApp, pilot: Any) -> None:
    _first_pod_of(app, "web")
    await pilot.pause()
    app.action_proxy_rules()


async def _keys(app: ConsoleApp, pilot: Any) -> None:
    app.action_help()


async def _apilog(app: ConsoleApp, pilot: Any) -> None:
    app.action_api_log()


#: Every view the command can render, by name; docs/tour.md shows each of them.
VIEWS: dict[str, View] = {
    "dashboard": View("every panel at once: the default screen", _nothing, size=(150, 45)),
    "resources": View("the Resources panel zoomed (z): kubectl's columns for one kind", _zoom("resources")),
    "events": View("the Events panel zoomed: every component's Events, newest first", _zoom("events_panel")),
    "leases": View("the Leases panel zoomed: leaders and heartbeats", _zoom("leases"), size=(120, 24)),
    "etcd": View("the etcd panel zoomed: members, leader, quorum", _zoom("etcd"), size=(120, 24)),
    "scheduling": View("the Scheduling panel zoomed: pending pods and recent attempts", _zoom("scheduling"),
                       size=(120, 24)),
    "manifests": View("the Manifests panel zoomed: each file of the watched folder", _zoom("manifests"),
                      size=(120, 24)),
    "faults": View("the dashboard a minute after kubelet-stop on worker-3: the fault, the node NotReady", _faults,
                   size=(150, 45)),
    "describe": View("describe (d) on a pod: its YAML, events and owner chain", _describe),
    "yaml": View("YAML (y) of a pod, as stored", _yaml),
    "chain": View("the chain view (c): a Deployment through its ReplicaSets and pods", _chain),
    "matrix": View("a scheduling attempt's node x plugin matrix (Enter on Scheduling)", _matrix),
    "manifest": View("one manifest file's state (Enter on Manifests)", _manifest, size=(120, 24)),
    "proxy": View("a node's kube-proxy rules (p)", _proxy),
    "apilog": View("the API request log (a)", _apilog),
    "keys": View("every key and its binding id (?)", _keys),
}


def parse_size(text: str) -> tuple[int, int]:
    """``120x40`` -> (120, 40); the console needs at least 80x24."""
    try:
        width, height = (int(part) for part in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"size must be COLUMNSxROWS such as 120x40, got {text!r}") from None
    if width < 80 or height < 24 or width > 400 or height > 200:
        raise argparse.ArgumentTypeError(f"size must be between 80x24 and 400x200, got {text!r}")
    return width, height


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE.svg", help="where to write the SVG")
    p.add_argument("--size", type=parse_size, default=(120, 40), help="terminal size COLUMNSxROWS (default 120x40)")
    p.add_argument("--theme", default="kconsole-dark", help="theme name or themes/*.yaml file (default kconsole-dark)")
    p.add_argument("--view", default="dashboard", choices=sorted(VIEWS), help="what to show (default dashboard)")
    p.add_argument("--dir", default="examples/quickstart",
                   help="manifest folder applied to the fresh cluster (default examples/quickstart)")
    p.add_argument("--nodes", type=int, default=3, help="worker nodes (default 3)")
    p.add_argument("--seed", type=int, default=1, help="seed for names, ties and jitter (default 1)")


async def _until(clock: VirtualClock, pilot: Any, done: Callable[[], bool], what: str,
                 limit: float = SETTLE_LIMIT, step: float = 0.1) -> None:
    """Move simulated time forward until ``done()``, letting the app handle its messages between steps."""
    spent = 0.0
    while True:
        await pilot.pause()
        if pilot.app.ready:
            pilot.app.render_pending()
        if done():
            return
        if pilot.app.boot_error:
            raise ScreenshotError(pilot.app.boot_error)
        if spent >= limit:
            raise ScreenshotError(f"{what} not reached within {limit:g} simulated seconds")
        await clock.advance(step)
        spent += step


def _settled(app: ConsoleApp, folder: Path | None) -> Callable[[], bool]:
    """True once the nodes are Ready, the folder applied, and the pods all run and stopped changing."""
    last: list[Any] = [None, 0.0]

    def check() -> bool:
        ready, total = app.model.node_counts()
        pods = [row.state for row in app.resources.table.rows]
        files = getattr(getattr(app.cluster, "sync", None), "files", None) or {}
        applied = folder is None or (bool(files) and all(f.status != "pending" for f in files.values()))
        state = (ready, total, tuple(pods))
        now = app.model.clock.now()
        if state != last[0]:
            last[0], last[1] = state, now
            return False
        return (total > 0 and ready == total and applied and bool(pods)
                and all(s == "running" for s in pods) and now - last[1] >= SETTLED_FOR)

    return check


async def render(view: str, size: tuple[int, int] = (120, 40), theme: str = "kconsole-dark",
                 folder: Path | None = None, nodes: int = 3, seed: int = 1) -> str:
    """The SVG of ``view`` over a fresh cluster on a virtual clock."""
    from kconsole.clock import VirtualClock
    from kconsole.tui.app import ConsoleApp

    if view not in VIEWS:
        raise ScreenshotError(f"unknown view {view!r} (known: {', '.join(sorted(VIEWS))})")
    with tempfile.TemporaryDirectory(prefix="kconsole-screenshot-") as data:
        clock = VirtualClock()
        # A short node-monitor period: whether the node controller's first pass sees the nodes
        # otherwise depends on which of two concurrent writes the store acknowledges first.
        config = ClusterConfig(nodes=nodes, seed=seed, port=0, data_dir=Path(data), manifests=folder,
                               controllers={"node-lifecycle-controller": {"monitor_period": 0.1}})
        config.validate()
        app = ConsoleApp(Cluster(config, clock=clock), theme=theme, live=False, watch_themes=False)
        async with app.run_test(size=size) as pilot:
            try:
                await pilot.pause()
                refused = [e for e in app.theme_errors if theme in e]
                if refused:  # the console falls back to another theme; a picture must not
                    raise ScreenshotError(re.sub(r"; using [\w-]+", "", refused[0]))
                await _until(clock, pilot, lambda: app.ready, "the cluster's start")
                await _until(clock, pilot, _settled(app, folder), "every pod Running", step=0.5)
                app.timeline.show_volatile = False  # which time bucket each write falls in follows I/O timing
                await app.sample_now()
                app.etcd.show_volatile = False  # file sizes and Raft indexes follow real I/O timing
                for watched in app.model.watched.values():  # added/modified marks run out on the wall clock
                    watched.wall = lambda: float("inf")
                app.render_pending(force=True)
                await pilot.pause()
                await VIEWS[view].open(app, pilot)
                # Views that load (chain, API log) fill in over a few turns of the loop.
                for _ in range(5):
                    await clock.advance(0.5)
                    await pilot.pause()
                app.render_pending(force=True)
                await pilot.pause()
                svg = app.export_screenshot(title=f"kconsole · {view}")
            finally:
                await _drive_stop(app, clock)
    # The header names the data folder: show the one `kconsole DIR` uses, not this run's temporary one.
    shown = f"{folder}/{DATA_DIR_NAME}" if folder is not None else DATA_DIR_NAME
    svg = svg.replace(str(Path(data).resolve()), shown).replace(data, shown)
    # Rich names the SVG's styles after a hash that varies run to run: a fixed name keeps a
    # regenerated picture byte-identical when nothing on screen changed.
    return re.sub(r"\bterminal-\d+", f"terminal-{view}", svg)


async def _drive_stop(app: ConsoleApp, clock: VirtualClock) -> None:
    """Stop the cluster while moving simulated time: a member's last heartbeat and lease release wait on it."""
    task = asyncio.ensure_future(app.shutdown())
    spent = 0.0
    while not task.done() and spent < 60.0:
        await clock.advance(0.1)
        spent += 0.1
    await task


def run(args: argparse.Namespace) -> int:
    out = Path(args.file)
    if out.suffix.lower() != ".svg":
        print(f"kconsole screenshot: {out} must end in .svg", file=sys.stderr)
        return 2
    folder = Path(args.dir) if args.dir else None
    if folder is not None and not folder.is_dir():
        print(f"kconsole screenshot: {folder} is not a folder (--dir)", file=sys.stderr)
        return 2
    try:
        svg = asyncio.run(render(args.view, args.size, args.theme, folder, args.nodes, args.seed))
    except (ScreenshotError, ConfigError) as err:
        print(f"kconsole screenshot: {err}", file=sys.stderr)
        return 1
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(svg, encoding="utf-8")
    print(f"{out}: {args.view}, {args.size[0]}x{args.size[1]}, theme {args.theme}")
    return 0
