"""StorageObjectInUseProtection admission: every new claim and volume carries its protection finalizer.

``kubernetes.io/pvc-protection`` on a PersistentVolumeClaim and ``kubernetes.io/pv-protection`` on a
PersistentVolume, as upstream adds them on create. Deleting a claim a pod still uses, or a volume still
bound, then only marks it (``kubectl get`` shows Terminating); the protection controllers
(:mod:`kconsole.controllers.volumeprotection`) remove the finalizer once nothing uses it.
"""

from __future__ import annotations

from typing import Any

from kconsole.api.stages import AdmissionContext
from kconsole.objects.meta import add_finalizer
from kconsole.objects.storage import PV_PROTECTION, PVC_PROTECTION

FINALIZERS = {"PersistentVolumeClaim": PVC_PROTECTION, "PersistentVolume": PV_PROTECTION}


class StorageObjectInUseProtection:
    name = "StorageObjectInUseProtection"
    kinds = frozenset({("", "PersistentVolumeClaim"), ("", "PersistentVolume")})

    def admit(self, ctx: AdmissionContext, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        if ctx.operation != "CREATE" or ctx.subresource:
            return
        meta = obj.get("metadata")
        finalizer = FINALIZERS.get(ctx.info.kind)
        if not isinstance(meta, dict) or finalizer is None:
            return
        if not isinstance(meta.get("finalizers"), list):
            meta["finalizers"] = []
        add_finalizer(obj, finalizer)
