"""The CEL evaluator policies, matchConditions and CRD rules share: Kubernetes' string extensions,
upstream-shaped errors, and no expression a client sends escapes as anything but a CELError."""

from __future__ import annotations

import pytest

from kconsole.api.cel import CELError, compile_expression, evaluate, to_cel


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
