"""Label, node and field selectors with apimachinery's grammar and matching rules.

Selectors are parsed once into immutable, pre-compiled objects (parsing is cached per string)
because matching runs for every object on every watch event. Semantics follow upstream:

* ``!=`` / ``notin`` match objects *without* the label; ``in``/``=`` need it; ``gt``/``lt``
  compare label values as int64 and never match a missing or non-integer value.
* A label selector *dict* (``{matchLabels, matchExpressions}``) that is empty matches
  everything, while ``None`` matches nothing (LabelSelectorAsSelector).
* Node selector terms are ORed; an empty term matches nothing; ``matchFields`` supports only
  ``metadata.name`` with ``In``/``NotIn``. Invalid terms never match and are reported in
  ``errors``, as upstream's lazy-error node selector does.
* Field selectors compare the string form of a field; a missing field reads as ``""`` (or as
  the kind's zero value, e.g. ``spec.unschedulable=false``, where upstream always sets it).

Errors are :class:`SelectorError` (a ValueError) carrying upstream's message, the offending
input and, for string selectors, the 0-based position of the problem.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from kconsole.objects.names import is_qualified_name, is_valid_label_value

# Operators, spelled as upstream's selection.Operator values.
EQUALS = "="
DOUBLE_EQUALS = "=="
NOT_EQUALS = "!="
IN = "in"
NOT_IN = "notin"
EXISTS = "exists"
DOES_NOT_EXIST = "!"
GREATER_THAN = "gt"
LESS_THAN = "lt"

_BINARY_OPERATORS = (IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS, GREATER_THAN, LESS_THAN)
_ALL_OPERATORS = (IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS, EXISTS, DOES_NOT_EXIST, GREATER_THAN, LESS_THAN)
_INT64_RE = re.compile(r"[+-]?[0-9]+\Z")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class SelectorError(ValueError):
    """A selector that cannot be parsed or compiled. ``message`` is upstream's wording."""

    def __init__(self, message: str, text: str | None = None, position: int | None = None) -> None:
        where = f" (at position {position} of {text!r})" if position is not None and text is not None else ""
        super().__init__(message + where)
        self.message = message
        self.text = text
        self.position = position


def _parse_int64(s: str) -> int | None:
    if not _INT64_RE.match(s):
        return None
    v = int(s)
    return v if _INT64_MIN <= v <= _INT64_MAX else None


def _invalid(path: str, value: str, detail: str) -> str:
    return f'{path}: Invalid value: "{value}": {detail}'


