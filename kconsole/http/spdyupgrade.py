"""exec, attach and port-forward over a plain ``SPDY/3.1`` upgrade: kubectl's fallback when the
WebSocket upgrade fails, what it uses with ``KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false`` or
``KUBECTL_PORT_FORWARD_WEBSOCKETS=false``, and what older clients speak.

The API server answers ``101 Switching Protocols`` with the negotiated ``X-Stream-Protocol-Version``
(``v4.channel.k8s.io`` for exec and attach, ``portforward.k8s.io`` for port-forward) and takes the
connection over from aiohttp. For exec the client opens one SPDY stream per standard stream
(header ``streamtype``: ``error``, ``stdin``, ``stdout``, ``stderr``, ``resize``); once all it
asked for exist the process runs, and as it ends its Status goes out on the error stream (v4's
JSON), every stream is finished and the connection closed, as the kubelet's remotecommand server does.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp import web

from kconsole.api.types import ExecStream, PortForwardStream, StatusError
from kconsole.http import portforward, remotecommand, spdy

EXEC_PROTOCOL = "v4.channel.k8s.io"
PORT_FORWARD_PROTOCOL = "portforward.k8s.io"


def wants_spdy(request: web.BaseRequest) -> bool:
    return request.headers.get("Upgrade", "").lower().startswith("spdy/3")


def offered(request: web.BaseRequest) -> list[str]:
    return [v.strip() for value in request.headers.getall("X-Stream-Protocol-Version", [])
            for v in value.split(",") if v.strip()]


class _Connection:
    """The connection after the 101: aiohttp hands every byte it reads to :meth:`feed_data`."""

    def __init__(self, request: web.BaseRequest) -> None:
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.transport = request.transport
        protocol = request.protocol
        protocol.set_parser(self)  # type: ignore[arg-type]

    def feed_data(self, data: bytes) -> tuple[bool, bytes]:
        self.queue.put_nowait(bytes(data))
        return False, b""

    def feed_eof(self) -> None:
        self.queue.put_nowait(None)

    async def recv(self) -> bytes | None:
        return await self.queue.get()

    async def send(self, data: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


async def _switch(request: web.BaseRequest, protocol: str) -> tuple[web.StreamResponse, _Connection]:
    resp = web.StreamResponse(status=101, headers={"Connection": "Upgrade", "Upgrade": "SPDY/3.1",
                                                   "X-Stream-Protocol-Version": protocol})
    resp.force_close()
    conn = _Connection(request)
    await resp.prepare(request)
    return resp, conn


async def serve_port_forward(request: web.BaseRequest, forwarder: PortForwardStream) -> web.StreamResponse:
    resp, conn = await _switch(request, PORT_FORWARD_PROTOCOL)
    try:
        await portforward.tunnel(conn.recv, conn.send, forwarder)
    finally:
        conn.close()
    return resp


async def serve_exec(request: web.BaseRequest, process: ExecStream, body: dict[str, Any]) -> web.StreamResponse:
    resp, conn = await _switch(request, EXEC_PROTOCOL)
    session = spdy.Session()
    wanted = {"error"} | {k for k in ("stdin", "stdout") if body.get(k)}
    if body.get("stderr") and not body.get("tty"):
        wanted.add("stderr")
    if body.get("tty"):
        wanted.add("resize")
    streams: dict[str, int] = {}
    stdin: asyncio.Queue[bytes | None] = asyncio.Queue()
    ready = asyncio.Event()
    resize_buffer = b""

    async def receive() -> None:
        nonlocal resize_buffer
        while (chunk := await conn.recv()) is not None:
            try:
                frames = session.feed(chunk)
            except spdy.ProtocolError:
                break
            for frame in frames:
                if frame.kind == "syn":
                    await conn.send(session.reply(frame.stream))
                    streams[frame.headers.get("streamtype", "")] = frame.stream
                    if wanted <= set(streams):
                        ready.set()
                elif frame.kind == "ping":
                    await conn.send(session.ping(frame.stream))
                elif frame.kind == "data" and frame.stream == streams.get("stdin"):
                    if frame.data:
                        stdin.put_nowait(frame.data)
                    if frame.fin:
                        stdin.put_nowait(None)
                elif frame.kind == "data" and frame.stream == streams.get("resize"):
                    resize_buffer += frame.data
                    while b"\n" in resize_buffer:
                        line, resize_buffer = resize_buffer.split(b"\n", 1)
                        remotecommand.resize(process, line)
                elif frame.kind in ("goaway", "rst") and frame.stream in (0, streams.get("error")):
                    break
        stdin.put_nowait(None)

    read = remotecommand.stdin_reader(stdin)

    names = {remotecommand.STDOUT: "stdout", remotecommand.STDERR: "stderr"}

    async def write(channel: int, data: bytes) -> None:
        stream = streams.get(names.get(channel, ""))
        if stream is not None and data:
            await conn.send(session.data(stream, data))

    receiver = asyncio.create_task(receive())
    runner: asyncio.Task[int] | None = None
    try:
        waiting = asyncio.create_task(ready.wait())
        done, _ = await asyncio.wait({waiting, receiver}, return_when=asyncio.FIRST_COMPLETED)
        if waiting not in done:
            waiting.cancel()
            return resp
        runner = asyncio.create_task(process.run(read, write))
        done, _ = await asyncio.wait({runner, receiver}, return_when=asyncio.FIRST_COMPLETED)
        if runner not in done:
            return resp
        try:
            status = remotecommand.exit_status(process.command, runner.result())
        except StatusError as err:
            status = remotecommand.failure_status(err)
        except Exception as err:  # noqa: BLE001 - the client gets an InternalError Status, the log the traceback
            remotecommand.log.exception("exec of %s failed", process.command)
            status = remotecommand.failure_status(
                StatusError.internal(f"error executing command in container: {err}"))
        await conn.send(session.data(streams["error"], json.dumps(status, separators=(",", ":")).encode(),
                                     fin=True))
        for name in ("stdout", "stderr"):
            if name in streams:
                await conn.send(session.data(streams[name], b"", fin=True))
    finally:
        for task in (runner, receiver):
            if task is not None and not task.done():
                task.cancel()
        await asyncio.gather(*(t for t in (runner, receiver) if t is not None), return_exceptions=True)
        conn.close()
    return resp
