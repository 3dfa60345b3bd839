"""NamespaceLifecycle: no new content in a missing or terminating namespace; system namespaces stay.

Creating in a namespace that does not exist is 404 ``namespaces "x" not found``; in one being
deleted, 403 ``unable to create new content in namespace x because it is being terminated``.
Deleting default, kube-system, kube-public or kube-node-lease is 403 ``this namespace may not be
deleted``. The plugin is listed among both mutating and validating plugins: the early check
spares defaulting a doomed request; the late one is where deletions are judged.
"""

from __future__ import annotations

from typing import Any

from kconsole.api.stages import AdmissionContext
from kconsole.api.types import StatusError

IMMORTAL = frozenset(("default", "kube-system", "kube-public", "kube-node-lease"))
#: Review kinds are answered, never stored: they work in any namespace state.
EXEMPT_GROUPS = frozenset(("authorization.k8s.io", "authentication.k8s.io"))


def terminating(ns: dict[str, Any]) -> bool:
    return (ns.get("status") or {}).get("phase") == "Terminating" or bool(
        (ns.get("metadata") or {}).get("deletionTimestamp"))


class NamespaceLifecycle:
    name = "NamespaceLifecycle"
    #: ``validate`` judges exactly what ``admit`` did: the server does not ask again within one admission.
    repeats_admit = True
    #: ``admit`` never changes an object's spec (see APIServer._plugins).
    spec_untouched = True

    def admit(self, ctx: AdmissionContext, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        self.check(ctx, obj)

    def validate(self, ctx: AdmissionContext, obj: dict[str, Any] | None, old: dict[str, Any] | None) -> None:
        self.check(ctx, obj)

    def check(self, ctx: AdmissionContext, obj: dict[str, Any] | None) -> None:
        info = ctx.info
        if info.group == "" and info.resource == "namespaces":
            if ctx.operation == "DELETE" and not ctx.subresource and ctx.name in IMMORTAL:
                raise StatusError.forbidden("namespaces", ctx.name, "this namespace may not be deleted")
            return
        if ctx.operation != "CREATE" or not info.namespaced or info.group in EXEMPT_GROUPS:
            return
        namespace = ctx.namespace or ((obj or {}).get("metadata") or {}).get("namespace")
        if not namespace:
            return
        ns = ctx.get_object("namespaces", None, namespace)
        if ns is None:
            raise StatusError.not_found("namespaces", namespace)
        if terminating(ns) and not ctx.subresource:
            name = ((obj or {}).get("metadata") or {}).get("name") or ctx.name
            gr = f"{info.resource}.{info.group}" if info.group else info.resource
            raise StatusError.forbidden(
                gr, name, f"unable to create new content in namespace {namespace} because it is being terminated",
                group=info.group)
