"""The in-process typed-less client: client-go's dynamic client over the API server's one entry.

Every component (scheduler, controllers, kubelets, folder sync, console) talks to the API through
a :class:`Client` bound to its own bearer token, so authentication, RBAC, admission and audit apply
to it exactly as to kubectl. Requests are built as :class:`~kconsole.api.types.Request`; failures
raise :class:`~kconsole.api.types.StatusError`.

Objects handed back are the caller's to keep; objects given to ``create``/``update``/``apply`` are
sent as they are and not modified, so an object read from an informer cache may be passed only if
nothing changes it (copy it with ``kconsole.objects.meta.deep_copy`` before editing).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from kconsole.api.types import (
    Credentials,
    Entry,
    LogStream,
    Request,
    ResourceInfo,
    Response,
    StatusError,
    WatchStream,
    status_body,
)
from kconsole.clock import Clock

#: Page size for :meth:`Client.list_all` and informers (client-go's pager default).
DEFAULT_PAGE_SIZE = 500


def _no_kind(kind: str, api_version: str | None) -> StatusError:
    where = f' in version "{api_version}"' if api_version else ""
    return StatusError(status_body(404, "NotFound", f'no matches for kind "{kind}"{where}'))


def _meta(obj: dict[str, Any], what: str) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise StatusError.bad_request(f"{what}: expected an object (dict), got {type(obj).__name__}")
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        raise StatusError.bad_request(f"{what}: object has no metadata")
    return meta


_Tables = tuple[dict[str, ResourceInfo], dict[tuple[str, str], ResourceInfo], dict[str, ResourceInfo]]
#: Lookup tables by the identity of the discovery entries they were built from (kept with them, so no
#: identity is reused while remembered): a fleet has a Client per kubelet, and thousands of copies of
#: the same tables were tens of kilobytes each.
_TABLES: dict[tuple[int, ...], tuple[list[ResourceInfo], _Tables]] = {}
TABLES_KEPT = 8


def _tables(infos: list[ResourceInfo]) -> _Tables:
    """Name, kind and bare-kind lookups for one discovery, built once for every Client that shares it."""
    key = tuple(map(id, infos))
    hit = _TABLES.get(key)
    if hit is not None:
        return hit[1]
    by_name: dict[str, ResourceInfo] = {}
    by_kind: dict[tuple[str, str], ResourceInfo] = {}
    by_bare_kind: dict[str, ResourceInfo] = {}
    # Core first, then the others in the server's order: upstream's preference on ambiguity.
    for info in sorted(infos, key=lambda i: i.group != ""):
        by_kind.setdefault((info.api_version, info.kind), info)
        by_bare_kind.setdefault(info.kind.lower(), info)
        for name in (info.resource, info.singular, *info.short_names, info.kind.lower()):
            if name:
                by_name.setdefault(name.lower(), info)
        by_name.setdefault(info.group_resource.lower(), info)
        by_name.setdefault(f"{info.resource}.{info.version}.{info.group}".lower(), info)
    if len(_TABLES) >= TABLES_KEPT:
        del _TABLES[next(iter(_TABLES))]
    tables = (by_name, by_kind, by_bare_kind)
    _TABLES[key] = (infos, tables)
    return tables


class Client:
    """Talks to one :class:`~kconsole.api.types.Entry` as one user."""

    def __init__(self, entry: Entry, token: str, clock: Clock, *, user_agent: str = "") -> None:
        self.entry = entry
        self.token = token
        self.clock = clock
        self.user_agent = user_agent
        self._credentials = Credentials(token=token)
        self._by_name: dict[str, ResourceInfo] = {}
        self._by_kind: dict[tuple[str, str], ResourceInfo] = {}
        self._by_bare_kind: dict[str, ResourceInfo] = {}
        self._resources_version = -1

    # ------------------------------------------------------------------ discovery

    def _load_resources(self) -> None:
        self._resources_version = getattr(self.entry, "resources_version", 0)
        self._by_name, self._by_kind, self._by_bare_kind = _tables(list(self.entry.resources()))

    def resources(self) -> list[ResourceInfo]:
        """Every resource the server serves now, custom ones included (discovery, as kubectl api-resources)."""
        return list(self.entry.resources())

    def resource_info(self, resource_or_kind: str, api_version: str | None = None) -> ResourceInfo:
        """Discovery entry for a plural, singular, short name, kind or ``plural.group``; with
        ``api_version`` the argument is a kind (``("Deployment", "apps/v1")``). Looked up again
        after a miss, and after the server says its resources changed (a CRD re-created with
        another scope or version: an entry from before would send requests to the wrong path)."""
        for attempt in range(2):
            if attempt or not self._by_name or self._resources_version != getattr(self.entry, "resources_version", 0):
                self._load_resources()
            if api_version is not None:
                info = self._by_kind.get((api_version, resource_or_kind))
            else:
                key = resource_or_kind.lower()
                info = self._by_name.get(key) or self._by_bare_kind.get(key)
            if info is not None:
                return info
        if api_version is not None:
            raise _no_kind(resource_or_kind, api_version)
        raise StatusError(status_body(404, "NotFound",
                                      f'the server doesn\'t have a resource type "{resource_or_kind}"'))

    def _info_for(self, obj: dict[str, Any], what: str) -> ResourceInfo:
        kind, api_version = obj.get("kind"), obj.get("apiVersion")
        if not kind or not api_version:
            raise StatusError.bad_request(f"{what}: object needs both apiVersion and kind to pick its resource")
        return self.resource_info(kind, api_version)

    # ------------------------------------------------------------------ plumbing

    def _request(self, verb: str, resource: str, **fields: Any) -> Request:
        subresource = fields.pop("subresource", None)
        if "/" in resource and subresource is None:
            resource, subresource = resource.split("/", 1)
        try:
            info: ResourceInfo | None = self.resource_info(resource)
        except StatusError:
            info = None  # let the server answer with its own NotFound
        if info is not None:
            return Request(verb=verb, resource=info.resource, group=info.group, version=info.version,
                           subresource=subresource, credentials=self._credentials,
                           user_agent=self.user_agent, **fields)
        return Request(verb=verb, resource=resource, subresource=subresource, credentials=self._credentials,
                       user_agent=self.user_agent, **fields)

    def _request_for(self, verb: str, info: ResourceInfo, **fields: Any) -> Request:
        return Request(verb=verb, resource=info.resource, group=info.group, version=info.version,
                       credentials=self._credentials, user_agent=self.user_agent, **fields)

    async def _send(self, request: Request, warnings: list[str] | None = None) -> Any:
        """The response's body; its Warning texts go to ``warnings`` when the caller keeps them."""
        result = await self.entry.handle(request)
        if not isinstance(result, Response):
            await result.close()
            raise StatusError.internal(f"{request.verb} {request.resource}: expected a response, got a stream")
        if result.code >= 400:
            body = result.body if isinstance(result.body, dict) else status_body(
                result.code, "Unknown", str(result.body))
            raise StatusError(body)
        if warnings is not None:
            warnings.extend(result.warnings)
        return result.body

    @staticmethod
    def _namespace(info: ResourceInfo, namespace: str | None) -> str | None:
        if not info.namespaced:
            return None
        return namespace or "default"

    # ------------------------------------------------------------------ reads

    async def get(self, resource: str, name: str, namespace: str | None = None, *,
                  subresource: str | None = None) -> dict[str, Any]:
        return await self._send(self._request("get", resource, name=name, namespace=namespace,
                                              subresource=subresource))

    async def list(self, resource: str, namespace: str | None = None, *, label_selector: str = "",
                   field_selector: str = "", limit: int = 0, continue_: str | None = None,
                   resource_version: str | None = None) -> dict[str, Any]:
        """One page: the List object with ``metadata.resourceVersion`` and ``metadata.continue``."""
        return await self._send(self._request(
            "list", resource, namespace=namespace, label_selector=label_selector, field_selector=field_selector,
            limit=limit, continue_=continue_, resource_version=resource_version))

    async def list_pages(self, resource: str, namespace: str | None = None, *, label_selector: str = "",
                         field_selector: str = "", limit: int = DEFAULT_PAGE_SIZE,
                         resource_version: str | None = None) -> tuple[list[dict[str, Any]], str]:
        """All items by following continue tokens, and the list's resourceVersion.

        As client-go's pager: when a continue token has expired (410) mid-way, list everything
        again in one request instead.
        """
        items: list[dict[str, Any]] = []
        token: str | None = None
        while True:
            try:
                page = await self.list(resource, namespace, label_selector=label_selector,
                                       field_selector=field_selector, limit=limit, continue_=token,
                                       resource_version=None if token else resource_version)
            except StatusError as err:
                if token is None or err.code != 410:
                    raise
                page = await self.list(resource, namespace, label_selector=label_selector,
                                       field_selector=field_selector, resource_version=resource_version)
                items = []
                token = None
            items.extend(page.get("items") or ())
            meta = page.get("metadata") or {}
            token = meta.get("continue") or None
            if not token:
                return items, str(meta.get("resourceVersion", ""))

    async def list_all(self, resource: str, namespace: str | None = None, *, label_selector: str = "",
                       field_selector: str = "", limit: int = DEFAULT_PAGE_SIZE,
                       resource_version: str | None = None) -> list[dict[str, Any]]:
        items, _ = await self.list_pages(resource, namespace, label_selector=label_selector,
                                         field_selector=field_selector, limit=limit,
                                         resource_version=resource_version)
        return items

    @contextlib.asynccontextmanager
    async def watch(self, resource: str, namespace: str | None = None, *, resource_version: str | None = None,
                    label_selector: str = "", field_selector: str = "", allow_watch_bookmarks: bool = True,
                    timeout_seconds: float | None = None) -> AsyncIterator[WatchStream]:
        """``async with client.watch("pods") as events: async for ev in events: ...``

        Events are ``{"type", "object"}``; an ``ERROR`` event carries a Status (410 when the
        resourceVersion is too old) and the stream ends after it. The stream is closed on exit.
        """
        result = await self.entry.handle(self._request(
            "watch", resource, namespace=namespace, resource_version=resource_version,
            label_selector=label_selector, field_selector=field_selector,
            allow_watch_bookmarks=allow_watch_bookmarks, timeout_seconds=timeout_seconds))
        if isinstance(result, Response):
            if result.code >= 400 and isinstance(result.body, dict):
                raise StatusError(result.body)
            raise StatusError.internal(f"watch {resource}: expected a stream, got a {result.code} response")
        try:
            yield result  # type: ignore[misc]
        finally:
            await result.close()

    async def logs(self, namespace: str, pod: str, *, container: str | None = None, follow: bool = False,
                   tail_lines: int | None = None, previous: bool = False) -> str | LogStream:
        """The container's log text; with ``follow`` a stream of lines (close it when done);
        ``previous``: the last terminated instance's log (``kubectl logs --previous``)."""
        params: dict[str, str] = {}
        if container:
            params["container"] = container
        if follow:
            params["follow"] = "true"
        if previous:
            params["previous"] = "true"
        if tail_lines is not None:
            params["tailLines"] = str(tail_lines)
        result = await self.entry.handle(self._request("get", "pods", name=pod, namespace=namespace,
                                                       subresource="log", params=params))
        if isinstance(result, Response):
            if result.code >= 400:
                raise StatusError(result.body if isinstance(result.body, dict)
                                  else status_body(result.code, "Unknown", str(result.body)))
            return result.body if isinstance(result.body, str) else str(result.body)
        return result  # type: ignore[return-value]

    # ------------------------------------------------------------------ writes

    async def create(self, obj: dict[str, Any], *, namespace: str | None = None, dry_run: bool = False,
                     field_manager: str | None = None) -> dict[str, Any]:
        """Create ``obj``; the resource comes from its apiVersion and kind."""
        meta = _meta(obj, "create")
        info = self._info_for(obj, "create")
        ns = self._namespace(info, namespace or meta.get("namespace"))
        return await self._send(self._request_for("create", info, namespace=ns, name=meta.get("name"),
                                                  body=obj, dry_run=dry_run, field_manager=field_manager))

    async def create_subresource(self, resource: str, name: str, namespace: str | None, subresource: str,
                                 body: dict[str, Any]) -> dict[str, Any]:
        """POST to a subresource: ``pods/binding``, ``pods/eviction``."""
        return await self._send(self._request("create", resource, name=name, namespace=namespace,
                                              subresource=subresource, body=body))

    async def bind(self, pod: dict[str, Any], node_name: str) -> None:
        """Assign ``pod`` to ``node_name`` (what the scheduler's DefaultBinder posts)."""
        meta = _meta(pod, "bind")
        binding_meta: dict[str, Any] = {"name": meta["name"], "namespace": meta.get("namespace") or "default"}
        if meta.get("uid"):
            binding_meta["uid"] = meta["uid"]
        body = {"apiVersion": "v1", "kind": "Binding", "metadata": binding_meta,
                "target": {"apiVersion": "v1", "kind": "Node", "name": node_name}}
        await self.create_subresource("pods", meta["name"], binding_meta["namespace"], "binding", body)

    async def update(self, obj: dict[str, Any], *, subresource: str | None = None, dry_run: bool = False,
                     field_manager: str | None = None) -> dict[str, Any]:
        """Replace ``obj``; compare-and-swap on its ``metadata.resourceVersion`` (409 Conflict if stale)."""
        meta = _meta(obj, "update")
        if not meta.get("name"):
            raise StatusError.bad_request("update: metadata.name is required")
        info = self._info_for(obj, "update")
        return await self._send(self._request_for(
            "update", info, namespace=self._namespace(info, meta.get("namespace")), name=meta["name"],
            subresource=subresource, body=obj, dry_run=dry_run, field_manager=field_manager))

    async def update_status(self, obj: dict[str, Any]) -> dict[str, Any]:
        return await self.update(obj, subresource="status")

    async def patch(self, resource: str, name: str, patch: Any, namespace: str | None = None, *,
                    patch_type: str = "merge", subresource: str | None = None, field_manager: str | None = None,
                    force: bool = False, dry_run: bool = False) -> dict[str, Any]:
        """``patch_type``: ``merge`` (RFC 7386), ``json`` (RFC 6902), ``strategic`` or ``apply``."""
        if patch_type not in ("merge", "json", "strategic", "apply"):
            raise StatusError.unsupported_media_type(
                f'patch type "{patch_type}" is not one of merge, json, strategic, apply')
        return await self._send(self._request(
            "patch", resource, name=name, namespace=namespace, body=patch, patch_type=patch_type,
            subresource=subresource, field_manager=field_manager, force=force, dry_run=dry_run))

    async def apply(self, obj: dict[str, Any], *, field_manager: str, force: bool = False,
                    dry_run: bool = False, field_validation: str | None = None,
                    warnings: list[str] | None = None) -> dict[str, Any]:
        """Server-side apply: creates the object if absent, 409 on field-manager conflicts unless forced.
        ``field_validation`` as ``?fieldValidation=`` says it; the server's warnings go to ``warnings``."""
        if not field_manager:
            raise StatusError.bad_request("apply: a field manager is required for server-side apply")
        meta = _meta(obj, "apply")
        if not meta.get("name"):
            raise StatusError.bad_request("apply: metadata.name is required")
        info = self._info_for(obj, "apply")
        request = self._request_for(
            "patch", info, namespace=self._namespace(info, meta.get("namespace")), name=meta["name"], body=obj,
            patch_type="apply", field_manager=field_manager, force=force, dry_run=dry_run)
        request.field_validation = field_validation
        return await self._send(request, warnings)

    async def delete(self, resource: str, name: str, namespace: str | None = None, *,
                     propagation_policy: str | None = None, grace_period_seconds: int | None = None,
                     preconditions: dict[str, str] | None = None, dry_run: bool = False) -> dict[str, Any]:
        """The deleted object, the object now being deleted (finalizers, grace), or a Status."""
        return await self._send(self._request(
            "delete", resource, name=name, namespace=namespace, propagation_policy=propagation_policy,
            grace_period_seconds=grace_period_seconds, preconditions=preconditions, dry_run=dry_run))
