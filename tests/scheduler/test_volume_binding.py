"""VolumeBinding: pods go where their volumes can be used, the scheduler binds WaitForFirstConsumer
claims (a static volume's claimRef, or selected-node for the provisioner) before it binds the pod,
and claims that are missing or not yet bound keep the pod Pending with upstream's messages."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kconsole.api.types import UserInfo
from kconsole.client import Client
from kconsole.controllers.manager import ControllerManagerReplica
from kconsole.controllers.volumeprovisioner import DRIVER
from kconsole.scheduler.config import parse_config
from tests.scheduler.conftest import Env, node, pod

Obj = dict[str, Any]
CONTROLLERS = ["persistentvolume-binder-controller", "kconsole-volume-provisioner", "ephemeral-volume-controller",
               "persistentvolumeclaim-protection-controller", "persistentvolume-protection-controller"]
PREEMPTION_NOT_HELPFUL = " preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.."


def storage_class(name: str, provisioner: str = DRIVER, mode: str = "WaitForFirstConsumer", **extra: Any) -> Obj:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
            "provisioner": provisioner, "volumeBindingMode": mode, **extra}


def claim(name: str, cls: str, storage: str = "1Gi") -> Obj:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": cls,
                     "resources": {"requests": {"storage": storage}}}}


def local_volume(name: str, on: str, cls: str = "local", storage: str = "5Gi") -> Obj:
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": {"capacity": {"storage": storage}, "accessModes": ["ReadWriteOnce"], "storageClassName": cls,
                     "persistentVolumeReclaimPolicy": "Retain", "local": {"path": f"/mnt/disks/{name}"},
                     "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                         {"key": "kubernetes.io/hostname", "operator": "In", "values": [on]}]}]}}}}


def with_claims(name: str, *claims: str) -> Obj:
    return pod(name, volumes=[{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}}
                              for i, c in enumerate(claims)])


@pytest.fixture
async def vols(env: Env) -> AsyncIterator[Env]:
    """The scheduling env plus the PV binder and kconsole's provisioner, and two nodes."""
    cm = Client(env.api, env.api.tokens.issue(UserInfo("system:kube-controller-manager")), env.clock)
    replica = ControllerManagerReplica(cm, env.clock, identity="cm", rng=random.Random(1), controllers=CONTROLLERS)
    await replica.start()
    await env.clock.run_until(lambda: replica.is_leader and bool(replica.active), 30, step=0.5)
    for n in ("n1", "n2"):
        await env.admin.create(node(n, labels={"zone": "a" if n == "n1" else "b"}))
    try:
        yield env
    finally:
        await replica.stop()


async def get(env: Env, resource: str, name: str, namespace: str | None = "default") -> Obj:
    return await env.admin.get(resource, name, namespace)


async def failed_scheduling(env: Env, name: str) -> list[str]:
    return [e["message"] for e in await env.events(name, "FailedScheduling")]


