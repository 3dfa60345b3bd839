"""etcd, leader and API-server faults on a composed cluster: each applies, records its Event,
shows upstream's reaction on the virtual clock, and heals."""

from __future__ import annotations

import asyncio

import pytest
from fault_env import fault_events, vclock

from kconsole.client import StatusError
from kconsole.cluster import Cluster
from kconsole.faults import CATALOG, TARGET_KINDS, FaultError

REQUIRED = ["pod-kill", "crash-loop", "readiness-fail", "kubelet-stop", "node-partition", "memory-pressure",
            "disk-pressure", "cordon", "uncordon", "drain", "etcd-stop", "etcd-start", "etcd-pause", "etcd-partition",
            "etcd-slow-disk", "etcd-kill-leader", "etcd-quota", "kill-controller-manager-leader",
            "kill-scheduler-leader", "apiserver-latency", "apiserver-errors"]


def test_catalog_has_every_fault_the_issue_names_with_kind_description_and_reaction() -> None:
    assert set(REQUIRED) <= set(CATALOG)
    for fault in CATALOG.values():
        assert fault.target_kind in TARGET_KINDS
        assert fault.description.endswith(".") and len(fault.expected) > 40


async def test_bad_requests_say_what_is_wrong(cluster: Cluster) -> None:
    faults = cluster.faults
    assert faults is not None
    cases = [
        (("no-such-fault", "x"), "unknown fault type 'no-such-fault'"),
        (("etcd-stop", "etcd-9"), "no etcd member 'etcd-9' (members: etcd-0, etcd-1, etcd-2, or leader)"),
        (("cordon", "worker-9"), "node 'worker-9' not found"),
        (("memory-pressure", "worker-9"), "no simulated kubelet on node 'worker-9'"),
        (("crash-loop", "default/ghost"), "pod default/ghost not found"),
        (("apiserver-latency", "apiserver", {"latency": "1"}), "unknown parameter(s) latency; it takes seconds"),
        (("apiserver-errors", "apiserver", {"rate": "2"}), "rate must be within 0..1, got 2"),
        (("apiserver-errors", "apiserver", {"code": "418"}), "code must be one of 500, 503, 504, 429, got 418"),
    ]
    for args, words in cases:
        with pytest.raises(FaultError) as err:
            await faults.apply(*args)  # type: ignore[arg-type]
        assert words in str(err.value), (args, str(err.value))
    with pytest.raises(FaultError, match="no active fault 'f99'"):
        await faults.heal("f99")
    assert faults.active == {}


async def test_etcd_leader_stop_elects_another_and_heal_rejoins(cluster: Cluster) -> None:
    faults, etcd, clock = cluster.faults, cluster.etcd, vclock(cluster)
    assert faults is not None and etcd is not None
    old = etcd.leader()
    assert old is not None
    fault = await faults.apply("etcd-stop", "leader")
    assert fault.target == old.name and fault.detail == "was the leader" and fault.id in faults.active
    await clock.run_until(lambda: etcd.leader() not in (None, old), timeout=10, step=0.1)
    quorum = etcd.quorum()
    assert (quorum.alive, quorum.needed, quorum.ok) == (2, 2, True)
    await cluster.api_client().create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "still-ok"}})

    await faults.heal(fault.id)
    await clock.run_until(lambda: etcd.quorum().alive == 3, timeout=10, step=0.1)
    assert old.running and faults.active == {}
    injected = await fault_events(cluster, "FaultInjected")
    assert [e["type"] for e in injected] == ["Warning"]
    ref = injected[0]["involvedObject"]
    index = [m.name for m in etcd.members].index(old.name)
    assert (ref["kind"], ref["namespace"], ref["name"]) == ("Pod", "kube-system", f"etcd-control-plane-{index}")
    assert f"Fault {fault.id} etcd-stop on {old.name}" in injected[0]["message"]
    assert "Expect: With 3 members quorum holds" in injected[0]["message"]
    assert [e["type"] for e in await fault_events(cluster, "FaultHealed")] == ["Normal"]


