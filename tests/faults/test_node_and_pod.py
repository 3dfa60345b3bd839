"""Node and pod faults through the simulated kubelets and the API, with upstream's reactions."""

from __future__ import annotations

from typing import Any

import pytest
from fault_env import condition, fault_events, pod, running_pod, vclock

from kconsole.cluster import Cluster
from kconsole.faults import FaultError
from kconsole.objects.quantity import parse_quantity


async def node(cluster: Cluster, name: str) -> dict[str, Any]:
    return await cluster.api_client().get("nodes", name)


def container_status(p: dict[str, Any] | None) -> dict[str, Any]:
    return (((p or {}).get("status") or {}).get("containerStatuses") or [{}])[0]


async def test_crash_loop_backs_off_and_heals(cluster: Cluster) -> None:
    faults, clock = cluster.faults, vclock(cluster)
    assert faults is not None
    await running_pod(cluster, "web")
    fault = await faults.apply("crash-loop", "default/web")

    async def looping() -> bool:
        st = container_status(await pod(cluster, "web"))
        return int(st.get("restartCount") or 0) >= 2 and \
            (st.get("state") or {}).get("waiting", {}).get("reason") == "CrashLoopBackOff"

    await clock.run_until(looping, timeout=120, step=1)
    backoffs = [e for e in await cluster.api_client().list_all("events", "default")
                if e["reason"] == "BackOff" and e["involvedObject"]["name"] == "web"]
    assert backoffs and backoffs[0]["source"]["component"] == "kubelet"
    assert condition(await pod(cluster, "web"), "Ready") == "False"

    await faults.heal(fault.id)

    async def steady() -> bool:
        p = await pod(cluster, "web")
        return "running" in (container_status(p).get("state") or {}) and condition(p, "Ready") == "True"

    await clock.run_until(steady, timeout=400, step=2)
    [event] = await fault_events(cluster, "FaultInjected")
    assert event["involvedObject"]["kind"] == "Pod" and event["involvedObject"]["name"] == "web"
    assert event["involvedObject"]["uid"]


async def test_readiness_failure_container_kill_and_pod_kill(cluster: Cluster) -> None:
    faults, clock = cluster.faults, vclock(cluster)
    assert faults is not None
    await running_pod(cluster, "api", readinessProbe={"httpGet": {"path": "/", "port": 80}, "periodSeconds": 5})
    await clock.run_until(lambda: _ready(cluster, "api", "True"), timeout=60, step=1)

    fault = await faults.apply("readiness-fail", "api")
    await clock.run_until(lambda: _ready(cluster, "api", "False"), timeout=60, step=1)
    assert int(container_status(await pod(cluster, "api")).get("restartCount") or 0) == 0  # not restarted
    await faults.heal(fault.id)
    await clock.run_until(lambda: _ready(cluster, "api", "True"), timeout=60, step=1)

    load = await faults.apply("cpu-load", "api", {"load": "3"})
    assert load.detail == "cpu usage 3x its idle usage (no CPU request)", "the pod requests no CPU"
    await faults.heal(load.id)

    kill = await faults.apply("container-kill", "default/api")
    assert kill.id not in faults.active  # one-shot: nothing to heal

    async def restarted() -> bool:
        return int(container_status(await pod(cluster, "api")).get("restartCount") or 0) == 1

    await clock.run_until(restarted, timeout=60, step=1)

    await faults.apply("pod-kill", "default/api")
    assert await pod(cluster, "api") is None
    assert [e["involvedObject"]["name"] for e in await fault_events(cluster, "FaultInjected")] == ["api"] * 4


