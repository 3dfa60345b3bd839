"""pods/portforward over WebSocket, in the two shapes clients use.

* ``SPDY/3.1+portforward.k8s.io`` (kubectl 1.31+): SPDY tunnelled through the WebSocket's binary
  messages. For each connection kubectl accepts locally it opens an error stream and a data stream
  (headers ``streamtype``, ``port``, ``requestid``); the data stream carries the bytes both ways and
  a refused port is reported as text on the error stream, as the kubelet's portforward handler does.
* ``v5.channel.k8s.io``, ``v4.channel.k8s.io``, ``portforward.k8s.io`` (the Python client's ``portforward()``): the ports
  come in the query (``ports=80``); port *i* has data channel 2i and error channel 2i+1, each opened
  by a first message carrying the port number (two bytes, little endian).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from aiohttp import WSMsgType, web

from kconsole.api.types import PodConnection, PortForwardStream
from kconsole.http import spdy

TUNNEL = "SPDY/3.1+portforward.k8s.io"
CHANNELS = ("v5.channel.k8s.io", "v4.channel.k8s.io", "portforward.k8s.io")
#: Wall seconds the server waits for the client's answer to its close frame (a shutdown bound).
CLOSE_WAIT_S = 2.0
PROTOCOLS = (TUNNEL, *CHANNELS)


@dataclass(slots=True)
class _Request:
    """One forwarded connection: its two SPDY streams and the pod-side connection."""

    port: int = 0
    data: int = 0
    error: int = 0
    conn: PodConnection | None = None
    done: bool = False
    streams: set[int] = field(default_factory=set)


async def serve(request: web.BaseRequest, forwarder: PortForwardStream) -> web.WebSocketResponse:
    ws = web.WebSocketResponse(protocols=PROTOCOLS, autoping=True, max_msg_size=0, timeout=CLOSE_WAIT_S)
    await ws.prepare(request)
    if ws.ws_protocol == TUNNEL:
        async def recv() -> bytes | None:
            async for msg in ws:
                if msg.type == WSMsgType.BINARY:
                    return bytes(msg.data)
            return None

        async def send(data: bytes) -> None:
            await _send(ws, data)
        await tunnel(recv, send, forwarder)
        await ws.close()
    else:
        await _channels(ws, forwarder, request.query.getall("ports", []))
    return ws


async def _send(ws: web.WebSocketResponse, data: bytes) -> None:
    if not ws.closed:
        await ws.send_bytes(data)


async def tunnel(recv: Callable[[], Awaitable[bytes | None]], send: Callable[[bytes], Awaitable[None]],
                 forwarder: PortForwardStream) -> None:
    """Serve port-forward's SPDY streams over a byte transport (a WebSocket, or an upgraded connection)."""
    session = spdy.Session()
    requests: dict[str, _Request] = {}
    by_stream: dict[int, _Request] = {}
    while (chunk := await recv()) is not None:
        try:
            frames = session.feed(chunk)
        except spdy.ProtocolError:
            break
        for frame in frames:
            if frame.kind == "ping":
                await send(session.ping(frame.stream))
            elif frame.kind == "goaway":
                return
            elif frame.kind == "syn":
                await send(session.reply(frame.stream))
                rid = frame.headers.get("requestid", "")
                req = requests.setdefault(rid, _Request())
                by_stream[frame.stream] = req
                req.streams.add(frame.stream)
                port = frame.headers.get("port", "")
                req.port = int(port) if port.isdigit() else 0
                if frame.headers.get("streamtype") == "error":
                    req.error = frame.stream
                else:
                    req.data = frame.stream
                if req.data and req.error and req.conn is None and not req.done:
                    target = forwarder.connect(req.port)
                    if isinstance(target, str):
                        req.done = True
                        await send(session.data(req.error, target.encode(), fin=True))
                        await send(session.data(req.data, b"", fin=True))
                    else:
                        req.conn = target
            elif frame.kind == "data":
                req = by_stream.get(frame.stream)
                if req is None or frame.stream != req.data or req.done:
                    continue
                if req.conn is not None and frame.data:
                    answer = req.conn.feed(frame.data)
                    if answer:
                        await send(session.data(req.data, answer))
                    if req.conn.closed:
                        req.done = True
                        await send(session.data(req.data, b"", fin=True))
                        await send(session.data(req.error, b"", fin=True))
                if frame.fin and not req.done:
                    req.done = True
                    await send(session.data(req.data, b"", fin=True))
                    await send(session.data(req.error, b"", fin=True))
            elif frame.kind == "rst":
                req = by_stream.pop(frame.stream, None)
                if req is not None:
                    req.done = True


async def _channels(ws: web.WebSocketResponse, forwarder: PortForwardStream, ports: list[str]) -> None:
    numbers = [int(p) for part in ports for p in part.split(",") if p.strip().isdigit()]
    conns: list[PodConnection | None] = []
    for index, port in enumerate(numbers):
        prefix = port.to_bytes(2, "little")
        await _send(ws, bytes((2 * index,)) + prefix)
        await _send(ws, bytes((2 * index + 1,)) + prefix)
        target = forwarder.connect(port)
        if isinstance(target, str):
            await _send(ws, bytes((2 * index + 1,)) + target.encode())
            conns.append(None)
        else:
            conns.append(target)
    if not any(conns):
        await ws.close()
        return
    async for msg in ws:
        if msg.type != WSMsgType.BINARY or not msg.data:
            continue
        channel, payload = msg.data[0], msg.data[1:]
        index = channel // 2
        if channel % 2 or index >= len(conns) or not payload:
            continue
        conn = conns[index]
        if conn is None or conn.closed:
            continue
        answer = conn.feed(payload)
        if answer:
            await _send(ws, bytes((channel,)) + answer)
        if conn.closed:
            await ws.close()
            return
    await asyncio.sleep(0)