async def test_partition_pause_slow_disk_and_kill_leader_each_heal(cluster: Cluster) -> None:
    faults, etcd, clock = cluster.faults, cluster.etcd, vclock(cluster)
    assert faults is not None and etcd is not None
    leader = etcd.leader()
    assert leader is not None
    follower = next(m for m in etcd.members if m is not leader)

    cut = await faults.apply("etcd-partition", leader.name)
    await clock.run_until(lambda: etcd.leader() not in (None, leader), timeout=15, step=0.1)
    assert etcd.quorum().alive == 2
    paused = await faults.apply("etcd-pause", "leader")
    new_leader = next(m for m in etcd.members if m.name == paused.target)
    assert new_leader.paused and etcd.quorum().alive == 1 and not etcd.quorum().ok
    await faults.heal(cut.id)
    await faults.heal(paused.id)
    await clock.run_until(lambda: etcd.quorum().alive == 3 and etcd.leader() is not None, timeout=15, step=0.1)

    slow = await faults.apply("etcd-slow-disk", follower.name, {"seconds": "0.5"})
    assert follower.disk_latency == 0.5 and slow.detail == "+0.5 s per WAL write"
    await faults.heal(slow.id)
    assert follower.disk_latency == 0.0

    killed = await faults.apply("etcd-kill-leader", "leader")
    victim = etcd.member(killed.target)
    assert not victim.running
    await clock.run_until(lambda: etcd.leader() is not None, timeout=15, step=0.1)
    await faults.heal_all()
    assert victim.running and faults.active == {}
    assert len(await fault_events(cluster, "FaultHealed")) == 4


async def test_quota_exhaustion_refuses_writes_until_healed(cluster: Cluster) -> None:
    faults, admin = cluster.faults, cluster.api_client()
    assert faults is not None
    fault = await faults.apply("etcd-quota", "leader")
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"}, "data": {"k": "v" * 4096}}
    with pytest.raises(StatusError) as err:
        await admin.create(cm)
    assert (err.value.code, err.value.message) == (500, "etcdserver: mvcc: database space exceeded")
    assert not err.value.status["reason"]  # kubectl: "Error from server: etcdserver: mvcc: ...", as upstream
    assert await admin.get("namespaces", "default")  # reads still work
    await faults.heal(fault.id)
    await admin.create(cm)


async def test_killing_the_controller_manager_and_scheduler_leaders_hands_the_lease_over(cluster: Cluster) -> None:
    faults, admin, clock = cluster.faults, cluster.api_client(), vclock(cluster)
    assert faults is not None
    for fault_type, lease in (("kill-controller-manager-leader", "kube-controller-manager"),
                              ("kill-scheduler-leader", "kube-scheduler")):
        before = (await admin.get("leases", lease, "kube-system"))["spec"]["holderIdentity"]
        fault = await faults.apply(fault_type, "leader")
        assert fault.target == before
        replicas = cluster.controller_managers if "controller" in fault_type else cluster.schedulers
        stopped = next(r for r in replicas if r.identity == before)
        assert not stopped.running

        async def moved() -> bool:
            holder = (await admin.get("leases", lease, "kube-system"))["spec"]["holderIdentity"]
            return holder not in (before, "", None)

        took = await clock.run_until(moved, timeout=40, step=1)
        assert 10 <= took <= 30  # the Lease (15 s) has to expire first
        await faults.heal(fault.id)
        assert stopped.running
        [event] = [e for e in await fault_events(cluster, "FaultInjected") if fault_type in e["message"]]
        assert event["involvedObject"]["kind"] == "Lease" and event["involvedObject"]["name"] == lease


async def test_componentstatuses_follow_the_components_faults_stop_and_heal(cluster: Cluster) -> None:
    """kubectl get cs: every component Healthy; with no scheduler replica left the scheduler's probe is
    refused; with etcd's quorum gone etcd-0 fails as upstream's probe times out; healed, all Healthy."""
    faults, etcd, admin, clock = cluster.faults, cluster.etcd, cluster.api_client(), vclock(cluster)
    assert faults is not None and etcd is not None

    async def health() -> dict[str, tuple[str, str, str]]:
        items = await admin.list_all("componentstatuses")
        return {c["metadata"]["name"]: (c["conditions"][0]["status"], c["conditions"][0].get("message", ""),
                                        c["conditions"][0].get("error", "")) for c in items}

    assert await health() == {name: ("True", "ok", "") for name in ("controller-manager", "scheduler", "etcd-0")}
    killed = []
    while any(replica.running for replica in cluster.schedulers):
        await clock.run_until(lambda: any(r.is_leader and r.running for r in cluster.schedulers), timeout=40, step=1)
        killed.append(await faults.apply("kill-scheduler-leader", "leader"))
    assert len(killed) == 3
    assert (await health())["scheduler"] == (
        "Unknown", "", 'Get "https://127.0.0.1:10259/healthz": dial tcp 127.0.0.1:10259: connect: connection refused')
    assert (await health())["controller-manager"] == ("True", "ok", "")

    stopped = [await faults.apply("etcd-stop", member.name) for member in etcd.members[:2]]
    assert (await health())["etcd-0"] == ("False", "", "context deadline exceeded")
    for fault in [*stopped, *killed]:
        await faults.heal(fault.id)
    await clock.run_until(lambda: etcd.leader() is not None and etcd.quorum().ok, timeout=20, step=0.1)
    assert await health() == {name: ("True", "ok", "") for name in ("controller-manager", "scheduler", "etcd-0")}


