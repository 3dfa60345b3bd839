"""persistentvolume-binder-controller and kconsole's volume provisioner: claims bound to matching
volumes or to new ones of the default StorageClass, Released volumes reclaimed by their policy."""

from __future__ import annotations

from typing import Any

import pytest
from ctrl_env import Ctrl, ctrl, pod  # noqa: F401 - ctrl is the fixture

from kconsole.client import StatusError
from kconsole.controllers.volumeprovisioner import DEFAULT_CLASS, DRIVER
from kconsole.objects.meta import deep_copy

Obj = dict[str, Any]
CONTROLLERS = ("persistentvolume-binder-controller", "kconsole-volume-provisioner",
               "persistentvolumeclaim-protection-controller", "persistentvolume-protection-controller")


def claim(name: str, storage: str = "1Gi", modes: tuple[str, ...] = ("ReadWriteOnce",), **spec: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": {"accessModes": list(modes), "resources": {"requests": {"storage": storage}}, **spec}}


def volume(name: str, storage: str, labels: dict[str, str] | None = None, **spec: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name, "labels": labels or {}},
            "spec": {"capacity": {"storage": storage}, "accessModes": ["ReadWriteOnce"], "storageClassName": "",
                     "hostPath": {"path": f"/data/{name}"}, **spec}}


async def phase(ctrl: Ctrl, resource: str, name: str, namespace: str | None = "default") -> str:
    return ((await ctrl.admin.get(resource, name, namespace)).get("status") or {}).get("phase", "")


async def test_a_claim_without_a_class_gets_the_default_one_and_a_provisioned_volume(ctrl: Ctrl) -> None:
    await ctrl.admin.create(deep_copy(DEFAULT_CLASS))
    await ctrl.manager(*CONTROLLERS)
    created = await ctrl.admin.create(claim("data", "3Gi"))
    assert created["spec"]["storageClassName"] == "standard", "DefaultStorageClass admission"
    assert await ctrl.wait(lambda: _is(ctrl, "persistentvolumeclaims", "data", "Bound"), timeout=10) <= 10
    bound = await ctrl.admin.get("persistentvolumeclaims", "data", "default")
    pv_name = f"pvc-{created['metadata']['uid']}"
    assert bound["spec"]["volumeName"] == pv_name
    assert bound["status"] == {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "3Gi"}}
    assert bound["metadata"]["annotations"]["volume.kubernetes.io/storage-provisioner"] == DRIVER
    assert bound["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes"
    pv = await ctrl.admin.get("persistentvolumes", pv_name, None)
    assert pv["spec"]["claimRef"]["uid"] == created["metadata"]["uid"] and pv["status"]["phase"] == "Bound"
    assert pv["spec"]["csi"]["driver"] == DRIVER and pv["spec"]["persistentVolumeReclaimPolicy"] == "Delete"
    assert pv["metadata"]["annotations"]["pv.kubernetes.io/provisioned-by"] == DRIVER
    reasons = [e["reason"] for e in await ctrl.admin.list_all("events", "default")
               if e["involvedObject"]["name"] == "data"]
    assert {"ExternalProvisioning", "Provisioning", "ProvisioningSucceeded"} <= set(reasons)

    await ctrl.admin.delete("persistentvolumeclaims", "data", "default")
    gone = await ctrl.wait(lambda: _gone(ctrl, pv_name), timeout=10)
    assert gone <= 10, "a Released volume with reclaim policy Delete is deleted by its provisioner"


async def test_static_volumes_bind_the_smallest_match_and_are_retained(ctrl: Ctrl) -> None:
    await ctrl.manager(*CONTROLLERS)
    await ctrl.admin.create(volume("big", "10Gi", {"tier": "gold"}))
    await ctrl.admin.create(volume("fit", "5Gi", {"tier": "gold"}))
    await ctrl.admin.create(volume("cheap", "2Gi", {"tier": "bronze"}))
    await ctrl.wait(lambda: _is(ctrl, "persistentvolumes", "cheap", "Available", None), timeout=5)
    await ctrl.admin.create(claim("gold", "2Gi", storageClassName="", selector={"matchLabels": {"tier": "gold"}}))
    await ctrl.admin.create(claim("shared", "1Gi", ("ReadWriteMany",), storageClassName=""))
    await ctrl.wait(lambda: _is(ctrl, "persistentvolumeclaims", "gold", "Bound"), timeout=10)
    gold = await ctrl.admin.get("persistentvolumeclaims", "gold", "default")
    assert gold["spec"]["volumeName"] == "fit" and gold["status"]["capacity"] == {"storage": "5Gi"}
    fit = await ctrl.admin.get("persistentvolumes", "fit", None)
    assert fit["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"] == "yes"
    assert await phase(ctrl, "persistentvolumeclaims", "shared") == "Pending", "no volume has ReadWriteMany"
    assert [e["message"] for e in await ctrl.events("FailedBinding", "shared")] == [
        "no persistent volumes available for this claim and no storage class is set"]
    assert {await phase(ctrl, "persistentvolumes", n, None) for n in ("big", "cheap")} == {"Available"}
    await ctrl.clock.advance(30)
    settled = [(await ctrl.admin.get(r, n, ns))["metadata"]["resourceVersion"]
               for r, n, ns in (("persistentvolumeclaims", "gold", "default"), ("persistentvolumes", "fit", None))]
    assert settled == [gold["metadata"]["resourceVersion"], fit["metadata"]["resourceVersion"]], \
        "a bound pair is not written again"

    await ctrl.admin.delete("persistentvolumeclaims", "gold", "default")
    await ctrl.wait(lambda: _is(ctrl, "persistentvolumes", "fit", "Released", None), timeout=10)
    await ctrl.clock.advance(30)
    assert await phase(ctrl, "persistentvolumes", "fit", None) == "Released", "Retain: kept for its data"


async def test_wait_for_first_consumer_provisions_on_the_selected_node(ctrl: Ctrl) -> None:
    local = deep_copy(DEFAULT_CLASS)
    local["metadata"] = {"name": "local"}
    local["volumeBindingMode"] = "WaitForFirstConsumer"
    await ctrl.admin.create(local)
    await ctrl.manager(*CONTROLLERS)
    await ctrl.admin.create(claim("scratch", storageClassName="local"))
    await ctrl.wait(lambda: _has_events(ctrl, "WaitForFirstConsumer", "scratch"), timeout=10)
    await ctrl.clock.advance(10)
    assert await phase(ctrl, "persistentvolumeclaims", "scratch") == "Pending"
    pending = await ctrl.admin.get("persistentvolumeclaims", "scratch", "default")
    pending["metadata"]["annotations"] = {"volume.kubernetes.io/selected-node": "worker-2"}
    await ctrl.admin.update(pending)
    await ctrl.wait(lambda: _is(ctrl, "persistentvolumeclaims", "scratch", "Bound"), timeout=10)
    pv = await ctrl.admin.get("persistentvolumes", f"pvc-{pending['metadata']['uid']}", None)
    terms = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
    assert terms == [{"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In",
                                            "values": ["worker-2"]}]}]


