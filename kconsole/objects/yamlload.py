"""YAML documents loaded within upstream's limits, for every door YAML comes in by (HTTP bodies,
apply patches, the manifest folder).

A few hundred bytes of YAML can expand through aliases into gigabytes (a "billion laughs", the
CVE-2019-11253 class), and a deeply nested one crashes libyaml's recursive composer outright. So
before anything composes or constructs a document, :func:`check` walks its parse events once
(linear in the text, nothing expanded) and refuses:

- excessive aliasing, by go-yaml's own rule (sigs.k8s.io/yaml, which the API server and kubectl
  use): once past 1,000 decoded values of which more than 100 come from aliases, the share of
  alias-expanded values may be at most 99 % up to 400,000 values, falling linearly to 10 % at
  4,000,000. An alias-free document is never "excessive aliasing", however large;
- an expansion whose scalars add up to more than ``max_bytes`` (an HTTP body's expanded size stays
  within the request body limit: 413 rather than 400);
- nesting deeper than :data:`MAX_DEPTH` (alias expansions counted at the depth they land);
- a collection that contains itself through an alias.

PyYAML is the one import outside the standard library in ``objects``: the three doors above sit in
three layers, and each must apply the same rule.
"""

from __future__ import annotations

import base64
import math
from typing import Any

import yaml

_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class Loader(_Base):  # type: ignore[misc, valid-type]
    """libyaml's safe loader when PyYAML has it (several times faster; its messages are go-yaml's, a
    port), reading timestamps as the strings they are: Kubernetes converts YAML to JSON, where
    ``2024-01-01`` is a string, not a date."""

    yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in _Base.yaml_implicit_resolvers.items()
    }

#: Deeper documents are refused: Kubernetes objects nest a few dozen levels (a CRD's schema rarely
#: 50), and the recursive copies and encoders on the way (orjson stops at 254) would fail.
MAX_DEPTH = 200

#: go-yaml's decode-count range over which the allowed alias share falls from 99 % to 10 %.
_RATIO_LOW = 400_000
_RATIO_HIGH = 4_000_000


class LimitError(yaml.MarkedYAMLError):
    """A document past one of the limits; ``too_large``: its expansion exceeds ``max_bytes``."""

    def __init__(self, problem: str, mark: Any = None, *, too_large: bool = False) -> None:
        super().__init__(problem=problem, problem_mark=mark)
        self.too_large = too_large


def allowed_alias_ratio(decoded: int) -> float:
    """go-yaml's allowedAliasRatio: the share of decoded values that may come from aliases."""
    if decoded <= _RATIO_LOW:
        return 0.99
    if decoded >= _RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * ((decoded - _RATIO_LOW) / (_RATIO_HIGH - _RATIO_LOW))


class _Anchor:
    __slots__ = ("values", "nbytes", "depth")

    def __init__(self, values: int, nbytes: int, depth: int) -> None:
        self.values = values
        self.nbytes = nbytes
        self.depth = depth


def check(text: str | bytes, *, max_bytes: int | None = None, max_depth: int = MAX_DEPTH) -> bool:
    """Raise :class:`LimitError` (or PyYAML's syntax error) for a stream past the limits above;
    returns whether any document uses an alias (its constructed values then share objects)."""
    aliased = False
    anchors: dict[str, _Anchor] = {}
    # Open collections: [anchor, values before it, bytes before it, its depth, deepest level inside].
    stack: list[list[Any]] = []
    decoded = from_aliases = nbytes = 0
    for event in yaml.parse(text, Loader=Loader):
        kind = type(event)
        if kind is yaml.ScalarEvent:
            decoded += 1
            size = len(event.value)
            nbytes += size
            if event.anchor is not None:
                anchors[event.anchor] = _Anchor(1, size, 0)
        elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
            decoded += 1
            depth = len(stack) + 1
            if depth > max_depth:
                raise LimitError(f"document nests deeper than {max_depth} levels", event.start_mark)
            stack.append([event.anchor, decoded, nbytes, depth, depth])
        elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
            anchor, start, start_bytes, depth, deepest = stack.pop()
            if stack and deepest > stack[-1][4]:
                stack[-1][4] = deepest
            if anchor is not None:
                anchors[anchor] = _Anchor(decoded - start + 1, nbytes - start_bytes, deepest - depth + 1)
        elif kind is yaml.AliasEvent:
            aliased = True
            if any(entry[0] == event.anchor for entry in stack):
                raise LimitError("document contains itself through an alias", event.start_mark)
            target = anchors.get(event.anchor)
            if target is None:
                continue  # an undefined alias: the composer names it
            depth = len(stack) + target.depth
            if depth > max_depth:
                raise LimitError(f"document nests deeper than {max_depth} levels", event.start_mark)
            if stack and depth > stack[-1][4]:
                stack[-1][4] = depth
            decoded += target.values
            from_aliases += target.values
            nbytes += target.nbytes
            if from_aliases > 100 and decoded > 1000 and from_aliases / decoded > allowed_alias_ratio(decoded):
                raise LimitError("document contains excessive aliasing", event.start_mark)
        elif kind is yaml.DocumentStartEvent:
            anchors.clear()
            decoded = from_aliases = nbytes = 0
        if max_bytes is not None and nbytes > max_bytes:
            raise LimitError(f"document expands to more than {max_bytes} bytes", event.start_mark,
                             too_large=True)
    return aliased


def load(text: str | bytes, *, max_bytes: int | None = None) -> Any:
    """One document (None for an empty stream), checked first, as the JSON it stands for (YAML is
    converted to JSON upstream): keys are strings, an alias's value is a copy of its own (a change
    to one must not change another), and what JSON cannot hold (``.inf``, ``.nan``) is an error."""
    check(text, max_bytes=max_bytes)
    value = yaml.load(text, Loader=Loader)  # noqa: S506 - Loader is a safe loader
    return _as_json(value)


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    if isinstance(key, (int, float)):
        return str(key)
    raise yaml.YAMLError(f"a mapping key must be a scalar, got {type(key).__name__}")


def _as_json(value: Any) -> Any:
    """A fresh copy in JSON's types (recursion is bounded: :func:`check` limited the depth)."""
    if isinstance(value, dict):
        return {_key(k): _as_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_json(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        raise yaml.YAMLError(f"json: unsupported value: {value} (JSON has no infinities or NaN)")
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode()
    if isinstance(value, (set, tuple)):
        return [_as_json(v) for v in value]
    return value
