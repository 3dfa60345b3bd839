"""The storage-object-in-use protection controllers: a claim or volume being deleted goes only when
nothing uses it (upstream's pvc-protection and pv-protection controllers).

A claim marked for deletion keeps ``kubernetes.io/pvc-protection`` while a pod that has not finished
(phase other than Succeeded/Failed) names it in a volume, directly or as its ephemeral volume's
claim; before letting go, the controller asks the API server rather than its cache, as upstream
does, so a pod created a moment ago is not missed. A volume marked for deletion keeps
``kubernetes.io/pv-protection`` while it is Bound. The finalizers come from the
StorageObjectInUseProtection admission plugin.
"""

from __future__ import annotations

from typing import Any

from kconsole.controllers.base import Controller, ControllerContext
from kconsole.objects.meta import deep_copy, has_finalizer, is_being_deleted, remove_finalizer
from kconsole.objects.storage import PV_PROTECTION, PVC_PROTECTION, pod_claims

Obj = dict[str, Any]


def _finalizing(obj: Obj, finalizer: str) -> bool:
    return is_being_deleted(obj) and has_finalizer(obj, finalizer)


def uses_claim(pod: Obj, claim_name: str) -> bool:
    """The pod has not finished and one of its volumes is the claim."""
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return False
    meta = pod.get("metadata") or {}
    return any(name == claim_name for name, _ in pod_claims(meta.get("name", ""), (pod.get("spec") or {}).get("volumes")))


class ProtectionController(Controller):
    """Drops ``finalizer`` from objects of ``resource`` being deleted once :meth:`in_use` says no."""

    resource = ""
    finalizer = ""
    component = ""  # upstream records no events here
    workers = 1

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.objects = self.informer(self.resource)
        self.objects.add_event_handler(on_add=self._changed, on_update=lambda old, new: self._changed(new))

    def _changed(self, obj: Obj) -> None:
        if _finalizing(obj, self.finalizer):
            self.enqueue(obj)

    async def in_use(self, obj: Obj) -> bool:
        raise NotImplementedError

    async def sync(self, key: str) -> None:
        obj = self.objects.get(key)
        if obj is None or not _finalizing(obj, self.finalizer) or await self.in_use(obj):
            return
        new = deep_copy(obj)
        remove_finalizer(new, self.finalizer)
        await self.client.update(new)


class PVCProtectionController(ProtectionController):
    name = "persistentvolumeclaim-protection-controller"
    resource = "persistentvolumeclaims"
    finalizer = PVC_PROTECTION

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.pods = self.informer("pods")
        self.pods.add_event_handler(on_update=lambda old, new: self._pod_changed(new), on_delete=self._pod_changed)

    def _pod_changed(self, pod: Obj) -> None:
        """A pod that finished or went may have been the last user of a claim being deleted."""
        meta = pod.get("metadata") or {}
        for name, _ in pod_claims(meta.get("name", ""), (pod.get("spec") or {}).get("volumes")):
            claim = self.objects.get_by_name(meta.get("namespace"), name)
            if claim is not None:
                self._changed(claim)

    async def in_use(self, obj: Obj) -> bool:
        namespace, name = obj["metadata"].get("namespace"), obj["metadata"]["name"]
        if any(uses_claim(p, name) for p in self.pods.list_by_index("namespace", namespace)):
            return True
        return any(uses_claim(p, name) for p in await self.client.list_all("pods", namespace))


class PVProtectionController(ProtectionController):
    name = "persistentvolume-protection-controller"
    resource = "persistentvolumes"
    finalizer = PV_PROTECTION

    async def in_use(self, obj: Obj) -> bool:
        return (obj.get("status") or {}).get("phase") == "Bound"
