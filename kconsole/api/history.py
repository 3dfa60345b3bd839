"""History reads: the cluster at a past revision and what changed between two, for users RBAC lets.

API clients keep upstream's semantics (a read below the compact revision answers 410); the store
keeps the rows compaction would drop down to its history floor (see ``kconsole/store/facade.py``),
and this module serves them as a review kind of kconsole's own group: a ``HistoryQuery`` created
(``POST /apis/history.kconsole.io/v1/historyqueries``) is answered with its ``status``, never
stored. Who may: ``create`` on ``historyqueries.history.kconsole.io`` (cluster-admin,
system:masters, the console's user). Secret values are sent only to users who may ``get`` the
Secret; others see each value as ``""``.

``spec.op`` is one of:

- ``bounds``: ``status.oldest`` / ``status.current`` revisions and their times.
- ``changes``: writes in revisions ``(spec.after, spec.upto]`` (``spec.resource``, ``spec.group``,
  ``spec.namespace``, ``spec.name`` or ``spec.namePrefix`` narrow them; ``spec.limit``), as
  ``status.changes``: ``{revision, time, type, resource, group, namespace, name, object, previous}``.
- ``listAt``: every object of ``spec.resource`` (``spec.group``, ``spec.namespace``) as it was at
  ``spec.revision``, as ``status.items``.
- ``revisionAt``: the last revision written at or before ``spec.time`` (simulated seconds).
- ``timeOf``: the simulated time ``spec.revision`` was written at.
- ``writes``: the write requests recorded for one object (``spec.resource``, ``spec.group``,
  ``spec.namespace``, ``spec.name``): who made them, the revision they wrote, or the stage of the
  request pipeline that refused them (see :mod:`kconsole.api.writelog`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kconsole.api.registry import ResourceSpec
from kconsole.api.stages import Attributes
from kconsole.api.types import Response, StatusError, status_body
from kconsole.store.kv import CompactedError, KeyValue, prefix_end

if TYPE_CHECKING:
    from kconsole.api.server import APIServer, _Call

GROUP = "history.kconsole.io"
RESOURCE = "historyqueries"
KIND = "HistoryQuery"
OPS = ("bounds", "changes", "listAt", "revisionAt", "timeOf", "writes")
#: Objects one query answers at most (a larger history is read in pages with ``limit``).
MAX_ITEMS = 1_000_000

Obj = dict[str, Any]


def _int(spec: Obj, name: str, default: int | None = None) -> int:
    value = spec.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int):
        if value is None:
            raise StatusError.bad_request(f"HistoryQuery spec.{name} is required")
        raise StatusError.bad_request(f"HistoryQuery spec.{name} must be an integer, not {value!r}")
    if value < 0:
        raise StatusError.bad_request(f"HistoryQuery spec.{name} must be >= 0, not {value}")
    return value


def _str(spec: Obj, name: str) -> str | None:
    value = spec.get(name)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise StatusError.bad_request(f"HistoryQuery spec.{name} must be a string, not {value!r}")
    return value


class _Keys:
    """Store keys to (spec, namespace, name) and back, for the stored resources now served."""

    def __init__(self, server: APIServer) -> None:
        self.by_prefix: dict[str, ResourceSpec] = {s.prefix: s for s in server.registry if s.stored}
        layout = getattr(server.kv, "layout", None)
        if layout is not None:  # real etcd: keys read back map to kconsole's only for prefixes mapped out
            for prefix in self.by_prefix:
                layout.to_etcd(prefix + "_")

    def parse(self, key: str) -> tuple[ResourceSpec, str | None, str] | None:
        parts = key.split("/")
        for cut in (3, 4):  # /registry/<group_resource>/ or a custom resource's /registry/<group>/<plural>/
            spec = self.by_prefix.get("/".join(parts[:cut]) + "/")
            if spec is not None:
                rest = parts[cut:]
                if spec.namespaced and len(rest) == 2:
                    return spec, rest[0], rest[1]
                if not spec.namespaced and len(rest) == 1:
                    return spec, None, rest[0]
        return None


def _resolve(server: APIServer, spec: Obj) -> ResourceSpec:
    resource = _str(spec, "resource")
    if resource is None:
        raise StatusError.bad_request("HistoryQuery spec.resource is required for this op")
    found = server.registry.resolve(resource, spec.get("group") if isinstance(spec.get("group"), str) else None)
    if not found.stored:
        raise StatusError.bad_request(f"{found.group_resource} is not stored: it has no history")
    return found


def _range(spec: ResourceSpec | None, namespace: str | None, name: str | None, name_prefix: str | None
           ) -> tuple[str, str | None]:
    if spec is None:
        return "/registry/", prefix_end("/registry/")
    base = spec.prefix + (f"{namespace}/" if spec.namespaced and namespace else "")
    if name is not None and (namespace is not None or not spec.namespaced):
        return base + name, None
    if name_prefix is not None and (namespace is not None or not spec.namespaced):
        return base + name_prefix, prefix_end(base + name_prefix)
    return base, prefix_end(base)


class _Reader:
    """Decodes stored values for one user: Secrets' values only if the user may get them."""

    def __init__(self, server: APIServer, call: _Call) -> None:
        self.server = server
        self.user = call.user
        self._decoders: dict[str, Any] = {}
        self._secrets: dict[str, bool] = {}

    def decode(self, spec: ResourceSpec, kv: KeyValue, namespace: str | None) -> Obj:
        decoder = self._decoders.get(spec.group_resource)
        if decoder is None:
            decoder = self._decoders[spec.group_resource] = self.server.storage.decoder(spec)
        obj = decoder(kv)
        if spec.group_resource == "secrets" and not self._may_read_secrets(namespace or ""):
            for field in ("data", "stringData"):
                if isinstance(obj.get(field), dict):
                    obj[field] = {k: "" for k in obj[field]}
        return obj

    def _may_read_secrets(self, namespace: str) -> bool:
        allowed = self._secrets.get(namespace)
        if allowed is None:
            attrs = Attributes(user=self.user, verb="get", group="", version="v1", resource="secrets",
                               namespace=namespace)
            allowed = self._secrets[namespace] = bool(self.server.authorizer.authorize(attrs)[0])
        return allowed


