"""The PersistentVolume binder: claims meet volumes (upstream's pkg/controller/volume/persistentvolume).

A claim without a volume is bound to a volume pre-bound to it (``claimRef`` naming the claim), else
to the smallest Available volume of its class that has every access mode it asks for and at least
the storage it requests (and matches its ``selector``). Binding writes the volume first
(``claimRef`` with the claim's uid, annotation ``pv.kubernetes.io/bound-by-controller``), then the
claim (``volumeName``, ``pv.kubernetes.io/bind-completed``), then both statuses: ``Bound``, the
claim with the volume's capacity and access modes. Nothing to bind: a class with a provisioner gets
the claim annotated ``volume.kubernetes.io/storage-provisioner`` for that provisioner to create a
volume (event ``ExternalProvisioning``); a class in ``WaitForFirstConsumer`` mode waits for the
scheduler (event ``WaitForFirstConsumer``): its VolumeBinding plugin pre-binds a volume to the claim
or sets ``volume.kubernetes.io/selected-node`` for the provisioner; no class, event ``FailedBinding``.

Volumes: no claim, ``Available``; bound, ``Bound``; its claim deleted, ``Released`` (a ``Delete``
reclaim policy is carried out by the volume's provisioner, see :mod:`kconsole.controllers.volumeprovisioner`);
a bound claim whose volume disappeared is ``Lost``. A volume being deleted still has its phase kept
current: its pv-protection finalizer waits for it to leave Bound. Recycling and volume expansion are
not simulated.
"""

from __future__ import annotations

from typing import Any

from kconsole.client import StatusError, is_already_exists, is_conflict, is_not_found
from kconsole.controllers.base import Controller, ControllerContext
from kconsole.objects.meta import deep_copy, is_being_deleted
from kconsole.objects.storage import (
    BETA_STORAGE_PROVISIONER,
    BIND_COMPLETED,
    BOUND_BY_CONTROLLER,
    SELECTED_NODE,
    STORAGE_PROVISIONER,
    claim_class,
    claim_ref_of,
    matches,
    refers_to,
    storage,
    waits_for_first_consumer,
)

Obj = dict[str, Any]

CLAIM, VOLUME = "claim:", "volume:"


class ClaimsAndVolumes(Controller):
    """What the binder and a provisioner share: informers on claims, volumes and classes, and a
    queue of ``claim:<ns>/<name>`` and ``volume:<name>`` keys synced by :meth:`sync_claim` and
    :meth:`sync_volume`. An object gone meanwhile is no error; a conflict (our cache lags a write
    of ours) is looked at again shortly."""

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.claims = self.informer("persistentvolumeclaims")
        self.volumes = self.informer("persistentvolumes")
        self.classes = self.informer("storageclasses")
        self.claims.add_event_handler(**self.handlers(self.claim_changed))
        self.volumes.add_event_handler(**self.handlers(self.volume_changed))

    def claim_changed(self, claim: Obj) -> None:
        meta = claim["metadata"]
        self.queue.add(f"{CLAIM}{meta.get('namespace')}/{meta['name']}")

    def volume_changed(self, volume: Obj) -> None:
        self.queue.add(VOLUME + volume["metadata"]["name"])

    async def sync(self, key: str) -> None:
        try:
            if key.startswith(CLAIM):
                namespace, _, name = key[len(CLAIM):].partition("/")
                claim = self.claims.get_by_name(namespace, name)
                if claim is not None:
                    await self.sync_claim(claim)
            else:
                volume = self.volumes.get_by_name(None, key[len(VOLUME):])
                if volume is not None:
                    await self.sync_volume(volume)
        except StatusError as err:
            if is_not_found(err) or is_already_exists(err):
                return
            if is_conflict(err):
                self.queue.add_after(key, 0.5)
                return
            raise

    async def sync_claim(self, claim: Obj) -> None:
        raise NotImplementedError

    async def sync_volume(self, volume: Obj) -> None:
        raise NotImplementedError


