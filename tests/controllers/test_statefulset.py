"""StatefulSet controller: ordinal identities, OrderedReady and Parallel, rolling update."""

from __future__ import annotations

from typing import Any

from workload_env import Env, WatchLog, pod_template, statefulset, wl  # noqa: F401 - wl is the fixture

from kconsole.controllers.statefulset import StatefulSetController, identity_pod
from kconsole.objects.meta import parse_time

Obj = dict[str, Any]


async def names(wl: Env) -> list[str]:
    return sorted(p["metadata"]["name"] for p in await wl.pods())


async def ready(wl: Env, name: str, n: int) -> bool:
    st = (await wl.get("statefulsets", name)).get("status") or {}
    return st.get("readyReplicas", 0) == n and st.get("replicas") == n


async def test_ordered_ready_creates_in_order_and_scales_down_from_the_top(wl: Env) -> None:
    await wl.start(StatefulSetController)
    await wl.runner(ready_after=5)
    log = WatchLog(wl.admin, ("pods",))
    await log.start()
    await wl.admin.create(statefulset("web", 3))
    await wl.wait(lambda: ready(wl, "web", 3))
    assert await names(wl) == ["web-0", "web-1", "web-2"]
    pods = {p["metadata"]["name"]: p for p in await wl.pods()}
    assert {p["metadata"]["generateName"] for p in pods.values()} == {"web-"}  # as upstream's GetPodFromTemplate
    created = [parse_time(pods[f"web-{i}"]["metadata"]["creationTimestamp"]) for i in range(3)]
    # Each ordinal waits for the previous one to be Running and Ready (5 s here).
    assert created[1] - created[0] >= 5 and created[2] - created[1] >= 5
    web1 = pods["web-1"]
    assert web1["spec"]["hostname"] == "web-1" and web1["spec"]["subdomain"] == "web"
    assert web1["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"] == "web-1"
    assert web1["metadata"]["labels"]["apps.kubernetes.io/pod-index"] == "1"

    await wl.admin.patch("statefulsets", "web", {"spec": {"replicas": 1}}, "default", subresource="scale")
    await wl.wait(lambda: ready(wl, "web", 1))
    await log.stop()
    deletions = [obj["metadata"]["name"] for _, typ, obj in log.history() if typ == "DELETED"]
    assert deletions == ["web-2", "web-1"]
    assert await names(wl) == ["web-0"]
    messages = [e["message"] for e in await wl.events()]
    assert "create Pod web-0 in StatefulSet web successful" in messages
    assert "delete Pod web-2 in StatefulSet web successful" in messages


async def test_deleted_pod_comes_back_with_the_same_name(wl: Env) -> None:
    await wl.start(StatefulSetController)
    await wl.runner(ready_after=1)
    await wl.admin.create(statefulset("db", 2))
    await wl.wait(lambda: ready(wl, "db", 2))
    old_uid = (await wl.get("pods", "db-0"))["metadata"]["uid"]
    await wl.admin.delete("pods", "db-0", "default")

    async def back() -> bool:
        pods = {p["metadata"]["name"]: p for p in await wl.pods()}
        return "db-0" in pods and pods["db-0"]["metadata"]["uid"] != old_uid

    await wl.wait(back)
    await wl.wait(lambda: ready(wl, "db", 2))


async def test_parallel_creates_all_at_once_and_rolling_update_replaces_top_down(wl: Env) -> None:
    await wl.start(StatefulSetController)
    await wl.runner(ready_after=5)
    await wl.admin.create(statefulset("par", 3, podManagementPolicy="Parallel"))
    await wl.clock.advance(1)
    assert await names(wl) == ["par-0", "par-1", "par-2"]
    await wl.wait(lambda: ready(wl, "par", 3))
    log = WatchLog(wl.admin, ("pods",))
    await log.start()
    await wl.admin.patch("statefulsets", "par", {"spec": {"template": {"spec": {"containers": [
        {"name": "app", "image": "nginx:1.26"}]}}}}, "default", patch_type="strategic")

    async def rolled() -> bool:
        st = (await wl.get("statefulsets", "par")).get("status") or {}
        return st.get("updatedReplicas") == 3 and st.get("readyReplicas") == 3 and \
            st.get("currentRevision") == st.get("updateRevision")

    await wl.wait(rolled, timeout=120)
    await log.stop()
    deletions = [obj["metadata"]["name"] for _, typ, obj in log.history() if typ == "DELETED"]
    assert deletions == ["par-2", "par-1", "par-0"]
    assert {p["spec"]["containers"][0]["image"] for p in await wl.pods()} == {"nginx:1.26"}


