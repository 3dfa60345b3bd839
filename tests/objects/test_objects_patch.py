import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from kconsole.objects.patch import apply_merge_patch, create_merge_patch, deep_equal, is_noop_merge_patch

# RFC 7386 appendix A, verbatim.
RFC_CASES = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    (["a", "b"], ["c", "d"], ["c", "d"]),
    ({"a": "b"}, ["c"], ["c"]),
    ({"a": "foo"}, None, None),
    ({"a": "foo"}, "bar", "bar"),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


def test_rfc7386_examples():
    for target, patch, expected in RFC_CASES:
        before = copy.deepcopy((target, patch))
        assert apply_merge_patch(target, patch) == expected
        assert (target, patch) == before  # inputs untouched


def test_result_shares_nothing_with_inputs():
    target = {"spec": {"template": {"labels": {"a": "b"}}}, "list": [1]}
    patch = {"spec": {"replicas": 3}, "new": {"x": [1]}}
    out = apply_merge_patch(target, patch)
    out["spec"]["template"]["labels"]["a"] = "z"
    out["list"].append(2)
    out["new"]["x"].append(2)
    assert target == {"spec": {"template": {"labels": {"a": "b"}}}, "list": [1]}
    assert patch == {"spec": {"replicas": 3}, "new": {"x": [1]}}


def test_kubectl_scale_patch():
    deploy = {"spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}}}
    assert apply_merge_patch(deploy, {"spec": {"replicas": 5}}) == {
        "spec": {"replicas": 5, "selector": {"matchLabels": {"app": "web"}}}
    }


def test_create_merge_patch_is_minimal():
    a = {"metadata": {"labels": {"a": "1", "b": "2"}}, "spec": {"replicas": 1, "paused": False}}
    b = {"metadata": {"labels": {"a": "1", "c": "3"}}, "spec": {"replicas": 2, "paused": False}}
    assert create_merge_patch(a, b) == {"metadata": {"labels": {"b": None, "c": "3"}}, "spec": {"replicas": 2}}
    assert create_merge_patch(a, copy.deepcopy(a)) == {}
    assert is_noop_merge_patch(a, {"spec": {"replicas": 1}})
    assert not is_noop_merge_patch(a, {"spec": {"replicas": 2}})


def test_deep_equal_keeps_booleans_apart_from_numbers():
    assert deep_equal({"a": [1, {"b": 2.0}]}, {"a": [1, {"b": 2}]})
    assert not deep_equal({"a": True}, {"a": 1})
    assert not deep_equal([0], [False])
    assert not deep_equal({"a": 1}, {"a": 1, "b": 2})
    assert not deep_equal([1, 2], [2, 1])
    assert create_merge_patch({"a": 1}, {"a": True}) == {"a": True}


json_leaf = st.one_of(st.booleans(), st.integers(-5, 5), st.text(max_size=3))
json_no_null = st.recursive(
    json_leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from("abcde"), inner, max_size=4)
    ),
    max_leaves=8,
)
json_objects = st.dictionaries(st.sampled_from("abcde"), json_no_null, max_size=5)


@settings(deadline=None, max_examples=80)
@given(json_objects, json_objects)
def test_apply_of_created_patch_gives_the_target(a, b):
    patch = create_merge_patch(a, b)
    assert deep_equal(apply_merge_patch(a, patch), b)


@settings(deadline=None, max_examples=80)
@given(json_no_null, json_no_null)
def test_round_trip_for_any_json_values(a, b):
    assert deep_equal(apply_merge_patch(a, create_merge_patch(a, b)), b)


@settings(deadline=None, max_examples=80)
@given(json_objects)
def test_patching_with_self_is_identity(a):
    assert apply_merge_patch(a, a) == a
    assert create_merge_patch(a, a) == {}