class PersistentVolumeController(ClaimsAndVolumes):
    name = "persistentvolume-binder-controller"
    component = "persistentvolume-controller"
    workers = 2

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.classes.add_event_handler(on_add=lambda sc: self._pending_claims())
        self.volumes.add_event_handler(on_add=lambda v: self._became_available(None, v),
                                       on_update=self._became_available)

    def claim_changed(self, claim: Obj) -> None:
        super().claim_changed(claim)
        volume = (claim.get("spec") or {}).get("volumeName")
        if volume:
            self.queue.add(VOLUME + volume)

    def volume_changed(self, volume: Obj) -> None:
        super().volume_changed(volume)
        ref = (volume.get("spec") or {}).get("claimRef")
        if ref and ref.get("name"):
            self.queue.add(f"{CLAIM}{ref.get('namespace')}/{ref['name']}")

    def _became_available(self, old: Obj | None, new: Obj) -> None:
        """A volume that just turned Available may fit claims waiting for one (upstream finds it at its
        15 s resync): look at them once, not at every event of a volume that stays Available."""
        if (new.get("spec") or {}).get("claimRef") or (new.get("status") or {}).get("phase") != "Available":
            return
        if old is None or (old.get("status") or {}).get("phase") != "Available":
            self._pending_claims()

    def _pending_claims(self) -> None:
        for claim in self.claims.list():
            if not (claim.get("spec") or {}).get("volumeName"):
                self.claim_changed(claim)

    # ------------------------------------------------------------------ claims

    async def sync_claim(self, claim: Obj) -> None:
        if is_being_deleted(claim):
            return
        name = (claim.get("spec") or {}).get("volumeName")
        if name:
            await self._sync_bound_claim(claim, name)
            return
        cls_name = claim_class(claim)
        sc = self.classes.get_by_name(None, cls_name) if cls_name else None
        delayed = waits_for_first_consumer(sc)
        volume = self._find_volume(claim, delayed)
        if volume is not None:
            await self._bind(volume, claim)
            return
        if not cls_name:
            self._event(claim, "Normal", "FailedBinding",
                        "no persistent volumes available for this claim and no storage class is set")
            return
        if sc is None:
            self._event(claim, "Warning", "ProvisioningFailed", f'storageclass.storage.k8s.io "{cls_name}" not found')
            return
        annotations = claim["metadata"].get("annotations") or {}
        if delayed and not annotations.get(SELECTED_NODE):
            self._event(claim, "Normal", "WaitForFirstConsumer",
                        "waiting for first consumer to be created before binding")
            return
        provisioner = sc.get("provisioner") or ""
        if annotations.get(STORAGE_PROVISIONER) != provisioner:
            new = deep_copy(claim)
            new["metadata"]["annotations"] = {**annotations, STORAGE_PROVISIONER: provisioner,
                                              BETA_STORAGE_PROVISIONER: provisioner}
            await self.client.update(new)
        self._event(claim, "Normal", "ExternalProvisioning",
                    f"Waiting for a volume to be created either by the external provisioner '{provisioner}' or "
                    "manually by the system administrator. If volume creation is delayed, please verify that the "
                    "provisioner is running and correctly registered.")

    def _find_volume(self, claim: Obj, delayed: bool) -> Obj | None:
        """A volume pre-bound to the claim, else the smallest Available one that matches it. A claim of a
        WaitForFirstConsumer class (``delayed``) takes only a pre-bound volume: the scheduler chooses
        among the others, on the node it picks for the pod."""
        best: Obj | None = None
        best_size = 0
        for volume in self.volumes.list():
            if is_being_deleted(volume):
                continue
            ref = (volume.get("spec") or {}).get("claimRef")
            if ref:
                if refers_to(volume, claim):
                    return volume
                continue
            if delayed:
                continue
            if matches(volume, claim):
                size = storage(volume, "capacity")
                if best is None or size < best_size:
                    best, best_size = volume, size
        return best

    async def _bind(self, volume: Obj, claim: Obj) -> None:
        """Volume first (it is the one a second claim could race for), then the claim, then statuses."""
        vspec = volume.get("spec") or {}
        ref = vspec.get("claimRef") or {}
        if ref.get("uid") != claim["metadata"].get("uid"):
            new = deep_copy(volume)
            new["spec"]["claimRef"] = claim_ref_of(claim)
            if not ref:
                annotations = new["metadata"].get("annotations") or {}
                new["metadata"]["annotations"] = {**annotations, BOUND_BY_CONTROLLER: "yes"}
            volume = await self.client.update(new)
        await self.write_status(volume, {**(volume.get("status") or {}), "phase": "Bound"})
        annotations = claim["metadata"].get("annotations") or {}
        if (claim["spec"].get("volumeName") != volume["metadata"]["name"]
                or annotations.get(BIND_COMPLETED) != "yes"):
            new_claim = deep_copy(claim)
            new_claim["spec"]["volumeName"] = volume["metadata"]["name"]
            added = {BIND_COMPLETED: "yes"} if claim["spec"].get("volumeName") else {
                BIND_COMPLETED: "yes", BOUND_BY_CONTROLLER: "yes"}  # a user's pre-bound claim is not ours
            new_claim["metadata"]["annotations"] = {**annotations, **added}
            claim = await self.client.update(new_claim)
        await self._claim_bound_status(claim, volume)

    async def _claim_bound_status(self, claim: Obj, volume: Obj) -> None:
        vspec = volume.get("spec") or {}
        status = {**(claim.get("status") or {}), "phase": "Bound",
                  "accessModes": list(vspec.get("accessModes") or ()),
                  "capacity": dict(vspec.get("capacity") or {})}
        await self.write_status(claim, status)

    async def _sync_bound_claim(self, claim: Obj, name: str) -> None:
        volume = self.volumes.get_by_name(None, name)
        annotations = claim["metadata"].get("annotations") or {}
        if volume is None:
            if annotations.get(BIND_COMPLETED) and (claim.get("status") or {}).get("phase") != "Lost":
                await self.write_status(claim, {**(claim.get("status") or {}), "phase": "Lost"})
                self._event(claim, "Warning", "ClaimLost", "Bound claim has lost its PersistentVolume. "
                            "Data on the volume is lost!")
            return
        ref = (volume.get("spec") or {}).get("claimRef")
        if not ref or refers_to(volume, claim):
            await self._bind(volume, claim)  # writes only what is missing
            return
        self._event(claim, "Warning", "FailedBinding", f'volume "{name}" already bound to a different claim.')

    # ------------------------------------------------------------------ volumes

    async def sync_volume(self, volume: Obj) -> None:
        ref = (volume.get("spec") or {}).get("claimRef")
        status = volume.get("status") or {}
        if not ref:
            await self.write_status(volume, {**status, "phase": "Available"})
            return
        claim = self.claims.get_by_name(ref.get("namespace"), ref.get("name") or "")
        if claim is not None and refers_to(volume, claim):
            if (claim.get("spec") or {}).get("volumeName") == volume["metadata"]["name"]:
                await self.write_status(volume, {**status, "phase": "Bound"})
            elif status.get("phase") != "Available" and not ref.get("uid"):
                await self.write_status(volume, {**status, "phase": "Available"})  # pre-bound, waiting
            return
        if not ref.get("uid"):  # pre-bound to a claim not created yet
            await self.write_status(volume, {**status, "phase": "Available"})
            return
        if status.get("phase") != "Released":  # a Retain policy keeps it so, for an administrator to reclaim
            await self.write_status(volume, {**status, "phase": "Released"})
