"""Versions served besides the stored one: autoscaling/v1 HorizontalPodAutoscalers over the stored v2,
events.k8s.io/v1 Events over the stored core v1 Events.

Upstream stores one Event and serves it in both groups (``kubectl events`` and client-go's newer
event recorder read and write events.k8s.io/v1): ``involvedObject`` is ``regarding``, ``message``
is ``note``, ``source``/``firstTimestamp``/``lastTimestamp``/``count`` are the ``deprecated*``
fields and ``reportingComponent`` is ``reportingController``; field selectors are translated the
same way.

``kubectl autoscale`` creates autoscaling/v1 objects (``targetCPUUtilizationPercentage``); upstream
serves v1 and v2 of one stored object and converts between them. So does this: a v1 request's body is
converted to v2 before the pipeline and its answers (objects, lists, watch events) back to v1; a
patch or server-side apply acts on the object's v1 view. As
upstream, what v1 cannot express travels in annotations: metrics other than the CPU utilization target
(``autoscaling.alpha.kubernetes.io/metrics``), ``spec.behavior`` and the status conditions, so a v1
client's read-modify-write keeps them.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace
from typing import Any

from kconsole.api.registry import Registry, ResourceSpec
from kconsole.api.storage import clone
from kconsole.api.types import LogStream, Response, ResourceInfo, StatusError, WatchStream

Obj = dict[str, Any]

METRICS = "autoscaling.alpha.kubernetes.io/metrics"
BEHAVIOR = "autoscaling.alpha.kubernetes.io/behavior"
CONDITIONS = "autoscaling.alpha.kubernetes.io/conditions"
CURRENT_METRICS = "autoscaling.alpha.kubernetes.io/current-metrics"


@dataclass(frozen=True)
class Alternate:
    """A served version of a stored kind: its discovery entry and the two conversions."""

    spec: ResourceSpec
    info: ResourceInfo
    to_stored: Callable[[Obj], Obj]
    from_stored: Callable[[Obj], Obj]
    #: Field selector labels of this version -> the stored version's (events.k8s.io's ``regarding.name``).
    field_labels: tuple[tuple[str, str], ...] = ()

    def field_selector(self, selector: str) -> str:
        """``selector`` with this version's field labels in the stored version's words."""
        if not self.field_labels or not selector:
            return selector
        labels = dict(self.field_labels)
        terms = []
        for term in selector.split(","):
            for op in ("!=", "==", "="):
                key, sep, value = term.partition(op)
                if sep:
                    terms.append(f"{labels.get(key.strip(), key.strip())}{op}{value}")
                    break
            else:
                terms.append(term)
        return ",".join(terms)

    def incoming(self, obj: Any) -> Any:
        return self.to_stored(obj) if isinstance(obj, dict) else obj

    def outgoing(self, result: Response | WatchStream | LogStream) -> Response | WatchStream | LogStream:
        """An answer of the stored version in this one; Status bodies pass through."""
        if not isinstance(result, Response):
            return _ConvertedWatch(result, self.from_stored)  # type: ignore[arg-type]
        body = result.body
        if isinstance(body, dict):
            if body.get("kind") == self.spec.kind:
                result.body = self.from_stored(body)
            elif body.get("kind") == self.spec.list_kind:
                result.body = {**body, "apiVersion": self.info.api_version,
                               "items": [self.from_stored(o) for o in body.get("items") or ()]}
        return result


class _ConvertedWatch:
    """A watch whose event objects are converted (Status objects of ERROR events pass through)."""

    def __init__(self, stream: WatchStream, convert: Callable[[Obj], Obj]) -> None:
        self._stream = stream
        self._convert = convert

    async def _events(self) -> AsyncIterator[dict[str, Any]]:
        async for event in self._stream:
            obj = event.get("object")
            if event.get("type") not in ("ERROR", "BOOKMARK") and isinstance(obj, dict):
                event = {**event, "object": self._convert(obj)}
            yield event

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        return self._events()

    async def close(self) -> None:
        await self._stream.close()


def _annotation(meta: Obj, key: str) -> Any:
    text = (meta.get("annotations") or {}).get(key)
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        raise StatusError.bad_request(f"metadata.annotations[{key}]: invalid JSON") from None


def _is_cpu_utilization(metric: Any) -> bool:
    if not isinstance(metric, dict) or metric.get("type") != "Resource":
        return False
    resource = metric.get("resource") or {}
    target = resource.get("target") or {}
    return resource.get("name") == "cpu" and target.get("type") == "Utilization" \
        and target.get("averageUtilization") is not None


def hpa_v1_to_v2(obj: Obj) -> Obj:
    """An autoscaling/v1 HorizontalPodAutoscaler as the stored autoscaling/v2 one."""
    meta = clone(obj.get("metadata") or {})
    metrics = _annotation(meta, METRICS)
    behavior = _annotation(meta, BEHAVIOR)
    conditions = _annotation(meta, CONDITIONS)
    current = _annotation(meta, CURRENT_METRICS)
    annotations = meta.get("annotations")
    if annotations:
        for key in (METRICS, BEHAVIOR, CONDITIONS, CURRENT_METRICS):
            annotations.pop(key, None)
        if not annotations:
            del meta["annotations"]
    spec = obj.get("spec") or {}
    out_spec: Obj = {k: clone(spec[k]) for k in ("scaleTargetRef", "minReplicas", "maxReplicas") if k in spec}
    out_metrics: list[Any] = []
    target = spec.get("targetCPUUtilizationPercentage")
    if target is not None:
        out_metrics.append({"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": target}}})
    out_metrics += [m for m in metrics or () if not _is_cpu_utilization(m) or target is None]
    if out_metrics:
        out_spec["metrics"] = out_metrics
    if behavior is not None:
        out_spec["behavior"] = behavior
    out: Obj = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": meta,
                "spec": out_spec}
    status = obj.get("status")
    if isinstance(status, dict):
        out_status: Obj = {k: status[k] for k in ("observedGeneration", "lastScaleTime", "currentReplicas",
                                                  "desiredReplicas") if k in status}
        if current is not None:
            out_status["currentMetrics"] = current
        elif status.get("currentCPUUtilizationPercentage") is not None:
            out_status["currentMetrics"] = [{"type": "Resource", "resource": {"name": "cpu", "current": {
                "averageUtilization": status["currentCPUUtilizationPercentage"]}}}]
        if conditions is not None:
            out_status["conditions"] = conditions
        out["status"] = out_status
    return out


def hpa_v2_to_v1(obj: Obj) -> Obj:
    """The stored autoscaling/v2 HorizontalPodAutoscaler as autoscaling/v1 shows it."""
    meta = clone(obj.get("metadata") or {})
    spec = obj.get("spec") or {}
    out_spec: Obj = {k: clone(spec[k]) for k in ("scaleTargetRef", "minReplicas", "maxReplicas") if k in spec}
    others = []
    for metric in spec.get("metrics") or ():
        if _is_cpu_utilization(metric) and "targetCPUUtilizationPercentage" not in out_spec:
            out_spec["targetCPUUtilizationPercentage"] = metric["resource"]["target"]["averageUtilization"]
        else:
            others.append(metric)
    status = obj.get("status") or {}
    extra: dict[str, Any] = {METRICS: others, BEHAVIOR: spec.get("behavior"),
                             CONDITIONS: status.get("conditions"), CURRENT_METRICS: status.get("currentMetrics")}
    for key, value in extra.items():
        if value:
            meta.setdefault("annotations", {})[key] = json.dumps(value, separators=(",", ":"))
    out_status: Obj = {"currentReplicas": status.get("currentReplicas", 0),
                       "desiredReplicas": status.get("desiredReplicas", 0)}
    for key in ("observedGeneration", "lastScaleTime"):
        if key in status:
            out_status[key] = status[key]
    for metric in status.get("currentMetrics") or ():
        resource = (metric or {}).get("resource") or {}
        if metric.get("type") == "Resource" and resource.get("name") == "cpu":
            utilization = (resource.get("current") or {}).get("averageUtilization")
            if utilization is not None:
                out_status["currentCPUUtilizationPercentage"] = utilization
                break
    return {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": meta,
            "spec": out_spec, "status": out_status}


#: core/v1 Event field -> events.k8s.io/v1 field (upstream's conversion).
_EVENT_FIELDS = (("involvedObject", "regarding"), ("related", "related"), ("message", "note"),
                 ("reason", "reason"), ("type", "type"), ("action", "action"), ("eventTime", "eventTime"),
                 ("series", "series"), ("reportingComponent", "reportingController"),
                 ("reportingInstance", "reportingInstance"), ("source", "deprecatedSource"),
                 ("firstTimestamp", "deprecatedFirstTimestamp"), ("lastTimestamp", "deprecatedLastTimestamp"),
                 ("count", "deprecatedCount"))
#: events.k8s.io/v1 field selector labels and the core ones they stand for.
EVENT_FIELD_LABELS = (
    ("regarding.kind", "involvedObject.kind"), ("regarding.namespace", "involvedObject.namespace"),
    ("regarding.name", "involvedObject.name"), ("regarding.uid", "involvedObject.uid"),
    ("regarding.apiVersion", "involvedObject.apiVersion"),
    ("regarding.resourceVersion", "involvedObject.resourceVersion"),
    ("regarding.fieldPath", "involvedObject.fieldPath"), ("reportingController", "reportingComponent"),
    ("deprecatedSource", "source"))


def _event_series_to_v1(series: Any) -> Any:
    return {k: v for k, v in series.items() if k in ("count", "lastObservedTime")} if isinstance(series, dict) \
        else series


def event_core_to_v1(obj: Obj) -> Obj:
    """A stored core/v1 Event as events.k8s.io/v1 shows it."""
    out: Obj = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": clone(obj.get("metadata") or {})}
    for core, v1 in _EVENT_FIELDS:
        value = obj.get(core)
        if value in (None, "", {}) and core not in ("eventTime",):
            continue
        out[v1] = _event_series_to_v1(clone(value)) if core == "series" else clone(value)
    out.setdefault("eventTime", None)  # a required field of the v1 Event: null for an old-style Event
    return out


def event_v1_to_core(obj: Obj) -> Obj:
    """An events.k8s.io/v1 Event as the stored core/v1 one."""
    out: Obj = {"apiVersion": "v1", "kind": "Event", "metadata": clone(obj.get("metadata") or {})}
    for core, v1 in _EVENT_FIELDS:
        if v1 in obj and obj[v1] is not None:
            out[core] = clone(obj[v1])
    if not isinstance(out.get("involvedObject"), dict):
        out["involvedObject"] = out.get("involvedObject") or {}
    return out


class Versions:
    """The alternates of one registry, by (group, resource, version)."""

    def __init__(self, registry: Registry) -> None:
        self._by_key: dict[tuple[str, str, str], Alternate] = {}
        hpa = registry.get("autoscaling", "horizontalpodautoscalers")
        if hpa is not None:
            self._add(Alternate(hpa, replace(hpa.info, version="v1"), hpa_v1_to_v2, hpa_v2_to_v1))
        events = registry.get("", "events")
        if events is not None:
            info = replace(events.info, group="events.k8s.io", short_names=())
            self._add(Alternate(events, info, event_v1_to_core, event_core_to_v1, EVENT_FIELD_LABELS))

    def add(self, alternate: Alternate) -> None:
        """Serve another version of a stored kind (a CRD's served versions besides its storage one)."""
        self._add(alternate)

    def remove(self, group: str, resource: str) -> None:
        """Stop serving every other version of the kind stored as ``group``/``resource``."""
        for key, alternate in list(self._by_key.items()):
            if (alternate.spec.group, alternate.spec.resource) == (group, resource):
                del self._by_key[key]

    def _add(self, alternate: Alternate) -> None:
        info = alternate.info
        self._by_key[(info.group, info.resource, info.version)] = alternate
        for alias in (info.singular, *info.short_names):
            self._by_key[(info.group, alias, info.version)] = alternate

    def find(self, group: str | None, resource: str, version: str | None) -> Alternate | None:
        if group is None or version is None:
            return None
        return self._by_key.get((group, resource.lower(), version))

    def infos(self) -> list[ResourceInfo]:
        seen: list[ResourceInfo] = []
        for alternate in self._by_key.values():
            if alternate.info not in seen:
                seen.append(alternate.info)
        return seen
