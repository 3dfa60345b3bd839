"""Disruption controller: PodDisruptionBudget status from real pods, spent by the real Eviction API."""

from __future__ import annotations

from typing import Any

from workload_env import Env, pod_template, wl  # noqa: F401 - wl is the fixture

from kconsole.client import StatusError
from kconsole.controllers.deployment import DeploymentController
from kconsole.controllers.disruption import DisruptionController
from kconsole.controllers.replicaset import ReplicaSetController

Obj = dict[str, Any]


def deployment(name: str, replicas: int) -> Obj:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels}, "template": pod_template(labels)}}


def pdb(name: str, app: str, **spec: Any) -> Obj:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": app}}, **spec}}


def counts(budget: Obj) -> tuple[int, int, int, int]:
    st = budget.get("status") or {}
    return st.get("disruptionsAllowed"), st.get("currentHealthy"), st.get("desiredHealthy"), st.get("expectedPods")


async def budget_is(wl: Env, name: str, want: tuple[int, int, int, int]) -> bool:
    return counts(await wl.get("poddisruptionbudgets", name)) == want


async def insufficient(wl: Env, name: str) -> bool:
    st = (await wl.get("poddisruptionbudgets", name)).get("status") or {}
    return st["disruptionsAllowed"] == 0 and st["conditions"][0]["reason"] == "InsufficientPods"


async def evict(wl: Env, pod: str) -> None:
    await wl.admin.create_subresource("pods", pod, "default", "eviction", {
        "apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": pod, "namespace": "default"}})


async def test_budget_status_allows_one_eviction_then_refuses_until_the_replacement_is_ready(wl: Env) -> None:
    await wl.start(DeploymentController, ReplicaSetController, DisruptionController)
    await wl.runner(ready_after=2)
    await wl.admin.create(deployment("web", 3))
    await wl.admin.create(pdb("web", "web", minAvailable=2))
    await wl.wait(lambda: budget_is(wl, "web", (1, 3, 2, 3)))
    budget = await wl.get("poddisruptionbudgets", "web")
    assert budget["status"]["observedGeneration"] == budget["metadata"]["generation"]
    cond = budget["status"]["conditions"][0]
    assert (cond["type"], cond["status"], cond["reason"]) == ("DisruptionAllowed", "True", "SufficientPods")
    first, second = sorted(p["metadata"]["name"] for p in await wl.pods(selector="app=web"))[:2]
    await evict(wl, first)
    try:
        await evict(wl, second)
    except StatusError as err:
        assert err.code == 429
        assert err.status["details"]["causes"][0]["message"].startswith("The disruption budget web needs 2 healthy")
    else:
        raise AssertionError("a second eviction went through a budget that allows one")
    await wl.wait(lambda: insufficient(wl, "web"), timeout=5)
    await wl.wait(lambda: budget_is(wl, "web", (1, 3, 2, 3)), timeout=60)
    await evict(wl, second)


async def test_percentages_and_max_unavailable_count_the_controllers_replicas(wl: Env) -> None:
    await wl.start(DeploymentController, ReplicaSetController, DisruptionController)
    await wl.runner(ready_after=2, only=lambda p: p["metadata"]["labels"].get("app") != "slow")
    await wl.admin.create(deployment("api", 4))
    await wl.admin.create(pdb("half", "api", maxUnavailable="50%"))
    await wl.admin.create(deployment("slow", 2))
    await wl.admin.create(pdb("slow", "slow", minAvailable="50%"))
    await wl.admin.create(pdb("none", "nothing-here", minAvailable=1))
    await wl.wait(lambda: budget_is(wl, "half", (2, 4, 2, 4)))
    await wl.wait(lambda: budget_is(wl, "slow", (0, 0, 1, 2)))
    await wl.wait(lambda: budget_is(wl, "none", (0, 0, 1, 0)))
    assert [e["message"] for e in await wl.events("NoPods") if e["involvedObject"]["name"] == "none"] == [
        "No matching pods found"]


async def test_a_pod_whose_controller_has_no_scale_fails_safe(wl: Env) -> None:
    await wl.start(DisruptionController)
    owner = {"apiVersion": "batch/v1", "kind": "Job", "name": "batch", "uid": "8d1c6a4e-0000-4000-8000-000000000001",
             "controller": True}
    await wl.admin.create({"apiVersion": "v1", "kind": "Pod",
                           "metadata": {"name": "b1", "namespace": "default", "labels": {"app": "batch"},
                                        "ownerReferences": [owner]},
                           "spec": pod_template({})["spec"]})
    await wl.admin.create(pdb("batch", "batch", maxUnavailable=1))

    async def failed() -> bool:
        st = (await wl.get("poddisruptionbudgets", "batch")).get("status") or {}
        return bool(st.get("conditions")) and st["conditions"][0]["reason"] == "SyncFailed"

    await wl.wait(failed)
    st = (await wl.get("poddisruptionbudgets", "batch"))["status"]
    assert st["disruptionsAllowed"] == 0
    assert st["conditions"][0]["message"] == 'found no controllers for pod "b1"'
    assert [e["message"] for e in await wl.events("CalculateExpectedPodCountFailed")] == [
        'Failed to calculate the number of expected pods: found no controllers for pod "b1"']
