"""NodeRestriction: a kubelet (user system:node:<name>) may only change what belongs to its node.

As upstream's plugin, with its messages: a node modifies only its own Node (never its taints, its
``node-restriction.kubernetes.io/`` labels nor other ``kubernetes.io``/``k8s.io`` labels a kubelet
may not set), only its own Lease in ``kube-node-lease``; it creates only mirror pods bound to itself,
owned by its Node and naming no service account, Secret, ConfigMap or claim; it updates the status
(never the labels) of, evicts and deletes only pods bound to it; it changes only the status
capacity and conditions of claims; it asks tokens only for pods bound to it. The Node authorizer
decides what a node may ask at all; this plugin looks at the objects.

Deviation: the labels a node registers with are not checked at create. kconsole's kubelet stands in
for ``kubeadm join`` as well, which labels control-plane nodes ``node-role.kubernetes.io/control-plane``.
"""

from __future__ import annotations

from typing import Any

from kconsole.api.nodeauthz import NODE_LEASE_NAMESPACE, node_identity
from kconsole.api.stages import AdmissionContext
from kconsole.api.types import StatusError
from kconsole.objects.meta import deep_copy
from kconsole.objects.pod import (
    CPU_USAGE_ANNOTATION,
    MEMORY_USAGE_ANNOTATION,
    MIRROR_ANNOTATION,
    pod_configmap_names,
    pod_secret_names,
)

Obj = dict[str, Any]
#: Simulated usage the kubelet publishes on its pods (kconsole's stand-in for metrics-server).
USAGE_ANNOTATIONS = (CPU_USAGE_ANNOTATION, MEMORY_USAGE_ANNOTATION)
#: Labels a kubelet may set on its Node in the kubernetes.io/k8s.io namespaces (upstream's
#: kubeletapis.IsKubeletLabel).
KUBELET_LABELS = frozenset({
    "kubernetes.io/hostname", "kubernetes.io/arch", "kubernetes.io/os", "beta.kubernetes.io/arch",
    "beta.kubernetes.io/os", "beta.kubernetes.io/instance-type", "node.kubernetes.io/instance-type",
    "failure-domain.beta.kubernetes.io/region", "failure-domain.beta.kubernetes.io/zone",
    "topology.kubernetes.io/region", "topology.kubernetes.io/zone",
})
KUBELET_LABEL_NAMESPACES = ("kubelet.kubernetes.io", "node.kubernetes.io")
NODE_RESTRICTION_NAMESPACE = "node-restriction.kubernetes.io"


def _label_namespace(key: str) -> str:
    prefix, sep, _ = key.partition("/")
    return prefix if sep else ""


def _is_kubelet_label(key: str) -> bool:
    if key in KUBELET_LABELS:
        return True
    ns = _label_namespace(key)
    return any(ns == allowed or ns.endswith("." + allowed) for allowed in KUBELET_LABEL_NAMESPACES)


def forbidden_labels(new: dict[str, str], old: dict[str, str]) -> list[str]:
    """Label keys a node may not add, remove or change (upstream's getForbiddenLabels), sorted."""
    modified = {k for k in new.keys() | old.keys() if new.get(k) != old.get(k) or (k in new) != (k in old)}
    out = []
    for key in modified:
        ns = _label_namespace(key)
        restricted = ns == NODE_RESTRICTION_NAMESPACE or ns.endswith("." + NODE_RESTRICTION_NAMESPACE)
        kubernetes = any(ns == d or ns.endswith("." + d) for d in ("kubernetes.io", "k8s.io"))
        if restricted or (kubernetes and not _is_kubelet_label(key)):
            out.append(key)
    return sorted(out)


def _meta(obj: Obj | None) -> Obj:
    meta = (obj or {}).get("metadata")
    return meta if isinstance(meta, dict) else {}


def _spec(obj: Obj | None) -> Obj:
    spec = (obj or {}).get("spec")
    return spec if isinstance(spec, dict) else {}


