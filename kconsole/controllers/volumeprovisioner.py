"""kconsole's volume provisioner: the simulated CSI driver ``disk.csi.kconsole.dev`` behind the
default StorageClass ``standard``, in the role an external-provisioner sidecar plays upstream.

A claim the binder handed to this provisioner (annotation ``volume.kubernetes.io/storage-provisioner``)
gets a PersistentVolume ``pvc-<claim uid>`` of exactly the storage it requests, its access modes and
volume mode, the class's reclaim policy, pre-bound to the claim (``claimRef``), with a ``csi`` source
naming the driver; the binder then completes the binding. Events on the claim: ``Provisioning`` and
``ProvisioningSucceeded``, from the provisioner, as external-provisioner records them. A claim of a
``WaitForFirstConsumer`` class is provisioned once it names its node (``volume.kubernetes.io/selected-node``),
and its volume is pinned to that node (``nodeAffinity``). A volume it provisioned whose claim was
deleted (``Released``) is deleted when its reclaim policy is ``Delete``.

The volumes hold no data: pods mount nothing (the kubelets run no processes).
"""

from __future__ import annotations

from typing import Any

from kconsole.controllers.persistentvolume import ClaimsAndVolumes
from kconsole.objects.meta import is_being_deleted
from kconsole.objects.storage import (
    PROVISIONED_BY,
    SELECTED_NODE,
    STORAGE_PROVISIONER,
    claim_ref_of,
    waits_for_first_consumer,
)

Obj = dict[str, Any]

DRIVER = "disk.csi.kconsole.dev"
#: The default StorageClass the cluster ensures exists (as an addon manager's EnsureExists mode does).
DEFAULT_CLASS = {
    "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
    "metadata": {"name": "standard", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
                 "labels": {"addonmanager.kubernetes.io/mode": "EnsureExists"}},
    "provisioner": DRIVER, "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate",
    "allowVolumeExpansion": False,
}

def volume_name(claim: Obj) -> str:
    return f"pvc-{claim['metadata'].get('uid')}"


class VolumeProvisioner(ClaimsAndVolumes):
    name = "kconsole-volume-provisioner"
    component = DRIVER
    workers = 1

    async def sync_claim(self, claim: Obj) -> None:
        meta, spec = claim["metadata"], claim.get("spec") or {}
        annotations = meta.get("annotations") or {}
        if spec.get("volumeName") or is_being_deleted(claim) or annotations.get(STORAGE_PROVISIONER) != DRIVER:
            return
        sc = self.classes.get_by_name(None, spec.get("storageClassName") or "")
        if sc is None or sc.get("provisioner") != DRIVER:
            return
        node = annotations.get(SELECTED_NODE)
        if waits_for_first_consumer(sc) and not node:
            return
        name = volume_name(claim)
        if self.volumes.get_by_name(None, name) is not None:
            return
        self._event(claim, "Normal", "Provisioning",
                    f'External provisioner is provisioning volume for claim "{meta.get("namespace")}/{meta["name"]}"')
        volume: Obj = {
            "apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "annotations": {PROVISIONED_BY: DRIVER}},
            "spec": {
                "capacity": {"storage": ((spec.get("resources") or {}).get("requests") or {}).get("storage", "0")},
                "accessModes": list(spec.get("accessModes") or ()),
                "persistentVolumeReclaimPolicy": sc.get("reclaimPolicy") or "Delete",
                "storageClassName": sc["metadata"]["name"],
                "volumeMode": spec.get("volumeMode") or "Filesystem",
                "claimRef": claim_ref_of(claim),
                "csi": {"driver": DRIVER, "volumeHandle": name, "fsType": "ext4"},
            },
        }
        if sc.get("mountOptions"):
            volume["spec"]["mountOptions"] = list(sc["mountOptions"])
        if node:
            volume["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}}
        await self.client.create(volume)
        self._event(claim, "Normal", "ProvisioningSucceeded", f"Successfully provisioned volume {name}")

    async def sync_volume(self, volume: Obj) -> None:
        meta, spec = volume["metadata"], volume.get("spec") or {}
        if ((meta.get("annotations") or {}).get(PROVISIONED_BY) != DRIVER or is_being_deleted(volume)
                or (volume.get("status") or {}).get("phase") != "Released"
                or spec.get("persistentVolumeReclaimPolicy") != "Delete"):
            return
        await self.client.delete("persistentvolumes", meta["name"])
