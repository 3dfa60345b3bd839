"""admissionregistration.k8s.io: webhook configurations, ValidatingAdmissionPolicies and their
bindings, as upstream's pkg/apis/admissionregistration/validation words them. A policy's CEL
expressions must compile."""

from __future__ import annotations

from typing import Any

from kconsole.api.cel import CELError, compile_expression
from kconsole.api.validators.field import Cause, forbidden, invalid, not_supported, required
from kconsole.objects.names import is_dns1123_subdomain

Obj = dict[str, Any]

FAILURE_POLICIES = ("Fail", "Ignore")
SIDE_EFFECTS = ("None", "NoneOnDryRun")
REINVOCATION = ("Never", "IfNeeded")
ACTIONS = ("Audit", "Deny", "Warn")
OPERATIONS = ("*", "CONNECT", "CREATE", "DELETE", "UPDATE")
SCOPES = ("*", "Cluster", "Namespaced")
REVIEW_VERSIONS = ("v1", "v1beta1")


def _rules(rules: Any, path: str) -> list[Cause]:
    causes: list[Cause] = []
    for i, rule in enumerate(rules or ()):
        here = f"{path}[{i}]"
        if not isinstance(rule, dict):
            continue
        for key in ("operations", "apiGroups", "apiVersions", "resources"):
            if not rule.get(key):
                causes.append(required(f"{here}.{key}"))
        for j, op in enumerate(rule.get("operations") or ()):
            if op not in OPERATIONS:
                causes.append(not_supported(f"{here}.operations[{j}]", op, OPERATIONS))
        scope = rule.get("scope")
        if scope is not None and scope not in SCOPES:
            causes.append(not_supported(f"{here}.scope", scope, SCOPES))
    return causes


def _expression(text: Any, path: str) -> list[Cause]:
    if not text:
        return [required(path)]
    try:
        compile_expression(str(text))
    except CELError as err:
        return [invalid(path, text, str(err))]
    return []


def _service(service: Obj, path: str) -> list[Cause]:
    """upstream's ValidateWebhookService: a name, a namespace, a port, a path of DNS-subdomain segments."""
    causes: list[Cause] = []
    if not service.get("name"):
        causes.append(required(f"{path}.name", "service name is required"))
    if not service.get("namespace"):
        causes.append(required(f"{path}.namespace", "service namespace is required"))
    port = service.get("port", 443)
    if not isinstance(port, int) or not 1 <= port <= 65535:
        causes.append(invalid(f"{path}.port", port, "port is not valid: must be between 1 and 65535, inclusive"))
    url_path = service.get("path")
    if not isinstance(url_path, str) or url_path in ("", "/"):
        return causes
    if url_path == "//":
        return causes + [invalid(f"{path}.path", url_path, "segment[0] may not be empty")]
    if not url_path.startswith("/"):
        causes.append(invalid(f"{path}.path", url_path, "must start with a '/'"))
    steps = url_path[1:].removesuffix("/").split("/")
    for i, step in enumerate(steps):
        if not step:
            causes.append(invalid(f"{path}.path", url_path, f"segment[{i}] may not be empty"))
            continue
        for failure in is_dns1123_subdomain(step):
            causes.append(invalid(f"{path}.path", url_path, f"segment[{i}]: {failure}"))
    return causes


def _conditions(conditions: Any, path: str) -> list[Cause]:
    causes: list[Cause] = []
    seen: set[str] = set()
    for i, cond in enumerate(conditions or ()):
        if not isinstance(cond, dict):
            continue
        name = cond.get("name")
        if not name:
            causes.append(required(f"{path}[{i}].name"))
        elif name in seen:
            causes.append({"reason": "FieldValueDuplicate", "field": f"{path}[{i}].name",
                           "message": f'Duplicate value: "{name}"'})
        else:
            seen.add(name)
        causes += _expression(cond.get("expression"), f"{path}[{i}].expression")
    return causes


