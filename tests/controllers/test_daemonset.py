"""DaemonSet controller with the real scheduler placing its pods, on the virtual clock."""

from __future__ import annotations

from typing import Any

from workload_env import Env, node, pod_template, run_daemonsets, wl  # noqa: F401 - wl is the fixture


Obj = dict[str, Any]


def daemonset(name: str, **spec: Any) -> Obj:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": labels}, "template": pod_template(labels, image="fluentd:1"), **spec}}


async def placement(wl: Env) -> dict[str, str]:
    return {p["spec"].get("nodeName", ""): p["metadata"]["name"] for p in await wl.pods()}


async def test_one_pod_per_eligible_node_following_nodes_and_taints(wl: Env) -> None:
    await wl.admin.create(node("n1"))
    await wl.admin.create(node("n2", labels={"disk": "ssd"}))
    await wl.admin.create(node("cp", taints=[{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]))
    await run_daemonsets(wl)
    await wl.admin.create(daemonset("logs"))

    async def on(*nodes: str) -> bool:
        return sorted(await placement(wl)) == sorted(nodes)

    await wl.wait(lambda: on("n1", "n2"))
    pod = (await wl.pods())[0]
    keys = {(t.get("key"), t.get("effect")) for t in pod["spec"]["tolerations"]}
    assert ("node.kubernetes.io/unreachable", "NoExecute") in keys
    assert ("node.kubernetes.io/unschedulable", "NoSchedule") in keys
    term = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["nodeSelectorTerms"][0]["matchFields"][0]["values"] == [pod["spec"]["nodeName"]]
    assert pod["metadata"]["labels"]["controller-revision-hash"]

    await wl.admin.create(node("n3"))
    await wl.wait(lambda: on("n1", "n2", "n3"))

    async def status_is(**want: int) -> bool:
        st = (await wl.get("daemonsets", "logs")).get("status") or {}
        return all(st.get(k, 0) == v for k, v in want.items())

    await wl.wait(lambda: status_is(desiredNumberScheduled=3, currentNumberScheduled=3, numberReady=3,
                                    numberAvailable=3, updatedNumberScheduled=3))
    n1 = await wl.admin.get("nodes", "n1")
    n1["spec"]["taints"] = [{"key": "dedicated", "value": "db", "effect": "NoExecute"}]
    await wl.admin.update(n1)
    await wl.wait(lambda: on("n2", "n3"))
    await wl.wait(lambda: status_is(desiredNumberScheduled=2, currentNumberScheduled=2))
    created = await wl.events("SuccessfulCreate")
    deleted = await wl.events("SuccessfulDelete")
    assert len(created) == 3 and len(deleted) == 1
    assert {e["source"]["component"] for e in created + deleted} == {"daemonset-controller"}


async def test_node_selector_and_rolling_update_one_node_at_a_time(wl: Env) -> None:
    for n in ("a", "b", "c"):
        await wl.admin.create(node(n, labels={"disk": "ssd"}))
    await wl.admin.create(node("d"))
    await run_daemonsets(wl)
    ds = daemonset("logs")
    ds["spec"]["template"]["spec"]["nodeSelector"] = {"disk": "ssd"}
    await wl.admin.create(ds)

    async def updated(image: str) -> bool:
        pods = await wl.pods()
        ready = [p for p in pods if (p.get("status") or {}).get("phase") == "Running"]
        return (len(ready) == 3 and {p["spec"]["containers"][0]["image"] for p in ready} == {image}
                and {p["spec"]["nodeName"] for p in ready} == {"a", "b", "c"})

    await wl.wait(lambda: updated("fluentd:1"))
    await wl.admin.patch("daemonsets", "logs", {"spec": {"template": {"spec": {"containers": [
        {"name": "app", "image": "fluentd:2"}]}}}}, "default", patch_type="strategic")
    most_missing = 0

    async def watch_rollout() -> bool:
        nonlocal most_missing
        pods = await wl.pods()
        running = [p for p in pods if (p.get("status") or {}).get("phase") == "Running"]
        most_missing = max(most_missing, 3 - len(running))
        return await updated("fluentd:2")

    await wl.clock.run_until(watch_rollout, 60, step=0.25)
    assert most_missing == 1


async def test_max_surge_starts_the_new_pod_beside_the_old_one_so_no_node_goes_without(wl: Env) -> None:
    for n in ("a", "b", "c"):
        await wl.admin.create(node(n))
    await run_daemonsets(wl)
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    await wl.admin.create(daemonset("proxy", updateStrategy=strategy))

    async def serving(image: str) -> set[str]:
        return {p["spec"]["nodeName"] for p in await wl.pods() if (p.get("status") or {}).get("phase") == "Running"
                and p["spec"]["containers"][0]["image"] == image}

    async def all_on(image: str) -> bool:
        return await serving(image) == {"a", "b", "c"} and len(await wl.pods()) == 3

    await wl.wait(lambda: all_on("fluentd:1"))
    await wl.admin.patch("daemonsets", "proxy", {"spec": {"template": {"spec": {"containers": [
        {"name": "app", "image": "fluentd:2"}]}}}}, "default", patch_type="strategic")
    fewest_serving, most_pods = 3, 3

    async def watch_rollout() -> bool:
        nonlocal fewest_serving, most_pods
        pods = await wl.pods()
        running = {p["spec"]["nodeName"] for p in pods if (p.get("status") or {}).get("phase") == "Running"}
        fewest_serving = min(fewest_serving, len(running))
        most_pods = max(most_pods, len(pods))
        return await all_on("fluentd:2")

    await wl.clock.run_until(watch_rollout, 120, step=0.25)
    assert (fewest_serving, most_pods) == (3, 4)
    ds = await wl.get("daemonsets", "proxy")
    assert (ds["status"]["updatedNumberScheduled"], ds["status"]["numberAvailable"]) == (3, 3)
