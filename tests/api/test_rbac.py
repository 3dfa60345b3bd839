"""RBAC authorizer: upstream's matching rules, denial texts, aggregation, and the bootstrap policy."""

from __future__ import annotations

from typing import Any

import pytest

from kconsole.api.rbac import RBACAuthorizer, bootstrap_objects, forbidden_error, forbidden_reason, static_lister
from kconsole.api.stages import Attributes
from kconsole.api.types import UserInfo

G = "rbac.authorization.k8s.io"


def role(name: str, ns: str, rules: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": f"{G}/v1", "kind": "Role", "metadata": {"name": name, "namespace": ns}, "rules": rules}


def cluster_role(name: str, rules: list[dict[str, Any]], labels: dict[str, str] | None = None,
                 aggregate: str | None = None) -> dict[str, Any]:
    o: dict[str, Any] = {"apiVersion": f"{G}/v1", "kind": "ClusterRole",
                         "metadata": {"name": name, "labels": labels or {}}, "rules": rules}
    if aggregate:
        o["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": {aggregate: "true"}}]}
    return o


def binding(kind: str, name: str, ns: str | None, role_kind: str, role_name: str,
            subjects: list[dict[str, str]]) -> dict[str, Any]:
    meta = {"name": name} | ({"namespace": ns} if ns else {})
    return {"apiVersion": f"{G}/v1", "kind": kind, "metadata": meta,
            "roleRef": {"apiGroup": G, "kind": role_kind, "name": role_name}, "subjects": subjects}


def rule(verbs: list[str], groups: list[str], resources: list[str], names: list[str] | None = None) -> dict[str, Any]:
    r: dict[str, Any] = {"verbs": verbs, "apiGroups": groups, "resources": resources}
    if names:
        r["resourceNames"] = names
    return r


USER = lambda name, *groups: UserInfo(name, tuple(groups) + ("system:authenticated",))  # noqa: E731

POLICY = bootstrap_objects() + [
    role("pod-reader", "dev", [rule(["get", "list"], [""], ["pods", "pods/log"])]),
    binding("RoleBinding", "bob-reads", "dev", "Role", "pod-reader", [{"kind": "User", "name": "bob", "apiGroup": G}]),
    binding("RoleBinding", "team-edit", "team", "ClusterRole", "edit", [{"kind": "Group", "name": "devs", "apiGroup": G}]),
    binding("RoleBinding", "builder", "ci", "ClusterRole", "view", [{"kind": "ServiceAccount", "name": "builder"}]),
    binding("RoleBinding", "all-sa", "ci", "ClusterRole", "config-writer",
            [{"kind": "Group", "name": "system:serviceaccounts:ci", "apiGroup": G}]),
    cluster_role("config-writer", [rule(["update"], [""], ["configmaps"], ["app-config"])]),
    cluster_role("status-any", [rule(["patch"], ["*"], ["*/status"])]),
    binding("ClusterRoleBinding", "statuser", None, "ClusterRole", "status-any", [{"kind": "User", "name": "stat", "apiGroup": G}]),
    cluster_role("metrics", [{"verbs": ["get"], "nonResourceURLs": ["/metrics", "/logs/*"]}]),
    binding("ClusterRoleBinding", "metrics", None, "ClusterRole", "metrics", [{"kind": "User", "name": "prom", "apiGroup": G}]),
    cluster_role("widgets-view", [rule(["get", "list"], ["example.com"], ["widgets"])],
                 labels={"rbac.authorization.k8s.io/aggregate-to-view": "true"}),
    binding("ClusterRoleBinding", "viewer", None, "ClusterRole", "view", [{"kind": "User", "name": "vera", "apiGroup": G}]),
    binding("RoleBinding", "dangling", "dev", "ClusterRole", "no-such-role", [{"kind": "User", "name": "dan", "apiGroup": G}]),
]


@pytest.fixture(scope="module")
def authz() -> RBACAuthorizer:
    return RBACAuthorizer(static_lister(POLICY))