async def answer(server: APIServer, call: _Call, spec: ResourceSpec) -> Response:
    """Answer one HistoryQuery (the request was authenticated and authorized already)."""
    req = call.req
    if req.verb != "create":
        raise StatusError.method_not_supported(spec.group_resource, req.verb)
    body = req.body if isinstance(req.body, dict) else None
    if body is None:
        raise StatusError.bad_request(f"the request body must be a {KIND} object")
    query = body.get("spec")
    if not isinstance(query, dict):
        raise StatusError.bad_request("HistoryQuery needs a spec")
    op = query.get("op")
    if op not in OPS:
        raise StatusError.bad_request(f"HistoryQuery spec.op must be one of {', '.join(OPS)}, not {op!r}")
    kv = server.kv
    if not hasattr(kv, "history_bounds"):
        raise StatusError.bad_request("this store keeps no history")
    try:
        status = await _status(server, call, op, query)
    except CompactedError as err:
        raise StatusError(status_body(
            410, "Expired", f"the history starts at revision {err.compact_revision}: older revisions are not kept "
                            f"(see history-retention and history-max-bytes)")) from None
    out: Obj = {"apiVersion": f"{GROUP}/v1", "kind": KIND, "metadata": dict(body.get("metadata") or {}),
                "spec": query, "status": status}
    return Response(201, out)


async def _status(server: APIServer, call: _Call, op: str, query: Obj) -> Obj:
    kv = server.kv
    status: Obj
    if op == "bounds":
        oldest, current, oldest_time, current_time = kv.history_bounds()
        status = {"oldest": oldest, "current": current, "oldestTime": oldest_time, "currentTime": current_time}
    elif op == "revisionAt":
        t = query.get("time")
        if isinstance(t, bool) or not isinstance(t, (int, float)):
            raise StatusError.bad_request(f"HistoryQuery spec.time must be a number of seconds, not {t!r}")
        status = {"revision": kv.revision_at(float(t))}
    elif op == "timeOf":
        status = {"time": kv.time_of(_int(query, "revision"))}
    elif op == "listAt":
        status = await _list_at(server, call, query)
    elif op == "changes":
        status = await _changes(server, call, query)
    else:
        target = _resolve(server, query)
        namespace = _str(query, "namespace") if target.namespaced else None
        status = {"writes": server.writelog.for_object(target.group_resource, namespace, _str(query, "name") or "")}
    return status


async def _list_at(server: APIServer, call: _Call, query: Obj) -> Obj:
    target = _resolve(server, query)
    revision = _int(query, "revision")
    if revision == 0:
        raise StatusError.bad_request("HistoryQuery spec.revision must be a revision (>= 1)")
    namespace = _str(query, "namespace") if target.namespaced else None
    key, end = _range(target, namespace, None, None)
    keys = _Keys(server)
    result = await server.kv.history_range(key, end, revision)
    reader = _Reader(server, call)
    items = []
    for kv in result.kvs:
        where = keys.parse(kv.key)
        items.append(reader.decode(target, kv, where[1] if where else namespace))
    return {"revision": revision, "items": items}


async def _changes(server: APIServer, call: _Call, query: Obj) -> Obj:
    after, upto = _int(query, "after"), _int(query, "upto")
    limit = _int(query, "limit", 0)
    target = _resolve(server, query) if _str(query, "resource") else None
    namespace = _str(query, "namespace")
    name, name_prefix = _str(query, "name"), _str(query, "namePrefix")
    key, end = _range(target, namespace, name, name_prefix)
    few = target is not None and (name is not None or name_prefix is not None)
    keys = _Keys(server)
    events = await server.kv.history_changes(key, end, after, upto, min(limit or MAX_ITEMS, MAX_ITEMS), few)
    reader = _Reader(server, call)
    kv = server.kv
    out = []
    for event in events:
        where = keys.parse(event.kv.key)
        if where is None:
            continue  # not an object key (the API server's own bookkeeping)
        spec, ns, name = where
        if target is None and (namespace is not None and ns != namespace):
            continue
        obj = reader.decode(spec, event.kv, ns) if event.type == "PUT" else None
        prev = reader.decode(spec, event.prev_kv, ns) if event.prev_kv is not None else None
        revision = event.kv.mod_revision
        kind = "DELETED" if event.type == "DELETE" else ("ADDED" if prev is None else "MODIFIED")
        out.append({"revision": revision, "time": kv.time_of(revision), "type": kind, "resource": spec.resource,
                    "group": spec.group, "namespace": ns, "name": name, "object": obj, "previous": prev})
    return {"changes": out}