async def test_a_whole_component_down_and_every_api_server_down(cluster: Cluster) -> None:
    """scheduler-down and controller-manager-down stop every replica (componentstatuses see it);
    apiserver-down refuses every request until healed."""
    faults, admin = cluster.faults, cluster.api_client()
    assert faults is not None
    down = await faults.apply("scheduler-down", "all")
    assert down.detail == "stopped 3 of 3 replicas" and not any(r.running for r in cluster.schedulers)
    with pytest.raises(FaultError, match="every scheduler replica is stopped already"):
        await faults.apply("scheduler-down", "again")
    await faults.apply("controller-manager-down", "all")
    assert not any(r.running for r in cluster.controller_managers)
    statuses = {c["metadata"]["name"]: c["conditions"][0]["status"] for c in await admin.list_all("componentstatuses")}
    assert statuses["scheduler"] == statuses["controller-manager"] == "Unknown"
    await faults.heal_all()
    assert all(r.running for r in [*cluster.schedulers, *cluster.controller_managers])

    off = await faults.apply("apiserver-down", "apiserver")
    with pytest.raises(StatusError) as info:
        await admin.get("namespaces", "default")
    assert info.value.code == 503 and "every kube-apiserver is down" in info.value.message
    await faults.heal(off.id)
    assert await admin.get("namespaces", "default")


async def test_apiserver_latency_and_errors(cluster: Cluster) -> None:
    faults, admin, clock = cluster.faults, cluster.api_client(), vclock(cluster)
    assert faults is not None and cluster.api is not None
    slow = await faults.apply("apiserver-latency", "apiserver", {"seconds": "2"})
    read = asyncio.create_task(admin.get("namespaces", "default"))
    await clock.advance(1.5)
    assert not read.done()
    await clock.advance(1)
    assert read.done() and read.result()["metadata"]["name"] == "default"
    await faults.heal(slow.id)

    failing = await faults.apply("apiserver-errors", "apiserver", {"rate": "1", "code": "503"})
    with pytest.raises(StatusError) as err:
        await admin.get("namespaces", "default")
    assert err.value.code == 503 and "kconsole-faults: injected 503" in err.value.message
    last = cluster.api.audit_recent(1)[0]
    assert (last.code, last.stage) == (503, "fault-injection")
    await faults.heal(failing.id)
    assert cluster.api.fault_injector is None
    await admin.get("namespaces", "default")
    # The Event of the error fault could only be written once requests passed again.
    messages = [e["message"] for e in await fault_events(cluster, "FaultInjected")]
    assert any("apiserver-errors" in m for m in messages) and any("apiserver-latency" in m for m in messages)


async def test_fault_events_written_during_quorum_loss_are_all_there_after_heal(
        cluster: Cluster, caplog: pytest.LogCaptureFixture) -> None:
    """An Event written while etcd has no quorum times out ('request timed out' leaves the outcome
    open) and is retried; when the first try was committed after all, the retry's AlreadyExists
    means it is written, not 'refused' (the console showed the injection as missing)."""
    faults, etcd, clock = cluster.faults, cluster.etcd, vclock(cluster)
    assert faults is not None and etcd is not None
    followers = [m for m in etcd.members if m is not etcd.leader()]
    for member in followers:
        await faults.apply("etcd-stop", member.name)
    await clock.run_until(lambda: etcd.leader() is None, timeout=15, step=0.1)
    await clock.advance(20)  # the second stop's Event times out at least once
    await faults.heal_all()
    await clock.run_until(lambda: etcd.quorum().alive == 3 and etcd.leader() is not None, timeout=15, step=0.1)
    injected = await fault_events(cluster, "FaultInjected")
    assert len(injected) == 2
    assert len(await fault_events(cluster, "FaultHealed")) == 2
    assert not [r for r in caplog.records if "refused" in r.getMessage()]