# --- label requirements -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Requirement:
    """One ``key op values`` clause. Build with :func:`new_requirement` to get upstream's checks."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op in (IN, EQUALS, DOUBLE_EQUALS):
            v = labels.get(self.key)
            return v is not None and v in self.values
        if op in (NOT_IN, NOT_EQUALS):
            v = labels.get(self.key)
            return v is None or v not in self.values
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        v = labels.get(self.key)
        if v is None:
            return False
        have = _parse_int64(v)
        if have is None:
            return False
        want = int(self.values[0])
        return have > want if op == GREATER_THAN else have < want

    def __str__(self) -> str:
        op = self.operator
        if op == EXISTS:
            return self.key
        if op == DOES_NOT_EXIST:
            return "!" + self.key
        vals = ",".join(sorted(self.values)) if len(self.values) > 1 else (self.values[0] if self.values else "")
        if op in (IN, NOT_IN):
            return f"{self.key} {op} ({vals})"
        sym = {GREATER_THAN: ">", LESS_THAN: "<"}.get(op, op)
        return f"{self.key}{sym}{vals}"


def new_requirement(key: str, operator: str, values: Iterable[str] = ()) -> Requirement:
    """upstream labels.NewRequirement: validates the key, the operator's arity and every value."""
    vals = list(values)
    errs: list[str] = []
    key_errs = is_qualified_name(key)
    if key_errs:
        errs.append(_invalid("key", key, "; ".join(key_errs)))
    if operator in (IN, NOT_IN):
        if not vals:
            errs.append(f"values: Invalid value: {vals}: for 'in', 'notin' operators, values set can't be empty")
    elif operator in (EQUALS, DOUBLE_EQUALS, NOT_EQUALS):
        if len(vals) != 1:
            errs.append(f"values: Invalid value: {vals}: exact-match compatibility requires one single value")
    elif operator in (EXISTS, DOES_NOT_EXIST):
        if vals:
            errs.append(f"values: Invalid value: {vals}: values set must be empty for exists and does not exist")
    elif operator in (GREATER_THAN, LESS_THAN):
        if len(vals) != 1:
            errs.append(f"values: Invalid value: {vals}: for 'Gt', 'Lt' operators, exactly one value is required")
        for i, v in enumerate(vals):
            if _parse_int64(v) is None:
                errs.append(_invalid(f"values[{i}]", v, "for 'Gt', 'Lt' operators, the value must be an integer"))
    else:
        supported = ", ".join(f'"{op}"' for op in _ALL_OPERATORS)
        errs.append(f'operator: Unsupported value: "{operator}": supported values: {supported}')
    for i, v in enumerate(vals):
        v_errs = is_valid_label_value(v)
        if v_errs:
            errs.append(_invalid(f"values[{i}][{key}]", v, "; ".join(v_errs)))
    if errs:
        raise SelectorError(errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]")
    if operator in (IN, NOT_IN):
        vals = sorted(set(vals))
    return Requirement(key, operator, tuple(vals))


# --- label selectors ----------------------------------------------------------------------------


def _compile(reqs: tuple[Requirement, ...]) -> Callable[[Mapping[str, str]], bool]:
    """One closure per selector: equality-only selectors (the common case) become a tight loop."""
    if all(r.operator in (EQUALS, DOUBLE_EQUALS) for r in reqs):
        pairs = tuple((r.key, r.values[0]) for r in reqs)

        def match_eq(labels: Mapping[str, str]) -> bool:
            get = labels.get
            for k, v in pairs:
                if get(k) != v:
                    return False
            return True

        return match_eq
    checks = tuple(r.matches for r in reqs)

    def match_all(labels: Mapping[str, str]) -> bool:
        for check in checks:
            if not check(labels):
                return False
        return True

    return match_all


class LabelSelector:
    """An immutable, pre-compiled set of requirements (ANDed), sorted by key as upstream."""

    __slots__ = ("requirements", "nothing", "_match")

    def __init__(self, requirements: Iterable[Requirement] = (), nothing: bool = False) -> None:
        self.requirements: tuple[Requirement, ...] = tuple(sorted(requirements, key=lambda r: r.key))
        self.nothing = nothing
        self._match = _compile(self.requirements)

    @property
    def empty(self) -> bool:
        """Selects everything (upstream Selector.Empty)."""
        return not self.requirements and not self.nothing

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self.nothing:
            return False
        return self._match(labels or {})

    def matches_object(self, obj: Mapping[str, Any]) -> bool:
        return self.matches((obj.get("metadata") or {}).get("labels"))

    def to_string(self) -> str:
        return ",".join(str(r) for r in self.requirements)

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        return "LabelSelector(<nothing>)" if self.nothing else f"LabelSelector({self.to_string()!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, LabelSelector)
            and self.nothing == other.nothing
            and self.requirements == other.requirements
        )

    def __hash__(self) -> int:
        return hash((self.requirements, self.nothing))

    def requires_exact(self, key: str) -> str | None:
        """The value ``key`` must equal (``key=v`` or ``key in (v)``), for index lookups; else None."""
        for r in self.requirements:
            if r.key == key and r.operator in (EQUALS, DOUBLE_EQUALS, IN) and len(r.values) == 1:
                return r.values[0]
        return None


EVERYTHING = LabelSelector()
NOTHING = LabelSelector(nothing=True)


