"""An update's managedFields come out the same whether the diff walks every owned field or skips the
parts of the object the write left equal (status updates, bindings, label edits, container changes)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kconsole.api import apply

_names = st.sampled_from(["app", "web", "db"])
_container = st.fixed_dictionaries(
    {"name": _names, "image": st.sampled_from(["nginx", "redis:7"])},
    optional={"ports": st.lists(st.fixed_dictionaries({"containerPort": st.integers(1, 3)}), max_size=2),
              "args": st.lists(st.sampled_from(["-a", "-b"]), max_size=2),
              "resources": st.fixed_dictionaries({}, optional={"requests": st.dictionaries(
                  st.sampled_from(["cpu", "memory"]), st.sampled_from(["1", "64Mi"]))})})
_pod = st.fixed_dictionaries(
    {"apiVersion": st.just("v1"), "kind": st.just("Pod"),
     "metadata": st.fixed_dictionaries({"name": st.just("p")}, optional={
         "labels": st.dictionaries(_names, st.sampled_from(["a", "b"]), max_size=2),
         "finalizers": st.lists(st.sampled_from(["x/y", "z/w"]), max_size=2)}),
     "spec": st.fixed_dictionaries({"containers": st.lists(_container, min_size=1, max_size=2)}, optional={
         "nodeName": _names, "nodeSelector": st.dictionaries(_names, _names, max_size=2)})},
    optional={"status": st.fixed_dictionaries({"phase": st.sampled_from(["Pending", "Running"])})})


def _reference(new: dict[str, Any], old: dict[str, Any], kind: str, status: bool = False) -> set[apply.Path]:
    return apply.field_set(new, kind)


@settings(max_examples=200, deadline=None)
@given(_pod, _pod, st.booleans(), st.sampled_from(["creator", "kubelet"]))
def test_update_entries_match_the_full_diff(old: dict[str, Any], edit: dict[str, Any], keep_spec: bool,
                                            manager: str) -> None:
    apply.track_update(None, old, "creator", "2026-01-01T00:00:00Z", "Pod")
    new = json.loads(json.dumps(edit))
    new["metadata"]["managedFields"] = old["metadata"]["managedFields"]
    if keep_spec:
        new["spec"] = json.loads(json.dumps(old["spec"]))
    fast = apply.track_update(json.loads(json.dumps(old)), json.loads(json.dumps(new)), manager,
                              "2026-01-01T00:00:01Z", "Pod")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(apply, "_changed_candidates", _reference)
        full = apply.track_update(json.loads(json.dumps(old)), json.loads(json.dumps(new)), manager,
                                  "2026-01-01T00:00:01Z", "Pod")
    assert json.dumps(fast) == json.dumps(full)
    again = apply.track_update(json.loads(json.dumps(old)), json.loads(json.dumps(new)), manager,
                               "2026-01-01T00:00:01Z", "Pod")  # the unchanged sections' shadowed items remembered
    assert json.dumps(again) == json.dumps(full)


_elements = st.one_of(
    st.sampled_from(["f:spec", "f:containers", "f:name", "f:image", "f:metadata", "f:labels", "f:app", "f:args",
                     "f:ports", "f:containerPort", "f:status", "f:phase", "f:nodeName", "bogus", "."]),
    st.sampled_from(["app", "web", "db", "missing"]).map(lambda n: "k:" + json.dumps({"name": n})),
    st.sampled_from(["-a", "-b", "-c"]).map(lambda a: "v:" + json.dumps(a)),
    st.integers(1, 4).map(lambda p: "k:" + json.dumps({"containerPort": p})))


@settings(max_examples=300, deadline=None)
@given(_pod, st.lists(st.lists(_elements, min_size=1, max_size=6).map(tuple), max_size=12), st.booleans())
def test_present_paths_is_lookup_path_by_path(obj: dict[str, Any], paths: list[apply.Path], own: bool) -> None:
    if own:  # the paths a create of this very object owns, plus the random ones
        paths = paths + sorted(apply.field_set(obj, "Pod"))
    tree = apply.to_fieldsv1(set(paths))
    expected = {p for p in apply.from_fieldsv1(tree) if apply.lookup(obj, p)[0]}
    assert apply.present_paths(obj, tree) == expected
