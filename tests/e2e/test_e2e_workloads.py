"""A Deployment through the whole cluster: chain reaction, self-healing, scaling, rolling update."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
import pytest
import pytest_asyncio
from e2e_env import Obj, boot, deployment, events_for, owned_by, pods_of, running, shutdown, vclock

from kconsole.cluster import Cluster

pytestmark = pytest.mark.asyncio(loop_scope="module")

POD_CHAIN = ["Scheduled", "Pulling", "Pulled", "Created", "Started"]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Cluster]:
    c = await boot(tmp_path_factory.mktemp("workloads") / "data", nodes=3, control_planes=1)
    try:
        yield c
    finally:
        await shutdown(c)


async def rollout_done(cluster: Cluster, name: str, replicas: int) -> bool:
    d = await cluster.api_client().get("deployments", name, "default")
    st = d.get("status") or {}
    return (st.get("observedGeneration") == d["metadata"]["generation"] and st.get("updatedReplicas") == replicas
            and st.get("replicas") == replicas and st.get("availableReplicas") == replicas)


async def test_chain_reaction_deployment_to_running_pods(cluster: Cluster) -> None:
    clock = vclock(cluster)
    admin = cluster.api_client()
    await admin.create(deployment("web", "nginx:1.25", 3))

    async def three_running() -> bool:
        return len(await running(cluster, "default", "app=web")) == 3

    took = await clock.run_until(three_running, timeout=120, step=0.5)
    assert took < 60, f"3 nginx pods took {took:.1f} simulated s to run"

    d = await admin.get("deployments", "web", "default")
    rss = [rs for rs in await admin.list_all("replicasets", "default") if owned_by(rs, d["metadata"]["uid"])]
    assert len(rss) == 1
    rs = rss[0]
    template_hash = rs["metadata"]["labels"]["pod-template-hash"]
    assert rs["metadata"]["name"] == f"web-{template_hash}"
    pods = await pods_of(cluster, "default", "app=web")
    assert len(pods) == 3 and all(owned_by(p, rs["metadata"]["uid"]) for p in pods)
    assert len({p["spec"]["nodeName"] for p in pods}) == 3, "default spreading puts one pod per worker"
    assert all(p["spec"]["nodeName"].startswith("worker-") for p in pods)

    scaling = await events_for(cluster, "default", "Deployment", "web")
    assert [(e["reason"], e["source"]["component"]) for e in scaling] == [
        ("ScalingReplicaSet", "deployment-controller")]
    assert scaling[0]["message"] == f"Scaled up replica set {rs['metadata']['name']} to 3"
    creates = [e for e in await events_for(cluster, "default", "ReplicaSet", rs["metadata"]["name"])
               if e["reason"] == "SuccessfulCreate"]
    assert {e["source"]["component"] for e in creates} == {"replicaset-controller"}

    for pod in pods:
        name = pod["metadata"]["name"]
        create = [e for e in creates if e["message"] == f"Created pod: {name}"]
        assert len(create) == 1, f"no SuccessfulCreate for {name}"
        own = await events_for(cluster, "default", "Pod", name)
        reasons = [e["reason"] for e in own]
        assert reasons == POD_CHAIN, f"{name}: {reasons}"
        assert [e["source"]["component"] for e in own] == ["default-scheduler"] + ["kubelet"] * 4
        assert all(e["source"].get("host") == pod["spec"]["nodeName"] for e in own[1:])
        assert own[0]["message"] == f"Successfully assigned default/{name} to {pod['spec']['nodeName']}"
        assert own[1]["message"] == 'Pulling image "nginx:1.25"'
        chain = [scaling[0], create[0], *own]
        revisions = [int(e["metadata"]["resourceVersion"]) for e in chain]
        assert revisions == sorted(revisions) and len(set(revisions)) == len(revisions), chain
        stamps = [e["firstTimestamp"] for e in chain]
        assert stamps == sorted(stamps), f"{name}: events out of causal order by firstTimestamp: {stamps}"


async def test_deleted_pod_is_replaced_under_a_new_name(cluster: Cluster) -> None:
    clock = vclock(cluster)
    admin = cluster.api_client()
    before = {p["metadata"]["name"] for p in await running(cluster, "default", "app=web")}
    assert len(before) == 3
    victim = sorted(before)[0]
    await admin.delete("pods", victim, "default")

    async def replaced() -> bool:
        now = {p["metadata"]["name"] for p in await running(cluster, "default", "app=web")}
        return len(now) == 3 and victim not in now

    took = await clock.run_until(replaced, timeout=120, step=0.5)
    now = {p["metadata"]["name"] for p in await running(cluster, "default", "app=web")}
    new = now - before
    assert len(new) == 1 and victim not in now
    assert took < 60


async def test_scale_to_one_and_back_to_three(cluster: Cluster) -> None:
    clock = vclock(cluster)
    admin = cluster.api_client()
    await admin.patch("deployments", "web", {"spec": {"replicas": 1}}, "default")

    async def exactly(n: int) -> bool:
        return len(await pods_of(cluster, "default", "app=web")) == n and await rollout_done(cluster, "web", n)

    await clock.run_until(lambda: exactly(1), timeout=120, step=0.5)
    await admin.patch("deployments", "web", {"spec": {"replicas": 3}}, "default")
    await clock.run_until(lambda: exactly(3), timeout=120, step=0.5)
    assert len(await running(cluster, "default", "app=web")) == 3
    reasons = [e["message"] for e in await events_for(cluster, "default", "Deployment", "web")
               if e["reason"] == "ScalingReplicaSet"]
    assert any(m.startswith("Scaled down") and m.endswith("to 1 from 3") for m in reasons), reasons
    assert any(m.startswith("Scaled up") and m.endswith("to 3 from 1") for m in reasons), reasons


def ready(pod: Obj) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


async def test_rolling_update_keeps_surge_and_unavailability_at_every_revision(cluster: Cluster) -> None:
    clock = vclock(cluster)
    admin = cluster.api_client()
    await clock.run_until(lambda: rollout_done(cluster, "web", 3), timeout=120, step=0.5)
    d = await admin.get("deployments", "web", "default")
    uid = d["metadata"]["uid"]
    pod_list = await admin.list("pods", "default")
    rs_list = await admin.list("replicasets", "default")
    start = {"pods": pod_list["metadata"]["resourceVersion"], "replicasets": rs_list["metadata"]["resourceVersion"]}
    history: list[tuple[int, str, str, Obj]] = []

    async def record(resource: str, ready_flag: asyncio.Event) -> None:
        async with admin.watch(resource, "default", resource_version=start[resource]) as stream:
            ready_flag.set()
            async for ev in stream:
                if ev["type"] in ("ADDED", "MODIFIED", "DELETED"):
                    obj = ev["object"]
                    history.append((int(obj["metadata"]["resourceVersion"]), resource, ev["type"], obj))

    flags = [asyncio.Event(), asyncio.Event()]
    watchers = [asyncio.create_task(record(r, f)) for r, f in zip(("pods", "replicasets"), flags)]
    await clock.run_until(lambda: all(f.is_set() for f in flags), timeout=5, step=0.1)
    try:
        await admin.patch("deployments", "web", {"spec": {"template": {"spec": {"containers": [
            {"name": "web", "image": "nginx:1.26"}]}}}}, "default", patch_type="strategic")
        await clock.run_until(lambda: rollout_done(cluster, "web", 3), timeout=300, step=0.5)
        await clock.advance(1)
    finally:
        for w in watchers:
            w.cancel()
        await asyncio.gather(*watchers, return_exceptions=True)

    assert history, "the watches saw nothing"
    pods: dict[str, Obj] = {p["metadata"]["name"]: p for p in pod_list["items"]}
    replicasets: dict[str, Obj] = {rs["metadata"]["name"]: rs for rs in rs_list["items"]}
    max_total = 0
    for rv, resource, etype, obj in sorted(history, key=lambda h: h[0]):
        table = pods if resource == "pods" else replicasets
        if etype == "DELETED":
            table.pop(obj["metadata"]["name"], None)
        else:
            table[obj["metadata"]["name"]] = obj
        ours = {n: rs for n, rs in replicasets.items() if owned_by(rs, uid)}
        rs_uids = {rs["metadata"]["uid"] for rs in ours.values()}
        live = [p for p in pods.values() if not p["metadata"].get("deletionTimestamp")
                and any(owned_by(p, u) for u in rs_uids)]
        spec_total = sum(int(rs["spec"].get("replicas") or 0) for rs in ours.values())
        n_ready = sum(ready(p) for p in live)
        max_total = max(max_total, len(live))
        assert len(live) <= 4, f"rv {rv}: {len(live)} pods exceed replicas+maxSurge (3+1)"
        assert spec_total <= 4, f"rv {rv}: replicasets ask for {spec_total} > 3+1"
        assert n_ready >= 3, f"rv {rv}: only {n_ready} ready pods, below replicas-maxUnavailable (3-0)"
    assert max_total == 4, "a surge pod should have appeared during the rollout"
    final = await running(cluster, "default", "app=web")
    assert len(final) == 3
    assert {p["spec"]["containers"][0]["image"] for p in final} == {"nginx:1.26"}
    d = await admin.get("deployments", "web", "default")
    assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"



async def test_rollback_reuses_the_old_replicaset_under_a_new_revision(cluster: Cluster) -> None:
    clock = vclock(cluster)
    admin = cluster.api_client()
    d = await admin.get("deployments", "web", "default")
    rss = {rs["spec"]["template"]["spec"]["containers"][0]["image"]: rs
           for rs in await admin.list_all("replicasets", "default") if owned_by(rs, d["metadata"]["uid"])}
    assert set(rss) == {"nginx:1.25", "nginx:1.26"}
    old_rs = rss["nginx:1.25"]
    await admin.patch("deployments", "web", {"spec": {"template": old_rs["spec"]["template"]}}, "default")
    await clock.run_until(lambda: rollout_done(cluster, "web", 3), timeout=300, step=0.5)
    final = await running(cluster, "default", "app=web")
    assert {p["spec"]["containers"][0]["image"] for p in final} == {"nginx:1.25"}
    assert all(owned_by(p, old_rs["metadata"]["uid"]) for p in final), "the old ReplicaSet is scaled back up"
    rs = await admin.get("replicasets", old_rs["metadata"]["name"], "default")
    assert rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3"
    d = await admin.get("deployments", "web", "default")
    assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3"


async def test_service_routes_to_ready_pods_on_every_node(cluster: Cluster) -> None:
    clock = vclock(cluster)
    admin = cluster.api_client()
    svc = await admin.create({"apiVersion": "v1", "kind": "Service",
                              "metadata": {"name": "web", "namespace": "default"},
                              "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]}})
    cluster_ip = svc["spec"]["clusterIP"]

    def proxied() -> dict[str, set[str]]:
        out = {}
        for node, proxy in cluster.proxies.items():
            rules = [r for r in proxy.rules() if r["service"] == "default/web"]
            out[node] = set(rules[0]["endpoints"]) if rules else set()
        return out

    async def pod_ips() -> set[str]:
        return {f"{p['status']['podIP']}:8080" for p in await running(cluster, "default", "app=web")}

    async def routed() -> bool:
        want = await pod_ips()
        return len(want) == 3 and all(v == want for v in proxied().values())

    await clock.run_until(routed, timeout=30, step=0.5)
    rule = [r for r in next(iter(cluster.proxies.values())).rules() if r["service"] == "default/web"][0]
    assert (rule["clusterIP"], rule["port"]) == (cluster_ip, 80)
    slices = await admin.list_all("endpointslices", "default", label_selector="kubernetes.io/service-name=web")
    endpoints = [e for s in slices for e in s.get("endpoints") or []]
    assert sum(bool(e["conditions"].get("ready")) for e in endpoints) == 3
    assert all(e["conditions"].get("terminating") for e in endpoints if not e["conditions"].get("ready"))

    victim = sorted(p["metadata"]["name"] for p in await running(cluster, "default", "app=web"))[0]
    victim_ip = (await admin.get("pods", victim, "default"))["status"]["podIP"]
    cluster.kubelets[(await admin.get("pods", victim, "default"))["spec"]["nodeName"]].fail_readiness(
        "default", victim)

    async def victim_dropped() -> bool:
        return all(f"{victim_ip}:8080" not in v and len(v) == 2 for v in proxied().values())

    await clock.run_until(victim_dropped, timeout=60, step=0.5)
