"""Authorization: upstream's RBAC authorizer over Roles, ClusterRoles and their bindings.

Runs on every request, so the bindings are compiled into per-subject indexes once per change of
the RBAC objects (the lister's revisions), and each user's grants (cluster-wide and per namespace)
are resolved once per user and revision: a decision then walks only the rules bound to this user.

The system:masters group is allowed everything before RBAC is consulted, as upstream's
privileged-group authorizer does. ClusterRoles with an ``aggregationRule`` get the union of the
rules of the ClusterRoles their selectors match, computed here rather than by a controller, so a
user's ClusterRole labelled ``rbac.authorization.k8s.io/aggregate-to-view: "true"`` extends view
at once. The bootstrap policy (:func:`bootstrap_objects`) lives at the end of this module.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kconsole.api.stages import Attributes, RBACLister
from kconsole.api.types import StatusError, UserInfo, status_body

RBAC_GROUP = "rbac.authorization.k8s.io"
MASTERS = "system:masters"
RBAC_RESOURCES = ("clusterroles", "clusterrolebindings", "roles", "rolebindings")
#: Cached per-user grant sets before the cache is dropped (bounded memory with many users).
USER_CACHE_LIMIT = 4096

Obj = dict[str, Any]


# --------------------------------------------------------------------------- compiled rules


@dataclass(frozen=True, slots=True)
class CompiledRule:
    """One PolicyRule, with set lookups instead of list scans."""

    verbs: frozenset[str]
    groups: frozenset[str]
    resources: frozenset[str]
    sub_wildcards: frozenset[str]  # "*/status" -> "status"
    names: frozenset[str]
    urls: tuple[str, ...]
    url_prefixes: tuple[str, ...]
    source: Obj

    @classmethod
    def compile(cls, rule: Obj) -> CompiledRule:
        resources = frozenset(rule.get("resources") or ())
        urls = tuple(rule.get("nonResourceURLs") or ())
        return cls(
            verbs=frozenset(rule.get("verbs") or ()),
            groups=frozenset(rule.get("apiGroups") or ()),
            resources=resources,
            sub_wildcards=frozenset(r[2:] for r in resources if r.startswith("*/") and len(r) > 2),
            names=frozenset(rule.get("resourceNames") or ()),
            urls=urls,
            url_prefixes=tuple(u[:-1] for u in urls if u.endswith("*")),
            source=rule,
        )

    def allows(self, attrs: Attributes, combined: str) -> bool:
        verbs = self.verbs
        if attrs.verb not in verbs and "*" not in verbs:
            return False
        if not attrs.resource_request:
            path = attrs.path
            return "*" in self.urls or path in self.urls or any(path.startswith(p) for p in self.url_prefixes)
        groups = self.groups
        if attrs.group not in groups and "*" not in groups:
            return False
        resources = self.resources
        if combined not in resources and "*" not in resources:
            if not attrs.subresource or attrs.subresource not in self.sub_wildcards:
                return False
        return not self.names or attrs.name in self.names


@dataclass(frozen=True, slots=True)
class Grant:
    """The rules one binding gives one subject, and how upstream describes it."""

    rules: tuple[CompiledRule, ...]
    description: str  # 'ClusterRoleBinding "x" of ClusterRole "y" to User "z"'
    error: str = ""  # the referenced role does not exist


@dataclass(slots=True)
class UserGrants:
    cluster: list[Grant]
    by_namespace: dict[str, list[Grant]]


@dataclass(frozen=True, slots=True)
class _Binding:
    kind: str  # ClusterRoleBinding | RoleBinding
    namespace: str  # "" for ClusterRoleBindings
    name: str
    role_kind: str
    role_name: str
    subject_kind: str
    subject_name: str


# --------------------------------------------------------------------------- selectors


def selector_matches(selector: Obj | None, labels: dict[str, str]) -> bool:
    """metav1.LabelSelector semantics; an empty selector matches everything, None nothing."""
    if selector is None:
        return False
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or ():
        key, op, values = expr.get("key", ""), expr.get("operator", ""), expr.get("values") or ()
        if op == "In":
            if labels.get(key) not in values:
                return False
        elif op == "NotIn":
            if key in labels and labels[key] in values:
                return False
        elif op == "Exists":
            if key not in labels:
                return False
        elif op == "DoesNotExist":
            if key in labels:
                return False
        else:
            return False
    return True


# --------------------------------------------------------------------------- the authorizer


class RBACAuthorizer:
    """Upstream RBAC: bindings grant their role's rules to their subjects (cluster-wide or in one namespace)."""

    def __init__(self, lister: RBACLister) -> None:
        self._lister = lister
        self._revisions: tuple[int, ...] | None = None
        self._by_user: dict[str, list[_Binding]] = {}
        self._by_group: dict[str, list[_Binding]] = {}
        self._cluster_roles: dict[str, tuple[CompiledRule, ...]] = {}
        self._roles: dict[tuple[str, str], tuple[CompiledRule, ...]] = {}
        self._user_cache: dict[tuple[str, tuple[str, ...]], UserGrants] = {}

    # ----------------------------------------------------------------- index maintenance

    def _refresh(self) -> None:
        listed = [self._lister(resource) for resource in RBAC_RESOURCES]
        revisions = tuple(rev for rev, _ in listed)
        if revisions == self._revisions:
            return
        objects = {resource: list(items) for resource, (_, items) in zip(RBAC_RESOURCES, listed)}
        self._rebuild(objects)
        self._revisions = revisions

    def _rebuild(self, objects: dict[str, list[Obj]]) -> None:
        cluster_roles = {_name(o): o for o in objects["clusterroles"]}
        self._cluster_roles = {name: tuple(CompiledRule.compile(r) for r in rules)
                               for name, rules in aggregate_cluster_roles(cluster_roles).items()}
        self._roles = {
            (_namespace(o), _name(o)): tuple(CompiledRule.compile(r) for r in o.get("rules") or ())
            for o in objects["roles"]
        }
        by_user: dict[str, list[_Binding]] = {}
        by_group: dict[str, list[_Binding]] = {}
        for kind, items in (("ClusterRoleBinding", objects["clusterrolebindings"]),
                            ("RoleBinding", objects["rolebindings"])):
            for binding in items:
                ns = _namespace(binding) if kind == "RoleBinding" else ""
                ref = binding.get("roleRef") or {}
                for subject in binding.get("subjects") or ():
                    skind = subject.get("kind", "")
                    sname = subject.get("name", "")
                    if skind == "ServiceAccount":
                        sa_ns = subject.get("namespace") or ns
                        if not sa_ns:
                            continue
                        key, index = f"system:serviceaccount:{sa_ns}:{sname}", by_user
                    elif skind == "User":
                        key, index = sname, by_user
                    elif skind == "Group":
                        key, index = sname, by_group
                    else:
                        continue
                    index.setdefault(key, []).append(_Binding(
                        kind, ns, _name(binding), ref.get("kind", ""), ref.get("name", ""), skind, sname))
        self._by_user, self._by_group = by_user, by_group
        self._user_cache = {}

    def _grants_for(self, user: UserInfo) -> UserGrants:
        key = (user.name, user.groups)
        cached = self._user_cache.get(key)
        if cached is not None:
            return cached
        grants = UserGrants(cluster=[], by_namespace={})
        bindings = list(self._by_user.get(user.name, ()))
        for group in user.groups:
            bindings.extend(self._by_group.get(group, ()))
        for b in bindings:
            grant = self._grant(b)
            if b.kind == "ClusterRoleBinding":
                grants.cluster.append(grant)
            else:
                grants.by_namespace.setdefault(b.namespace, []).append(grant)
        if len(self._user_cache) >= USER_CACHE_LIMIT:
            self._user_cache.clear()
        self._user_cache[key] = grants
        return grants

    def _grant(self, b: _Binding) -> Grant:
        binding = f'{b.kind} "{b.name}"' if b.kind == "ClusterRoleBinding" else f'{b.kind} "{b.name}/{b.namespace}"'
        if b.role_kind == "ClusterRole":
            rules = self._cluster_roles.get(b.role_name)
            role = f'ClusterRole "{b.role_name}"'
            missing = f'clusterrole.rbac.authorization.k8s.io "{b.role_name}" not found'
        elif b.role_kind == "Role" and b.kind == "RoleBinding":
            rules = self._roles.get((b.namespace, b.role_name))
            role = f'Role "{b.role_name}"'
            missing = f'role.rbac.authorization.k8s.io "{b.role_name}" not found'
        else:
            rules = None
            role = f'{b.role_kind} "{b.role_name}"'
            missing = f'unsupported role reference kind: "{b.role_kind}"'
        description = f'{binding} of {role} to {b.subject_kind} "{b.subject_name}"'
        if rules is None:
            return Grant((), description, missing)
        return Grant(rules, description)

    # ----------------------------------------------------------------- decisions

    def authorize(self, attrs: Attributes) -> tuple[bool, str]:
        """(allowed, reason): upstream's 'RBAC: allowed by ...' or, on denial, missing-role errors."""
        if MASTERS in attrs.user.groups:
            return True, ""
        self._refresh()
        grants = self._grants_for(attrs.user)
        combined = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
        errors: list[str] = []
        scopes: list[list[Grant]] = [grants.cluster]
        if attrs.namespace and attrs.resource_request:
            scopes.append(grants.by_namespace.get(attrs.namespace, []))
        for scope in scopes:
            for grant in scope:
                if grant.error:
                    errors.append(grant.error)
                    continue
                for rule in grant.rules:
                    if rule.allows(attrs, combined):
                        return True, f"RBAC: allowed by {grant.description}"
        if not errors:
            return False, ""
        return False, "RBAC: " + (errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")

    def rules_for(self, user: UserInfo, namespace: str) -> tuple[list[Obj], list[Obj]]:
        """(resourceRules, nonResourceRules) the user has in ``namespace``, as SelfSubjectRulesReview shows."""
        if MASTERS in user.groups:
            return ([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                    [{"verbs": ["*"], "nonResourceURLs": ["*"]}])
        self._refresh()
        grants = self._grants_for(user)
        resource_rules: list[Obj] = []
        non_resource_rules: list[Obj] = []
        for grant in grants.cluster + grants.by_namespace.get(namespace, []):
            for rule in grant.rules:
                src = rule.source
                if src.get("resources"):
                    out = {"verbs": list(src.get("verbs") or ()), "apiGroups": list(src.get("apiGroups") or ()),
                           "resources": list(src.get("resources") or ())}
                    if src.get("resourceNames"):
                        out["resourceNames"] = list(src["resourceNames"])
                    resource_rules.append(out)
                if src.get("nonResourceURLs") and grant in grants.cluster:
                    non_resource_rules.append({"verbs": list(src.get("verbs") or ()),
                                               "nonResourceURLs": list(src["nonResourceURLs"])})
        return resource_rules, non_resource_rules


def aggregate_cluster_roles(cluster_roles: dict[str, Obj]) -> dict[str, list[Obj]]:
    """Effective rules per ClusterRole: aggregated roles get the union of what their selectors pick."""
    effective: dict[str, list[Obj]] = {}

    def resolve(name: str, visiting: frozenset[str]) -> list[Obj]:
        if name in effective:
            return effective[name]
        role = cluster_roles[name]
        agg = role.get("aggregationRule")
        if not agg:
            effective[name] = list(role.get("rules") or ())
            return effective[name]
        selectors = agg.get("clusterRoleSelectors") or ()
        rules: list[Obj] = []
        for other_name in sorted(cluster_roles):
            if other_name == name or other_name in visiting:
                continue
            labels = (cluster_roles[other_name].get("metadata") or {}).get("labels") or {}
            if any(selector_matches(sel, labels) for sel in selectors):
                for rule in resolve(other_name, visiting | {name}):
                    if rule not in rules:
                        rules.append(rule)
        effective[name] = rules
        return rules

    for name in cluster_roles:
        resolve(name, frozenset())
    return effective


def _name(o: Obj) -> str:
    return (o.get("metadata") or {}).get("name") or ""


def _namespace(o: Obj) -> str:
    return (o.get("metadata") or {}).get("namespace") or ""


# --------------------------------------------------------------------------- messages


def forbidden_reason(attrs: Attributes) -> str:
    """Upstream's denial text (without the 'pods "foo" is forbidden: ' prefix)."""
    user = attrs.user.name
    if not attrs.resource_request:
        return f'User "{user}" cannot {attrs.verb} path "{attrs.path}"'
    resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    if attrs.namespace:
        return (f'User "{user}" cannot {attrs.verb} resource "{resource}" in API group "{attrs.group}" '
                f'in the namespace "{attrs.namespace}"')
    return f'User "{user}" cannot {attrs.verb} resource "{resource}" in API group "{attrs.group}" at the cluster scope'


def forbidden_error(attrs: Attributes, reason: str = "") -> StatusError:
    """The whole 403 as upstream's apiserver writes it, including non-resource paths."""
    why = forbidden_reason(attrs)
    if reason:
        why = f"{why}: {reason}"
    if not attrs.resource_request:
        return StatusError(status_body(403, "Forbidden", f"forbidden: {why}"))
    gr = f"{attrs.resource}.{attrs.group}" if attrs.group else attrs.resource
    return StatusError.forbidden(gr, attrs.name or None, why, group=attrs.group)


# --------------------------------------------------------------------------- bootstrap policy

READ = ["get", "list", "watch"]
WRITE = ["create", "update", "patch", "delete", "deletecollection"]
READ_WRITE = READ + WRITE
BOOTSTRAP_LABELS = {"kubernetes.io/bootstrapping": "rbac-defaults"}
AUTOUPDATE = {"rbac.authorization.kubernetes.io/autoupdate": "true"}
KCONSOLE_GROUP = "kconsole.dev"
#: Every group the API server serves besides RBAC: what the controller-manager may write.
WORKLOAD_GROUPS = ["", "apps", "batch", "policy", "autoscaling", "coordination.k8s.io", "discovery.k8s.io",
                   "events.k8s.io", "scheduling.k8s.io", "networking.k8s.io", "storage.k8s.io", KCONSOLE_GROUP]


def rule(verbs: list[str], groups: list[str], resources: list[str], names: list[str] | None = None) -> Obj:
    out: Obj = {"verbs": list(verbs), "apiGroups": list(groups), "resources": list(resources)}
    if names:
        out["resourceNames"] = list(names)
    return out


def url_rule(verbs: list[str], urls: list[str]) -> Obj:
    return {"verbs": list(verbs), "nonResourceURLs": list(urls)}


def _meta(name: str, namespace: str | None = None, labels: dict[str, str] | None = None) -> Obj:
    meta: Obj = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    meta["labels"] = {**BOOTSTRAP_LABELS, **(labels or {})}
    meta["annotations"] = dict(AUTOUPDATE)
    return meta


def cluster_role(name: str, rules: list[Obj], labels: dict[str, str] | None = None,
                 aggregate_from: list[str] | None = None) -> Obj:
    role: Obj = {"apiVersion": f"{RBAC_GROUP}/v1", "kind": "ClusterRole", "metadata": _meta(name, labels=labels)}
    if aggregate_from:
        role["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": {label: "true"}}
                                                            for label in aggregate_from]}
    role["rules"] = rules
    return role


