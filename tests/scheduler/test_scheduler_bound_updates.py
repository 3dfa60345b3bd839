"""Updates of a bound pod: a kubelet's status write keeps the pod counted where it is (the cache
takes over its new status without recounting the node), a label change is counted again."""

from __future__ import annotations

from kconsole.scheduler.podinfo import PodInfo
from tests.scheduler.conftest import Env, node, pod

HOST = "kubernetes.io/hostname"


def _avoid_db(name: str, **spec: object) -> dict:
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": HOST}]}}
    return pod(name, labels={"app": "web"}, affinity=anti, **spec)


async def test_status_writes_keep_a_bound_pod_counted_and_label_changes_recount(env: Env) -> None:
    for name in ("a", "b"):
        await env.admin.create(node(name))
    sched = await env.scheduler()
    await env.admin.create(pod("db-0", labels={"app": "db"}, nodeSelector={HOST: "a"}))
    assert await env.wait_bound("db-0") == {"db-0": "a"}

    bound = await env.get_pod("db-0")
    bound["status"] = {**(bound.get("status") or {}), "phase": "Running", "startTime": "2026-01-01T00:00:00Z"}
    await env.admin.update_status(bound)
    await env.wait(lambda: sched.cache.placed("default/db-0")[0].start_time == "2026-01-01T00:00:00Z")

    await env.admin.create(_avoid_db("web-1"))
    assert await env.wait_bound("web-1") == {"web-1": "b"}  # db-0 still counted on a

    await env.admin.create(_avoid_db("web-2", nodeSelector={HOST: "a"}))
    await env.clock.advance(2)
    assert await env.node_of("web-2") == ""

    await env.admin.patch("pods", "db-0", {"metadata": {"labels": {"app": "cache"}}}, "default")
    assert await env.wait_bound("web-2", timeout=60) == {"web-2": "a"}  # the relabelled pod no longer repels


async def test_default_spread_follows_a_service_selector_change(env: Env) -> None:
    await env.admin.create(node("a"))
    sched = await env.scheduler()
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
           "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}
    await env.admin.create(svc)
    probe = PodInfo(pod("probe", labels={"app": "web", "tier": "front"}))
    await env.wait(lambda: sched._default_selector(probe) is not None)
    first = sched._default_selector(probe)
    assert first is sched._default_selector(probe)  # compiled once per Service version
    assert first({"app": "web"}) and not first({"tier": "front"})

    await env.admin.patch("services", "web", {"spec": {"selector": {"app": None, "tier": "front"}}}, "default")
    await env.wait(lambda: sched._default_selector(probe)({"tier": "front"}))
    assert not sched._default_selector(probe)({"app": "web"})
