"""The drill file: YAML in, a checked :class:`Drill` out, or errors that say ``file:line:col: problem``.

Every key a drill file may hold is listed in :data:`KEYS` with one line of documentation; a key not
listed is an error, and ``docs/drills.md`` documents the same table (a test keeps them in step).
Values are read from PyYAML's node tree so each error points at the key or value it is about.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kconsole.objects.duration import parse_duration

#: Section -> key -> what it means. Sections: the top level, ``cluster``, a manifest entry, a step,
#: each action's mapping form, a prediction, and an expectation with its condition kinds.
KEYS: dict[str, dict[str, str]] = {
    "drill": {
        "title": "one line naming the drill (required)",
        "goal": "what the learner should understand afterwards (required)",
        "seed": "seed for names, ties and jitter (default 1; `--seed` overrides)",
        "cluster": "the cluster the drill needs (default: 3 workers, 3 control planes, 3 zones)",
        "manifests": "files in the workspace from the start, applied by the folder sync at boot",
        "files": "files held back until an `apply` step copies them into the workspace",
        "steps": "the ordered steps (required, at least one)",
    },
    "cluster": {
        "nodes": "worker nodes (default 3)",
        "controlPlanes": "control-plane nodes, API servers and etcd members (default 3)",
        "zones": "zone labels given to workers in turn (default zone-a, zone-b, zone-c)",
        "nodeCpu": "CPU of each worker (default \"4\")",
        "nodeMemory": "memory of each worker (default 16Gi)",
        "addons": "addons created at start (default kube-proxy, coredns, default-storageclass)",
        "podDelayFactor": "multiplier for simulated image-pull and start delays (default 1)",
        "scheduler": "KubeSchedulerConfiguration-shaped scheduler settings",
        "controllers": "per-controller settings, as in the cluster config file",
    },
    "manifest": {
        "name": "file name in the workspace (required for inline content)",
        "content": "the file's YAML text, or objects (a mapping or a list of mappings)",
        "file": "a file beside the drill file to copy (its name is kept unless `name` is given)",
        "saveAs": "the workspace file it is written to (default: its name): an edit of a file already applied",
        "error": "(in an apply step) a regular expression the sync's refusal must match: the step passes "
                 "only when the file is refused",
    },
    "step": {
        "name": "a short title shown with the step's verdict",
        "say": "the instruction or explanation shown to the learner",
        "hint": "a hint shown on request in the console",
        "predict": "a question asked before the action (skipped headless)",
        "expect": "conditions checked after the action (a list)",
        "apply": "copy a manifest (a name from files/manifests, or an inline entry) into the workspace",
        "delete": "delete objects through the API, or a file from the workspace (the sync prunes)",
        "patch": "patch one object through the API",
        "scale": "set the replicas of a Deployment, ReplicaSet or StatefulSet (scale subresource)",
        "kubectl": "run a kubectl-like command line through the API (a string, or a mapping)",
        "fault": "apply a fault from the catalog (`kconsole fault list`)",
        "heal": "heal a fault by the name given when it was applied, or `all`",
        "wait": "let simulated time pass (a duration: 30s, 5m)",
        "snapshot": "save a snapshot of the store under this name (etcdctl snapshot save)",
        "restore": "restore a saved snapshot into a fresh store and restart the cluster on it",
        "restart": "stop the whole cluster and start it again on its store (`restart: true`)",
    },
    "object": {
        "kind": "kind or resource name: Pod, pods, deploy (required)",
        "name": "object name",
        "namespace": "namespace (default \"default\" for namespaced kinds)",
        "selector": "label selector (app=web,tier!=db) instead of a name",
        "file": "(delete only) a workspace file to remove instead of objects",
        "gracePeriod": "(delete only) grace period in seconds",
        "limit": "(delete only) delete at most this many of the selector's matches, first by name",
        "patch": "(patch only) the patch body (required)",
        "type": "(patch only) merge (default), strategic or json",
        "subresource": "(patch only) status, scale, ...",
        "replicas": "(scale only) the new replica count (required)",
        "error": "a regular expression the API's refusal must match: the step passes only when refused",
    },
    "kubectl": {
        "command": "the command line without `kubectl` (required)",
        "as": "user to act as (default kubernetes-admin); `system:serviceaccount:NS:NAME` for a ServiceAccount",
        "exitCode": "expected exit code (default 0); any other code fails the step",
        "output": "a regular expression the output must contain",
    },
    "fault": {
        "type": "fault type, e.g. pod-kill, kubelet-stop, etcd-stop (required)",
        "target": "ns/pod, node name, etcd member or `leader`, `apiserver` (required unless `selector`)",
        "selector": "instead of a target: the first pod by name matching this label selector",
        "namespace": "(with selector) the pods' namespace (default \"default\")",
        "params": "fault parameters, e.g. {load: 3}",
        "as": "a name to heal it by later (default: the fault id, f1, f2, ...)",
    },
    "predict": {
        "question": "the question (required)",
        "choices": "the possible answers, two or more (required)",
        "answer": "the right choice: its text or its 1-based number (required)",
        "explain": "why, shown after the answer",
    },
    "expect": {
        "name": "a short description used in verdicts",
        "object": "condition on one object: {kind, name or selector, namespace}, with `field` and a comparison",
        "count": "condition on how many objects match: {kind, namespace, selector, phase, node, ready}",
        "event": "condition on recorded events: {reason, source, message, type, kind, name, namespace}",
        "events": "events that must occur in this order (a list of event matchers)",
        "request": "condition on the API server's request log: {user, verb, resource, namespace, name, code, stage}",
        "proxy": "condition on one node's kube-proxy rules (as the console's `p` shows them): {node, service, port}",
        "field": "(object) a JSONPath: .spec.nodeName, .status.conditions[?(@.type==\"Ready\")].status",
        "equals": "the value must equal this (object field, a count, or a proxy rule's endpoints)",
        "matches": "(object) the field's text must match this regular expression",
        "exists": "(object, proxy) the object (or field, or the Service's rules) must exist (true) or not (false)",
        "changes": "(object) true: the field must differ from its value just before the step's action",
        "atLeast": "(count, event, request, proxy) at least this many",
        "atMost": "(count, event, request, proxy) at most this many",
        "since": "(event, events) `step` (default: since the step began) or `start` (since boot)",
        "within": "it must hold within this simulated time after the action (default 0s: now)",
        "notBefore": "it must not hold before this simulated time has passed",
        "stays": "once held, it must keep holding for this long",
    },
    "count": {
        "kind": "kind or resource (default Pod)",
        "namespace": "namespace (default: every namespace)",
        "selector": "label selector",
        "phase": "(pods) status.phase: Pending, Running, Succeeded, Failed",
        "node": "(pods) spec.nodeName; \"\" for unscheduled pods",
        "ready": "(pods) whether the Ready condition is True",
        "terminating": "count objects being deleted too (default false)",
    },
    "request": {
        "user": "who sent it (a regular expression, anchored): reader, system:kube-scheduler, system:node:.*",
        "verb": "get, list, watch, create, update, patch, delete, deletecollection",
        "resource": "plural, with the group and a subresource when there are: pods, deployments.apps, pods/binding",
        "namespace": "the request's namespace",
        "name": "the object's name (a regular expression, anchored)",
        "code": "the HTTP status answered: 200, 201, 403, 409, ...",
        "stage": "the pipeline stage that refused it: authentication, authorization, admission, validation, ...",
    },
    "proxy": {
        "node": "the node whose kube-proxy rules are read (required)",
        "service": "the Service as namespace/name (required)",
        "port": "the Service port (number or name) whose rule is read (default: its first port)",
    },
    "event": {
        "reason": "the event's reason, exactly",
        "source": "the reporting component: default-scheduler, kubelet, replicaset-controller, ...",
        "message": "a regular expression the message must contain",
        "type": "Normal or Warning",
        "kind": "kind of the involved object",
        "name": "name of the involved object (a regular expression, anchored)",
        "namespace": "namespace of the involved object",
    },
}

#: The step keys that are actions; a step has at most one.
ACTIONS = ("apply", "delete", "patch", "scale", "kubectl", "fault", "heal", "wait", "snapshot", "restore", "restart")
#: The condition kinds of an expectation; each has exactly one.
CONDITIONS = ("object", "count", "event", "events", "request", "proxy")
#: Where the built-in drills live (packaged with kconsole).
BUILTIN_DIR = Path(__file__).parent / "builtin"


class DrillError(ValueError):
    """A drill file that cannot be used; ``errors`` holds each ``file:line:col: problem`` line."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("\n".join(errors))
        self.errors = errors