def _subject(kind: str, name: str) -> Obj:
    return {"kind": kind, "apiGroup": RBAC_GROUP, "name": name}


def cluster_role_binding(name: str, role: str, subjects: list[tuple[str, str]]) -> Obj:
    """A binding; one without subjects has none (omitted, as upstream's system:node binding)."""
    binding: Obj = {"apiVersion": f"{RBAC_GROUP}/v1", "kind": "ClusterRoleBinding", "metadata": _meta(name),
                    "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": role}}
    if subjects:
        binding["subjects"] = [_subject(k, n) for k, n in subjects]
    return binding


def namespaced_role(name: str, namespace: str, rules: list[Obj]) -> Obj:
    return {"apiVersion": f"{RBAC_GROUP}/v1", "kind": "Role", "metadata": _meta(name, namespace), "rules": rules}


def role_binding(name: str, namespace: str, role: str, subjects: list[tuple[str, str]]) -> Obj:
    return {"apiVersion": f"{RBAC_GROUP}/v1", "kind": "RoleBinding", "metadata": _meta(name, namespace),
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "Role", "name": role},
            "subjects": [_subject(k, n) for k, n in subjects]}


AGG_ADMIN = "rbac.authorization.k8s.io/aggregate-to-admin"
AGG_EDIT = "rbac.authorization.k8s.io/aggregate-to-edit"
AGG_VIEW = "rbac.authorization.k8s.io/aggregate-to-view"