async def test_a_claim_in_use_and_a_bound_volume_are_protected_from_deletion(ctrl: Ctrl) -> None:
    await ctrl.admin.create(deep_copy(DEFAULT_CLASS))
    await ctrl.manager(*CONTROLLERS)
    created = await ctrl.admin.create(claim("data"))
    assert created["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    await ctrl.wait(lambda: _is(ctrl, "persistentvolumeclaims", "data", "Bound"), timeout=10)
    pv_name = f"pvc-{created['metadata']['uid']}"
    assert (await ctrl.admin.get("persistentvolumes", pv_name, None))["metadata"]["finalizers"] == [
        "kubernetes.io/pv-protection"]
    user = pod("db", node_name="worker-1")
    user["spec"]["volumes"] = [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]
    await ctrl.admin.create(user)
    await ctrl.set_pod_status("db")

    await ctrl.admin.delete("persistentvolumes", pv_name)
    await ctrl.admin.delete("persistentvolumeclaims", "data", "default")
    await ctrl.clock.advance(30)
    terminating = await ctrl.admin.get("persistentvolumeclaims", "data", "default")
    assert terminating["metadata"].get("deletionTimestamp"), "a running pod still uses the claim"
    assert await ctrl.exists("persistentvolumes", pv_name, None), "a Bound volume stays"

    await ctrl.set_pod_status("db", phase="Succeeded", ready=False)
    gone = await ctrl.wait(lambda: _all_gone(ctrl, pv_name), timeout=10)
    assert gone <= 10, "the pod finished: the claim goes, its volume is Released and goes too"


async def test_a_claim_owned_by_a_pod_goes_with_it(ctrl: Ctrl) -> None:
    """An ephemeral volume's claim (or a StatefulSet's, by its retention policy) is owned: the garbage
    collector did not watch claims, so they outlived their owners."""
    await ctrl.admin.create(deep_copy(DEFAULT_CLASS))
    await ctrl.manager(*CONTROLLERS, "ephemeral-volume-controller", "garbage-collector-controller")
    user = pod("cache", node_name="worker-1")
    user["spec"]["volumes"] = [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}}]
    await ctrl.admin.create(user)
    await ctrl.wait(lambda: _is(ctrl, "persistentvolumeclaims", "cache-scratch", "Bound"), timeout=10)
    await ctrl.admin.delete("pods", "cache", "default", grace_period_seconds=0)
    await ctrl.wait(lambda: _claim_gone(ctrl, "cache-scratch"), timeout=10)


async def test_storage_classes_are_validated_and_their_provisioner_is_immutable(ctrl: Ctrl) -> None:
    bad = deep_copy(DEFAULT_CLASS)
    del bad["provisioner"]
    bad["volumeBindingMode"] = "Later"
    with pytest.raises(StatusError) as refused:
        await ctrl.admin.create(bad)
    assert refused.value.code == 422
    assert {c["field"] for c in refused.value.status["details"]["causes"]} == {"provisioner", "volumeBindingMode"}
    sc = await ctrl.admin.create(deep_copy(DEFAULT_CLASS))
    sc["provisioner"] = "other.example.com"
    with pytest.raises(StatusError) as immutable:
        await ctrl.admin.update(sc)
    assert "provisioner: Forbidden: updates to provisioner are forbidden." in immutable.value.message
    minimal = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "plain"},
               "provisioner": "example.com/disk"}
    created = await ctrl.admin.create(minimal)
    assert (created["reclaimPolicy"], created["volumeBindingMode"]) == ("Delete", "Immediate")


async def _is(ctrl: Ctrl, resource: str, name: str, want: str, namespace: str | None = "default") -> bool:
    try:
        return await phase(ctrl, resource, name, namespace) == want
    except StatusError:
        return False


async def _gone(ctrl: Ctrl, name: str) -> bool:
    return not await ctrl.exists("persistentvolumes", name, None)


async def _claim_gone(ctrl: Ctrl, name: str) -> bool:
    return not await ctrl.exists("persistentvolumeclaims", name)


async def _all_gone(ctrl: Ctrl, pv_name: str) -> bool:
    return not await ctrl.exists("persistentvolumeclaims", "data") and await _gone(ctrl, pv_name)


async def _has_events(ctrl: Ctrl, reason: str, name: str) -> bool:
    return bool(await ctrl.events(reason, name))