def selector_from_set(labels: Mapping[str, str] | None) -> LabelSelector:
    """``{"app": "web"}`` -> ``app=web`` (upstream SelectorFromSet, validated)."""
    if not labels:
        return EVERYTHING
    return LabelSelector(new_requirement(k, EQUALS, [v]) for k, v in labels.items())


def from_label_selector_dict(spec: Mapping[str, Any] | None) -> LabelSelector:
    """metav1.LabelSelector dict -> selector: ``None`` matches nothing, ``{}`` matches everything."""
    if spec is None:
        return NOTHING
    match_labels = spec.get("matchLabels") or {}
    exprs = spec.get("matchExpressions") or []
    if not match_labels and not exprs:
        return EVERYTHING
    reqs = [new_requirement(k, EQUALS, [v]) for k, v in match_labels.items()]
    ops = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST}
    for expr in exprs:
        op = ops.get(expr.get("operator"))  # type: ignore[arg-type]
        if op is None:
            raise SelectorError(f'"{expr.get("operator")}" is not a valid label selector operator')
        reqs.append(new_requirement(expr.get("key") or "", op, expr.get("values") or []))
    return LabelSelector(reqs)


# --- the string grammar -------------------------------------------------------------------------

_T_ID, _T_END, _T_COMMA, _T_OPEN, _T_CLOSE, _T_NOT = "id", "end", ",", "(", ")", "!"
_T_EQ, _T_DEQ, _T_NEQ, _T_GT, _T_LT, _T_IN, _T_NOTIN, _T_ERR = "=", "==", "!=", ">", "<", "in", "notin", "err"
_SPECIAL = frozenset("=!(),><")
_SYMBOLS = {")": _T_CLOSE, ",": _T_COMMA, "!": _T_NOT, "==": _T_DEQ, "=": _T_EQ, ">": _T_GT, "<": _T_LT,
            "!=": _T_NEQ, "(": _T_OPEN}


