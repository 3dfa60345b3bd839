"""RuntimeClass admission: a Pod naming a RuntimeClass gets its overhead and scheduling constraints.

As upstream's plugin: the Pod's ``spec.overhead`` becomes the class's ``overhead.podFixed`` (so the
scheduler's NodeResourcesFit and ResourceQuota count it), the class's ``scheduling.nodeSelector``
is merged into the Pod's (a conflicting value is refused) and its tolerations are added. A class
that does not exist, or an overhead the Pod states that differs from its class's, is refused with
upstream's 403.
"""

from __future__ import annotations

from typing import Any

from kconsole.api.stages import AdmissionContext
from kconsole.api.types import StatusError

Obj = dict[str, Any]


def _applies(ctx: AdmissionContext) -> bool:
    return ctx.operation == "CREATE" and not ctx.subresource and ctx.info.group == "" and ctx.info.kind == "Pod"


def _runtime_class(ctx: AdmissionContext, obj: Obj) -> tuple[Obj, Obj | None] | None:
    """(pod spec, its RuntimeClass or None when it names none); None for a body without a spec."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return None
    name = spec.get("runtimeClassName")
    if not name or not isinstance(name, str):
        return spec, None
    rc = ctx.get_object("runtimeclasses.node.k8s.io", None, name)
    if rc is None:
        raise StatusError.forbidden("pods", (obj.get("metadata") or {}).get("name") or None,
                                    f'pod rejected: RuntimeClass "{name}" not found')
    return spec, rc


def _pod_fixed(rc: Obj) -> Obj | None:
    overhead = rc.get("overhead")
    return overhead.get("podFixed") if isinstance(overhead, dict) else None


class RuntimeClass:
    name = "RuntimeClass"
    #: The (group, kind) pairs this plugin can act on: the server asks it about no other.
    kinds = frozenset({("", "Pod")})

    def admit(self, ctx: AdmissionContext, obj: Obj, old: Obj | None) -> None:
        if not _applies(ctx):
            return
        found = _runtime_class(ctx, obj)
        if found is None or found[1] is None:
            return
        spec, rc = found
        pod_name = (obj.get("metadata") or {}).get("name") or None
        fixed = _pod_fixed(rc)
        if fixed:
            stated = spec.get("overhead")
            if stated and stated != fixed:
                raise StatusError.forbidden("pods", pod_name, "pod rejected: Pod's Overhead doesn't match "
                                            "RuntimeClass's defined Overhead")
            spec["overhead"] = dict(fixed)
        scheduling = rc.get("scheduling") if isinstance(rc.get("scheduling"), dict) else {}
        selector = scheduling.get("nodeSelector") or {}
        if selector:
            merged = dict(spec.get("nodeSelector") or {})
            for key, value in selector.items():
                if key in merged and merged[key] != value:
                    raise StatusError.forbidden("pods", pod_name, f"conflict: runtimeClass.scheduling.nodeSelector"
                                                f"[{key}] = {value}; pod.spec.nodeSelector[{key}] = {merged[key]}")
                merged[key] = value
            spec["nodeSelector"] = merged
        tolerations = scheduling.get("tolerations") or []
        if tolerations:
            mine = list(spec.get("tolerations") or [])
            spec["tolerations"] = mine + [t for t in tolerations if t not in mine]

    def validate(self, ctx: AdmissionContext, obj: Obj, old: Obj | None) -> None:
        if not _applies(ctx):
            return
        found = _runtime_class(ctx, obj)
        if found is None:
            return
        spec, rc = found
        stated = spec.get("overhead")
        pod_name = (obj.get("metadata") or {}).get("name") or None
        if rc is None:
            if stated:
                raise StatusError.forbidden("pods", pod_name,
                                            "pod rejected: Pod Overhead set without corresponding RuntimeClass")
            return
        fixed = _pod_fixed(rc)
        if fixed is None and stated:
            raise StatusError.forbidden("pods", pod_name, "pod rejected: Pod Overhead set without corresponding "
                                        "RuntimeClass defined Overhead")
        if fixed is not None and stated != fixed:
            raise StatusError.forbidden("pods", pod_name, "pod rejected: Pod's Overhead doesn't match "
                                        "RuntimeClass's defined Overhead")