def _webhooks(obj: Obj, mutating: bool) -> list[Cause]:
    causes: list[Cause] = []
    names: set[str] = set()
    for i, hook in enumerate(obj.get("webhooks") or ()):
        here = f"webhooks[{i}]"
        if not isinstance(hook, dict):
            continue
        name = hook.get("name") or ""
        if not name:
            causes.append(required(f"{here}.name"))
        elif len(name.split(".")) < 3:
            causes.append(invalid(f"{here}.name", name, "should be a domain with at least three segments "
                                  "separated by dots"))
        elif name in names:
            causes.append({"reason": "FieldValueDuplicate", "field": f"{here}.name",
                           "message": f'Duplicate value: "{name}"'})
        names.add(name)
        config = hook.get("clientConfig") or {}
        url, service = config.get("url"), config.get("service")
        if bool(url) == bool(service):
            causes.append(required(f"{here}.clientConfig", "exactly one of url or service is required"))
        elif url and not str(url).startswith("https://"):
            causes.append(invalid(f"{here}.clientConfig.url", url, "'https' is the only allowed URL scheme"))
        elif isinstance(service, dict):
            causes += _service(service, f"{here}.clientConfig.service")
        causes += _rules(hook.get("rules"), f"{here}.rules")
        effects = hook.get("sideEffects")
        if effects is None:
            causes.append(not_supported(f"{here}.sideEffects", "", SIDE_EFFECTS))
        elif effects not in SIDE_EFFECTS:
            causes.append(not_supported(f"{here}.sideEffects", effects, SIDE_EFFECTS))
        versions = hook.get("admissionReviewVersions")
        if not versions:
            causes.append(required(f"{here}.admissionReviewVersions",
                                   "must specify one of v1, v1beta1"))
        elif not any(v in REVIEW_VERSIONS for v in versions):
            causes.append(invalid(f"{here}.admissionReviewVersions", versions,
                                  "must include at least one of v1, v1beta1"))
        timeout = hook.get("timeoutSeconds")
        if isinstance(timeout, int) and not 1 <= timeout <= 30:
            causes.append(invalid(f"{here}.timeoutSeconds", timeout,
                                  "the timeout value must be between 1 and 30 seconds"))
        policy = hook.get("failurePolicy")
        if policy is not None and policy not in FAILURE_POLICIES:
            causes.append(not_supported(f"{here}.failurePolicy", policy, FAILURE_POLICIES))
        if mutating:
            reinvocation = hook.get("reinvocationPolicy")
            if reinvocation is not None and reinvocation not in REINVOCATION:
                causes.append(not_supported(f"{here}.reinvocationPolicy", reinvocation, REINVOCATION))
        causes += _conditions(hook.get("matchConditions"), f"{here}.matchConditions")
    return causes


def validate_validating_webhooks(obj: Obj) -> list[Cause]:
    return _webhooks(obj, mutating=False)


def validate_mutating_webhooks(obj: Obj) -> list[Cause]:
    return _webhooks(obj, mutating=True)


def validate_policy(obj: Obj) -> list[Cause]:
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    causes: list[Cause] = []
    constraints = spec.get("matchConstraints")
    if not isinstance(constraints, dict):
        causes.append(required("spec.matchConstraints"))
    else:
        if not constraints.get("resourceRules"):
            causes.append(required("spec.matchConstraints.resourceRules"))
        causes += _rules(constraints.get("resourceRules"), "spec.matchConstraints.resourceRules")
    policy = spec.get("failurePolicy")
    if policy is not None and policy not in FAILURE_POLICIES:
        causes.append(not_supported("spec.failurePolicy", policy, FAILURE_POLICIES))
    validations = spec.get("validations") or []
    if not validations and not spec.get("auditAnnotations"):
        causes.append(required("spec.validations", "validations or auditAnnotations must contain at least one item"))
    for i, validation in enumerate(validations):
        if isinstance(validation, dict):
            causes += _expression(validation.get("expression"), f"spec.validations[{i}].expression")
            if validation.get("messageExpression"):
                causes += _expression(validation["messageExpression"], f"spec.validations[{i}].messageExpression")
            reason = validation.get("reason")
            if reason is not None and reason not in ("Unauthorized", "Forbidden", "Invalid", "RequestEntityTooLarge"):
                causes.append(not_supported(f"spec.validations[{i}].reason", reason,
                                            ("Unauthorized", "Forbidden", "Invalid", "RequestEntityTooLarge")))
    for i, annotation in enumerate(spec.get("auditAnnotations") or ()):
        if isinstance(annotation, dict):
            if not annotation.get("key"):
                causes.append(required(f"spec.auditAnnotations[{i}].key"))
            causes += _expression(annotation.get("valueExpression"), f"spec.auditAnnotations[{i}].valueExpression")
    causes += _conditions(spec.get("matchConditions"), "spec.matchConditions")
    for i, variable in enumerate(spec.get("variables") or ()):
        if isinstance(variable, dict):
            if not variable.get("name"):
                causes.append(required(f"spec.variables[{i}].name"))
            causes += _expression(variable.get("expression"), f"spec.variables[{i}].expression")
    kind = spec.get("paramKind")
    if isinstance(kind, dict):
        if not kind.get("kind"):
            causes.append(required("spec.paramKind.kind"))
        if not kind.get("apiVersion"):
            causes.append(required("spec.paramKind.apiVersion"))
    return causes


def validate_binding(obj: Obj) -> list[Cause]:
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    causes: list[Cause] = []
    if not spec.get("policyName"):
        causes.append(required("spec.policyName"))
    actions = spec.get("validationActions")
    if not actions:
        causes.append(required("spec.validationActions", "at least one validation action is required"))
    else:
        for i, action in enumerate(actions):
            if action not in ACTIONS:
                causes.append(not_supported(f"spec.validationActions[{i}]", action, ACTIONS))
        if "Deny" in actions and "Warn" in actions:
            causes.append(invalid("spec.validationActions", actions, "must not contain both Deny and Warn "
                                  "(repeating the same validation failure information in the API response and "
                                  "headers serves no purpose)"))
    ref = spec.get("paramRef")
    if isinstance(ref, dict):
        if ref.get("name") and ref.get("selector") is not None:
            causes.append(forbidden("spec.paramRef.name", "name and selector are mutually exclusive"))
        action = ref.get("parameterNotFoundAction")
        if action is not None and action not in ("Allow", "Deny"):
            causes.append(not_supported("spec.paramRef.parameterNotFoundAction", action, ("Allow", "Deny")))
    return causes
