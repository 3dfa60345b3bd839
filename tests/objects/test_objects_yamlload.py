"""YAML within upstream's limits: go-yaml's alias-share rule, depth, self-reference, expanded size."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kconsole.objects import yamlload


def test_the_allowed_alias_share_is_go_yamls() -> None:
    assert yamlload.allowed_alias_ratio(1_000) == yamlload.allowed_alias_ratio(400_000) == 0.99
    assert yamlload.allowed_alias_ratio(4_000_000) == yamlload.allowed_alias_ratio(10**9) == 0.10
    assert yamlload.allowed_alias_ratio(2_200_000) == pytest.approx(0.99 - 0.89 * 0.5)


def _laughs(levels: int, width: int = 9) -> str:
    lines = [f"a0: &a0 [{', '.join(['lol'] * width)}]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def test_a_billion_laughs_is_refused_where_its_share_passes_the_limit() -> None:
    with pytest.raises(yamlload.LimitError) as err:
        yamlload.check(_laughs(9))
    assert err.value.problem == "document contains excessive aliasing" and not err.value.too_large
    assert err.value.problem_mark is not None and err.value.problem_mark.line == 3  # a3: the first past the share
    assert yamlload.check(_laughs(2)) is True  # 90 values from aliases: under go-yaml's 100-alias floor


def test_an_alias_free_document_is_never_excessive_aliasing() -> None:
    assert yamlload.check("x: [" + ",".join(["0"] * 50_000) + "]\n") is False


def test_depth_self_reference_and_expanded_size() -> None:
    with pytest.raises(yamlload.LimitError, match="deeper than 200"):
        yamlload.check("[" * 100_000 + "]" * 100_000)  # libyaml's composer would overflow the C stack
    with pytest.raises(yamlload.LimitError, match="deeper than 200"):
        yamlload.check("a: &a " + "[" * 150 + "]" * 150 + "\nb: " + "[" * 60 + "*a" + "]" * 60 + "\n")
    with pytest.raises(yamlload.LimitError, match="contains itself"):
        yamlload.check("a: &a {b: *a}\n")
    wide = f"a: &a {'y' * 1000}\n" + "".join(f"k{i}: *a\n" for i in range(20))
    with pytest.raises(yamlload.LimitError) as err:
        yamlload.check(wide, max_bytes=10_000)
    assert err.value.too_large
    assert yamlload.check(wide, max_bytes=30_000) is True


def test_each_document_of_a_stream_counts_on_its_own() -> None:
    doc = "a: &a [1, 2, 3]\nb: *a\n"
    assert yamlload.check("---\n".join([doc] * 5)) is True


def test_load_copies_what_aliases_share() -> None:
    value = yamlload.load("labels: &l {app: web}\nannotations: *l\n")
    assert value == {"labels": {"app": "web"}, "annotations": {"app": "web"}}
    assert value["labels"] is not value["annotations"]
    assert yamlload.load("") is None


_scalars = st.one_of(st.integers(), st.text(max_size=5), st.booleans(), st.none())
_docs = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.text(min_size=1, max_size=4), inner,
                                                                       max_size=4)), max_leaves=30)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(_docs)
def test_ordinary_documents_load_as_pyyaml_loads_them(doc: object) -> None:
    text = yaml.safe_dump(doc)
    assert yamlload.check(text) is False
    assert yamlload.load(text) == yaml.safe_load(text)
