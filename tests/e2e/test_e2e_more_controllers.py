"""StatefulSet order, HPA under load and graceful termination, through the whole cluster."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from e2e_env import Obj, boot, condition, events_for, get_or_none, phase, running, shutdown, vclock

from kconsole.cluster import Cluster

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Cluster]:
    c = await boot(tmp_path_factory.mktemp("more") / "data", nodes=3, control_planes=1)
    try:
        yield c
    finally:
        await shutdown(c)


async def test_statefulset_starts_pods_in_order_each_after_the_previous_is_ready(cluster: Cluster) -> None:
    clock = vclock(cluster)
    admin = cluster.api_client()
    await admin.create({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "default"},
                        "spec": {"replicas": 3, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                                 "template": {"metadata": {"labels": {"app": "db"}},
                                              "spec": {"containers": [{"name": "db", "image": "redis:7"}]}}}})
    created: dict[str, float] = {}
    ready_at: dict[str, float] = {}

    async def all_ready() -> bool:
        for p in await admin.list_all("pods", "default", label_selector="app=db"):
            n = p["metadata"]["name"]
            created.setdefault(n, clock.now())
            if condition(p, "Ready") == "True":
                ready_at.setdefault(n, clock.now())
        return len(ready_at) == 3

    await clock.run_until(all_ready, timeout=120, step=0.25)
    assert sorted(created) == ["db-0", "db-1", "db-2"]
    assert created["db-1"] >= ready_at["db-0"] and created["db-2"] >= ready_at["db-1"], (created, ready_at)
    creates = [e["message"] for e in await events_for(cluster, "default", "StatefulSet", "db")
               if e["reason"] == "SuccessfulCreate"]
    assert creates == [f"create Pod db-{i} in StatefulSet db successful" for i in range(3)]


async def test_hpa_scales_a_loaded_deployment_up(cluster: Cluster) -> None:
    clock = vclock(cluster)
    admin = cluster.api_client()
    await admin.create({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api", "namespace": "default"},
                        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "api"}},
                                 "template": {"metadata": {"labels": {"app": "api"}}, "spec": {"containers": [
                                     {"name": "api", "image": "nginx:1.25",
                                      "resources": {"requests": {"cpu": "200m"}}}]}}}})
    await admin.create({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                        "metadata": {"name": "api", "namespace": "default"},
                        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "api"},
                                 "minReplicas": 2, "maxReplicas": 6, "metrics": [{"type": "Resource", "resource": {
                                     "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}]}})

    async def n_running(n: int) -> bool:
        return len(await running(cluster, "default", "app=api")) == n

    await clock.run_until(lambda: n_running(2), timeout=60, step=0.5)
    for pod in await running(cluster, "default", "app=api"):
        cluster.kubelets[pod["spec"]["nodeName"]].set_load("default", pod["metadata"]["name"], 1.0)

    took = await clock.run_until(lambda: n_running(4), timeout=180, step=1)
    assert took <= 90, f"HPA took {took:.0f} simulated s to react to 200% of target"
    hpa = await admin.get("horizontalpodautoscalers", "api", "default")
    assert hpa["status"]["desiredReplicas"] >= 4
    rescale = [e for e in await events_for(cluster, "default", "HorizontalPodAutoscaler", "api")
               if e["reason"] == "SuccessfulRescale"]
    assert rescale and rescale[0]["message"] == (
        "New size: 4; reason: cpu resource utilization (percentage of request) above target")
    await admin.delete("horizontalpodautoscalers", "api", "default")


def shell_pod(name: str, grace: int) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"terminationGracePeriodSeconds": grace, "containers": [
                {"name": "sh", "image": "busybox:1.36", "command": ["sleep", "infinity"]}]}}


async def test_graceful_termination_waits_for_the_grace_period(cluster: Cluster) -> None:
    clock = vclock(cluster)
    admin = cluster.api_client()
    await admin.create(shell_pod("stubborn", 20))

    async def stubborn_running() -> bool:
        return phase(await admin.get("pods", "stubborn", "default")) == "Running"

    await clock.run_until(stubborn_running, timeout=60, step=0.5)
    deleting = await admin.delete("pods", "stubborn", "default")
    assert deleting["metadata"]["deletionGracePeriodSeconds"] == 20

    async def gone() -> bool:
        return await get_or_none(cluster, "pods", "stubborn") is None

    took = await clock.run_until(gone, timeout=60, step=0.5)
    assert 19 <= took <= 25, f"a container ignoring SIGTERM was gone after {took:.1f} simulated s (grace 20 s)"
    killing = [e for e in await events_for(cluster, "default", "Pod", "stubborn") if e["reason"] == "Killing"]
    assert killing and killing[0]["message"] == "Stopping container sh"


async def test_partitioned_node_keeps_its_statefulset_pod_until_it_can_confirm(cluster: Cluster) -> None:
    clock = vclock(cluster)
    admin = cluster.api_client()
    db1 = await admin.get("pods", "db-1", "default")
    node, uid = db1["spec"]["nodeName"], db1["metadata"]["uid"]
    kubelet = cluster.kubelets[node]
    kubelet.partition()

    async def node_unknown() -> bool:
        return condition(await admin.get("nodes", node), "Ready") == "Unknown"

    took = await clock.run_until(node_unknown, timeout=120, step=1)
    assert 40 <= took <= 60

    async def marked_for_deletion() -> bool:
        return bool((await admin.get("pods", "db-1", "default"))["metadata"].get("deletionTimestamp"))

    took = await clock.run_until(marked_for_deletion, timeout=400, step=1)
    assert 290 <= took <= 320
    await clock.advance(60)
    same = await admin.get("pods", "db-1", "default")
    assert same["metadata"]["uid"] == uid, "a StatefulSet never runs two db-1 at once"
    assert "default/db-1" in kubelet.pods, "the partitioned node's container keeps running"

    kubelet.heal()

    async def replaced_and_running() -> bool:
        pod = await get_or_none(cluster, "pods", "db-1")
        return pod is not None and pod["metadata"]["uid"] != uid and phase(pod) == "Running"

    await clock.run_until(replaced_and_running, timeout=120, step=0.5)
    replacement = (await admin.get("pods", "db-1", "default"))["metadata"]["uid"]
    await clock.advance(30)
    settled = await admin.get("pods", "db-1", "default")
    assert settled["metadata"]["uid"] == replacement and phase(settled) == "Running", \
        "a replacement landing on the healed node must not be evicted by the taints it is losing"
    assert condition(await admin.get("nodes", node), "Ready") == "True"
    assert not (await admin.get("nodes", node))["spec"].get("taints")
