"""ServiceAccount admission: every new Pod runs as a service account, "default" unless named.

Upstream also mounts the account's API token; kconsole's simulated containers never read it, so
only the name is set (with the deprecated ``serviceAccount`` mirror that v1 Pods still carry).
"""

from __future__ import annotations

from typing import Any

from kconsole.api.stages import AdmissionContext

DEFAULT_ACCOUNT = "default"


class ServiceAccount:
    name = "ServiceAccount"
    #: The (group, kind) pairs this plugin can act on: the server asks it about no other.
    kinds = frozenset({("", "Pod")})

    def admit(self, ctx: AdmissionContext, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        if ctx.operation != "CREATE" or ctx.subresource or ctx.info.group != "" or ctx.info.kind != "Pod":
            return
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        account = spec.get("serviceAccountName") or spec.get("serviceAccount") or DEFAULT_ACCOUNT
        spec["serviceAccountName"] = account
        spec["serviceAccount"] = account
