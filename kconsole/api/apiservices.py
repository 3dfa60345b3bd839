"""apiregistration.k8s.io/v1 APIServices, as kube-apiserver's aggregator registers them at start.

Every built-in group/version is served locally: its APIService has no ``spec.service`` and is always
Available with reason ``Local``. ``v1beta1.metrics.k8s.io`` stands for metrics-server, whose metrics
API kconsole serves itself: it names the Service metrics-server's manifests create and reports what
the aggregator reports once that Service answers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kconsole.api.types import ResourceInfo

Obj = dict[str, Any]

API_VERSION = "apiregistration.k8s.io/v1"
METRICS_GROUP = "metrics.k8s.io"
#: The label the aggregator's autoregistration puts on what it manages ("onstart": built-in groups).
AUTOMANAGED = "kube-aggregator.kubernetes.io/automanaged"

#: (groupPriorityMinimum, versionPriority) of the built-in group/versions (upstream's
#: kube-apiserver aggregator table); groups not in it get upstream's default for a local group.
PRIORITIES: dict[tuple[str, str], tuple[int, int]] = {
    ("", "v1"): (18000, 1),
    ("apiregistration.k8s.io", "v1"): (18000, 15),
    ("apps", "v1"): (17800, 15),
    ("events.k8s.io", "v1"): (17750, 15),
    ("authentication.k8s.io", "v1"): (17700, 15),
    ("authorization.k8s.io", "v1"): (17600, 15),
    ("autoscaling", "v2"): (17500, 30),
    ("autoscaling", "v1"): (17500, 15),
    ("batch", "v1"): (17400, 15),
    ("certificates.k8s.io", "v1"): (17300, 15),
    ("networking.k8s.io", "v1"): (17200, 15),
    ("policy", "v1"): (17100, 15),
    ("rbac.authorization.k8s.io", "v1"): (17000, 15),
    ("storage.k8s.io", "v1"): (16800, 15),
    ("apiextensions.k8s.io", "v1"): (16700, 15),
    ("admissionregistration.k8s.io", "v1"): (16700, 15),
    ("scheduling.k8s.io", "v1"): (16600, 15),
    ("coordination.k8s.io", "v1"): (16500, 15),
    ("node.k8s.io", "v1"): (16300, 15),
    ("discovery.k8s.io", "v1"): (16200, 15),
    ("flowcontrol.apiserver.k8s.io", "v1"): (16100, 21),
}
#: A local group missing from the table (kconsole's own), as upstream's default.
DEFAULT_PRIORITY = (1000, 100)


def name(group: str, version: str) -> str:
    """``v1.apps``; the core group's is ``v1.`` (upstream's naming)."""
    return f"{version}.{group}"


def _available(reason: str, message: str, now: str) -> Obj:
    return {"conditions": [{"type": "Available", "status": "True", "lastTransitionTime": now,
                            "reason": reason, "message": message}]}


def wanted(infos: Iterable[ResourceInfo], now: str) -> list[Obj]:
    """The APIServices of the group/versions served (``infos``) plus the metrics API's, with status."""
    seen: dict[tuple[str, str], None] = {("apiregistration.k8s.io", "v1"): None}
    for info in infos:
        if info.group != METRICS_GROUP:
            seen[(info.group, info.version)] = None
    out = []
    for group, version in seen:
        group_priority, version_priority = PRIORITIES.get((group, version), DEFAULT_PRIORITY)
        out.append({
            "apiVersion": API_VERSION, "kind": "APIService",
            "metadata": {"name": name(group, version), "labels": {AUTOMANAGED: "onstart"}},
            "spec": {"group": group, "version": version, "groupPriorityMinimum": group_priority,
                     "versionPriority": version_priority},
            "status": _available("Local", "Local APIServices are always available", now),
        })
    out.append({
        "apiVersion": API_VERSION, "kind": "APIService",
        "metadata": {"name": name(METRICS_GROUP, "v1beta1"), "labels": {"k8s-app": "metrics-server"}},
        "spec": {"service": {"namespace": "kube-system", "name": "metrics-server", "port": 443},
                 "group": METRICS_GROUP, "version": "v1beta1", "insecureSkipTLSVerify": True,
                 "groupPriorityMinimum": 100, "versionPriority": 100},
        "status": _available("Passed", "all checks passed", now),
    })
    return out