def _lex(text: str) -> list[tuple[str, str, int]]:
    tokens: list[tuple[str, str, int]] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in " \t\r\n":
            i += 1
        if i >= n:
            tokens.append((_T_END, "", n))
            return tokens
        start = i
        if text[i] in _SPECIAL:
            buf = text[i]
            i += 1
            while i < n and text[i] in _SPECIAL and (buf + text[i]) in _SYMBOLS:
                buf += text[i]
                i += 1
            tok = _SYMBOLS.get(buf)
            tokens.append((tok, buf, start) if tok else (_T_ERR, buf, start))
            continue
        while i < n and text[i] not in _SPECIAL and text[i] not in " \t\r\n":
            i += 1
        word = text[start:i]
        tokens.append((_T_IN if word == "in" else _T_NOTIN if word == "notin" else _T_ID, word, start))


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _lex(text)
        self.pos = 0

    def _fail(self, message: str, position: int) -> SelectorError:
        return SelectorError(message, self.text, position)

    def lookahead(self, values: bool = True) -> tuple[str, str, int]:
        tok, lit, at = self.tokens[self.pos]
        if values and tok in (_T_IN, _T_NOTIN):
            tok = _T_ID
        return tok, lit, at

    def consume(self, values: bool = True) -> tuple[str, str, int]:
        t = self.lookahead(values)
        if self.pos < len(self.tokens) - 1:
            self.pos += 1
        return t

    def parse(self) -> list[Requirement]:
        reqs: list[Requirement] = []
        while True:
            tok, lit, at = self.lookahead()
            if tok in (_T_ID, _T_NOT):
                reqs.append(self.requirement())
                t, lit2, at2 = self.consume()
                if t == _T_END:
                    return reqs
                if t == _T_COMMA:
                    t3, lit3, at3 = self.lookahead()
                    if t3 not in (_T_ID, _T_NOT):
                        raise self._fail(f"found '{lit3}', expected: identifier after ','", at3)
                    continue
                raise self._fail(f"found '{lit2}', expected: ',' or 'end of string'", at2)
            if tok == _T_END:
                return reqs
            raise self._fail(f"found '{lit}', expected: !, identifier, or 'end of string'", at)

    def requirement(self) -> Requirement:
        _, _, start = self.lookahead()
        operator = None
        tok, key, at = self.consume()
        if tok == _T_NOT:
            operator = DOES_NOT_EXIST
            tok, key, at = self.consume()
        if tok != _T_ID:
            raise self._fail(f"unable to parse requirement: found '{key}', expected: identifier", at)
        if operator is None and self.lookahead()[0] in (_T_END, _T_COMMA):
            operator = EXISTS
        if operator is None:
            tok, lit, op_at = self.consume(values=False)
            operator = {_T_IN: IN, _T_NOTIN: NOT_IN, _T_EQ: EQUALS, _T_DEQ: DOUBLE_EQUALS, _T_NEQ: NOT_EQUALS,
                        _T_GT: GREATER_THAN, _T_LT: LESS_THAN}.get(tok)
            if operator is None:
                raise self._fail(
                    f"unable to parse requirement: found '{lit}', expected: {', '.join(_BINARY_OPERATORS)}", op_at
                )
            values = self.set_values() if operator in (IN, NOT_IN) else self.exact_value()
        else:
            values = []
        try:
            return new_requirement(key, operator, values)
        except SelectorError as e:
            raise self._fail("unable to parse requirement: " + e.message, start) from None

    def set_values(self) -> list[str]:
        tok, lit, at = self.consume()
        if tok != _T_OPEN:
            raise self._fail(f"unable to parse requirement: found '{lit}' expected: '('", at)
        tok, lit, at = self.lookahead()
        if tok == _T_CLOSE:
            self.consume()
            return [""]
        if tok not in (_T_ID, _T_COMMA):
            raise self._fail(f"unable to parse requirement: found '{lit}', expected: ',', ')' or identifier", at)
        values: list[str] = []
        while True:
            tok, lit, at = self.consume()
            if tok == _T_ID:
                values.append(lit)
                t2, l2, a2 = self.lookahead()
                if t2 == _T_COMMA:
                    continue
                if t2 == _T_CLOSE:
                    break
                raise self._fail(f"unable to parse requirement: found '{l2}', expected: ',' or ')'", a2)
            elif tok == _T_COMMA:
                if not values:
                    values.append("")
                t2, _, _ = self.lookahead()
                if t2 == _T_CLOSE:
                    values.append("")
                    break
                if t2 == _T_COMMA:
                    self.consume()
                    values.append("")
            else:
                raise self._fail(f"unable to parse requirement: found '{lit}', expected: ',', or identifier", at)
        self.consume()
        return values

    def exact_value(self) -> list[str]:
        tok, lit, at = self.lookahead()
        if tok in (_T_END, _T_COMMA):
            return [""]
        tok, lit, at = self.consume()
        if tok == _T_ID:
            return [lit]
        raise self._fail(f"unable to parse requirement: found '{lit}', expected: identifier", at)


@lru_cache(maxsize=2048)
def parse_label_selector(text: str) -> LabelSelector:
    """``a=b,c!=d,e in (x,y),f notin (z),g,!h,n>5`` -> :class:`LabelSelector`; ``""`` selects everything."""
    if not text or not text.strip():
        return EVERYTHING
    return LabelSelector(_Parser(text).parse())


# --- node selectors -----------------------------------------------------------------------------

_NODE_OPS = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST,
             "Gt": GREATER_THAN, "Lt": LESS_THAN}


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    """One compiled term: label requirements ANDed with ``metadata.name`` field requirements."""

    labels: LabelSelector | None
    name_in: tuple[tuple[str, bool], ...] = ()  # (name, must_equal)
    errors: tuple[str, ...] = ()

    def matches(self, node_labels: Mapping[str, str], node_name: str) -> bool:
        if self.errors:
            return False
        if self.labels is not None and not self.labels.matches(node_labels):
            return False
        if node_name:
            for want, equal in self.name_in:
                if (node_name == want) != equal:
                    return False
        return True


