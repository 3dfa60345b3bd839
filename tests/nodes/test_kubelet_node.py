"""Node registration, Lease heartbeats, node status, stop/start, partition, pressure, static pods."""

from __future__ import annotations

from kconsole.objects.meta import condition_status, parse_time

from node_env import NodeEnv


async def test_nodes_register_ready_with_capacity_labels_and_taints(env: NodeEnv) -> None:
    await env.fleet(workers=2, control_planes=1)
    nodes = {n["metadata"]["name"]: n for n in await env.admin.list_all("nodes")}
    assert sorted(nodes) == ["control-plane", "worker-1", "worker-2"]
    w1 = nodes["worker-1"]
    assert condition_status(w1, "Ready") == "True"
    assert {c["type"] for c in w1["status"]["conditions"]} == {
        "Ready", "MemoryPressure", "DiskPressure", "PIDPressure", "NetworkUnavailable"}
    assert w1["status"]["allocatable"]["pods"] == "110" and w1["status"]["capacity"]["cpu"] == "4"
    assert w1["metadata"]["labels"]["kubernetes.io/hostname"] == "worker-1"
    assert w1["metadata"]["labels"]["topology.kubernetes.io/zone"] == "zone-a"
    assert w1["status"]["nodeInfo"]["kubeletVersion"] == "v1.32.0-kconsole"
    assert w1["spec"]["podCIDR"] != nodes["worker-2"]["spec"]["podCIDR"]
    cp = nodes["control-plane"]
    assert cp["spec"]["taints"] == [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]
    assert "node-role.kubernetes.io/control-plane" in cp["metadata"]["labels"]


async def test_lease_renews_every_10s_and_stops_with_the_kubelet(env: NodeEnv) -> None:
    fleet = await env.fleet(workers=1)

    async def renew_time() -> float:
        lease = await env.admin.get("leases", "worker-1", "kube-node-lease")
        assert lease["spec"]["leaseDurationSeconds"] == 40
        return parse_time(lease["spec"]["renewTime"])

    first = await renew_time()
    await env.clock.advance(35)
    later = await renew_time()
    assert 30 <= later - first <= 35
    node = await env.admin.get("nodes", "worker-1")
    assert condition_status(node, "Ready") == "True"

    await fleet.kubelets["worker-1"].stop()
    stopped_at = await renew_time()
    await env.clock.advance(60)
    assert await renew_time() == stopped_at

    await fleet.kubelets["worker-1"].start()
    await env.clock.advance(1)
    assert await renew_time() > stopped_at


async def test_status_checks_read_the_node_from_the_fleet_cache_not_with_gets(env: NodeEnv) -> None:
    await env.fleet(workers=1)
    await env.clock.advance(5)
    since = env.api.audit_recent(1)[-1].seq
    await env.clock.advance(60)
    mine = [r for r in env.api.audit_recent(5000) if r.seq > since and r.user == "system:node:worker-1"]
    assert [r for r in mine if r.verb == "get" and r.resource == "nodes"] == [], \
        "every 10 s check compares with the shared nodes informer's copy (upstream's first try)"
    assert sum(r.verb == "update" and r.resource.startswith("leases") for r in mine) >= 5


async def test_status_kicks_report_at_once_without_renewing_the_lease_out_of_turn(env: NodeEnv) -> None:
    fleet = await env.fleet(workers=1)
    kubelet = fleet.kubelets["worker-1"]
    await env.clock.advance(5)
    since = env.api.audit_recent(1)[-1].seq
    for i in range(6):
        await env.clock.advance(3)
        kubelet.set_pressure("memory", i % 2 == 0)
        await env.clock.advance(1)
        node = await env.admin.get("nodes", "worker-1")
        assert condition_status(node, "MemoryPressure") == ("True" if i % 2 == 0 else "False")
        await env.clock.advance(6)
    mine = [r for r in env.api.audit_recent(5000) if r.seq > since and r.user == "system:node:worker-1"]
    renewals = sum(r.verb == "update" and r.resource.startswith("leases") for r in mine)
    assert 5 <= renewals <= 7, f"{renewals} Lease renewals in 60 s: the Lease renews every 10 s whatever the kicks"


async def test_partition_stops_reports_and_heal_resumes_them(env: NodeEnv) -> None:
    fleet = await env.fleet(workers=1)
    kubelet = fleet.kubelets["worker-1"]
    kubelet.partition()
    lease = await env.admin.get("leases", "worker-1", "kube-node-lease")
    await env.clock.advance(45)
    assert (await env.admin.get("leases", "worker-1", "kube-node-lease"))["spec"]["renewTime"] == \
        lease["spec"]["renewTime"]
    assert kubelet.running and kubelet.partitioned
    kubelet.heal()
    await env.clock.advance(8)
    assert (await env.admin.get("leases", "worker-1", "kube-node-lease"))["spec"]["renewTime"] != \
        lease["spec"]["renewTime"]


async def test_memory_pressure_is_reported_as_a_condition(env: NodeEnv) -> None:
    fleet = await env.fleet(workers=1)
    fleet.kubelets["worker-1"].set_pressure("memory", True)
    await env.clock.advance(1)
    node = await env.admin.get("nodes", "worker-1")
    cond = next(c for c in node["status"]["conditions"] if c["type"] == "MemoryPressure")
    assert (cond["status"], cond["reason"]) == ("True", "KubeletHasInsufficientMemory")
    fleet.kubelets["worker-1"].set_pressure("memory", False)
    await env.clock.advance(1)
    assert condition_status(await env.admin.get("nodes", "worker-1"), "MemoryPressure") == "False"


