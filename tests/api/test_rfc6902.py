"""JSON patch with evanphx/json-patch's rules and words (what kube-apiserver applies and answers)."""

from __future__ import annotations

from typing import Any

import pytest

from kconsole.api import rfc6902


@pytest.mark.parametrize(("doc", "ops", "want"), [
    ({"a": 1}, [{"op": "add", "path": "/b", "value": [1]}], {"a": 1, "b": [1]}),
    ({"l": [1, 3]}, [{"op": "add", "path": "/l/1", "value": 2}], {"l": [1, 2, 3]}),
    ({"l": [1]}, [{"op": "add", "path": "/l/-", "value": 2}], {"l": [1, 2]}),
    ({"a/b": {"~": 1}}, [{"op": "replace", "path": "/a~1b/~0", "value": 2}], {"a/b": {"~": 2}}),
    ({"a": 1, "b": {}}, [{"op": "move", "from": "/a", "path": "/b/a"}], {"b": {"a": 1}}),
    ({"a": {"x": 1}}, [{"op": "copy", "from": "/a", "path": "/c"}], {"a": {"x": 1}, "c": {"x": 1}}),
    ({"a": 1.0}, [{"op": "test", "path": "/a", "value": 1}, {"op": "remove", "path": "/a"}], {}),
    ({"a": None}, [{"op": "test", "path": "/missing", "value": None}], {"a": None}),
    ({"a": 1}, [{"op": "replace", "path": "", "value": {"z": 0}}], {"z": 0}),
])
def test_operations_apply(doc: Any, ops: list[Any], want: Any) -> None:
    assert rfc6902.apply(doc, ops) == want


@pytest.mark.parametrize(("doc", "op", "message"), [
    ({"a": 1}, {"op": "test", "path": "/a", "value": 2}, "testing value /a failed: test failed"),
    ({"a": True}, {"op": "test", "path": "/a", "value": 1}, "testing value /a failed: test failed"),
    ({}, {"op": "test", "path": "/x/y", "value": 1}, "test operation does not apply: is missing path: /x/y: missing value"),
    ({}, {"op": "remove", "path": "/a"}, "Unable to remove nonexistent key: a: missing value"),
    ({}, {"op": "remove", "path": "/a/b"}, 'remove operation does not apply: doc is missing path: "/a/b": missing value'),
    ({}, {"op": "replace", "path": "/a", "value": 1}, "replace operation does not apply: doc is missing key: /a: missing value"),
    ({}, {"op": "add", "path": "/a/b", "value": 1}, 'add operation does not apply: doc is missing path: "/a/b": missing value'),
    ({"l": [1]}, {"op": "add", "path": "/l/5", "value": 1}, "Unable to access invalid index: 5: invalid index referenced"),
    ({}, {"op": "move", "from": "/a", "path": "/b"}, "move operation does not apply: doc is missing from path: /a: missing value"),
    ({}, {"op": "frobnicate", "path": "/a"}, "Unexpected kind: frobnicate: unknown object type"),
])
def test_failures_say_what_upstream_says(doc: Any, op: dict[str, Any], message: str) -> None:
    with pytest.raises(rfc6902.PatchError) as err:
        rfc6902.apply(doc, [op])
    assert str(err.value) == message


def test_an_operation_failing_after_others_fails_the_whole_patch() -> None:
    """The API server patches a private copy, so a failure half way stores nothing."""
    doc = {"a": 1}
    with pytest.raises(rfc6902.PatchError):
        rfc6902.apply(doc, [{"op": "add", "path": "/b", "value": 2}, {"op": "test", "path": "/a", "value": 9}])


def test_not_a_list_is_malformed() -> None:
    with pytest.raises(rfc6902.MalformedPatch):
        rfc6902.apply({}, {"op": "add"})
