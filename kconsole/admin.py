"""The admin-only endpoint of a running cluster, for ``kconsole fault ...`` and other scripts.

It is a small aiohttp server on a loopback port, separate from the API server: it acts on
component handles (the fault catalog), so it keeps working while etcd has no quorum and the API
server can write nothing. A loopback port with a token file was chosen over a unix socket because
socket paths are limited to 108 bytes and data folders can be deep.

Discovery and authentication: at start it writes ``DATA_DIR/admin.json`` (mode 0600, replaced
atomically) holding ``{"url", "token", "pid"}``; a caller who can read the file may call, anyone
else gets 401. The file is removed on stop.

Routes (JSON in and out; errors are ``{"error": message}`` with 400/401/404):

* ``GET /v1/faults/types`` — the catalog
* ``GET /v1/faults`` — active faults
* ``POST /v1/faults`` ``{"type", "target", "params"?}`` — apply; 201 with the fault (its ``id``)
* ``DELETE /v1/faults/{id}`` — heal one; ``DELETE /v1/faults`` — heal all
* ``GET /v1/status`` — pid, data folder, etcd quorum, active fault count
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import secrets
import tempfile
from pathlib import Path
from typing import Any

from aiohttp import web

from kconsole.faultcmd import ADMIN_FILE
from kconsole.faults import FaultCatalog, FaultError

log = logging.getLogger(__name__)


class AdminServer:
    def __init__(self, cluster: Any, *, address: str = "127.0.0.1", port: int = 0) -> None:
        self.cluster = cluster
        self.address = address
        self.port = port
        self.token = secrets.token_urlsafe(32)
        self.url = ""
        self._runner: web.AppRunner | None = None
        self._file: Path | None = None

    @property
    def faults(self) -> FaultCatalog:
        faults = getattr(self.cluster, "faults", None)
        if faults is None:
            faults = self.cluster.faults = FaultCatalog(self.cluster)
        return faults

    async def start(self) -> None:
        app = web.Application(middlewares=[self._auth])
        app.router.add_get("/v1/status", self._status)
        app.router.add_get("/v1/faults/types", self._types)
        app.router.add_get("/v1/faults", self._active)
        app.router.add_post("/v1/faults", self._apply)
        app.router.add_delete("/v1/faults", self._heal_all)
        app.router.add_delete("/v1/faults/{id}", self._heal)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.address, self.port)
        await site.start()
        server = site._server
        assert server is not None and server.sockets
        port = server.sockets[0].getsockname()[1]
        self.url = f"http://{self.address}:{port}"
        self._file = Path(self.cluster.data_dir) / ADMIN_FILE
        write_private(self._file, json.dumps({"url": self.url, "token": self.token, "pid": os.getpid()}))

    async def stop(self) -> None:
        if self._file is not None:
            self._file.unlink(missing_ok=True)
            self._file = None
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    # ------------------------------------------------------------------ handlers

    @web.middleware
    async def _auth(self, request: web.Request, handler: Any) -> web.StreamResponse:
        given = request.headers.get("Authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {self.token}".encode()):
            return _error(401, "missing or wrong admin token (read it from the data folder's admin.json)")
        try:
            return await handler(request)
        except FaultError as err:
            return _error(400, str(err))

    async def _status(self, request: web.Request) -> web.Response:
        etcd = getattr(self.cluster, "etcd", None)
        quorum = etcd.quorum() if etcd is not None else None
        return web.json_response({
            "pid": os.getpid(), "data_dir": str(self.cluster.data_dir), "active_faults": len(self.faults.active),
            "etcd": None if quorum is None else {"members": quorum.members, "alive": quorum.alive,
                                                  "needed": quorum.needed, "ok": quorum.ok},
        })

    async def _types(self, request: web.Request) -> web.Response:
        return web.json_response([t.to_dict() for t in self.faults.types()])

    async def _active(self, request: web.Request) -> web.Response:
        return web.json_response([f.to_dict() for f in self.faults.active.values()])

    async def _apply(self, request: web.Request) -> web.Response:
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            return _error(400, "request body must be JSON: {\"type\": ..., \"target\": ..., \"params\": {...}}")
        if not isinstance(body, dict) or not isinstance(body.get("type"), str):
            return _error(400, "request body needs a string \"type\"")
        params = body.get("params") or {}
        if not isinstance(params, dict):
            return _error(400, "\"params\" must be an object of strings")
        fault = await self.faults.apply(body["type"], str(body.get("target") or ""),
                                        {str(k): str(v) for k, v in params.items()})
        return web.json_response(fault.to_dict(), status=201)

    async def _heal(self, request: web.Request) -> web.Response:
        fault_id = request.match_info["id"]
        if fault_id not in self.faults.active:
            known = ", ".join(self.faults.active) or "none"
            return _error(404, f"no active fault {fault_id!r} (active: {known})")
        return web.json_response((await self.faults.heal(fault_id)).to_dict())

    async def _heal_all(self, request: web.Request) -> web.Response:
        return web.json_response({"healed": [f.to_dict() for f in await self.faults.heal_all()]})


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


def write_private(path: Path, text: str) -> None:
    """Write a file only its owner can read (0600), replacing any old one atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
