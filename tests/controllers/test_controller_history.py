"""StatefulSet and DaemonSet revision history: ControllerRevisions as upstream's controllers write them,
read and rolled back by the real kubectl (rollout history / undo / status) through the HTTP front."""

from __future__ import annotations

from typing import Any

from kubectl_env import Kubectl, kubectl  # noqa: F401 - kubectl is the fixture
from workload_env import Env, node, pod_template, run_daemonsets, statefulset, wl  # noqa: F401 - wl is the fixture

from kconsole.controllers.statefulset import StatefulSetController

Obj = dict[str, Any]


def daemonset(name: str, **spec: Any) -> Obj:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": labels}, "template": pod_template(labels), **spec}}


async def revisions(wl: Env) -> dict[str, Obj]:
    return {r["metadata"]["name"]: r for r in await wl.admin.list_all("controllerrevisions", "default")}


async def images(wl: Env, selector: str) -> dict[str, str]:
    return {p["metadata"]["name"]: p["spec"]["containers"][0]["image"] for p in await wl.pods(selector=selector)}


async def sts_rolled_out(wl: Env, name: str) -> bool:
    sts = await wl.get("statefulsets", name)
    st = sts.get("status") or {}
    n = sts["spec"]["replicas"]
    return (st.get("observedGeneration") == sts["metadata"]["generation"] and st.get("readyReplicas") == n
            and st.get("updatedReplicas") == n and st.get("currentRevision") == st.get("updateRevision"))


async def ds_rolled_out(wl: Env, name: str) -> bool:
    ds = await wl.get("daemonsets", name)
    st = ds.get("status") or {}
    pods = await wl.pods(selector=f"app={name}")
    return (st.get("observedGeneration") == ds["metadata"]["generation"] and st.get("desiredNumberScheduled", 0) > 0
            and st.get("updatedNumberScheduled") == st["desiredNumberScheduled"] == st.get("numberAvailable")
            and len(pods) == st["desiredNumberScheduled"])


def history_rows(out: str) -> list[list[str]]:
    lines = [line for line in out.splitlines()[2:] if line.strip()]
    return [line.split(None, 1) for line in lines]


