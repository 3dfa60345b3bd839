"""ValidatingAdmissionPolicy and its bindings: CEL validations run on each matching request.

As upstream: a binding names a policy; the request must match the policy's ``matchConstraints``
and the binding's ``matchResources``; ``paramKind`` objects are found through the binding's
``paramRef`` (by name, or by selector: each match is evaluated), ``parameterNotFoundAction`` says
what a missing one means; ``matchConditions`` select; each failed validation acts as the binding's
``validationActions`` say: ``Deny`` refuses (``ValidatingAdmissionPolicy 'p' with binding 'b' denied
request: ...``, the code from its ``reason``, 422 Invalid by default), ``Warn`` adds a Warning,
``Audit`` an audit annotation; ``auditAnnotations`` are recorded; ``spec.variables`` are read as
``variables.<name>`` (not in matchConditions). An expression that fails to evaluate follows
``failurePolicy`` (Fail by default).
"""

from __future__ import annotations

import json
from typing import Any

from celpy import celtypes
from celpy.evaluation import CELEvalError

from kconsole.api.admission.dynamic import (
    BINDINGS, POLICIES, Attributes, cel_variables, conditions_match, rule_matches, selectors_match)
from kconsole.api.cel import CELError, Cost, OutOfBudget, evaluate_within
from kconsole.api.types import StatusError, status_body
from kconsole.objects.selectors import from_label_selector_dict

Obj = dict[str, Any]

#: A validation's reason -> the HTTP code of its denial.
REASON_CODES = {"Invalid": 422, "Forbidden": 403, "Unauthorized": 401, "RequestEntityTooLarge": 413}
AUDIT_FAILURE = "validation.policy.admission.k8s.io/validation_failure"


def _matches_resources(match: Any, attrs: Attributes) -> bool:
    if not isinstance(match, dict):
        return True
    rules = match.get("resourceRules")
    if rules and not any(rule_matches(r, attrs) for r in rules):
        return False
    if any(rule_matches(r, attrs) for r in match.get("excludeResourceRules") or ()):
        return False
    return selectors_match(match.get("namespaceSelector"), match.get("objectSelector"), attrs)


def _param_resource(param_kind: Obj) -> str:
    group = str(param_kind.get("apiVersion") or "").rpartition("/")[0]
    kind = str(param_kind.get("kind") or "").lower()
    return f"{kind}.{group}" if group else kind


def _params(param_kind: Obj, ref: Any, attrs: Attributes) -> list[Obj] | None:
    """The params objects the binding selects; None when none is found."""
    if not isinstance(ref, dict):
        return None
    resource = _param_resource(param_kind)
    namespace = ref.get("namespace") or (attrs.namespace if attrs.namespaced else None) or None
    if ref.get("name"):
        found = attrs.get_object(resource, namespace, ref["name"]) or attrs.get_object(resource, None, ref["name"])
        return [found] if found is not None else None
    selector = from_label_selector_dict(ref.get("selector") or {})
    matched = [o for o in attrs.list_objects(resource, namespace) if selector.matches(
        ((o.get("metadata") or {}).get("labels")) or {})]
    return sorted(matched, key=lambda o: (o.get("metadata") or {}).get("name", "")) or None


def _deny(attrs: Attributes, policy: str, binding: str, message: str, reason: str) -> StatusError:
    """upstream's denial: admission.NewForbidden's text and details, the validation's reason and code
    (so kubectl prints ``The deployments "x" is invalid: : ValidatingAdmissionPolicy ...``)."""
    text = f"ValidatingAdmissionPolicy '{policy}' with binding '{binding}' denied request: {message}"
    resource = f"{attrs.resource}.{attrs.group}" if attrs.group else attrs.resource
    target = f'{resource} "{attrs.name}"' if attrs.name else resource
    code = REASON_CODES.get(reason, 422)
    return StatusError(status_body(code, reason, f"{target} is forbidden: {text}", name=attrs.name or None,
                                   group=attrs.group or None, kind=attrs.resource, causes=[{"message": text}]))


