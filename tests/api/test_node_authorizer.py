"""The Node authorizer: upstream's allow/deny table (node_authorizer_test.go's cases, on kconsole's
graph), its reasons, the Node,RBAC chain, and the API server keeping the graph from its watches."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from api_helpers import Client, pod

from kconsole.api.nodeauthz import Authorizers, NodeAuthorizer, node_identity
from kconsole.api.nodegraph import NodeGraph
from kconsole.api.rbac import RBACAuthorizer, bootstrap_objects, static_lister
from kconsole.api.server import APIServer
from kconsole.api.stages import Attributes
from kconsole.api.types import Response, UserInfo
from kconsole.clock import VirtualClock

NODE0 = UserInfo("system:node:node0", ("system:nodes", "system:authenticated"))
NO_REL = "no relationship found between node 'node0' and this object"


def bound_pod(name: str, node: str, ns: str = "ns0", **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}"},
            "spec": {"nodeName": node, "containers": [{"name": "c"}], **spec}}


@pytest.fixture
def graph() -> NodeGraph:
    g = NodeGraph()
    g.set_pod(bound_pod("pod0-node0", "node0", serviceAccountName="svcacct0-node0",
                        imagePullSecrets=[{"name": "secret-pull"}],
                        volumes=[{"name": "s", "secret": {"secretName": "secret0-pod0-node0"}},
                                 {"name": "c", "configMap": {"name": "configmap0-pod0-node0"}},
                                 {"name": "p", "persistentVolumeClaim": {"claimName": "pvc0-pod0-node0"}},
                                 {"name": "shared", "secret": {"secretName": "shared"}}]))
    g.set_pod(bound_pod("pod0-node1", "node1", serviceAccountName="svcacct0-node1",
                        volumes=[{"name": "s", "secret": {"secretName": "secret0-pod0-node1"}},
                                 {"name": "c", "configMap": {"name": "configmap0-pod0-node1"}},
                                 {"name": "p", "persistentVolumeClaim": {"claimName": "pvc0-pod0-node1"}},
                                 {"name": "shared", "secret": {"secretName": "shared"}}]))
    g.set_pod(bound_pod("unbound", "", volumes=[{"name": "s", "secret": {"secretName": "secret-unbound"}}]))
    g.set_pv({"metadata": {"name": "pv0-pod0-node0"}, "spec": {"claimRef": {"namespace": "ns0",
                                                                           "name": "pvc0-pod0-node0"}}})
    g.set_pv({"metadata": {"name": "pv0-pod0-node1"}, "spec": {"claimRef": {"namespace": "ns0",
                                                                           "name": "pvc0-pod0-node1"}}})
    return g


def attrs(verb: str, resource: str, name: str = "", ns: str = "", sub: str = "", group: str = "",
          user: UserInfo = NODE0, selector: str = "") -> Attributes:
    return Attributes(user=user, verb=verb, group=group, resource=resource, subresource=sub, namespace=ns,
                      name=name, field_selector=selector)


LEASES = "coordination.k8s.io"
#: (case, question, allowed, reason) -- upstream's TestAuthorizer rows and its messages.
TABLE: list[tuple[str, Attributes, bool, str]] = [
    ("allowed configmap", attrs("get", "configmaps", "configmap0-pod0-node0", "ns0"), True, ""),
    ("allowed secret via pod", attrs("get", "secrets", "secret0-pod0-node0", "ns0"), True, ""),
    ("allowed image pull secret", attrs("get", "secrets", "secret-pull", "ns0"), True, ""),
    ("list allowed secret via pod", attrs("list", "secrets", "secret0-pod0-node0", "ns0"), True, ""),
    ("watch allowed secret via pod", attrs("watch", "secrets", "secret0-pod0-node0", "ns0"), True, ""),
    ("disallowed list many secrets", attrs("list", "secrets", "", "ns0"), False, "No Object name found"),
    ("disallowed watch many secrets", attrs("watch", "secrets", "", "ns0"), False, "No Object name found"),
    ("disallowed list secrets from all namespaces", attrs("list", "secrets", "secret0-pod0-node0"), False,
     "can only read namespaced object of this type"),
    ("allowed shared secret via pod", attrs("get", "secrets", "shared", "ns0"), True, ""),
    ("disallowed write secret", attrs("update", "secrets", "secret0-pod0-node0", "ns0"), False,
     "can only read resources of this type"),
    ("allowed pvc", attrs("get", "persistentvolumeclaims", "pvc0-pod0-node0", "ns0"), True, ""),
    ("allowed pv", attrs("get", "persistentvolumes", "pv0-pod0-node0"), True, ""),
    ("disallowed list pvcs", attrs("list", "persistentvolumeclaims", "", "ns0"), False,
     "can only get individual resources of this type"),
    ("allowed pvc status update", attrs("update", "persistentvolumeclaims", "pvc0-pod0-node0", "ns0", "status"),
     True, ""),
    ("disallowed pvc status get", attrs("get", "persistentvolumeclaims", "pvc0-pod0-node0", "ns0", "status"),
     False, "can only get/update/patch this type"),
    ("disallowed configmap", attrs("get", "configmaps", "configmap0-pod0-node1", "ns0"), False, NO_REL),
    ("disallowed secret via pod", attrs("get", "secrets", "secret0-pod0-node1", "ns0"), False, NO_REL),
    ("disallowed secret of an unbound pod", attrs("get", "secrets", "secret-unbound", "ns0"), False, NO_REL),
    ("disallowed pvc", attrs("get", "persistentvolumeclaims", "pvc0-pod0-node1", "ns0"), False, NO_REL),
    ("disallowed pv", attrs("get", "persistentvolumes", "pv0-pod0-node1"), False, NO_REL),
    ("disallowed unknown secret", attrs("get", "secrets", "topsecret", "sec"), False, NO_REL),
    ("allowed token of the pod's account", attrs("create", "serviceaccounts", "svcacct0-node0", "ns0", "token"),
     True, ""),
    ("disallowed token of another node's account",
     attrs("create", "serviceaccounts", "svcacct0-node1", "ns0", "token"), False, NO_REL),
    ("disallowed get serviceaccount", attrs("get", "serviceaccounts", "svcacct0-node0", "ns0"), False,
     "can only create tokens for individual service accounts"),
    ("disallowed non-token subresource", attrs("create", "serviceaccounts", "svcacct0-node0", "ns0", "x"),
     False, "can only create token subresource of serviceaccount"),
    ("allowed get lease", attrs("get", "leases", "node0", "kube-node-lease", group=LEASES), True, ""),
    ("allowed update lease", attrs("update", "leases", "node0", "kube-node-lease", group=LEASES), True, ""),
    ("allowed create lease (admission checks the name)",
     attrs("create", "leases", "", "kube-node-lease", group=LEASES), True, ""),
    ("disallowed list leases", attrs("list", "leases", "", "kube-node-lease", group=LEASES), False,
     "can only get, create, update, patch, or delete a node lease"),
    ("disallowed lease in another namespace", attrs("get", "leases", "node0", "foo", group=LEASES), False,
     'can only access leases in the "kube-node-lease" system namespace'),
    ("disallowed another node's lease", attrs("update", "leases", "node1", "kube-node-lease", group=LEASES),
     False, "can only access node lease with the same name as the requesting node"),
    ("allowed get own node", attrs("get", "nodes", "node0"), True, ""),
    ("allowed watch own node by name", attrs("watch", "nodes", "node0"), True, ""),
    ("allowed create node (admission checks the name)", attrs("create", "nodes"), True, ""),
    ("allowed patch node status", attrs("patch", "nodes", "node0", sub="status"), True, ""),
    ("disallowed list all nodes", attrs("list", "nodes"), False,
     "node 'node0' cannot read all nodes, only its own Node object"),
    ("disallowed get another node", attrs("get", "nodes", "node1"), False,
     "node 'node0' cannot read 'node1', only its own Node object"),
    ("disallowed delete node", attrs("delete", "nodes", "node0"), False, ""),
    ("allowed list own pods", attrs("list", "pods", selector="spec.nodeName=node0"), True, ""),
    ("allowed watch own pods", attrs("watch", "pods", selector="status.phase!=Failed,spec.nodeName=node0"),
     True, ""),
    ("disallowed list all pods", attrs("list", "pods"), False,
     "can only list/watch pods with spec.nodeName field selector"),
    ("disallowed list another node's pods", attrs("list", "pods", selector="spec.nodeName=node1"), False,
     "can only list/watch pods with spec.nodeName field selector"),
    ("disallowed list pods not on a node", attrs("list", "pods", selector="spec.nodeName!=node0"), False,
     "can only list/watch pods with spec.nodeName field selector"),
    ("allowed get own pod", attrs("get", "pods", "pod0-node0", "ns0"), True, ""),
    ("disallowed get another node's pod", attrs("get", "pods", "pod0-node1", "ns0"), False, NO_REL),
    ("allowed mirror pod create (admission checks it)", attrs("create", "pods", "", "kube-system"), True, ""),
    ("allowed pod status", attrs("patch", "pods", "pod0-node0", "ns0", "status"), True, ""),
    ("allowed eviction", attrs("create", "pods", "pod0-node0", "ns0", "eviction"), True, ""),
    ("disallowed pod exec", attrs("create", "pods", "pod0-node0", "ns0", "exec"), False, ""),
    ("disallowed volumeattachment", attrs("get", "volumeattachments", "va0", group="storage.k8s.io"), False,
     NO_REL),
    ("disallowed list volumeattachments", attrs("list", "volumeattachments", group="storage.k8s.io"), False,
     "can only get individual resources of this type"),
    ("allowed own csinode", attrs("update", "csinodes", "node0", group="storage.k8s.io"), True, ""),
    ("disallowed another csinode", attrs("get", "csinodes", "node1", group="storage.k8s.io"), False,
     "can only access CSINode with the same name as the requesting node"),
    ("allowed own resourceslices", attrs("watch", "resourceslices", group="resource.k8s.io",
                                         selector="spec.nodeName=node0"), True, ""),
    ("disallowed all resourceslices", attrs("list", "resourceslices", group="resource.k8s.io"), False,
     "can only list/watch/deletecollection resourceslices with nodeName field selector"),
    ("static rule: watch services", attrs("watch", "services"), True, ""),
    ("static rule: create events", attrs("create", "events", "", "ns0"), True, ""),
    ("static rule: get endpoints", attrs("get", "endpoints", "kubernetes", "default"), True, ""),
    ("not in the node rules: create deployments", attrs("create", "deployments", "", "ns0", group="apps"), False,
     ""),
    ("not in the node rules: list endpointslices",
     attrs("list", "endpointslices", group="discovery.k8s.io"), False, ""),
]


@pytest.mark.parametrize(("case", "question", "allowed", "reason"), TABLE, ids=[row[0] for row in TABLE])
def test_upstream_allow_deny_table(graph: NodeGraph, case: str, question: Attributes, allowed: bool,
                                   reason: str) -> None:
    decision, why = NodeAuthorizer(graph).authorize(question)
    assert (bool(decision), why) == (allowed, reason)


def test_only_nodes_are_judged() -> None:
    authz = NodeAuthorizer(NodeGraph())
    assert authz.authorize(attrs("get", "secrets", "s", "ns0", user=UserInfo("bob"))) == (None, "")
    # The prefix without the group is not a node (upstream's NodeIdentifier), nor the group without it.
    assert node_identity(UserInfo("system:node:node0")) == ("", False)
    assert node_identity(UserInfo("kubelet", ("system:nodes",))) == ("", False)
    nameless = UserInfo("system:node:", ("system:nodes",))
    assert authz.authorize(attrs("get", "nodes", "x", user=nameless)) == (None, 'unknown node for user "system:node:"')


def test_the_graph_follows_pods_coming_and_going(graph: NodeGraph) -> None:
    authz = NodeAuthorizer(graph)
    question = attrs("get", "secrets", "shared", "ns0")
    graph.remove_pod("ns0", "pod0-node0")
    assert authz.authorize(question) == (None, NO_REL)
    assert graph.related("node1", "secret", "ns0", "shared")  # still named by node1's pod
    moved = bound_pod("pod0-node1", "node0", volumes=[{"name": "s", "secret": {"secretName": "shared"}}])
    graph.set_pod(moved)  # re-created on node0 under the same name
    assert authz.authorize(question) == (True, "")
    assert not graph.related("node1", "secret", "ns0", "shared")
    assert not graph.related("node1", "secret", "ns0", "secret0-pod0-node1")


def test_node_then_rbac_and_their_reasons_joined(graph: NodeGraph) -> None:
    policy = bootstrap_objects() + [
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "read-secrets"},
         "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": {"name": "node0-reads"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                                                          "kind": "ClusterRole", "name": "read-secrets"},
         "subjects": [{"kind": "User", "name": "system:node:node0"}]},
    ]
    chain = Authorizers(NodeAuthorizer(graph), RBACAuthorizer(static_lister(policy)))
    assert chain.authorize(attrs("get", "secrets", "secret0-pod0-node0", "ns0")) == (True, "")
    # Granted by RBAC where the Node authorizer has no opinion, as with Node,RBAC upstream.
    allowed, reason = chain.authorize(attrs("get", "secrets", "secret0-pod0-node1", "ns0"))
    assert allowed and reason.startswith('RBAC: allowed by ClusterRoleBinding "node0-reads"')
    assert chain.authorize(attrs("list", "secrets", "", "ns0")) == (False, "No Object name found")
    rules, _, incomplete = chain.rules_for(NODE0, "ns0")
    assert incomplete
    assert not chain.rules_for(UserInfo("bob"), "ns0")[2]


# --------------------------------------------------------------------------- through the API server


def node_client(api: APIServer, node: str) -> Client:
    return Client(api, api.tokens.issue(UserInfo(f"system:node:{node}", ("system:nodes", "system:authenticated"))))


async def test_a_node_reads_only_what_its_pods_name(api: APIServer, admin: Client) -> None:
    await admin.ok("create", "namespaces", body={"metadata": {"name": "sec"}})
    for name in ("topsecret", "mine"):
        await admin.ok("create", "secrets", namespace="sec", body={"metadata": {"name": name},
                                                                  "stringData": {"k": "v"}})
    worker = node_client(api, "worker-1")
    denied = await worker.do("get", "secrets", namespace="sec", name="topsecret")
    assert isinstance(denied, Response) and denied.code == 403
    assert denied.body["message"] == (
        'secrets "topsecret" is forbidden: User "system:node:worker-1" cannot get resource "secrets" in API group '
        '"" in the namespace "sec": no relationship found between node \'worker-1\' and this object')
    listed = await worker.do("list", "secrets", namespace="sec")
    assert listed.code == 403 and listed.body["message"].endswith(": No Object name found")
    await admin.ok("create", "pods", namespace="sec", body=pod(
        "app", nodeName="worker-1", volumes=[{"name": "s", "secret": {"secretName": "mine"}}]))
    got = await worker.ok("get", "secrets", namespace="sec", name="mine")
    assert got["metadata"]["name"] == "mine"
    # A list or watch naming the object (the kubelet's per-object watch) is allowed, nothing wider.
    assert (await worker.do("list", "secrets", namespace="sec", field_selector="metadata.name=mine")).code == 200
    assert (await worker.do("get", "secrets", namespace="sec", name="topsecret")).code == 403
    assert (await node_client(api, "worker-2").do("get", "secrets", namespace="sec", name="mine")).code == 403
    await admin.ok("delete", "pods", namespace="sec", name="app", grace_period_seconds=0)
    assert (await worker.do("get", "secrets", namespace="sec", name="mine")).code == 403


async def test_a_node_lists_only_its_own_pods_and_node(api: APIServer, admin: Client) -> None:
    await admin.ok("create", "pods", namespace="default", body=pod("a", nodeName="worker-1"))
    worker = node_client(api, "worker-1")
    own = await worker.ok("list", "pods", field_selector="spec.nodeName=worker-1")
    assert [p["metadata"]["name"] for p in own["items"]] == ["a"]
    everything = await worker.do("list", "pods")
    assert everything.code == 403
    assert everything.body["message"].endswith(": can only list/watch pods with spec.nodeName field selector")
    assert (await worker.do("list", "nodes")).code == 403
    assert (await worker.do("list", "nodes", field_selector="metadata.name=worker-1")).code == 200


async def test_a_start_tightens_the_node_policy_of_an_older_data_folder(tmp_path: Path, clock: VirtualClock) -> None:
    """Older versions bound system:node (every Secret) to the nodes group and gave nodes a Role on all
    Leases: a start removes both while they carry the bootstrap markers; a binding a user took over
    (autoupdate "false") is left as it is, as upstream's reconciliation leaves it."""
    from kconsole.store.revlog import RevisionLog

    G = "rbac.authorization.k8s.io"
    kv = await RevisionLog.open(tmp_path / "old.db", clock=clock, synchronous="NORMAL")
    api = APIServer(kv, clock, seed=3)
    await api.start()
    admin = Client(api, api.tokens.issue(UserInfo("admin", ("system:masters",))))
    old = await admin.ok("get", "clusterrolebindings", group=G, name="system:node")
    old["subjects"] = [{"kind": "Group", "apiGroup": G, "name": "system:nodes"}]
    await admin.ok("update", "clusterrolebindings", group=G, name="system:node", body=old)
    labels = {"kubernetes.io/bootstrapping": "rbac-defaults"}
    await admin.ok("create", "roles", group=G, namespace="kube-node-lease", body={
        "metadata": {"name": "system:node-lease", "labels": labels},
        "rules": [{"verbs": ["*"], "apiGroups": ["coordination.k8s.io"], "resources": ["leases"]}]})
    await admin.ok("create", "rolebindings", group=G, namespace="kube-node-lease", body={
        "metadata": {"name": "system:node-lease", "labels": labels},
        "roleRef": {"apiGroup": G, "kind": "Role", "name": "system:node-lease"},
        "subjects": [{"kind": "Group", "apiGroup": G, "name": "system:nodes"}]})
    await admin.ok("create", "clusterroles", group=G, body={"metadata": {"name": "mine", "labels": labels}})
    await api.stop()

    api = APIServer(kv, clock, seed=3)
    await api.start()
    admin = Client(api, api.tokens.issue(UserInfo("admin", ("system:masters",))))
    assert "subjects" not in await admin.ok("get", "clusterrolebindings", group=G, name="system:node")
    for resource in ("roles", "rolebindings"):
        gone = await admin.do("get", resource, group=G, namespace="kube-node-lease", name="system:node-lease")
        assert gone.code == 404
    assert (await admin.do("get", "clusterroles", group=G, name="mine")).code == 200
    worker = node_client(api, "worker-1")
    assert (await worker.do("get", "secrets", namespace="default", name="anything")).code == 403

    kept = await admin.ok("get", "clusterrolebindings", group=G, name="system:node")
    kept["metadata"]["annotations"]["rbac.authorization.kubernetes.io/autoupdate"] = "false"
    kept["subjects"] = [{"kind": "Group", "apiGroup": G, "name": "system:nodes"}]
    await admin.ok("update", "clusterrolebindings", group=G, name="system:node", body=kept)
    await api.stop()
    api = APIServer(kv, clock, seed=3)
    await api.start()
    admin = Client(api, api.tokens.issue(UserInfo("admin", ("system:masters",))))
    assert (await admin.ok("get", "clusterrolebindings", group=G, name="system:node"))["subjects"]
    await api.stop()
    await kv.close()
