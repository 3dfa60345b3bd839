"""NodeRestriction: a kubelet (user system:node:<name>) may only touch what belongs to its node.

RBAC's system:node role lets every node write every Node, Lease and pod status; this plugin narrows
that, as upstream's does: a node modifies only its own Node object and its own Lease, updates the
status of and deletes only pods bound to it, and creates no pods but mirror pods.
"""

from __future__ import annotations

from typing import Any

from kconsole.api.stages import AdmissionContext
from kconsole.api.types import StatusError
from kconsole.objects.pod import CPU_USAGE_ANNOTATION, MEMORY_USAGE_ANNOTATION, MIRROR_ANNOTATION, is_mirror_pod

NODE_PREFIX = "system:node:"
NODES_GROUP = "system:nodes"
#: Simulated usage the kubelet publishes on its pods (kconsole's stand-in for metrics-server).
USAGE_ANNOTATIONS = (CPU_USAGE_ANNOTATION, MEMORY_USAGE_ANNOTATION)


def node_name(ctx: AdmissionContext) -> str | None:
    user = ctx.user
    if NODES_GROUP in user.groups and user.name.startswith(NODE_PREFIX):
        return user.name[len(NODE_PREFIX):] or None
    return None


class NodeRestriction:
    name = "NodeRestriction"
    #: The (group, kind) pairs this plugin can act on: the server asks it about no other.
    kinds = frozenset({("", "Node"), ("", "Pod"), ("coordination.k8s.io", "Lease")})

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
            if not is_mirror_pod(obj or {}):
                raise StatusError.forbidden("pods", name or None, (
                    f'pod does not have "{MIRROR_ANNOTATION}" annotation, node "{node}" can only create mirror pods'))
            if ((obj or {}).get("spec") or {}).get("nodeName") != node:
                raise StatusError.forbidden("pods", name or None,
                                            f'node "{node}" can only create pods with spec.nodeName set to itself')
            return
        pod = old if old is not None and old.get("kind", "Pod") == "Pod" else ctx.get_object("pods", ctx.namespace, name)
        bound = ((pod or {}).get("spec") or {}).get("nodeName")
        if ctx.operation == "UPDATE" and not ctx.subresource:
            self._usage_only(node, name, bound, obj, old)
            return
        if ctx.operation == "UPDATE" and ctx.subresource == "status" and bound != node:
            raise StatusError.forbidden("pods", name or None, (
                f'node "{node}" can only update pod status for pods with spec.nodeName set to itself'))
        if ctx.operation == "DELETE" and not ctx.subresource and bound != node:
            raise StatusError.forbidden("pods", name or None,
                                        f'node "{node}" can only delete pods with spec.nodeName set to itself')
        if ctx.operation == "CREATE" and ctx.subresource == "eviction" and bound != node:
            raise StatusError.forbidden("pods", name or None,
                                        f'node "{node}" can only evict pods with spec.nodeName set to itself')

    @staticmethod
    def _usage_only(node: str, name: str, bound: str | None, obj: dict[str, Any] | None,
                    old: dict[str, Any] | None) -> None:
        """kconsole's addition: a kubelet publishes its pods' simulated usage (read by the HPA) as
        ``kconsole.dev/*-usage`` annotations; nothing else of a pod may change through it."""
        if bound != node:
            raise StatusError.forbidden("pods", name or None,
                                        f'node "{node}" can only update pods with spec.nodeName set to itself')
        new_ann = dict(((obj or {}).get("metadata") or {}).get("annotations") or {})
        old_ann = dict(((old or {}).get("metadata") or {}).get("annotations") or {})
        for ann in (new_ann, old_ann):
            for key in [k for k in ann if k in USAGE_ANNOTATIONS]:
                del ann[key]
        strip = ("annotations", "resourceVersion", "managedFields", "generation")
        new_meta = {k: v for k, v in ((obj or {}).get("metadata") or {}).items() if k not in strip}
        old_meta = {k: v for k, v in ((old or {}).get("metadata") or {}).items() if k not in strip}
        same = (new_ann == old_ann and new_meta == old_meta and (obj or {}).get("spec") == (old or {}).get("spec"))
        if not same:
            raise StatusError.forbidden("pods", name or None, (
                f'node "{node}" can only change the {", ".join(USAGE_ANNOTATIONS)} annotations of its pods'))
