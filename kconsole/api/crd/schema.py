"""A custom resource's structural schema: pruning, defaulting and validation, as upstream's
apiextensions-apiserver applies a CRD version's ``openAPIV3Schema`` to every write.

Order of a write, as upstream: unknown fields are pruned (their paths reported, so
``fieldValidation`` can warn or refuse), defaults are applied, then the object is validated. Causes
carry upstream's wording, e.g. ``spec.size: Invalid value: "string": spec.size in body must be of
type integer: "string"``.
"""

from __future__ import annotations

import copy
import json
import re
from contextvars import ContextVar
from typing import Any

from kconsole.api import celcost
from kconsole.api.cel import (
    CELError, Cost, CostLimitExceeded, OutOfBudget, compile_expression, evaluate_within, to_cel)
from kconsole.api.validators.field import Cause, forbidden, go_value, invalid, not_supported, required

Obj = dict[str, Any]
Schema = dict[str, Any]

PRESERVE = "x-kubernetes-preserve-unknown-fields"
INT_OR_STRING = "x-kubernetes-int-or-string"
EMBEDDED = "x-kubernetes-embedded-resource"

#: Fields of the root every object keeps whatever the schema says.
ROOT_KEPT = ("apiVersion", "kind", "metadata")

_PATTERNS: dict[str, re.Pattern[str] | None] = {}


def _json_type(value: Any) -> str:
    """The OpenAPI type name of a decoded JSON value (what upstream's messages call it)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


# --------------------------------------------------------------------------- pruning


def prune(obj: Obj, schema: Schema) -> list[str]:
    """Drop what the schema does not declare (in place); the dropped fields' paths."""
    dropped: list[str] = []
    for key in list(obj):
        if key in ROOT_KEPT:
            continue
        props = schema.get("properties") or {}
        if key in props:
            obj[key] = _prune(obj[key], props[key], key, dropped)
        elif not schema.get(PRESERVE):
            del obj[key]
            dropped.append(key)
    return dropped


def _prune(value: Any, schema: Schema, path: str, dropped: list[str]) -> Any:
    if isinstance(value, dict):
        if schema.get(EMBEDDED):
            return value
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        preserve = schema.get(PRESERVE) or extra is True
        for key in list(value):
            if props and key in props:
                value[key] = _prune(value[key], props[key], _join(path, key), dropped)
            elif isinstance(extra, dict):
                value[key] = _prune(value[key], extra, _join(path, key), dropped)
            elif not preserve:
                del value[key]
                dropped.append(_join(path, key))
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                value[i] = _prune(item, items, f"{path}[{i}]", dropped)
    return value


# --------------------------------------------------------------------------- defaulting


def default(value: Any, schema: Schema) -> None:
    """Apply ``default`` of every absent (or null, non-nullable) property, in place, then recurse."""
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        for key, sub in props.items():
            if not isinstance(sub, dict):
                continue
            if "default" in sub and (key not in value or (value[key] is None and not sub.get("nullable"))):
                value[key] = copy.deepcopy(sub["default"])
            if key in value:
                default(value[key], sub)
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for key, item in value.items():
                if key not in props:
                    default(item, extra)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for item in value:
                default(item, items)


# --------------------------------------------------------------------------- validation


def validate(obj: Obj, schema: Schema, old: Obj | None = None) -> list[Cause]:
    """Causes for every violation of ``schema`` by ``obj`` (the root's metadata is ObjectMeta's concern);
    ``old``, on an update, gives transition rules (``oldSelf``) their old values."""
    causes: list[Cause] = []
    token = _COST.set(Cost())  # upstream's RuntimeCELCostBudget: all of one object's rules together
    try:
        props = schema.get("properties") or {}
        for key in schema.get("required") or ():
            if key not in obj and key not in ROOT_KEPT:
                causes.append(required(key))
        for key, value in obj.items():
            if key == "metadata" or key not in props:
                continue
            _validate(value, props[key], key, causes, old.get(key, _ABSENT) if isinstance(old, dict) else _ABSENT)
        if schema.get(RULES) and not causes:
            _rules(obj, schema, "", causes, old if old is not None else _ABSENT)
    finally:
        _COST.reset(token)
    return causes