async def test_static_pods_reflect_whether_each_component_runs(env: NodeEnv) -> None:
    running = {"etcd": True, "kube-apiserver": True, "kube-scheduler": True, "kube-controller-manager": True}
    await env.fleet(workers=0, control_planes=1, static=lambda: {"control-plane": dict(running)})
    names = ["etcd-control-plane", "kube-apiserver-control-plane", "kube-scheduler-control-plane",
             "kube-controller-manager-control-plane"]

    async def ready(name: str) -> str:
        return condition_status(await env.admin.get("pods", name, "kube-system"), "Ready")

    await env.wait(lambda: _all_ready(env, names), timeout=20)
    pod = await env.admin.get("pods", "kube-scheduler-control-plane", "kube-system")
    assert "kubernetes.io/config.mirror" in pod["metadata"]["annotations"]
    assert pod["metadata"]["ownerReferences"][0]["kind"] == "Node"

    running["kube-scheduler"] = False
    await env.clock.advance(6)
    assert await ready("kube-scheduler-control-plane") == "False"
    assert await ready("etcd-control-plane") == "True"
    running["kube-scheduler"] = True
    await env.clock.advance(6)
    pod = await env.admin.get("pods", "kube-scheduler-control-plane", "kube-system")
    assert condition_status(pod, "Ready") == "True"
    assert pod["status"]["containerStatuses"][0]["restartCount"] == 1


async def test_mirror_pods_are_posted_once_each_and_posted_again_when_deleted(env: NodeEnv) -> None:
    """The kubelet's syncs do not race each other into 409 AlreadyExists; a deleted mirror pod comes back."""
    await env.fleet(workers=0, control_planes=1)
    names = ["etcd-control-plane", "kube-apiserver-control-plane", "kube-scheduler-control-plane",
             "kube-controller-manager-control-plane"]
    await env.wait(lambda: _all_ready(env, names), timeout=20)
    await env.clock.advance(12)
    posts = [(r.name, r.code) for r in env.api.audit_recent(5000)
             if r.resource == "pods" and r.verb == "create" and r.user == "system:node:control-plane"]
    assert sorted(posts) == sorted((name, 201) for name in names)

    await env.admin.delete("pods", "kube-scheduler-control-plane", "kube-system", grace_period_seconds=0)
    await env.wait(lambda: _all_ready(env, names), timeout=20)
    posts = [(r.name, r.code) for r in env.api.audit_recent(5000)
             if r.resource == "pods" and r.verb == "create" and r.user == "system:node:control-plane"]
    assert posts.count(("kube-scheduler-control-plane", 201)) == 2 and not [p for p in posts if p[1] != 201]


async def _all_ready(env: NodeEnv, names: list[str]) -> bool:
    pods = {p["metadata"]["name"]: p for p in await env.admin.list_all("pods", "kube-system")}
    return all(n in pods and condition_status(pods[n], "Ready") == "True" for n in names)


async def test_lease_renewals_are_jittered_like_upstreams_lease_controller(env: NodeEnv) -> None:
    await env.fleet(workers=2)
    await env.clock.advance(5)
    since = env.api.audit_recent(1)[-1].seq
    await env.clock.advance(120)
    renewals: dict[str, list[float]] = {"system:node:worker-1": [], "system:node:worker-2": []}
    for r in env.api.audit_recent(5000):
        if r.seq > since and r.verb == "update" and r.resource.startswith("leases") and r.user in renewals:
            renewals[r.user].append(r.time)
    for times in renewals.values():
        gaps = [b - a for a, b in zip(times, times[1:])]
        assert len(gaps) >= 9 and all(10.0 <= g <= 10.4 + 0.1 for g in gaps), gaps
        assert len({round(g, 3) for g in gaps}) > 1, f"no jitter: {gaps}"
    one, two = renewals.values()
    assert [round(b - a, 3) for a, b in zip(one, one[1:])] != [round(b - a, 3) for a, b in zip(two, two[1:])]


async def test_status_checks_put_right_a_node_status_someone_else_changed(env: NodeEnv) -> None:
    await env.fleet(workers=1)
    await env.clock.advance(25)  # a few checks that found nothing to report
    since = env.api.audit_recent(1)[-1].seq
    await env.clock.advance(30)
    mine = [r for r in env.api.audit_recent(5000) if r.seq > since and r.user == "system:node:worker-1"]
    assert not [r for r in mine if r.resource == "nodes/status"], "an unchanged status is not posted"
    node = await env.admin.get("nodes", "worker-1")
    tampered = [{**c, "status": "False", "reason": "Tampered"} if c["type"] == "Ready" else c
                for c in node["status"]["conditions"]]
    await env.admin.patch("nodes", "worker-1", {"status": {"conditions": tampered}}, subresource="status")
    assert condition_status(await env.admin.get("nodes", "worker-1"), "Ready") == "False"
    await env.clock.advance(11)
    node = await env.admin.get("nodes", "worker-1")
    ready = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("True", "KubeletReady")
