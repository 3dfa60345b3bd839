"""Priority admission: a new Pod's spec.priority comes from its PriorityClass.

No class named: the globalDefault class if one exists, else priority 0. A named class that does
not exist is refused with upstream's 403 'no PriorityClass with name X was found'; so is a Pod that
states a priority or preemptionPolicy other than its class's. A PriorityClass marked
``globalDefault`` is refused while another is the default, as upstream's validating half does.
"""

from __future__ import annotations

from typing import Any

from kconsole.api.stages import AdmissionContext
from kconsole.api.types import StatusError

#: Created at bootstrap upstream; recognised even before the API server has written them.
SYSTEM_CLASSES = {"system-cluster-critical": 2000000000, "system-node-critical": 2000001000}
DEFAULT_PREEMPTION = "PreemptLowerPriority"


def find_class(ctx: AdmissionContext, name: str) -> dict[str, Any] | None:
    pc = ctx.get_object("priorityclasses", None, name)
    if pc is None and name in SYSTEM_CLASSES:
        pc = {"metadata": {"name": name}, "value": SYSTEM_CLASSES[name], "preemptionPolicy": DEFAULT_PREEMPTION}
    return pc


def global_default(ctx: AdmissionContext) -> dict[str, Any] | None:
    """The globalDefault class; with several (a race upstream also allows), the lowest value wins."""
    best: dict[str, Any] | None = None
    for pc in ctx.list_objects("priorityclasses", None):
        if pc.get("globalDefault") and (best is None or int(pc.get("value", 0)) < int(best.get("value", 0))):
            best = pc
    return best


class Priority:
    name = "Priority"
    #: The (group, kind) pairs this plugin can act on: the server asks it about no other.
    kinds = frozenset({("", "Pod"), ("scheduling.k8s.io", "PriorityClass")})

    def admit(self, ctx: AdmissionContext, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        if ctx.operation != "CREATE" or ctx.subresource or ctx.info.group != "" or ctx.info.kind != "Pod":
            return
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        name = (obj.get("metadata") or {}).get("name") or None
        class_name = spec.get("priorityClassName") or ""
        if class_name:
            pc = find_class(ctx, class_name)
            if pc is None:
                raise StatusError.forbidden("pods", name, f"no PriorityClass with name {class_name} was found")
        else:
            pc = global_default(ctx)
            if pc is not None:
                spec["priorityClassName"] = (pc.get("metadata") or {}).get("name", "")
        priority = int(pc.get("value", 0)) if pc is not None else 0
        policy = (pc.get("preemptionPolicy") if pc is not None else None) or DEFAULT_PREEMPTION
        stated = spec.get("priority")
        if stated is not None and stated != priority:
            raise StatusError.forbidden("pods", name, (
                f"the integer value of priority ({stated}) must not be provided in pod spec; priority "
                f"admission controller computed {priority} from the given PriorityClass name"))
        stated_policy = spec.get("preemptionPolicy")
        if stated_policy and stated_policy != policy:
            raise StatusError.forbidden("pods", name, (
                f"the string value of PreemptionPolicy ({stated_policy}) must not be provided in pod spec; "
                f"priority admission controller computed {policy} from the given PriorityClass name"))
        spec["priority"] = priority
        spec["preemptionPolicy"] = policy

    def validate(self, ctx: AdmissionContext, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        """One default at a time: a new default, or a class newly marked default, is refused while
        another class is the default (upstream's 403, not a 422)."""
        if ctx.operation not in ("CREATE", "UPDATE") or ctx.subresource or ctx.info.kind != "PriorityClass":
            return
        if not obj.get("globalDefault"):
            return
        current = global_default(ctx)
        if current is None:
            return
        name = (obj.get("metadata") or {}).get("name") or ""
        current_name = (current.get("metadata") or {}).get("name") or ""
        if ctx.operation == "CREATE" or current_name != name:
            raise StatusError.forbidden("priorityclasses.scheduling.k8s.io", name or None,
                                        f"PriorityClass {current_name} is already marked as default. "
                                        "Only one default can exist", group="scheduling.k8s.io")
