"""ServiceAccount admission: every new Pod runs as a service account, "default" unless named.

A Pod naming an account that does not exist in its namespace is refused with upstream's Forbidden
("error looking up service account ns/name: serviceaccount "name" not found"): the classic typo a
ReplicaSet then reports as FailedCreate. Unlike upstream, a missing ``default`` account is not
refused: kconsole's API server also runs without the controller-manager that creates it (tests,
benchmarks). Mirror pods (a kubelet's static pods) are left alone, as upstream leaves them.

Upstream also mounts the account's API token; kconsole's simulated containers never read it, so
only the name is set (with the deprecated ``serviceAccount`` mirror that v1 Pods still carry).
"""

from __future__ import annotations

from typing import Any

from kconsole.api.stages import AdmissionContext
from kconsole.api.types import StatusError

DEFAULT_ACCOUNT = "default"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"


def named_account(pod: dict[str, Any]) -> str | None:
    """The account a new Pod names that admission must find, if any (not "default", not a mirror pod)."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return None
    account = spec.get("serviceAccountName") or spec.get("serviceAccount")
    if not account or account == DEFAULT_ACCOUNT or not isinstance(account, str):
        return None
    annotations = (pod.get("metadata") or {}).get("annotations")
    if isinstance(annotations, dict) and MIRROR_ANNOTATION in annotations:
        return None
    return account


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
        named = named_account(obj)
        if named is not None and ctx.get_object("serviceaccounts", ctx.namespace, named) is None:
            meta = obj.get("metadata") or {}
            # Upstream admits before a name is generated from generateName, so its error names the prefix.
            raise StatusError.forbidden("pods", meta.get("generateName") or meta.get("name") or None,
                                        f"error looking up service account {ctx.namespace}/{named}: "
                                        f'serviceaccount "{named}" not found')
        account = spec.get("serviceAccountName") or spec.get("serviceAccount") or DEFAULT_ACCOUNT
        spec["serviceAccountName"] = account
        spec["serviceAccount"] = account
