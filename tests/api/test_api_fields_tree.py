"""The fields a create owns (its managedFields tree) are what the field set of the object says, whether
the tree is computed or remembered from an earlier object of the same shape."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kconsole.api.apply import field_set, fields_tree, to_fieldsv1

_names = st.sampled_from(["app", "web", "db", "side"])
_container = st.fixed_dictionaries(
    {"name": _names, "image": st.sampled_from(["nginx", "redis:7"])},
    optional={"ports": st.lists(st.fixed_dictionaries({"containerPort": st.integers(1, 3)},
                                                      optional={"protocol": st.sampled_from(["TCP", "UDP"])}),
                                max_size=2),
              "resources": st.fixed_dictionaries({}, optional={"requests": st.dictionaries(
                  st.sampled_from(["cpu", "memory"]), st.sampled_from(["1", "64Mi"]))}),
              "args": st.lists(st.sampled_from(["-a", "-b"]), max_size=2)})
_pods = st.fixed_dictionaries(
    {"apiVersion": st.just("v1"), "kind": st.just("Pod"),
     "metadata": st.fixed_dictionaries(
         {"name": st.sampled_from(["p1", "p2"])},
         optional={"labels": st.dictionaries(_names, st.sampled_from(["a", "b"]), max_size=3),
                   "annotations": st.dictionaries(_names, st.text(max_size=3), max_size=2),
                   "finalizers": st.lists(st.sampled_from(["x/y", "z/w"]), max_size=2),
                   "uid": st.just("u-1")})},
    optional={"spec": st.fixed_dictionaries(
        {"containers": st.lists(_container, min_size=1, max_size=3)},
        optional={"nodeSelector": st.dictionaries(_names, _names, max_size=2),
                  "tolerations": st.lists(st.fixed_dictionaries({"key": _names, "operator": st.just("Exists")}),
                                          max_size=2)}),
              "status": st.fixed_dictionaries({"phase": st.just("Pending")})})


@settings(max_examples=200, deadline=None)
@given(_pods)
def test_a_creates_tree_is_its_field_set(pod: dict[str, Any]) -> None:
    expected = json.dumps(to_fieldsv1(field_set(pod, "Pod")))  # keys in FieldsV1 order too
    assert json.dumps(fields_tree(pod, "Pod")) == expected
    again = fields_tree(pod, "Pod")
    assert json.dumps(again) == expected
    again.clear()
    assert json.dumps(fields_tree(pod, "Pod")) == expected, "a remembered tree is handed out as a private copy"
