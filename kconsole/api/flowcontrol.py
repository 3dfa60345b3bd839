"""flowcontrol.apiserver.k8s.io/v1: the API Priority and Fairness objects a 1.32 API server creates.

kube-apiserver ensures its mandatory and suggested FlowSchemas and PriorityLevelConfigurations at
start (``apf.kubernetes.io/autoupdate-spec: "true"``); ``kubectl get flowschemas`` lists these. The
limits kconsole enforces are the max-in-flight ones (429 with ``Retry-After``), not per priority
level: the objects describe the configuration, queuing is not simulated.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]

API_VERSION = "flowcontrol.apiserver.k8s.io/v1"
AUTOUPDATE = {"apf.kubernetes.io/autoupdate-spec": "true"}
AUTHENTICATED = ("system:authenticated", "system:unauthenticated")

#: name -> (type, nominalConcurrencyShares, lendablePercent, queuing (queues, handSize, queueLengthLimit) or None)
PRIORITY_LEVELS: dict[str, tuple[str, int, int, tuple[int, int, int] | None]] = {
    "exempt": ("Exempt", 0, 0, None),
    "system": ("Limited", 30, 33, (64, 6, 50)),
    "node-high": ("Limited", 40, 25, (64, 6, 50)),
    "leader-election": ("Limited", 10, 0, (16, 4, 50)),
    "workload-high": ("Limited", 40, 50, (128, 6, 50)),
    "workload-low": ("Limited", 100, 90, (128, 6, 50)),
    "global-default": ("Limited", 20, 50, (128, 6, 50)),
    "catch-all": ("Limited", 5, 0, None),
}

_ALL_RESOURCES = {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "clusterScope": True, "namespaces": ["*"]}
_ALL_URLS = {"verbs": ["*"], "nonResourceURLs": ["*"]}


def _users(*names: str) -> list[Obj]:
    return [{"kind": "User", "user": {"name": n}} for n in names]


def _groups(*names: str) -> list[Obj]:
    return [{"kind": "Group", "group": {"name": n}} for n in names]


def _accounts(namespace: str, *names: str) -> list[Obj]:
    return [{"kind": "ServiceAccount", "serviceAccount": {"namespace": namespace, "name": n}} for n in names]


def _rule(subjects: list[Obj], resources: list[Obj] | None = None, urls: list[Obj] | None = None) -> Obj:
    rule: Obj = {"subjects": subjects}
    if resources:
        rule["resourceRules"] = resources
    if urls:
        rule["nonResourceRules"] = urls
    return rule


_LEASES = {"verbs": ["get", "create", "update"], "apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
           "namespaces": ["*"]}

#: name -> (priority level, matchingPrecedence, distinguisher or "", rules), upstream's bootstrap order.
FLOW_SCHEMAS: dict[str, tuple[str, int, str, list[Obj]]] = {
    "exempt": ("exempt", 1, "", [_rule(_groups("system:masters"), [_ALL_RESOURCES], [_ALL_URLS])]),
    "probes": ("exempt", 2, "", [_rule(_groups(*AUTHENTICATED), None, [
        {"verbs": ["get"], "nonResourceURLs": ["/healthz", "/readyz", "/livez"]}])]),
    "system-leader-election": ("leader-election", 100, "ByUser", [_rule(
        _users("system:kube-controller-manager", "system:kube-scheduler")
        + _accounts("kube-system", "kube-controller-manager", "kube-scheduler"), [_LEASES])]),
    "endpoint-controller": ("workload-high", 150, "ByUser", [_rule(
        _users("system:kube-controller-manager") + _accounts("kube-system", "endpoint-controller"),
        [{"verbs": ["get", "create", "update"], "apiGroups": [""], "resources": ["endpoints"],
          "namespaces": ["*"]}])]),
    "workload-leader-election": ("leader-election", 200, "ByUser", [_rule(_accounts("kube-system", "*"),
                                                                           [_LEASES])]),
    "system-node-high": ("node-high", 400, "ByUser", [_rule(_groups("system:nodes"), [
        {"verbs": ["*"], "apiGroups": [""], "resources": ["nodes", "nodes/status"], "clusterScope": True},
        {"verbs": ["*"], "apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
         "namespaces": ["*"]}])]),
    "system-nodes": ("system", 500, "ByUser", [_rule(_groups("system:nodes"), [_ALL_RESOURCES], [_ALL_URLS])]),
    "kube-controller-manager": ("workload-high", 800, "ByNamespace", [_rule(
        _users("system:kube-controller-manager"), [_ALL_RESOURCES], [_ALL_URLS])]),
    "kube-scheduler": ("workload-high", 800, "ByNamespace", [_rule(
        _users("system:kube-scheduler"), [_ALL_RESOURCES], [_ALL_URLS])]),
    "kube-system-service-accounts": ("workload-high", 900, "ByNamespace", [_rule(
        _accounts("kube-system", "*"), [_ALL_RESOURCES], [_ALL_URLS])]),
    "service-accounts": ("workload-low", 9000, "ByUser", [_rule(
        _groups("system:serviceaccounts"), [_ALL_RESOURCES], [_ALL_URLS])]),
    "global-default": ("global-default", 9900, "ByUser", [_rule(
        _groups(*AUTHENTICATED), [_ALL_RESOURCES], [_ALL_URLS])]),
    "catch-all": ("catch-all", 10000, "ByUser", [_rule(_groups(*AUTHENTICATED), [_ALL_RESOURCES], [_ALL_URLS])]),
}


def priority_level(name: str) -> Obj:
    kind, shares, lendable, queuing = PRIORITY_LEVELS[name]
    spec: Obj = {"type": kind}
    if kind == "Exempt":
        spec["exempt"] = {"nominalConcurrencyShares": shares, "lendablePercent": lendable}
    else:
        response: Obj = {"type": "Reject"}
        if queuing is not None:
            queues, hand, length = queuing
            response = {"type": "Queue", "queuing": {"queues": queues, "handSize": hand, "queueLengthLimit": length}}
        spec["limited"] = {"nominalConcurrencyShares": shares, "lendablePercent": lendable,
                           "limitResponse": response}
    return {"apiVersion": API_VERSION, "kind": "PriorityLevelConfiguration",
            "metadata": {"name": name, "annotations": dict(AUTOUPDATE)}, "spec": spec, "status": {}}


def flow_schema(name: str, now: str) -> Obj:
    level, precedence, distinguisher, rules = FLOW_SCHEMAS[name]
    spec: Obj = {"priorityLevelConfiguration": {"name": level}, "matchingPrecedence": precedence, "rules": rules}
    if distinguisher:
        spec["distinguisherMethod"] = {"type": distinguisher}
    return {"apiVersion": API_VERSION, "kind": "FlowSchema",
            "metadata": {"name": name, "annotations": dict(AUTOUPDATE)}, "spec": spec,
            "status": {"conditions": [{
                "type": "Dangling", "status": "False", "lastTransitionTime": now, "reason": "Found",
                "message": f'This FlowSchema references the PriorityLevelConfiguration object named "{level}" '
                           'and it exists'}]}}


def wanted(now: str) -> list[tuple[str, Obj]]:
    """(resource, object) of every default, priority levels first (the schemas name them)."""
    out = [("prioritylevelconfigurations", priority_level(name)) for name in PRIORITY_LEVELS]
    out += [("flowschemas", flow_schema(name, now)) for name in FLOW_SCHEMAS]
    return out
