"""ReplicaSet controller against the real API server on the virtual clock."""

from __future__ import annotations

from typing import Any

from workload_env import Env, pod_template, wl  # noqa: F401 - wl is the fixture

from kconsole.controllers.replicaset import ReplicaSetController


def replicaset(name: str, replicas: int, labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    labels = labels or {"app": name}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": pod_template(labels), **spec}}


async def owned(wl: Env, rs: str) -> list[dict[str, Any]]:
    return [p for p in await wl.pods() if any(r["name"] == rs for r in p["metadata"].get("ownerReferences", []))]


async def test_creates_pods_with_owner_references_and_status(wl: Env) -> None:
    await wl.start(ReplicaSetController)
    await wl.runner(ready_after=2)
    created = await wl.admin.create(replicaset("web", 3))
    await wl.wait(lambda: _ready(wl, "web", 3))
    pods = await owned(wl, "web")
    assert len(pods) == 3
    for p in pods:
        name = p["metadata"]["name"]
        assert name.startswith("web-") and len(name) == len("web-") + 5
        ref = p["metadata"]["ownerReferences"][0]
        assert ref == {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web",
                       "uid": created["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}
    rs = await wl.get("replicasets", "web")
    assert rs["status"]["replicas"] == 3
    assert rs["status"]["readyReplicas"] == 3
    assert rs["status"]["availableReplicas"] == 3
    assert rs["status"]["fullyLabeledReplicas"] == 3
    assert rs["status"]["observedGeneration"] == rs["metadata"]["generation"]
    events = await wl.events("SuccessfulCreate")
    assert sorted(e["message"] for e in events) == sorted(f"Created pod: {p['metadata']['name']}" for p in pods)
    assert {e["source"]["component"] for e in events} == {"replicaset-controller"}


async def _ready(wl: Env, name: str, n: int) -> bool:
    rs = await wl.get("replicasets", name)
    return (rs.get("status") or {}).get("readyReplicas", 0) == n


async def test_adopts_matching_orphans_and_releases_relabelled_pods(wl: Env) -> None:
    await wl.start(ReplicaSetController)
    orphan = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "stray", "namespace": "default",
                                                             "labels": {"app": "web"}},
              "spec": pod_template({})["spec"]}
    await wl.admin.create(orphan)
    rs = await wl.admin.create(replicaset("web", 2))
    await wl.wait(lambda: _count(wl, "web", 2))
    stray = await wl.get("pods", "stray")
    assert stray["metadata"]["ownerReferences"][0]["uid"] == rs["metadata"]["uid"]
    assert len(await wl.events("SuccessfulCreate")) == 1  # only one pod was missing

    await wl.admin.patch("pods", "stray", {"metadata": {"labels": {"app": "other"}}}, "default")

    async def released() -> bool:
        pod = await wl.get("pods", "stray")
        return not pod["metadata"].get("ownerReferences") and await _count(wl, "web", 2)

    await wl.wait(released)
    assert len(await wl.events("SuccessfulCreate")) == 2


async def test_scale_down_deletes_not_ready_pods_first(wl: Env) -> None:
    await wl.start(ReplicaSetController)
    runner = await wl.runner(ready_after=1)
    await wl.admin.create(replicaset("web", 3))
    await wl.wait(lambda: _ready(wl, "web", 3))
    pods = await owned(wl, "web")
    sick = pods[1]["metadata"]["name"]
    await runner.set_ready("default", sick, False)
    await wl.wait(lambda: _ready(wl, "web", 2))
    await wl.admin.patch("replicasets", "web", {"spec": {"replicas": 2}}, "default", subresource="scale")
    await wl.wait(lambda: _count(wl, "web", 2))
    assert sick not in {p["metadata"]["name"] for p in await owned(wl, "web")}
    assert [e["message"] for e in await wl.events("SuccessfulDelete")] == [f"Deleted pod: {sick}"]


async def _count(wl: Env, name: str, n: int) -> bool:
    return len(await owned(wl, name)) == n and (
        (await wl.get("replicasets", name)).get("status") or {}).get("replicas") == n


async def test_template_labels_change_recounts_fully_labeled_pods(wl: Env) -> None:
    await wl.start(ReplicaSetController)
    await wl.runner(ready_after=1)
    await wl.admin.create(replicaset("web", 2))
    await wl.wait(lambda: _ready(wl, "web", 2))
    assert (await wl.get("replicasets", "web"))["status"]["fullyLabeledReplicas"] == 2
    # The pods still match the selector but miss the template's new label: same pods, another count.
    await wl.admin.patch("replicasets", "web", {"spec": {"template": {"metadata": {"labels": {"tier": "front"}}}}},
                         "default")

    async def recounted() -> bool:
        status = (await wl.get("replicasets", "web")).get("status") or {}
        return status.get("replicas") == 2 and "fullyLabeledReplicas" not in status

    await wl.wait(recounted)
    assert len(await owned(wl, "web")) == 2
