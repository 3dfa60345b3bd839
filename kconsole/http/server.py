"""The HTTP front: kubectl and HTTP clients reach the API server's single entry over REST.

An adapter, nothing more: each request is parsed into a :class:`~kconsole.api.types.Request`
(:mod:`kconsole.http.rest`), handed to ``entry.handle()``, and its Response, WatchStream or LogStream
rendered back (JSON, Tables, chunked watch events flushed one by one, log lines). What only exists at
this layer is rendering: discovery and OpenAPI documents built from ``entry.resources()``, health
pages from ``entry.health_checks()``, TLS with client-certificate users, and the kubeconfig.

Connections are accepted by :mod:`kconsole.http.listener` (a cap on open connections, back-off when
descriptors run out) and served by :mod:`kconsole.http.connection`, which answers plain
request/response exchanges itself (:meth:`HTTPFront._serve`) and hands streams and unusual requests
to aiohttp (:meth:`HTTPFront._handle`); both end in the same dispatch.

Bad input costs the event loop little: a request with a body is authenticated before its body is
read or decoded, a body larger than :data:`OFFLOAD_BYTES` is decoded on a worker thread, and at most
:data:`MAX_REQUESTS_INFLIGHT` read-only and :data:`MAX_MUTATING_REQUESTS_INFLIGHT` mutating requests
(watches and other long-running requests excluded, as upstream's max-in-flight filter) are answered
at once; beyond them a 429 with ``Retry-After``. The control plane's own components call the API
server in-process, so neither limit ever stands between them and it.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import ssl
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from aiohttp import web
from multidict import CIMultiDict

from kconsole import kubeconfig as kc
from kconsole.api import prometheus
from kconsole.api.satoken import JWKS_PATH, OIDC_CONFIGURATION_PATH
from kconsole.api.types import (
    Credentials,
    ProxiedResponse,
    ProxyCall,
    Request,
    Response,
    StatusError,
    UserInfo,
    status_body,
)
from kconsole.clock import Clock, RealClock
from kconsole.http import encode, health, portforward, remotecommand, rest, spdyupgrade, tables
from kconsole.http.connection import JSON, NO_CACHE, Connection, Reply, RequestView, Timeouts
from kconsole.http.discovery import AGGREGATED_CONTENT_TYPE, Discovery
from kconsole.http.listener import Listener, default_max_connections
from kconsole.http.tlssniff import TLSSniffer
from kconsole.http.openapi import (
    OPENAPI_V2_PROTOBUF,
    OpenAPI,
)

log = logging.getLogger(__name__)

TEXT = "text/plain; charset=utf-8"
VERSION = {
    "major": "1", "minor": "32", "gitVersion": "v1.32.0-kconsole", "gitCommit": "kconsole",
    "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z", "goVersion": "python3",
    "compiler": "cpython", "platform": "linux/amd64",
}
_PUBLIC = ("/healthz", "/livez", "/readyz")
#: The health check that says the API server has started (its other post-start hooks follow it).
_STARTED = "poststarthook/generic-apiserver-start-informers"
#: Idle keep-alive connections are closed after this many (real) seconds (kube-apiserver's IdleTimeout).
KEEPALIVE_TIMEOUT = 90.0
#: A request head must arrive within this many seconds (kube-apiserver's ReadHeaderTimeout).
HEADER_TIMEOUT = 32.0
#: A request body must arrive within this many seconds of its head (the request timeout, 60 s).
BODY_TIMEOUT = 60.0
#: Upstream's --max-requests-inflight and --max-mutating-requests-inflight defaults.
MAX_REQUESTS_INFLIGHT = 400
MAX_MUTATING_REQUESTS_INFLIGHT = 200
#: Bodies larger than this are decoded on a worker thread (a 3 MiB YAML body takes seconds).
OFFLOAD_BYTES = 64 * 1024
_BODY_METHODS = frozenset(("POST", "PUT", "PATCH", "DELETE"))
_LONG_RUNNING_SUBRESOURCES = frozenset(("log", *rest.STREAMING_SUBRESOURCES))
_PRIVILEGED_GROUP = "system:masters"
#: Header prefix of an impersonated user's extra values (lowercase, as compared).
EXTRA_PREFIX = "impersonate-extra-"


_dumps = encode.dumps
#: At most this many queued watch events go out in one write.
WATCH_WRITE_EVENTS = 256


def _json_response(code: int, body: Any, warning: str | None = None, content_type: str = JSON) -> Reply:
    """An API object as upstream's negotiated serializer writes it: Go's json.Encoder ends it with a newline."""
    return Reply(code, encode.dumps_object(body) + b"\n", content_type, NO_CACHE, warning)


def _raw_json(body: Any) -> Reply:
    """A non-resource page (/version, /) as upstream's WriteRawJSON writes it: indented, no final newline."""
    return Reply(200, json.dumps(body, indent=2).encode(), JSON, NO_CACHE)


