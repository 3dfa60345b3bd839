"""The scheduler inside the whole cluster: what a user sees when a pod does not fit, and when it does."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from e2e_env import Obj, boot, deployment, events_for, phase, running, shutdown, vclock

from kconsole.cluster import Cluster
from kconsole.nodes import NodeConfig
from kconsole.nodes.config import address_for, pod_cidr_for
from kconsole.scheduler.decisions import node_rows

pytestmark = pytest.mark.asyncio(loop_scope="module")

TOO_BIG = ("0/4 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, "
           "3 Insufficient cpu. preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, "
           "3 No preemption victims found for incoming pod..")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Cluster]:
    c = await boot(tmp_path_factory.mktemp("scheduling") / "data", nodes=3, control_planes=1)
    try:
        yield c
    finally:
        await shutdown(c)


def pod_condition(pod: Obj, ctype: str) -> Obj:
    return next((c for c in (pod.get("status") or {}).get("conditions") or [] if c["type"] == ctype), {})


async def decisions(cluster: Cluster, pod: str) -> list[Obj]:
    records = await cluster.api_client().list_all("schedulingdecisions", "default",
                                                  label_selector=f"kconsole.dev/pod={pod}")
    return sorted(records, key=lambda r: int(r["spec"]["attempt"]))


async def test_pod_too_big_waits_pending_then_runs_on_a_node_that_joins(cluster: Cluster) -> None:
    clock = vclock(cluster)
    admin = cluster.api_client()
    await admin.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big", "namespace": "default"},
                        "spec": {"containers": [{"name": "app", "image": "nginx:1.25",
                                                 "resources": {"requests": {"cpu": "8", "memory": "1Gi"}}}]}})

    async def failed_scheduling() -> bool:
        return any(e["reason"] == "FailedScheduling" for e in await events_for(cluster, "default", "Pod", "big"))

    await clock.run_until(failed_scheduling, timeout=30, step=0.5)
    await clock.advance(60)
    pod = await admin.get("pods", "big", "default")
    assert phase(pod) == "Pending" and not pod["spec"].get("nodeName")
    cond = pod_condition(pod, "PodScheduled")
    assert (cond.get("status"), cond.get("reason"), cond.get("message")) == ("False", "Unschedulable", TOO_BIG)
    failed = [e for e in await events_for(cluster, "default", "Pod", "big") if e["reason"] == "FailedScheduling"]
    assert {(e["type"], e["source"]["component"], e["message"]) for e in failed} == {
        ("Warning", "default-scheduler", TOO_BIG)}
    record = (await decisions(cluster, "big"))[-1]
    assert record["status"]["result"] == "Unschedulable" and record["status"]["message"] == TOO_BIG
    rows = {r["node"]: r for r in node_rows(record)}
    assert sorted(rows) == ["control-plane", "worker-1", "worker-2", "worker-3"]
    assert all(rows[f"worker-{i}"]["reasons"] == ["Insufficient cpu"] for i in (1, 2, 3))
    assert rows["control-plane"]["plugin"] == "TaintToleration"

    await cluster.node_pool.add_node(NodeConfig(name="big-1", cpu="16", memory="64Gi", zone="zone-a",
                                                pod_cidr=pod_cidr_for(20), address=address_for(20)))

    async def big_running() -> bool:
        return phase(await admin.get("pods", "big", "default")) == "Running"

    took = await clock.run_until(big_running, timeout=120, step=0.5)
    assert took <= 60, f"the pod ran {took:.1f} simulated s after a big enough node joined"
    pod = await admin.get("pods", "big", "default")
    assert pod["spec"]["nodeName"] == "big-1"
    assert pod_condition(pod, "PodScheduled").get("status") == "True"
    scheduled = [e for e in await events_for(cluster, "default", "Pod", "big") if e["reason"] == "Scheduled"]
    assert [e["message"] for e in scheduled] == ["Successfully assigned default/big to big-1"]
    last = (await decisions(cluster, "big"))[-1]
    assert (last["status"]["result"], last["status"]["node"]) == ("Scheduled", "big-1")
    rows = {r["node"]: r for r in node_rows(last)}
    assert rows["big-1"]["passed"] and rows["big-1"]["filter"] == "passed", "the winner is in the record"
    assert [n for n, r in rows.items() if r["passed"]] == ["big-1"]
    assert last["status"]["nodes"]["feasible"] == 1


async def test_cordoned_node_gets_no_new_pods(cluster: Cluster) -> None:
    clock = vclock(cluster)
    admin = cluster.api_client()
    await admin.patch("nodes", "worker-1", {"spec": {"unschedulable": True}})
    await admin.create(deployment("spread", "nginx:1.25", 4))

    async def four_running() -> bool:
        return len(await running(cluster, "default", "app=spread")) == 4

    await clock.run_until(four_running, timeout=120, step=0.5)
    nodes = {p["spec"]["nodeName"] for p in await running(cluster, "default", "app=spread")}
    assert "worker-1" not in nodes and "control-plane" not in nodes
    assert len(nodes) >= 2, f"pods should spread over the schedulable nodes, got {nodes}"
    for pod in await running(cluster, "default", "app=spread"):
        record = (await decisions(cluster, pod["metadata"]["name"]))[-1]
        rows = {r["node"]: r for r in node_rows(record)}
        assert rows["worker-1"]["plugin"] == "NodeUnschedulable"
        assert rows["worker-1"]["reasons"] == ["node(s) were unschedulable"]
        winner = max((r for r in rows.values() if r["passed"]), key=lambda r: r["total"])
        assert winner["total"] == max(r["total"] for r in rows.values() if r["passed"])
        assert record["status"]["node"] == pod["spec"]["nodeName"]
        assert rows[pod["spec"]["nodeName"]]["total"] == winner["total"]
    await admin.patch("nodes", "worker-1", {"spec": {"unschedulable": False}})


async def test_high_priority_pod_preempts_a_running_low_priority_one(cluster: Cluster) -> None:
    clock = vclock(cluster)
    admin = cluster.api_client()
    await admin.create({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                        "metadata": {"name": "urgent"}, "value": 1000})
    pinned = {"kubernetes.io/hostname": "big-1"}

    def pod(name: str, cpu: str, **spec: str) -> Obj:
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                "spec": {"nodeSelector": pinned, **spec, "containers": [
                    {"name": "app", "image": "nginx:1.25", "resources": {"requests": {"cpu": cpu}}}]}}

    await admin.create(pod("low", "6"))

    async def is_running(name: str) -> bool:
        p = await admin.get("pods", name, "default")
        return phase(p) == "Running" and not p["metadata"].get("deletionTimestamp")

    await clock.run_until(lambda: is_running("low"), timeout=60, step=0.5)
    await admin.create(pod("high", "4", priorityClassName="urgent"))

    async def high_running() -> bool:
        return phase(await admin.get("pods", "high", "default")) == "Running"

    took = await clock.run_until(high_running, timeout=120, step=0.5)
    assert took <= 45, f"the preemptor ran {took:.1f} simulated s after it was created"
    high = await admin.get("pods", "high", "default")
    assert high["spec"]["nodeName"] == "big-1" and high["spec"]["priority"] == 1000
    assert await is_running("big"), "the equal-priority pod that started first is reprieved"
    low_events = await events_for(cluster, "default", "Pod", "low")
    preempted = [e for e in low_events if e["reason"] == "Preempted"]
    assert len(preempted) == 1 and preempted[0]["source"]["component"] == "default-scheduler"
    assert preempted[0]["message"].startswith("Preempted by ") and preempted[0]["message"].endswith("on node big-1")
    failed = [e["message"] for e in await events_for(cluster, "default", "Pod", "high")
              if e["reason"] == "FailedScheduling"]
    assert failed and "Insufficient cpu" in failed[0]
    records = await decisions(cluster, "high")
    assert any(r["status"].get("nominatedNode") == "big-1" and r["status"].get("victims") == ["default/low"]
               for r in records), [r["status"] for r in records]
    assert records[-1]["status"]["node"] == "big-1"


async def test_daemonset_follows_a_node_that_joins(cluster: Cluster) -> None:
    clock = vclock(cluster)
    admin = cluster.api_client()
    await admin.create({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": "default"},
                        "spec": {"selector": {"matchLabels": {"app": "agent"}},
                                 "template": {"metadata": {"labels": {"app": "agent"}},
                                              "spec": {"containers": [{"name": "agent", "image": "nginx:1.25"}]}}}})

    async def on_nodes() -> set[str]:
        return {p["spec"]["nodeName"] for p in await running(cluster, "default", "app=agent")}

    workers = {"worker-1", "worker-2", "worker-3", "big-1"}
    await clock.run_until(lambda: _equals(on_nodes(), workers), timeout=60, step=0.5)
    await cluster.node_pool.add_node(NodeConfig(name="late-1", zone="zone-b", pod_cidr=pod_cidr_for(21),
                                                address=address_for(21)))
    took = await clock.run_until(lambda: _equals(on_nodes(), workers | {"late-1"}), timeout=60, step=0.5)
    assert took <= 30, f"the daemon pod ran {took:.1f} simulated s after its node joined"
    ds = await admin.get("daemonsets", "agent", "default")
    assert (ds["status"]["desiredNumberScheduled"], ds["status"]["numberReady"]) == (5, 5)


async def _equals(aw: object, want: set[str]) -> bool:
    return await aw == want  # type: ignore[misc]
