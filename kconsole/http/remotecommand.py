"""The remotecommand protocol over WebSocket (``v5.channel.k8s.io``, ``v4.channel.k8s.io``): how
kubectl 1.32 (WebSockets first) and the official Python client's ``stream()`` run exec and attach.

Every message is binary: one channel byte then data. Channel 0 is stdin (client to server), 1
stdout, 2 stderr, 3 the error channel (one metav1.Status JSON as the process ends: Success, or
Failure with reason NonZeroExitCode and the exit code as the ExitCode cause), 4 terminal resize
(``{"Width":..,"Height":..}``); v5 adds 255, a client's "close stream" signal (``[255, 0]`` ends
stdin). As upstream's server, an empty message on the lowest open output channel says the streams
are ready, and the server closes the connection after the status.

SPDY/3.1 (kubectl's fallback when the WebSocket upgrade fails) is not spoken: a request that gets
that far is told so with a 400, after the same authorization and pod checks as a WebSocket one.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from aiohttp import WSMsgType, web

from kconsole.api.types import ExecStream, StatusError

log = logging.getLogger(__name__)

#: Wall seconds the server waits for the client's answer to its close frame (a shutdown bound).
CLOSE_WAIT_S = 2.0
PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")
STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255


def _flag(query: Mapping[str, str], key: str) -> bool:
    return str(query.get(key, "")).lower() in ("true", "1")


def options(query: Any, subresource: str) -> dict[str, Any]:
    """PodExecOptions / PodAttachOptions from the query, as the API server decodes them."""
    kinds = {"exec": "PodExecOptions", "attach": "PodAttachOptions", "portforward": "PodPortForwardOptions"}
    body: dict[str, Any] = {"kind": kinds.get(subresource, "PodExecOptions"), "apiVersion": "v1"}
    if subresource == "portforward":
        ports = [p for part in (query.getall("ports", []) if hasattr(query, "getall") else [])
                 for p in str(part).split(",") if p]
        if ports:
            body["ports"] = [int(p) if p.isdigit() else p for p in ports]
        return body
    for key in ("stdin", "stdout", "stderr", "tty"):
        body[key] = _flag(query, key)
    if query.get("container"):
        body["container"] = query["container"]
    if subresource == "exec":
        body["command"] = list(query.getall("command", [])) if hasattr(query, "getall") else []
    return body


def exit_status(command: list[str], code: int) -> dict[str, Any]:
    """The error channel's Status for an exit code (containerd's CodeExitError text inside)."""
    if code == 0:
        return {"metadata": {}, "status": "Success"}
    return {"metadata": {}, "status": "Failure",
            "message": f"command terminated with non-zero exit code: error executing command "
                       f"[{' '.join(command)}], exit code {code}",
            "reason": "NonZeroExitCode",
            "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]}}


def failure_status(err: StatusError) -> dict[str, Any]:
    status = dict(err.status)
    status.pop("kind", None)
    status.pop("apiVersion", None)
    status["metadata"] = {}
    return status


def wants_websocket(request: web.BaseRequest) -> bool:
    return request.method == "GET" and request.headers.get("Upgrade", "").lower() == "websocket"


def offered(request: web.BaseRequest) -> list[str]:
    header = request.headers.get("Sec-WebSocket-Protocol", "")
    return [p.strip() for p in header.split(",") if p.strip()]


def stdin_reader(queue: asyncio.Queue[bytes | None]) -> Callable[[], Awaitable[bytes | None]]:
    """The process's stdin over a queue the connection fills; None (the client closed it) ends it
    for good, as a closed pipe stays closed."""
    ended = False

    async def read() -> bytes | None:
        nonlocal ended
        if ended:
            return None
        chunk = await queue.get()
        ended = chunk is None
        return chunk
    return read


def resize(process: ExecStream, message: bytes) -> None:
    """Apply a terminal size message (``{"Width":..,"Height":..}``); a malformed one is ignored."""
    try:
        size = json.loads(message)
        process.resize(int(size.get("Width", 0)), int(size.get("Height", 0)))
    except (ValueError, TypeError, AttributeError):
        pass


async def serve(request: web.BaseRequest, process: ExecStream, body: dict[str, Any]) -> web.WebSocketResponse:
    """Pump ``process``'s streams over the upgraded connection until it ends, then send its status."""
    ws = web.WebSocketResponse(protocols=PROTOCOLS, autoping=True, max_msg_size=0, timeout=CLOSE_WAIT_S)
    await ws.prepare(request)
    stdin: asyncio.Queue[bytes | None] = asyncio.Queue()
    read = stdin_reader(stdin)

    # As the kubelet, only the streams the request asked for are opened; the rest is discarded.
    closed = {channel for channel, key in ((STDOUT, "stdout"), (STDERR, "stderr")) if not body.get(key)}

    async def write(channel: int, data: bytes) -> None:
        if not ws.closed and channel not in closed:
            await ws.send_bytes(bytes((channel,)) + data)

    async def receive() -> None:
        async for msg in ws:
            if msg.type == WSMsgType.BINARY:
                data: bytes = msg.data
            elif msg.type == WSMsgType.TEXT:
                data = msg.data.encode("latin-1", "replace")
            else:
                continue
            if not data:
                continue
            channel, payload = data[0], data[1:]
            if channel == STDIN and payload:
                stdin.put_nowait(payload)
            elif channel == RESIZE:
                resize(process, payload)
            elif channel == CLOSE and payload[:1] == bytes((STDIN,)):
                stdin.put_nowait(None)
        stdin.put_nowait(None)

    first = STDOUT if body.get("stdout") else STDERR if body.get("stderr") else ERROR
    await ws.send_bytes(bytes((first,)))
    receiver = asyncio.create_task(receive())
    runner = asyncio.create_task(process.run(read, write))
    try:
        done, _ = await asyncio.wait({runner, receiver}, return_when=asyncio.FIRST_COMPLETED)
        if runner not in done:
            # The client went away: the process is ended with it.
            runner.cancel()
            return ws
        try:
            status = exit_status(process.command, runner.result())
        except StatusError as err:
            status = failure_status(err)
        except Exception as err:  # noqa: BLE001 - the client gets an InternalError Status, the log the traceback
            log.exception("exec of %s failed", process.command)
            status = failure_status(StatusError.internal(f"error executing command in container: {err}"))
        await write(ERROR, json.dumps(status, separators=(",", ":")).encode())
        await ws.close()
    finally:
        for task in (runner, receiver):
            if not task.done():
                task.cancel()
        await asyncio.gather(runner, receiver, return_exceptions=True)
    return ws
