import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kconsole.objects.selectors import (
    EVERYTHING,
    NOTHING,
    NodeSelector,
    SelectorError,
    field_value,
    from_label_selector_dict,
    new_requirement,
    node_selector_term_matches,
    parse_field_selector,
    parse_field_selector_for,
    parse_label_selector,
    selector_from_set,
)

# --- label selectors: grammar ----------------------------------------------------------------


def test_full_grammar_parses_and_prints_canonically():
    sel = parse_label_selector("g, a=b,c!=d,e in (y,x),f notin (z),!h,i==j,n>5,m<3")
    # sorted by key, as upstream sorts requirements
    assert sel.to_string() == "a=b,c!=d,e in (x,y),f notin (z),g,!h,i==j,m<3,n>5"
    assert [r.operator for r in sel.requirements] == ["=", "!=", "in", "notin", "exists", "!", "==", "lt", "gt"]


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        ({"a": "b", "e": "x", "g": "1", "n": "6", "m": "2"}, True),
        ({"a": "b", "e": "x", "g": "1", "n": "6", "m": "2", "c": "d"}, False),  # c!=d
        ({"a": "b", "e": "x", "g": "1", "n": "6", "m": "2", "c": "other"}, True),
        ({"a": "b", "e": "q", "g": "1", "n": "6", "m": "2"}, False),  # e in (x,y)
        ({"a": "b", "e": "x", "g": "1", "n": "6", "m": "2", "f": "z"}, False),  # f notin (z)
        ({"a": "b", "e": "x", "n": "6", "m": "2"}, False),  # g must exist
        ({"a": "b", "e": "x", "g": "1", "n": "6", "m": "2", "h": ""}, False),  # !h
        ({"a": "b", "e": "x", "g": "1", "n": "5", "m": "2"}, False),  # n>5 is strict
        ({"a": "b", "e": "x", "g": "1", "n": "x6", "m": "2"}, False),  # non-integer never matches gt
        ({"a": "b", "e": "x", "g": "1", "m": "2"}, False),  # missing never matches gt
    ],
)
def test_matching_follows_upstream_semantics(labels, expected):
    sel = parse_label_selector("a=b,c!=d,e in (x,y),f notin (z),g,!h,n>5,m<3")
    assert sel.matches(labels) is expected


def test_empty_string_and_whitespace_select_everything():
    assert parse_label_selector("") is EVERYTHING
    assert parse_label_selector("  ").empty
    assert parse_label_selector("").matches({})
    assert not parse_label_selector("a").empty


def test_keywords_are_values_where_values_are_expected():
    assert parse_label_selector("a=in").matches({"a": "in"})
    assert parse_label_selector("a in (in,notin)").matches({"a": "notin"})


def test_empty_values_in_sets_and_after_equals():
    assert parse_label_selector("a in ()").matches({"a": ""})
    assert parse_label_selector("a in (x,,y)").requirements[0].values == ("", "x", "y")
    with pytest.raises(SelectorError, match=r"found '\)', expected: ',', or identifier"):
        parse_label_selector("a in (,,)")  # upstream rejects this too
    assert parse_label_selector("a=").matches({"a": ""})
    assert parse_label_selector("a in (,b)").requirements[0].values == ("", "b")


@pytest.mark.parametrize(
    ("text", "message", "position"),
    [
        ("a=b,", "found '', expected: identifier after ','", 4),
        ("a=b,,c", "found ',', expected: identifier after ','", 4),
        ("a in x", "unable to parse requirement: found 'x' expected: '('", 5),
        ("a in (b", "unable to parse requirement: found '', expected: ',' or ')'", 7),
        ("=b", "found '=', expected: !, identifier, or 'end of string'", 0),
        ("a=b c", "found 'c', expected: ',' or 'end of string'", 4),
        ("!a=b", "found '=', expected: ',' or 'end of string'", 2),
        ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt", 2),
    ],
)
def test_parse_errors_name_the_problem_and_position(text, message, position):
    with pytest.raises(SelectorError) as info:
        parse_label_selector(text)
    assert info.value.message == message
    assert info.value.position == position
    assert f"position {position}" in str(info.value)