def _validate(value: Any, schema: Schema, path: str, causes: list[Cause], old: Any = None) -> None:
    if old is None:
        old = _ABSENT
    before = len(causes)
    _validate_value(value, schema, path, causes, old)
    if len(causes) == before and value is not None and schema.get(RULES):
        _rules(value, schema, path, causes, old)


#: ``x-kubernetes-validations``: CEL rules on the value (``self``) and, on updates, its old value.
RULES = "x-kubernetes-validations"
_ABSENT = object()
#: What the rules of the object being validated have cost (a ContextVar: validation may nest).
_COST: ContextVar[Cost] = ContextVar("crd_rule_cost")
_REASONS = {"FieldValueForbidden": "Forbidden", "FieldValueRequired": "Required value",
            "FieldValueDuplicate": "Duplicate value"}


def _rules(value: Any, schema: Schema, path: str, causes: list[Cause], old: Any) -> None:
    """upstream's CEL validator: a rule that is not true adds ``path: Invalid value: "<type>":
    <message>`` (``failed rule: <rule>`` without a message); a rule naming ``oldSelf`` runs only
    when there is an old value."""
    for rule in schema.get(RULES) or ():
        if not isinstance(rule, dict) or not rule.get("rule"):
            continue
        text = str(rule["rule"])
        transition = "oldSelf" in text
        if transition and old is _ABSENT:
            continue
        variables = {"self": to_cel(value)}
        if transition:
            variables["oldSelf"] = to_cel(old)
        where = path or "<nil>"
        field_path = rule.get("fieldPath")
        if isinstance(field_path, str) and field_path:
            where = (path + field_path) if field_path.startswith(".") or field_path.startswith("[") else \
                f"{path}.{field_path}"
            where = where.lstrip(".") or "<nil>"
        cost = _COST.get(None) or Cost()
        if cost.stopped:
            return
        kind = schema.get("type") or "object"
        try:
            result = evaluate_within(text, variables, cost)
        except OutOfBudget as err:
            causes.append(invalid(where, kind, str(err)))
            return
        except CostLimitExceeded as err:
            cost.stopped = True
            causes.append(invalid(where, kind, f"'{err}': no further validation rules will be run due to call "
                                               f"cost exceeds limit for rule: {_rule_text(rule)}"))
            return
        except CELError as err:
            causes.append(invalid(where, kind, f"{err} evaluating rule: {text}"))
            continue
        if result is True:
            continue
        message = rule.get("message") or f"failed rule: {text}"
        if rule.get("messageExpression"):
            try:
                produced = evaluate_within(str(rule["messageExpression"]), variables, cost)
                if isinstance(produced, str) and produced.strip():
                    message = produced
            except CELError:
                pass
        reason = rule.get("reason")
        if reason in _REASONS:
            causes.append({"reason": reason, "field": where, "message": f"{_REASONS[reason]}: {message}"})
        else:
            causes.append(invalid(where, schema.get("type") or "object", message))


def _rule_text(rule: Obj) -> str:
    """upstream's ruleErrorString: the rule's message, or the rule."""
    return str(rule.get("message") or "").strip() or str(rule.get("rule") or "").strip()


def _validate_value(value: Any, schema: Schema, path: str, causes: list[Cause], old: Any) -> None:
    if value is None:
        if not schema.get("nullable") and not (schema.get(PRESERVE) and not schema.get("type")):
            wanted = schema.get("type")
            if wanted:
                causes.append(invalid(path, "null", f'{path} in body must be of type {wanted}: "null"'))
        return
    kind = schema.get("type")
    actual = _json_type(value)
    if schema.get(INT_OR_STRING):
        if actual not in ("integer", "string") and not _is_integer(value):
            causes.append(invalid(path, actual, f'{path} in body must be of type integer,string: "{actual}"'))
            return
    elif kind and not (kind == actual or (kind == "number" and actual == "integer")
                       or (kind == "integer" and _is_integer(value))):
        causes.append(invalid(path, actual, f'{path} in body must be of type {kind}: "{actual}"'))
        return
    enum = schema.get("enum")
    if enum is not None and value not in enum:
        causes.append(not_supported(path, value, [e if isinstance(e, str) else json.dumps(e) for e in enum]))
    if isinstance(value, str):
        _validate_string(value, schema, path, causes)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        _validate_number(value, schema, path, causes)
    elif isinstance(value, list):
        _validate_array(value, schema, path, causes)
    elif isinstance(value, dict):
        _validate_object(value, schema, path, causes, old)


