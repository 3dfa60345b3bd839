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
