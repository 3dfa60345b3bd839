"""The API server's public request/response types: the one door every client goes through.

The in-process client (``kconsole.client``) and the HTTP front (``kconsole.http``) are two adapters
over :class:`Entry`; both build a :class:`Request` and get back a :class:`Response` (object, list or
Status) or a :class:`WatchStream`. Nothing else of ``kconsole.api`` is public to clients.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

# Verbs, as RBAC names them.
VERBS = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")


@dataclass(frozen=True, slots=True)
class UserInfo:
    name: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    #: Upstream's user.Info Extra: (key, values) pairs in key order, hashable like the rest.
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass(frozen=True, slots=True)
class Credentials:
    """What a caller presents. The HTTP front fills ``cert_user`` only after verifying a client
    certificate against the cluster CA; in-process clients present bearer tokens."""

    token: str | None = None
    cert_user: UserInfo | None = None
    #: Who the caller asks to act as (``Impersonate-User``/``-Group``/``-Uid``, kubectl's ``--as``,
    #: ``--as-group``, ``--as-uid``); the API server allows it only if the caller may ``impersonate``.
    impersonate_user: str | None = None
    impersonate_groups: tuple[str, ...] = ()
    impersonate_uid: str | None = None
    #: ``Impersonate-Extra-<key>`` headers (kubectl's ``--as-user-extra``): (key, values) pairs.
    impersonate_extra: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass(slots=True)
class Request:
    verb: str  # get list watch create update patch delete deletecollection
    resource: str  # plural ("pods"), or a short name / "plural.group" to be resolved by the server
    group: str | None = None  # None: resolve from ``resource`` alone
    version: str | None = None  # None: the group's preferred version
    namespace: str | None = None
    name: str | None = None
    subresource: str | None = None  # status, scale, binding, eviction, log
    body: Any = None  # dict for create/update; patch document (dict/list/str/bytes) for patch
    patch_type: str | None = None  # "json" | "merge" | "strategic" | "apply"
    credentials: Credentials = field(default_factory=Credentials)
    # Query options, as Kubernetes names them.
    label_selector: str = ""
    field_selector: str = ""
    resource_version: str | None = None
    resource_version_match: str | None = None
    limit: int = 0
    continue_: str | None = None
    timeout_seconds: float | None = None
    allow_watch_bookmarks: bool = False
    send_initial_events: bool | None = None
    dry_run: bool = False
    field_manager: str | None = None
    field_validation: str | None = None  # Ignore | Warn | Strict
    force: bool = False
    propagation_policy: str | None = None  # Orphan | Background | Foreground
    grace_period_seconds: int | None = None
    preconditions: dict[str, str] | None = None  # {"uid": ..., "resourceVersion": ...}
    params: dict[str, str] = field(default_factory=dict)  # other query params (pods/log: follow, tailLines, container)
    user_agent: str = ""
    source: str = "in-process"  # "in-process" | "http" (for the audit record)


@dataclass(slots=True)
class Response:
    """``body`` is an object, a list (``kind: XList``), a Status, or for pods/log a ``str``."""

    code: int
    body: Any
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.code < 400


class WatchStream(Protocol):
    """Events ``{"type": ADDED|MODIFIED|DELETED|BOOKMARK|ERROR, "object": {...}}`` in order.

    Ends when the server closes it (timeoutSeconds, shutdown) or the client calls :meth:`close`.
    An ``ERROR`` event carries a Status (410 Expired when the resourceVersion is too old).
    """

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]: ...

    async def close(self) -> None: ...


class ExecStream(Protocol):
    """A process started in a container (pods/exec, pods/attach): the HTTP front pumps its standard
    streams. ``run`` returns its exit code, or raises StatusError when it could not start."""

    command: list[str]
    tty: bool

    async def run(self, read: Callable[[], Awaitable[bytes | None]],
                  write: Callable[[int, bytes], Awaitable[None]]) -> int: ...

    def resize(self, width: int, height: int) -> None: ...


class PodConnection(Protocol):
    """A TCP connection into a pod (port-forward): bytes in, the answer's bytes out."""

    closed: bool

    def feed(self, data: bytes) -> bytes: ...


class PortForwardStream(Protocol):
    """pods/portforward: connections to the pod's ports, made as the client asks for them."""

    def connect(self, port: int) -> PodConnection | str: ...


