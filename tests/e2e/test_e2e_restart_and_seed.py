"""The whole cluster is reproducible: the same seed gives the same cluster, a restart resumes it."""

from __future__ import annotations

from pathlib import Path

from e2e_env import Obj, boot, deployment, running, shutdown, vclock

from kconsole.cluster import Cluster


async def converge_web(cluster: Cluster, replicas: int) -> list[Obj]:
    await cluster.api_client().create(deployment("web", "nginx:1.25", replicas))

    async def all_running() -> bool:
        return len(await running(cluster, "default", "app=web")) == replicas

    await vclock(cluster).run_until(all_running, timeout=120, step=0.5)
    return await running(cluster, "default", "app=web")


def story(events: list[Obj]) -> list[tuple[str, str, str, str]]:
    ordered = sorted(events, key=lambda e: (e["firstTimestamp"] or "", e["involvedObject"]["name"], e["reason"],
                                            e["message"]))
    return [(e["involvedObject"]["kind"], e["involvedObject"]["name"], e["reason"], e["message"]) for e in ordered]


async def test_same_seed_same_names_placements_and_events(tmp_path: Path) -> None:
    outcomes = []
    for run in ("a", "b"):
        cluster = await boot(tmp_path / run, nodes=3, control_planes=1, seed=7)
        try:
            pods = await converge_web(cluster, 6)
            events = await cluster.api_client().list_all("events", "default")
            outcomes.append(({p["metadata"]["name"]: p["spec"]["nodeName"] for p in pods},
                             {p["metadata"]["name"]: p["status"]["podIP"] for p in pods}, story(events)))
        finally:
            await shutdown(cluster)
    (placements_a, ips_a, story_a), (placements_b, ips_b, story_b) = outcomes
    assert placements_a == placements_b
    assert ips_a == ips_b
    assert story_a == story_b
    assert len(set(placements_a.values())) == 3


async def test_restart_resumes_the_cluster_without_recreating_pods(tmp_path: Path) -> None:
    cluster = await boot(tmp_path / "data", nodes=3, control_planes=1)
    try:
        before = {p["metadata"]["name"]: (p["metadata"]["uid"], p["spec"]["nodeName"])
                  for p in await converge_web(cluster, 3)}
    finally:
        await shutdown(cluster)

    cluster = await boot(tmp_path / "data", nodes=3, control_planes=1)
    try:
        clock = vclock(cluster)
        admin = cluster.api_client()

        async def same_pods_running() -> bool:
            pods = await running(cluster, "default", "app=web")
            return {p["metadata"]["name"]: (p["metadata"]["uid"], p["spec"]["nodeName"]) for p in pods} == before

        await clock.run_until(same_pods_running, timeout=60, step=0.5)
        await clock.advance(30)
        pods = await admin.list_all("pods", "default", label_selector="app=web")
        assert {p["metadata"]["name"] for p in pods} == set(before), "a restart must not replace running pods"
        d = await admin.get("deployments", "web", "default")
        assert d["status"]["availableReplicas"] == 3
        await admin.patch("deployments", "web", {"spec": {"replicas": 4}}, "default")

        async def four() -> bool:
            return len(await running(cluster, "default", "app=web")) == 4

        await clock.run_until(four, timeout=60, step=0.5)
    finally:
        await shutdown(cluster)
