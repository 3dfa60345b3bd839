"""``kconsole [DIR]``: build the cluster from the flags, open the console, stop everything on quit.

The console is drawn before the cluster starts (the app starts it after the first paint), so the
first frame does not wait for etcd, the API server or the nodes. Log records go to
``<data dir>/console.log``: the terminal belongs to the console.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from pathlib import Path
from typing import Any

from kconsole.cluster import Cluster, ClusterConfig, ConfigError
from kconsole.tui.keymap import KeymapError, validate_keymap


def console_settings(config: ClusterConfig, args: Any) -> dict[str, Any]:
    """Theme, readonly and keymap from the config's ``console:`` section, flags winning."""
    section = dict(config.console or {})
    unknown = set(section) - {"theme", "readonly", "keymap", "refresh"}
    if unknown:
        raise ConfigError(f"console: unknown key(s) {', '.join(sorted(unknown))} (known: keymap, readonly, refresh, theme)")
    refresh = section.get("refresh", 0.25)
    if not isinstance(refresh, (int, float)) or not 0.05 <= refresh <= 5:
        raise ConfigError(f"console.refresh must be seconds between 0.05 and 5, got {refresh!r}")
    return {
        "theme": getattr(args, "theme", None) or section.get("theme"),
        "readonly": bool(getattr(args, "readonly", False) or section.get("readonly", False)),
        "keymap_overrides": validate_keymap(section.get("keymap")),
        "refresh_interval": float(refresh),
    }


def _log_to_file(data_dir: Path | None) -> None:
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    if data_dir is not None:
        try:
            data_dir.mkdir(parents=True, exist_ok=True)
            root.addHandler(logging.FileHandler(data_dir / "console.log", encoding="utf-8"))
            root.setLevel(logging.INFO)
            return
        except OSError:
            pass
    root.addHandler(logging.NullHandler())


def _exit_on_signals(app: Any) -> list[signal.Signals]:
    """SIGTERM (``kill``, ``timeout``) and SIGHUP (the terminal closed) quit like ``q``: the cluster
    stops cleanly and the terminal is given back in its normal mode. Their default action killed
    the process on the spot, leaving the terminal in the alternate screen with mouse reporting on."""
    loop = asyncio.get_running_loop()
    installed = []
    for sig in (signal.SIGTERM, signal.SIGHUP):
        try:
            loop.add_signal_handler(sig, app.exit, 128 + sig)
        except (NotImplementedError, RuntimeError, ValueError):
            continue
        installed.append(sig)
    return installed


async def run_app(config: ClusterConfig, settings: dict[str, Any]) -> int:
    from kconsole.tui.app import ConsoleApp

    cluster = Cluster(config)
    app = ConsoleApp(cluster, **settings)
    stops = _exit_on_signals(app)
    try:
        result = await app.run_async()
    finally:
        for sig in stops:
            asyncio.get_running_loop().remove_signal_handler(sig)
        await app.shutdown()  # on_unmount did it already unless the app never mounted
    if app.boot_error:
        print(f"kconsole: {app.boot_error}", file=sys.stderr)
        return 1
    return int(result or 0)


def run_console(args: argparse.Namespace) -> int:
    try:
        config = ClusterConfig.from_args(args)
        settings = console_settings(config, args)
    except (ConfigError, KeymapError) as err:
        print(f"kconsole: {err}", file=sys.stderr)
        return 2
    folder = Path(getattr(args, "dir", ".") or ".")
    if not folder.is_dir():
        print(f"kconsole: {folder} is not a folder", file=sys.stderr)
        return 2
    _log_to_file(None if config.ephemeral else config.data_dir)
    from kconsole.api import gcpolicy

    gcpolicy.install()  # the console's process serves the API: keep full GC passes off the frame path
    return asyncio.run(run_app(config, settings))