def _warning(text: str) -> str:
    """One RFC 7234 warning value, its text a quoted-string (client-go drops a header it cannot parse)."""
    return '299 - "' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def impersonated_extra(headers: Iterable[tuple[str, str]]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``Impersonate-Extra-<key>`` headers as (key, values), keys lowercased and percent-decoded as
    upstream's impersonation filter reads them (kubectl escapes what a header name cannot hold)."""
    found: dict[str, list[str]] = {}
    for name, value in headers:
        if len(name) > len(EXTRA_PREFIX) and name[:len(EXTRA_PREFIX)].lower() == EXTRA_PREFIX:
            found.setdefault(unquote(name[len(EXTRA_PREFIX):].lower()), []).append(value)
    return tuple(sorted((key, tuple(values)) for key, values in found.items()))


def _same_resources(now: list[Any], before: list[Any]) -> bool:
    """The resource table is unchanged: same kinds, and a custom kind still the same definition."""
    return len(now) == len(before) and all(a == b and a.custom is b.custom for a, b in zip(now, before))


def _status_response(status: dict[str, Any]) -> Reply:
    code = int(status.get("code", 500))
    retry = (status.get("details") or {}).get("retryAfterSeconds") if code == 429 else None
    return Reply(code, encode.dumps_object(status) + b"\n", JSON, NO_CACHE, None, retry)


def _text(code: int, text: str) -> Reply:
    return Reply(code, text.encode(), TEXT, None)


def _aiohttp_response(reply: Reply) -> web.Response:
    return web.Response(status=reply.status, body=reply.body, headers=reply.headers())


def _peer_user(transport: asyncio.BaseTransport) -> UserInfo | None:
    """The user of a client certificate the TLS layer verified against the cluster CA."""
    cert = transport.get_extra_info("peercert")
    if not cert:
        return None
    cn = ""
    groups: list[str] = []
    for rdn in cert.get("subject", ()):
        for key, value in rdn:
            if key == "commonName":
                cn = value
            elif key == "organizationName":
                groups.append(value)
    return UserInfo(cn, tuple(groups)) if cn else None


class HTTPFront:
    """Serves ``entry`` over HTTP(S) for kubectl and the official clients.

    ``start()`` writes ``<data_dir>/kubeconfig`` (mode 0600) naming the actual port, the CA and the
    admin's token and client certificate, and returns the port.
    """

    def __init__(self, entry: Any, *, address: str = "127.0.0.1", port: int = 6443, tls: bool = True,
                 data_dir: Path, clock: Clock | None = None,
                 admin: UserInfo = UserInfo("admin", ("system:masters",)),
                 max_body_bytes: int = rest.MAX_BODY_BYTES, shutdown_timeout: float = 2.0,
                 keepalive_timeout: float = KEEPALIVE_TIMEOUT, header_timeout: float = HEADER_TIMEOUT,
                 body_timeout: float = BODY_TIMEOUT, max_connections: int | None = None,
                 max_requests_inflight: int = MAX_REQUESTS_INFLIGHT,
                 max_mutating_requests_inflight: int = MAX_MUTATING_REQUESTS_INFLIGHT) -> None:
        self.entry = entry
        self.address = address
        self.requested_port = port
        self.tls = tls
        self.data_dir = Path(data_dir)
        self.clock: Clock = clock or getattr(entry, "clock", None) or RealClock()
        self.admin = admin
        self.max_body_bytes = max_body_bytes
        self.shutdown_timeout = shutdown_timeout
        self.keepalive_timeout = keepalive_timeout
        self.timeouts = Timeouts(header_timeout, body_timeout, keepalive_timeout)
        self.max_connections = max_connections if max_connections is not None else default_max_connections()
        self.inflight_limits = {"readOnly": max_requests_inflight, "mutating": max_mutating_requests_inflight}
        #: Requests being answered now, by kind (long-running ones are not counted).
        self.inflight = {"readOnly": 0, "mutating": 0}
        self.port = 0
        self.admin_token = ""
        self.kubeconfig_path: Path | None = None
        self._web_server: web.Server | None = None
        self._listener: Listener | None = None
        self._decoder: ThreadPoolExecutor | None = None
        # Connections still answered by kconsole.http.connection (the others are aiohttp's).
        self._connections: set[Connection] = set()
        self._sweep_handle: asyncio.TimerHandle | None = None
        self._streams: set[Any] = set()
        self._watch_lines = encode.WatchLines()
        self._discovery: Discovery | None = None
        self._openapi: OpenAPI | None = None
        self._resources_seen: list[Any] = []
        self._closing = False
        # Per aiohttp connection (kconsole.http.connection's keep theirs): the Authorization header last seen and
        # the Credentials made from it with the connection's client certificate (fixed for a keep-alive
        # connection's life, usually).
        self._connection_credentials: weakref.WeakKeyDictionary[asyncio.BaseTransport, tuple[str, Credentials]] \
            = weakref.WeakKeyDictionary()

    # ------------------------------------------------------------------ lifecycle

    @property
    def url(self) -> str:
        host = self.address if self.address not in ("", "0.0.0.0", "::") else "127.0.0.1"
        if ":" in host:
            host = f"[{host}]"
        return f"{'https' if self.tls else 'http'}://{host}:{self.port}"

    def _ssl_context(self, pki: kc.PKI) -> ssl.SSLContext:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(pki.path(kc.SERVING_CERT), pki.path(kc.SERVING_KEY))
        ctx.load_verify_locations(pki.path(kc.CA_CERT))
        ctx.verify_mode = ssl.CERT_OPTIONAL
        return ctx

    async def start(self) -> int:
        """Listen, write the kubeconfig and return the port actually bound."""
        pki = kc.ensure_pki(self.data_dir, address=self.address, admin=self.admin.name,
                            admin_groups=self.admin.groups) if self.tls else None
        self.admin_token = kc.admin_token(self.data_dir)
        tokens = getattr(self.entry, "tokens", None)
        if tokens is not None:
            tokens.add(self.admin_token, self.admin)
        web_server = web.Server(self._handle, handler_cancellation=True, access_log=None,
                                keepalive_timeout=self.keepalive_timeout)
        self._web_server = web_server
        connections = self._connections

        def connection() -> Connection:
            return Connection(self._serve, web_server, connections, self.max_body_bytes, listener.release)

        context = self._ssl_context(pki) if pki else None

        def factory() -> asyncio.Protocol:
            """TLS starts per connection, after a look for plain HTTP (see kconsole.http.tlssniff)."""
            if context is None:
                return connection()
            return TLSSniffer(connection, context, handshake_timeout=self.timeouts.header,
                              abandoned=listener.release)

        listener = Listener(factory, max_connections=self.max_connections, evict=self._evict_idle)
        listener.bind(self.address, self.requested_port)
        listener.start()
        self._listener = listener
        self._sweep_handle = asyncio.get_running_loop().call_later(self._sweep_period, self._sweep)
        self.port = listener.port or self.requested_port
        self.kubeconfig_path = kc.write_kubeconfig(self.data_dir,
                                                   kc.kubeconfig_text(self.url, self.admin_token, pki))
        return self.port

    async def stop(self) -> None:
        """Close every watch and log stream cleanly (terminating chunk sent), then stop listening."""
        self._closing = True
        streams = list(self._streams)
        await asyncio.gather(*(s.close() for s in streams), return_exceptions=True)
        if self._sweep_handle is not None:
            self._sweep_handle.cancel()
            self._sweep_handle = None
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        answering = [task for conn in list(self._connections) if (task := conn.close_when_idle()) is not None]
        if self._web_server is not None:
            await asyncio.sleep(0)
            self._web_server.pre_shutdown()
            await self._web_server.shutdown(self.shutdown_timeout)
            self._web_server = None
        if answering:
            await asyncio.wait(answering, timeout=self.shutdown_timeout)
        if self._decoder is not None:
            self._decoder.shutdown(wait=False, cancel_futures=True)
            self._decoder = None

    @property
    def _sweep_period(self) -> float:
        timeouts = self.timeouts
        return min(timeouts.header, timeouts.body, timeouts.idle) / 4

    def _sweep(self) -> None:
        """Close connections past a read or idle limit (one timer for all of them)."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        timeouts = self.timeouts
        for conn in list(self._connections):
            conn.expire(now, timeouts)
        self._sweep_handle = loop.call_later(self._sweep_period, self._sweep)

    def _evict_idle(self) -> bool:
        """At the connection cap: close the connection that has waited for a request the longest."""
        oldest: Connection | None = None
        oldest_since = 0.0
        for conn in self._connections:
            since = conn.idle_since
            if since is not None and (oldest is None or since < oldest_since):
                oldest, oldest_since = conn, since
        if oldest is None or oldest.transport is None:
            return False
        oldest.transport.close()
        return True

    # ------------------------------------------------------------------ documents

    def _docs(self) -> tuple[Discovery, OpenAPI]:
        resources = self.entry.resources()
        if self._discovery is None or not _same_resources(resources, self._resources_seen):
            self._discovery = Discovery(resources, f"{self.address}:{self.port}")
            self._openapi = OpenAPI(resources, VERSION["gitVersion"])
            self._resources_seen = resources
        assert self._openapi is not None
        return self._discovery, self._openapi

    # ------------------------------------------------------------------ dispatch

    def _credentials(self, request: web.BaseRequest | RequestView) -> Credentials:
        headers = request.headers
        creds = self._caller(request, headers.get("Authorization", ""))
        extra = impersonated_extra(headers.items())
        if "Impersonate-User" in headers or "Impersonate-Group" in headers or "Impersonate-Uid" in headers or extra:
            # "" (not None) when groups, extras or a uid come without a user: the API server refuses that.
            creds = replace(creds, impersonate_user=headers.get("Impersonate-User", ""),
                            impersonate_groups=tuple(headers.getall("Impersonate-Group", ())),
                            impersonate_uid=headers.get("Impersonate-Uid"), impersonate_extra=extra)
        return creds

    def _caller(self, request: web.BaseRequest | RequestView, auth: str) -> Credentials:
        """Who presents the request (token or client certificate), remembered per connection."""
        transport = request.transport
        connection = request.protocol if isinstance(request, RequestView) else None
        if connection is not None:
            known = connection.credentials
        elif transport is not None:
            try:
                known = self._connection_credentials.get(transport)
            except TypeError:  # a transport without weak references (uvloop's TLS transport): not remembered
                known = None
        else:
            known = None
        if known is not None and known[0] == auth:
            return known[1]
        token = None
        if auth[:7].lower() == "bearer ":
            token = auth[7:].strip() or None
        creds = Credentials(token=token, cert_user=_peer_user(transport) if self.tls and transport else None)
        if connection is not None:
            connection.credentials = (auth, creds)
        elif transport is not None:
            try:
                self._connection_credentials[transport] = (auth, creds)
            except TypeError:
                pass
        return creds

    def _authenticate(self, creds: Credentials) -> None:
        """Non-resource paths (discovery, /version, /openapi) need an authenticated user too."""
        if creds.cert_user is not None:
            return
        tokens = getattr(self.entry, "tokens", None)
        if creds.token and tokens is not None:
            tokens.authenticate(creds)
            return
        raise StatusError.unauthorized()

    async def _handle(self, request: web.BaseRequest) -> web.StreamResponse:
        """aiohttp's handler: streams, and whatever kconsole.http.connection hands over."""
        result = await self._answer(request, None)
        return _aiohttp_response(result) if isinstance(result, Reply) else result

    async def _serve(self, view: RequestView, body: bytes) -> Reply:
        """kconsole.http.connection's handler: a request read whole, which does not stream."""
        result = await self._answer(view, body)
        if not isinstance(result, Reply):
            raise RuntimeError(f"{view.method} {view.path} streamed on a connection that cannot stream")
        return result

    async def _answer(self, request: web.BaseRequest | RequestView,
                      body: bytes | None) -> Reply | web.StreamResponse:
        try:
            return await self._dispatch(request, body)
        except StatusError as err:
            return _status_response(err.status)
        except asyncio.CancelledError:
            raise
        except Exception as err:  # noqa: BLE001 - the client gets a 500 Status, the log the traceback
            log.exception("HTTP %s %s failed", request.method, request.path)
            return _status_response(StatusError.internal(f"{type(err).__name__}: {err}").status)

    async def _dispatch(self, request: web.BaseRequest | RequestView,
                        body: bytes | None) -> Reply | web.StreamResponse:
        """``body``: the request's body already read (None: read it from aiohttp's request if needed)."""
        path = request.path
        if path.startswith(_PUBLIC):
            return self._health(path, request.query)
        creds = self._credentials(request)
        if path.startswith(("/api/", "/apis/")) or path in ("/api", "/apis"):
            return await self._api(request, path, creds, body)
        if path == "/metrics":
            return await self._metrics(creds)
        if path.rstrip("/") in (OIDC_CONFIGURATION_PATH, JWKS_PATH):
            return await self._issuer_discovery(path, creds)
        self._authenticate(creds)
        if path == "/version" or path == "/version/":
            return _raw_json(VERSION)
        if path.startswith("/openapi/v3"):
            return self._openapi_doc(path)
        if path == "/openapi/v2":
            protobuf = "protobuf" in request.headers.get("Accept", "")
            return await self._swagger(protobuf, request.headers.get("If-None-Match"))
        if path in ("/", ""):
            return _raw_json({"paths": ["/.well-known/openid-configuration", "/api", "/api/v1", "/apis", "/healthz",
                                        "/livez", "/metrics", "/openapi/v2", "/openapi/v3", "/openid/v1/jwks",
                                        "/readyz", "/version"]})
        raise rest.not_found()

    # ------------------------------------------------------------------ non-resource pages

    def _health(self, path: str, query: Any) -> Reply:
        endpoint, _, single = path.strip("/").partition("/")
        if endpoint not in health.ENDPOINTS:
            raise rest.not_found()

        def checks() -> list[tuple[str, bool, str]]:
            report = getattr(self.entry, "health_checks", None)
            reported = report() if report is not None else {}
            started = reported.get(_STARTED, (True, "ok"))[0]
            return health.results(endpoint, reported, bool(started), self._closing)

        code, text = health.answer(endpoint, single or None, "verbose" in query, query.getall("exclude", []), checks)
        return _text(code, text)

    async def _metrics(self, creds: Credentials) -> Reply:
        metrics = getattr(self.entry, "metrics", None)
        if metrics is None:
            raise rest.not_found()
        text = await metrics(creds, "http")
        return Reply(200, text.encode(), prometheus.CONTENT_TYPE, NO_CACHE)

    async def _issuer_discovery(self, path: str, creds: Credentials) -> Reply:
        discover = getattr(self.entry, "issuer_discovery", None)
        if discover is None:
            raise rest.not_found()
        document = await discover(creds, path, self.url, "http")
        content = "application/jwk-set+json" if path.rstrip("/") == JWKS_PATH else "application/json"
        return Reply(200, encode.dumps(document), content, "public, max-age=3600")

    async def _swagger(self, protobuf: bool, if_none_match: str | None) -> Reply:
        """``/openapi/v2`` in JSON or protobuf, with its ETag; a client that has it gets 304
        (kube-openapi's handler). The first request builds it in a thread (a fraction of a second of
        encoding), so other requests are answered meanwhile."""
        _, openapi = self._docs()
        built = openapi.swagger_cached(protobuf)
        body, etag = built if built is not None else await asyncio.to_thread(openapi.swagger, protobuf)
        content = OPENAPI_V2_PROTOBUF if protobuf else JSON
        if if_none_match == etag:
            return Reply(304, b"", content, NO_CACHE, etag=etag)
        return Reply(200, body, content, NO_CACHE, etag=etag)

    def _openapi_doc(self, path: str) -> Reply:
        _, openapi = self._docs()
        rel = path[len("/openapi/v3"):].strip("/")
        if not rel:
            body = openapi.index
        else:
            doc = openapi.document(rel)
            if doc is None:
                raise rest.not_found()
            body = doc
        return Reply(200, body, JSON, NO_CACHE if not rel else "public, immutable")

    def _discovery_doc(self, request: web.BaseRequest | RequestView, path: str) -> Reply | None:
        discovery, _ = self._docs()
        parts = [p for p in path.split("/") if p]
        accept = request.headers.get("Accept", "")
        if len(parts) == 1:
            if "as=APIGroupDiscoveryList" in accept and "v=v2;" in accept.replace(" ", "") + ";":
                return _json_response(200, discovery.aggregated(legacy_core=parts[0] == "api"),
                                      content_type=AGGREGATED_CONTENT_TYPE)
            return _json_response(200, discovery.api_versions() if parts[0] == "api" else discovery.api_group_list())
        if parts[0] == "apis" and len(parts) == 2:
            group = discovery.api_group(parts[1])
            if group is None:
                raise rest.not_found()
            return _json_response(200, group)
        if (parts[0] == "api" and len(parts) == 2) or (parts[0] == "apis" and len(parts) == 3):
            group, version = ("", parts[1]) if parts[0] == "api" else (parts[1], parts[2])
            doc = discovery.resource_list(group, version)
            if doc is None:
                raise rest.not_found()
            return _json_response(200, doc)
        return None

    # ------------------------------------------------------------------ resources

    async def _read_body(self, request: web.BaseRequest) -> bytes:
        """The body aiohttp has not read yet, within :attr:`timeouts`' body limit."""
        try:
            async with asyncio.timeout(self.timeouts.body):
                return await self._read_body_now(request)
        except TimeoutError:
            if request.transport is not None:
                request.transport.close()
            raise StatusError(status_body(408, "Timeout", f"the request body did not arrive within "
                                          f"{self.timeouts.body:g} s")) from None

    async def _read_body_now(self, request: web.BaseRequest) -> bytes:
        length = request.content_length
        if length is not None and length > self.max_body_bytes:
            raise StatusError.too_large(f"Request entity too large: limit is {self.max_body_bytes}")
        if not request.body_exists:
            return b""
        content = request.content
        if length is not None:
            if content.is_eof():
                return content.read_nowait()
            return await content.readexactly(length)
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.content.iter_any():
            size += len(chunk)
            if size > self.max_body_bytes:
                raise StatusError.too_large(f"Request entity too large: limit is {self.max_body_bytes}")
            chunks.append(chunk)
        return b"".join(chunks)

    async def _api(self, request: web.BaseRequest | RequestView, path: str, creds: Credentials,
                   body: bytes | None) -> Reply | web.StreamResponse:
        route = rest.resource_route(path)
        if route is None:
            self._authenticate(creds)
            doc = self._discovery_doc(request, path)
            if doc is not None:
                return doc
            route = rest.parse_path(path)
        if route.resource is None:
            raise rest.not_found()
        if not rest.acceptable(request.headers.get("Accept"), route):
            self._authenticate(creds)  # who may not ask learns that first
            raise rest.not_acceptable()
        method = request.method
        query = request.query
        if route.watch_prefix or route.subresource in _LONG_RUNNING_SUBRESOURCES or (
                query and query.get("watch") in ("true", "True", "1")):
            return await self._resource(request, route, method, creds, body)
        kind = "mutating" if method in _BODY_METHODS else "readOnly"
        if self.inflight[kind] >= self.inflight_limits[kind] and self._privileged(creds) is False:
            raise StatusError.too_many_requests("Too many requests, please try again later.", 1)
        self.inflight[kind] += 1
        try:
            return await self._resource(request, route, method, creds, body)
        finally:
            self.inflight[kind] -= 1

    def _privileged(self, creds: Credentials) -> bool | None:
        """Whether the caller is in system:masters, whom the in-flight limits never turn away (as
        upstream); None for a caller who does not authenticate (its 401 costs nothing to answer)."""
        tokens = getattr(self.entry, "tokens", None)
        try:
            user = tokens.authenticate(creds) if tokens is not None else None
        except StatusError:
            return None
        return user is not None and _PRIVILEGED_GROUP in user.groups

    def _authenticated(self, creds: Credentials) -> bool:
        """Whether the caller authenticates (the entry judges when it keeps no tokens here)."""
        tokens = getattr(self.entry, "tokens", None)
        if tokens is None:
            return True
        try:
            tokens.authenticate(creds)
        except StatusError:
            return False
        return True

    def _decode_pool(self) -> ThreadPoolExecutor:
        if self._decoder is None:
            self._decoder = ThreadPoolExecutor(max_workers=2, thread_name_prefix="kconsole-http-body")
        return self._decoder

    async def _resource(self, request: web.BaseRequest | RequestView, route: rest.Route, method: str,
                        creds: Credentials, body: bytes | None) -> Reply | web.StreamResponse:
        query = request.query
        if method in _BODY_METHODS and not self._authenticated(creds):
            # The 401 comes before the body is read or decoded; the entry answers (and audits) it.
            bare = rest.build_request(method, route, query, request.headers, b"", creds, decode=False)
            result = await self.entry.handle(bare)
            if isinstance(result, Response) and not result.ok:
                return _status_response(result.body)
            raise StatusError.unauthorized()
        if method not in _BODY_METHODS:
            raw = b""
        elif body is not None:
            raw = body
        else:
            assert isinstance(request, web.BaseRequest)
            raw = await self._read_body(request)
        if route.resource == "pods" and route.group == "" and route.subresource in ("exec", "attach", "portforward"):
            return await self._remote_command(request, route, creds)
        if rest.proxied(route):
            return await self._proxy(request, route, method, creds, raw)
        if rest.streaming_refused(route, method):
            return await self._streaming_refused(route, creds)
        try:
            if len(raw) > OFFLOAD_BYTES:
                req = await asyncio.get_running_loop().run_in_executor(
                    self._decode_pool(),
                    functools.partial(rest.build_request, method, route, query, request.headers, raw, creds))
            else:
                req = rest.build_request(method, route, query, request.headers, raw, creds)
        except StatusError:
            if raw and not self._serves(route):
                # A body kconsole cannot decode for a kind it does not serve: the missing resource is the news.
                self._authenticate(creds)
                raise rest.not_found(self._unknown_resource(route)) from None
            raise
        result = await self.entry.handle(req)
        group_resource = f"{route.resource}.{route.group}" if route.group else route.resource
        if isinstance(result, Response):
            return self._render(result, req, group_resource, request)
        if not isinstance(request, web.BaseRequest):
            await result.close()
            raise RuntimeError(f"{req.verb} of {group_resource} streams; its connection cannot")
        if req.verb == "watch":
            rendering = tables.negotiate(request.headers.get("Accept"), query.get("includeObject"))
            return await self._stream_watch(request, result, group_resource, rendering)
        return await self._stream_log(request, result)

    def _custom_printer(self, group_resource: str, rendering: tables.Rendering) -> Any:
        """A custom resource's columns (its CRD's additionalPrinterColumns); None for built-in kinds."""
        if rendering.as_kind != "Table" or tables.has_builtin_printer(group_resource):
            return None
        discovery, _ = self._docs()
        info = discovery.by_gr.get(group_resource)
        return getattr(info.custom, "printer", None) if info is not None else None

    def _serves(self, route: rest.Route) -> bool:
        discovery, _ = self._docs()
        doc = discovery.resource_list(route.group, route.version)
        name = f"{route.resource}/{route.subresource}" if route.subresource else route.resource
        return doc is not None and any(r.get("name") == name for r in doc.get("resources", ()))

    @staticmethod
    def _unknown_resource(route: rest.Route) -> str:
        if route.subresource:
            return f"the server could not find the requested resource ({route.resource}/{route.subresource})"
        gv = f"{route.group}/{route.version}" if route.group else route.version
        return f'the server doesn\'t have a resource type "{route.resource}" in {gv}'

    async def _remote_command(self, request: web.BaseRequest | RequestView, route: rest.Route,
                              creds: Credentials) -> Reply | web.StreamResponse:
        """pods/exec and pods/attach: the API server authorizes ``create`` on the subresource (as
        upstream does for WebSocket upgrades too) and checks the pod; the kubelet's process then
        streams over the WebSocket remotecommand protocol (:mod:`kconsole.http.remotecommand`)."""
        sub = route.subresource or ""
        body = remotecommand.options(request.query, sub)
        protocols = remotecommand.PROTOCOLS if sub != "portforward" else portforward.PROTOCOLS
        req = Request(verb="create", resource="pods", group="", version=route.version, namespace=route.namespace,
                      name=route.name, subresource=sub, body=body, credentials=creds,
                      user_agent=request.headers.get("User-Agent", ""), source="http")
        result = await self.entry.handle(req)
        if isinstance(result, Response):
            return self._render(result, req, "pods", request)
        if not isinstance(request, web.BaseRequest):
            raise RuntimeError(f"pods/{sub} streams; its connection cannot")
        if spdyupgrade.wants_spdy(request):
            wanted = spdyupgrade.PORT_FORWARD_PROTOCOL if sub == "portforward" else spdyupgrade.EXEC_PROTOCOL
            if wanted not in spdyupgrade.offered(request):
                return _status_response(status_body(
                    403, "Forbidden", f"unable to upgrade: unable to negotiate protocol: client supports "
                    f"{spdyupgrade.offered(request)}, server supports [{wanted}]"))
            if sub == "portforward":
                return await spdyupgrade.serve_port_forward(request, result)
            return await spdyupgrade.serve_exec(request, result, body)
        if not remotecommand.wants_websocket(request) or not set(remotecommand.offered(request)) & set(protocols):
            return _status_response(status_body(
                400, "BadRequest", f"unable to upgrade connection: {sub} needs a WebSocket "
                f"({', '.join(protocols)}) or SPDY/3.1 upgrade", name=route.name, kind="pods"))
        if sub == "portforward":
            return await portforward.serve(request, result)
        return await remotecommand.serve(request, result, body)

    async def _proxy(self, request: web.BaseRequest | RequestView, route: rest.Route, method: str,
                     creds: Credentials, raw: bytes) -> Reply | web.StreamResponse:
        """pods/proxy and services/proxy: authorized with the method's verb on the subresource, then
        answered by whatever the API server reached (:mod:`kconsole.api.proxy`), headers and bytes as
        they came; the API server's own refusals are Status objects."""
        verb = rest.PROXY_VERBS.get(method, method.lower())
        call = ProxyCall(method=method, path=route.proxy_path or "", query=request.query_string,
                         headers=[(k, v) for k, v in request.headers.items()], body=raw, url_path=request.path)
        req = Request(verb=verb, resource=route.resource or "", group="", version=route.version,
                      namespace=route.namespace, name=route.name, subresource="proxy", body=call, credentials=creds,
                      user_agent=request.headers.get("User-Agent", ""), source="http")
        result = await self.entry.handle(req)
        if isinstance(result, Response):
            return self._render(result, req, route.resource or "", request)
        if not isinstance(result, ProxiedResponse):
            raise RuntimeError(f"{route.resource}/proxy answered {type(result).__name__}")
        headers = CIMultiDict(result.headers)
        if method != "HEAD":  # a HEAD answer keeps the length its GET would have
            headers.popall("Content-Length", None)
        return web.Response(status=result.code, headers=headers, body=result.body)

    async def _streaming_refused(self, route: rest.Route, creds: Credentials) -> Reply:
        """A node's proxy other than a GET of its kubelet's endpoints: not served; say so."""
        probe = Request(verb="get", resource=route.resource or "", group=route.group, version=route.version,
                        namespace=route.namespace, name=route.name, credentials=creds, source="http")
        result = await self.entry.handle(probe)
        if isinstance(result, Response) and not result.ok:
            return _status_response(result.body)
        return _status_response(status_body(
            405, "MethodNotAllowed", f"the kubelet of node \"{route.name}\" answers only GET on its proxied endpoints",
            name=route.name, kind=route.resource))

    def _render(self, result: Response, req: Request, group_resource: str,
                request: web.BaseRequest | RequestView) -> Reply:
        warning = ", ".join(_warning(w) for w in result.warnings) if result.warnings else None
        body = result.body
        if isinstance(body, str):
            data = body.encode()
            limit = request.query.get("limitBytes", "") if req.subresource == "log" else ""
            if limit.isdigit():  # the kubelet's LimitWriter: exactly that many bytes, even inside a character
                data = data[:int(limit)]
            return Reply(result.code, data, TEXT, None, warning)
        if result.ok and req.verb in ("get", "list") and req.subresource in (None, "status", "scale"):
            rendering = tables.negotiate(request.headers.get("Accept"), request.query.get("includeObject"))
            body = tables.render(body, group_resource, self.clock.now(), rendering,
                                 printer=self._custom_printer(group_resource, rendering))
            if req.verb == "list" and rendering.as_kind is None and not self._custom(group_resource):
                return Reply(result.code, encode.dumps_list(body) + b"\n", JSON, NO_CACHE, warning)
        return _json_response(result.code, body, warning)

    def _custom(self, group_resource: str) -> bool:
        """A custom resource: served unstructured, its list items keep their kind and apiVersion."""
        info = self._docs()[0].by_gr.get(group_resource)
        return info is not None and info.custom is not None

    async def _stream_watch(self, request: web.BaseRequest, stream: Any, group_resource: str,
                            rendering: tables.Rendering) -> web.StreamResponse:
        """Events as they come; those already queued behind one go out in the same write. A client
        that hung up ends the stream (nothing to answer, nothing to log)."""
        resp = web.StreamResponse(status=200)
        resp.headers["Content-Type"] = JSON
        resp.headers["Cache-Control"] = "no-cache, private"
        resp.enable_chunked_encoding()
        self._streams.add(stream)
        first = True
        printer = self._custom_printer(group_resource, rendering)
        take_ready = getattr(stream, "take_ready", None)

        def line(event: dict[str, Any]) -> bytes:
            nonlocal first
            obj = event.get("object")
            if rendering.as_kind and event.get("type") in ("ADDED", "MODIFIED", "DELETED") and isinstance(obj, dict):
                event = {"type": event["type"],
                         "object": tables.render(obj, group_resource, self.clock.now(), rendering, first, printer)}
                first = False
                return _dumps(event) + b"\n"
            return self._watch_lines.line(event)

        try:
            await resp.prepare(request)
            async for event in stream:
                batch = [event, *take_ready(WATCH_WRITE_EVENTS)] if take_ready is not None else [event]
                await resp.write(b"".join(line(e) for e in batch))
        except ConnectionResetError:
            await stream.close()
            return resp
        except asyncio.CancelledError:
            await stream.close()
            raise
        finally:
            self._streams.discard(stream)
        await stream.close()
        await resp.write_eof()
        return resp

    async def _stream_log(self, request: web.BaseRequest, stream: Any) -> web.StreamResponse:
        """A followed log, each line with its newline; with limitBytes no more than that many bytes
        (the stream cuts the last line at the limit, so the newline after it is the byte too many)."""
        resp = web.StreamResponse(status=200)
        resp.headers["Content-Type"] = "text/plain"
        resp.enable_chunked_encoding()
        self._streams.add(stream)
        limit = request.query.get("limitBytes", "")
        remain = int(limit) if limit.isdigit() else None
        try:
            await resp.prepare(request)
            lines: AsyncIterator[str] = stream.__aiter__()
            async for line in lines:
                data = (line if line.endswith("\n") else line + "\n").encode()
                if remain is not None:
                    data = data[:remain]
                    remain -= len(data)
                if data:
                    await resp.write(data)
                if remain == 0:
                    break
        except (ConnectionResetError, asyncio.CancelledError):
            await stream.close()
            raise
        finally:
            self._streams.discard(stream)
        await stream.close()
        await resp.write_eof()
        return resp
