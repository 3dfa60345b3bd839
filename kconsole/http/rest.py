"""Turning an HTTP request into the API server's :class:`~kconsole.api.types.Request`.

Pure functions of (method, path, query, headers, body bytes) so every rule kubectl relies on (URL
layout, ``watch=true``, DeleteOptions bodies, patch content types, protobuf bodies) is testable
without a socket. Bad input raises :class:`~kconsole.api.types.StatusError` naming the problem.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from kconsole.api.decodetypes import json_type
from kconsole.api.types import Credentials, Request, StatusError, status_body
from kconsole.http import protobuf
from kconsole.objects import yamlload

#: Upstream's apiserver limit on request bodies.
MAX_BODY_BYTES = 3 * 1024 * 1024

PATCH_TYPES = {
    "application/json-patch+json": "json",
    "application/merge-patch+json": "merge",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
}

#: Subresources that stream, upgrade or pass any method on: exec, attach and portforward are served
#: by :mod:`kconsole.http.remotecommand` and :mod:`kconsole.http.portforward`, a pod's or Service's
#: proxy by :mod:`kconsole.api.proxy`, a node's proxy GET by its kubelet (see :func:`streaming_refused`).
STREAMING_SUBRESOURCES = ("exec", "attach", "portforward", "proxy")


def streaming_refused(route: Route, method: str) -> bool:
    """Whether kconsole answers ``route`` with its streaming refusal: a node's proxy other than a GET
    of its kubelet's endpoints (``nodes/<n>/proxy/...``)."""
    return route.resource == "nodes" and route.subresource == "proxy" and route.group == "" and method != "GET"


def proxied(route: Route) -> bool:
    """Whether ``route`` is a pod's or Service's proxy (:mod:`kconsole.api.proxy` answers it)."""
    return route.subresource == "proxy" and route.resource in ("pods", "services") and route.group == ""


#: RBAC's verb for each HTTP method of a proxied request (upstream's RequestInfoFactory).
PROXY_VERBS = {"GET": "get", "HEAD": "get", "POST": "create", "PUT": "update", "PATCH": "patch",
               "DELETE": "delete"}

_NAMESPACE_SUBRESOURCES = ("status", "finalize")


@dataclass(frozen=True, slots=True)
class Route:
    """Where a resource URL points (frozen: :func:`resource_route` hands the same one to every request)."""

    group: str
    version: str
    resource: str | None = None  # None: the group-version's discovery document
    namespace: str | None = None
    name: str | None = None
    subresource: str | None = None
    watch_prefix: bool = False
    #: What follows ``nodes/<name>/proxy`` (a kubelet endpoint: ``/configz``, ``/pods``...), or a pod's
    #: or Service's ``.../proxy`` ("" when nothing does: upstream redirects that to ``.../proxy/``).
    proxy_path: str | None = None


def not_found(message: str = "the server could not find the requested resource") -> StatusError:
    return StatusError(status_body(404, "NotFound", message, causes=None))


def method_not_allowed() -> StatusError:
    return StatusError(status_body(405, "MethodNotAllowed",
                                   "the server does not allow this method on the requested resource"))


def parse_path(path: str) -> Route:
    """``/api/v1/...`` or ``/apis/<group>/<version>/...`` -> :class:`Route`; other paths raise 404."""
    parts = [p for p in path.split("/") if p]
    if not parts or parts[0] not in ("api", "apis"):
        raise not_found()
    if parts[0] == "api":
        if len(parts) < 2:
            raise not_found()
        group, version, rest = "", parts[1], parts[2:]
    else:
        if len(parts) < 3:
            raise not_found()
        group, version, rest = parts[1], parts[2], parts[3:]
    if not rest:
        return Route(group, version)
    watch_prefix = rest[0] == "watch"
    if watch_prefix:
        rest = rest[1:]
        if not rest:
            raise not_found()
    namespace = None
    if rest[0] == "namespaces" and len(rest) > 1:
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            namespace = rest[1]
            rest = rest[2:]
    if len(rest) >= 3 and rest[2] == "proxy" and rest[0] in ("pods", "services") and namespace is not None \
            and not watch_prefix and group == "":
        found = _OBJECT_PROXY.match(path)
        return Route(group, version, rest[0], namespace, rest[1], "proxy", False,
                     path[found.end():] if found is not None else "/" + "/".join(rest[3:]))
    if len(rest) > 3:
        if rest[0] == "nodes" and rest[2] == "proxy" and namespace is None and not watch_prefix:
            return Route(group, version, "nodes", None, rest[1], "proxy", False, "/" + "/".join(rest[3:]))
        raise not_found()
    return Route(group, version, rest[0], namespace, rest[1] if len(rest) > 1 else None,
                 rest[2] if len(rest) > 2 else None, watch_prefix)


