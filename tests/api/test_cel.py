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


def test_a_string_method_pays_for_what_it_walks() -> None:
    """cel-go's StringTraversalCostFactor: a tenth of the receiver's length (the prefix's for
    startsWith/endsWith)."""
    variables = {"s": to_cel("A" * 10_000)}
    cost = Cost()
    evaluate("s.lowerAscii()", variables, cost)
    assert cost.spent == 2 + 1000
    cost = Cost()
    evaluate("s.startsWith('AB')", variables, cost)
    assert cost.spent == 3


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


@pytest.mark.parametrize(("expression", "expected"), [
    # quantity
    ("quantity('1') == quantity('1000m')", True),
    ("quantity('500m').isLessThan(quantity('1'))", True),
    ("quantity('1.5Gi').add(quantity('512Mi')).compareTo(quantity('2Gi'))", 0),
    ("quantity('1k').add(24).asInteger()", 1024),
    ("quantity('1').sub(2).sign()", -1),
    ("quantity('1.5').asApproximateFloat()", 1.5),
    ("quantity('500m').isInteger()", False),
    ("isQuantity('2x')", False),
    ("quantity('2Gi').isGreaterThan(quantity('2G'))", True),
    # lists
    ("[1, 2, 3].isSorted() && ![2, 1].isSorted()", True),
    ("[3, 1, 2].sum()", 6),
    ("[3, 1, 2].max()", 3),
    ("['a', 'b', 'a'].lastIndexOf('a')", 2),
    ("[1, 2].indexOf(2)", 1),
    # strings and regex
    ("'abcb'.lastIndexOf('b')", 3),
    ("'abc'.charAt(1) + 'abc'.reverse()", "bcba"),
    ("'a-b-c'.replace('-', '+', 1)", "a+b-c"),
    ("'a,b,c'.split(',', 2)", ["a", "b,c"]),
    ("'abc 123 def 456'.find('[0-9]+')", "123"),
    ("'abc 123 def 456'.findAll('[0-9]+')", ["123", "456"]),
    ("'abc 123 def 456'.findAll('[0-9]+', 1)", ["123"]),
    ("'%s has %d replicas, %.2f%%'.format(['web', 3, 12.345])", "web has 3 replicas, 12.35%"),
    ("'%s'.format([[1, 'a', true]])", "[1, a, true]"),
    # url
    ("url('https://example.com:8080/p?x=1&x=2').getHost()", "example.com:8080"),
    ("url('https://[::1]:80/p').getHostname()", "::1"),
    ("url('https://example.com/p?x=1&x=2').getQuery()", {"x": ["1", "2"]}),
    ("isURL('not a url')", False),
    # ip and cidr
    ("ip('10.0.0.1').family()", 4),
    ("cidr('10.0.0.0/8').containsIP('10.1.2.3') && cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16')", True),
    ("string(cidr('10.1.2.3/8').masked())", "10.0.0.0/8"),
    ("ip('127.0.0.1').isLoopback() && !ip('8.8.8.8').isLoopback()", True),
    ("ip.isCanonical('2001:db8::0')", False),
    ("isIP('1.2.3') || isCIDR('10.0.0.0')", False),
    # sets
    ("sets.contains([1, 2, 3], [2, 3]) && !sets.contains([1, 2, 3], [4])", True),
    ("sets.equivalent([1, 2, 1], [2, 1]) && sets.intersects([1, 2], [3, 2])", True),
    ("'abc'.contains('b')", True),
    # string(double) as Go's FormatFloat(f, 'g', -1, 64)
    ("string(quantity('1.5Gi').asApproximateFloat())", "1.610612736e+09"),
    ("[string(100.0), string(1.5), string(0.00001), string(123456.0)]", ["100", "1.5", "1e-05", "123456"]),
    ("type('a') == string", True),
])
def test_kubernetes_libraries(expression: str, expected: object) -> None:
    assert evaluate(expression, {}) == expected


@pytest.mark.parametrize(("expression", "message"), [
    ("quantity('2x')", "quantities must match the regular expression "
                       "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ("quantity('1.5').asInteger()", "cannot convert value to integer"),
    ("'%d'.format([1.5])", "error during formatting: decimal clause can only be used on integers, was given double"),
    ("'abc'.substring(2, 1)", "invalid substring range. start: 2, end: 1"),
    ("[].min()", "min(list) argument must not be empty"),
    ("[].max()", "max(list) argument must not be empty"),
])
def test_library_errors_are_upstreams(expression: str, message: str) -> None:
    with pytest.raises(CELError) as caught:
        evaluate(expression, {})
    assert str(caught.value) == message


@pytest.mark.parametrize(("expression", "message"), [
    ("object.spec.foo(1)", "compilation failed: ERROR: <input>:1:16: undeclared reference to 'foo' (in container '')"),
    ("true && bar(2)", "compilation failed: ERROR: <input>:1:12: undeclared reference to 'bar' (in container '')"),
])
def test_an_undeclared_function_is_refused_when_compiled(expression: str, message: str) -> None:
    """cel-go's checker: a function no library declares is a compile error at the call's parenthesis."""
    with pytest.raises(CELError) as caught:
        compile_expression(expression)
    assert str(caught.value) == message
