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
