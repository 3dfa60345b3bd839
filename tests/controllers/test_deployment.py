"""Deployment controller (with the ReplicaSet controller) against the real API server."""

from __future__ import annotations

from typing import Any

from workload_env import Env, WatchLog, pod_template, wl  # noqa: F401 - wl is the fixture

from kconsole.controllers.deployment import DeploymentController
from kconsole.controllers.replicaset import ReplicaSetController
from kconsole.objects.names import pod_template_hash

Obj = dict[str, Any]


def deployment(name: str, replicas: int, image: str = "nginx:1.25", **spec: Any) -> Obj:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": pod_template(labels, image=image), **spec}}


async def start(wl: Env, ready_after: float = 2.0) -> None:
    await wl.start(DeploymentController, ReplicaSetController)
    await wl.runner(ready_after=ready_after)


async def complete(wl: Env, name: str, replicas: int) -> bool:
    d = await wl.get("deployments", name)
    st = d.get("status") or {}
    return (st.get("observedGeneration") == d["metadata"]["generation"] and st.get("updatedReplicas") == replicas
            and st.get("replicas") == replicas and st.get("availableReplicas") == replicas)


async def replicasets(wl: Env) -> dict[str, Obj]:
    return {rs["metadata"]["name"]: rs for rs in await wl.admin.list_all("replicasets", "default")}


async def set_image(wl: Env, name: str, image: str) -> None:
    await wl.admin.patch("deployments", name, {"spec": {"template": {"spec": {"containers": [
        {"name": "app", "image": image}]}}}}, "default", patch_type="strategic")


def cond(obj: Obj, cond_type: str) -> Obj:
    return next(c for c in obj["status"]["conditions"] if c["type"] == cond_type)