#: The part of a pod's or Service's proxy URL before the proxied path (which keeps its trailing slash).
_OBJECT_PROXY = re.compile(r"/+api/+[^/]+/+namespaces/+[^/]+/+(?:pods|services)/+[^/]+/+proxy")

_ROUTES_KEPT = 4096
_routes: dict[str, Route] = {}


def resource_route(path: str) -> Route | None:
    """The Route of a resource URL, or None for a discovery path (``/api``, ``/apis/<group>/<version>``, ...).

    Memoised: clients repeat the same collection URLs (every create of a pod in a namespace posts to
    one path), so the split and walk are done once per path, not once per request.
    """
    route = _routes.get(path)
    if route is not None:
        return route
    parts = [p for p in path.split("/") if p]
    if len(parts) <= (2 if parts[0] == "api" else 3):
        return None
    route = parse_path(path)
    if len(_routes) >= _ROUTES_KEPT:
        _routes.clear()
    _routes[path] = route
    return route


def _bool(query: Mapping[str, str], key: str) -> bool:
    value = query.get(key, "")
    if value in ("", "false", "False", "0"):
        return False
    if value in ("true", "True", "1"):
        return True
    raise StatusError.bad_request(f"invalid boolean value {value!r} for query parameter {key!r}")


def _int(query: Mapping[str, str], key: str) -> int | None:
    """An int64 query parameter as Go's strconv.ParseInt reads it (upstream's query decoding): digits
    with an optional sign, nothing else; the 400 carries Go's message."""
    value = query.get(key)
    if value is None or value == "":
        return None
    if not _INT64.fullmatch(value):
        raise StatusError.bad_request(f"strconv.ParseInt: parsing {_go_quote(value)}: invalid syntax")
    number = int(value)
    if not -(1 << 63) <= number < (1 << 63):
        raise StatusError.bad_request(f"strconv.ParseInt: parsing {_go_quote(value)}: value out of range")
    return number


_INT64 = re.compile(r"[+-]?[0-9]+")


def _go_quote(text: str) -> str:
    """Go's %q of a string, for the printable text query values are."""
    return json.dumps(text, ensure_ascii=False)


ACCEPTED_MEDIA_TYPES = ("application/json", "application/yaml", "application/vnd.kubernetes.protobuf")
#: Subresources that answer something other than an API object (logs, proxied pages, streams).
_RAW_SUBRESOURCES = frozenset({"log", "proxy", "exec", "attach", "portforward"})


def acceptable(accept: str | None, route: Route) -> bool:
    """Whether the Accept header names a media type the API answers in (upstream's negotiation:
    ``*/*``, ``application/*``, JSON, YAML or protobuf; no header means JSON)."""
    if not accept or route.subresource in _RAW_SUBRESOURCES:
        return True
    for clause in accept.split(","):
        media, *params = clause.split(";")
        media = media.strip().lower()
        if not media:
            continue
        if any(p.strip().replace(" ", "") in ("q=0", "q=0.0", "q=0.00", "q=0.000") for p in params):
            continue
        if media in ("*/*", "application/*") or media in ACCEPTED_MEDIA_TYPES:
            return True
    return False


def not_acceptable() -> StatusError:
    """406 as upstream's errNotAcceptable words it."""
    return StatusError(status_body(406, "NotAcceptable", "only the following media types are accepted: "
                                   + ", ".join(ACCEPTED_MEDIA_TYPES)))


def media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def decode_body(raw: bytes, content_type: str | None, *, what: str = "request body") -> Any:
    """JSON, YAML or Kubernetes protobuf -> Python value; 400/413/415 naming the problem otherwise.

    Decoding never takes more than the body's size in work and memory: YAML aliases expand within
    go-yaml's limits and the body limit (:mod:`kconsole.objects.yamlload`), and nothing nests deeper
    than :data:`~kconsole.objects.yamlload.MAX_DEPTH` levels.
    """
    kind = media_type(content_type)
    if kind == protobuf.CONTENT_TYPE:
        try:
            return protobuf.decode(raw)
        except protobuf.ProtobufError as err:
            raise StatusError.bad_request(f"invalid protobuf {what}: {err}") from None
    if kind in ("", "application/json", "application/json-patch+json", "application/merge-patch+json",
                "application/strategic-merge-patch+json", "*/*"):
        return decode_json(raw, what)
    if kind in ("application/yaml", "application/apply-patch+yaml", "application/x-yaml", "text/yaml"):
        try:
            return decode_json(raw, what)
        except StatusError as err:
            if err.code != 400 or not err.message.startswith("invalid JSON"):
                raise
        try:
            return yamlload.load(raw, max_bytes=MAX_BODY_BYTES)
        except yamlload.LimitError as err:
            if err.too_large:
                raise StatusError.too_large(f"Request entity too large: the YAML {what} {err.problem} "
                                            f"(its aliases expand it past the request body limit)") from None
            raise StatusError.bad_request(f"invalid YAML in {what}: {err}") from None
        except yaml.YAMLError as err:
            raise StatusError.bad_request(f"invalid YAML in {what}: {err}") from None
    raise StatusError.unsupported_media_type(
        f"the body of the request was in an unknown format - accepted media types include: application/json, "
        f"application/yaml, application/vnd.kubernetes.protobuf (got {kind!r})")


