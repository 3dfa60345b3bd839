"""Expectations: conditions over the cluster, read through the API client, with simulated-time bounds.

A condition is checked by :func:`observe`, which answers (held, what was seen). :class:`Watcher`
turns the answers, polled once per simulated second, into a verdict under ``within``, ``notBefore``
and ``stays``:

* it must hold at some poll no later than ``within`` (default 0: at once);
* it must not hold at a poll before ``notBefore``;
* once held, it must hold at every poll for ``stays``.

The verdict's text names what was expected, what was seen last, and the simulated time.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kconsole.api.crd.printers import compile_path, evaluate
from kconsole.client import Client, StatusError
from kconsole.drills.history import EventLog, Occurrence
from kconsole.drills.spec import Expectation
from kconsole.objects.duration import format_duration

Obj = dict[str, Any]


@dataclass(slots=True)
class Context:
    """What a condition may read: the API (as the drill's admin), and the recorded events."""

    client: Client
    events: EventLog
    step_mark: int  # index into events.occurrences where the step began
    #: For ``changes`` expectations (by id): the field's values read just before the step's action.
    baselines: dict[int, list[Any]] = field(default_factory=dict)
    #: The API server's request log (newest last) and the last sequence number before the step.
    requests: Callable[[], list[Any]] = list
    request_mark: int = 0
    #: The cluster's kube-proxy handles by node (component state, read as the console's `p` view reads it).
    proxies: Callable[[], dict[str, Any]] = dict


_QUOTED_KEY = re.compile(r"""\[(?:'([^']*)'|"([^"]*)")\]""")


def compile_field(path: str) -> list[tuple[str, Any]]:
    """kubectl's JSONPath subset (:func:`compile_path`) plus quoted keys: ``.status.used['requests.cpu']``."""
    steps: list[tuple[str, Any]] = []
    pos = 0
    for m in _QUOTED_KEY.finditer(path):
        if path[pos:m.start()]:
            steps.extend(compile_path(path[pos:m.start()]))
        steps.append(("key", m.group(1) if m.group(1) is not None else m.group(2)))
        pos = m.end()
    if path[pos:] or not steps:
        steps.extend(compile_path(path[pos:]))
    return steps


def when(seconds: float) -> str:
    """Simulated time since the run's boot, as a duration: ``1m35s``."""
    return format_duration(round(max(0.0, seconds), 3))


# --------------------------------------------------------------------------- describing


def describe(exp: Expectation) -> str:
    """The expectation in words: ``Pod demo/urgent .spec.nodeName equals "worker-1"``."""
    if exp.name:
        return exp.name
    c = exp.compare
    if exp.condition == "object":
        ref = _ref(exp.spec)
        field = f" {c['field']}" if "field" in c else ""
        if "equals" in c:
            return f"{ref}{field} equals {json.dumps(c['equals'])}"
        if "matches" in c:
            return f"{ref}{field} matches /{c['matches']}/"
        if "changes" in c:
            return f"{ref}{field} changes"
        return f"{ref}{field} {'exists' if c.get('exists') else 'does not exist'}"
    bounds = _bounds(c)
    if exp.condition == "count":
        s = exp.spec
        kind = s.get("kind", "Pod")
        parts = [f"in {s['namespace']}" if s.get("namespace") else "",
                 f"-l {s['selector']}" if s.get("selector") else "",
                 f"phase {s['phase']}" if s.get("phase") else "",
                 f"on {s['node'] or '(no node)'}" if "node" in s else "",
                 ("ready" if s["ready"] else "not ready") if "ready" in s else ""]
        return f"{bounds} {kind} objects {' '.join(p for p in parts if p)}".rstrip()
    if exp.condition == "event":
        return f"{bounds or 'at least 1'} event(s) {_matcher_text(exp.spec)}"
    if exp.condition == "request":
        return f"{bounds or 'at least 1'} API request(s) {_matcher_text(exp.spec)}"
    if exp.condition == "proxy":
        s = exp.spec
        port = f":{s['port']}" if "port" in s else ""
        what = (f"has rules for Service {s.get('service')}{port}" if c.get("exists")
                else f"has no rules for Service {s.get('service')}{port}" if "exists" in c
                else f"sends Service {s.get('service')}{port} to {bounds} endpoint(s)")
        return f"kube-proxy on {s.get('node')} {what}"
    return "events in order: " + " → ".join(_matcher_text(m) for m in exp.spec)


def _bounds(c: dict[str, Any]) -> str:
    if "equals" in c:
        return f"exactly {c['equals']}"
    parts = []
    if "atLeast" in c:
        parts.append(f"at least {c['atLeast']}")
    if "atMost" in c:
        parts.append(f"at most {c['atMost']}")
    return " and ".join(parts)


def _matcher_text(m: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{k}: {v}" for k, v in m.items()) + "}"


def _ref(spec: dict[str, Any]) -> str:
    if "selector" in spec:
        where = f" in {spec['namespace']}" if spec.get("namespace") else ""
        return f"{spec.get('kind')} -l {spec['selector']}{where}"
    return f"{spec.get('kind')} {_where(spec.get('namespace'))}{spec.get('name')}"


def _where(namespace: Any) -> str:
    return f"{namespace}/" if namespace else ""


def time_bounds(exp: Expectation) -> str:
    parts = []
    if exp.not_before:
        parts.append(f"not before {format_duration(exp.not_before)}")
    parts.append(f"within {format_duration(exp.within)}" if exp.within else "at once")
    if exp.stays:
        parts.append(f"staying for {format_duration(exp.stays)}")
    return ", ".join(parts)


# --------------------------------------------------------------------------- observing


async def observe(exp: Expectation, ctx: Context) -> tuple[bool, str]:
    """Whether the condition holds now, and what was seen (for the verdict's text)."""
    if exp.condition == "object":
        return await _object(exp, ctx.client, ctx.baselines.get(id(exp)))
    if exp.condition == "count":
        return await _count(exp, ctx.client)
    if exp.condition == "request":
        return _request(exp, [r for r in ctx.requests() if r.seq > ctx.request_mark])
    if exp.condition == "proxy":
        return _proxy(exp, ctx.proxies())
    occurrences = ctx.events.occurrences if exp.since == "start" else ctx.events.occurrences[ctx.step_mark:]
    if exp.condition == "event":
        return _event(exp, occurrences)
    return _ordered(exp, occurrences)


async def _get(client: Client, spec: dict[str, Any]) -> Obj | None:
    """The object by name, or the first (by name) of those the selector matches; None when missing."""
    try:
        info = client.resource_info(str(spec["kind"]))
        resource = info.resource if not info.group else f"{info.resource}.{info.group}"
        ns = str(spec.get("namespace") or "default") if info.namespaced else None
        if "selector" in spec:
            items = await client.list_all(resource, ns, label_selector=str(spec["selector"]))
            return min(items, key=lambda o: o["metadata"]["name"]) if items else None
        return await client.get(resource, str(spec["name"]), ns)
    except StatusError as err:
        if err.code == 404:
            return None
        raise


def _norm(value: Any) -> Any:
    """Numbers and their text compare equal, as a user writing ``equals: 3`` or ``"3"`` means."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):
        return f"{value:g}" if isinstance(value, float) else str(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return "null" if value is None else str(value)


def _equal(value: Any, expected: Any) -> bool:
    """``equals`` as a drill author means it: ``3`` is ``"3"``, and an unquoted ``true`` is a
    condition's ``"True"``."""
    if isinstance(expected, bool) and isinstance(value, str):
        return value.lower() == str(expected).lower()
    return _norm(value) == _norm(expected)


def _show(values: list[Any]) -> str:
    if not values:
        return "(no such field)"
    value = values[0] if len(values) == 1 else values
    text = json.dumps(value)
    return text if len(text) <= 200 else text[:197] + "..."


async def field_values(exp: Expectation, client: Client) -> list[Any]:
    """The object field's values now ([] when the object or the field is missing)."""
    obj = await _get(client, exp.spec)
    return [] if obj is None else evaluate(compile_field(str(exp.compare["field"])), obj)


async def _object(exp: Expectation, client: Client, baseline: list[Any] | None = None) -> tuple[bool, str]:
    spec, c = exp.spec, exp.compare
    try:
        obj = await _get(client, spec)
    except StatusError as err:
        return False, f"the API answered {err.code}: {err.message}"
    ref = _ref(spec)
    if obj is None:
        return ("exists" in c and not c["exists"]), f"{ref} not found"
    if "field" not in c:
        if "exists" in c:
            return bool(c["exists"]), f"{ref} exists"
        values = [obj]
    else:
        values = evaluate(compile_field(str(c["field"])), obj)
    seen = f"{c.get('field', '')} = {_show(values)}" if "field" in c else f"{ref} exists"
    if "exists" in c:
        return bool(values) == bool(c["exists"]), seen
    if not values:
        return False, seen
    value = values[0] if len(values) == 1 else values
    if "equals" in c:
        return _equal(value, c["equals"]), seen
    if "changes" in c:
        return values != (baseline or []), f"{seen} (before the action: {_show(baseline or [])})"
    text = value if isinstance(value, str) else _norm(value)
    return re.search(str(c["matches"]), text) is not None, seen


def _ready(pod: Obj) -> bool:
    return any(cond.get("type") == "Ready" and cond.get("status") == "True"
               for cond in (pod.get("status") or {}).get("conditions") or [])


async def _count(exp: Expectation, client: Client) -> tuple[bool, str]:
    spec, c = exp.spec, exp.compare
    try:
        info = client.resource_info(str(spec.get("kind") or "Pod"))
        items = await client.list_all(info.resource if not info.group else f"{info.resource}.{info.group}",
                                      spec.get("namespace") if info.namespaced else None,
                                      label_selector=str(spec.get("selector") or ""))
    except StatusError as err:
        return False, f"the API answered {err.code}: {err.message}"
    picked = []
    for obj in items:
        status, pod_spec = obj.get("status") or {}, obj.get("spec") or {}
        if obj["metadata"].get("deletionTimestamp") and not spec.get("terminating"):
            continue
        if spec.get("phase") and status.get("phase") != spec["phase"]:
            continue
        if "node" in spec and (pod_spec.get("nodeName") or "") != (spec["node"] or ""):
            continue
        if "ready" in spec and _ready(obj) != bool(spec["ready"]):
            continue
        picked.append(obj)
    n = len(picked)
    ok = (("equals" not in c or n == c["equals"]) and ("atLeast" not in c or n >= c["atLeast"])
          and ("atMost" not in c or n <= c["atMost"]))
    names = []
    for obj in sorted(picked, key=lambda o: o["metadata"]["name"])[:6]:
        status = obj.get("status") or {}
        extra = " ".join(x for x in (status.get("phase"), (obj.get("spec") or {}).get("nodeName")) if x)
        names.append(f"{obj['metadata']['name']}{' ' + extra if extra and info.kind == 'Pod' else ''}")
    more = ", ..." if n > 6 else ""
    return ok, f"{n}" + (f" ({', '.join(names)}{more})" if names else "")


def _proxy(exp: Expectation, proxies: dict[str, Any]) -> tuple[bool, str]:
    """A Service's rule on one node's kube-proxy: whether it is there, and its endpoints."""
    spec, c = exp.spec, exp.compare
    node, service = str(spec["node"]), str(spec["service"])
    proxy = proxies.get(node)
    if proxy is None:
        return False, f"no kube-proxy on node {node} (nodes with one: {', '.join(sorted(proxies)) or 'none'})"
    state = "" if getattr(proxy, "running", True) and not getattr(proxy, "partitioned", False) else " (rules frozen)"
    rules = [r for r in proxy.rules() if r.get("service") == service]
    if "port" in spec:
        rules = [r for r in rules if spec["port"] in (r.get("port"), r.get("portName"))]
    if not rules:
        others = sorted({str(r.get("service")) for r in proxy.rules()})
        shown = ", ".join(others[:6]) + (", ..." if len(others) > 6 else "")
        seen = f"no rule for {service} on {node}{state} (rules for: {shown or 'none'})"
        return ("exists" in c and not c["exists"]), seen
    rule = rules[0]
    endpoints = list(rule.get("endpoints") or ())
    seen = (f"{service}:{rule.get('port')} -> {rule.get('clusterIP')} on {node}{state}: {len(endpoints)} endpoint(s)"
            + (f" ({', '.join(endpoints[:6])}{', ...' if len(endpoints) > 6 else ''})" if endpoints else ""))
    if "exists" in c:
        return bool(c["exists"]), seen
    n = len(endpoints)
    return (("equals" not in c or n == c["equals"]) and ("atLeast" not in c or n >= c["atLeast"])
            and ("atMost" not in c or n <= c["atMost"])), seen


def matches(m: dict[str, Any], o: Occurrence) -> bool:
    """Whether a recorded occurrence fits an event matcher."""
    return ((m.get("reason") is None or o.reason == m["reason"])
            and (m.get("source") is None or o.source == m["source"])
            and (m.get("type") is None or o.type == m["type"])
            and (m.get("kind") is None or o.kind == m["kind"])
            and (m.get("namespace") is None or o.namespace == m["namespace"])
            and (m.get("name") is None or re.fullmatch(str(m["name"]), o.name) is not None)
            and (m.get("message") is None or re.search(str(m["message"]), o.message) is not None))


def _near(m: dict[str, Any], occurrences: list[Occurrence]) -> str:
    """The recorded events closest to what a matcher asks (same reason, else same object), for a failure."""
    by_reason = [o for o in occurrences if m.get("reason") and o.reason == m["reason"]]
    by_object = [o for o in occurrences if m.get("name") and re.fullmatch(str(m["name"]), o.name)]
    near = by_reason or by_object
    if not near:
        return f"{len(occurrences)} event(s) recorded, none with that reason or object"
    shown = "; ".join(str(o) for o in near[-3:])
    return f"closest: {shown}"


def _event(exp: Expectation, occurrences: list[Occurrence]) -> tuple[bool, str]:
    c = exp.compare
    found = [o for o in occurrences if matches(exp.spec, o)]
    n = len(found)
    if not c:
        ok = n >= 1
    else:
        ok = (("equals" not in c or n == c["equals"]) and ("atLeast" not in c or n >= c["atLeast"])
              and ("atMost" not in c or n <= c["atMost"]))
    if found:
        return ok, f"{n} matching, last: {found[-1]}"
    return ok, f"0 matching ({_near(exp.spec, occurrences)})"


def request_matches(m: dict[str, Any], r: Any) -> bool:
    """Whether an API request log record fits a request matcher (``pods`` also matches ``pods.`` groups)."""
    resource = str(r.resource)
    want = m.get("resource")
    return ((m.get("user") is None or re.fullmatch(str(m["user"]), r.user) is not None)
            and (m.get("verb") is None or r.verb == m["verb"])
            and (want is None or resource == want or resource.split("/")[0].split(".")[0] == want)
            and (m.get("namespace") is None or (r.namespace or "") == m["namespace"])
            and (m.get("name") is None or re.fullmatch(str(m["name"]), r.name or "") is not None)
            and (m.get("code") is None or r.code == m["code"])
            and (m.get("stage") is None or (r.stage or "") == m["stage"]))


def _show_request(r: Any) -> str:
    where = f" -n {r.namespace}" if r.namespace else ""
    name = f" {r.name}" if r.name else ""
    stage = f" (refused at {r.stage})" if r.stage else ""
    return f"{r.user}: {r.verb} {r.resource}{name}{where} -> {r.code}{stage}"


def _request(exp: Expectation, records: list[Any]) -> tuple[bool, str]:
    c = exp.compare
    found = [r for r in records if request_matches(exp.spec, r)]
    n = len(found)
    ok = n >= 1 if not c else (("equals" not in c or n == c["equals"]) and ("atLeast" not in c or n >= c["atLeast"])
                               and ("atMost" not in c or n <= c["atMost"]))
    if found:
        return ok, f"{n} matching, last: {_show_request(found[-1])}"
    by_user = [r for r in records if exp.spec.get("user") and re.fullmatch(str(exp.spec["user"]), r.user)]
    near = "; ".join(_show_request(r) for r in by_user[-3:]) or f"{len(records)} request(s) logged since the step"
    return ok, f"0 matching ({near})"


def _ordered(exp: Expectation, occurrences: list[Occurrence]) -> tuple[bool, str]:
    matched: list[Occurrence] = []
    pos = 0
    for m in exp.spec:
        hit = next((i for i in range(pos, len(occurrences)) if matches(m, occurrences[i])), None)
        if hit is None:
            done = "; ".join(f"{o.reason} at +{o.time:g}s" for o in matched) or "none"
            return False, (f"{len(matched)} of {len(exp.spec)} in order (matched: {done}); next not seen after "
                           f"them: {_matcher_text(m)} ({_near(m, occurrences[pos:])})")
        matched.append(occurrences[hit])
        pos = hit + 1
    return True, "; ".join(f"{o.reason} ({o.source}) at +{o.time:g}s" for o in matched)


# --------------------------------------------------------------------------- time bounds


@dataclass(slots=True)
class Verdict:
    expectation: Expectation
    passed: bool
    text: str  # what was expected, what was seen, and when
    at: float  # simulated seconds since boot when decided

    def to_dict(self) -> dict[str, Any]:
        return {"expected": describe(self.expectation), "bounds": time_bounds(self.expectation),
                "passed": self.passed, "text": self.text, "at": self.at, "where": str(self.expectation.where)}


class Watcher:
    """One expectation's state across polls; :attr:`verdict` is set once decided."""

    def __init__(self, exp: Expectation, start: float) -> None:
        self.exp = exp
        self.start = start  # simulated seconds since boot when the window opened
        self.held_since: float | None = None
        self.seen = ""
        self.verdict: Verdict | None = None

    def deadline(self) -> float:
        """Elapsed seconds by which the verdict will be known at the latest."""
        return max(self.exp.within, self.exp.not_before) + self.exp.stays

    def poll(self, held: bool, seen: str, now: float) -> None:
        exp, elapsed = self.exp, round(now - self.start, 3)
        self.seen = seen
        expected = f"expected {describe(exp)} ({time_bounds(exp)})"
        if self.held_since is None:
            if held and elapsed < exp.not_before:
                self._decide(False, f"{expected}; it held already {format_duration(elapsed)} after the step "
                                    f"(seen: {seen}) at simulated {when(now)}", now)
            elif held:
                self.held_since = now
                if exp.stays <= 0:
                    self._decide(True, f"{describe(exp)}: seen {seen} at simulated {when(now)}", now)
            elif elapsed >= max(exp.within, exp.not_before):
                self._decide(False, f"{expected}; seen {seen} at simulated {when(now)} "
                                    f"({format_duration(elapsed)} after the step)", now)
        elif not held:
            self._decide(False, f"{expected}; it held from simulated {when(self.held_since)} but stopped: seen "
                                f"{seen} at simulated {when(now)}", now)
        if self.verdict is None and self.held_since is not None and now - self.held_since >= exp.stays:
            self._decide(True, f"{describe(exp)}: held for {format_duration(exp.stays)} (seen {seen}) until "
                               f"simulated {when(now)}", now)

    def _decide(self, passed: bool, text: str, now: float) -> None:
        self.verdict = Verdict(self.exp, passed, text, now)