class NodeRestriction:
    name = "NodeRestriction"
    #: The (group, kind) pairs this plugin can act on: the server asks it about no other.
    kinds = frozenset({("", "Node"), ("", "Pod"), ("coordination.k8s.io", "Lease"),
                       ("", "PersistentVolumeClaim"), ("", "ServiceAccount")})
    #: Writes of subresources that are not the object itself, which the server also admits here
    #: (an Eviction, a TokenRequest): ``obj`` is then the request's body.
    subresources = frozenset({"eviction", "token"})

    def validate(self, ctx: AdmissionContext, obj: Obj | None, old: Obj | None) -> None:
        node, is_node = node_identity(ctx.user)
        if not is_node:
            return
        target = obj if obj is not None else old
        name = ctx.name or _meta(target).get("name") or ""
        if not node:
            self._forbid(ctx, name, f'could not determine node from user "{ctx.user.name}"')
        resource = (ctx.info.group, ctx.info.resource)
        if resource == ("", "pods"):
            sub = ctx.subresource or ""
            if sub == "":
                self._pod(ctx, node, name, obj, old)
            elif sub == "status":
                self._pod_status(ctx, node, name, obj, old)
            elif sub == "eviction":
                self._eviction(ctx, node, name, obj)
            else:
                self._forbid(ctx, name, f"unexpected pod subresource \"{sub}\", only 'status' and 'eviction' "
                                        "are allowed")
        elif resource == ("", "nodes"):
            self._node(ctx, node, name, obj, old)
        elif resource == ("", "persistentvolumeclaims"):
            if ctx.subresource != "status":
                self._forbid(ctx, name, "may only update PVC status")
            self._pvc_status(ctx, node, name, obj, old)
        elif resource == ("", "serviceaccounts"):
            if ctx.operation == "CREATE" and ctx.subresource == "token":
                self._token(ctx, name, node, obj)
        elif resource == ("coordination.k8s.io", "leases"):
            if ctx.namespace != NODE_LEASE_NAMESPACE:
                self._forbid(ctx, name, f'can only access leases in the "{NODE_LEASE_NAMESPACE}" system namespace')
            if name != node:
                self._forbid(ctx, name, "can only access node lease with the same name as the requesting node")

    @staticmethod
    def _forbid(ctx: AdmissionContext, name: str, why: str) -> None:
        info = ctx.info
        gr = f"{info.resource}.{info.group}" if info.group else info.resource
        raise StatusError.forbidden(gr, name or None, why, group=info.group)

    def _bound(self, ctx: AdmissionContext, name: str, old: Obj | None) -> str | None:
        """The node the existing pod is bound to; 404 when there is no such pod (upstream's lister)."""
        pod = old if old is not None and old.get("kind", "Pod") == "Pod" else ctx.get_object("pods", ctx.namespace,
                                                                                             name)
        if pod is None:
            raise StatusError.not_found("pods", name)
        return _spec(pod).get("nodeName")

    # ------------------------------------------------------------------ pods

    def _pod(self, ctx: AdmissionContext, node: str, name: str, obj: Obj | None, old: Obj | None) -> None:
        if ctx.operation == "CREATE":
            self._mirror_pod(ctx, node, name, obj or {})
        elif ctx.operation == "DELETE":
            if self._bound(ctx, name, old) != node:
                self._forbid(ctx, name, f'node "{node}" can only delete pods with spec.nodeName set to itself')
        elif ctx.operation == "UPDATE":
            self._usage_only(ctx, node, name, obj, old)
        else:
            self._forbid(ctx, name, f'unexpected operation "{ctx.operation}", node "{node}" can only create and '
                                    "delete mirror pods")

    def _mirror_pod(self, ctx: AdmissionContext, node: str, name: str, pod: Obj) -> None:
        meta, spec = _meta(pod), _spec(pod)
        if MIRROR_ANNOTATION not in (meta.get("annotations") or {}):
            self._forbid(ctx, name, f'pod does not have "{MIRROR_ANNOTATION}" annotation, node "{node}" can only '
                                    "create mirror pods")
        if spec.get("nodeName") != node:
            self._forbid(ctx, name, f'node "{node}" can only create pods with spec.nodeName set to itself')
        owners = meta.get("ownerReferences") or []
        if len(owners) > 1:
            self._forbid(ctx, name, f'node "{node}" can only create pods with a single owner reference set to itself')
        if not owners:
            self._forbid(ctx, name, f'node "{node}" can only create pods with an owner reference set to itself')
        owner = owners[0] if isinstance(owners[0], dict) else {}
        if (owner.get("apiVersion"), owner.get("kind"), owner.get("name")) != ("v1", "Node", node):
            self._forbid(ctx, name, f'node "{node}" can only create pods with an owner reference set to itself')
        if owner.get("controller") is not True:
            self._forbid(ctx, name, f'node "{node}" can only create pods with a controller owner reference set to '
                                    "itself")
        if owner.get("blockOwnerDeletion") is True:
            self._forbid(ctx, name, f'node "{node}" must not set blockOwnerDeletion on an owner reference')
        node_obj = ctx.get_object("nodes", None, node)
        if node_obj is None:
            raise StatusError.not_found("nodes", node)
        uid = _meta(node_obj).get("uid") or ""
        if owner.get("uid") != uid:
            self._forbid(ctx, name, f"node {node} UID mismatch: expected {uid} got {owner.get('uid') or ''}")
        if spec.get("serviceAccountName"):
            self._forbid(ctx, name, f'node "{node}" can not create pods that reference a service account')
        if pod_secret_names(pod):
            self._forbid(ctx, name, f'node "{node}" can not create pods that reference secrets')
        if pod_configmap_names(pod):
            self._forbid(ctx, name, f'node "{node}" can not create pods that reference configmaps')
        for vol in spec.get("volumes") or ():
            for source in (vol.get("projected") or {}).get("sources") or ():
                if "clusterTrustBundle" in source:
                    self._forbid(ctx, name, f'node "{node}" can not create pods that reference clustertrustbundles')
        if any("persistentVolumeClaim" in vol for vol in spec.get("volumes") or ()):
            self._forbid(ctx, name, f'node "{node}" can not create pods that reference persistentvolumeclaims')

    def _pod_status(self, ctx: AdmissionContext, node: str, name: str, obj: Obj | None, old: Obj | None) -> None:
        if ctx.operation != "UPDATE":
            self._forbid(ctx, name, f'unexpected operation "{ctx.operation}"')
        if self._bound(ctx, name, old) != node:
            self._forbid(ctx, name, f'node "{node}" can only update pod status for pods with spec.nodeName set to '
                                    "itself")
        if (_meta(obj).get("labels") or {}) != (_meta(old).get("labels") or {}):
            self._forbid(ctx, name, f'node "{node}" cannot update labels through pod status')

    def _eviction(self, ctx: AdmissionContext, node: str, name: str, eviction: Obj | None) -> None:
        if ctx.operation != "CREATE":
            self._forbid(ctx, name, f"unexpected operation {ctx.operation}")
        pod_name = ctx.name or _meta(eviction).get("name") or ""
        if not pod_name:
            self._forbid(ctx, name, "could not determine pod from request data")
        if self._bound(ctx, pod_name, None) != node:
            self._forbid(ctx, pod_name, f"node {node} can only evict pods with spec.nodeName set to itself")

    def _usage_only(self, ctx: AdmissionContext, node: str, name: str, obj: Obj | None, old: Obj | None) -> None:
        """kconsole's addition: a kubelet publishes its pods' simulated usage (read by the HPA) as
        ``kconsole.dev/*-usage`` annotations; nothing else of a pod may change through it."""
        if self._bound(ctx, name, old) != node:
            self._forbid(ctx, name, f'node "{node}" can only update pods with spec.nodeName set to itself')
        new_ann = dict(_meta(obj).get("annotations") or {})
        old_ann = dict(_meta(old).get("annotations") or {})
        for ann in (new_ann, old_ann):
            for key in [k for k in ann if k in USAGE_ANNOTATIONS]:
                del ann[key]
        strip = ("annotations", "resourceVersion", "managedFields", "generation")
        new_meta = {k: v for k, v in _meta(obj).items() if k not in strip}
        old_meta = {k: v for k, v in _meta(old).items() if k not in strip}
        if not (new_ann == old_ann and new_meta == old_meta and _spec(obj) == _spec(old)):
            self._forbid(ctx, name, f'node "{node}" can only change the {", ".join(USAGE_ANNOTATIONS)} annotations '
                                    "of its pods")

    # ------------------------------------------------------------------ nodes, claims, tokens

    def _node(self, ctx: AdmissionContext, node: str, name: str, obj: Obj | None, old: Obj | None) -> None:
        if name != node:
            self._forbid(ctx, name, f'node "{node}" is not allowed to modify node "{name}"')
        if ctx.operation == "CREATE":
            if _spec(obj).get("configSource") is not None:
                self._forbid(ctx, name, f'node "{node}" is not allowed to create pods with a non-nil configSource')
        elif ctx.operation == "UPDATE":
            source = _spec(obj).get("configSource")
            if source is not None and source != _spec(old).get("configSource"):
                self._forbid(ctx, name, f'node "{node}" is not allowed to update configSource to a new non-nil '
                                        "configSource")
            if (_spec(obj).get("taints") or []) != (_spec(old).get("taints") or []):
                self._forbid(ctx, name, f'node "{node}" is not allowed to modify taints')
            labels = forbidden_labels(_meta(obj).get("labels") or {}, _meta(old).get("labels") or {})
            if labels:
                self._forbid(ctx, name, f"is not allowed to modify labels: {', '.join(labels)}")

    def _pvc_status(self, ctx: AdmissionContext, node: str, name: str, obj: Obj | None, old: Obj | None) -> None:
        if ctx.operation != "UPDATE":
            self._forbid(ctx, name, f'unexpected operation "{ctx.operation}"')
        new, before = deep_copy(obj or {}), deep_copy(old or {})
        for claim in (new, before):
            meta, status = claim.setdefault("metadata", {}), claim.setdefault("status", {})
            for key in ("resourceVersion", "managedFields"):
                meta.pop(key, None)
            for key in ("capacity", "conditions", "allocatedResourceStatuses", "allocatedResources"):
                status.pop(key, None)
        if new != before:
            self._forbid(ctx, name, f'node "{node}" is not allowed to update fields other than status.capacity '
                                    "and status.conditions")

    def _token(self, ctx: AdmissionContext, name: str, node: str, request: Obj | None) -> None:
        ref = _spec(request).get("boundObjectRef")
        if not isinstance(ref, dict) or ref.get("apiVersion") != "v1" or ref.get("kind") != "Pod" \
                or not ref.get("name"):
            self._forbid(ctx, name, "node requested token not bound to a pod")
        if not ref.get("uid"):
            self._forbid(ctx, name, "node requested token with a pod binding without a uid")
        pod = ctx.get_object("pods", ctx.namespace, ref["name"])
        if pod is None:
            raise StatusError.not_found("pods", ref["name"])
        if ref["uid"] != _meta(pod).get("uid"):
            self._forbid(ctx, name, f"the UID in the bound object reference ({ref['uid']}) does not match the UID "
                                    "in record. The object might have been deleted and then recreated")
        if _spec(pod).get("nodeName") != node:
            self._forbid(ctx, name, "node requested token bound to a pod scheduled on a different node")
