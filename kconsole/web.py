"""``kconsole web [DIR]``: the same console in a browser, through textual-serve.

The page, its assets and its websocket are served on loopback only, behind a random token as
Jupyter does it: the printed URL carries ``?token=...``; the first request with it sets a cookie
(HttpOnly, SameSite=Strict) that the page's later requests (assets, the websocket) carry. Anything
without the token or the cookie gets 403. Each browser session runs ``kconsole DIR`` (same flags)
as a child process under Textual's web driver, so the cluster lives as long as the page is open;
one data folder runs one cluster, so a second session at the same time is refused with 409.
"""

from __future__ import annotations

import argparse
import asyncio
import hmac
import secrets
import shlex
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

#: The only address served: the console can delete and edit objects, so it is never on the network.
HOST = "127.0.0.1"
COOKIE = "kconsole_web_token"
#: Flags of ``kconsole web`` itself; every other flag is handed to each session's ``kconsole``.
WEB_FLAGS = ("web_port",)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from kconsole.cli import add_cluster_flags

    p.add_argument("dir", nargs="?", default=".", help="manifest folder (default: current folder)")
    add_cluster_flags(p)
    p.add_argument("--theme", default=None, help="theme name or themes/*.yaml file")
    p.add_argument("--readonly", action="store_true", help="disable the dangerous keys")
    p.add_argument("--web-port", type=int, default=8000, help="port of the web page on 127.0.0.1 (0 = any free port)")


def console_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> str:
    """The shell command each browser session runs: ``python -m kconsole`` with the same flags."""
    argv = [sys.executable, "-m", "kconsole"]
    for action in parser._actions:  # noqa: SLF001 - argparse has no public list of its actions
        if action.dest in ("help", *WEB_FLAGS) or not action.option_strings and action.dest != "dir":
            continue
        value = getattr(args, action.dest, None)
        if action.dest == "dir":
            argv.append(str(value or "."))
        elif isinstance(action, argparse._StoreTrueAction):  # noqa: SLF001
            if value:
                argv.append(action.option_strings[-1])
        elif value is not None and value != action.default:
            argv += [action.option_strings[-1], str(value)]
    return shlex.join(argv)


def token_guard(token: str) -> Callable[..., Awaitable[web.StreamResponse]]:
    """aiohttp middleware: the token in the query (then remembered in a cookie) or the cookie, else 403."""

    @web.middleware
    async def guard(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
                    ) -> web.StreamResponse:
        given = request.query.get("token", "")
        cookie = request.cookies.get(COOKIE, "")
        if given and hmac.compare_digest(given, token):
            response = await handler(request)
            response.set_cookie(COOKIE, token, httponly=True, samesite="Strict", path="/")
            return response
        if cookie and hmac.compare_digest(cookie, token):
            return await handler(request)
        return web.Response(status=403, text="kconsole web: open the URL printed by `kconsole web`, with its token\n")

    return guard


def make_server(command: str, token: str, port: int) -> Any:
    """A textual-serve Server for ``command`` behind :func:`token_guard`, one session at a time."""
    from textual_serve.server import Server

    class ConsoleServer(Server):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__(command, host=HOST, port=port, title="kconsole")
            self.sessions = 0

        async def _make_app(self) -> web.Application:
            app = await super()._make_app()
            app.middlewares.append(token_guard(token))
            return app

        async def on_startup(self, app: web.Application) -> None:
            """textual-serve prints its banner here; kconsole prints the URL itself."""

        async def handle_websocket(self, request: web.Request) -> web.StreamResponse:
            if self.sessions:
                return web.Response(status=409, text="kconsole web: the console is open in another tab or "
                                                     "browser (one cluster per data folder)\n")
            self.sessions += 1
            try:
                return await super().handle_websocket(request)
            finally:
                self.sessions -= 1

    return ConsoleServer()


async def serve(command: str, port: int, token: str | None = None, ready: Callable[[str], None] | None = None) -> None:
    """Serve until SIGINT/SIGTERM; ``ready`` gets the URL (with the token) once the port is bound."""
    token = token or secrets.token_urlsafe(24)
    server = make_server(command, token, port)
    runner = web.AppRunner(await server._make_app())  # noqa: SLF001 - textual-serve builds its app here
    await runner.setup()
    site = web.TCPSite(runner, HOST, port)
    await site.start()
    bound = runner.addresses[0][1]
    server.public_url = f"http://{HOST}:{bound}"
    url = f"{server.public_url}/?token={token}"
    (ready or (lambda u: print(f"kconsole web: open {u}", flush=True)))(url)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()


def run(args: argparse.Namespace) -> int:
    parser = argparse.ArgumentParser(prog="kconsole web")
    add_arguments(parser)
    try:
        import textual_serve  # noqa: F401
    except ImportError:
        print("kconsole web: the textual-serve package is missing (pip install textual-serve)", file=sys.stderr)
        return 2
    if not 0 <= args.web_port <= 65535:
        print(f"kconsole web: --web-port must be 0-65535, got {args.web_port}", file=sys.stderr)
        return 2
    try:
        asyncio.run(serve(console_command(args, parser), args.web_port))
    except OSError as err:
        print(f"kconsole web: cannot serve on {HOST}:{args.web_port}: {err.strerror or err}", file=sys.stderr)
        return 1
    return 0