async def test_deployment_creates_hashed_replicaset_pods_events_and_status(wl: Env) -> None:
    await start(wl)
    created = await wl.admin.create(deployment("web", 3))
    await wl.wait(lambda: complete(wl, "web", 3))
    h = pod_template_hash(created["spec"]["template"])
    rs = (await replicasets(wl))[f"web-{h}"]
    assert rs["metadata"]["labels"] == {"app": "web", "pod-template-hash": h}
    assert rs["spec"]["selector"]["matchLabels"] == {"app": "web", "pod-template-hash": h}
    assert rs["metadata"]["ownerReferences"][0]["uid"] == created["metadata"]["uid"]
    assert rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    assert rs["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] == "3"
    assert rs["metadata"]["annotations"]["deployment.kubernetes.io/max-replicas"] == "4"
    pods = await wl.pods()
    assert len(pods) == 3
    assert all(p["metadata"]["name"].startswith(f"web-{h}-") for p in pods)
    assert all(p["metadata"]["labels"]["pod-template-hash"] == h for p in pods)
    d = await wl.get("deployments", "web")
    assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    assert d["status"]["readyReplicas"] == 3 and "unavailableReplicas" not in d["status"]
    avail = cond(d, "Available")
    assert (avail["status"], avail["reason"]) == ("True", "MinimumReplicasAvailable")
    prog = cond(d, "Progressing")
    assert (prog["status"], prog["reason"]) == ("True", "NewReplicaSetAvailable")
    assert prog["message"] == f'ReplicaSet "web-{h}" has successfully progressed.'
    scaling = await wl.events("ScalingReplicaSet")
    assert [(e["message"], e["source"]["component"], e["involvedObject"]["kind"]) for e in scaling] == [
        (f"Scaled up replica set web-{h} to 3", "deployment-controller", "Deployment")]
    assert len(await wl.events("SuccessfulCreate")) == 3


async def test_rolling_update_never_breaks_surge_or_unavailability(wl: Env) -> None:
    await start(wl, ready_after=3)
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 1}}
    await wl.admin.create(deployment("web", 5, strategy=strategy))
    await wl.wait(lambda: complete(wl, "web", 5))
    log = WatchLog(wl.admin, ("pods", "replicasets"))
    await log.start()
    await set_image(wl, "web", "nginx:1.26")
    await wl.wait(lambda: complete(wl, "web", 5), timeout=120)
    await wl.clock.advance(1)
    await log.stop()

    pods = dict(log.initial["pods"])
    sets = dict(log.initial["replicasets"])
    checked = 0
    max_pods = 0
    for res, typ, obj in log.history():
        table = pods if res == "pods" else sets
        if typ == "DELETED":
            table.pop(obj["metadata"]["name"], None)
        else:
            table[obj["metadata"]["name"]] = obj
        live = [p for p in pods.values() if not p["metadata"].get("deletionTimestamp")]
        ready = [p for p in live if any(c["type"] == "Ready" and c["status"] == "True"
                                        for c in (p.get("status") or {}).get("conditions") or ())]
        max_pods = max(max_pods, len(live))
        assert len(live) <= 5 + 1, f"more than replicas + maxSurge pods: {sorted(pods)}"
        assert len(ready) >= 5 - 1, f"fewer than replicas - maxUnavailable ready pods: {len(ready)}"
        assert sum(rs["spec"]["replicas"] for rs in sets.values()) <= 5 + 1
        checked += 1
    assert checked > 20 and max_pods == 6
    rss = await replicasets(wl)
    assert len(rss) == 2
    new = next(rs for rs in rss.values() if rs["spec"]["replicas"] == 5)
    old = next(rs for rs in rss.values() if rs["spec"]["replicas"] == 0)
    assert new["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    assert (await wl.get("deployments", "web"))["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    assert all(p["spec"]["containers"][0]["image"] == "nginx:1.26" for p in await wl.pods())
    messages = [e["message"] for e in await wl.events("ScalingReplicaSet")]
    assert f"Scaled up replica set {new['metadata']['name']} to 1" in messages
    assert any(m.startswith(f"Scaled down replica set {old['metadata']['name']} to 0 from ") for m in messages), messages


async def test_scale_down_and_up_and_pod_replacement(wl: Env) -> None:
    await start(wl)
    await wl.admin.create(deployment("web", 3))
    await wl.wait(lambda: complete(wl, "web", 3))
    victim = (await wl.pods())[0]["metadata"]["name"]
    await wl.admin.delete("pods", victim, "default")

    async def replaced() -> bool:
        names = [p["metadata"]["name"] for p in await wl.pods()]
        return len(names) == 3 and victim not in names

    await wl.wait(replaced)
    await wl.admin.patch("deployments", "web", {"spec": {"replicas": 1}}, "default", subresource="scale")
    await wl.wait(lambda: complete(wl, "web", 1))
    assert len(await wl.pods()) == 1
    await wl.admin.patch("deployments", "web", {"spec": {"replicas": 3}}, "default", subresource="scale")
    await wl.wait(lambda: complete(wl, "web", 3))
    assert len(await wl.pods()) == 3
    assert len(await replicasets(wl)) == 1
    rs = next(iter((await replicasets(wl)).values()))
    messages = [e["message"] for e in await wl.events("ScalingReplicaSet")]
    assert f"Scaled down replica set {rs['metadata']['name']} to 1 from 3" in messages
    assert f"Scaled up replica set {rs['metadata']['name']} to 3 from 1" in messages


async def test_rollback_by_template_change_reuses_old_replicaset(wl: Env) -> None:
    await start(wl)
    await wl.admin.create(deployment("web", 2))
    await wl.wait(lambda: complete(wl, "web", 2))
    await set_image(wl, "web", "nginx:1.26")
    await wl.wait(lambda: complete(wl, "web", 2))
    await set_image(wl, "web", "nginx:1.25")
    await wl.wait(lambda: complete(wl, "web", 2))
    rss = await replicasets(wl)
    assert len(rss) == 2
    current = next(rs for rs in rss.values() if rs["spec"]["replicas"] == 2)
    assert current["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.25"
    assert current["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3"
    assert current["metadata"]["annotations"]["deployment.kubernetes.io/revision-history"] == "1"
    d = await wl.get("deployments", "web")
    assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3"
    assert all(p["spec"]["containers"][0]["image"] == "nginx:1.25" for p in await wl.pods())


async def test_rollout_undo_as_kubectl_sends_it_reuses_the_old_replicaset(wl: Env) -> None:
    """kubectl rollout undo puts the old RS's template back through Go's typed encoding, which adds
    ``creationTimestamp: null``; upstream compares typed templates, so the old RS comes back as revision 3."""
    await start(wl)
    await wl.admin.create(deployment("web", 2))
    await wl.wait(lambda: complete(wl, "web", 2))
    first = next(iter((await replicasets(wl)).values()))
    await set_image(wl, "web", "nginx:1.26")
    await wl.wait(lambda: complete(wl, "web", 2))
    template = first["spec"]["template"]
    template["metadata"]["labels"].pop("pod-template-hash")
    template["metadata"]["creationTimestamp"] = None
    await wl.admin.patch("deployments", "web", [
        {"op": "replace", "path": "/spec/template", "value": template}], "default", patch_type="json")
    await wl.wait(lambda: complete(wl, "web", 2))
    rss = await replicasets(wl)
    assert len(rss) == 2
    restored = rss[first["metadata"]["name"]]
    assert restored["spec"]["replicas"] == 2
    assert restored["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3"
    assert {p["metadata"]["labels"]["pod-template-hash"] for p in await wl.pods()} == {
        first["metadata"]["labels"]["pod-template-hash"]}


async def test_recreate_removes_old_pods_before_new_ones(wl: Env) -> None:
    await start(wl)
    await wl.admin.create(deployment("web", 3, strategy={"type": "Recreate"}))
    await wl.wait(lambda: complete(wl, "web", 3))
    log = WatchLog(wl.admin, ("pods",))
    await log.start()
    await set_image(wl, "web", "nginx:1.26")
    await wl.wait(lambda: complete(wl, "web", 3))
    await log.stop()
    live: dict[str, str] = {p["metadata"]["name"]: p["spec"]["containers"][0]["image"] for p in await wl.pods()}
    seen = {n: p["spec"]["containers"][0]["image"] for n, p in log.initial["pods"].items()}
    assert set(seen.values()) == {"nginx:1.25"}
    for _, typ, obj in log.history():
        image = obj["spec"]["containers"][0]["image"]
        if typ == "DELETED":
            seen.pop(obj["metadata"]["name"], None)
        else:
            seen[obj["metadata"]["name"]] = image
        images = set(seen.values())
        assert len(images) <= 1 or not seen, f"old and new pods side by side: {seen}"
    assert set(live.values()) == {"nginx:1.26"} and len(live) == 3


async def test_paused_deployment_does_not_roll_out_until_resumed(wl: Env) -> None:
    await start(wl)
    await wl.admin.create(deployment("web", 2))
    await wl.wait(lambda: complete(wl, "web", 2))
    await wl.admin.patch("deployments", "web", {"spec": {"paused": True}}, "default")
    await set_image(wl, "web", "nginx:1.26")
    await wl.clock.advance(20)
    assert len(await replicasets(wl)) == 1
    prog = cond(await wl.get("deployments", "web"), "Progressing")
    assert (prog["status"], prog["reason"], prog["message"]) == ("Unknown", "DeploymentPaused", "Deployment is paused")
    await wl.admin.patch("deployments", "web", {"spec": {"paused": False}}, "default")
    await wl.wait(lambda: complete(wl, "web", 2))
    assert {p["spec"]["containers"][0]["image"] for p in await wl.pods()} == {"nginx:1.26"}


async def test_revision_history_limit_deletes_oldest_empty_replicasets(wl: Env) -> None:
    await start(wl, ready_after=1)
    await wl.admin.create(deployment("web", 1, revisionHistoryLimit=1))
    for image in ("nginx:1.26", "nginx:1.27", "nginx:1.28"):
        await wl.wait(lambda: complete(wl, "web", 1))
        await set_image(wl, "web", image)
    await wl.wait(lambda: complete(wl, "web", 1))
    await wl.clock.advance(5)
    rss = await replicasets(wl)
    revisions = sorted(int(rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"]) for rs in rss.values())
    assert revisions == [3, 4]


async def test_progress_deadline_exceeded_when_pods_never_get_ready(wl: Env) -> None:
    await wl.start(DeploymentController, ReplicaSetController)
    await wl.admin.create(deployment("web", 2, progressDeadlineSeconds=30))

    async def timed_out() -> bool:
        d = await wl.get("deployments", "web")
        return any(c["type"] == "Progressing" and c["reason"] == "ProgressDeadlineExceeded"
                   for c in (d.get("status") or {}).get("conditions") or ())

    took = await wl.wait(timed_out, timeout=120, step=1)
    assert 30 <= took <= 40
    d = await wl.get("deployments", "web")
    assert cond(d, "Progressing")["status"] == "False"
    assert cond(d, "Progressing")["message"].endswith("has timed out progressing.")
    avail = cond(d, "Available")
    assert (avail["status"], avail["reason"]) == ("False", "MinimumReplicasUnavailable")
    assert d["status"]["unavailableReplicas"] == 2
