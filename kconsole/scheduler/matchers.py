"""Label and node selectors as plain predicates for the scheduler's hot loops.

The scheduler evaluates the same selector against thousands of label sets per pod, so each
selector is compiled once, when a pod or node enters the cache, into a callable. The compiling
is :mod:`kconsole.objects.selectors`' (parsing, validation and matching rules are upstream's and
shared with the API server); this module only hands out its match functions in the two shapes
the plugins call: ``(labels) -> bool`` and, for node terms that may match ``metadata.name``,
``(labels, node name) -> bool``. As upstream's lazy-error node selector, an invalid node
selector term never matches.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kconsole.objects.selectors import (
    NodeSelector,
    NodeSelectorTerm,
    compile_node_selector_term,
    from_label_selector_dict,
    selector_from_set,
)

Labels = Mapping[str, str]
LabelPredicate = Callable[[Labels], bool]
#: A node predicate takes (labels, node name) because node terms may match ``metadata.name``.
NodePredicate = Callable[[Labels, str], bool]


def _always(_labels: Labels) -> bool:
    return True


def _never_node(_labels: Labels, _name: str) -> bool:
    return False


def label_selector(spec: Mapping[str, Any] | None) -> LabelPredicate:
    """A ``{matchLabels, matchExpressions}`` selector; ``None`` matches nothing, ``{}`` everything."""
    sel = from_label_selector_dict(spec)
    return _always if sel.empty else sel.matches


def match_labels_selector(match: Mapping[str, str] | None) -> LabelPredicate:
    """The plain ``key: value`` map form (pod ``nodeSelector``, Service selectors)."""
    sel = selector_from_set(match)
    return _always if sel.empty else sel.matches


def _term_predicate(term: NodeSelectorTerm) -> NodePredicate:
    if term.errors:
        return _never_node
    if not term.name_in and term.labels is not None:
        labels_match = term.labels.matches
        return lambda labels, name: labels_match(labels)
    return term.matches


def node_selector_terms(terms: list[Mapping[str, Any]] | None) -> NodePredicate:
    """``nodeSelectorTerms``: any term may match; a term without requirements matches nothing."""
    compiled = [_term_predicate(t) for t in NodeSelector({"nodeSelectorTerms": terms or []}).terms]
    if not compiled:
        return _never_node
    if len(compiled) == 1:
        return compiled[0]
    return lambda labels, name: any(p(labels, name) for p in compiled)


def affinity_node_names(terms: list[Mapping[str, Any]] | None) -> frozenset[str] | None:
    """The only nodes required ``nodeSelectorTerms`` allow by ``metadata.name In`` (upstream
    NodeAffinity's PreFilterResult, what every DaemonSet pod carries): the union over the terms of
    each term's intersection; None when some term does not name nodes (any node may match)."""
    names: set[str] = set()
    for term in terms or ():
        term_names: set[str] | None = None
        for req in (term.get("matchFields") if isinstance(term, Mapping) else None) or ():
            if isinstance(req, Mapping) and req.get("key") == "metadata.name" and req.get("operator") == "In":
                values = {str(v) for v in req.get("values") or ()}
                term_names = values if term_names is None else term_names & values
        if term_names is None:
            return None
        names |= term_names
    return frozenset(names) if terms else None


def node_selector_term(term: Mapping[str, Any]) -> NodePredicate:
    """One preferred-scheduling term's ``preference``."""
    if not term or (not term.get("matchExpressions") and not term.get("matchFields")):
        return _never_node
    return _term_predicate(compile_node_selector_term(term))
