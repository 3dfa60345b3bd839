"""The cluster heals itself: a lost node's pods move elsewhere, a lost controller-manager hands over."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from e2e_env import boot, condition, deployment, events_for, get_or_none, pods_of, running, shutdown, vclock

from kconsole.cluster import Cluster

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Cluster]:
    c = await boot(tmp_path_factory.mktemp("healing") / "data", nodes=3, control_planes=3)
    try:
        yield c
    finally:
        await shutdown(c)


async def app_running(cluster: Cluster, n: int) -> bool:
    return len(await running(cluster, "default", "app=app")) == n


async def test_stopped_controller_manager_hands_over_and_reconciling_goes_on(cluster: Cluster) -> None:
    clock = vclock(cluster)
    admin = cluster.api_client()
    await admin.create(deployment("app", "nginx:1.25", 3))
    await clock.run_until(lambda: app_running(cluster, 3), timeout=120, step=0.5)

    leaders = [m for m in cluster.controller_managers if m.is_leader]
    assert len(leaders) == 1
    old = leaders[0]
    lease = await admin.get("leases", "kube-controller-manager", "kube-system")
    old_holder = lease["spec"]["holderIdentity"]
    assert lease["spec"]["leaseDurationSeconds"] == 15
    await old.stop()
    victim = sorted(p["metadata"]["name"] for p in await running(cluster, "default", "app=app"))[0]
    await admin.delete("pods", victim, "default")

    async def handed_over() -> bool:
        current = await admin.get("leases", "kube-controller-manager", "kube-system")
        return current["spec"]["holderIdentity"] not in (old_holder, None, "")

    took = await clock.run_until(handed_over, timeout=60, step=0.5)
    assert took <= 15 + 2 + 2, f"the lease changed hands after {took:.1f} simulated s (lease 15 s, retry 2 s)"
    new = [m for m in cluster.controller_managers if m.is_leader]
    assert len(new) == 1 and new[0] is not old

    async def replaced() -> bool:
        names = {p["metadata"]["name"] for p in await running(cluster, "default", "app=app")}
        return len(names) == 3 and victim not in names

    await clock.run_until(replaced, timeout=60, step=0.5)
    await old.start()
    await clock.advance(20)
    assert sum(m.is_leader for m in cluster.controller_managers) == 1
    assert not old.is_leader, "a restarted replica stands by while the new leader renews"


async def test_lost_node_goes_unknown_then_its_pods_move(cluster: Cluster) -> None:
    clock = vclock(cluster)
    admin = cluster.api_client()
    await clock.run_until(lambda: app_running(cluster, 3), timeout=120, step=0.5)
    pods = await running(cluster, "default", "app=app")
    lost = pods[0]["spec"]["nodeName"]
    stranded = {p["metadata"]["name"] for p in pods if p["spec"]["nodeName"] == lost}
    await cluster.kubelets[lost].stop()

    async def node_unknown() -> bool:
        return condition(await get_or_none(cluster, "nodes", lost, None), "Ready") == "Unknown"

    took = await clock.run_until(node_unknown, timeout=120, step=0.5)
    assert 40 <= took <= 60, f"Ready=Unknown after {took:.1f} simulated s (grace period 50 s)"
    node = await admin.get("nodes", lost)
    taints = {(t["key"], t["effect"]) for t in node["spec"].get("taints") or []}
    assert ("node.kubernetes.io/unreachable", "NoSchedule") in taints
    ready = [c for c in node["status"]["conditions"] if c["type"] == "Ready"][0]
    assert ready["reason"] == "NodeStatusUnknown" and ready["message"] == "Kubelet stopped posting node status."
    node_events = await events_for(cluster, "", "Node", lost) + await events_for(cluster, "default", "Node", lost)
    assert any(e["reason"] == "NodeNotReady" and e["source"]["component"] == "node-controller"
               for e in node_events), [e["reason"] for e in node_events]
    for name in stranded:
        pod = await admin.get("pods", name, "default")
        assert condition(pod, "Ready") == "False", "pods on a lost node are marked not ready"

    async def evicted() -> bool:
        current = {p["metadata"]["name"] for p in await pods_of(cluster, "default", "app=app")}
        return not stranded & current

    took = await clock.run_until(evicted, timeout=400, step=1)
    assert 290 <= took <= 320, f"pods evicted {took:.0f} simulated s after Ready=Unknown (tolerationSeconds 300)"
    for name in stranded:
        reasons = [(e["reason"], e["source"]["component"]) for e in await events_for(cluster, "default", "Pod", name)]
        assert ("TaintManagerEviction", "taint-eviction-controller") in reasons, reasons

    await clock.run_until(lambda: app_running(cluster, 3), timeout=120, step=0.5)
    now = await running(cluster, "default", "app=app")
    assert all(p["spec"]["nodeName"] != lost for p in now)
    assert not stranded & {p["metadata"]["name"] for p in now}
    left = [p for p in await admin.list_all("pods", "default", label_selector="app=app")
            if p["metadata"]["name"] in stranded]
    assert left and all(p["metadata"].get("deletionTimestamp") for p in left), \
        "evicted pods stay Terminating while their node cannot confirm"


async def test_node_that_comes_back_is_ready_untainted_and_finishes_evictions(cluster: Cluster) -> None:
    clock = vclock(cluster)
    admin = cluster.api_client()
    lost = next(n for n, k in cluster.kubelets.items() if not k.running)
    await cluster.kubelets[lost].start()

    async def recovered() -> bool:
        node = await admin.get("nodes", lost)
        return condition(node, "Ready") == "True" and not node["spec"].get("taints")

    took = await clock.run_until(recovered, timeout=60, step=0.5)
    assert took <= 20, f"the node was Ready and untainted {took:.1f} simulated s after its kubelet came back"

    async def evictions_done() -> bool:
        pods = await admin.list_all("pods", "default", field_selector=f"spec.nodeName={lost}")
        return not pods

    await clock.run_until(evictions_done, timeout=60, step=0.5)
    assert len(await running(cluster, "default", "app=app")) == 3


async def test_stopped_scheduler_leader_hands_over_and_pending_pods_get_placed(cluster: Cluster) -> None:
    clock = vclock(cluster)
    admin = cluster.api_client()
    old = next(s for s in cluster.schedulers if s.is_leader)
    old_holder = (await admin.get("leases", "kube-scheduler", "kube-system"))["spec"]["holderIdentity"]
    await old.stop()
    await admin.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "late", "namespace": "default"},
                        "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}})

    async def late_running() -> bool:
        pod = await get_or_none(cluster, "pods", "late")
        return pod is not None and (pod.get("status") or {}).get("phase") == "Running"

    took = await clock.run_until(late_running, timeout=120, step=0.5)
    assert took <= 15 + 2 + 2 + 15, f"the pod ran {took:.1f} simulated s after the scheduler leader stopped"
    lease = await admin.get("leases", "kube-scheduler", "kube-system")
    assert lease["spec"]["holderIdentity"] != old_holder
    scheduled = [e for e in await events_for(cluster, "default", "Pod", "late") if e["reason"] == "Scheduled"]
    assert len(scheduled) == 1 and scheduled[0]["source"]["component"] == "default-scheduler"
    await old.start()
