"""The ephemeral volume controller: a pod's generic ephemeral volume gets its own claim.

upstream's pkg/controller/volume/ephemeral: for each ``ephemeral`` volume of a pod not being deleted,
a PersistentVolumeClaim ``<pod>-<volume>`` is created from the volume's ``volumeClaimTemplate``
(its labels, annotations and spec), owned by the pod (controller, blockOwnerDeletion), so the garbage
collector deletes it with the pod. A claim of that name that the pod does not own is an error
(Warning ``FailedBinding`` on the pod); the scheduler's VolumeBinding keeps such a pod Pending.
"""

from __future__ import annotations

from typing import Any

from kconsole.client import StatusError, is_already_exists
from kconsole.controllers.base import Controller, ControllerContext
from kconsole.controllers.podcontrol import with_kind
from kconsole.objects.meta import is_being_deleted, is_controlled_by, owner_ref
from kconsole.objects.storage import claim_from_template

Obj = dict[str, Any]


def ephemeral_volumes(pod: Obj) -> list[Obj]:
    return [v for v in (pod.get("spec") or {}).get("volumes") or () if v.get("ephemeral") is not None]


class EphemeralVolumeController(Controller):
    name = "ephemeral-volume-controller"
    component = "ephemeral_volume"
    workers = 1

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.pods = self.informer("pods")
        self.claims = self.informer("persistentvolumeclaims")
        self.pods.add_event_handler(on_add=self._pod_changed, on_update=lambda old, new: self._pod_changed(new))
        # A pod's claim deleted under it is made again while the pod lives.
        self.claims.add_event_handler(on_delete=lambda claim: self.enqueue_owner(claim, "Pod"))

    def _pod_changed(self, pod: Obj) -> None:
        if ephemeral_volumes(pod) and not is_being_deleted(pod):
            self.enqueue(pod)

    async def sync(self, key: str) -> None:
        pod = self.pods.get(key)
        if pod is None or is_being_deleted(pod):
            return
        meta = pod["metadata"]
        for vol in ephemeral_volumes(pod):
            claim_name = f"{meta['name']}-{vol.get('name', '')}"
            existing = self.claims.get_by_name(meta.get("namespace"), claim_name)
            if existing is not None:
                if not is_controlled_by(existing, pod):
                    self._event(pod, "Warning", "FailedBinding",
                                f"PVC {meta.get('namespace')}/{claim_name} was not created for pod "
                                f"{meta.get('namespace')}/{meta['name']} (pod is not owner)")
                continue
            claim = claim_from_template(vol["ephemeral"].get("volumeClaimTemplate") or {}, claim_name,
                                        meta.get("namespace"), owners=[owner_ref(with_kind(pod, "v1", "Pod"))])
            try:
                await self.client.create(claim)
            except StatusError as err:
                if is_already_exists(err):
                    continue
                self._event(pod, "Warning", "FailedBinding", f"create PVC {claim_name}: {err}")
                raise