_VIEW_RULES = [
    rule(READ, [""], ["pods", "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts",
                      "services", "services/status", "endpoints", "persistentvolumeclaims",
                      "persistentvolumeclaims/status", "configmaps"]),
    rule(READ, [""], ["limitranges", "resourcequotas", "bindings", "events", "pods/status",
                      "resourcequotas/status", "namespaces/status", "replicationcontrollers/status", "pods/log"]),
    rule(READ, [""], ["namespaces"]),
    rule(READ, ["discovery.k8s.io"], ["endpointslices"]),
    rule(READ, ["apps"], ["controllerrevisions", "statefulsets", "statefulsets/scale", "statefulsets/status",
                          "daemonsets", "daemonsets/status", "deployments", "deployments/scale",
                          "deployments/status", "replicasets", "replicasets/scale", "replicasets/status"]),
    rule(READ, ["autoscaling"], ["horizontalpodautoscalers", "horizontalpodautoscalers/status"]),
    rule(READ, ["batch"], ["jobs", "cronjobs", "cronjobs/status", "jobs/status"]),
    rule(READ, ["policy"], ["poddisruptionbudgets", "poddisruptionbudgets/status"]),
    rule(READ, ["networking.k8s.io"], ["networkpolicies", "ingresses", "ingresses/status"]),
    rule(READ, ["metrics.k8s.io"], ["pods", "nodes"]),  # system:aggregated-metrics-reader
    rule(READ, [KCONSOLE_GROUP], ["schedulingdecisions"]),
]