async def test_pods_mount_their_own_claim_per_volume_claim_template(wl: Env) -> None:
    """Upstream's updateStorage: the volume named after each claim template points at
    <template>-<set>-<ordinal>, replacing a template volume of the same name; the pod is valid."""
    template = pod_template({"app": "pg"}, volumes=[{"name": "data", "emptyDir": {}}, {"name": "cfg", "emptyDir": {}}])
    template["spec"]["containers"][0]["volumeMounts"] = [{"name": "data", "mountPath": "/var/lib/pg"},
                                                         {"name": "cfg", "mountPath": "/etc/pg"}]
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet",
           "metadata": {"name": "pg", "namespace": "default", "uid": "5f0c3a2e-0000-4000-8000-00000000000a"},
           "spec": {"replicas": 1, "serviceName": "pg", "selector": {"matchLabels": {"app": "pg"}},
                    "template": template, "volumeClaimTemplates": [
                        {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"],
                                                                "resources": {"requests": {"storage": "1Gi"}}}}]}}
    pod = await wl.admin.create(identity_pod(sts, 5, "pg-abc"))
    assert pod["spec"]["volumes"] == [{"name": "data", "persistentVolumeClaim": {"claimName": "data-pg-5"}},
                                      {"name": "cfg", "emptyDir": {}}]
    assert (pod["metadata"]["name"], pod["spec"]["hostname"], pod["spec"]["subdomain"]) == ("pg-5", "pg-5", "pg")


async def test_claims_are_created_before_their_pods_and_outlive_the_set_unless_told(wl: Env) -> None:
    """createPersistentVolumeClaims: `kubectl get pvc` was empty after applying a StatefulSet with
    volumeClaimTemplates, and its pods named claims that did not exist."""
    await wl.start(StatefulSetController)
    await wl.runner(ready_after=1)
    template = {"metadata": {"name": "data", "labels": {"disk": "ssd"}},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    await wl.admin.create(statefulset("db", 2, volumeClaimTemplates=[template]))
    await wl.admin.create(statefulset("tmp", 1, volumeClaimTemplates=[template],
                                      persistentVolumeClaimRetentionPolicy={"whenDeleted": "Delete"}))
    await wl.wait(lambda: ready(wl, "db", 2))
    claims = {c["metadata"]["name"]: c for c in await wl.admin.list_all("persistentvolumeclaims", "default")}
    assert sorted(claims) == ["data-db-0", "data-db-1", "data-tmp-0"]
    db0 = claims["data-db-0"]
    assert db0["metadata"]["labels"] == {"disk": "ssd", "app": "db"}, "the template's labels and the selector's"
    assert db0["spec"]["resources"] == {"requests": {"storage": "1Gi"}}
    assert "ownerReferences" not in db0["metadata"], "Retain (the default): the claim outlives the set"
    owner = claims["data-tmp-0"]["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"]) == ("StatefulSet", "tmp")
    pod = await wl.get("pods", "db-0")
    assert parse_time(db0["metadata"]["creationTimestamp"]) <= parse_time(pod["metadata"]["creationTimestamp"])
    messages = [e["message"] for e in await wl.events("SuccessfulCreate") if e["involvedObject"]["name"] == "db"]
    assert messages[:2] == ["create Claim data-db-0 Pod db-0 in StatefulSet db success",
                            "create Pod db-0 in StatefulSet db successful"]
    await wl.admin.delete("pods", "db-1", "default")
    await wl.wait(lambda: ready(wl, "db", 2))
    again = await wl.admin.get("persistentvolumeclaims", "data-db-1", "default")
    assert again["metadata"]["uid"] == claims["data-db-1"]["metadata"]["uid"], "a new pod keeps its claim"


async def test_when_scaled_delete_makes_a_scaled_down_pod_own_its_claim(wl: Env) -> None:
    await wl.start(StatefulSetController)
    await wl.runner(ready_after=1)
    template = {"metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    await wl.admin.create(statefulset("cache", 2, volumeClaimTemplates=[template],
                                      persistentVolumeClaimRetentionPolicy={"whenScaled": "Delete"}))
    await wl.wait(lambda: ready(wl, "cache", 2))
    doomed = await wl.get("pods", "cache-1")
    await wl.admin.patch("statefulsets", "cache", {"spec": {"replicas": 1}}, "default", subresource="scale")
    await wl.wait(lambda: ready(wl, "cache", 1))
    kept = await wl.admin.get("persistentvolumeclaims", "data-cache-0", "default")
    assert "ownerReferences" not in kept["metadata"], "a pod still in range keeps its claim unowned"
    scaled = await wl.admin.get("persistentvolumeclaims", "data-cache-1", "default")
    assert scaled["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Pod", "name": "cache-1", "uid": doomed["metadata"]["uid"]}], \
        "the garbage collector deletes the claim with its scaled-down pod"
