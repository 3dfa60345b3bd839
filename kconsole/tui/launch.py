"""``kconsole [DIR]``: build the cluster from the flags, open the console, stop everything on quit.

The console is drawn before the cluster starts (the app starts it after the first paint), so the
first frame does not wait for etcd, the API server or the nodes. Log records go to
``<data dir>/console.log``: the terminal belongs to the console.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Any

from kconsole import exitguard
from kconsole.cluster import Cluster, ClusterConfig, ConfigError
from kconsole.preflight import StartError, check_data_folder, check_port
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
    """SIGTERM (``kill``, ``timeout``), SIGHUP (the terminal closed) and SIGINT quit like ``q``: the
    cluster stops cleanly and the terminal is given back in its normal mode. Their default action
    killed the process on the spot, leaving the terminal in the alternate screen with mouse
    reporting on. Plain handlers, not the loop's: they run even while the loop is stuck; a second
    signal ends the process at once."""
    loop = asyncio.get_running_loop()
    installed = []
    told: list[int] = []

    def on_signal(signum: int, _frame: object) -> None:
        if told:
            exitguard.exit_now(128 + signum)
        told.append(signum)
        exitguard.arm(128 + signum, _restore_terminal)
        loop.call_soon_threadsafe(app.exit, 128 + signum)

    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        try:
            signal.signal(sig, on_signal)
        except (ValueError, OSError):
            continue
        installed.append(sig)
    return installed


#: What leaves the console's terminal modes: the alternate screen, mouse reporting, bracketed paste,
#: a hidden cursor. Written when the watchdog must end the process before Textual could.
_TERMINAL_RESET = "\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?1015l\x1b[?2004l\x1b[?25h\x1b[?1049l"
_saved_tty: list[Any] = []


def _is_tty(stream: Any) -> bool:
    """A terminal (not the pipe ``kconsole web`` gives each browser session, nor a redirect)."""
    try:
        return bool(stream is not None and stream.isatty())
    except (OSError, ValueError, AttributeError):
        return False


def _save_terminal() -> None:
    _saved_tty.clear()
    if not _is_tty(sys.stdin):
        return
    try:
        import termios

        _saved_tty[:] = [termios.tcgetattr(sys.stdin.fileno())]
    except (ImportError, OSError, ValueError, AttributeError):
        _saved_tty.clear()


def _restore_terminal() -> None:
    if _is_tty(sys.__stdout__):
        try:
            os.write(sys.__stdout__.fileno(), _TERMINAL_RESET.encode())  # type: ignore[union-attr]
        except (OSError, ValueError):
            pass
    if _saved_tty:
        try:
            import termios

            termios.tcsetattr(sys.stdin.fileno(), termios.TCSANOW, _saved_tty[0])
        except (OSError, ValueError):
            pass


async def run_app(config: ClusterConfig | None, settings: dict[str, Any], drill: Any = None,
                  opened: list[Any] | None = None, cluster: Any = None) -> int:
    """The console until it quits. ``drill``: a callable building the
    :class:`~kconsole.tui.drillrun.DrillSession` on the running loop (its cluster is the console's).
    ``opened`` receives the app (the caller reads what it asked for on exit: a drill to open).
    ``cluster``: another cluster source than one built from ``config`` (``kconsole attach``)."""
    from kconsole.tui.app import ConsoleApp

    session = drill() if drill is not None else None
    if cluster is None:
        assert config is not None
        cluster = session.cluster if session is not None else Cluster(config)
    app = ConsoleApp(cluster, drill=session, **settings)
    if opened is not None:
        opened.append(app)
    app.on_exit_requested = lambda code: exitguard.arm(code, _restore_terminal)
    _exit_on_signals(app)  # kept until the process ends: a signal during the stop still counts
    try:
        result = await app.run_async()
    finally:
        exitguard.arm(1, _restore_terminal)  # however the app ended, the process ends soon
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
    try:  # before the terminal is taken: a busy folder or port is one line, not a screen
        if not config.ephemeral and config.data_dir is not None:
            check_data_folder(Path(config.data_dir))
        if config.http:
            check_port(config.address, config.port)
    except StartError as err:
        print(f"kconsole: {err}", file=sys.stderr)
        return 1
    _log_to_file(None if config.ephemeral else config.data_dir)
    _save_terminal()
    from kconsole import gcpolicy

    gcpolicy.install()  # the console's process serves the API: keep full GC passes off the frame path
    opened: list[Any] = []
    code = asyncio.run(run_app(config, settings, opened=opened))
    drill = getattr(opened[0], "next_drill", None) if opened else None
    if drill is None:
        return code
    # The palette's "Drill: NAME": this cluster stopped (its folder stays); the drill gets its own.
    return run_drill_console(argparse.Namespace(
        drill=drill, seed=None, speed=config.speed, port=config.port, address=config.address,
        insecure_http=not config.tls, data_dir=None, theme=getattr(args, "theme", None),
        readonly=getattr(args, "readonly", False)))


def run_drill_console(args: argparse.Namespace) -> int:
    """``kconsole drill NAME``: the console on the drill's own cluster, with the Drill panel.

    The drill's data folder (``--data-dir``, else a temporary one removed on exit) holds
    ``workspace/`` (the watched folder: the drill's manifests, and the learner's edits) and
    ``cluster/`` (the store). The clock is real, at ``--speed``."""
    import shutil
    import tempfile

    from kconsole.clock import RealClock
    from kconsole.drills.spec import DrillError, load, resolve
    from kconsole.tui.drillrun import DrillSession

    try:
        drill = load(resolve(args.drill))
    except DrillError as err:
        print("\n".join(err.errors), file=sys.stderr)
        return 2
    try:
        settings = console_settings(ClusterConfig(), args)
        if args.speed <= 0:
            raise ConfigError(f"speed must be positive, got {args.speed}")
    except (ConfigError, KeymapError) as err:
        print(f"kconsole: {err}", file=sys.stderr)
        return 2
    tempdir = None if args.data_dir else tempfile.mkdtemp(prefix=f"kconsole-drill-{drill.name}-")
    root = Path(args.data_dir or tempdir or ".")
    if root.is_dir() and any(root.iterdir()):
        print(f"kconsole drill: {root} is not empty; a drill's data folder must be new or empty", file=sys.stderr)
        return 2
    flags = {"port": args.port, "address": args.address, "tls": not args.insecure_http}
    try:
        if flags["port"]:
            check_port(args.address, args.port)
        ClusterConfig(**flags, **drill.cluster).validate()
    except (StartError, ConfigError) as err:
        print(f"kconsole: {err}", file=sys.stderr)
        return 1 if isinstance(err, StartError) else 2
    _save_terminal()
    from kconsole import gcpolicy

    gcpolicy.install()

    def session() -> DrillSession:
        built = DrillSession(drill, root, RealClock(speed=args.speed), seed=args.seed, http=True, **flags)
        _log_to_file(root)  # after the drill took the folder: it must find it empty
        return built

    try:
        return asyncio.run(run_app(ClusterConfig(), settings, drill=session))
    finally:
        if tempdir is not None:
            shutil.rmtree(tempdir, ignore_errors=True)