def compile_node_selector_term(term: Mapping[str, Any], path: str = "") -> NodeSelectorTerm:
    errors: list[str] = []
    label_sel: LabelSelector | None = None
    exprs = term.get("matchExpressions") or []
    if exprs:
        reqs = []
        for i, expr in enumerate(exprs):
            p = f"{path}matchExpressions[{i}]"
            op = _NODE_OPS.get(expr.get("operator"))  # type: ignore[arg-type]
            if op is None:
                errors.append(f'{p}.operator: Invalid value: "{expr.get("operator")}": not a valid selector operator')
                continue
            try:
                reqs.append(new_requirement(expr.get("key") or "", op, expr.get("values") or []))
            except SelectorError as e:
                errors.append(f"{p}: {e.message}")
        label_sel = LabelSelector(reqs)
    names: list[tuple[str, bool]] = []
    for i, req in enumerate(term.get("matchFields") or []):
        p = f"{path}matchFields[{i}]"
        if req.get("key") != "metadata.name":
            errors.append(f'{p}.key: Unsupported value: "{req.get("key")}": supported values: "metadata.name"')
        vals = req.get("values") or []
        if len(vals) != 1:
            errors.append(f"{p}.values: Invalid value: {vals}: must have one element")
        op = req.get("operator")
        if op not in ("In", "NotIn"):
            errors.append(f'{p}.operator: Unsupported value: "{op}": supported values: "In", "NotIn"')
        if vals:
            names.append((vals[0], op == "In"))
    return NodeSelectorTerm(label_sel, tuple(names), tuple(errors))


class NodeSelector:
    """Compiled ``v1.NodeSelector``: matches when any valid, non-empty term matches."""

    __slots__ = ("terms", "errors")

    def __init__(self, spec: Mapping[str, Any] | None) -> None:
        terms = []
        errors: list[str] = []
        for i, term in enumerate((spec or {}).get("nodeSelectorTerms") or []):
            if not term or (not term.get("matchExpressions") and not term.get("matchFields")):
                continue
            compiled = compile_node_selector_term(term, f"nodeSelectorTerms[{i}].")
            errors.extend(compiled.errors)
            terms.append(compiled)
        self.terms: tuple[NodeSelectorTerm, ...] = tuple(terms)
        self.errors: tuple[str, ...] = tuple(errors)

    def matches(self, node: Mapping[str, Any]) -> bool:
        meta = node.get("metadata") or {}
        node_labels = meta.get("labels") or {}
        node_name = meta.get("name") or ""
        return any(t.matches(node_labels, node_name) for t in self.terms)