async def test_a_wait_for_first_consumer_claim_is_provisioned_on_the_node_chosen_for_its_pod(vols: Env) -> None:
    env = vols
    await env.admin.create(storage_class("zonal", allowedTopologies=[
        {"matchLabelExpressions": [{"key": "zone", "values": ["b"]}]}]))
    await env.admin.create(claim("data", "zonal"))
    await env.clock.advance(5)
    pending = await get(env, "persistentvolumeclaims", "data")
    assert pending["status"]["phase"] == "Pending" and not pending["spec"].get("volumeName"), \
        "WaitForFirstConsumer: nothing is provisioned before a pod uses the claim"
    await env.scheduler()
    await env.admin.create(with_claims("app", "data"))
    assert (await env.wait_bound("app"))["app"] == "n2", "allowedTopologies admit zone b only"
    bound = await get(env, "persistentvolumeclaims", "data")
    assert bound["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == "n2"
    placed = await get(env, "pods", "app")
    assert int(placed["metadata"]["resourceVersion"]) > int(bound["metadata"]["resourceVersion"]), \
        "the pod is bound only after its claim is"
    pv = await get(env, "persistentvolumes", bound["spec"]["volumeName"], None)
    assert pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == ["n2"]
    assert [e["reason"] for e in await env.admin.list_all("events", "default")
            if e["involvedObject"]["name"] == "data"][:1] == ["WaitForFirstConsumer"]


async def test_local_volumes_steer_pods_and_the_scheduler_binds_them(vols: Env) -> None:
    env = vols
    await env.admin.create(storage_class("local", "kubernetes.io/no-provisioner"))
    await env.admin.create(local_volume("disk-n1", on="n1"))
    await env.admin.create(local_volume("disk-n1-small", on="n1", storage="1Gi"))
    await env.admin.create(claim("a", "local", "2Gi"))
    await env.admin.create(claim("b", "local", "2Gi"))
    await env.wait(lambda: _phase(env, "persistentvolumes", "disk-n1", "Available", None))
    await env.scheduler()
    await env.admin.create(with_claims("first", "a"))
    assert (await env.wait_bound("first"))["first"] == "n1", "the only volume that fits is on n1"
    disk = await get(env, "persistentvolumes", "disk-n1", None)
    assert disk["spec"]["claimRef"]["name"] == "a", "the scheduler chose the smallest volume that fits"
    assert disk["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"] == "yes"
    assert (await get(env, "persistentvolumeclaims", "a"))["spec"]["volumeName"] == "disk-n1"

    await env.admin.create(with_claims("second", "b"))
    await env.wait(lambda: failed_scheduling(env, "second"))
    assert (await failed_scheduling(env, "second"))[0] == (
        "0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind." + PREEMPTION_NOT_HELPFUL)
    assert (await get(env, "persistentvolumeclaims", "b"))["status"]["phase"] == "Pending"
    await env.admin.create(local_volume("disk-n2", on="n2"))
    assert (await env.wait_bound("second"))["second"] == "n2", "a new volume wakes the pod"

    await env.admin.create(with_claims("third", "a"))
    assert (await env.wait_bound("third"))["third"] == "n1", "a bound claim's volume pins its pods to n1"


async def test_missing_and_unbound_immediate_claims_keep_the_pod_pending(vols: Env) -> None:
    env = vols
    await env.scheduler()
    await env.admin.create(with_claims("app", "data"))
    await env.wait(lambda: failed_scheduling(env, "app"))
    assert (await failed_scheduling(env, "app"))[0] == (
        '0/2 nodes are available: persistentvolumeclaim "data" not found.' + PREEMPTION_NOT_HELPFUL)
    await env.admin.create(storage_class("manual", "example.com/nobody", mode="Immediate"))
    await env.admin.create(claim("data", "manual"))
    await env.wait(lambda: _has(env, "app", "pod has unbound immediate PersistentVolumeClaims"))
    pending = await get(env, "pods", "app")
    assert pending["status"]["conditions"][0]["message"] == (
        "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims." + PREEMPTION_NOT_HELPFUL)
    static = local_volume("disk-n2", on="n2", cls="manual")
    await env.admin.create(static)
    assert (await env.wait_bound("app"))["app"] == "n2", "bound by the controller, the claim's volume lives on n2"


async def test_prebind_gives_up_when_provisioning_never_happens(vols: Env) -> None:
    env = vols
    await env.admin.create(storage_class("slow", "example.com/offline"))
    await env.admin.create(claim("data", "slow"))
    config = parse_config({"profiles": [{"pluginConfig": [{"name": "VolumeBinding",
                                                            "args": {"bindTimeoutSeconds": 30}}]}]})
    await env.scheduler(config=config)
    await env.admin.create(with_claims("app", "data"))
    await env.wait(lambda: _has(env, "app", "binding volumes"), timeout=60)
    message = (await failed_scheduling(env, "app"))[0]
    assert message == 'running PreBind plugin "VolumeBinding": binding volumes: context deadline exceeded'
    assert not (await get(env, "pods", "app"))["spec"].get("nodeName")
    selected = (await get(env, "persistentvolumeclaims", "data"))["metadata"]["annotations"]
    assert selected["volume.kubernetes.io/selected-node"] in ("n1", "n2")


async def test_a_generic_ephemeral_volume_gets_a_claim_owned_by_its_pod(vols: Env) -> None:
    env = vols
    await env.admin.create(storage_class("local-path"))
    await env.scheduler()
    template = {"metadata": {"labels": {"type": "scratch"}},
                "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "local-path",
                         "resources": {"requests": {"storage": "2Gi"}}}}
    created = await env.admin.create(pod("cache", volumes=[{"name": "scratch",
                                                             "ephemeral": {"volumeClaimTemplate": template}}]))
    node_name = (await env.wait_bound("cache"))["cache"]
    made = await get(env, "persistentvolumeclaims", "cache-scratch")
    assert made["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "cache",
                                                    "uid": created["metadata"]["uid"], "controller": True,
                                                    "blockOwnerDeletion": True}]
    assert made["metadata"]["labels"] == {"type": "scratch"}
    assert made["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    assert made["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == node_name
    assert made["status"]["phase"] == "Bound"

    await env.admin.create(claim("squatter-scratch", "local-path"))
    await env.admin.create(pod("squatter", volumes=[{"name": "scratch", "ephemeral": {"volumeClaimTemplate": template}}]))
    await env.wait(lambda: failed_scheduling(env, "squatter"))
    assert (await failed_scheduling(env, "squatter"))[0].startswith(
        "0/2 nodes are available: PVC default/squatter-scratch was not created for pod default/squatter "
        "(pod is not owner).")


async def _phase(env: Env, resource: str, name: str, want: str, namespace: str | None = "default") -> bool:
    return ((await env.admin.get(resource, name, namespace)).get("status") or {}).get("phase") == want


async def _has(env: Env, name: str, text: str) -> bool:
    return any(text in m for m in await failed_scheduling(env, name))