def admit(attrs: Attributes) -> None:
    """Run every binding's policy on ``attrs``; StatusError for a Deny."""
    bindings = sorted(attrs.list_objects(BINDINGS, None), key=lambda b: (b.get("metadata") or {}).get("name", ""))
    for binding in bindings:
        bspec = binding.get("spec") or {}
        bname = (binding.get("metadata") or {}).get("name", "")
        pname = bspec.get("policyName") or ""
        policy = attrs.get_object(POLICIES, None, pname) if pname else None
        if policy is None:
            continue
        pspec = policy.get("spec") or {}
        if not _matches_resources(pspec.get("matchConstraints") or {"resourceRules": []}, attrs):
            continue
        if not _matches_resources(bspec.get("matchResources"), attrs):
            continue
        actions = bspec.get("validationActions") or ["Deny"]
        fail = (pspec.get("failurePolicy") or "Fail") == "Fail"
        param_kind = pspec.get("paramKind")
        params_list: list[Obj | None] = [None]
        if isinstance(param_kind, dict) and param_kind.get("kind"):
            ref = bspec.get("paramRef")
            found = _params(param_kind, ref, attrs)
            if found is None:
                action = (ref or {}).get("parameterNotFoundAction") if isinstance(ref, dict) else None
                if action == "Allow":
                    continue
                raise _deny(attrs, pname, bname, "failed to configure binding: no params found for policy "
                            "binding with `Deny` parameterNotFoundAction", "Invalid")
            params_list = list(found)
        for params in params_list:
            _evaluate(attrs, pname, bname, pspec, actions, fail, params)
        attrs.admitted_by.append(f"policy {pname} (binding {bname})")


class _Variables(celtypes.MapType):
    """``variables.<name>``: the policy's ``spec.variables``, each evaluated when first read (as
    upstream's composition library does), so one that fails matters only where it is used."""

    def __init__(self, specs: Any, variables: dict[str, Any], cost: Cost) -> None:
        super().__init__({})
        self._specs = {str(v.get("name")): str(v.get("expression") or "") for v in specs or ()
                       if isinstance(v, dict) and v.get("name")}
        self._scope = {**variables, "variables": self}
        self._cost = cost

    def __contains__(self, key: object) -> bool:
        return str(key) in self._specs

    def __getitem__(self, key: Any) -> Any:
        name = str(key)
        if name not in self._specs:
            raise KeyError(key)
        if not super().__contains__(celtypes.StringType(name)):
            try:
                value = evaluate_within(self._specs[name], self._scope, self._cost, plain=False)
            except CELError as err:
                value = CELEvalError(f"composited variable {json.dumps(name)} fails to evaluate: {err}")
            super().__setitem__(celtypes.StringType(name), value)
        return super().__getitem__(celtypes.StringType(name))


def _evaluate(attrs: Attributes, pname: str, bname: str, pspec: Obj, actions: list[str], fail: bool,
              params: Obj | None) -> None:
    variables = cel_variables(attrs, params)
    cost = Cost()  # upstream's RuntimeCELCostBudget, per policy, binding and params object
    ok, error = conditions_match(pspec.get("matchConditions"), variables, cost)
    if error:
        if fail:
            raise _deny(attrs, pname, bname, error, "Invalid")
        return
    if not ok:
        return
    # matchConditions run before the variables exist, as upstream's do
    variables["variables"] = _Variables(pspec.get("variables"), variables, cost)
    for index, validation in enumerate(pspec.get("validations") or ()):
        if not isinstance(validation, dict):
            continue
        expression = str(validation.get("expression") or "")
        try:
            result = evaluate_within(expression, variables, cost)
        except OutOfBudget as err:
            if fail:
                raise _deny(attrs, pname, bname, str(err), "Invalid") from None
            return
        except CELError as err:
            if fail:
                raise _deny(attrs, pname, bname, f"expression '{expression}' resulted in error: {err}",
                            "Invalid") from None
            continue
        if result is True:
            continue
        message = _message(validation, expression, variables, cost)
        reason = validation.get("reason") or "Invalid"
        if "Deny" in actions:
            raise _deny(attrs, pname, bname, message, reason)
        if "Warn" in actions:
            attrs.warnings.append(f"Validation failed for ValidatingAdmissionPolicy '{pname}' with binding "
                                  f"'{bname}': {message}")
        if "Audit" in actions:
            failures = json.loads(attrs.annotations.get(AUDIT_FAILURE, "[]"))
            failures.append({"message": message, "policy": pname, "binding": bname, "expressionIndex": index,
                             "validationActions": actions})
            attrs.annotations[AUDIT_FAILURE] = json.dumps(failures, separators=(",", ":"))
    for annotation in pspec.get("auditAnnotations") or ():
        if not isinstance(annotation, dict):
            continue
        try:
            value = evaluate_within(str(annotation.get("valueExpression") or ""), variables, cost)
        except CELError:
            continue
        if value is not None:
            attrs.annotations[f"{pname}/{annotation.get('key', '')}"] = str(value)


def _message(validation: Obj, expression: str, variables: dict[str, Any], cost: Cost) -> str:
    text = validation.get("messageExpression")
    if text:
        try:
            value = evaluate_within(str(text), variables, cost)
            if isinstance(value, str) and value.strip():
                return value
        except CELError:
            pass
    return validation.get("message") or f"failed expression: {expression}"