@dataclass(frozen=True, slots=True)
class Where:
    path: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"


@dataclass(slots=True)
class Manifest:
    name: str
    text: str
    save_as: str = ""  # the workspace file it is written to ("" = name)
    error: str = ""  # (apply steps) the refusal expected
    ref: bool = False  # (apply steps) names a file of files/manifests; text comes from there

    @property
    def target(self) -> str:
        return self.save_as or self.name


@dataclass(slots=True)
class Prediction:
    question: str
    choices: list[str]
    answer: int  # 0-based
    explain: str = ""


@dataclass(slots=True)
class Expectation:
    condition: str  # one of CONDITIONS
    spec: Any  # the condition's mapping (a list for "events")
    compare: dict[str, Any]  # equals / matches / exists / atLeast / atMost, and field
    within: float
    not_before: float
    stays: float
    since: str
    name: str
    where: Where


@dataclass(slots=True)
class Step:
    index: int  # 1-based
    name: str
    action: str | None
    args: Any
    where: Where
    say: str = ""
    hint: str = ""
    predict: Prediction | None = None
    expect: list[Expectation] = field(default_factory=list)


@dataclass(slots=True)
class Drill:
    name: str  # the file's stem
    path: Path
    title: str
    goal: str
    seed: int
    cluster: dict[str, Any]  # ClusterConfig keyword arguments
    manifests: list[Manifest]
    files: dict[str, Manifest]
    steps: list[Step]


