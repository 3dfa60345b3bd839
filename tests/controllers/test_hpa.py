"""HorizontalPodAutoscaler with the Deployment and ReplicaSet controllers; the test publishes pod
CPU usage the way the simulated kubelet does (the ``kconsole.dev/cpu-usage`` annotation)."""

from __future__ import annotations

from typing import Any

from workload_env import Env, pod_template, wl  # noqa: F401 - wl is the fixture

from kconsole.controllers.deployment import DeploymentController
from kconsole.controllers.hpa import HorizontalController
from kconsole.controllers.replicaset import ReplicaSetController

Obj = dict[str, Any]


def deployment(name: str, replicas: int, cpu: str | None = "200m") -> Obj:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": pod_template(labels, cpu=cpu)}}


def hpa(name: str, target: int = 50, lo: int = 1, hi: int = 10) -> Obj:
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
                     "minReplicas": lo, "maxReplicas": hi,
                     "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                         "type": "Utilization", "averageUtilization": target}}}]}}


async def set_usage(wl: Env, usage: str) -> None:
    for p in await wl.pods():
        await wl.admin.patch("pods", p["metadata"]["name"],
                             {"metadata": {"annotations": {"kconsole.dev/cpu-usage": usage}}}, "default")


async def replicas(wl: Env, name: str) -> int:
    return int((await wl.get("deployments", name))["spec"]["replicas"])


async def test_scales_up_on_cpu_and_down_after_the_stabilisation_window(wl: Env) -> None:
    await wl.start(DeploymentController, ReplicaSetController, HorizontalController)
    await wl.runner(ready_after=1)
    await wl.admin.create(deployment("web", 2))
    await wl.clock.advance(40)  # pods ready for longer than the metric window
    await set_usage(wl, "200m")  # 100 % of request against a 50 % target
    await wl.admin.create(hpa("web"))
    await wl.wait(lambda: _equals(replicas(wl, "web"), 4), timeout=30)
    rescale = await wl.events("SuccessfulRescale")
    assert [(e["message"], e["source"]["component"]) for e in rescale] == [
        ("New size: 4; reason: cpu resource utilization (percentage of request) above target",
         "horizontal-pod-autoscaler")]
    h = await wl.get("horizontalpodautoscalers", "web")
    assert h["status"]["currentMetrics"][0]["resource"]["current"]["averageUtilization"] == 100
    assert h["status"]["desiredReplicas"] == 4 and h["status"]["lastScaleTime"]

    await wl.clock.advance(40)
    await set_usage(wl, "105m")  # 52.5 %: within the 0.1 tolerance of 50 %, nothing moves
    await wl.clock.advance(60)
    assert await replicas(wl, "web") == 4
    await set_usage(wl, "20m")  # 10 %: wants 1, but the last 300 s recommended 4
    dropped = wl.clock.now()
    took = await wl.wait(lambda: _equals(replicas(wl, "web"), 1), timeout=400, step=5)
    assert 240 <= took <= 320, took
    assert wl.clock.now() - dropped == took
    messages = [e["message"] for e in await wl.events("SuccessfulRescale")]
    assert messages[-1] == "New size: 1; reason: All metrics below target"


async def test_pods_without_cpu_requests_report_a_metric_failure(wl: Env) -> None:
    await wl.start(DeploymentController, ReplicaSetController, HorizontalController)
    await wl.runner(ready_after=1)
    await wl.admin.create(deployment("nocpu", 1, cpu=None))
    await wl.clock.advance(40)
    await set_usage(wl, "100m")
    await wl.admin.create(hpa("nocpu"))
    await wl.clock.advance(16)
    h = await wl.get("horizontalpodautoscalers", "nocpu")
    active = next(c for c in h["status"]["conditions"] if c["type"] == "ScalingActive")
    assert active["status"] == "False" and "missing request for cpu in container app" in active["message"]
    assert await wl.events("FailedGetResourceMetric")
    assert await replicas(wl, "nocpu") == 1


async def _equals(aw: Any, want: int) -> bool:
    return await aw == want


async def test_behavior_policies_limit_the_rate_and_a_disabled_scale_down_never_happens(wl: Env) -> None:
    await wl.start(DeploymentController, ReplicaSetController, HorizontalController)
    await wl.runner(ready_after=1)
    await wl.admin.create(deployment("web", 2))
    await wl.clock.advance(40)
    await set_usage(wl, "200m")  # 100 % of request against 50 %: wants 4 at once
    h = hpa("web")
    h["spec"]["behavior"] = {"scaleUp": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]},
                             "scaleDown": {"selectPolicy": "Disabled"}}
    seen: list[tuple[float, int]] = [(wl.clock.now(), 2)]
    await wl.admin.create(h)

    async def busy_until_four() -> bool:
        await set_usage(wl, "200m")
        n = await replicas(wl, "web")
        if not seen or seen[-1][1] != n:
            seen.append((wl.clock.now(), n))
        return n == 4

    await wl.clock.run_until(busy_until_four, 200, step=5)
    assert [n for _, n in seen] == [2, 3, 4]
    assert 55 <= seen[2][0] - seen[1][0] <= 80  # one pod per 60 s, seen every 5 s
    limited = next(c for c in (await wl.get("horizontalpodautoscalers", "web"))["status"]["conditions"]
                   if c["type"] == "ScalingLimited")
    assert limited["reason"] in ("ScaleUpLimit", "DesiredWithinRange")
    await set_usage(wl, "20m")
    await wl.clock.advance(400)
    assert await replicas(wl, "web") == 4
    limited = next(c for c in (await wl.get("horizontalpodautoscalers", "web"))["status"]["conditions"]
                   if c["type"] == "ScalingLimited")
    assert (limited["status"], limited["reason"]) == ("True", "ScaleDownLimit")
