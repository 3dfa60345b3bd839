"""Kubernetes' authorizer library for ValidatingAdmissionPolicies and webhook matchConditions:
``authorizer.group('apps').resource('deployments').namespace(ns).name(n).check('update').allowed()``,
``authorizer.path('/healthz').check('get')``, ``authorizer.serviceAccount(ns, name)``,
``authorizer.requestResource``, and on a decision ``allowed()``, ``reason()``, ``errored()``,
``error()``. Checks are answered by the API server's own authorizer (Node, then RBAC) for the
requesting user, as upstream's are."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from celpy import celtypes
from celpy.evaluation import CELEvalError

from kconsole.api.stages import Attributes as AuthzAttributes
from kconsole.api.types import UserInfo

Authorize = Callable[[AuthzAttributes], tuple[bool, str]]


class Authorizer(celtypes.MapType):
    """The ``authorizer`` variable: a map only so that ``authorizer.requestResource`` selects."""

    def __init__(self, user: UserInfo, authorize: Authorize, request: ResourceCheck | None = None) -> None:
        super().__init__({celtypes.StringType("requestResource"): request} if request is not None else {})
        self.user = user
        self.authorize = authorize

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)


@dataclass(frozen=True)
class ResourceCheck:
    authz: Authorizer
    group: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""


@dataclass(frozen=True)
class PathCheck:
    authz: Authorizer
    path: str


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str
    error: str = ""


def request_authorizer(user: UserInfo, authorize: Authorize, group: str, resource: str, subresource: str,
                       namespace: str, name: str) -> Authorizer:
    """The ``authorizer`` of one request (its ``requestResource`` the request's own resource)."""
    authz = Authorizer(user, authorize)
    authz[celtypes.StringType("requestResource")] = ResourceCheck(authz, group, resource, subresource, namespace,
                                                                  name)
    return authz


def _service_account(authz: Any, namespace: Any, name: Any) -> Authorizer:
    ns = str(namespace)
    user = UserInfo(f"system:serviceaccount:{ns}:{name}", ("system:serviceaccounts", f"system:serviceaccounts:{ns}"))
    return Authorizer(user, _of(authz).authorize)


def _of(value: Any) -> Authorizer:
    if not isinstance(value, Authorizer):
        raise TypeError("no such overload")
    return value


def _set(field: str) -> Callable[[Any, Any], ResourceCheck]:
    def setter(check: Any, value: Any) -> ResourceCheck:
        if isinstance(check, Authorizer) and field == "group":
            return ResourceCheck(check, group=str(value))
        if not isinstance(check, ResourceCheck):
            raise TypeError("no such overload")
        return replace(check, **{field: str(value)})
    return setter


def _check(target: Any, verb: Any) -> Decision:
    if isinstance(target, PathCheck):
        attrs = AuthzAttributes(user=target.authz.user, verb=str(verb), resource_request=False, path=target.path)
        authz = target.authz
    elif isinstance(target, ResourceCheck):
        attrs = AuthzAttributes(user=target.authz.user, verb=str(verb), group=target.group, version="*",
                                resource=target.resource, subresource=target.subresource,
                                namespace=target.namespace, name=target.name)
        authz = target.authz
    else:
        raise TypeError("no such overload")
    try:
        allowed, reason = authz.authorize(attrs)
    except Exception as err:  # an authorizer's failure is the decision's error, as upstream's
        return Decision(False, "", str(err) or type(err).__name__)
    return Decision(allowed, reason)


def _decision(value: Any) -> Decision:
    if not isinstance(value, Decision):
        raise TypeError("no such overload")
    return value


def _error(value: Any) -> Any:
    decision = _decision(value)
    if not decision.error:
        return CELEvalError("no error")
    return celtypes.StringType(decision.error)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "path": lambda authz, path: PathCheck(_of(authz), str(path)),
    "group": _set("group"),
    "resource": _set("resource"),
    "subresource": _set("subresource"),
    "namespace": _set("namespace"),
    "name": _set("name"),
    "serviceAccount": _service_account,
    "check": _check,
    "allowed": lambda d: celtypes.BoolType(_decision(d).allowed),
    "reason": lambda d: celtypes.StringType(_decision(d).reason),
    "errored": lambda d: celtypes.BoolType(bool(_decision(d).error)),
    "error": _error,
}