#: A ``\uD800``-``\uDFFF`` escape: possibly a lone surrogate, which Go's decoder turns into U+FFFD.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")


def decode_json(raw: bytes, what: str = "request body") -> Any:
    """JSON as Go's decoder reads it: a lone surrogate escape becomes U+FFFD (a valid pair is one
    character already); nesting deeper than the limit is a 400, not a RecursionError."""
    depth = yamlload.MAX_DEPTH
    try:
        value = json.loads(raw)
    except RecursionError:
        raise StatusError.bad_request(f"invalid JSON in {what}: nests deeper than {depth} levels") from None
    except (ValueError, UnicodeDecodeError) as err:
        raise StatusError.bad_request(f"invalid JSON in {what}: {err}") from None
    if raw.count(b"[") + raw.count(b"{") > depth and _deeper_than(value, depth):
        raise StatusError.bad_request(f"invalid JSON in {what}: nests deeper than {depth} levels")
    if b"\\u" in raw and _SURROGATE_ESCAPE.search(raw) is not None:
        value = _without_surrogates(value)
    return value


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether objects and arrays nest more than ``limit`` levels (iterative: any depth is safe)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        for child in children:
            if isinstance(child, (dict, list)):
                if depth >= limit:
                    return True
                stack.append((child, depth + 1))
    return False


def _without_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_surrogates(v) for v in value]
    return value


#: DeleteOptions' fields and the JSON types Go's decoder accepts for them.
_DELETE_OPTION_TYPES: dict[str, tuple[type, ...]] = {
    "apiVersion": (str,), "kind": (str,), "gracePeriodSeconds": (int,), "preconditions": (dict,),
    "orphanDependents": (bool,), "propagationPolicy": (str,), "dryRun": (list,),
}
_GO_TYPES = {"gracePeriodSeconds": "int64", "preconditions": "v1.Preconditions", "orphanDependents": "bool",
             "propagationPolicy": "v1.DeletionPropagation", "dryRun": "[]string", "apiVersion": "string",
             "kind": "string"}


def _delete_option_problem(opts: dict[str, Any]) -> str | None:
    for key, types in _DELETE_OPTION_TYPES.items():
        value = opts.get(key)
        if value is None:
            continue
        if isinstance(value, bool) and bool not in types or not isinstance(value, types):
            return (f"json: cannot unmarshal {json_type(value)} into Go struct field DeleteOptions.{key} "
                    f"of type {_GO_TYPES[key]}")
    for key, value in (opts.get("preconditions") or {}).items():
        if value is not None and not isinstance(value, str):
            return (f"json: cannot unmarshal {json_type(value)} into Go struct field Preconditions.preconditions."
                    f"{key} of type string")
    if any(not isinstance(v, str) for v in opts.get("dryRun") or ()):
        return "json: cannot unmarshal into Go struct field DeleteOptions.dryRun of type string"
    return None


def _apply_delete_options(request: Request, opts: Any) -> None:
    if not isinstance(opts, dict):
        raise StatusError.bad_request("DeleteOptions must be a JSON object")
    if opts.get("kind") not in (None, "DeleteOptions"):
        raise StatusError.bad_request(f"expected DeleteOptions in the request body, got kind {opts.get('kind')!r}")
    problem = _delete_option_problem(opts)
    if problem is not None:
        raise StatusError.bad_request(f"couldn't get options: {problem}")
    if opts.get("propagationPolicy"):
        request.propagation_policy = str(opts["propagationPolicy"])
    elif opts.get("orphanDependents") is True:
        request.propagation_policy = "Orphan"
    elif opts.get("orphanDependents") is False and request.propagation_policy is None:
        request.propagation_policy = "Background"
    if opts.get("gracePeriodSeconds") is not None:
        request.grace_period_seconds = opts["gracePeriodSeconds"]
    if opts.get("preconditions"):
        request.preconditions = {k: v for k, v in opts["preconditions"].items() if v is not None}
    if opts.get("dryRun"):
        request.dry_run = True