def test_invalid_keys_and_values_use_upstream_validation_messages():
    with pytest.raises(ValueError, match=r'key: Invalid value: "a_": name part must consist of alphanumeric'):
        parse_label_selector("a_=b")
    with pytest.raises(ValueError, match=r'values\[0\]\[a\]: Invalid value: "b\$": a valid label must be'):
        parse_label_selector("a=b$")
    with pytest.raises(ValueError, match="for 'Gt', 'Lt' operators, the value must be an integer"):
        parse_label_selector("a>x")
    with pytest.raises(ValueError, match="must be no more than 63 characters"):
        parse_label_selector("a=" + "x" * 64)


def test_requirement_arity_checks():
    with pytest.raises(ValueError, match="values set can't be empty"):
        new_requirement("a", "in", [])
    with pytest.raises(ValueError, match="exact-match compatibility requires one single value"):
        new_requirement("a", "=", ["x", "y"])
    with pytest.raises(ValueError, match="values set must be empty"):
        new_requirement("a", "exists", ["x"])
    with pytest.raises(ValueError, match='operator: Unsupported value: "near": supported values: "in", "notin"'):
        new_requirement("a", "near", ["x"])


def test_prefixed_keys():
    sel = parse_label_selector("app.kubernetes.io/name=web")
    assert sel.matches({"app.kubernetes.io/name": "web"})
    with pytest.raises(ValueError, match="prefix part"):
        parse_label_selector("Bad_Prefix/name=web")


# --- label selectors: dict form ---------------------------------------------------------------


def test_none_selects_nothing_and_empty_selects_everything():
    assert from_label_selector_dict(None) is NOTHING
    assert not NOTHING.matches({"a": "b"})
    assert from_label_selector_dict({}).matches({"a": "b"})
    assert from_label_selector_dict({"matchLabels": {}, "matchExpressions": []}).empty


def test_dict_form_combines_match_labels_and_expressions():
    sel = from_label_selector_dict(
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["fe", "be"]},
                {"key": "canary", "operator": "DoesNotExist"},
                {"key": "env", "operator": "NotIn", "values": ["prod"]},
                {"key": "team", "operator": "Exists"},
            ],
        }
    )
    assert sel.matches({"app": "web", "tier": "fe", "team": "x"})
    assert not sel.matches({"app": "web", "tier": "fe", "team": "x", "canary": "1"})
    assert not sel.matches({"app": "web", "tier": "fe", "team": "x", "env": "prod"})
    assert sel.to_string() == "app=web,!canary,env notin (prod),team,tier in (be,fe)"


def test_dict_form_rejects_unknown_operator():
    with pytest.raises(ValueError, match='"Gt" is not a valid label selector operator'):
        from_label_selector_dict({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]})


def test_selector_from_set_and_exact_requirements():
    sel = selector_from_set({"app": "web", "tier": "fe"})
    assert sel.to_string() == "app=web,tier=fe"
    assert sel.requires_exact("app") == "web"
    assert sel.requires_exact("other") is None
    assert sel.matches_object({"metadata": {"labels": {"app": "web", "tier": "fe", "x": "y"}}})


# --- label selectors: properties --------------------------------------------------------------

keys = st.sampled_from(["a", "b", "c", "app", "example.com/tier"])
vals = st.sampled_from(["", "x", "y", "z", "1", "7", "42"])
int_vals = st.sampled_from(["0", "1", "7", "42"])  # "-3" is not a valid label value upstream either


