"""Contracts of the request pipeline's stages, in upstream order.

authentication -> authorization -> mutating admission -> validation -> validating admission -> storage

``server.py`` runs the stages; each stage lives in its own module (``authn.py``, ``rbac.py``,
``admission/``, ``validation.py``) and is tested on its own. A stage rejects a request by raising
:class:`~kconsole.api.types.StatusError`; the server records which stage did in the audit log.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from kconsole.api.types import Credentials, ResourceInfo, UserInfo

STAGES = (
    "authentication",
    "authorization",
    "mutating-admission",
    "validation",
    "validating-admission",
    "storage",
)


@dataclass(frozen=True, slots=True)
class Attributes:
    """What the authorizer decides on (upstream's authorizer.Attributes)."""

    user: UserInfo
    verb: str
    group: str = ""
    version: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    resource_request: bool = True
    path: str = ""  # for non-resource requests (/healthz, /version, /api)
    #: A list's or watch's fieldSelector, as upstream's authorizers see it (AuthorizeWithSelectors):
    #: the Node authorizer lets a node list only its own pods (``spec.nodeName=<node>``).
    field_selector: str = ""


class Authenticator(Protocol):
    def authenticate(self, credentials: Credentials) -> UserInfo:
        """Return the user, or raise StatusError.unauthorized() (no or bad credentials)."""
        ...


class Authorizer(Protocol):
    def authorize(self, attrs: Attributes) -> tuple[bool, str]:
        """(allowed, reason). The server turns a denial into upstream's 403 message."""
        ...


#: Returns (revision, objects) for one RBAC resource ("roles", "rolebindings", "clusterroles",
#: "clusterrolebindings") from the API server's watch cache; the revision changes when any object does.
RBACLister = Callable[[str], tuple[int, Iterable[dict[str, Any]]]]


@dataclass(slots=True)
class AdmissionContext:
    """Everything an admission or validation step may look at besides the object itself."""

    operation: str  # CREATE | UPDATE | DELETE | CONNECT
    info: ResourceInfo
    user: UserInfo
    namespace: str | None
    name: str | None
    subresource: str | None = None
    dry_run: bool = False
    now: str = ""  # RFC 3339, simulated clock
    rng: random.Random = field(default_factory=random.Random)
    #: Read another object from the API server's cache without authorization (e.g. the namespace
    #: for NamespaceLifecycle); returns None when absent.
    get_object: Callable[[str, str | None, str], dict[str, Any] | None] = lambda resource, ns, name: None
    #: Allocate a free Service ClusterIP from the service CIDR (10.96.0.0/12); released on delete.
    allocate_cluster_ip: Callable[[], str] = lambda: ""
    #: List objects of one resource from the cache without authorization (namespace None: all), for
    #: what a name lookup cannot answer: the globalDefault PriorityClass, node ports in use.
    list_objects: Callable[[str, str | None], Iterable[dict[str, Any]]] = lambda resource, ns: ()
    #: The cluster has a root CA (published as ConfigMap kube-root-ca.crt): Pods mount the projected
    #: ``kube-api-access-*`` volume, as upstream's ServiceAccount admission adds it.
    token_volumes: bool = False


class MutatingAdmission(Protocol):
    def admit(self, ctx: AdmissionContext, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        """Mutate ``obj`` in place (defaulting); raise StatusError to reject."""
        ...


class Validator(Protocol):
    def validate(self, ctx: AdmissionContext, obj: dict[str, Any], old: dict[str, Any] | None) -> list[dict[str, str]]:
        """Return field causes (``{"reason","message","field"}``); non-empty -> 422 Invalid."""
        ...


class ValidatingAdmission(Protocol):
    def validate(self, ctx: AdmissionContext, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        """Raise StatusError (usually 403 Forbidden) to reject."""
        ...