# --------------------------------------------------------------------------- reading with positions


class _Reader:
    """Builds plain values from YAML nodes, remembering each value's position by its path."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.where: dict[tuple[Any, ...], Where] = {}
        self.key_where: dict[tuple[Any, ...], Where] = {}
        self.errors: list[str] = []

    def build(self, node: yaml.Node, at: tuple[Any, ...] = ()) -> Any:
        self.where[at] = self._mark(node)
        if isinstance(node, yaml.MappingNode):
            out: dict[str, Any] = {}
            for key_node, value_node in node.value:
                key = str(key_node.value) if isinstance(key_node, yaml.ScalarNode) else "?"
                if key in out:
                    self.error(self._mark(key_node), f"duplicate key {key!r}")
                self.key_where[(*at, key)] = self._mark(key_node)
                out[key] = self.build(value_node, (*at, key))
            return out
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*at, i)) for i, item in enumerate(node.value)]
        return _scalar(node)

    def _mark(self, node: yaml.Node) -> Where:
        return Where(self.path, node.start_mark.line + 1, node.start_mark.column + 1)

    def at(self, path: tuple[Any, ...]) -> Where:
        while path and path not in self.where:
            path = path[:-1]
        return self.where.get(path, Where(self.path, 1, 1))

    def key_at(self, path: tuple[Any, ...]) -> Where:
        return self.key_where.get(path) or self.at(path)

    def error(self, where: Where, message: str) -> None:
        self.errors.append(f"{where}: {message}")


def _scalar(node: yaml.ScalarNode) -> Any:
    """The scalar's value as PyYAML's safe loader types it (int, float, bool, null, str)."""
    loader = yaml.SafeLoader("")
    try:
        return loader.construct_object(node, deep=True)
    finally:
        loader.dispose()


# --------------------------------------------------------------------------- checking


class _Checker:
    def __init__(self, reader: _Reader, base: Path) -> None:
        self.r = reader
        self.base = base
        self.names: dict[str, str] = {}  # file name -> the section declaring it
        self.snapshots: set[str] = set()  # snapshot names saved by the steps so far

    def err(self, at: tuple[Any, ...], message: str, key: bool = False) -> None:
        self.r.error(self.r.key_at(at) if key else self.r.at(at), message)

    def mapping(self, value: Any, at: tuple[Any, ...], section: str, what: str) -> dict[str, Any] | None:
        if not isinstance(value, dict):
            self.err(at, f"{what} must be a mapping, got {_what(value)}")
            return None
        known = KEYS[section]
        for key in value:
            if key not in known:
                self.err((*at, key), f"unknown key {key!r} in {what} (known: {', '.join(known)})", key=True)
        return value

    def string(self, value: Any, at: tuple[Any, ...], what: str, required: bool = True) -> str:
        if value is None and not required:
            return ""
        if not isinstance(value, str) or (required and not value.strip()):
            self.err(at, f"{what} must be a non-empty string, got {_what(value)}")
            return ""
        return value

    def duration(self, value: Any, at: tuple[Any, ...], what: str) -> float:
        if value is None:
            return 0.0
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            seconds = float(value)
        else:
            try:
                seconds = parse_duration(str(value))
            except ValueError:
                self.err(at, f"{what} must be a duration like 30s, 5m or 1m30s, got {value!r}")
                return 0.0
        if seconds < 0:
            self.err(at, f"{what} must not be negative, got {value!r}")
            return 0.0
        return seconds

    # ---------------------------------------------------------------- sections

    def drill(self, raw: Any, name: str, path: Path) -> Drill | None:
        top = self.mapping(raw, (), "drill", "the drill")
        if top is None:
            return None
        for key in ("title", "goal", "steps"):
            if key not in top:
                self.err((), f"missing required key {key!r}")
        title = self.string(top.get("title"), ("title",), "title") if "title" in top else ""
        goal = self.string(top.get("goal"), ("goal",), "goal") if "goal" in top else ""
        seed = top.get("seed", 1)
        if not isinstance(seed, int) or isinstance(seed, bool):
            self.err(("seed",), f"seed must be an integer, got {_what(seed)}")
            seed = 1
        cluster = self.cluster(top.get("cluster"), ("cluster",))
        manifests = self.manifest_list(top.get("manifests"), ("manifests",), "manifests")
        files = self.manifest_list(top.get("files"), ("files",), "files")
        seen: dict[str, str] = {}
        for section, entries in (("manifests", manifests), ("files", files)):
            for i, m in enumerate(entries):
                if m.name in seen:
                    self.err((section, i), f"file name {m.name!r} is used twice (also in {seen[m.name]})")
                seen[m.name] = section
        self.names = seen
        steps_raw = top.get("steps")
        steps: list[Step] = []
        if "steps" in top:
            if not isinstance(steps_raw, list) or not steps_raw:
                self.err(("steps",), f"steps must be a non-empty list, got {_what(steps_raw)}")
            else:
                steps = [s for i, item in enumerate(steps_raw)
                         if (s := self.step(item, ("steps", i), i + 1, seen)) is not None]
        return Drill(name, path, title, goal, seed, cluster, manifests, {m.name: m for m in files}, steps)

    def cluster(self, raw: Any, at: tuple[Any, ...]) -> dict[str, Any]:
        if raw is None:
            return {}
        spec = self.mapping(raw, at, "cluster", "cluster")
        if spec is None:
            return {}
        out: dict[str, Any] = {}
        ints = {"nodes": "nodes", "controlPlanes": "control_planes"}
        for key, attr in ints.items():
            if key in spec:
                v = spec[key]
                if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                    self.err((*at, key), f"{key} must be a non-negative integer, got {_what(v)}")
                else:
                    out[attr] = v
        for key, attr in (("zones", "zones"), ("addons", "addons")):
            if key in spec:
                v = spec[key]
                if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
                    self.err((*at, key), f"{key} must be a list of strings, got {_what(v)}")
                else:
                    out[attr] = tuple(v)
        for key, attr in (("nodeCpu", "node_cpu"), ("nodeMemory", "node_memory")):
            if key in spec:
                out[attr] = str(spec[key])
        if "podDelayFactor" in spec:
            v = spec["podDelayFactor"]
            if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0:
                self.err((*at, "podDelayFactor"), f"podDelayFactor must be a number >= 0, got {_what(v)}")
            else:
                out["pod_delay_factor"] = float(v)
        for key in ("scheduler", "controllers"):
            if key in spec:
                if not isinstance(spec[key], dict):
                    self.err((*at, key), f"{key} must be a mapping, got {_what(spec[key])}")
                else:
                    out[key] = spec[key]
        return out

    def manifest_list(self, raw: Any, at: tuple[Any, ...], what: str) -> list[Manifest]:
        if raw is None:
            return []
        if not isinstance(raw, list):
            self.err(at, f"{what} must be a list of files, got {_what(raw)}")
            return []
        return [m for i, item in enumerate(raw) if (m := self.manifest(item, (*at, i), what)) is not None]

    def manifest(self, raw: Any, at: tuple[Any, ...], what: str) -> Manifest | None:
        if isinstance(raw, str):
            raw = {"file": raw}
            self.r.where[(*at, "file")] = self.r.at(at)
        spec = self.mapping(raw, at, "manifest", f"an entry of {what}")
        if spec is None:
            return None
        if what == "apply" and "file" not in spec and "content" not in spec and spec.get("name") in self.names:
            ref = Manifest(str(spec["name"]), "", str(spec.get("saveAs") or ""), str(spec.get("error") or ""),
                           ref=True)
            if "error" in spec:
                self.regex(spec["error"], (*at, "error"), "error")
            return ref
        if ("file" in spec) == ("content" in spec):
            self.err(at, f"an entry of {what} needs either `file` or `content` (with `name`)"
                         + (", or the `name` of one in files or manifests" if what == "apply" else ""))
            return None
        if "file" in spec:
            rel = self.string(spec["file"], (*at, "file"), "file")
            if not rel:
                return None
            source = self.base / rel
            try:
                text = source.read_text(encoding="utf-8")
            except OSError as err:
                self.err((*at, "file"), f"cannot read {rel!r} beside the drill: {err.strerror}")
                return None
            name = spec.get("name") or Path(rel).name
        else:
            name = self.string(spec.get("name"), (*at, "name"), "name")
            content = spec["content"]
            if isinstance(content, str):
                text = content
            elif isinstance(content, dict):
                text = yaml.safe_dump(content, sort_keys=False)
            elif isinstance(content, list) and all(isinstance(x, dict) for x in content):
                text = yaml.safe_dump_all(content, sort_keys=False)
            else:
                self.err((*at, "content"), f"content must be YAML text or objects, got {_what(content)}")
                return None
        if not name:
            return None
        from kconsole.sync.parse import parse_text

        for problem in parse_text(text, str(name)).errors:  # the sync would refuse it at run time
            self.err((*at, "content" if "content" in spec else "file"), f"{problem}")
        save_as = spec.get("saveAs") or ""
        error = spec.get("error") or ""
        if "error" in spec:
            if what != "apply":
                self.err((*at, "error"), f"only an apply step's file may expect an error, not one in {what}",
                         key=True)
            self.regex(spec["error"], (*at, "error"), "error")
        for value in (name, save_as):
            if value and (not str(value).lower().endswith((".yaml", ".yml", ".json")) or "/" in str(value)
                          or str(value).startswith(".")):
                self.err(at, f"file name {value!r} must be a plain .yaml, .yml or .json name")
                return None
        return Manifest(str(name), text, str(save_as), str(error))

    def step(self, raw: Any, at: tuple[Any, ...], index: int, names: dict[str, str]) -> Step | None:
        spec = self.mapping(raw, at, "step", f"step {index}")
        if spec is None:
            return None
        actions = [k for k in ACTIONS if k in spec]
        if len(actions) > 1:
            self.err((*at, actions[1]), f"step {index} has two actions ({' and '.join(actions)}); split it", key=True)
        if not actions and "expect" not in spec and "predict" not in spec:
            self.err(at, f"step {index} does nothing: give it an action ({', '.join(ACTIONS)}), "
                         f"a prediction or expectations")
        action = actions[0] if actions else None
        args = self.action_args(action, spec.get(action), (*at, action), names) if action else None
        predict = self.predict(spec["predict"], (*at, "predict")) if "predict" in spec else None
        expect: list[Expectation] = []
        if "expect" in spec:
            raw_expect = spec["expect"]
            if isinstance(raw_expect, dict):
                raw_expect = [raw_expect]
                self.r.where[(*at, "expect", 0)] = self.r.at((*at, "expect"))
                self._shift((*at, "expect"))
            if not isinstance(raw_expect, list) or not raw_expect:
                self.err((*at, "expect"), f"expect must be a non-empty list of conditions, got {_what(raw_expect)}")
            else:
                expect = [e for i, item in enumerate(raw_expect)
                          if (e := self.expectation(item, (*at, "expect", i))) is not None]
        name = self.string(spec.get("name"), (*at, "name"), "name", required=False)
        if not name:
            name = _default_name(action, args, expect, predict)
        return Step(index, name, action, args, self.r.at(at), say=self.string(spec.get("say"), (*at, "say"), "say",
                                                                           required=False),
                    hint=self.string(spec.get("hint"), (*at, "hint"), "hint", required=False),
                    predict=predict, expect=expect)

    def _shift(self, at: tuple[Any, ...]) -> None:
        """A single mapping given where a list is expected: its positions move under index 0."""
        n = len(at)
        for table in (self.r.where, self.r.key_where):
            for path in [p for p in table if p[:n] == at and len(p) > n and p[n] != 0]:
                table[(*at, 0, *path[n:])] = table[path]

    def action_args(self, action: str, raw: Any, at: tuple[Any, ...], names: dict[str, str]) -> Any:
        if action == "wait":
            return self.duration(raw, at, "wait")
        if action in ("snapshot", "restore"):
            name = self.string(raw, at, action)
            if name and (not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name)):
                self.err(at, f"{action}: a snapshot name is letters, digits, '.', '_' and '-', got {name!r}")
            elif action == "snapshot":
                self.snapshots.add(name)
            elif name and name not in self.snapshots:
                self.err(at, f"restore: no earlier step saves a snapshot named {name!r}")
            return name
        if action == "heal":
            return self.string(raw, at, action)
        if action == "restart":
            if raw is not True:
                self.err(at, f"restart takes true, got {_what(raw)}")
            return raw
        if action == "apply":
            if isinstance(raw, str):
                if raw not in names and not (self.base / raw).is_file():
                    self.err(at, f"apply: no file {raw!r} in files or manifests, nor beside the drill")
                return raw
            m = self.manifest(raw, at, "apply")
            return m
        if action == "kubectl":
            if isinstance(raw, str):
                raw = {"command": raw}
                self.r.where[(*at, "command")] = self.r.at(at)
            spec = self.mapping(raw, at, "kubectl", "kubectl")
            if spec is None:
                return None
            self.string(spec.get("command"), (*at, "command"), "kubectl command")
            if "exitCode" in spec and (not isinstance(spec["exitCode"], int) or isinstance(spec["exitCode"], bool)):
                self.err((*at, "exitCode"), f"exitCode must be an integer, got {_what(spec['exitCode'])}")
            if "output" in spec:
                self.regex(spec["output"], (*at, "output"), "output")
            if "as" in spec:
                self.string(spec["as"], (*at, "as"), "as")
            return spec
        if action == "fault":
            spec = self.mapping(raw, at, "fault", "fault")
            if spec is None:
                return None
            from kconsole.faults import CATALOG

            ftype = self.string(spec.get("type"), (*at, "type"), "fault type")
            if ftype and ftype not in CATALOG:
                self.err((*at, "type"), f"unknown fault type {ftype!r} (known: {', '.join(CATALOG)})")
            if "selector" in spec:
                self.string(spec.get("selector"), (*at, "selector"), "selector")
                if "target" in spec:
                    self.err((*at, "selector"), "give either target or selector, not both", key=True)
            else:
                self.string(spec.get("target"), (*at, "target"), "fault target")
            params = spec.get("params") or {}
            if not isinstance(params, dict):
                self.err((*at, "params"), f"params must be a mapping, got {_what(params)}")
            elif ftype in CATALOG:
                known = {p.name for p in CATALOG[ftype].params}
                for key in params:
                    if key not in known:
                        self.err((*at, "params", key), f"{ftype} has no parameter {key!r} "
                                                       f"(it takes: {', '.join(sorted(known)) or 'none'})", key=True)
            return spec
        spec = self.mapping(raw, at, "object", action)
        if spec is None:
            return None
        allowed = {"delete": {"kind", "name", "namespace", "selector", "file", "gracePeriod", "limit", "error"},
                   "patch": {"kind", "name", "namespace", "patch", "type", "subresource", "error"},
                   "scale": {"kind", "name", "namespace", "replicas", "error"}}[action]
        for key in spec:
            if key in KEYS["object"] and key not in allowed:
                self.err((*at, key), f"{action} does not take {key!r} (it takes: {', '.join(sorted(allowed))})",
                         key=True)
        if "error" in spec:
            self.regex(spec["error"], (*at, "error"), "error")
        if action == "delete" and "file" in spec:
            self.string(spec["file"], (*at, "file"), "file")
            return spec
        self.string(spec.get("kind"), (*at, "kind"), "kind")
        if action == "delete":
            if ("name" in spec) == ("selector" in spec):
                self.err(at, "delete needs either `name` or `selector` (or `file`)")
        else:
            self.string(spec.get("name"), (*at, "name"), "name")
        if action == "patch":
            if not isinstance(spec.get("patch"), (dict, list)):
                self.err((*at, "patch"), f"patch must be a mapping (or a list for type json), "
                                         f"got {_what(spec.get('patch'))}")
            if spec.get("type", "merge") not in ("merge", "strategic", "json"):
                self.err((*at, "type"), f"type must be merge, strategic or json, got {spec.get('type')!r}")
        if action == "scale":
            r = spec.get("replicas")
            if not isinstance(r, int) or isinstance(r, bool) or r < 0:
                self.err((*at, "replicas"), f"replicas must be a non-negative integer, got {_what(r)}")
        return spec

    def predict(self, raw: Any, at: tuple[Any, ...]) -> Prediction | None:
        spec = self.mapping(raw, at, "predict", "predict")
        if spec is None:
            return None
        question = self.string(spec.get("question"), (*at, "question"), "question")
        choices = spec.get("choices")
        if not isinstance(choices, list) or len(choices) < 2:
            self.err((*at, "choices"), f"choices must be a list of two or more answers, got {_what(choices)}")
            return None
        bad = next((i for i, c in enumerate(choices) if not isinstance(c, (str, int, float))), None)
        if bad is not None:
            self.err((*at, "choices", bad), f"each choice must be text, got {_what(choices[bad])} "
                                            f"(quote a choice that holds ': ')")
            return None
        texts = [str(c) for c in choices]
        answer = spec.get("answer")
        if isinstance(answer, int) and not isinstance(answer, bool) and 1 <= answer <= len(texts):
            index = answer - 1
        elif str(answer) in texts:
            index = texts.index(str(answer))
        else:
            self.err((*at, "answer"), f"answer must be one of the choices or its number 1..{len(texts)}, "
                                      f"got {answer!r}")
            return None
        return Prediction(question, texts, index, self.string(spec.get("explain"), (*at, "explain"), "explain",
                                                              required=False))

    def regex(self, value: Any, at: tuple[Any, ...], what: str) -> None:
        if not isinstance(value, str):
            self.err(at, f"{what} must be a regular expression string, got {_what(value)}")
            return
        try:
            re.compile(value)
        except re.error as err:
            self.err(at, f"{what} is not a valid regular expression: {err}")

    def expectation(self, raw: Any, at: tuple[Any, ...]) -> Expectation | None:
        spec = self.mapping(raw, at, "expect", "an expectation")
        if spec is None:
            return None
        kinds = [k for k in CONDITIONS if k in spec]
        if len(kinds) != 1:
            self.err(at, f"an expectation needs exactly one of {', '.join(CONDITIONS)}"
                         + (f", got {' and '.join(kinds)}" if kinds else ""))
            return None
        kind = kinds[0]
        body = spec[kind]
        compare = {k: spec[k] for k in ("field", "equals", "matches", "exists", "changes", "atLeast", "atMost")
                   if k in spec}
        allowed = {"object": {"field", "equals", "matches", "exists", "changes"}, "count": {"equals", "atLeast", "atMost"},
                   "event": {"equals", "atLeast", "atMost", "since"}, "events": {"since"},
                   "request": {"equals", "atLeast", "atMost"}, "proxy": {"equals", "atLeast", "atMost", "exists"}}[kind]
        for key in (*compare, *(["since"] if "since" in spec else [])):
            if key not in allowed:
                self.err((*at, key), f"{kind} expectations do not take {key!r} "
                                     f"(they take: {', '.join(sorted(allowed)) or 'no comparison'})", key=True)
        if kind == "object":
            obj = self.mapping(body, (*at, kind), "object", "object")
            if obj is not None:
                self.string(obj.get("kind"), (*at, kind, "kind"), "kind")
                if ("name" in obj) == ("selector" in obj):
                    self.err((*at, kind), "an object needs either `name` or `selector` (the first match by name)")
                else:
                    self.string(obj.get("name", obj.get("selector")), (*at, kind), "name or selector")
                for key in obj:
                    if key not in ("kind", "name", "namespace", "selector"):
                        self.err((*at, kind, key), f"object does not take {key!r} (it takes: kind, name, "
                                                   f"namespace, selector)", key=True)
            if "field" in compare:
                from kconsole.api.crd.printers import PathError

                from kconsole.drills.expect import compile_field

                try:
                    compile_field(self.string(compare["field"], (*at, "field"), "field") or ".")
                except PathError as err:
                    self.err((*at, "field"), f"field {compare['field']!r}: {err}")
            if sum(k in compare for k in ("equals", "matches", "exists", "changes")) != 1:
                self.err(at, "an object expectation needs exactly one of equals, matches, exists, changes")
            if "changes" in compare and (compare["changes"] is not True or "field" not in compare):
                self.err((*at, "changes"), "changes must be true, with a field")
            if "matches" in compare:
                self.regex(compare["matches"], (*at, "matches"), "matches")
            if "exists" in compare and not isinstance(compare["exists"], bool):
                self.err((*at, "exists"), f"exists must be true or false, got {_what(compare['exists'])}")
        elif kind == "count":
            self.mapping(body, (*at, kind), "count", "count")
            if not any(k in compare for k in ("equals", "atLeast", "atMost")):
                self.err(at, "a count expectation needs equals, atLeast or atMost")
            for key in ("equals", "atLeast", "atMost"):
                if key in compare and (not isinstance(compare[key], int) or isinstance(compare[key], bool)):
                    self.err((*at, key), f"{key} must be an integer, got {_what(compare[key])}")
        elif kind == "request":
            req = self.mapping(body, (*at, kind), "request", "request")
            if req is not None:
                if not req:
                    self.err((*at, kind), "a request matcher needs at least one of " + ", ".join(KEYS["request"]))
                for key in ("name", "user"):
                    if key in req:
                        self.regex(req[key], (*at, kind, key), key)
                if "code" in req and (not isinstance(req["code"], int) or isinstance(req["code"], bool)):
                    self.err((*at, kind, "code"), f"code must be an HTTP status number, got {_what(req['code'])}")
            for key in ("equals", "atLeast", "atMost"):
                if key in compare and (not isinstance(compare[key], int) or isinstance(compare[key], bool)):
                    self.err((*at, key), f"{key} must be an integer, got {_what(compare[key])}")
        elif kind == "proxy":
            self.proxy(body, compare, (*at, kind), at)
        elif kind == "event":
            self.event_matcher(body, (*at, kind))
            for key in ("equals", "atLeast", "atMost"):
                if key in compare and (not isinstance(compare[key], int) or isinstance(compare[key], bool)):
                    self.err((*at, key), f"{key} must be an integer, got {_what(compare[key])}")
        else:
            if not isinstance(body, list) or not body:
                self.err((*at, kind), f"events must be a non-empty list of event matchers, got {_what(body)}")
            else:
                for i, item in enumerate(body):
                    self.event_matcher(item, (*at, kind, i))
        since = spec.get("since", "step")
        if since not in ("step", "start"):
            self.err((*at, "since"), f"since must be step or start, got {since!r}")
        within = self.duration(spec.get("within"), (*at, "within"), "within")
        not_before = self.duration(spec.get("notBefore"), (*at, "notBefore"), "notBefore")
        stays = self.duration(spec.get("stays"), (*at, "stays"), "stays")
        if not_before and within < not_before:
            self.err((*at, "notBefore"), f"notBefore ({spec.get('notBefore')}) needs a within that is at least "
                                         f"as long (got within {spec.get('within', '0s')})")
        name = self.string(spec.get("name"), (*at, "name"), "name", required=False)
        return Expectation(kind, body, compare, within, not_before, stays, str(since), name, self.r.at(at))

    def proxy(self, raw: Any, compare: dict[str, Any], at: tuple[Any, ...], exp_at: tuple[Any, ...]) -> None:
        """A proxy condition: a node, a ``namespace/name`` Service, and one comparison on its endpoints."""
        spec = self.mapping(raw, at, "proxy", "proxy")
        if spec is not None:
            self.string(spec.get("node"), (*at, "node"), "node")
            service = self.string(spec.get("service"), (*at, "service"), "service")
            if service and service.count("/") != 1:
                self.err((*at, "service"), f"service must be namespace/name, got {service!r}")
            if "port" in spec and (not isinstance(spec["port"], (int, str)) or isinstance(spec["port"], bool)):
                self.err((*at, "port"), f"port must be a number or a port name, got {_what(spec['port'])}")
        if not compare:
            self.err(exp_at, "a proxy expectation needs equals, atLeast, atMost (endpoints) or exists")
        if "exists" in compare and (len(compare) > 1 or not isinstance(compare["exists"], bool)):
            self.err((*exp_at, "exists"), "exists must be true or false, alone")
        for key in ("equals", "atLeast", "atMost"):
            if key in compare and (not isinstance(compare[key], int) or isinstance(compare[key], bool)):
                self.err((*exp_at, key), f"{key} must be an integer, got {_what(compare[key])}")

    def event_matcher(self, raw: Any, at: tuple[Any, ...]) -> None:
        spec = self.mapping(raw, at, "event", "an event matcher")
        if spec is None:
            return
        if not spec:
            self.err(at, "an event matcher needs at least one of " + ", ".join(KEYS["event"]))
        for key in ("message", "name"):
            if key in spec:
                self.regex(spec[key], (*at, key), key)


def _what(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return f"{str(value).lower()}"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list" if value else "an empty list"
    return f"{value!r}"


def _default_name(action: str | None, args: Any, expect: list[Expectation], predict: Prediction | None) -> str:
    if action == "wait":
        from kconsole.objects.duration import format_duration

        return f"wait {format_duration(float(args or 0))}"
    if action == "apply":
        return f"apply {args if isinstance(args, str) else getattr(args, 'name', '')}"
    if action == "kubectl" and isinstance(args, dict):
        return f"kubectl {args.get('command', '')}"
    if action in ("heal", "snapshot", "restore"):
        return f"{action} {args}"
    if action == "restart":
        return "restart the cluster"
    if action == "fault" and isinstance(args, dict):
        return f"fault {args.get('type', '')} {args.get('target', '')}"
    if action in ("delete", "patch", "scale") and isinstance(args, dict):
        if "file" in args:
            return f"delete file {args['file']}"
        what = args.get("name") or f"-l {args.get('selector', '')}"
        extra = f" to {args.get('replicas')}" if action == "scale" else ""
        return f"{action} {args.get('kind', '')} {what}{extra}"
    if predict is not None and not expect:
        return "predict"
    return "expect"


# --------------------------------------------------------------------------- entry points


def load(path: str | Path) -> Drill:
    """Read and check a drill file; DrillError lists every problem found."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise DrillError([f"{path}: cannot read: {err.strerror}"]) from None
    return parse(text, path)