def _validate_string(value: str, schema: Schema, path: str, causes: list[Cause]) -> None:
    low, high = schema.get("minLength"), schema.get("maxLength")
    if low is not None and len(value) < low:
        causes.append(invalid(path, value, f"{path} in body should be at least {low} chars long"))
    if high is not None and len(value) > high:
        causes.append(_too_long(path, value, high))
    pattern = schema.get("pattern")
    if pattern is not None:
        compiled = _compile(pattern)
        if compiled is not None and compiled.search(value) is None:
            causes.append(invalid(path, value, f"{path} in body should match '{pattern}'"))


def _too_long(path: str, value: str, high: int) -> Cause:
    """Upstream reports an over-long string as TooLong, not Invalid."""
    return {"reason": "FieldValueTooLong", "field": path,
            "message": f"Too long: may not be more than {high} bytes"}


def _compile(pattern: str) -> re.Pattern[str] | None:
    if pattern not in _PATTERNS:
        try:
            _PATTERNS[pattern] = re.compile(pattern)
        except re.error:
            _PATTERNS[pattern] = None
    return _PATTERNS[pattern]


def _validate_number(value: float, schema: Schema, path: str, causes: list[Cause]) -> None:
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None:
        if schema.get("exclusiveMinimum") and value <= low:
            causes.append(invalid(path, value, f"{path} in body should be greater than {go_value(low)}"))
        elif value < low:
            causes.append(invalid(path, value, f"{path} in body should be greater than or equal to {go_value(low)}"))
    if high is not None:
        if schema.get("exclusiveMaximum") and value >= high:
            causes.append(invalid(path, value, f"{path} in body should be less than {go_value(high)}"))
        elif value > high:
            causes.append(invalid(path, value, f"{path} in body should be less than or equal to {go_value(high)}"))
    step = schema.get("multipleOf")
    if step and (value / step) != int(value / step):
        causes.append(invalid(path, value, f"{path} in body should be a multiple of {go_value(step)}"))


def _validate_array(value: list[Any], schema: Schema, path: str, causes: list[Cause]) -> None:
    low, high = schema.get("minItems"), schema.get("maxItems")
    if low is not None and len(value) < low:
        causes.append(invalid(path, len(value), f"{path} in body should have at least {low} items"))
    if high is not None and len(value) > high:
        causes.append({"reason": "FieldValueTooMany", "field": path,
                       "message": f"Too many: {len(value)}: must have at most {high} items"})
    if schema.get("uniqueItems") or schema.get("x-kubernetes-list-type") == "set":
        seen: list[Any] = []
        for i, item in enumerate(value):
            if item in seen:
                causes.append({"reason": "FieldValueDuplicate", "field": f"{path}[{i}]",
                               "message": f"Duplicate value: {go_value(item)}"})
            else:
                seen.append(item)
    items = schema.get("items")
    if isinstance(items, dict):
        for i, item in enumerate(value):
            _validate(item, items, f"{path}[{i}]", causes)


def _validate_object(value: Obj, schema: Schema, path: str, causes: list[Cause], old: Any = None) -> None:
    if schema.get(EMBEDDED):
        return
    props = schema.get("properties") or {}
    for key in schema.get("required") or ():
        if key not in value:
            causes.append(required(_join(path, key)))
    low, high = schema.get("minProperties"), schema.get("maxProperties")
    if low is not None and len(value) < low:
        causes.append(invalid(path, len(value), f"{path} in body should have at least {low} properties"))
    if high is not None and len(value) > high:
        causes.append(invalid(path, len(value), f"{path} in body should have at most {high} properties"))
    extra = schema.get("additionalProperties")
    for key, item in value.items():
        sub = props.get(key)
        if sub is None and isinstance(extra, dict):
            sub = extra
        if isinstance(sub, dict):
            before = old.get(key, _ABSENT) if isinstance(old, dict) else _ABSENT
            _validate(item, sub, _join(path, key), causes, before)


# --------------------------------------------------------------------------- the CRD's own schema


TYPES = ("array", "boolean", "integer", "number", "object", "string")