def node_selector_term_matches(term: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
    """One term against a node (preferred scheduling terms are scored term by term)."""
    if not term or (not term.get("matchExpressions") and not term.get("matchFields")):
        return False
    meta = node.get("metadata") or {}
    return compile_node_selector_term(term).matches(meta.get("labels") or {}, meta.get("name") or "")


# --- field selectors ----------------------------------------------------------------------------

#: Field selector paths each kind supports (upstream's per-type GetAttrs / conversion funcs).
SUPPORTED_FIELDS: dict[str, frozenset[str]] = {
    "Pod": frozenset({
        "metadata.name", "metadata.namespace", "spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
        "spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP", "status.podIPs",
        "status.nominatedNodeName",
    }),
    "Event": frozenset({
        "metadata.name", "metadata.namespace", "involvedObject.kind", "involvedObject.namespace",
        "involvedObject.name", "involvedObject.uid", "involvedObject.apiVersion",
        "involvedObject.resourceVersion", "involvedObject.fieldPath", "reason", "reportingComponent",
        "source", "type",
    }),
    "Node": frozenset({"metadata.name", "spec.unschedulable"}),
    "Namespace": frozenset({"metadata.name", "status.phase"}),
    "Secret": frozenset({"metadata.name", "metadata.namespace", "type"}),
    "ReplicaSet": frozenset({"metadata.name", "metadata.namespace", "status.replicas"}),
    "ReplicationController": frozenset({"metadata.name", "metadata.namespace", "status.replicas"}),
    "Job": frozenset({"metadata.name", "metadata.namespace", "status.successful"}),
    "CertificateSigningRequest": frozenset({"metadata.name", "spec.signerName"}),
    "PersistentVolume": frozenset({"metadata.name"}),
    "PersistentVolumeClaim": frozenset({"metadata.name", "metadata.namespace"}),
}
_DEFAULT_FIELDS = frozenset({"metadata.name", "metadata.namespace"})

#: Fields whose value is not a plain dotted path, or whose zero value upstream always prints.
_SPECIAL_FIELDS: dict[tuple[str, str], tuple[tuple[str, ...], str]] = {
    ("Event", "source"): (("source", "component"), ""),
    ("Node", "spec.unschedulable"): (("spec", "unschedulable"), "false"),
    ("Pod", "spec.hostNetwork"): (("spec", "hostNetwork"), "false"),
    ("ReplicaSet", "status.replicas"): (("status", "replicas"), "0"),
    ("ReplicationController", "status.replicas"): (("status", "replicas"), "0"),
    ("Job", "status.successful"): (("status", "succeeded"), "0"),
}


def supported_fields(kind: str) -> frozenset[str]:
    return SUPPORTED_FIELDS.get(kind, _DEFAULT_FIELDS)


def _as_field_string(v: Any, default: str) -> str:
    if v is None:
        return default
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return v
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, list) and all(isinstance(x, dict) and "ip" in x for x in v):
        return ",".join(x["ip"] for x in v)
    return str(v)


@lru_cache(maxsize=1024)
def _resolver(kind: str, path: str) -> Callable[[Mapping[str, Any]], str]:
    parts, default = _SPECIAL_FIELDS.get((kind, path), (tuple(path.split(".")), ""))
    if len(parts) == 2:
        outer, inner = parts

        def get2(obj: Mapping[str, Any]) -> str:
            mid = obj.get(outer)
            if type(mid) is not dict and not isinstance(mid, Mapping):
                return default
            v = mid.get(inner)
            if type(v) is str:
                return v
            return _as_field_string(v, default)

        return get2

    def get(obj: Mapping[str, Any]) -> str:
        cur: Any = obj
        for p in parts:
            if not isinstance(cur, Mapping):
                return default
            cur = cur.get(p)
            if cur is None:
                return default
        return _as_field_string(cur, default)

    return get


def field_value(obj: Mapping[str, Any], path: str, kind: str | None = None) -> str:
    """String value of a field selector path on ``obj``: ``""`` (or the kind's zero) when absent."""
    return _resolver(kind if kind is not None else obj.get("kind") or "", path)(obj)


def escape_field_value(v: str) -> str:
    return v.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def _unescape_field_value(v: str, text: str, at: int) -> str:
    if "\\" not in v and "," not in v and "=" not in v:
        return v
    out: list[str] = []
    slash = False
    for i, c in enumerate(v):
        if slash:
            if c not in "\\,=":
                raise SelectorError(f"invalid field selector: invalid escape sequence: \\{c}", text, at + i - 1)
            out.append(c)
            slash = False
        elif c == "\\":
            slash = True
        elif c in ",=":
            raise SelectorError(f"invalid field selector: unescaped character in value: {c!r}", text, at + i)
        else:
            out.append(c)
    if slash:
        raise SelectorError("invalid field selector: invalid escape sequence: \\", text, at + len(v) - 1)
    return "".join(out)


@dataclass(frozen=True, slots=True)
class FieldTerm:
    field: str
    operator: str  # "=" (also for "==") or "!="
    value: str

    def __str__(self) -> str:
        return f"{self.field}{self.operator}{escape_field_value(self.value)}"