async def test_kubectl_rollout_history_undo_and_status_of_a_statefulset(wl: Env, kubectl: Kubectl) -> None:
    await wl.start(StatefulSetController)
    await wl.runner(ready_after=2)
    await wl.admin.create(statefulset("web", 3))
    await wl.wait(lambda: sts_rolled_out(wl, "web"))
    first = next(iter((await revisions(wl)).values()))
    sts = await wl.get("statefulsets", "web")
    assert first["revision"] == 1 and first["metadata"]["name"].startswith("web-")
    assert first["metadata"]["labels"] == {"app": "web", "controller-revision-hash": first["metadata"]["name"][4:]}
    ref = first["metadata"]["ownerReferences"][0]
    assert (ref["kind"], ref["name"], ref["uid"], ref["controller"]) == (
        "StatefulSet", "web", sts["metadata"]["uid"], True)
    assert first["data"] == {"spec": {"template": {**sts["spec"]["template"], "$patch": "replace"}}}
    assert {p["metadata"]["labels"]["controller-revision-hash"] for p in await wl.pods()} == {first["metadata"]["name"]}

    await kubectl("annotate", "sts/web", "kubernetes.io/change-cause=nginx 1.26")
    await kubectl("set", "image", "sts/web", "app=nginx:1.26")
    await wl.wait(lambda: sts_rolled_out(wl, "web"))
    status = await kubectl("rollout", "status", "sts/web", "--watch=false")
    assert status.strip() == "partitioned roll out complete: 3 new pods have been updated..."
    assert history_rows(await kubectl("rollout", "history", "sts/web")) == [["1", "<none>"], ["2", "nginx 1.26"]]
    old_uids = {p["metadata"]["uid"] for p in await wl.pods()}

    assert (await kubectl("rollout", "undo", "sts/web")).strip() == "statefulset.apps/web rolled back"
    await wl.wait(lambda: sts_rolled_out(wl, "web"))
    assert (await wl.get("statefulsets", "web"))["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.25"
    pods = await wl.pods()
    assert set(await images(wl, "app=web")) == {"web-0", "web-1", "web-2"}
    assert set((await images(wl, "app=web")).values()) == {"nginx:1.25"}
    assert not old_uids & {p["metadata"]["uid"] for p in pods}
    assert {p["metadata"]["labels"]["controller-revision-hash"] for p in pods} == {first["metadata"]["name"]}
    # The old revision came back with the next number instead of a copy being written.
    revs = await revisions(wl)
    assert {n: r["revision"] for n, r in revs.items()}[first["metadata"]["name"]] == 3 and len(revs) == 2
    assert history_rows(await kubectl("rollout", "history", "sts/web")) == [["2", "nginx 1.26"], ["3", "<none>"]]
    st = (await wl.get("statefulsets", "web"))["status"]
    assert st["currentRevision"] == st["updateRevision"] == first["metadata"]["name"]

    undone = await kubectl("rollout", "undo", "sts/web", "--to-revision=2")
    assert undone.strip() == "statefulset.apps/web rolled back"
    await wl.wait(lambda: sts_rolled_out(wl, "web"))
    assert set((await images(wl, "app=web")).values()) == {"nginx:1.26"}
    assert history_rows(await kubectl("rollout", "history", "sts/web")) == [["3", "<none>"], ["4", "nginx 1.26"]]


async def test_partition_updates_only_the_top_ordinals_and_below_it_pods_come_back_as_they_were(wl: Env) -> None:
    await wl.start(StatefulSetController)
    await wl.runner(ready_after=1)
    await wl.admin.create(statefulset("db", 3, updateStrategy={"type": "RollingUpdate",
                                                               "rollingUpdate": {"partition": 2}}))
    await wl.wait(lambda: sts_rolled_out(wl, "db"))
    await wl.admin.patch("statefulsets", "db", {"spec": {"template": {"spec": {"containers": [
        {"name": "app", "image": "nginx:1.26"}]}}}}, "default")

    async def partial() -> bool:
        st = (await wl.get("statefulsets", "db")).get("status") or {}
        return st.get("updatedReplicas") == 1 and st.get("readyReplicas") == 3

    await wl.wait(partial)
    await wl.clock.advance(10)
    assert await images(wl, "app=db") == {"db-0": "nginx:1.25", "db-1": "nginx:1.25", "db-2": "nginx:1.26"}
    st = (await wl.get("statefulsets", "db"))["status"]
    assert st["currentReplicas"] == 2 and st["updatedReplicas"] == 1 and st["currentRevision"] != st["updateRevision"]
    old_uid = (await wl.get("pods", "db-0"))["metadata"]["uid"]
    await wl.admin.delete("pods", "db-0", "default")

    async def back() -> bool:
        pods = {p["metadata"]["name"]: p for p in await wl.pods()}
        return "db-0" in pods and pods["db-0"]["metadata"]["uid"] != old_uid

    await wl.wait(back)
    db0 = await wl.get("pods", "db-0")
    assert db0["spec"]["containers"][0]["image"] == "nginx:1.25"
    assert db0["metadata"]["labels"]["controller-revision-hash"] == st["currentRevision"]


async def test_revision_history_limit_keeps_only_live_and_the_newest_old_revisions(wl: Env) -> None:
    await wl.start(StatefulSetController)
    await wl.runner(ready_after=1)
    await wl.admin.create(statefulset("web", 1, revisionHistoryLimit=1))
    for image in ("nginx:1.26", "nginx:1.27", "nginx:1.28"):
        await wl.wait(lambda: sts_rolled_out(wl, "web"))
        await wl.admin.patch("statefulsets", "web", {"spec": {"template": {"spec": {"containers": [
            {"name": "app", "image": image}]}}}}, "default")
    await wl.wait(lambda: sts_rolled_out(wl, "web"))
    await wl.clock.advance(2)
    assert sorted(r["revision"] for r in (await revisions(wl)).values()) == [3, 4]


async def start_daemons(wl: Env) -> None:
    for n in ("worker-1", "worker-2"):
        await wl.admin.create(node(n))
    await run_daemonsets(wl)


async def test_kubectl_rollout_history_and_undo_to_revision_of_a_daemonset(wl: Env, kubectl: Kubectl) -> None:
    await start_daemons(wl)
    await wl.admin.create(daemonset("agent", revisionHistoryLimit=2))
    await wl.wait(lambda: ds_rolled_out(wl, "agent"))
    first = next(iter((await revisions(wl)).values()))
    hash1 = first["metadata"]["labels"]["controller-revision-hash"]
    assert first["metadata"]["name"] == f"agent-{hash1}" and first["revision"] == 1
    assert {p["metadata"]["labels"]["controller-revision-hash"] for p in await wl.pods()} == {hash1}
    for image in ("nginx:1.26", "nginx:1.27"):
        await kubectl("set", "image", "ds/agent", f"app={image}")
        await wl.wait(lambda: ds_rolled_out(wl, "agent"))
    status = await kubectl("rollout", "status", "ds/agent", "--watch=false")
    assert status.strip() == 'daemon set "agent" successfully rolled out'
    assert [r[0] for r in history_rows(await kubectl("rollout", "history", "ds/agent"))] == ["1", "2", "3"]

    out = await kubectl("rollout", "undo", "ds/agent", "--to-revision=1")
    assert out.strip() == "daemonset.apps/agent rolled back"
    await wl.wait(lambda: ds_rolled_out(wl, "agent"))
    assert set((await images(wl, "app=agent")).values()) == {"nginx:1.25"}
    assert {p["metadata"]["labels"]["controller-revision-hash"] for p in await wl.pods()} == {hash1}
    revs = {r["revision"]: n for n, r in (await revisions(wl)).items()}
    assert sorted(revs) == [2, 3, 4] and revs[4] == first["metadata"]["name"]
    await kubectl("set", "image", "ds/agent", "app=nginx:1.28")
    await wl.wait(lambda: ds_rolled_out(wl, "agent"))
    await wl.clock.advance(2)
    # revisionHistoryLimit 2: the oldest old revision (2) goes once no pod runs it.
    assert sorted(r["revision"] for r in (await revisions(wl)).values()) == [3, 4, 5]


async def test_kubectl_rollout_restart_of_a_statefulset_replaces_every_pod(wl: Env, kubectl: Kubectl) -> None:
    await wl.start(StatefulSetController)
    await wl.runner(ready_after=1)
    await wl.admin.create(statefulset("db", 2))
    await wl.wait(lambda: sts_rolled_out(wl, "db"))
    old_uids = {p["metadata"]["uid"] for p in await wl.pods()}
    assert (await kubectl("rollout", "restart", "sts/db")).strip() == "statefulset.apps/db restarted"
    await wl.wait(lambda: sts_rolled_out(wl, "db"))
    pods = await wl.pods()
    assert len(pods) == 2 and not old_uids & {p["metadata"]["uid"] for p in pods}
    assert all("kubectl.kubernetes.io/restartedAt" in p["metadata"]["annotations"] for p in pods)
    assert [r[0] for r in history_rows(await kubectl("rollout", "history", "sts/db"))] == ["1", "2"]
