"""Dynamic admission: the user's mutating webhooks, ValidatingAdmissionPolicies and validating
webhooks, in upstream's order (after the built-in plugins: MutatingAdmissionWebhook, then
ValidatingAdmissionPolicy, then ValidatingAdmissionWebhook).

What the three share is here: which rules, selectors and ``matchConditions`` make a configuration
apply to a request (upstream's matching: operations, API groups, versions, resources with
``*``/``pods/status``, scope; a ``namespaceSelector`` on the namespace's labels, or a Namespace's
own; an ``objectSelector`` on the new or the old object's labels). The webhooks are called over
HTTPS (:mod:`kconsole.api.admission.webhooks`), the policies evaluated with CEL
(:mod:`kconsole.api.admission.policy`). Everything is read from the API server's caches.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kconsole.api.cel import CELError, Cost, evaluate, evaluate_within, to_cel
from kconsole.api.cellib.authz import Authorize, request_authorizer
from kconsole.api.types import UserInfo
from kconsole.objects.selectors import from_label_selector_dict

Obj = dict[str, Any]
GROUP = "admissionregistration.k8s.io"
POLICIES = f"validatingadmissionpolicies.{GROUP}"
BINDINGS = f"validatingadmissionpolicybindings.{GROUP}"
VALIDATING_WEBHOOKS = f"validatingwebhookconfigurations.{GROUP}"
MUTATING_WEBHOOKS = f"mutatingwebhookconfigurations.{GROUP}"


@dataclass
class Attributes:
    """One request as dynamic admission sees it (upstream's admission.Attributes)."""

    operation: str  # CREATE | UPDATE | DELETE
    group: str
    version: str
    resource: str
    subresource: str
    kind: str
    namespace: str
    name: str
    namespaced: bool
    user: UserInfo
    dry_run: bool
    obj: Obj | None
    old: Obj | None
    get_object: Callable[[str, str | None, str], Obj | None]
    list_objects: Callable[[str, str | None], Iterable[Obj]]
    uid: str = field(default_factory=lambda: str(uuid.uuid4()))
    #: Warnings for the client (a policy's Warn action, webhooks' warnings).
    warnings: list[str] = field(default_factory=list)
    #: Who admitted the request, for the API log (``webhook mutate.example.com``, ``policy x``).
    admitted_by: list[str] = field(default_factory=list)
    #: Audit annotations (a policy's Audit action and auditAnnotations).
    annotations: dict[str, str] = field(default_factory=dict)
    #: The API server's authorizer, for CEL's ``authorizer`` (None: expressions have no authorizer).
    authorize: Authorize | None = None

    def request(self) -> Obj:
        """The AdmissionRequest (also CEL's ``request``)."""
        req: Obj = {
            "uid": self.uid,
            "kind": {"group": self.group, "version": self.version, "kind": self.kind},
            "resource": {"group": self.group, "version": self.version, "resource": self.resource},
            "requestKind": {"group": self.group, "version": self.version, "kind": self.kind},
            "requestResource": {"group": self.group, "version": self.version, "resource": self.resource},
            "name": self.name,
            "operation": self.operation,
            "userInfo": _user_info(self.user),
            "object": self.obj,
            "oldObject": self.old,
            "dryRun": self.dry_run,
            "options": {"apiVersion": "meta.k8s.io/v1",
                        "kind": {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions"}.get(self.operation,
                                                                                           "DeleteOptions")},
        }
        if self.subresource:
            req["subResource"] = req["requestSubResource"] = self.subresource
        if self.namespaced:
            req["namespace"] = self.namespace
        return req

    def namespace_object(self) -> Obj | None:
        if not self.namespaced or not self.namespace:
            return None
        return self.get_object("namespaces", None, self.namespace)


def _user_info(user: UserInfo) -> Obj:
    info: Obj = {"username": user.name}
    if user.uid:
        info["uid"] = user.uid
    if user.groups:
        info["groups"] = list(user.groups)
    if user.extra:
        info["extra"] = {k: list(v) for k, v in user.extra}
    return info


def _matches(values: Any, wanted: str) -> bool:
    return isinstance(values, list) and ("*" in values or wanted in values)


def _resource_matches(resources: Any, resource: str, subresource: str) -> bool:
    if not isinstance(resources, list):
        return False
    full = f"{resource}/{subresource}" if subresource else resource
    for item in resources:
        if item in ("*/*", full):
            return True
        if item == "*" and not subresource:
            return True
        if subresource and isinstance(item, str) and (item == f"*/{subresource}" or item == f"{resource}/*"):
            return True
    return False


def rule_matches(rule: Any, attrs: Attributes) -> bool:
    """A RuleWithOperations (or NamedRuleWithOperations) against the request."""
    if not isinstance(rule, dict):
        return False
    if not _matches(rule.get("operations"), attrs.operation):
        return False
    if not _matches(rule.get("apiGroups"), attrs.group) or not _matches(rule.get("apiVersions"), attrs.version):
        return False
    if not _resource_matches(rule.get("resources"), attrs.resource, attrs.subresource):
        return False
    scope = rule.get("scope") or "*"
    if scope == "Cluster" and attrs.namespaced or scope == "Namespaced" and not attrs.namespaced:
        return False
    names = rule.get("resourceNames")
    return not names or attrs.name in names


def _labels(obj: Obj | None) -> dict[str, str]:
    meta = (obj or {}).get("metadata") or {}
    return meta.get("labels") or {}


def selectors_match(namespace_selector: Any, object_selector: Any, attrs: Attributes) -> bool:
    """upstream's namespaceSelector and objectSelector (absent or ``{}``: everything)."""
    if namespace_selector:
        selector = from_label_selector_dict(namespace_selector)
        if attrs.kind == "Namespace" and attrs.group == "":
            if not selector.matches(_labels(attrs.obj or attrs.old)):
                return False
        elif attrs.namespaced:
            namespace = attrs.namespace_object()
            if not selector.matches(_labels(namespace)):
                return False
    if object_selector:
        selector = from_label_selector_dict(object_selector)
        if not (selector.matches(_labels(attrs.obj)) or attrs.old is not None and selector.matches(_labels(attrs.old))):
            return False
    return True


def cel_variables(attrs: Attributes, params: Obj | None = None) -> dict[str, Any]:
    """CEL's ``object``, ``oldObject``, ``request``, ``params``, ``namespaceObject`` and
    ``authorizer`` (checks as the requesting user)."""
    variables = {"object": to_cel(attrs.obj), "oldObject": to_cel(attrs.old), "request": to_cel(attrs.request()),
                 "params": to_cel(params), "namespaceObject": to_cel(attrs.namespace_object())}
    if attrs.authorize is not None:
        variables["authorizer"] = request_authorizer(attrs.user, attrs.authorize, attrs.group, attrs.resource,
                                                     attrs.subresource, attrs.namespace, attrs.name)
    return variables


def conditions_match(conditions: Any, variables: dict[str, Any], cost: Cost | None = None) -> tuple[bool, str]:
    """(all matchConditions hold, the error of one that failed to evaluate or ""); ``cost`` is the
    budget they share with the policy's other expressions."""
    for cond in conditions or ():
        if not isinstance(cond, dict):
            continue
        try:
            text = str(cond.get("expression") or "")
            result = evaluate(text, variables) if cost is None else evaluate_within(text, variables, cost)
        except CELError as err:
            return False, f"matchCondition {cond.get('name', '')!r} error: {err}"
        if result is not True:
            return False, ""
    return True, ""


def configured(list_objects: Callable[[str, str | None], Iterable[Obj]]) -> bool:
    """Any webhook configuration or policy binding exists (otherwise there is nothing to do)."""
    for resource in (MUTATING_WEBHOOKS, VALIDATING_WEBHOOKS, BINDINGS):
        for _ in list_objects(resource, None):
            return True
    return False
