"""Just enough SPDY/3.1 for a server: the framing kubectl's port-forward speaks (tunnelled through
a WebSocket, ``SPDY/3.1+portforward.k8s.io``, since 1.31).

:class:`Session` parses the client's frames from the bytes it is fed (SYN_STREAM with their
zlib-compressed header blocks, DATA, RST_STREAM, PING, GOAWAY; SETTINGS and WINDOW_UPDATE are read
and ignored: nothing here sends more than a stream's initial 64 KiB window) and builds the server's
frames (SYN_REPLY, DATA, PING). Header blocks are compressed with the protocol's dictionary, one
zlib stream per direction for the whole session, as the draft 3 specification says.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

VERSION = 3
SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS, PING, GOAWAY, HEADERS, WINDOW_UPDATE = 1, 2, 3, 4, 6, 7, 8, 9
FLAG_FIN = 0x01

_WORDS = ("options head post put delete trace accept accept-charset accept-encoding accept-language "
          "accept-ranges age allow authorization cache-control connection content-base content-encoding "
          "content-language content-length content-location content-md5 content-range content-type date etag "
          "expect expires from host if-match if-modified-since if-none-match if-range if-unmodified-since "
          "last-modified location max-forwards pragma proxy-authenticate proxy-authorization range referer "
          "retry-after server te trailer transfer-encoding upgrade user-agent vary via warning www-authenticate "
          "method get status").split() + ["200 OK"] + "version HTTP/1.1 url public set-cookie keep-alive origin".split()
_TAIL = ("100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505"
         "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized"
         "403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable"
         "Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT"
         "chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,"
         "text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.")
#: The header compression dictionary of SPDY draft 3 (section 2.6.10.1): length-prefixed words, then text.
DICTIONARY = b"".join(struct.pack(">I", len(w)) + w.encode() for w in _WORDS) + _TAIL.encode()


class ProtocolError(Exception):
    pass


@dataclass(slots=True)
class Frame:
    """One frame from the client: kind "syn", "data", "rst", "ping", "goaway" (others are not reported)."""

    kind: str
    stream: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    data: bytes = b""
    fin: bool = False


class Session:
    """The server side of one SPDY connection (see the module docstring)."""

    def __init__(self) -> None:
        self._buffer = b""
        self._inflate = zlib.decompressobj(zdict=DICTIONARY)
        self._deflate = zlib.compressobj(9, zlib.DEFLATED, 15, 8, zlib.Z_DEFAULT_STRATEGY, DICTIONARY)

    def feed(self, data: bytes) -> list[Frame]:
        """The complete frames ``data`` finishes."""
        self._buffer += data
        out: list[Frame] = []
        while len(self._buffer) >= 8:
            length = int.from_bytes(self._buffer[5:8], "big")
            if len(self._buffer) < 8 + length:
                break
            head, payload = self._buffer[:8], self._buffer[8:8 + length]
            self._buffer = self._buffer[8 + length:]
            flags = head[4]
            if head[0] & 0x80:
                frame = self._control(int.from_bytes(head[2:4], "big"), flags, payload)
                if frame is not None:
                    out.append(frame)
            else:
                stream = int.from_bytes(head[0:4], "big") & 0x7FFFFFFF
                out.append(Frame("data", stream, data=payload, fin=bool(flags & FLAG_FIN)))
        return out

    def _control(self, kind: int, flags: int, payload: bytes) -> Frame | None:
        if kind == SYN_STREAM:
            if len(payload) < 10:
                raise ProtocolError("short SYN_STREAM")
            stream = int.from_bytes(payload[0:4], "big") & 0x7FFFFFFF
            return Frame("syn", stream, headers=self._headers(payload[10:]), fin=bool(flags & FLAG_FIN))
        if kind == HEADERS:
            self._headers(payload[4:])  # keeps the shared zlib stream in step
            return None
        if kind == RST_STREAM:
            return Frame("rst", int.from_bytes(payload[0:4], "big") & 0x7FFFFFFF)
        if kind == PING:
            return Frame("ping", int.from_bytes(payload[0:4], "big"))
        if kind == GOAWAY:
            return Frame("goaway")
        return None

    def _headers(self, block: bytes) -> dict[str, str]:
        try:
            raw = self._inflate.decompress(block)
            count, pos = struct.unpack_from(">I", raw, 0)[0], 4
            headers: dict[str, str] = {}
            for _ in range(count):
                size = struct.unpack_from(">I", raw, pos)[0]
                name = raw[pos + 4:pos + 4 + size].decode("latin-1")
                pos += 4 + size
                size = struct.unpack_from(">I", raw, pos)[0]
                headers[name.lower()] = raw[pos + 4:pos + 4 + size].decode("latin-1")
                pos += 4 + size
        except (zlib.error, struct.error) as err:
            raise ProtocolError(f"header block: {err}") from None
        return headers

    @staticmethod
    def _frame(kind: int, flags: int, payload: bytes) -> bytes:
        return struct.pack(">HHB", 0x8000 | VERSION, kind, flags) + len(payload).to_bytes(3, "big") + payload

    def reply(self, stream: int, headers: dict[str, str] | None = None, fin: bool = False) -> bytes:
        """A SYN_REPLY accepting ``stream``."""
        items = sorted((headers or {}).items())
        raw = struct.pack(">I", len(items)) + b"".join(
            struct.pack(">I", len(k)) + k.encode() + struct.pack(">I", len(v)) + v.encode() for k, v in items)
        block = self._deflate.compress(raw) + self._deflate.flush(zlib.Z_SYNC_FLUSH)
        return self._frame(SYN_REPLY, FLAG_FIN if fin else 0, struct.pack(">I", stream) + block)

    @staticmethod
    def data(stream: int, payload: bytes, fin: bool = False) -> bytes:
        return struct.pack(">IB", stream & 0x7FFFFFFF, FLAG_FIN if fin else 0) + len(payload).to_bytes(3, "big") \
            + payload

    def ping(self, ident: int) -> bytes:
        return self._frame(PING, 0, struct.pack(">I", ident))

    def reset(self, stream: int, status: int = 5) -> bytes:
        return self._frame(RST_STREAM, 0, struct.pack(">II", stream, status))