_EDIT_RULES = [
    rule(READ, [""], ["pods/attach", "pods/proxy", "pods/exec", "pods/portforward", "secrets", "services/proxy"]),
    rule(["impersonate"], [""], ["serviceaccounts"]),
    rule(WRITE, [""], ["pods", "pods/attach", "pods/proxy", "pods/exec", "pods/portforward"]),
    rule(["create"], [""], ["pods/eviction"]),
    rule(WRITE, [""], ["replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts", "services",
                       "services/proxy", "persistentvolumeclaims", "configmaps", "secrets", "events"]),
    rule(["create"], [""], ["serviceaccounts/token"]),
    rule(WRITE, ["apps"], ["statefulsets", "statefulsets/scale", "daemonsets", "deployments", "deployments/scale",
                           "deployments/rollback", "replicasets", "replicasets/scale"]),
    rule(WRITE, ["autoscaling"], ["horizontalpodautoscalers"]),
    rule(WRITE, ["batch"], ["jobs", "cronjobs"]),
    rule(WRITE, ["policy"], ["poddisruptionbudgets"]),
    rule(WRITE, ["networking.k8s.io"], ["networkpolicies", "ingresses"]),
    rule(READ_WRITE, ["coordination.k8s.io"], ["leases"]),
]

_ADMIN_RULES = [
    rule(["create"], ["authorization.k8s.io"], ["localsubjectaccessreviews"]),
    rule(READ_WRITE, [RBAC_GROUP], ["roles", "rolebindings"]),
]