def structural_causes(schema: Any, path: str) -> list[Cause]:
    """What makes a CRD's schema non-structural, in upstream's words (a subset: types and nesting)."""
    if not isinstance(schema, dict):
        return [invalid(path, schema, "must be an object")]
    causes: list[Cause] = []
    costs: list[tuple[int, str]] = []
    _structural(schema, path, causes, root=True, costs=costs)
    total = sum(cost for cost, _ in costs)
    if total > celcost.SCHEMA_COST_LIMIT:
        for _, where in sorted(costs, key=lambda c: -c[0])[:celcost.MOST_EXPENSIVE]:
            causes.append(forbidden(where, "contributed to estimated rule cost total exceeding cost limit for entire "
                                           "OpenAPIv3 schema"))
        causes.append(forbidden(path, celcost.exceeds_message(
            total, celcost.SCHEMA_COST_LIMIT, "x-kubernetes-validations estimated rule cost total for entire "
                                              "OpenAPIv3 schema")))
    return causes


def _structural(schema: Schema, path: str, causes: list[Cause], root: bool = False,
                enclosing: int | None = 1, costs: list[tuple[int, str]] | None = None) -> None:
    """``enclosing``: how many values of this schema one object can hold (None: unbounded), for the
    estimated cost of its rules; ``costs`` collects each rule's (cost, path)."""
    costs = costs if costs is not None else []
    kind = schema.get("type")
    if root and kind != "object":
        causes.append(invalid(f"{path}.type", kind or "", "must be object at the root"))
    if kind is None:
        if not schema.get(INT_OR_STRING) and not schema.get(PRESERVE):
            causes.append(required(f"{path}.type", "must not be empty for specified object fields"))
    elif kind not in TYPES:
        causes.append(not_supported(f"{path}.type", kind, TYPES))
    props = schema.get("properties")
    if props is not None:
        if not isinstance(props, dict):
            causes.append(invalid(f"{path}.properties", props, "must be an object"))
        else:
            for key, sub in props.items():
                where = f"{path}.properties[{key}]"
                if isinstance(sub, dict):
                    _structural(sub, where, causes, enclosing=enclosing, costs=costs)
                else:
                    causes.append(invalid(where, sub, "must be an object"))
            if isinstance(schema.get("additionalProperties"), dict):
                causes.append({"reason": "FieldValueForbidden", "field": f"{path}.additionalProperties",
                               "message": "Forbidden: additionalProperties and properties are mutual exclusive"})
    items = schema.get("items")
    if isinstance(items, dict):
        bound = schema.get("maxItems")
        _structural(items, f"{path}.items", causes,
                    enclosing=enclosing * bound if enclosing is not None and isinstance(bound, int) else None,
                    costs=costs)
    elif kind == "array":
        causes.append(required(f"{path}.items", "must be specified"))
    for i, rule in enumerate(schema.get(RULES) or ()):
        text = rule.get("rule") if isinstance(rule, dict) else None
        where = f"{path}.{RULES}[{i}].rule"
        if not text:
            causes.append(required(where))
            continue
        try:
            program = compile_expression(str(text))
        except CELError as err:
            causes.append(invalid(where, text, str(err)))
            continue
        cost = celcost.rule_cost(program.ast, schema) * celcost.cardinality(schema, enclosing)
        costs.append((cost, where))
        if cost > celcost.RULE_COST_LIMIT:
            causes.append(forbidden(where, celcost.exceeds_message(cost)))
        message = rule.get("messageExpression")
        if not message:
            continue
        where = f"{path}.{RULES}[{i}].messageExpression"
        try:
            program = compile_expression(str(message))
        except CELError as err:
            causes.append(invalid(where, message, f"messageExpression {err}"))
            continue
        cost = celcost.rule_cost(program.ast, schema) * celcost.cardinality(schema, enclosing)
        costs.append((cost, where))
        if cost > celcost.RULE_COST_LIMIT:
            causes.append(forbidden(where, celcost.exceeds_message(cost, name="estimated messageExpression cost")))
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        bound = schema.get("maxProperties")
        _structural(extra, f"{path}.additionalProperties", causes,
                    enclosing=enclosing * bound if enclosing is not None and isinstance(bound, int) else None,
                    costs=costs)
    pattern = schema.get("pattern")
    if isinstance(pattern, str) and _compile(pattern) is None:
        causes.append(invalid(f"{path}.pattern", pattern, "must be a valid regular expression"))
