"""Label and node selectors compiled once into plain predicates for the scheduler's hot loops.

The scheduler evaluates the same selector against thousands of label sets per pod, so selectors
are compiled into closures when a pod or node enters the cache rather than re-read from the dict
form each time. Semantics are upstream's: an empty ``LabelSelector`` matches everything, a missing
one nothing; node selector terms are ORed, requirements inside a term ANDed, and an empty term
matches nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Labels = Mapping[str, str]
LabelPredicate = Callable[[Labels], bool]


def _always(_labels: Labels) -> bool:
    return True


def _never(_labels: Labels) -> bool:
    return False


def _requirement(key: str, op: str, values: list[str]) -> LabelPredicate:
    vals = frozenset(str(v) for v in values or ())
    if op == "In":
        return lambda labels: labels.get(key) in vals
    if op == "NotIn":
        return lambda labels: labels.get(key) not in vals
    if op == "Exists":
        return lambda labels: key in labels
    if op == "DoesNotExist":
        return lambda labels: key not in labels
    if op in ("Gt", "Lt"):
        if len(vals) != 1:
            raise ValueError(f"operator {op} needs exactly one value for key {key!r}")
        try:
            bound = int(next(iter(vals)))
        except ValueError:
            raise ValueError(f"operator {op} needs an integer value for key {key!r}") from None

        def compare(labels: Labels) -> bool:
            raw = labels.get(key)
            if raw is None:
                return False
            try:
                got = int(raw)
            except ValueError:
                return False
            return got > bound if op == "Gt" else got < bound

        return compare
    raise ValueError(f"unknown selector operator {op!r} for key {key!r}")


def _all_of(preds: list[LabelPredicate]) -> LabelPredicate:
    if not preds:
        return _always
    if len(preds) == 1:
        return preds[0]
    return lambda labels: all(p(labels) for p in preds)


def label_selector(spec: Mapping[str, Any] | None) -> LabelPredicate:
    """A ``{matchLabels, matchExpressions}`` selector; ``None`` matches nothing, ``{}`` everything."""
    if spec is None:
        return _never
    preds: list[LabelPredicate] = []
    match_labels = dict(spec.get("matchLabels") or {})
    if match_labels:
        items = tuple(match_labels.items())
        preds.append(lambda labels: all(labels.get(k) == v for k, v in items))
    for expr in spec.get("matchExpressions") or ():
        preds.append(_requirement(expr.get("key", ""), expr.get("operator", ""), expr.get("values") or []))
    return _all_of(preds)


def match_labels_selector(match: Mapping[str, str] | None) -> LabelPredicate:
    """The plain ``key: value`` map form (pod ``nodeSelector``, Service selectors)."""
    items = tuple((match or {}).items())
    if not items:
        return _always
    return lambda labels: all(labels.get(k) == v for k, v in items)


#: A node predicate takes (labels, node name) because node terms may match ``metadata.name``.
NodePredicate = Callable[[Labels, str], bool]


def _node_term(term: Mapping[str, Any]) -> NodePredicate | None:
    exprs = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not exprs and not fields:
        return None
    label_pred = _all_of([_requirement(e.get("key", ""), e.get("operator", ""), e.get("values") or []) for e in exprs])
    field_preds: list[LabelPredicate] = []
    for f in fields:
        if f.get("key") != "metadata.name":
            raise ValueError(f"matchFields supports only metadata.name, got {f.get('key')!r}")
        if f.get("operator") not in ("In", "NotIn"):
            raise ValueError(f"matchFields on metadata.name supports In and NotIn, got {f.get('operator')!r}")
        field_preds.append(_requirement("metadata.name", f["operator"], f.get("values") or []))
    field_pred = _all_of(field_preds)
    if not field_preds:
        return lambda labels, name: label_pred(labels)
    return lambda labels, name: label_pred(labels) and field_pred({"metadata.name": name})


def node_selector_terms(terms: list[Mapping[str, Any]] | None) -> NodePredicate:
    """``nodeSelectorTerms``: any term may match; a term without requirements matches nothing."""
    compiled = [p for p in (_node_term(t) for t in terms or ()) if p is not None]
    if not compiled:
        return lambda labels, name: False
    if len(compiled) == 1:
        return compiled[0]
    return lambda labels, name: any(p(labels, name) for p in compiled)


def node_selector_term(term: Mapping[str, Any]) -> NodePredicate:
    """One preferred-scheduling term's ``preference``."""
    pred = _node_term(term)
    return pred if pred is not None else (lambda labels, name: False)