class StreamSource(Protocol):
    """The kubelets' streaming endpoints, as the API server reaches them (``set_exec_source``)."""

    def exec(self, namespace: str, pod: str, container: str, command: list[str], tty: bool,
             stdin: bool) -> ExecStream: ...

    def attach(self, namespace: str, pod: str, container: str, tty: bool, stdin: bool) -> ExecStream: ...

    def portforward(self, namespace: str, pod: str) -> PortForwardStream: ...


class PodNetwork(Protocol):
    """The pod network as the API server's proxy reaches it (``set_pod_network``): a TCP connection
    to ``address:port``, or the dial's error text (``connect: connection refused``, ``i/o timeout``)."""

    def dial(self, address: str, port: int) -> PodConnection | str: ...


@dataclass(slots=True)
class ProxyCall:
    """One request to pods/proxy or services/proxy, as the HTTP front received it."""

    method: str
    #: What follows ``.../proxy`` ("" when nothing does, "/" for a trailing slash).
    path: str
    query: str = ""
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""
    #: The request's own path, for the redirect an empty proxy path gets.
    url_path: str = ""


@dataclass(slots=True)
class ProxiedResponse:
    """The answer of whatever the API server proxied to, passed on as it came (status, headers, bytes)."""

    code: int
    headers: list[tuple[str, str]]
    body: bytes

    @property
    def ok(self) -> bool:
        return self.code < 400


class ProxiedError(Exception):
    """What a component behind the API server (a kubelet's streaming endpoint) refused a request
    with, as plain text: the API server passes it on as is, as its proxy does."""

    def __init__(self, code: int, text: str) -> None:
        super().__init__(text)
        self.code = code
        self.text = text


class LogStream(Protocol):
    """A followed pods/log: lines as they are written."""

    def __aiter__(self) -> AsyncIterator[str]: ...

    async def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class ResourceInfo:
    """One entry of discovery: what kubectl's APIResourceList shows."""

    group: str
    version: str
    resource: str  # plural
    kind: str
    singular: str
    namespaced: bool
    verbs: tuple[str, ...]
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()  # "status", "scale", "binding", "eviction", "log"
    #: A custom resource's schema, columns and state (``kconsole.api.crd.definition.CustomResource``);
    #: None for the built-in kinds. Not part of equality: the same kind with a new schema is the same kind.
    custom: Any = field(default=None, compare=False, repr=False)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> str:
        return f"{self.resource}.{self.group}" if self.group else self.resource


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """One request, as the console's API request log shows it."""

    seq: int
    time: float  # simulated
    user: str
    verb: str
    resource: str  # group_resource, with "/subresource" when present
    namespace: str | None
    name: str | None
    code: int
    latency_ms: float  # wall milliseconds
    stage: str | None  # pipeline stage that rejected it (authentication, authorization, ...), or None
    source: str
    message: str = ""


class Entry(Protocol):
    """The API server, as clients see it. One may also carry ``resources_version``, an int it bumps
    whenever :meth:`resources` changes, so clients know to look their discovery up again;
    ``health_checks()`` for /healthz, /livez and /readyz; and ``async metrics(credentials, source)``,
    the text of /metrics for a user RBAC lets read it (the HTTP front answers 404 without it)."""

    async def handle(self, request: Request) -> Response | WatchStream | LogStream: ...

    def resources(self) -> list[ResourceInfo]: ...

    def audit_recent(self, n: int = 500) -> list[AuditRecord]: ...

    def audit_follow(self) -> AsyncIterator[AuditRecord]: ...


# --------------------------------------------------------------------------- Status errors


def status_body(
    code: int,
    reason: str,
    message: str,
    *,
    name: str | None = None,
    group: str | None = None,
    kind: str | None = None,
    causes: list[dict[str, str]] | None = None,
    retry_after: int | None = None,
) -> dict[str, Any]:
    """Kubernetes' ``Status`` object for a failure."""
    details: dict[str, Any] = {}
    if name is not None:
        details["name"] = name
    if group is not None:
        details["group"] = group
    if kind is not None:
        details["kind"] = kind
    if causes:
        details["causes"] = causes
    if retry_after is not None:
        details["retryAfterSeconds"] = retry_after
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
    }
    if details or code == 404:
        # Upstream's 404s always carry details (kubectl debug reads details.name of one unguarded).
        body["details"] = details
    body["code"] = code  # last, as metav1.Status declares its fields
    return body


