"""DefaultTolerationSeconds: new Pods tolerate a not-ready or unreachable node for 300 s.

That is why pods leave a dead node about 50 + 300 simulated seconds after it dies: the node
lifecycle controller taints it NoExecute and these tolerations run out.
"""

from __future__ import annotations

from typing import Any

from kconsole.api.stages import AdmissionContext

NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"
DEFAULT_SECONDS = 300


def tolerates(tolerations: list[Any], key: str) -> bool:
    """Already tolerates ``key``:NoExecute in any way (that key or any key; NoExecute or any effect)."""
    for t in tolerations:
        if not isinstance(t, dict):
            continue
        if t.get("effect") not in (None, "", "NoExecute"):
            continue
        if t.get("key") == key or not t.get("key"):
            return True
    return False


class DefaultTolerationSeconds:
    name = "DefaultTolerationSeconds"
    #: The (group, kind) pairs this plugin can act on: the server asks it about no other.
    kinds = frozenset({("", "Pod")})

    def admit(self, ctx: AdmissionContext, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        if ctx.operation != "CREATE" or ctx.subresource or ctx.info.group != "" or ctx.info.kind != "Pod":
            return
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        tolerations = spec.get("tolerations")
        if not isinstance(tolerations, list):
            tolerations = []
        for key in (NOT_READY, UNREACHABLE):
            if not tolerates(tolerations, key):
                tolerations.append({"key": key, "operator": "Exists", "effect": "NoExecute",
                                    "tolerationSeconds": DEFAULT_SECONDS})
        spec["tolerations"] = tolerations
