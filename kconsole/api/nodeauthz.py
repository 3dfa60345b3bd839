"""Authorization modes Node,RBAC, as kubeadm configures kube-apiserver.

The Node authorizer answers for kubelets only (user ``system:node:<name>`` in group ``system:nodes``):
a node reads the Secrets, ConfigMaps, claims, volumes and service account tokens of pods bound to it
(the :class:`~kconsole.api.nodegraph.NodeGraph` tells), only its own Node and Lease, and lists pods
only with ``spec.nodeName=<itself>``; what it does not subdivide, upstream's node rules decide. When
it has no opinion, RBAC decides; a denial carries the reasons of both, as upstream's union authorizer
joins them. Upstream's messages throughout (``no relationship found between node 'worker-1' and this
object``).
"""

from __future__ import annotations

from typing import Any

from kconsole.api.nodegraph import CONFIGMAP, POD, PV, PVC, SECRET, SERVICEACCOUNT, NodeGraph
from kconsole.api.rbac import NODE_RULES, CompiledRule, RBACAuthorizer
from kconsole.api.stages import Attributes
from kconsole.api.types import UserInfo
from kconsole.objects.selectors import SelectorError, parse_field_selector

NODE_PREFIX = "system:node:"
NODES_GROUP = "system:nodes"
NODE_LEASE_NAMESPACE = "kube-node-lease"

Obj = dict[str, Any]


def node_identity(user: UserInfo) -> tuple[str, bool]:
    """(node name, is a node) as upstream's NodeIdentifier: the ``system:node:`` prefix and the
    ``system:nodes`` group; a node whose name is empty cannot be identified."""
    if not user.name.startswith(NODE_PREFIX) or NODES_GROUP not in user.groups:
        return "", False
    return user.name[len(NODE_PREFIX):], True


Decision = tuple[bool | None, str]  # (True allow / None no opinion, reason)
_NO = None