def parse(text: str, path: Path) -> Drill:
    shown = str(path)
    reader = _Reader(shown)
    try:
        nodes = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f"{shown}:{mark.line + 1}:{mark.column + 1}" if mark is not None else f"{shown}:1:1"
        raise DrillError([f"{where}: YAML syntax error: {err.problem or err.context}"]) from None
    nodes = [n for n in nodes if n is not None]
    if len(nodes) != 1:
        raise DrillError([f"{shown}:1:1: a drill file holds exactly one YAML document, found {len(nodes)}"])
    raw = reader.build(nodes[0])
    drill = _Checker(reader, path.parent).drill(raw, path.stem, path)
    if reader.errors or drill is None:
        raise DrillError(sorted(reader.errors, key=_position) or [f"{shown}:1:1: not a drill"])
    return drill


def _position(error: str) -> tuple[int, int]:
    """(line, column) of a ``path:line:col: message`` error, for reporting in file order."""
    m = re.search(r":(\d+):(\d+): ", error)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def builtin_paths() -> dict[str, Path]:
    """Built-in drill name -> file, sorted by name."""
    return {p.stem: p for p in sorted(BUILTIN_DIR.glob("*.yaml"))}


def resolve(file_or_name: str) -> Path:
    """A path to a drill file, or a built-in drill's name."""
    path = Path(file_or_name)
    if path.is_file():
        return path
    builtin = builtin_paths()
    if file_or_name in builtin:
        return builtin[file_or_name]
    known = ", ".join(builtin) or "none"
    raise DrillError([f"{file_or_name}: no such file nor built-in drill (built-in: {known})"])