def A(user: UserInfo, verb: str, resource: str = "", ns: str = "", name: str = "", group: str = "",
      sub: str = "", path: str = "") -> Attributes:
    if path:
        return Attributes(user=user, verb=verb, resource_request=False, path=path)
    return Attributes(user=user, verb=verb, group=group, version="v1", resource=resource, subresource=sub,
                      namespace=ns, name=name)


CASES = [
    # (attrs, allowed)
    (A(USER("root", "system:masters"), "delete", "nodes", name="n1"), True),
    (A(USER("bob"), "get", "pods", "dev", "web"), True),
    (A(USER("bob"), "get", "pods", "dev", "web", sub="log"), True),
    (A(USER("bob"), "get", "pods", "dev", "web", sub="exec"), False),
    (A(USER("bob"), "get", "pods", "prod", "web"), False),
    (A(USER("bob"), "list", "pods", ""), False),
    (A(USER("bob"), "delete", "pods", "dev", "web"), False),
    (A(USER("eve", "devs"), "create", "deployments", "team", group="apps"), True),
    (A(USER("eve", "devs"), "create", "deployments", "other", group="apps"), False),
    (A(USER("eve", "devs"), "get", "secrets", "team"), True),
    (A(USER("eve", "devs"), "create", "rolebindings", "team", group=G), False),
    (A(USER("system:serviceaccount:ci:builder", "system:serviceaccounts", "system:serviceaccounts:ci"),
       "list", "pods", "ci"), True),
    (A(USER("system:serviceaccount:ci:other", "system:serviceaccounts", "system:serviceaccounts:ci"),
       "list", "pods", "ci"), False),
    (A(USER("system:serviceaccount:ci:other", "system:serviceaccounts", "system:serviceaccounts:ci"),
       "update", "configmaps", "ci", "app-config"), True),
    (A(USER("system:serviceaccount:ci:other", "system:serviceaccounts", "system:serviceaccounts:ci"),
       "update", "configmaps", "ci", "other-config"), False),
    (A(USER("system:serviceaccount:ci:other", "system:serviceaccounts", "system:serviceaccounts:ci"),
       "update", "configmaps", "ci"), False),
    (A(USER("stat"), "patch", "deployments", "x", "d", group="apps", sub="status"), True),
    (A(USER("stat"), "patch", "deployments", "x", "d", group="apps"), False),
    (A(USER("prom"), "get", path="/metrics"), True),
    (A(USER("prom"), "get", path="/logs/kubelet"), True),
    (A(USER("prom"), "get", path="/metricsx"), False),
    (A(USER("prom"), "post", path="/metrics"), False),
    (A(USER("anyone"), "get", path="/version"), True),
    (A(USER("anyone"), "get", path="/apis/apps/v1"), True),
    (A(USER("anyone"), "get", path="/metrics"), False),
    (A(USER("anyone"), "create", "selfsubjectaccessreviews", group="authorization.k8s.io"), True),
    (A(USER("vera"), "list", "widgets", "any", group="example.com"), True),
    (A(USER("vera"), "list", "deployments", "any", group="apps"), True),
    (A(USER("vera"), "get", "secrets", "any", "s"), False),
    (A(USER("vera"), "delete", "pods", "any", "p"), False),
    (A(USER("vera"), "update", "deployments", "any", "d", group="apps", sub="scale"), False),
]


@pytest.mark.parametrize(("attrs", "allowed"), CASES, ids=[f"{a.user.name}-{a.verb}-{a.resource or a.path}"
                                                           f"{'/' + a.subresource if a.subresource else ''}-{i}"
                                                           for i, (a, _) in enumerate(CASES)])
def test_decisions(authz: RBACAuthorizer, attrs: Attributes, allowed: bool) -> None:
    assert authz.authorize(attrs)[0] is allowed


def test_allowed_reason_names_the_binding(authz: RBACAuthorizer) -> None:
    ok, reason = authz.authorize(A(USER("bob"), "get", "pods", "dev", "web"))
    assert ok
    assert reason == 'RBAC: allowed by RoleBinding "bob-reads/dev" of Role "pod-reader" to User "bob"'