@st.composite
def requirement_texts(draw):
    key = draw(keys)
    op = draw(st.sampled_from(["=", "==", "!=", "in", "notin", "exists", "!", ">", "<"]))
    if op in ("exists",):
        return key, op, ()
    if op == "!":
        return key, op, ()
    if op in ("in", "notin"):
        # unique: upstream itself rejects repeated empty values such as "a in (,,)"
        values = tuple(draw(st.lists(vals, min_size=1, max_size=3, unique=True)))
        return key, op, values
    if op in (">", "<"):
        return key, op, (draw(int_vals),)
    return key, op, (draw(vals),)


def render(req):
    key, op, values = req
    if op == "exists":
        return key
    if op == "!":
        return "!" + key
    if op in ("in", "notin"):
        return f"{key} {op} ({','.join(values)})"
    return f"{key}{op}{values[0]}"


def reference_match(reqs, labels):
    for key, op, values in reqs:
        have = labels.get(key)
        if op in ("=", "==", "in"):
            ok = have is not None and have in values
        elif op in ("!=", "notin"):
            ok = have is None or have not in values
        elif op == "exists":
            ok = have is not None
        elif op == "!":
            ok = have is None
        else:
            try:
                n = int(have) if have is not None else None
            except ValueError:
                n = None
            ok = n is not None and (n > int(values[0]) if op == ">" else n < int(values[0]))
        if not ok:
            return False
    return True


label_sets = st.dictionaries(keys, vals, max_size=5)


@settings(deadline=None, max_examples=80)
@given(st.lists(requirement_texts(), max_size=5), st.lists(label_sets, min_size=1, max_size=6))
def test_random_selectors_agree_with_reference_and_survive_round_trip(reqs, label_samples):
    sel = parse_label_selector(",".join(render(r) for r in reqs))
    again = parse_label_selector(sel.to_string())
    assert again == sel
    for labels in label_samples:
        expected = reference_match(reqs, labels)
        assert sel.matches(labels) is expected
        assert again.matches(labels) is expected


# --- node selectors ---------------------------------------------------------------------------


def node(name, **labels):
    return {"metadata": {"name": name, "labels": labels}}


def test_node_selector_terms_are_ored_and_expressions_anded():
    ns = NodeSelector(
        {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {"key": "zone", "operator": "In", "values": ["a", "b"]},
                        {"key": "cores", "operator": "Gt", "values": ["4"]},
                    ]
                },
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["special"]}]},
            ]
        }
    )
    assert ns.matches(node("n1", zone="a", cores="8"))
    assert not ns.matches(node("n2", zone="a", cores="4"))
    assert not ns.matches(node("n3", zone="c", cores="8"))
    assert ns.matches(node("special"))
    assert not ns.errors


def test_empty_terms_match_nothing():
    assert not NodeSelector({"nodeSelectorTerms": []}).matches(node("n", a="b"))
    assert not NodeSelector({"nodeSelectorTerms": [{}]}).matches(node("n", a="b"))
    assert not node_selector_term_matches({"matchExpressions": []}, node("n"))


def test_match_fields_not_in_and_lt_and_does_not_exist():
    term = {
        "matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["bad"]}],
        "matchExpressions": [
            {"key": "gen", "operator": "Lt", "values": ["3"]},
            {"key": "tainted", "operator": "DoesNotExist"},
        ],
    }
    assert node_selector_term_matches(term, node("good", gen="2"))
    assert not node_selector_term_matches(term, node("bad", gen="2"))
    assert not node_selector_term_matches(term, node("good", gen="3"))
    assert not node_selector_term_matches(term, node("good", gen="1", tainted="yes"))


def test_invalid_terms_never_match_but_valid_ones_still_do():
    ns = NodeSelector(
        {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.labels", "operator": "In", "values": ["x"]}]},
                {"matchExpressions": [{"key": "zone", "operator": "Near", "values": ["a"]}]},
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
            ]
        }
    )
    assert len(ns.errors) == 2
    assert 'Unsupported value: "metadata.labels"' in ns.errors[0]
    assert ns.matches(node("x", zone="a"))
    assert not ns.matches(node("x", zone="b"))


