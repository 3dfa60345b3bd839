"""Scheduler configuration, read from a KubeSchedulerConfiguration-shaped YAML.

Supported, as upstream (``kubescheduler.config.k8s.io/v1``): ``profiles[]`` with ``schedulerName``,
``plugins`` per extension point and ``multiPoint`` (``enabled`` with ``weight``, ``disabled``,
``"*"`` to drop the defaults), ``pluginConfig[]`` args (NodeResourcesFit ``scoringStrategy``
LeastAllocated/MostAllocated with resource weights, PodTopologySpread ``defaultingType`` /
``defaultConstraints``, InterPodAffinity ``hardPodAffinityWeight``, DefaultPreemption candidate
limits), ``percentageOfNodesToScore`` (global and per profile), ``podInitialBackoffSeconds`` and
``podMaxBackoffSeconds``. kconsole adds ``decisionRecords: {enabled, retain}``.

Example::

    apiVersion: kubescheduler.config.k8s.io/v1
    kind: KubeSchedulerConfiguration
    profiles:
    - schedulerName: default-scheduler
      plugins:
        score:
          disabled: [{name: ImageLocality}]
          enabled: [{name: NodeResourcesFit, weight: 5}]
      pluginConfig:
      - name: NodeResourcesFit
        args: {scoringStrategy: {type: MostAllocated}}
    decisionRecords: {enabled: false}
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import yaml

from kconsole.scheduler import framework
from kconsole.scheduler.framework import Plugin

POINTS = ("queueSort", "preFilter", "filter", "postFilter", "preScore", "score", "reserve", "preBind", "bind")

#: Upstream's default profile (multiPoint) in order, with score weights.
DEFAULT_PLUGINS: list[tuple[str, int]] = [
    ("PrioritySort", 0), ("NodeUnschedulable", 0), ("NodeName", 0), ("TaintToleration", 3), ("NodeAffinity", 2),
    ("NodePorts", 0), ("NodeResourcesFit", 1), ("VolumeRestrictions", 0),
    ("VolumeBinding", 0), ("PodTopologySpread", 2), ("InterPodAffinity", 2),
    ("DefaultPreemption", 0), ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1), ("DefaultBinder", 0),
]
TOP_LEVEL = {"apiVersion", "kind", "profiles", "percentageOfNodesToScore", "podInitialBackoffSeconds",
             "podMaxBackoffSeconds", "decisionRecords", "leaderElection", "parallelism"}


def extends(cls: type[Plugin], point: str) -> bool:
    """Whether a plugin class implements an extension point (overrides its method)."""
    def over(name: str) -> bool:
        return getattr(cls, name, None) is not getattr(Plugin, name, None)

    return {
        "queueSort": lambda: hasattr(cls, "less"),
        "preFilter": lambda: over("pre_filter"),
        "filter": lambda: over("filter") or over("filter_node"),
        "postFilter": lambda: hasattr(cls, "post_filter"),
        "preScore": lambda: over("pre_score"),
        "score": lambda: over("score"),
        "reserve": lambda: over("reserve"),
        "preBind": lambda: hasattr(cls, "pre_bind"),
        "bind": lambda: hasattr(cls, "bind"),
    }[point]()


@dataclass(slots=True)
class ProfileConfig:
    scheduler_name: str = "default-scheduler"
    points: dict[str, list[str]] = field(default_factory=dict)
    weights: dict[str, int] = field(default_factory=dict)
    plugin_args: dict[str, dict[str, Any]] = field(default_factory=dict)
    percentage_of_nodes_to_score: int = 0


@dataclass(slots=True)
class SchedulerConfig:
    profiles: list[ProfileConfig] = field(default_factory=list)
    pod_initial_backoff: float = 1.0
    pod_max_backoff: float = 10.0
    #: Unschedulable pods are retried at least this often even without a helpful event (upstream 5 min).
    max_unschedulable_duration: float = 300.0
    decision_records: bool = True
    decision_retain: int = 500

    def __post_init__(self) -> None:
        if not self.profiles:
            self.profiles = [build_profile({})]

    @property
    def scheduler_names(self) -> list[str]:
        return [p.scheduler_name for p in self.profiles]


def _plugin_class(name: str, where: str) -> type[Plugin]:
    from kconsole.scheduler import plugins as _plugins  # noqa: F401  (registers every plugin)

    cls = framework.REGISTRY.get(name)
    if cls is None:
        known = ", ".join(sorted(framework.REGISTRY))
        raise ValueError(f"{where}: plugin {name!r} is not registered (known: {known})")
    return cls


def _entries(spec: Any, where: str) -> list[dict[str, Any]]:
    if spec is None:
        return []
    if not isinstance(spec, list) or not all(isinstance(e, dict) and isinstance(e.get("name"), str) for e in spec):
        raise ValueError(f"{where}: expected a list of {{name: ...}} entries")
    return spec


def _weight(entry: dict[str, Any], where: str) -> int | None:
    w = entry.get("weight")
    if w is None:
        return None
    if not isinstance(w, int) or w < 0 or w > 100:
        raise ValueError(f"{where}: weight of {entry['name']!r} must be an integer in 0..100, got {w!r}")
    return w or 1


def _percentage(value: Any, where: str) -> int:
    if value is None:
        return 0
    if not isinstance(value, int) or not 0 <= value <= 100:
        raise ValueError(f"{where}: percentageOfNodesToScore must be an integer in 0..100, got {value!r}")
    return value


def build_profile(spec: dict[str, Any], global_percentage: int = 0, index: int = 0) -> ProfileConfig:
    """One profile from its YAML dict, starting from upstream's default plugin set."""
    where = f"profiles[{index}]"
    if not isinstance(spec, dict):
        raise ValueError(f"{where}: expected a mapping")
    name = spec.get("schedulerName") or "default-scheduler"
    points: dict[str, list[str]] = {p: [] for p in POINTS}
    weights: dict[str, int] = {}
    plugins = spec.get("plugins") or {}
    if not isinstance(plugins, dict):
        raise ValueError(f"{where}.plugins: expected a mapping")
    unknown = set(plugins) - set(POINTS) - {"multiPoint", "permit", "postBind", "preEnqueue"}
    if unknown:
        raise ValueError(f"{where}.plugins: unknown extension point(s) {', '.join(sorted(unknown))}")
    multi = plugins.get("multiPoint") or {}
    multi_disabled = {e["name"] for e in _entries(multi.get("disabled"), f"{where}.plugins.multiPoint.disabled")}
    defaults = [] if "*" in multi_disabled else [(n, w) for n, w in DEFAULT_PLUGINS if n not in multi_disabled]
    for e in _entries(multi.get("enabled"), f"{where}.plugins.multiPoint.enabled"):
        _plugin_class(e["name"], f"{where}.plugins.multiPoint")
        w = _weight(e, f"{where}.plugins.multiPoint")
        defaults = [(n, dw) for n, dw in defaults if n != e["name"]] + [(e["name"], w or 1)]
    for plugin_name, w in defaults:
        cls = _plugin_class(plugin_name, where)
        for point in POINTS:
            if extends(cls, point):
                points[point].append(plugin_name)
        if extends(cls, "score"):
            weights[plugin_name] = w or 1
    for point in POINTS:
        conf = plugins.get(point) or {}
        if not isinstance(conf, dict):
            raise ValueError(f"{where}.plugins.{point}: expected a mapping with enabled/disabled")
        disabled = {e["name"] for e in _entries(conf.get("disabled"), f"{where}.plugins.{point}.disabled")}
        if "*" in disabled:
            points[point] = []
        else:
            points[point] = [n for n in points[point] if n not in disabled]
        for e in _entries(conf.get("enabled"), f"{where}.plugins.{point}.enabled"):
            cls = _plugin_class(e["name"], f"{where}.plugins.{point}")
            if not extends(cls, point):
                raise ValueError(f"{where}.plugins.{point}: plugin {e['name']!r} does not extend {point}")
            if e["name"] not in points[point]:
                points[point].append(e["name"])
            w = _weight(e, f"{where}.plugins.{point}")
            if point == "score":
                weights[e["name"]] = w or weights.get(e["name"], 1)
    if len(points["queueSort"]) != 1:
        raise ValueError(f"{where}: exactly one queueSort plugin must be enabled, got {points['queueSort']}")
    if not points["bind"]:
        raise ValueError(f"{where}: at least one bind plugin must be enabled")
    args: dict[str, dict[str, Any]] = {}
    for i, pc in enumerate(spec.get("pluginConfig") or ()):
        if not isinstance(pc, dict) or not isinstance(pc.get("name"), str):
            raise ValueError(f"{where}.pluginConfig[{i}]: expected {{name, args}}")
        _plugin_class(pc["name"], f"{where}.pluginConfig[{i}]")
        if pc["name"] in args:
            raise ValueError(f"{where}.pluginConfig: duplicate entry for {pc['name']!r}")
        args[pc["name"]] = dict(pc.get("args") or {})
    pct = _percentage(spec.get("percentageOfNodesToScore"), where) if "percentageOfNodesToScore" in spec else global_percentage
    profile = ProfileConfig(name, points, weights, args, pct)
    for plugin_name in {n for names in points.values() for n in names}:
        try:
            _plugin_class(plugin_name, where)(framework.Handle(cache=None, rng=None), args.get(plugin_name, {}))  # type: ignore[arg-type]
        except ValueError as err:
            raise ValueError(f"{where}.pluginConfig: {err}") from None
    return profile