class StatusError(Exception):
    """A request failed with a Kubernetes Status. Raised by the client; built by the server."""

    def __init__(self, status: dict[str, Any]) -> None:
        super().__init__(status.get("message", ""))
        self.status = status

    @property
    def code(self) -> int:
        return int(self.status.get("code", 500))

    @property
    def reason(self) -> str:
        return str(self.status.get("reason", ""))

    @property
    def message(self) -> str:
        return str(self.status.get("message", ""))

    @property
    def causes(self) -> list[dict[str, str]]:
        return list(self.status.get("details", {}).get("causes", []))

    # Constructors with upstream's messages. ``gr`` is the group-resource ("pods", "deployments.apps").
    @classmethod
    def not_found(cls, gr: str, name: str, group: str = "", kind: str | None = None) -> StatusError:
        return cls(status_body(404, "NotFound", f'{gr} "{name}" not found', name=name, group=group or None,
                               kind=kind or gr.split(".")[0]))

    @classmethod
    def already_exists(cls, gr: str, name: str, group: str = "") -> StatusError:
        return cls(status_body(409, "AlreadyExists", f'{gr} "{name}" already exists', name=name,
                               group=group or None, kind=gr.split(".")[0]))

    @classmethod
    def conflict(cls, gr: str, name: str, group: str = "", why: str | None = None) -> StatusError:
        why = why or "the object has been modified; please apply your changes to the latest version and try again"
        return cls(status_body(409, "Conflict", f'Operation cannot be fulfilled on {gr} "{name}": {why}',
                               name=name, group=group or None, kind=gr.split(".")[0]))

    @classmethod
    def invalid(cls, kind: str, name: str, causes: list[dict[str, str]], group: str = "") -> StatusError:
        """``causes``: ``{"reason": "FieldValueInvalid", "message": "...", "field": "spec.x"}``. The
        message names the kind with its group, as upstream's qualified kind (``Deployment.apps "web"
        is invalid``); details.kind is the bare kind, which kubectl prints (``The Deployment "web"``)."""
        parts = [f"{c['field']}: {c['message']}" if c.get("field") else c["message"] for c in causes]
        qualified = f"{kind}.{group}" if group else kind
        msg = f'{qualified} "{name}" is invalid: ' + (parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]")
        return cls(status_body(422, "Invalid", msg, name=name, group=group or None, kind=kind, causes=causes))

    @classmethod
    def forbidden(cls, gr: str, name: str | None, why: str, group: str = "") -> StatusError:
        target = f'{gr} "{name}"' if name else gr
        return cls(status_body(403, "Forbidden", f"{target} is forbidden: {why}", name=name,
                               group=group or None, kind=gr.split(".")[0]))

    @classmethod
    def unauthorized(cls, message: str = "Unauthorized") -> StatusError:
        return cls(status_body(401, "Unauthorized", message))

    @classmethod
    def bad_request(cls, message: str) -> StatusError:
        return cls(status_body(400, "BadRequest", message))

    @classmethod
    def method_not_supported(cls, gr: str, verb: str) -> StatusError:
        return cls(status_body(405, "MethodNotAllowed", f"{verb} is not supported on resources of kind \"{gr}\""))

    @classmethod
    def gone(cls, message: str) -> StatusError:
        return cls(status_body(410, "Expired", message))

    @classmethod
    def too_large(cls, message: str = "Request entity too large") -> StatusError:
        return cls(status_body(413, "RequestEntityTooLarge", message))

    @classmethod
    def unsupported_media_type(cls, message: str) -> StatusError:
        return cls(status_body(415, "UnsupportedMediaType", message))

    @classmethod
    def too_many_requests(cls, message: str, retry_after: int = 1) -> StatusError:
        return cls(status_body(429, "TooManyRequests", message, retry_after=retry_after))

    @classmethod
    def internal(cls, message: str) -> StatusError:
        return cls(status_body(500, "InternalError", f"Internal error occurred: {message}"))

    @classmethod
    def unavailable(cls, message: str) -> StatusError:
        return cls(status_body(503, "ServiceUnavailable", message))

    @classmethod
    def timeout(cls, message: str) -> StatusError:
        return cls(status_body(504, "Timeout", message))
