"""NodeRestriction: a kubelet (user system:node:<name>) may only touch what belongs to its node.

RBAC's system:node role lets every node write every Node, Lease and pod status; this plugin narrows
that, as upstream's does: a node modifies only its own Node object and its own Lease, updates the
status of and deletes only pods bound to it, and creates no pods but mirror pods.
"""

from __future__ import annotations

from typing import Any

from kconsole.api.stages import AdmissionContext
from kconsole.api.types import StatusError

NODE_PREFIX = "system:node:"
NODES_GROUP = "system:nodes"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"


def node_name(ctx: AdmissionContext) -> str | None:
    user = ctx.user
    if NODES_GROUP in user.groups and user.name.startswith(NODE_PREFIX):
        return user.name[len(NODE_PREFIX):] or None
    return None


class NodeRestriction:
    name = "NodeRestriction"

    def validate(self, ctx: AdmissionContext, obj: dict[str, Any] | None, old: dict[str, Any] | None) -> None:
        node = node_name(ctx)
        if node is None:
            return
        info = ctx.info
        target = obj if obj is not None else old
        name = ctx.name or ((target or {}).get("metadata") or {}).get("name") or ""
        if info.group == "" and info.resource == "nodes":
            if name != node:
                raise StatusError.forbidden("nodes", name or None, f'node "{node}" is not allowed to modify node "{name}"')
        elif info.group == "coordination.k8s.io" and info.resource == "leases":
            if ctx.namespace == "kube-node-lease" and name != node:
                raise StatusError.forbidden("leases.coordination.k8s.io", name or None,
                                            "can only access node lease with the same name as the requesting node",
                                            group="coordination.k8s.io")
        elif info.group == "" and info.resource == "pods":
            self._pod(ctx, node, name, obj, old)

    def _pod(self, ctx: AdmissionContext, node: str, name: str, obj: dict[str, Any] | None,
             old: dict[str, Any] | None) -> None:
        if ctx.operation == "CREATE" and not ctx.subresource:
            annotations = ((obj or {}).get("metadata") or {}).get("annotations") or {}
            if MIRROR_ANNOTATION not in annotations:
                raise StatusError.forbidden("pods", name or None, (
                    f'pod does not have "{MIRROR_ANNOTATION}" annotation, node "{node}" can only create mirror pods'))
            if ((obj or {}).get("spec") or {}).get("nodeName") != node:
                raise StatusError.forbidden("pods", name or None,
                                            f'node "{node}" can only create pods with spec.nodeName set to itself')
            return
        pod = old if old is not None and old.get("kind", "Pod") == "Pod" else ctx.get_object("pods", ctx.namespace, name)
        bound = ((pod or {}).get("spec") or {}).get("nodeName")
        if ctx.operation == "UPDATE" and ctx.subresource == "status" and bound != node:
            raise StatusError.forbidden("pods", name or None, (
                f'node "{node}" can only update pod status for pods with spec.nodeName set to itself'))
        if ctx.operation == "DELETE" and not ctx.subresource and bound != node:
            raise StatusError.forbidden("pods", name or None,
                                        f'node "{node}" can only delete pods with spec.nodeName set to itself')
        if ctx.operation == "CREATE" and ctx.subresource == "eviction" and bound != node:
            raise StatusError.forbidden("pods", name or None,
                                        f'node "{node}" can only evict pods with spec.nodeName set to itself')
