"""Garbage collector: Background, Foreground and Orphan propagation over ownerReferences."""

from __future__ import annotations

import asyncio
from typing import Any

from ctrl_env import Ctrl, ctrl, pod  # noqa: F401 - ctrl is the fixture

from kconsole.objects.meta import owner_ref

GC = "garbage-collector-controller"


def replicaset(name: str) -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": 0, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}}}}


async def owned_pods(ctrl: Ctrl, owner: dict[str, Any], n: int, *, block: bool = True) -> list[str]:
    names = []
    for i in range(n):
        p = pod(f"{owner['metadata']['name']}-{i}", owner=owner_ref(owner, block_owner_deletion=block))
        names.append((await ctrl.admin.create(p))["metadata"]["name"])
    return names


async def test_background_deletes_dependents_of_a_deleted_owner(ctrl: Ctrl) -> None:
    await ctrl.manager(GC)
    rs = await ctrl.admin.create(replicaset("web"))
    await owned_pods(ctrl, rs, 3)
    keep = await ctrl.admin.create(pod("unowned"))
    await ctrl.admin.delete("replicasets", "web", "default", propagation_policy="Background")
    assert not await ctrl.exists("replicasets", "web")
    await ctrl.wait(lambda: _no_pods_named(ctrl, "web-"), timeout=10)
    assert await ctrl.exists("pods", keep["metadata"]["name"])


async def test_dependent_with_a_live_owner_only_loses_the_dangling_reference(ctrl: Ctrl) -> None:
    await ctrl.manager(GC)
    a = await ctrl.admin.create(replicaset("a"))
    b = await ctrl.admin.create(replicaset("b"))
    p = pod("shared", owner=owner_ref(a, controller=True))
    p["metadata"]["ownerReferences"].append(owner_ref(b, controller=False))
    await ctrl.admin.create(p)
    await ctrl.admin.delete("replicasets", "b", "default")

    async def refs() -> list[str]:
        got = await ctrl.admin.get("pods", "shared", "default")
        return [r["name"] for r in got["metadata"].get("ownerReferences", [])]

    await ctrl.wait(lambda: _eq(refs(), ["a"]), timeout=10)
    await ctrl.clock.advance(5)
    assert await ctrl.exists("pods", "shared")


def record_deletions(ctrl: Ctrl, start_rv: str, *resources: str) -> dict[str, int]:
    """name -> store revision of its DELETED event, for the given resources in "default"."""
    deleted_at: dict[str, int] = {}

    async def record(resource: str) -> None:
        async with ctrl.admin.watch(resource, "default", resource_version=start_rv) as events:
            async for ev in events:
                if ev["type"] == "DELETED":
                    deleted_at[ev["object"]["metadata"]["name"]] = int(ev["object"]["metadata"]["resourceVersion"])

    ctrl.tasks.extend(asyncio.create_task(record(r)) for r in resources)
    return deleted_at


async def test_foreground_deletes_dependents_before_the_owner(ctrl: Ctrl) -> None:
    await ctrl.manager(GC)
    rs = await ctrl.admin.create(replicaset("fg"))
    pods = await owned_pods(ctrl, rs, 3)
    start_rv = (await ctrl.admin.list("pods", "default"))["metadata"]["resourceVersion"]
    deleted_at = record_deletions(ctrl, start_rv, "pods", "replicasets")
    marked = await ctrl.admin.delete("replicasets", "fg", "default", propagation_policy="Foreground")
    assert "foregroundDeletion" in marked["metadata"]["finalizers"]
    assert marked["metadata"].get("deletionTimestamp")
    await ctrl.wait(lambda: "fg" in deleted_at, timeout=10)
    assert set(pods) <= set(deleted_at)
    assert max(deleted_at[p] for p in pods) < deleted_at["fg"], deleted_at


async def test_foreground_cascades_through_two_levels(ctrl: Ctrl) -> None:
    await ctrl.manager(GC)
    deploy = await ctrl.admin.create({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default"},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "d"}},
                 "template": {"metadata": {"labels": {"app": "d"}},
                              "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}}}})
    rs = replicaset("d-1")
    rs["metadata"]["ownerReferences"] = [owner_ref(deploy)]
    rs = await ctrl.admin.create(rs)
    pods = await owned_pods(ctrl, rs, 2)
    start_rv = (await ctrl.admin.list("pods", "default"))["metadata"]["resourceVersion"]
    deleted_at = record_deletions(ctrl, start_rv, "pods", "replicasets", "deployments")
    await ctrl.admin.delete("deployments", "d", "default", propagation_policy="Foreground")
    await ctrl.wait(lambda: "d" in deleted_at, timeout=10)
    assert max(deleted_at[p] for p in pods) < deleted_at["d-1"] < deleted_at["d"], deleted_at


async def test_orphan_keeps_dependents_and_strips_their_references(ctrl: Ctrl) -> None:
    await ctrl.manager(GC)
    rs = await ctrl.admin.create(replicaset("orph"))
    pods = await owned_pods(ctrl, rs, 2)
    marked = await ctrl.admin.delete("replicasets", "orph", "default", propagation_policy="Orphan")
    assert "orphan" in marked["metadata"]["finalizers"]
    await ctrl.wait(lambda: _not(ctrl.exists("replicasets", "orph")), timeout=10)
    for name in pods:
        got = await ctrl.admin.get("pods", name, "default")
        assert not got["metadata"].get("ownerReferences")


async def test_objects_whose_owner_vanished_while_the_collector_was_down_are_collected(ctrl: Ctrl) -> None:
    rs = await ctrl.admin.create(replicaset("gone"))
    await owned_pods(ctrl, rs, 2)
    await ctrl.admin.delete("replicasets", "gone", "default")
    await ctrl.manager(GC)
    await ctrl.wait(lambda: _no_pods_named(ctrl, "gone-"), timeout=10)


async def _no_pods_named(ctrl: Ctrl, prefix: str) -> bool:
    return not [n for n in await ctrl.names("pods") if n.startswith(prefix)]


async def _eq(aw: Any, value: Any) -> bool:
    return await aw == value


async def _not(aw: Any) -> bool:
    return not await aw