@dataclass(frozen=True)
class FieldSelector:
    """ANDed ``field=value`` / ``field!=value`` terms, in upstream's (sorted) order."""

    terms: tuple[FieldTerm, ...] = ()
    _compiled: dict[str, tuple[tuple[Callable[[Mapping[str, Any]], str], str, bool], ...]] = field(
        default_factory=dict, compare=False, repr=False
    )

    @property
    def empty(self) -> bool:
        return not self.terms

    def fields(self) -> list[str]:
        return [t.field for t in self.terms]

    def _for_kind(self, kind: str) -> tuple[tuple[Callable[[Mapping[str, Any]], str], str, bool], ...]:
        compiled = self._compiled.get(kind)
        if compiled is None:
            compiled = tuple((_resolver(kind, t.field), t.value, t.operator == "=") for t in self.terms)
            self._compiled[kind] = compiled
        return compiled

    def matches(
        self,
        obj: Mapping[str, Any],
        getter: Callable[[Mapping[str, Any], str], str] | None = None,
        kind: str | None = None,
    ) -> bool:
        """Whether ``obj`` satisfies every term. ``getter(obj, path)`` overrides field lookup."""
        if getter is not None:
            return all((getter(obj, t.field) == t.value) == (t.operator == "=") for t in self.terms)
        compiled = self._compiled.get(kind if kind is not None else obj.get("kind") or "")
        if compiled is None:
            compiled = self._for_kind(kind if kind is not None else obj.get("kind") or "")
        for get, want, equal in compiled:
            if (get(obj) == want) is not equal:
                return False
        return True

    def requires_exact(self, path: str) -> str | None:
        """The value ``path`` must equal (``metadata.name=x``), for index lookups; else None."""
        for t in self.terms:
            if t.field == path and t.operator == "=":
                return t.value
        return None

    def check_supported(self, kind: str) -> None:
        """Raises upstream's ``field label not supported: X`` for the first unsupported path."""
        allowed = supported_fields(kind)
        for t in self.terms:
            if t.field not in allowed:
                raise SelectorError(f"field label not supported: {t.field}")

    def to_string(self) -> str:
        return ",".join(str(t) for t in self.terms)

    def __str__(self) -> str:
        return self.to_string()


def _split_terms(text: str) -> list[tuple[str, int]]:
    terms: list[tuple[str, int]] = []
    start = 0
    slash = False
    for i, c in enumerate(text):
        if slash:
            slash = False
        elif c == "\\":
            slash = True
        elif c == ",":
            terms.append((text[start:i], start))
            start = i + 1
    terms.append((text[start:], start))
    return terms


@lru_cache(maxsize=2048)
def parse_field_selector(text: str) -> FieldSelector:
    """``a=b,c!=d,e==f`` -> :class:`FieldSelector`; values may escape ``\\``, ``,`` and ``=``."""
    if not text:
        return FieldSelector()
    terms: list[FieldTerm] = []
    for part, at in sorted(_split_terms(text)):
        if part == "":
            continue
        for i in range(len(part)):
            if part.startswith("!=", i):
                lhs, op, rhs, rhs_at = part[:i], "!=", part[i + 2:], at + i + 2
                break
            if part.startswith("==", i):
                lhs, op, rhs, rhs_at = part[:i], "=", part[i + 2:], at + i + 2
                break
            if part[i] == "=":
                lhs, op, rhs, rhs_at = part[:i], "=", part[i + 1:], at + i + 1
                break
        else:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{part}'", text, at)
        terms.append(FieldTerm(lhs, op, _unescape_field_value(rhs, text, rhs_at)))
    return FieldSelector(tuple(terms))


def parse_field_selector_for(kind: str, text: str) -> FieldSelector:
    """Parses and rejects paths ``kind`` does not support, as the API server does."""
    sel = parse_field_selector(text)
    sel.check_supported(kind)
    return sel