_EVENTS = rule(["create", "update", "patch"], ["", "events.k8s.io"], ["events"])

_SCHEDULER_RULES = [
    _EVENTS,
    rule(READ, [""], ["nodes"]),
    rule(["get", "list", "watch", "delete"], [""], ["pods"]),
    rule(["create"], [""], ["pods/binding", "bindings"]),
    rule(["patch", "update"], [""], ["pods/status"]),
    rule(READ, [""], ["services", "replicationcontrollers", "namespaces", "persistentvolumeclaims",
                      "persistentvolumes"]),
    rule(READ, ["apps"], ["replicasets", "statefulsets"]),
    rule(READ, ["policy"], ["poddisruptionbudgets"]),
    rule(READ, ["scheduling.k8s.io"], ["priorityclasses"]),
    rule(READ, ["storage.k8s.io"], ["csinodes", "csidrivers", "csistoragecapacities"]),
    rule(["create"], ["authentication.k8s.io"], ["tokenreviews"]),
    rule(["create"], ["authorization.k8s.io"], ["subjectaccessreviews"]),
    rule(READ_WRITE, [KCONSOLE_GROUP], ["schedulingdecisions"]),
]

#: Upstream's system:volume-scheduler, bound to the scheduler: VolumeBinding's PreBind writes volumes'
#: claimRefs and claims' selected-node annotations.
_VOLUME_SCHEDULER_RULES = [
    rule(["get", "list", "watch", "patch", "update"], [""], ["persistentvolumes", "persistentvolumeclaims"]),
    rule(READ, ["storage.k8s.io"], ["storageclasses"]),
]