async def test_cordon_drain_and_uncordon_go_through_the_api(cluster: Cluster) -> None:
    faults, clock = cluster.faults, vclock(cluster)
    assert faults is not None
    await running_pod(cluster, "victim", node="worker-2")
    cordon = await faults.apply("cordon", "worker-1")
    assert (await node(cluster, "worker-1"))["spec"]["unschedulable"] is True
    await faults.heal(cordon.id)
    assert not (await node(cluster, "worker-1"))["spec"].get("unschedulable")

    on_node = await cluster.api_client().list_all("pods", field_selector="spec.nodeName=worker-2")
    by_daemonset = [p["metadata"]["name"] for p in on_node
                    if any(o["kind"] == "DaemonSet" for o in p["metadata"].get("ownerReferences") or [])]
    assert [n for n in by_daemonset if n.startswith("kube-proxy-")], "the kube-proxy addon runs on every node"
    drain = await faults.apply("drain", "worker-2")
    assert drain.detail == f"evicted {len(on_node) - len(by_daemonset)} pod(s)"  # victim and any CoreDNS replica
    empty = await faults.apply("drain", "control-plane-0")
    assert empty.detail == "no pods to evict"  # not 'evicting 0 pod(s)', forever
    await faults.heal(empty.id)
    assert (await node(cluster, "worker-2"))["spec"]["unschedulable"] is True
    await clock.run_until(lambda: _gone(cluster, "victim"), timeout=60, step=1)
    left = await cluster.api_client().list_all("pods", field_selector="spec.nodeName=worker-2")
    assert sorted(p["metadata"]["name"] for p in left) == sorted(by_daemonset), "--ignore-daemonsets"
    audit = [r for r in cluster.api.audit_recent(500) if r.resource == "pods/eviction"]  # type: ignore[union-attr]
    assert audit and audit[-1].user == "system:kconsole-console" and audit[-1].code == 201
    await faults.apply("uncordon", "worker-2")
    assert not (await node(cluster, "worker-2"))["spec"].get("unschedulable")
    await faults.heal(drain.id)
    events = await fault_events(cluster)
    assert sorted((e["reason"], e["involvedObject"]["kind"]) for e in events) == [
        ("FaultHealed", "Node")] * 3 + [("FaultInjected", "Node")] * 4


async def test_pressure_and_kubelet_stop(cluster: Cluster) -> None:
    faults, clock = cluster.faults, vclock(cluster)
    assert faults is not None
    pressure = await faults.apply("memory-pressure", "worker-1")

    async def memory(want: str) -> bool:
        return condition(await node(cluster, "worker-1"), "MemoryPressure") == want

    await clock.run_until(lambda: memory("True"), timeout=30, step=1)
    taints = {t["key"] for t in (await node(cluster, "worker-1"))["spec"].get("taints") or []}
    assert "node.kubernetes.io/memory-pressure" in taints
    await faults.heal(pressure.id)
    await clock.run_until(lambda: memory("False"), timeout=30, step=1)

    stopped = await faults.apply("kubelet-stop", "worker-2")
    try:
        await faults.apply("kubelet-stop", "worker-2")
    except FaultError as err:  # a second copy would be undone by healing either one
        assert str(err) == (f"kubelet-stop is already active on worker-2 as {stopped.id}; heal it first "
                            f"(kconsole fault heal {stopped.id})")
    else:
        raise AssertionError("the same fault was applied twice to one node")
    assert list(faults.active) == [stopped.id]

    async def ready(want: str) -> bool:
        return condition(await node(cluster, "worker-2"), "Ready") == want

    took = await clock.run_until(lambda: ready("Unknown"), timeout=120, step=1)
    assert 40 <= took <= 70  # node-monitor-grace-period 50 s after the last renewal
    await faults.heal(stopped.id)
    await clock.run_until(lambda: ready("True"), timeout=60, step=1)
    for kubelet in cluster.kubelets.values():
        if kubelet.recorder is not None:
            await kubelet.recorder.flush()
    said = sorted((e["involvedObject"]["name"], e["reason"], e["message"], e["count"])
                  for e in await cluster.api_client().list_all("events", "default")
                  if e["involvedObject"]["kind"] == "Node" and e["source"]["component"] == "kubelet"
                  and e["involvedObject"]["name"].startswith("worker-"))

    def status(node_name: str, reason: str, count: int = 1) -> tuple[str, str, str, int]:
        return node_name, reason, f"Node {node_name} status is now: {reason}", count

    def started(node_name: str) -> list[tuple[str, str, str, int]]:
        return [(node_name, "NodeAllocatableEnforced", "Updated Node Allocatable limit across pods", 1),
                (node_name, "Starting", "Starting kubelet.", 1)]

    assert said == sorted([
        # start, and registration: the new node's pressure conditions go from Unknown to healthy
        *started("worker-1"), status("worker-1", "NodeHasNoDiskPressure"), status("worker-1", "NodeHasSufficientPID"),
        # pressure on, and off again (the same message as at registration: counted on that event)
        status("worker-1", "NodeHasInsufficientMemory"), status("worker-1", "NodeHasSufficientMemory", 2),
        *started("worker-2"), status("worker-2", "NodeHasNoDiskPressure"), status("worker-2", "NodeHasSufficientMemory"),
        status("worker-2", "NodeHasSufficientPID"),
        # restarted (a new recorder: new events), back from the Unknown the node controller set meanwhile
        *started("worker-2"), status("worker-2", "NodeHasNoDiskPressure"), status("worker-2", "NodeHasSufficientMemory"),
        status("worker-2", "NodeHasSufficientPID"), status("worker-2", "NodeReady")])


