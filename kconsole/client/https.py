"""The API over HTTPS: an :class:`~kconsole.api.types.Entry` that speaks Kubernetes' REST protocol.

:class:`HTTPSEntry` turns each :class:`~kconsole.api.types.Request` into the URL, query, headers and
body kubectl would send, and each answer back into a Response, a watch stream or a log stream, so
the one :class:`~kconsole.client.client.Client` (and everything built on it: informers, leader
election, the event recorder) works unchanged against any API server. Discovery is read once at
:meth:`HTTPSEntry.open` (aggregated ``apidiscovery.k8s.io/v2``, or the legacy documents) and again
when a request names a resource it does not know.

On a virtual clock every request in flight is tracked as I/O so ``clock.settle()`` waits for the
answer; a watch's events arrive on loopback within the settle rounds that follow the write.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiohttp

from kconsole.api.types import AuditRecord, Request, ResourceInfo, Response, StatusError, status_body
from kconsole.clock import Clock, RealClock, io_tracker

from .client import Client
from .kubeconfig import KubeconfigError, RestConfig, load

log = logging.getLogger(__name__)

AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
PATCH_TYPES = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}
METHODS = {"get": "GET", "list": "GET", "watch": "GET", "create": "POST", "update": "PUT", "patch": "PATCH",
           "delete": "DELETE", "deletecollection": "DELETE"}
#: A unary request that takes longer than this (wall seconds) fails with 504, as client-go's default.
REQUEST_TIMEOUT = 60.0
CONNECT_TIMEOUT = 10.0
#: Connections kept for unary requests (a request finding all busy waits for one). Upstream's clients
#: multiplex on one HTTP/2 connection; over HTTP/1.1 a burst with no bound opened a TLS connection per
#: request in flight (a thousand over a 5,000-pod convergence), each a handshake on both ends, and ran
#: past the API server's 200 mutating requests in flight: two kubelet workers at 128 each drew 12,000
#: 429s. At 32 the store batched fewer writes together and converging took a third more of the API
#: server's CPU. Watches and followed logs hold their connection for their lifetime, so they have a
#: pool of their own, unbounded.
UNARY_CONNECTIONS = 64
#: Idle seconds before a pooled connection is closed: under the API server's idle timeout (90 s), above
#: the 10 s a node's Lease renewal leaves between requests.
KEEPALIVE_S = 60.0
#: client-go's default: a request refused with ``Retry-After`` is sent again up to this many times.
MAX_RETRIES = 10
#: A unary request's bounds: the answer within REQUEST_TIMEOUT, waiting for a pooled connection
#: included; the TCP and TLS connect within CONNECT_TIMEOUT.
UNARY_TIMEOUT = aiohttp.ClientTimeout(total=REQUEST_TIMEOUT, sock_connect=CONNECT_TIMEOUT)


def _status(code: int, text: str) -> dict[str, Any]:
    reason = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 405: "MethodNotAllowed",
              409: "Conflict", 410: "Expired", 413: "RequestEntityTooLarge", 415: "UnsupportedMediaType",
              422: "Invalid", 429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable",
              504: "Timeout"}.get(code, "Unknown")
    return status_body(code, reason, text.strip() or f"the server answered {code}")


def _retry_after(code: int, header: str | None) -> float | None:
    """Seconds to wait before sending a refused request again, as client-go's checkWait reads them:
    a 429 or a 5xx carrying ``Retry-After`` (whole seconds); None: do not retry."""
    if header is None or not (code == 429 or code >= 500):
        return None
    try:
        return max(0.0, float(int(header.strip())))
    except ValueError:
        return None


def _hang_up(resp: aiohttp.ClientResponse) -> None:
    """Close a streaming response and wake a reader waiting on it (closing alone leaves it waiting)."""
    resp.close()
    resp.content.feed_eof()


class _Watch:
    """Newline-delimited JSON watch events from one streaming response; ends when the server ends it,
    the connection drops, or it is closed."""

    def __init__(self, resp: aiohttp.ClientResponse) -> None:
        self._resp = resp
        self._closed = False

    async def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        buf = b""
        try:
            async for chunk in self._resp.content.iter_any():
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    if line.strip():
                        yield json.loads(line)
            if buf.strip():
                yield json.loads(buf)
        except (aiohttp.ClientError, ConnectionError, asyncio.IncompleteReadError, ValueError) as err:
            if not self._closed:
                log.debug("watch stream ended: %s", err)
        finally:
            self._resp.close()

    async def close(self) -> None:
        self._closed = True
        _hang_up(self._resp)


class _Lines:
    """A followed container log: one str per line."""

    def __init__(self, resp: aiohttp.ClientResponse) -> None:
        self._resp = resp

    async def __aiter__(self) -> AsyncIterator[str]:
        buf = b""
        try:
            async for chunk in self._resp.content.iter_any():
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    yield line.decode(errors="replace")
            if buf:
                yield buf.decode(errors="replace")
        except (aiohttp.ClientError, ConnectionError):
            pass
        finally:
            self._resp.close()

    async def close(self) -> None:
        _hang_up(self._resp)


def typed_items(body: Any) -> Any:
    """A list's items with their kind and apiVersion, as client-go's UnstructuredList decodes them:
    the server writes a built-in kind's items without (Go's typed lists), callers read them as objects."""
    if not isinstance(body, dict) or not isinstance(body.get("items"), list):
        return body
    kind = str(body.get("kind") or "")
    if not kind.endswith("List"):
        return body
    api_version, item_kind = body.get("apiVersion"), kind[:-len("List")]
    body["items"] = [{"kind": item_kind, "apiVersion": api_version, **item}
                     if isinstance(item, dict) and "kind" not in item else item for item in body["items"]]
    return body


def _info(group: str, version: str, res: dict[str, Any], kind_fallback: str = "") -> ResourceInfo:
    kind = (res.get("responseKind") or {}).get("kind") or res.get("kind") or kind_fallback
    subs = tuple(s.get("subresource", "") for s in res.get("subresources") or ())
    namespaced = res.get("scope") == "Namespaced" if "scope" in res else bool(res.get("namespaced"))
    name = res.get("resource") or res.get("name") or ""
    singular = res.get("singularResource") or res.get("singularName") or kind.lower()
    return ResourceInfo(group=group, version=version, resource=name, kind=kind, singular=singular,
                        namespaced=namespaced, verbs=tuple(res.get("verbs") or ()),
                        short_names=tuple(res.get("shortNames") or ()),
                        categories=tuple(res.get("categories") or ()), subresources=subs)


class HTTPSEntry:
    """One API server reached over HTTP(S) with the credentials of one kubeconfig context."""

    def __init__(self, config: RestConfig, clock: Clock | None = None) -> None:
        self.config = config
        self.clock: Clock = clock or RealClock()
        self.resources_version = 0
        self._resources: list[ResourceInfo] = []
        self._by_resource: dict[str, ResourceInfo] = {}
        self._session: aiohttp.ClientSession | None = None
        self._streams: aiohttp.ClientSession | None = None
        self._cert_from_exec: bytes | None = None
        self._discovered_once = False

    @classmethod
    async def connect(cls, kubeconfig: str | Path | list[Path] | None = None, context: str | None = None,
                      clock: Clock | None = None) -> HTTPSEntry:
        paths = [Path(kubeconfig)] if isinstance(kubeconfig, (str, Path)) else kubeconfig
        entry = cls(load(paths, context), clock)
        try:
            await entry.open()
        except BaseException:
            await entry.close()
            raise
        return entry

    # ------------------------------------------------------------------ lifecycle

    async def open(self) -> None:
        """Connect (exec credentials first, as they may carry the client certificate) and discover."""
        cert = key = None
        status = await self.config.exec_credential()
        if status and status.get("clientCertificateData"):
            cert, key = status["clientCertificateData"].encode(), str(status.get("clientKeyData", "")).encode()
            self._cert_from_exec = cert
        await self._new_session(cert, key)
        await self.discover()

    async def _new_session(self, cert: bytes | None, key: bytes | None) -> None:
        await self.close()
        ssl_ctx = self.config.ssl_context(cert, key)
        named = {"server_hostname": self.config.tls_server_name} if self.config.tls_server_name else {}

        def session(limit: int) -> aiohttp.ClientSession:
            connector = aiohttp.TCPConnector(ssl=ssl_ctx, limit=limit, keepalive_timeout=KEEPALIVE_S, **named)
            return aiohttp.ClientSession(connector=connector, auto_decompress=True)

        self._session, self._streams = session(UNARY_CONNECTIONS), session(0)

    async def close(self) -> None:
        for s in (self._session, self._streams):
            if s is not None:
                await s.close()
        self._session = self._streams = None

    # ------------------------------------------------------------------ discovery

    async def discover(self) -> None:
        """Read every served resource (preferred version of each group first)."""
        infos: list[ResourceInfo] = []
        for path in ("/api", "/apis"):
            code, body = await self._raw("GET", path, headers={"Accept": f"{AGGREGATED},application/json"})
            if code >= 400:
                if code == 404 and path == "/apis":
                    continue
                raise StatusError(body if isinstance(body, dict) else _status(code, str(body)))
            if isinstance(body, dict) and body.get("kind") == "APIGroupDiscoveryList":
                for item in body.get("items") or ():
                    group = (item.get("metadata") or {}).get("name") or ""
                    for ver in item.get("versions") or ():
                        for res in ver.get("resources") or ():
                            infos.append(_info(group, ver["version"], res))
            else:
                infos.extend(await self._legacy(path, body))
        self._resources = infos
        self._by_resource = {}
        for info in infos:
            self._by_resource.setdefault(info.resource, info)
        self.resources_version += 1
        self._discovered_once = True

    async def _legacy(self, path: str, body: Any) -> list[ResourceInfo]:
        gvs: list[tuple[str, str]] = []
        if path == "/api":
            gvs = [("", v) for v in (body or {}).get("versions") or ()]
        else:
            for group in (body or {}).get("groups") or ():
                preferred = (group.get("preferredVersion") or {}).get("version")
                versions = [v["version"] for v in group.get("versions") or ()]
                versions.sort(key=lambda v: v != preferred)
                gvs.extend((group["name"], v) for v in versions)
        out: list[ResourceInfo] = []
        for group, version in gvs:
            url = f"/api/{version}" if not group else f"/apis/{group}/{version}"
            code, doc = await self._raw("GET", url)
            if code >= 400 or not isinstance(doc, dict):
                continue
            subs: dict[str, list[str]] = {}
            for res in doc.get("resources") or ():
                if "/" in res.get("name", ""):
                    parent, sub = res["name"].split("/", 1)
                    subs.setdefault(parent, []).append(sub)
            for res in doc.get("resources") or ():
                if "/" not in res.get("name", ""):
                    res = dict(res, subresources=[{"subresource": s} for s in subs.get(res["name"], ())])
                    out.append(_info(group, version, res))
        return out

    def resources(self) -> list[ResourceInfo]:
        return list(self._resources)

    def audit_recent(self, n: int = 500) -> list[AuditRecord]:
        """A remote server's audit log is not readable through its API."""
        return []

    async def audit_follow(self) -> AsyncIterator[AuditRecord]:
        await asyncio.Event().wait()
        yield  # type: ignore[misc]

    # ------------------------------------------------------------------ requests

    def _path(self, req: Request) -> str:
        group, version = req.group, req.version
        if group is None or version is None:
            info = self._by_resource.get(req.resource)
            if info is None:
                raise StatusError(status_body(404, "NotFound",
                                              f'the server doesn\'t have a resource type "{req.resource}"'))
            group, version = info.group, info.version
        base = f"/api/{version}" if not group else f"/apis/{group}/{version}"
        parts = [base]
        if req.namespace and not (req.resource == "namespaces" and not group):
            parts.append(f"namespaces/{quote(req.namespace, safe='')}")
        parts.append(req.resource)
        named = req.verb not in ("list", "watch", "deletecollection", "create") or bool(req.subresource)
        if req.name is not None and named:
            parts.append(quote(req.name, safe=""))
            if req.subresource:
                parts.append(req.subresource)
        return "/".join(parts)

    def _query(self, req: Request) -> list[tuple[str, str]]:
        q: list[tuple[str, str]] = []
        if req.verb == "watch":
            q.append(("watch", "true"))
            if req.allow_watch_bookmarks:
                q.append(("allowWatchBookmarks", "true"))
            if req.send_initial_events is not None:
                q.append(("sendInitialEvents", "true" if req.send_initial_events else "false"))
            if req.name is not None:
                q.append(("fieldSelector", f"metadata.name={req.name}"))
        if req.label_selector:
            q.append(("labelSelector", req.label_selector))
        if req.field_selector:
            q.append(("fieldSelector", req.field_selector))
        if req.resource_version is not None:
            q.append(("resourceVersion", req.resource_version))
        if req.resource_version_match:
            q.append(("resourceVersionMatch", req.resource_version_match))
        if req.limit:
            q.append(("limit", str(req.limit)))
        if req.continue_:
            q.append(("continue", req.continue_))
        if req.timeout_seconds is not None:
            q.append(("timeoutSeconds", str(int(req.timeout_seconds))))
        if req.dry_run and req.verb not in ("delete", "deletecollection"):
            q.append(("dryRun", "All"))
        if req.field_manager:
            q.append(("fieldManager", req.field_manager))
        if req.field_validation:
            q.append(("fieldValidation", req.field_validation))
        if req.force:
            q.append(("force", "true"))
        q.extend(req.params.items())
        return q

    def _body(self, req: Request) -> tuple[bytes | None, str | None]:
        if req.verb in ("delete", "deletecollection"):
            opts: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
            if req.propagation_policy:
                opts["propagationPolicy"] = req.propagation_policy
            if req.grace_period_seconds is not None:
                opts["gracePeriodSeconds"] = req.grace_period_seconds
            if req.preconditions:
                opts["preconditions"] = req.preconditions
            if req.dry_run:
                opts["dryRun"] = ["All"]
            return json.dumps(opts).encode(), "application/json"
        if req.body is None:
            return None, None
        ctype = PATCH_TYPES.get(req.patch_type or "merge") if req.verb == "patch" else "application/json"
        body = req.body
        if isinstance(body, (bytes, bytearray)):
            return bytes(body), ctype
        if isinstance(body, str):
            return body.encode(), ctype
        return json.dumps(body).encode(), ctype

    async def _headers(self, req: Request | None, refresh: bool = False) -> dict[str, str]:
        h = {"Accept": "application/json"}
        creds = req.credentials if req is not None else None
        token = creds.token if creds is not None and creds.token else None
        if token is None:
            status = await self.config.exec_credential(refresh=refresh)
            token = (status or {}).get("token") or self.config.bearer()
        if token:
            h["Authorization"] = f"Bearer {token}"
        elif self.config.username is not None:
            pair = f"{self.config.username}:{self.config.password or ''}".encode()
            h["Authorization"] = "Basic " + base64.b64encode(pair).decode()
        if creds is not None:
            if creds.impersonate_user:
                h["Impersonate-User"] = creds.impersonate_user
            if creds.impersonate_uid:
                h["Impersonate-Uid"] = creds.impersonate_uid
        if req is not None and req.user_agent:
            h["User-Agent"] = req.user_agent
        return h

    async def _raw(self, method: str, path: str, headers: dict[str, str] | None = None) -> tuple[int, Any]:
        h = await self._headers(None)
        h.update(headers or {})
        assert self._session is not None, "HTTPSEntry.open() first"
        with io_tracker(self.clock):
            try:
                async with self._session.request(method, self.config.server + path, headers=h,
                                                 timeout=UNARY_TIMEOUT) as resp:
                    text = await resp.text()
                    return resp.status, self._decode(resp.status, text, resp.content_type)
            except (aiohttp.ClientError, OSError, TimeoutError) as err:
                raise StatusError(_status(503, f"{self.config.server}: {err}")) from None

    async def get_text(self, path: str) -> tuple[int, str]:
        """A non-resource path (``/readyz?verbose``, ``/metrics``, ``/version``): status and text."""
        h = await self._headers(None)
        h["Accept"] = "text/plain, */*"
        assert self._session is not None, "HTTPSEntry.open() first"
        with io_tracker(self.clock):
            try:
                async with self._session.get(self.config.server + path, headers=h,
                                             timeout=UNARY_TIMEOUT) as resp:
                    return resp.status, await resp.text()
            except (aiohttp.ClientError, OSError, TimeoutError) as err:
                raise StatusError(_status(503, f"{self.config.server}: {err}")) from None

    @staticmethod
    def _decode(code: int, text: str, content_type: str) -> Any:
        if "json" in content_type or text[:1] in ("{", "["):
            try:
                return json.loads(text)
            except ValueError:
                pass
        return _status(code, text) if code >= 400 else text

    async def handle(self, request: Request) -> Any:
        """The server's answer to ``request``: Response, watch stream or log stream."""
        if self._session is None or self._streams is None:
            return Response(503, _status(503, "the HTTPS client is closed"))
        try:
            path = self._path(request)
        except StatusError as err:
            if not self._discovered_once:
                raise
            await self.discover()  # a CRD created since: look again once
            try:
                path = self._path(request)
            except StatusError:
                return Response(404, err.status)
        url = self.config.server + path
        query = self._query(request)
        data, ctype = self._body(request)
        streaming = request.verb == "watch" or (request.subresource == "log" and request.params.get("follow"))
        refreshed, retries = False, 0
        while True:
            headers = await self._headers(request, refresh=refreshed)
            if ctype:
                headers["Content-Type"] = ctype
            if streaming:
                timeout = aiohttp.ClientTimeout(total=None, connect=CONNECT_TIMEOUT, sock_read=None)
            else:
                timeout = UNARY_TIMEOUT
            with io_tracker(self.clock):
                try:
                    session = self._streams if streaming else self._session
                    resp = await session.request(METHODS[request.verb], url, params=query, data=data,
                                                 headers=headers, timeout=timeout)
                except (aiohttp.ClientError, OSError) as err:
                    return Response(503, _status(503, f"{self.config.server}: {err}"))
                except TimeoutError:
                    return Response(504, _status(504, f"{request.verb} {request.resource}: no answer within "
                                                      f"{REQUEST_TIMEOUT:g} s"))
                if resp.status == 401 and not refreshed and self.config.exec_plugin is not None:
                    resp.close()
                    refreshed = True
                    continue
                if streaming and resp.status < 300:
                    return _Watch(resp) if request.verb == "watch" else _Lines(resp)
                try:
                    text = await resp.text()
                except (aiohttp.ClientError, OSError, TimeoutError) as err:
                    return Response(503, _status(503, f"{self.config.server}: {err}"))
                finally:
                    resp.close()
            wait = _retry_after(resp.status, resp.headers.get("Retry-After"))
            if wait is not None and retries < MAX_RETRIES:
                retries += 1
                await self.clock.sleep(wait)
                continue
            body = self._decode(resp.status, text, resp.content_type)
            if request.verb in ("list", "deletecollection") and resp.status < 300:
                body = typed_items(body)
            if request.subresource == "log" and resp.status < 300:
                body = text
            warnings = [w.split('"', 1)[1].rsplit('"', 1)[0] if '"' in w else w
                        for w in resp.headers.getall("Warning", [])]
            return Response(resp.status, body, warnings)


async def connect(kubeconfig: str | Path | list[Path] | None = None, context: str | None = None,
                  clock: Clock | None = None, *, user_agent: str = "kconsole") -> Client:
    """A :class:`Client` for a kubeconfig context; close it with ``await client.entry.close()``."""
    clock = clock or RealClock()
    entry = await HTTPSEntry.connect(kubeconfig, context, clock)
    return Client(entry, "", clock, user_agent=user_agent)


__all__ = ["HTTPSEntry", "KubeconfigError", "connect"]
