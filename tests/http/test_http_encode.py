"""Response bodies: an object's JSON with remembered sections is byte for byte the plain encoding."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kconsole.http import encode

_atoms = st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.floats(allow_nan=False) \
    | st.text(max_size=8)
_json = st.recursive(_atoms, lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=8)
_keys = st.sampled_from(["apiVersion", "kind", "metadata", "spec", "status", "data", "x"]) | st.text(max_size=4)
_meta = st.dictionaries(st.sampled_from(["name", "labels", "managedFields", "resourceVersion"]) | st.text(max_size=4),
                        _json, max_size=5)
_objects = st.dictionaries(_keys, _json | _meta, max_size=5)


def _plain(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


@settings(max_examples=80, deadline=None)
@given(_objects, _objects)
def test_objects_encode_as_the_plain_encoder_does_first_time_and_remembered(a: Any, b: Any) -> None:
    for obj in (a, b, a, b):
        assert encode.dumps_object(obj) == _plain(obj)


def test_equal_sections_of_different_types_are_not_confused() -> None:
    # 1 and True, 1.0 and 1 are equal in Python but not in JSON: each keeps its own text.
    for spec in ({"n": 1}, {"n": True}, {"n": 1.0}, {"n": 1}, {"n": [1, 2]}, {"n": (1, 2)}):
        obj = {"kind": "Pod", "metadata": {"name": "p", "managedFields": [spec]}, "spec": spec}
        assert encode.dumps_object(obj) == _plain(obj)


def test_non_string_keys_and_unencodable_values_behave_as_json_does() -> None:
    obj = {"kind": "X", "spec": {1: "a", None: "b"}, "metadata": {"name": "n"}}
    assert encode.dumps_object(obj) == _plain(obj)
    obj = {"kind": "X", "metadata": {2: "two"}}
    assert encode.dumps_object(obj) == _plain(obj)
    try:
        encode.dumps_object({"spec": {"x": {1, 2}}})
    except TypeError as err:
        assert "set" in str(err)
    else:
        raise AssertionError("a set is not JSON")


def test_a_watch_event_is_encoded_once_however_many_watchers_send_it() -> None:
    lines = encode.WatchLines(kept=2)
    shared = {"type": "ADDED", "object": {"kind": "Pod", "metadata": {"name": "p"}}}
    first = lines.line(shared)
    assert first == _plain(shared) + b"\n"
    assert lines.line(shared) is first  # the second watcher gets the same bytes
    equal = {"type": "ADDED", "object": {"kind": "Pod", "metadata": {"name": "p"}}}
    assert lines.line(equal) == first and lines.line(equal) is not first
    lines.line({"type": "DELETED", "object": {}})  # a third event: the oldest is forgotten
    assert lines.line(shared) == first and lines.line(shared) is not first