class NodeAuthorizer:
    """Upstream's NodeAuthorizer (with AuthorizeNodeWithSelectors, on by default in v1.32)."""

    def __init__(self, graph: NodeGraph) -> None:
        self.graph = graph
        self._rules = tuple(CompiledRule.compile(r) for r in NODE_RULES)

    def authorize(self, attrs: Attributes) -> Decision:
        node, is_node = node_identity(attrs.user)
        if not is_node:
            return _NO, ""
        if not node:
            return _NO, f'unknown node for user "{attrs.user.name}"'
        if attrs.resource_request:
            key = (attrs.group, attrs.resource)
            if key == ("", "secrets"):
                return self._read_namespaced(node, SECRET, attrs)
            if key == ("", "configmaps"):
                return self._read_namespaced(node, CONFIGMAP, attrs)
            if key == ("", "persistentvolumeclaims"):
                if attrs.subresource == "status":
                    return self._status_update(node, PVC, attrs)
                return self._get(node, PVC, attrs)
            if key == ("", "persistentvolumes"):
                return self._get(node, PV, attrs)
            if key == ("", "serviceaccounts"):
                return self._create_token(node, attrs)
            if key == ("coordination.k8s.io", "leases"):
                return self._lease(node, attrs)
            if key == ("", "nodes"):
                return self._node(node, attrs)
            if key == ("", "pods"):
                return self._pod(node, attrs)
            if key in (("storage.k8s.io", "volumeattachments"), ("resource.k8s.io", "resourceclaims")):
                return self._get(node, attrs.resource, attrs)  # kconsole serves neither: nothing relates
            if key == ("storage.k8s.io", "csinodes"):
                return self._csinode(node, attrs)
            if key == ("resource.k8s.io", "resourceslices"):
                return self._resourceslice(node, attrs)
        combined = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
        if any(r.allows(attrs, combined) for r in self._rules):
            return True, ""
        return _NO, ""

    def _related(self, node: str, kind: str, attrs: Attributes) -> Decision:
        if not attrs.name:
            return _NO, "No Object name found"
        if self.graph.related(node, kind, attrs.namespace, attrs.name):
            return True, ""
        return _NO, f"no relationship found between node '{node}' and this object"

    def _status_update(self, node: str, kind: str, attrs: Attributes) -> Decision:
        if attrs.verb not in ("update", "patch"):
            return _NO, "can only get/update/patch this type"
        return self._related(node, kind, attrs)

    def _get(self, node: str, kind: str, attrs: Attributes) -> Decision:
        if attrs.verb != "get":
            return _NO, "can only get individual resources of this type"
        if attrs.subresource:
            return _NO, "cannot get subresource"
        return self._related(node, kind, attrs)

    def _read_namespaced(self, node: str, kind: str, attrs: Attributes) -> Decision:
        if attrs.verb not in ("get", "list", "watch"):
            return _NO, "can only read resources of this type"
        if attrs.subresource:
            return _NO, "cannot read subresource"
        if not attrs.namespace:
            return _NO, "can only read namespaced object of this type"
        return self._related(node, kind, attrs)

    def _create_token(self, node: str, attrs: Attributes) -> Decision:
        if attrs.verb != "create" or not attrs.name:
            return _NO, "can only create tokens for individual service accounts"
        if attrs.subresource != "token":
            return _NO, "can only create token subresource of serviceaccount"
        if self.graph.related(node, SERVICEACCOUNT, attrs.namespace, attrs.name):
            return True, ""
        return _NO, f"no relationship found between node '{node}' and this object"

    @staticmethod
    def _lease(node: str, attrs: Attributes) -> Decision:
        if attrs.verb not in ("get", "create", "update", "patch", "delete"):
            return _NO, "can only get, create, update, patch, or delete a node lease"
        if attrs.namespace != NODE_LEASE_NAMESPACE:
            return _NO, f'can only access leases in the "{NODE_LEASE_NAMESPACE}" system namespace'
        if attrs.verb != "create" and attrs.name != node:
            return _NO, "can only access node lease with the same name as the requesting node"
        return True, ""

    @staticmethod
    def _csinode(node: str, attrs: Attributes) -> Decision:
        if attrs.verb not in ("get", "create", "update", "patch", "delete"):
            return _NO, "can only get, create, update, patch, or delete a CSINode"
        if attrs.subresource:
            return _NO, "cannot authorize CSINode subresources"
        if attrs.verb != "create" and attrs.name != node:
            return _NO, "can only access CSINode with the same name as the requesting node"
        return True, ""

    def _resourceslice(self, node: str, attrs: Attributes) -> Decision:
        if attrs.subresource:
            return _NO, "cannot authorize ResourceSlice subresources"
        if attrs.verb == "create":
            return True, ""  # NodeRestriction checks the slice's nodeName upstream
        if attrs.verb in ("get", "update", "patch", "delete"):
            return self._related(node, "resourceslice", attrs)
        if attrs.verb in ("watch", "list", "deletecollection"):
            if _selects(attrs.field_selector, "spec.nodeName", node):
                return True, ""
            return _NO, "can only list/watch/deletecollection resourceslices with nodeName field selector"
        return _NO, ("only the following verbs are allowed for a ResourceSlice: get, watch, list, create, update, "
                     "patch, delete, deletecollection")

    @staticmethod
    def _node(node: str, attrs: Attributes) -> Decision:
        if not attrs.subresource:
            if attrs.verb in ("create", "update", "patch"):
                return True, ""  # NodeRestriction limits these to the node's own Node
            if attrs.verb in ("get", "list", "watch"):
                if attrs.name == node:
                    return True, ""
                if not attrs.name:
                    return _NO, f"node '{node}' cannot read all nodes, only its own Node object"
                return _NO, f"node '{node}' cannot read '{attrs.name}', only its own Node object"
        elif attrs.subresource == "status" and attrs.verb in ("update", "patch"):
            return True, ""
        return _NO, ""

    def _pod(self, node: str, attrs: Attributes) -> Decision:
        sub, verb = attrs.subresource, attrs.verb
        if not sub:
            if verb == "get":
                return self._get(node, POD, attrs)
            if verb in ("list", "watch"):
                if _selects(attrs.field_selector, "spec.nodeName", node):
                    return True, ""
                if attrs.name:
                    return self._related(node, POD, attrs)
                return _NO, "can only list/watch pods with spec.nodeName field selector"
            # create/delete: mirror pods. patch is kconsole's: a kubelet publishes its pods'
            # simulated usage as annotations. NodeRestriction narrows all three.
            if verb in ("create", "delete", "patch"):
                return True, ""
        elif sub == "status" and verb in ("update", "patch"):
            return True, ""
        elif sub == "eviction" and verb == "create":
            return True, ""
        return _NO, ""


def _selects(selector: str, field: str, value: str) -> bool:
    """Whether a field selector requires ``field=value`` (upstream reads the parsed requirements)."""
    if not selector:
        return False
    try:
        parsed = parse_field_selector(selector)
    except SelectorError:
        return False
    return any(t.field == field and t.operator == "=" and t.value == value for t in parsed.terms)


class Authorizers:
    """Node, then RBAC (``--authorization-mode=Node,RBAC``): the first opinion wins."""

    def __init__(self, node: NodeAuthorizer, rbac: RBACAuthorizer) -> None:
        self.node = node
        self.rbac = rbac

    def authorize(self, attrs: Attributes) -> tuple[bool, str]:
        allowed, node_reason = self.node.authorize(attrs)
        if allowed:
            return True, node_reason
        ok, reason = self.rbac.authorize(attrs)
        if ok:
            return True, reason
        return False, "\n".join(r for r in (node_reason, reason) if r)

    def rules_for(self, user: UserInfo, namespace: str) -> tuple[list[Obj], list[Obj], bool]:
        """(resourceRules, nonResourceRules, incomplete): RBAC's rules; a node's are never complete,
        as the Node authorizer does not enumerate them (upstream's RulesFor)."""
        rules, urls = self.rbac.rules_for(user, namespace)
        return rules, urls, node_identity(user)[1]
