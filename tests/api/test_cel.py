"""The CEL evaluator policies, matchConditions and CRD rules share: Kubernetes' string extensions,
upstream-shaped errors, and no expression a client sends escapes as anything but a CELError."""

from __future__ import annotations

import pytest

from kconsole.api.cel import (
    CELError, Cost, CostLimitExceeded, OutOfBudget, compile_expression, evaluate, evaluate_within, to_cel)


@pytest.mark.parametrize(("expression", "expected"), [
    ("object.spec.replicas <= 5", False),
    ("has(object.metadata.labels) && 'app' in object.metadata.labels", True),
    ("object.spec.containers.all(c, c.image.startsWith('registry.example.com/'))", True),
    ("object.metadata.name.lowerAscii() == 'web'", True),
    ("'a,b,c'.split(',').size() == 3", True),
    ("['x', 'y'].join('-') == 'x-y'", True),
    ("object.metadata.name.indexOf('E') == 1", True),
    ("'replicas: ' + string(object.spec.replicas)", "replicas: 7"),
])
def test_expressions(expression: str, expected: object) -> None:
    obj = {"metadata": {"name": "WEB", "labels": {"app": "x"}},
           "spec": {"replicas": 7, "containers": [{"image": "registry.example.com/web:1"}]}}
    assert evaluate(expression, {"object": to_cel(obj)}) == expected


@pytest.mark.parametrize(("expression", "message"), [
    ("object.spec.missing == 1", "no such key: missing"),
    ("undeclared.x", "undeclared reference to 'undeclared' (in container '')"),
    ("'a' + 1", "no matching overload"),
    ("(" * 3000 + "1" + ")" * 3000, "maximum recursion depth exceeded"),
])
def test_errors_are_cel_errors(expression: str, message: str) -> None:
    with pytest.raises(CELError) as caught:
        evaluate(expression, {"object": to_cel({"spec": {}})})
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize("expression", ["", "object.spec.replicas <", "(((", "1 1"])
def test_compile_errors_read_as_upstreams(expression: str) -> None:
    with pytest.raises(CELError, match=r"^compilation failed: ERROR: <input>:1:\d+: Syntax error"):
        compile_expression(expression)


def test_cost_is_counted_per_operation_and_per_element() -> None:
    """cel-go's model: an identifier, a selection and an operator cost 1, literals nothing; a macro
    pays its body once per element."""
    cost = Cost()
    assert evaluate("1 + 2 == 3", {}, cost) is True and cost.spent == 2
    cost = Cost()
    assert evaluate("object.items.all(x, x >= 0)", {"object": to_cel({"items": list(range(50))})}, cost) is True
    assert cost.spent == 3 + 50 * 2


def test_an_evaluation_past_its_limit_is_cancelled_with_upstreams_words() -> None:
    variables = {"object": to_cel({"items": list(range(40))})}
    nested = "object.items.all(x, object.items.all(y, x + y >= 0))"
    with pytest.raises(CostLimitExceeded, match="^operation cancelled: actual cost limit exceeded$"):
        evaluate(nested, variables, limit=500)
    assert evaluate(nested, variables, limit=10_000) is True


def test_a_budget_shared_by_evaluations_runs_out() -> None:
    """upstream's order: what costs more than the budget's remainder is out of budget (and stops
    what follows); within it, the per-call limit still cancels."""
    variables = {"object": to_cel({"items": list(range(30))})}
    cost = Cost()
    for _ in range(3):
        evaluate_within("object.items.all(x, x >= 0)", variables, cost, budget=250)  # 63 each
    with pytest.raises(OutOfBudget, match="^validation failed due to running out of cost budget, no further "
                                          "validation rules will be run$"):
        evaluate_within("object.items.all(x, x >= 0)", variables, cost, budget=250)
    assert cost.stopped
    with pytest.raises(OutOfBudget):
        evaluate_within("true", variables, cost, budget=250)
