"""The HorizontalPodAutoscaler controller (autoscaling/v2, resource metrics).

upstream's pkg/podautoscaler, every 15 s per HPA: read the target's ``/scale``, the pods its
selector picks, each pod's usage (published by the simulated kubelet as the annotations
``kconsole.dev/cpu-usage`` / ``kconsole.dev/memory-usage``, e.g. ``"250m"``) and requests;
``utilization = sum(usage) / sum(requests)`` over ready pods; ``desired = ceil(ratio * ready)``
unless the ratio is within the 0.1 tolerance, with upstream's treatment of unready pods (0 % on a
scale-up) and pods without metrics (0 % up, 100 % down) and its refusal to flip direction. The
proposal is stabilised (scale-down: the highest recommendation of the last 300 s, or the
behavior's windows), limited to ``[minReplicas, maxReplicas]`` and to ``max(2 * current, 4)``
per step — or, with ``spec.behavior``, to its scaling policies (Pods / Percent per periodSeconds,
counted from the replicas at the period's start, selectPolicy Max / Min / Disabled, upstream's
defaults for what is left out) — written through the scale subresource with a ``SuccessfulRescale`` event
("New size: 4; reason: cpu resource utilization (percentage of request) above target"), and
reported in status (currentMetrics, desiredReplicas, lastScaleTime, the AbleToScale /
ScalingActive / ScalingLimited conditions).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

from kconsole.client import StatusError
from kconsole.controllers.base import Controller, ControllerContext
from kconsole.controllers.podcontrol import with_kind
from kconsole.objects.meta import deep_copy, format_time, generation, get_condition, name, namespace, parse_time
from kconsole.objects.pod import CPU_USAGE_ANNOTATION, MEMORY_USAGE_ANNOTATION
from kconsole.objects.quantity import QuantityError, format_quantity, parse_quantity
from kconsole.objects.selectors import SelectorError, parse_label_selector

log = logging.getLogger(__name__)

Obj = dict[str, Any]

USAGE_ANNOTATIONS = {"cpu": CPU_USAGE_ANNOTATION, "memory": MEMORY_USAGE_ANNOTATION}
#: upstream defaults (kube-controller-manager flags).
SYNC_PERIOD = 15.0
TOLERANCE = 0.1
DOWNSCALE_STABILIZATION = 300.0
#: GenerateHPAScaleUpRules / GenerateHPAScaleDownRules: what an HPA with ``behavior`` gets by default.
DEFAULT_SCALE_UP = {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
    {"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]}
DEFAULT_SCALE_DOWN = {"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}
CPU_INITIALIZATION_PERIOD = 300.0
INITIAL_READINESS_DELAY = 30.0
METRIC_WINDOW = 30.0


class MetricError(Exception):
    """A metric could not be computed; the message is upstream's wording."""


@dataclass(slots=True)
class _Rec:
    replicas: int
    at: float


def _reason_text(resource: str, target_type: str) -> str:
    if target_type == "Utilization":
        return f"{resource} resource utilization (percentage of request)"
    return f"{resource} resource"