def test_missing_role_is_reported_on_denial(authz: RBACAuthorizer) -> None:
    ok, reason = authz.authorize(A(USER("dan"), "get", "pods", "dev", "x"))
    assert not ok
    assert reason == 'RBAC: clusterrole.rbac.authorization.k8s.io "no-such-role" not found'


def test_forbidden_texts_are_upstreams() -> None:
    bob = USER("bob")
    assert forbidden_reason(A(bob, "create", "pods", "default")) == (
        'User "bob" cannot create resource "pods" in API group "" in the namespace "default"')
    assert forbidden_reason(A(bob, "list", "nodes")) == (
        'User "bob" cannot list resource "nodes" in API group "" at the cluster scope')
    assert forbidden_reason(A(bob, "get", "pods", "default", "foo", sub="log")) == (
        'User "bob" cannot get resource "pods/log" in API group "" in the namespace "default"')
    err = forbidden_error(A(bob, "get", "pods", "default", "foo", sub="log"))
    assert err.code == 403 and err.reason == "Forbidden"
    assert err.message == ('pods "foo" is forbidden: User "bob" cannot get resource "pods/log" in API group "" '
                           'in the namespace "default"')
    err = forbidden_error(A(bob, "delete", "deployments", "prod", group="apps"))
    assert err.message == ('deployments.apps is forbidden: User "bob" cannot delete resource "deployments" in API '
                           'group "apps" in the namespace "prod"')
    err = forbidden_error(A(bob, "get", path="/metrics"))
    assert err.message == 'forbidden: User "bob" cannot get path "/metrics"'


class CountingLister:
    """A lister whose objects can change, counting how often the authorizer reads the objects."""

    def __init__(self, objects: list[dict[str, Any]]) -> None:
        self.objects = objects
        self.revision = 1
        self.reads = 0

    def __call__(self, resource: str) -> tuple[int, list[dict[str, Any]]]:
        kind = {"roles": "Role", "rolebindings": "RoleBinding", "clusterroles": "ClusterRole",
                "clusterrolebindings": "ClusterRoleBinding"}[resource]
        rev = self.revision

        def items() -> Any:
            self.reads += 1
            return iter([o for o in self.objects if o["kind"] == kind])

        return rev, _Lazy(items)


class _Lazy:
    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def __iter__(self) -> Any:
        return self.fn()


def test_indexes_rebuild_only_when_revision_changes() -> None:
    lister = CountingLister([role("r", "dev", [rule(["get"], [""], ["pods"])])])
    authz = RBACAuthorizer(lister)
    carol = USER("carol")
    for _ in range(50):
        assert not authz.authorize(A(carol, "get", "pods", "dev", "x"))[0]
    assert lister.reads == 4
    lister.objects.append(binding("RoleBinding", "b", "dev", "Role", "r", [{"kind": "User", "name": "carol"}]))
    assert not authz.authorize(A(carol, "get", "pods", "dev", "x"))[0]  # same revision: cached decision
    lister.revision = 2
    assert authz.authorize(A(carol, "get", "pods", "dev", "x"))[0]
    assert lister.reads == 8


# --------------------------------------------------------------------------- bootstrap roles


def test_scheduler_can_bind_but_not_delete_deployments(authz: RBACAuthorizer) -> None:
    sched = USER("system:kube-scheduler")
    assert authz.authorize(A(sched, "create", "pods", "default", "p", sub="binding"))[0]
    assert authz.authorize(A(sched, "patch", "pods", "default", "p", sub="status"))[0]
    assert authz.authorize(A(sched, "watch", "nodes"))[0]
    assert authz.authorize(A(sched, "create", "schedulingdecisions", "default", group="kconsole.dev"))[0]
    assert authz.authorize(A(sched, "update", "leases", "kube-system", "kube-scheduler", group="coordination.k8s.io"))[0]
    assert not authz.authorize(A(sched, "update", "leases", "default", "x", group="coordination.k8s.io"))[0]
    assert not authz.authorize(A(sched, "delete", "deployments", "default", "web", group="apps"))[0]
    assert not authz.authorize(A(sched, "update", "pods", "default", "p"))[0]