#: Upstream splits this over one service account per controller; kconsole runs every controller as one
#: user, so the role is their union: read everything, write every non-RBAC group, delete anything
#: (the namespace controller empties namespaces, RBAC objects included), and update ClusterRoles
#: (the aggregation controller).
_CONTROLLER_MANAGER_RULES = [
    rule(READ, ["*"], ["*"]),
    rule(["delete", "deletecollection"], ["*"], ["*"]),
    rule(["create", "update", "patch"], WORKLOAD_GROUPS, ["*"]),
    rule(["update", "patch"], [RBAC_GROUP], ["clusterroles"]),
    rule(["update", "patch"], ["certificates.k8s.io"], ["certificatesigningrequests/status"]),
    rule(["create"], ["authentication.k8s.io"], ["tokenreviews"]),
    rule(["create"], ["authorization.k8s.io"], ["subjectaccessreviews"]),
]

#: Upstream's NodeRules (v1.32): the ClusterRole ``system:node`` and the Node authorizer's rules for
#: what it does not subdivide itself. No group is bound to the role (as upstream since v1.8 and on
#: kubeadm clusters): nodes get these only through the Node authorizer, which narrows Secrets,
#: ConfigMaps, claims, volumes, tokens, Leases, Nodes and Pods to what belongs to the node, and
#: NodeRestriction admission narrows the writes.
NODE_RULES = [
    rule(["create"], ["authentication.k8s.io"], ["tokenreviews"]),
    rule(["create"], ["authorization.k8s.io"], ["subjectaccessreviews", "localsubjectaccessreviews"]),
    rule(READ, [""], ["services"]),
    rule(["create", "get", "list", "watch"], [""], ["nodes"]),
    rule(["update", "patch"], [""], ["nodes/status"]),
    rule(["update", "patch"], [""], ["nodes"]),
    rule(["create", "update", "patch"], [""], ["events"]),
    rule(READ, [""], ["pods"]),
    rule(["create", "delete"], [""], ["pods"]),
    rule(["update", "patch"], [""], ["pods/status"]),
    rule(["create"], [""], ["pods/eviction"]),
    rule(["get", "list", "watch"], [""], ["secrets", "configmaps"]),
    rule(["get"], [""], ["persistentvolumeclaims", "persistentvolumes"]),
    rule(["get"], [""], ["endpoints"]),
    rule(["create", "get", "list", "watch"], ["certificates.k8s.io"], ["certificatesigningrequests"]),
    rule(["get", "create", "update", "patch", "delete"], ["coordination.k8s.io"], ["leases"]),
    rule(["get"], ["storage.k8s.io"], ["volumeattachments"]),
    rule(["create"], [""], ["serviceaccounts/token"]),
    rule(["get", "update", "patch"], [""], ["persistentvolumeclaims/status"]),
    rule(["get", "watch", "list"], ["storage.k8s.io"], ["csidrivers"]),
    rule(["get", "create", "update", "patch", "delete"], ["storage.k8s.io"], ["csinodes"]),
    rule(["get", "list", "watch"], ["node.k8s.io"], ["runtimeclasses"]),
]

#: kconsole's node fleet reads pods, Nodes, Services and EndpointSlices, and the objects its pods
#: name, through one set of shared watches standing in for each kubelet's and kube-proxy's own
#: (see kconsole.nodes.fleet); they act as this component user, never as a node.
NODE_AGENTS = "system:kconsole-node-agents"
_NODE_AGENT_RULES = [
    rule(READ, [""], ["pods", "nodes", "services", "configmaps", "secrets", "persistentvolumeclaims"]),
    rule(READ, ["discovery.k8s.io"], ["endpointslices"]),
]

