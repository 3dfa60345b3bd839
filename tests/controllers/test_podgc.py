"""Pod GC: terminated pods beyond the threshold, pods on deleted nodes, out-of-service nodes."""

from __future__ import annotations

import asyncio

from ctrl_env import Ctrl, ctrl, node, pod  # noqa: F401 - ctrl is the fixture

from kconsole.objects.meta import get_condition

PODGC = "pod-garbage-collector-controller"


async def test_terminated_pods_beyond_the_threshold_go_oldest_first(ctrl: Ctrl) -> None:
    await ctrl.admin.create(node("n1"))
    for i in range(5):
        await ctrl.admin.create(pod(f"done-{i}", node_name="n1"))
        await ctrl.set_pod_status(f"done-{i}", phase="Succeeded" if i % 2 else "Failed", ready=False)
        await ctrl.clock.advance(2)  # distinct creation times
    await ctrl.admin.create(pod("running", node_name="n1"))
    await ctrl.set_pod_status("running", ip="10.0.0.9")
    await ctrl.manager(PODGC, settings={PODGC: {"threshold": 3}})
    await ctrl.clock.advance(1)
    assert await ctrl.names("pods") == ["done-2", "done-3", "done-4", "running"]


async def test_pods_of_a_deleted_node_are_failed_and_removed_after_quarantine(ctrl: Ctrl) -> None:
    await ctrl.admin.create(node("n1"))
    await ctrl.admin.create(node("n2"))
    await ctrl.admin.create(pod("orphan", node_name="n1", grace=30))
    await ctrl.admin.create(pod("fine", node_name="n2", grace=30))
    await ctrl.set_pod_status("orphan", ip="10.0.0.1")
    gc = await ctrl.manager(PODGC)
    seen: list[dict] = []

    async def watch() -> None:
        async with ctrl.admin.watch("pods", "default", field_selector="metadata.name=orphan") as events:
            async for ev in events:
                seen.append(ev["object"])

    ctrl.tasks.append(asyncio.create_task(watch()))
    await ctrl.admin.delete("nodes", "n1")
    deleted_at = ctrl.clock.now()
    await ctrl.wait(lambda: _not(ctrl.exists("pods", "orphan")), timeout=120, step=2)
    assert 40 <= ctrl.clock.now() - deleted_at <= 62  # 40 s quarantine, 20 s period
    assert await ctrl.exists("pods", "fine")
    failed = [o for o in seen if (o.get("status") or {}).get("phase") == "Failed"]
    assert failed, "the pod is marked Failed before it is removed"
    cond = get_condition(failed[-1]["status"], "DisruptionTarget")
    assert (cond["reason"], cond["message"]) == ("DeletionByPodGC", "PodGC: node no longer exists")
    controller = gc.active[PODGC]
    assert controller.deleted["orphaned"] == 1  # type: ignore[attr-defined]


async def test_terminating_pods_on_an_out_of_service_node_are_force_deleted(ctrl: Ctrl) -> None:
    await ctrl.admin.create(node("n1", ready="False", taints=[
        {"key": "node.kubernetes.io/out-of-service", "value": "nodeshutdown", "effect": "NoExecute"}]))
    await ctrl.admin.create(pod("stuck", node_name="n1", grace=30,
                                tolerations=[{"operator": "Exists"}]))
    await ctrl.admin.create(pod("alive", node_name="n1", grace=30, tolerations=[{"operator": "Exists"}]))
    await ctrl.admin.delete("pods", "stuck", "default")
    assert await ctrl.exists("pods", "stuck")  # terminating, and no kubelet to finish it
    await ctrl.manager(PODGC)
    await ctrl.wait(lambda: _not(ctrl.exists("pods", "stuck")), timeout=30)
    assert await ctrl.exists("pods", "alive")


async def _not(aw: object) -> bool:
    return not await aw  # type: ignore[misc]
