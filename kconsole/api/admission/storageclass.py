"""DefaultStorageClass admission: a new claim that names no class gets the default StorageClass.

Only a claim without ``storageClassName`` at all is changed; ``storageClassName: ""`` asks for a
volume of no class and stays. The default is the class annotated
``storageclass.kubernetes.io/is-default-class: "true"`` (or the beta annotation); with several, the
newest wins, as upstream's GetDefaultClass picks. No default class: the claim is left as it is.
"""

from __future__ import annotations

from typing import Any

from kconsole.api.stages import AdmissionContext
from kconsole.objects.storage import is_default_class


def default_class(ctx: AdmissionContext) -> dict[str, Any] | None:
    defaults = (sc for sc in ctx.list_objects("storageclasses", None) if is_default_class(sc))
    return max(defaults, key=lambda sc: (sc["metadata"].get("creationTimestamp") or "", sc["metadata"]["name"]),
               default=None)


class DefaultStorageClass:
    name = "DefaultStorageClass"
    kinds = frozenset({("", "PersistentVolumeClaim")})

    def admit(self, ctx: AdmissionContext, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        if ctx.operation != "CREATE" or ctx.subresource:
            return
        spec = obj.get("spec")
        if not isinstance(spec, dict) or spec.get("storageClassName") is not None:
            return
        sc = default_class(ctx)
        if sc is not None:
            spec["storageClassName"] = sc["metadata"]["name"]