_LEADER_LEASE_RULES = [rule(["get", "list", "watch", "create", "update", "patch"],
                            ["coordination.k8s.io"], ["leases"])]

#: What a kube-proxy reads and writes (upstream's bootstrap role; kubeadm binds its account to it).
_NODE_PROXIER_RULES = [
    rule(["list", "watch"], [""], ["endpoints", "services"]),
    rule(["get", "list", "watch"], [""], ["nodes"]),
    rule(["create", "patch", "update"], ["", "events.k8s.io"], ["events"]),
    rule(["list", "watch"], ["discovery.k8s.io"], ["endpointslices"]),
]

_CONSOLE_RULES = [
    rule(READ, ["*"], ["*"]),
    url_rule(["get"], ["*"]),
    rule(["delete"], [""], ["pods"]),
    rule(["patch", "update"], [""], ["nodes"]),
    rule(["create"], [""], ["pods/eviction"]),
    rule(["create", "update", "patch"], ["", "events.k8s.io"], ["events"]),
    rule(["create"], ["history.kconsole.io"], ["historyqueries"]),
]

_DISCOVERY_URLS = ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*",
                   "/readyz", "/version", "/version/"]
_PUBLIC_URLS = ["/healthz", "/livez", "/readyz", "/version", "/version/"]
_ISSUER_DISCOVERY_URLS = ["/.well-known/openid-configuration", "/.well-known/openid-configuration/",
                          "/openid/v1/jwks", "/openid/v1/jwks/"]
_MONITORING_URLS = ["/metrics", "/metrics/slis", "/livez", "/readyz", "/healthz", "/livez/*", "/readyz/*",
                    "/healthz/*"]