def parse_config(data: dict[str, Any] | None) -> SchedulerConfig:
    """A SchedulerConfig from the decoded YAML document; ValueError names what is wrong."""
    data = data or {}
    if not isinstance(data, dict):
        raise ValueError("scheduler config: expected a mapping at the top level")
    unknown = set(data) - TOP_LEVEL
    if unknown:
        raise ValueError(f"scheduler config: unknown field(s) {', '.join(sorted(unknown))}")
    if data.get("kind", "KubeSchedulerConfiguration") != "KubeSchedulerConfiguration":
        raise ValueError(f"scheduler config: kind must be KubeSchedulerConfiguration, got {data.get('kind')!r}")
    pct = _percentage(data.get("percentageOfNodesToScore"), "scheduler config")
    specs = data.get("profiles") or [{}]
    if not isinstance(specs, list):
        raise ValueError("scheduler config: profiles must be a list")
    profiles = [build_profile(p, pct, i) for i, p in enumerate(specs)]
    names = [p.scheduler_name for p in profiles]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"scheduler config: duplicate schedulerName {', '.join(dupes)}")
    initial = float(data.get("podInitialBackoffSeconds", 1))
    maximum = float(data.get("podMaxBackoffSeconds", 10))
    if initial <= 0 or maximum < initial:
        raise ValueError("scheduler config: need 0 < podInitialBackoffSeconds <= podMaxBackoffSeconds")
    records = data.get("decisionRecords") or {}
    if not isinstance(records, dict) or set(records) - {"enabled", "retain"}:
        raise ValueError("scheduler config: decisionRecords takes only enabled and retain")
    retain = records.get("retain", 500)
    if not isinstance(retain, int) or retain < 0:
        raise ValueError(f"scheduler config: decisionRecords.retain must be a non-negative integer, got {retain!r}")
    return SchedulerConfig(profiles, initial, maximum, decision_records=bool(records.get("enabled", True)),
                           decision_retain=retain)


def load_config(source: str | os.PathLike[str]) -> SchedulerConfig:
    """Parse a YAML file path, or YAML text when ``source`` is not an existing file."""
    text = str(source)
    if os.path.exists(text):
        with open(text, encoding="utf-8") as fh:
            text = fh.read()
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise ValueError(f"scheduler config: invalid YAML: {err}") from None
    return parse_config(data)