def _apply_query(req: Request, query: Mapping[str, str]) -> None:
    """The query string's options (most writes carry none, and skip this)."""
    req.label_selector = query.get("labelSelector", "")
    req.field_selector = query.get("fieldSelector", "")
    req.resource_version = query.get("resourceVersion") or None
    req.resource_version_match = query.get("resourceVersionMatch") or None
    req.limit = _int(query, "limit") or 0
    req.continue_ = query.get("continue") or None
    req.allow_watch_bookmarks = _bool(query, "allowWatchBookmarks")
    req.field_manager = query.get("fieldManager") or None
    req.field_validation = query.get("fieldValidation") or None
    req.force = _bool(query, "force")
    req.propagation_policy = query.get("propagationPolicy") or None
    req.grace_period_seconds = _int(query, "gracePeriodSeconds")
    timeout = _int(query, "timeoutSeconds")
    if timeout is not None:
        req.timeout_seconds = float(timeout)
    if "sendInitialEvents" in query:
        req.send_initial_events = _bool(query, "sendInitialEvents")
    dry_run = query.get("dryRun")
    if dry_run:
        if dry_run != "All":
            raise StatusError.bad_request(f"Invalid dryRun value {dry_run!r}: only \"All\" is supported")
        req.dry_run = True
    if _bool(query, "orphanDependents") and req.propagation_policy is None:
        req.propagation_policy = "Orphan"
    for key in ("container", "follow", "tailLines", "previous", "timestamps", "sinceSeconds", "sinceTime",
                "limitBytes", "pretty"):
        if key in query:
            req.params[key] = query[key]


def build_request(method: str, route: Route, query: Mapping[str, str], headers: Mapping[str, str],
                  raw: bytes, credentials: Credentials, *, decode: bool = True) -> Request:
    """One HTTP request on a resource URL -> the API server's Request; without ``decode`` the body
    is left out unread (a caller that failed authentication gets its 401 before any parsing)."""
    assert route.resource is not None
    method = method.upper()
    name, sub = route.name, route.subresource
    watch = route.watch_prefix or (bool(query) and _bool(query, "watch"))
    if method == "GET":
        if watch:
            verb = "watch"
        else:
            verb = "get" if name else "list"
    elif method == "POST":
        if name and not sub:
            raise method_not_allowed()
        verb = "create"
    elif method == "PUT":
        if not name:
            raise method_not_allowed()
        verb = "update"
    elif method == "PATCH":
        if not name:
            raise method_not_allowed()
        verb = "patch"
    elif method == "DELETE":
        verb = "delete" if name else "deletecollection"
    else:
        raise method_not_allowed()
    req = Request(verb=verb, resource=route.resource, group=route.group, version=route.version,
                  namespace=route.namespace, name=name, subresource=sub, credentials=credentials,
                  user_agent=headers.get("User-Agent", ""), source="http")
    if query:
        _apply_query(req, query)
    if req.field_validation is None and verb in ("create", "update", "patch"):
        req.field_validation = "Warn"  # upstream's default for a request that names no directive
    if route.proxy_path is not None:
        req.params["path"] = route.proxy_path
    if verb == "watch" and name:
        selector = f"metadata.name={name}"
        req.field_selector = f"{req.field_selector},{selector}" if req.field_selector else selector
        req.name = None
    content_type = headers.get("Content-Type")
    if not decode:
        return req
    if verb == "patch":
        patch_type = PATCH_TYPES.get(media_type(content_type))
        if patch_type is None:
            raise StatusError.unsupported_media_type(
                f"the body of the request was in an unknown format - accepted media types include: "
                f"{', '.join(PATCH_TYPES)}")
        if not raw:
            raise StatusError.bad_request("the patch body is empty")
        req.patch_type = patch_type
        req.body = decode_body(raw, content_type, what="patch")
        if patch_type == "json" and not isinstance(req.body, list):
            raise StatusError.bad_request("a JSON patch must be a JSON array of operations")
        if patch_type != "json" and not isinstance(req.body, dict):
            raise StatusError.bad_request(f"a {patch_type} patch must be a JSON object")
    elif verb in ("create", "update"):
        if not raw:
            raise StatusError.bad_request("the request body is empty; expected an object")
        req.body = decode_body(raw, content_type)
        if not isinstance(req.body, dict):
            raise StatusError.bad_request("the request body must be an object (a JSON or YAML map)")
    elif verb in ("delete", "deletecollection") and raw.strip():
        _apply_delete_options(req, decode_body(raw, content_type, what="DeleteOptions"))
    return req