# --- field selectors --------------------------------------------------------------------------

POD = {
    "kind": "Pod",
    "metadata": {"name": "web-1", "namespace": "default"},
    "spec": {"nodeName": "node-1", "schedulerName": "default-scheduler"},
    "status": {"phase": "Running", "podIPs": [{"ip": "10.0.0.1"}]},
}


def test_describe_node_pod_selector():
    sel = parse_field_selector("spec.nodeName=node-1,status.phase!=Succeeded,status.phase!=Failed")
    assert sel.matches(POD)
    done = {**POD, "status": {"phase": "Succeeded"}}
    assert not sel.matches(done)
    other = {**POD, "spec": {"nodeName": "node-2"}}
    assert not sel.matches(other)


def test_missing_fields_read_as_empty_string():
    pending = {"kind": "Pod", "metadata": {"name": "p"}, "spec": {}}
    assert parse_field_selector("spec.nodeName=").matches(pending)
    assert not parse_field_selector("spec.nodeName!=").matches(pending)
    assert field_value(pending, "status.phase") == ""


def test_kind_specific_zero_values_and_aliases():
    assert field_value({"kind": "Node", "metadata": {"name": "n"}}, "spec.unschedulable") == "false"
    assert field_value({"kind": "Node", "spec": {"unschedulable": True}}, "spec.unschedulable") == "true"
    assert field_value({"kind": "Pod"}, "spec.hostNetwork") == "false"
    event = {"kind": "Event", "source": {"component": "kubelet"}, "involvedObject": {"name": "web-1"}}
    assert field_value(event, "source") == "kubelet"
    assert parse_field_selector("involvedObject.name=web-1,source=kubelet").matches(event)
    assert field_value({"kind": "ReplicaSet"}, "status.replicas") == "0"
    assert field_value(POD, "status.podIPs") == "10.0.0.1"


def test_double_equals_and_order_and_escapes():
    sel = parse_field_selector("metadata.namespace==default,metadata.name=web-1")
    assert sel.to_string() == "metadata.name=web-1,metadata.namespace=default"
    assert sel.requires_exact("metadata.name") == "web-1"
    assert sel.matches(POD)
    escaped = parse_field_selector(r"metadata.name=a\,b\=c\\d")
    assert escaped.terms[0].value == "a,b=c\\d"
    assert parse_field_selector(escaped.to_string()) == escaped


def test_custom_getter():
    sel = parse_field_selector("x=1")
    assert sel.matches({}, getter=lambda o, p: "1")
    assert not sel.matches({}, getter=lambda o, p: "2")


@pytest.mark.parametrize(
    ("text", "message", "position"),
    [
        ("metadata.name", "invalid selector: 'metadata.name'; can't understand 'metadata.name'", 0),
        ("a=b,c", "invalid selector: 'a=b,c'; can't understand 'c'", 4),
        ("a=b=c", "invalid field selector: unescaped character in value: '='", 3),
        ("a=b\\x", "invalid field selector: invalid escape sequence: \\x", 3),
    ],
)
def test_field_selector_parse_errors(text, message, position):
    with pytest.raises(SelectorError) as info:
        parse_field_selector(text)
    assert info.value.message == message
    assert info.value.position == position


def test_unsupported_field_labels_are_rejected_per_kind():
    parse_field_selector_for("Pod", "spec.nodeName=x,status.phase=Running")
    with pytest.raises(ValueError, match="^field label not supported: spec.containers$"):
        parse_field_selector_for("Pod", "spec.containers=x")
    parse_field_selector_for("ConfigMap", "metadata.name=x")
    with pytest.raises(ValueError, match="field label not supported: data"):
        parse_field_selector_for("ConfigMap", "data=x")
    parse_field_selector_for("Event", "involvedObject.uid=1,involvedObject.kind=Pod,type=Warning,reason=X")