def bootstrap_objects() -> list[Obj]:
    """The ClusterRoles, Roles and bindings created at first start (upstream's bootstrap policy,
    plus kconsole's own component users). Roles in kube-system come last, so
    a caller creating objects in order has the namespaces' turn before them."""
    admin_rules = _ADMIN_RULES + _EDIT_RULES + _VIEW_RULES
    edit_rules = _EDIT_RULES + _VIEW_RULES
    objects: list[Obj] = [
        cluster_role("cluster-admin", [rule(["*"], ["*"], ["*"]), url_rule(["*"], ["*"])]),
        cluster_role("admin", admin_rules, aggregate_from=[AGG_ADMIN]),
        cluster_role("edit", edit_rules, labels={AGG_ADMIN: "true"}, aggregate_from=[AGG_EDIT]),
        cluster_role("view", list(_VIEW_RULES), labels={AGG_ADMIN: "true", AGG_EDIT: "true"},
                     aggregate_from=[AGG_VIEW]),
        cluster_role("system:aggregate-to-admin", _ADMIN_RULES, labels={AGG_ADMIN: "true"}),
        cluster_role("system:aggregate-to-edit", _EDIT_RULES, labels={AGG_ADMIN: "true", AGG_EDIT: "true"}),
        cluster_role("system:aggregate-to-view", _VIEW_RULES,
                     labels={AGG_ADMIN: "true", AGG_EDIT: "true", AGG_VIEW: "true"}),
        cluster_role("system:basic-user", [
            rule(["create"], ["authorization.k8s.io"], ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]),
            rule(["create"], ["authentication.k8s.io"], ["selfsubjectreviews"]),
        ]),
        cluster_role("system:discovery", [url_rule(["get"], _DISCOVERY_URLS)]),
        cluster_role("system:public-info-viewer", [url_rule(["get"], _PUBLIC_URLS)]),
        cluster_role("system:monitoring", [url_rule(["get"], _MONITORING_URLS)]),
        cluster_role("system:service-account-issuer-discovery", [url_rule(["get"], _ISSUER_DISCOVERY_URLS)]),
        cluster_role("system:kube-scheduler", _SCHEDULER_RULES),
        cluster_role("system:volume-scheduler", _VOLUME_SCHEDULER_RULES),
        cluster_role("system:kube-controller-manager", _CONTROLLER_MANAGER_RULES),
        cluster_role("system:node", NODE_RULES),
        cluster_role(NODE_AGENTS, _NODE_AGENT_RULES),
        cluster_role("system:node-proxier", _NODE_PROXIER_RULES),
        cluster_role("system:kconsole-sync", [rule(["*"], ["*"], ["*"]), url_rule(["*"], ["*"])]),
        cluster_role("system:kconsole-console", _CONSOLE_RULES),
        cluster_role_binding("cluster-admin", "cluster-admin", [("Group", MASTERS)]),
        cluster_role_binding("system:basic-user", "system:basic-user", [("Group", "system:authenticated")]),
        cluster_role_binding("system:discovery", "system:discovery", [("Group", "system:authenticated")]),
        cluster_role_binding("system:public-info-viewer", "system:public-info-viewer",
                             [("Group", "system:authenticated"), ("Group", "system:unauthenticated")]),
        cluster_role_binding("system:monitoring", "system:monitoring", [("Group", "system:monitoring")]),
        cluster_role_binding("system:service-account-issuer-discovery", "system:service-account-issuer-discovery",
                             [("Group", "system:serviceaccounts")]),
        cluster_role_binding("system:kube-scheduler", "system:kube-scheduler", [("User", "system:kube-scheduler")]),
        cluster_role_binding("system:volume-scheduler", "system:volume-scheduler", [("User", "system:kube-scheduler")]),
        cluster_role_binding("system:kube-controller-manager", "system:kube-controller-manager",
                             [("User", "system:kube-controller-manager")]),
        cluster_role_binding("system:node", "system:node", []),
        cluster_role_binding(NODE_AGENTS, NODE_AGENTS, [("User", NODE_AGENTS)]),
        cluster_role_binding("system:node-proxier", "system:node-proxier", [("User", "system:kube-proxy")]),
        cluster_role_binding("system:kconsole-sync", "system:kconsole-sync", [("User", "system:kconsole-sync")]),
        cluster_role_binding("system:kconsole-console", "system:kconsole-console",
                             [("User", "system:kconsole-console")]),
        namespaced_role("system::leader-locking-kube-scheduler", "kube-system", _LEADER_LEASE_RULES),
        role_binding("system::leader-locking-kube-scheduler", "kube-system",
                     "system::leader-locking-kube-scheduler", [("User", "system:kube-scheduler")]),
        namespaced_role("system::leader-locking-kube-controller-manager", "kube-system", _LEADER_LEASE_RULES),
        role_binding("system::leader-locking-kube-controller-manager", "kube-system",
                     "system::leader-locking-kube-controller-manager", [("User", "system:kube-controller-manager")]),
    ]
    return [_copy(o) for o in objects]


#: Bootstrap objects older kconsole versions created that upstream's policy does not have: a start
#: deletes them while they still carry the bootstrapping label (resource, namespace, name).
RETIRED_OBJECTS = (("rolebindings", "kube-node-lease", "system:node-lease"),
                   ("roles", "kube-node-lease", "system:node-lease"))
#: Bootstrap objects a start puts back to the current policy while annotated autoupdate "true" (as
#: upstream's reconciliation, which here also removes what was granted too widely): older versions
#: bound system:node to every node and gave it every Secret.
RECONCILED_OBJECTS = (("clusterroles", "system:node"), ("clusterrolebindings", "system:node"))


def _copy(o: Any) -> Any:
    if isinstance(o, dict):
        return {k: _copy(v) for k, v in o.items()}
    if isinstance(o, list):
        return [_copy(v) for v in o]
    return o


def static_lister(objects: Iterable[Obj], revision: int = 1) -> RBACLister:
    """A lister over a fixed set of objects (tests, and the server before its cache is up)."""
    by_resource: dict[str, list[Obj]] = {r: [] for r in RBAC_RESOURCES}
    plural = {"ClusterRole": "clusterroles", "ClusterRoleBinding": "clusterrolebindings",
              "Role": "roles", "RoleBinding": "rolebindings"}
    for o in objects:
        resource = plural.get(o.get("kind", ""))
        if resource:
            by_resource[resource].append(o)
    return lambda resource: (revision, by_resource.get(resource, []))
