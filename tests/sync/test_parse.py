"""Manifest parsing: documents round-trip, and every problem points at a line and column."""

from __future__ import annotations

import json

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kconsole.sync import parse_text

names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", max_size=12).map(lambda s: "n" + s)
values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(names, inner, max_size=3),
                      max_leaves=4)
objects = st.builds(lambda kind, name, data: {"apiVersion": "v1", "kind": kind, "metadata": {"name": name},
                                              "data": data},
                    st.sampled_from(["ConfigMap", "Secret", "Widget"]), names, st.dictionaries(names, values,
                                                                                               max_size=4))


@settings(max_examples=20, deadline=None)
@given(st.lists(objects, min_size=1, max_size=3), st.booleans())
def test_documents_round_trip_with_their_start_lines(objs: list[dict], as_list: bool) -> None:
    if as_list:
        text = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objs}, sort_keys=False)
    else:
        text = yaml.safe_dump_all(objs, sort_keys=False, explicit_start=True)
    parsed = parse_text(text, "f.yaml")
    assert parsed.errors == []
    assert [d.obj for d in parsed.documents] == objs
    lines = text.splitlines()
    for doc in parsed.documents:
        first = lines[doc.position.line - 1][doc.position.column - 1:]
        assert first.startswith("apiVersion: v1")
        name_at = doc.locate("metadata.name")
        assert lines[name_at.line - 1][name_at.column - 1:].startswith("name:")


def test_json_is_parsed_with_field_positions_and_syntax_errors_located() -> None:
    text = json.dumps({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w"},
                       "spec": {"replicas": 1}}, indent=2)
    [doc] = parse_text(text, "d.json").documents
    pos = doc.locate("spec.replicas")
    assert (pos.line, pos.column) == (8, 5)
    [err] = parse_text('{\n  "kind": "ConfigMap",\n  "apiVersion" "v1"\n}', "d.json").errors
    assert (err.line, err.column, err.reason) == (3, 16, "JSONSyntax")


def test_shape_problems_name_the_field() -> None:
    cases = {
        "kind: ConfigMap\nmetadata: {name: a}\n": (1, 1, "no apiVersion"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels: {}\n": (3, 1, "metadata.name is required"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  generateName: a-\n": (4, 3, "generateName"),
        "apiVersion: v1\nkind: 7\nmetadata: {name: a}\n": (2, 1, "kind must be a non-empty string"),
        "- just\n- a list\n": (1, 1, "expected an object"),
        "apiVersion: v1\nkind: List\nitems: {}\n": (3, 8, "items must be a list"),
    }
    for text, (line, column, words) in cases.items():
        [err] = parse_text(text, "x.yaml").errors
        assert (err.line, err.column) == (line, column) and words in err.message, (text, err)


def test_empty_and_comment_only_documents_are_skipped() -> None:
    parsed = parse_text("# nothing yet\n---\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n",
                        "x.yaml")
    assert parsed.errors == [] and [d.key.name for d in parsed.documents] == ["a"]
    assert parse_text("", "x.json").documents == []


def test_alias_bombs_self_reference_and_deep_nesting_are_refused_before_anything_copies_them() -> None:
    laughs = ["apiVersion: v1", "kind: ConfigMap", "metadata:", "  name: lol", "  annotations:",
              "    a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    laughs += [f"    a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 8)]
    cases = {  # the problem, and where it is pointed at (after the first document's four lines)
        # go-yaml's rule trips at the alias whose expansion passes the allowed share (a3's first *a2).
        "\n".join(laughs) + "\n": ("excessive aliasing", 13, 24),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: &d {x: *d}\n": ("contains itself", 8, 14),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: " + "[" * 500 + "]" * 500 + "\n":
            ("deeper than", 8, 206),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels: {}\n  name: b\n":
            ('mapping key "name" already defined at line 8', 10, 3),
    }
    for text, (words, line, column) in cases.items():
        [err] = parse_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: first}\n---\n" + text, "x.yaml").errors
        assert (err.line, err.column, err.reason) == (line, column, "YAMLSyntax") and words in err.message, err
    deep = ('{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": '
            + "[" * 5000 + "]" * 5000 + "}")
    [err] = parse_text(deep, "x.json").errors
    assert "deeper than" in err.message
    twice = '{"apiVersion": "v1", "kind": "ConfigMap",\n "metadata": {"name": "a", "name": "b"}}'
    [err] = parse_text(twice, "x.json").errors
    assert (err.line, err.column) == (2, 28) and 'mapping key "name" already defined at line 2' in err.message
    # Aliases that expand modestly are ordinary YAML.
    shared = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: &l {app: web}}\ndata: *l\n"
    [doc] = parse_text(shared, "x.yaml").documents
    assert doc.obj["data"] == {"app": "web"}


def test_a_large_alias_free_file_is_not_excessive_aliasing() -> None:
    """Only values that come from aliases count against the aliasing limit: a million plain values
    are a big file, nothing more."""
    values = ",".join(["0"] * 1_000_001)
    parsed = parse_text(f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: big}}\nx: [{values}]\n", "big.yaml")
    assert parsed.errors == [] and len(parsed.documents[0].obj["x"]) == 1_000_001