def test_rbac_binds_nothing_to_nodes_the_node_authorizer_decides(authz: RBACAuthorizer) -> None:
    """Upstream's bootstrap binding system:node has no subjects (kubeadm binds none either): RBAC
    alone lets a node do nothing of a kubelet's; tests/api/test_node_authorizer.py has the rest."""
    node = USER("system:node:n1", "system:nodes")
    assert not authz.authorize(A(node, "update", "nodes", name="n1", sub="status"))[0]
    assert not authz.authorize(A(node, "get", "secrets", "default", "s"))[0]
    assert not authz.authorize(A(node, "update", "leases", "kube-node-lease", "n1", group="coordination.k8s.io"))[0]
    binding = next(o for o in bootstrap_objects() if o["kind"] == "ClusterRoleBinding"
                   and o["metadata"]["name"] == "system:node")
    assert "subjects" not in binding


def test_view_reads_but_never_secrets_or_writes(authz: RBACAuthorizer) -> None:
    vera = USER("vera")
    for res, group in (("pods", ""), ("services", ""), ("deployments", "apps"), ("jobs", "batch"),
                       ("poddisruptionbudgets", "policy")):
        assert authz.authorize(A(vera, "list", res, "default", group=group))[0]
    assert not authz.authorize(A(vera, "get", "secrets", "default", "s"))[0]
    assert not authz.authorize(A(vera, "list", "secrets", "default"))[0]
    for verb in ("create", "update", "patch", "delete", "deletecollection"):
        assert not authz.authorize(A(vera, verb, "pods", "default", "p"))[0]
        assert not authz.authorize(A(vera, verb, "deployments", "default", "d", group="apps"))[0]


def test_controller_manager_console_and_sync(authz: RBACAuthorizer) -> None:
    kcm = USER("system:kube-controller-manager")
    assert authz.authorize(A(kcm, "create", "pods", "default"))[0]
    assert authz.authorize(A(kcm, "update", "deployments", "default", "d", group="apps", sub="status"))[0]
    assert authz.authorize(A(kcm, "deletecollection", "rolebindings", "gone", group=G))[0]
    assert not authz.authorize(A(kcm, "create", "clusterrolebindings", group=G))[0]
    console = USER("system:kconsole-console")
    assert authz.authorize(A(console, "watch", "events", "default"))[0]
    assert authz.authorize(A(console, "get", "secrets", "default", "s"))[0]
    assert authz.authorize(A(console, "delete", "pods", "default", "p"))[0]
    assert authz.authorize(A(console, "patch", "nodes", name="n1"))[0]
    assert authz.authorize(A(console, "create", "pods", "default", "p", sub="eviction"))[0]
    assert not authz.authorize(A(console, "delete", "deployments", "default", "d", group="apps"))[0]
    sync = USER("system:kconsole-sync")
    assert authz.authorize(A(sync, "create", "clusterroles", group=G))[0]
    assert authz.authorize(A(sync, "delete", "namespaces", name="x"))[0]


def test_rules_for_lists_what_a_user_may_do(authz: RBACAuthorizer) -> None:
    resource_rules, url_rules = authz.rules_for(USER("bob"), "dev")
    assert {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods", "pods/log"]} in resource_rules
    assert any("/version" in r["nonResourceURLs"] for r in url_rules)
    assert not any(r["resources"] == ["pods", "pods/log"] for r in authz.rules_for(USER("bob"), "prod")[0])


def test_bootstrap_objects_are_fresh_copies() -> None:
    a = bootstrap_objects()
    a[0]["rules"].clear()
    assert bootstrap_objects()[0]["rules"]
    names = [(o["kind"], o["metadata"]["name"]) for o in a]
    assert len(names) == len(set(names))
    assert ("ClusterRoleBinding", "cluster-admin") in names