class HorizontalController(Controller):
    name = "horizontalpodautoscaling"
    component = "horizontal-pod-autoscaler"
    workers = 5

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.hpa_informer = self.informer("horizontalpodautoscalers")
        self.pod_informer = self.informer("pods")
        self.hpa_informer.add_event_handler(on_add=self.enqueue, on_update=self._hpa_updated,
                                            on_delete=self._hpa_deleted)
        self.recommendations: dict[str, list[_Rec]] = {}
        #: Per HPA, the scale changes it made (when, replicas added or, negative, removed).
        self.scale_events: dict[str, list[_Rec]] = {}
        self.sync_period = float(self.settings().get("sync-period", SYNC_PERIOD))
        self.tolerance = float(self.settings().get("tolerance", TOLERANCE))
        self.downscale_window = float(self.settings().get("downscale-stabilization", DOWNSCALE_STABILIZATION))

    def _hpa_updated(self, old: Obj, cur: Obj) -> None:
        if (old.get("spec") or {}) != (cur.get("spec") or {}):
            self.enqueue(cur)

    def _hpa_deleted(self, hpa: Obj) -> None:
        self.recommendations.pop(f"{namespace(hpa)}/{name(hpa)}", None)
        self.scale_events.pop(f"{namespace(hpa)}/{name(hpa)}", None)

    # ------------------------------------------------------------------ sync

    async def sync(self, key: str) -> float | None:
        cached = self.hpa_informer.get(key)
        if cached is None:
            return None
        hpa = deep_copy(with_kind(cached, "autoscaling/v2", "HorizontalPodAutoscaler"))
        status = deep_copy(hpa.get("status") or {})
        try:
            await self._reconcile(key, hpa, status)
        finally:
            await self._write_status(hpa, status)
        return self.sync_period

    async def _reconcile(self, key: str, hpa: Obj, status: Obj) -> None:
        now = self.clock.now()
        spec = hpa.get("spec") or {}
        ref = spec.get("scaleTargetRef") or {}
        ns = namespace(hpa)
        try:
            info = self.client.resource_info(ref.get("kind", ""), ref.get("apiVersion", ""))
            scale = await self.client.get(info.resource, ref.get("name", ""), ns, subresource="scale")
        except StatusError as err:
            msg = f"the HPA controller was unable to get the target's current scale: {err.message}"
            self._cond(status, "AbleToScale", "False", "FailedGetScale", msg)
            self._event(hpa, "Warning", "FailedGetScale", err.message)
            return
        self._cond(status, "AbleToScale", "True", "SucceededGetScale", "the HPA controller was able to get the target's current scale")
        current = int((scale.get("spec") or {}).get("replicas") or 0)
        status["currentReplicas"] = current
        min_replicas = int(spec.get("minReplicas", 1))
        max_replicas = int(spec.get("maxReplicas", 1))
        reason = ""
        if current == 0 and min_replicas != 0:
            desired = 0
            self._cond(status, "ScalingActive", "False", "ScalingDisabled",
                       "scaling is disabled since the replica count of the target is zero")
        elif current > max_replicas:
            desired, reason = max_replicas, "Current number of replicas above Spec.MaxReplicas"
        elif current < min_replicas:
            desired, reason = min_replicas, "Current number of replicas below Spec.MinReplicas"
        elif current == 0:
            desired, reason = 1, "Current number of replicas must be greater than 0"
        else:
            selector_text = (scale.get("status") or {}).get("selector") or ""
            try:
                proposal, metric_name, metrics = self._compute(hpa, current, selector_text, now)
            except MetricError as err:
                self._cond(status, "ScalingActive", "False", "FailedGetResourceMetric", str(err))
                self._event(hpa, "Warning", "FailedGetResourceMetric", str(err))
                self._event(hpa, "Warning", "FailedComputeMetricsReplicas",
                            f"invalid metrics (1 invalid out of {len(spec.get('metrics') or [])}), "
                            f"first error is: {err}")
                return
            status["currentMetrics"] = metrics
            self._cond(status, "ScalingActive", "True", "ValidMetricFound",
                       f"the HPA was able to successfully calculate a replica count from {metric_name}")
            desired = self._normalize(key, hpa, status, current, proposal, min_replicas, max_replicas, now)
            if desired > current:
                reason = f"{metric_name} above target"
            elif desired < current:
                reason = "All metrics below target"
        if desired != current:
            try:
                await self.client.patch(info.resource, ref.get("name", ""), {"spec": {"replicas": desired}}, ns,
                                        subresource="scale")
            except StatusError as err:
                self._cond(status, "AbleToScale", "False", "FailedUpdateScale",
                           f"the HPA controller was unable to update the target scale: {err.message}")
                self._event(hpa, "Warning", "FailedRescale",
                            f"New size: {desired}; reason: {reason}; error: {err.message}")
                return
            self._cond(status, "AbleToScale", "True", "SucceededRescale",
                       f"the HPA controller was able to update the target scale to {desired}")
            self._event(hpa, "Normal", "SuccessfulRescale", f"New size: {desired}; reason: {reason}")
            status["lastScaleTime"] = format_time(now)
            self.scale_events.setdefault(key, []).append(_Rec(desired - current, now))
        status["desiredReplicas"] = desired

    # ------------------------------------------------------------------ metrics

    def _compute(self, hpa: Obj, current: int, selector_text: str, now: float) -> tuple[int, str, list[Obj]]:
        """The largest proposal over all metrics, its metric's name, and currentMetrics."""
        try:
            selector = parse_label_selector(selector_text)
        except SelectorError as err:
            raise MetricError(f"couldn't convert selector into a corresponding internal selector object: {err}") from None
        pods = [p for p in self.pod_informer.list_by_index("namespace", namespace(hpa))
                if selector_text and selector.matches_object(p)]
        best, best_name, statuses = -1, "", []
        for metric in (hpa.get("spec") or {}).get("metrics") or ():
            if metric.get("type") not in ("Resource", "ContainerResource"):
                raise MetricError(f"unsupported metric type {metric.get('type')!r} (kconsole serves resource metrics only)")
            source = metric.get("resource") or metric.get("containerResource") or {}
            resource = source.get("name", "cpu")
            target = source.get("target") or {}
            replicas, current_status = self._resource_replicas(pods, resource, target, current, now)
            statuses.append({"type": "Resource", "resource": {"name": resource, "current": current_status}})
            if replicas > best:
                best, best_name = replicas, _reason_text(resource, target.get("type", "Utilization"))
        if best < 0:
            raise MetricError("no metrics to compute a replica count from")
        return best, best_name, statuses

    def _resource_replicas(self, pods: list[Obj], resource: str, target: Obj, current: int,
                           now: float) -> tuple[int, Obj]:
        annotation = USAGE_ANNOTATIONS.get(resource)
        if annotation is None:
            raise MetricError(f"failed to get {resource} resource metric value: no usage is published for it")
        usage: dict[str, float] = {}
        requests: dict[str, float] = {}
        ready = 0
        unready: set[str] = set()
        missing: set[str] = set()
        for pod in pods:
            pname = name(pod)
            phase = (pod.get("status") or {}).get("phase") or "Pending"
            if pod["metadata"].get("deletionTimestamp") or phase == "Failed":
                continue
            requests[pname] = self._request(pod, resource)
            if phase == "Pending":
                unready.add(pname)
                continue
            raw = (pod["metadata"].get("annotations") or {}).get(annotation)
            if raw is None:
                missing.add(pname)
                continue
            try:
                usage[pname] = float(parse_quantity(raw))
            except QuantityError:
                missing.add(pname)
                continue
            if resource == "cpu" and self._unready_for_cpu(pod, now):
                unready.add(pname)
                usage.pop(pname)
                continue
            ready += 1
        if not usage:
            raise MetricError(f"failed to get {resource} utilization: unable to get metrics for resource {resource}: "
                              "did not receive metrics for targeted pods (pods might be unready)")
        kind = target.get("type", "Utilization")
        if kind == "Utilization":
            goal = float(target.get("averageUtilization", 80))
            ratio, utilization = self._utilization_ratio(usage, requests, goal, resource)
            avg = sum(usage.values()) / len(usage)
            current_status = {"averageUtilization": int(utilization), "averageValue": format_quantity(_round_milli(avg))}
        else:
            goal = float(parse_quantity(target.get("averageValue", "0")))
            if goal <= 0:
                raise MetricError(f"invalid target averageValue for {resource}")
            avg = sum(usage.values()) / len(usage)
            ratio = avg / goal
            current_status = {"averageValue": format_quantity(_round_milli(avg))}
        scale_up_with_unready = bool(unready) and ratio > 1.0
        if not scale_up_with_unready and not missing:
            if abs(1.0 - ratio) <= self.tolerance:
                return current, current_status
            return math.ceil(ratio * ready), current_status
        if missing:
            for pname in missing:
                if ratio < 1.0:
                    fallback = max(100.0, goal) if kind == "Utilization" else None
                    usage[pname] = requests[pname] * fallback / 100 if fallback is not None else goal
                elif ratio > 1.0:
                    usage[pname] = 0.0
        if scale_up_with_unready:
            for pname in unready:
                usage[pname] = 0.0
        if kind == "Utilization":
            new_ratio, _ = self._utilization_ratio(usage, requests, goal, resource)
        else:
            new_ratio = (sum(usage.values()) / len(usage)) / goal
        if (abs(1.0 - new_ratio) <= self.tolerance or (ratio < 1.0 < new_ratio) or (ratio > 1.0 > new_ratio)):
            return current, current_status
        new = math.ceil(new_ratio * len(usage))
        if (new_ratio < 1.0 and new > current) or (new_ratio > 1.0 and new < current):
            return current, current_status
        return new, current_status

    @staticmethod
    def _request(pod: Obj, resource: str) -> float:
        total = 0.0
        for c in (pod.get("spec") or {}).get("containers") or ():
            req = ((c.get("resources") or {}).get("requests") or {}).get(resource)
            if req is None:
                raise MetricError(f"failed to get {resource} utilization: missing request for {resource} in container "
                                  f"{c.get('name')} of Pod {name(pod)}")
            total += float(parse_quantity(req))
        return total

    @staticmethod
    def _utilization_ratio(usage: dict[str, float], requests: dict[str, float], goal: float,
                           resource: str) -> tuple[float, float]:
        used = sum(usage.values())
        requested = sum(requests[p] for p in usage if p in requests)
        if requested <= 0:
            raise MetricError(f"failed to get {resource} utilization: no metrics returned matched known pods")
        utilization = used * 100 / requested
        return utilization / goal, utilization

    @staticmethod
    def _unready_for_cpu(pod: Obj, now: float) -> bool:
        """groupPods: ignore CPU samples of pods still starting up or never ready."""
        status = pod.get("status") or {}
        cond = get_condition(status, "Ready")
        start = status.get("startTime")
        if cond is None or not start:
            return True
        started = parse_time(start)
        since = parse_time(cond["lastTransitionTime"]) if cond.get("lastTransitionTime") else started
        if started + CPU_INITIALIZATION_PERIOD > now:
            return cond.get("status") == "False" or now < since + METRIC_WINDOW
        return cond.get("status") == "False" and started + INITIAL_READINESS_DELAY > since

    # ------------------------------------------------------------------ stabilisation and limits

    def _normalize(self, key: str, hpa: Obj, status: Obj, current: int, proposal: int, min_replicas: int,
                   max_replicas: int, now: float) -> int:
        behavior = (hpa.get("spec") or {}).get("behavior")
        up_window = 0.0
        down_window = self.downscale_window
        if behavior:
            up_window = float(((behavior.get("scaleUp") or {}).get("stabilizationWindowSeconds")) or 0)
            down_rules = behavior.get("scaleDown") or {}
            if down_rules.get("stabilizationWindowSeconds") is not None:
                down_window = float(down_rules["stabilizationWindowSeconds"])
        recs = self.recommendations.setdefault(key, [])
        longest = max(up_window, down_window)
        recs[:] = [r for r in recs if r.at >= now - longest]
        up_floor = min([proposal] + [r.replicas for r in recs if r.at >= now - up_window]) if up_window else proposal
        down_ceiling = max([proposal] + [r.replicas for r in recs if r.at >= now - down_window])
        recs.append(_Rec(proposal, now))
        stabilized = current
        if up_floor > current:
            stabilized = up_floor
        elif down_ceiling < current:
            stabilized = down_ceiling
        if stabilized != proposal and behavior and proposal >= current:
            self._cond(status, "AbleToScale", "True", "ScaleUpStabilized",
                       "recent recommendations were lower than current one, applying the lowest recent "
                       "recommendation")
        elif stabilized != proposal:
            self._cond(status, "AbleToScale", "True", "ScaleDownStabilized",
                       "recent recommendations were higher than current one, applying the highest recent "
                       "recommendation")
        else:
            self._cond(status, "AbleToScale", "True", "ReadyForNewScale", "recommended size matches current size")
        if behavior:
            desired, limit_reason, limit_msg = self._rate_limited(key, behavior, current, stabilized, min_replicas,
                                                                  max_replicas, now)
            self._cond(status, "ScalingLimited", "True" if desired != stabilized else "False", limit_reason,
                       limit_msg)
            return desired
        scale_up_limit = max(2 * current, 4)
        if max_replicas > scale_up_limit:
            ceiling, limit_reason, limit_msg = (scale_up_limit, "ScaleUpLimit",
                                                "the desired replica count is increasing faster than the maximum "
                                                "scale rate")
        else:
            ceiling, limit_reason, limit_msg = (max_replicas, "TooManyReplicas",
                                                "the desired replica count is more than the maximum replica count")
        if stabilized < min_replicas:
            desired, limit_reason, limit_msg = (min_replicas, "TooFewReplicas",
                                                "the desired replica count is less than the minimum replica count")
        elif stabilized > ceiling:
            desired = ceiling
        else:
            desired, limit_reason, limit_msg = (stabilized, "DesiredWithinRange",
                                                "the desired count is within the acceptable range")
        self._cond(status, "ScalingLimited", "True" if desired != stabilized else "False", limit_reason, limit_msg)
        return desired

    def _rate_limited(self, key: str, behavior: Obj, current: int, wanted: int, min_replicas: int,
                      max_replicas: int, now: float) -> tuple[int, str, str]:
        """convertDesiredReplicasWithBehaviorRate: ``wanted`` within the behavior's scaling policies."""
        events = self.scale_events.setdefault(key, [])
        longest = max([int(p.get("periodSeconds") or 0) for rules in (behavior.get("scaleUp"), behavior.get("scaleDown"))
                       for p in (rules or {}).get("policies") or ()] + [15, 1800])
        events[:] = [e for e in events if e.at > now - longest]
        if wanted > current:
            limit = self._policy_limit({**DEFAULT_SCALE_UP, **(behavior.get("scaleUp") or {})}, current, events, now, +1)
            limit = max(limit, current)
            if max_replicas > limit:
                allowed, reason, msg = (limit, "ScaleUpLimit",
                                        "the desired replica count is increasing faster than the maximum scale rate")
            else:
                allowed, reason, msg = (max_replicas, "TooManyReplicas",
                                        "the desired replica count is more than the maximum replica count")
            if wanted > allowed:
                return allowed, reason, msg
        elif wanted < current:
            limit = self._policy_limit({**DEFAULT_SCALE_DOWN, **(behavior.get("scaleDown") or {})}, current, events, now,
                                       -1)
            limit = min(limit, current)
            if min_replicas < limit:
                allowed, reason, msg = (limit, "ScaleDownLimit",
                                        "the desired replica count is decreasing faster than the maximum scale rate")
            else:
                allowed, reason, msg = (min_replicas, "TooFewReplicas",
                                        "the desired replica count is less than the minimum replica count")
            if wanted < allowed:
                return allowed, reason, msg
        return wanted, "DesiredWithinRange", "the desired count is within the acceptable range"

    @staticmethod
    def _policy_limit(rules: Obj, current: int, events: list[_Rec], now: float, direction: int) -> int:
        """calculateScaleUpLimitWithScalingRules / calculateScaleDownLimitWithBehaviors: each policy
        allows Pods or Percent more (fewer) than the replicas at the start of its period; selectPolicy
        Max takes the biggest change, Min the smallest, Disabled none."""
        select = rules.get("selectPolicy") or "Max"
        if select == "Disabled":
            return current
        proposals = []
        for policy in rules.get("policies") or ():
            since = now - int(policy.get("periodSeconds") or 0)
            added = sum(e.replicas for e in events if e.at > since and e.replicas > 0)
            removed = -sum(e.replicas for e in events if e.at > since and e.replicas < 0)
            start = current - added + removed
            value = int(policy.get("value") or 0)
            if policy.get("type") == "Pods":
                proposals.append(start + direction * value)
            elif direction > 0:
                proposals.append(math.ceil(start * (1 + value / 100)))
            else:
                proposals.append(int(start * (1 - value / 100)))
        if not proposals:
            return current
        biggest_change = max if direction > 0 else min
        smallest_change = min if direction > 0 else max
        return (biggest_change if select == "Max" else smallest_change)(proposals)

    # ------------------------------------------------------------------ status

    def _cond(self, status: Obj, cond_type: str, cond_status: str, reason: str, message: str) -> None:
        conds = status.setdefault("conditions", [])
        stamp = format_time(self.clock.now())
        for c in conds:
            if c.get("type") == cond_type:
                if c.get("status") != cond_status:
                    c["lastTransitionTime"] = stamp
                c.update({"status": cond_status, "reason": reason, "message": message})
                return
        conds.append({"type": cond_type, "status": cond_status, "lastTransitionTime": stamp,
                      "reason": reason, "message": message})

    async def _write_status(self, hpa: Obj, status: Obj) -> None:
        if generation(hpa):
            status["observedGeneration"] = generation(hpa)
        status.setdefault("desiredReplicas", status.get("currentReplicas", 0))
        await self.write_status(hpa, status, ignore=(404, 409))


def _round_milli(value: float) -> str:
    """A usage as a quantity string in whole milli-units, as metrics report it."""
    return f"{int(round(value * 1000))}m"
