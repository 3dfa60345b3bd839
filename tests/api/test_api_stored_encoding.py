"""What the store holds is byte for byte the compact JSON of the object without its resourceVersion,
however often its sections repeat (the encoder remembers repeated sections)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kconsole.api.storage import encode_for_cache, encode_stored

_scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                     st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8))
_json = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                        st.dictionaries(st.text(max_size=6), inner, max_size=4)),
                     max_leaves=20)
_objects = st.fixed_dictionaries(
    {"apiVersion": st.just("v1"), "kind": st.just("Pod"),
     "metadata": st.fixed_dictionaries({"name": st.text(min_size=1, max_size=8)},
                                       optional={"resourceVersion": st.just("42"), "labels": _json,
                                                 "managedFields": st.lists(_json, max_size=2)})},
    optional={"spec": st.dictionaries(st.text(max_size=6), _json, max_size=4), "status": _json, "data": _json})


def _expected(obj: dict[str, Any]) -> str:
    plain = json.loads(json.dumps(obj))
    plain["metadata"].pop("resourceVersion", None)
    return json.dumps(plain, separators=(",", ":"), ensure_ascii=False)


@settings(max_examples=150, deadline=None)
@given(_objects, st.booleans())
def test_stored_text_is_the_compact_json_without_resource_version(obj: dict[str, Any], twice: bool) -> None:
    if twice:
        encode_stored(obj)  # a second encoding takes the repeated sections from the encoder's memory
    text = encode_stored(obj)
    assert text == _expected(obj)
    assert json.loads(text) == {**obj, "metadata": {k: v for k, v in obj["metadata"].items()
                                                   if k != "resourceVersion"}}
    if "resourceVersion" in obj["metadata"]:
        assert obj["metadata"]["resourceVersion"] == "42", "the caller's object keeps its resourceVersion"
    cached_text, copy = encode_for_cache(obj)
    assert cached_text == text
    assert json.dumps(copy) == json.dumps(obj), "the cache's copy is the object, keys in the same order"


def test_the_cache_copy_is_not_the_writers_object() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "labels": {"app": "x"},
                                                          "managedFields": [{"manager": "m"}]},
           "spec": {"containers": [{"name": "c", "image": "i"}]}, "status": {"phase": "Pending"}}
    _, copy = encode_for_cache(pod)
    _, again = encode_for_cache(json.loads(json.dumps(pod)))
    pod["metadata"]["labels"]["app"] = "changed"
    pod["metadata"]["managedFields"][0]["manager"] = "changed"
    pod["spec"]["containers"][0]["image"] = "changed"
    pod["status"]["phase"] = "Running"
    for cached in (copy, again):
        assert cached["metadata"]["labels"] == {"app": "x"}
        assert cached["metadata"]["managedFields"] == [{"manager": "m"}]
        assert cached["spec"] == {"containers": [{"name": "c", "image": "i"}]}
        assert cached["status"] == {"phase": "Pending"}


def test_equal_sections_of_different_types_are_not_confused() -> None:
    first = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"x": 1}}
    second = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"x": True}}
    third = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"x": 1.0}}
    assert [encode_stored(o) for o in (first, second, third, first)] == [
        '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"x":1}}',
        '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"x":true}}',
        '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"x":1.0}}',
        '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"x":1}}',
    ]