async def _ready(cluster: Cluster, name: str, want: str) -> bool:
    return condition(await pod(cluster, name), "Ready") == want


async def _gone(cluster: Cluster, name: str) -> bool:
    return await pod(cluster, name) is None


async def test_top_shows_the_control_plane_and_system_usage_and_loses_a_stopped_kubelets_node(
        cluster: Cluster) -> None:
    """As on a fresh kubeadm cluster: ``kubectl top pods -A`` lists the static pods, every node uses
    something outside pods; a node whose kubelet stopped has no metrics once it is not Ready."""
    faults, admin, clock = cluster.faults, cluster.api_client(), vclock(cluster)
    assert faults is not None
    await clock.advance(20)  # one usage period
    system = {p["metadata"]["name"]: p["containers"][0]["usage"]
              for p in await admin.list_all("pods.metrics.k8s.io", "kube-system")}
    node_of = {p["metadata"]["name"]: p["spec"]["nodeName"] for p in await admin.list_all("pods", "kube-system")}
    static = sorted(f"{component}-control-plane-{i}" for i in range(3)
                    for component in ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"))
    addons = sorted(n for n in system if n not in static)
    assert sorted(set(system) - set(addons)) == static
    coredns = [n for n in addons if n.startswith("coredns-")]
    assert len(coredns) == 2 and len(addons) - len(coredns) == 5, addons  # two replicas; kube-proxy on every node
    assert all(n.startswith("kube-proxy-") for n in addons if n not in coredns)
    assert all(parse_quantity(u["cpu"]) > 0 and parse_quantity(u["memory"]) > 0 for u in system.values())

    nodes = {n["metadata"]["name"]: n["usage"] for n in await admin.list_all("nodes.metrics.k8s.io")}
    assert sorted(nodes) == ["control-plane-0", "control-plane-1", "control-plane-2", "worker-1", "worker-2"]
    for name, usage in nodes.items():
        annotations = (await node(cluster, name))["metadata"]["annotations"]
        system_cpu = parse_quantity(annotations["kconsole.dev/system-cpu-usage"])
        system_memory = parse_quantity(annotations["kconsole.dev/system-memory-usage"])
        pods_cpu = sum(parse_quantity(u["cpu"]) for pod_name, u in system.items() if node_of[pod_name] == name)
        assert parse_quantity(usage["cpu"]) == pytest.approx(float(system_cpu + pods_cpu), abs=1e-6)
        assert parse_quantity(usage["memory"]) >= system_memory > 0

    stopped = await faults.apply("kubelet-stop", "worker-2")
    await clock.run_until(lambda: _node_ready(cluster, "worker-2", "Unknown"), timeout=120, step=1)
    assert "worker-2" not in {n["metadata"]["name"] for n in await admin.list_all("nodes.metrics.k8s.io")}
    await faults.heal(stopped.id)
    await clock.run_until(lambda: _node_ready(cluster, "worker-2", "True"), timeout=60, step=1)
    assert "worker-2" in {n["metadata"]["name"] for n in await admin.list_all("nodes.metrics.k8s.io")}


async def _node_ready(cluster: Cluster, name: str, want: str) -> bool:
    return condition(await node(cluster, name), "Ready") == want
