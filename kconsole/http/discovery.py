"""Discovery documents generated from the API server's resource table.

kubectl learns what exists from ``/api``, ``/apis`` and ``/api(s)/<group>/<version>`` before it does
anything, so these documents are what make ``kubectl get deploy`` resolve ``deploy`` to
``deployments.apps``, make ``kubectl scale`` find ``deployments/scale`` (autoscaling/v1 Scale) and make
``kubectl get all`` know the ``all`` category. Both the legacy documents and the aggregated
(apidiscovery.k8s.io/v2) form are built once from ``entry.resources()``.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Sequence
from typing import Any

from kconsole.api.types import ResourceInfo

AGGREGATED_CONTENT_TYPE = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

#: subresource -> (group, version, kind, verbs); group/version None means the parent's, kind None too.
_SUBRESOURCES: dict[str, tuple[str | None, str | None, str | None, tuple[str, ...]]] = {
    "status": (None, None, None, ("get", "patch", "update")),
    "scale": ("autoscaling", "v1", "Scale", ("get", "patch", "update")),
    "binding": (None, None, "Binding", ("create",)),
    "eviction": ("policy", "v1", "Eviction", ("create",)),
    "log": (None, None, "Pod", ("get",)),
    "ephemeralcontainers": (None, None, "Pod", ("get", "patch", "update")),
    "exec": (None, None, "PodExecOptions", ("create", "get")),
    "attach": (None, None, "PodAttachOptions", ("create", "get")),
    "portforward": (None, None, "PodPortForwardOptions", ("create", "get")),
    "finalize": (None, None, None, ("update",)),
    "token": ("authentication.k8s.io", "v1", "TokenRequest", ("create",)),
    "proxy": (None, None, None, ("create", "delete", "get", "patch", "update")),
}

#: Subresources every pod has upstream even when the table does not list them: kubectl looks for them.
_POD_EXTRAS = ("exec", "attach", "portforward")


def subresource_info(info: ResourceInfo, sub: str) -> tuple[str, str, str, tuple[str, ...]]:
    """(group, version, kind, verbs) of ``info``'s subresource ``sub``."""
    group, version, kind, verbs = _SUBRESOURCES.get(sub, (None, None, None, ("get",)))
    if sub == "proxy":  # NodeProxyOptions, PodProxyOptions, ServiceProxyOptions
        kind = f"{info.kind}ProxyOptions"
    return (info.group if group is None else group, info.version if version is None else version,
            kind or info.kind, verbs)


def _subresources(info: ResourceInfo) -> list[str]:
    subs = list(info.subresources)
    if info.resource == "pods" and info.group == "":
        subs += [s for s in _POD_EXTRAS if s not in subs]
    return subs


def _storage_hash(info: ResourceInfo) -> str:
    digest = hashlib.sha256(f"{info.group}/{info.version}/{info.kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode("ascii")


class Discovery:
    """All discovery documents for one resource table, built once."""

    def __init__(self, resources: Sequence[ResourceInfo], server_address: str = "") -> None:
        self.resources = list(resources)
        self.server_address = server_address
        self.by_gv: dict[tuple[str, str], list[ResourceInfo]] = {}
        self.by_gr: dict[str, ResourceInfo] = {}
        for info in self.resources:
            self.by_gv.setdefault((info.group, info.version), []).append(info)
            self.by_gr.setdefault(info.group_resource, info)
        self.groups: dict[str, list[str]] = {}
        for group, version in self.by_gv:
            versions = self.groups.setdefault(group, [])
            if version not in versions:
                versions.append(version)
        for versions in self.groups.values():
            versions.sort(key=_version_priority)

    # ------------------------------------------------------------------ legacy

    def api_versions(self) -> dict[str, Any]:
        return {
            "kind": "APIVersions",
            "versions": self.groups.get("", ["v1"]),
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": self.server_address}],
        }

    def _group(self, name: str) -> dict[str, Any]:
        versions = [{"groupVersion": f"{name}/{v}", "version": v} for v in self.groups[name]]
        return {"name": name, "versions": versions, "preferredVersion": versions[0]}

    def api_group_list(self) -> dict[str, Any]:
        return {"kind": "APIGroupList", "apiVersion": "v1",
                "groups": [self._group(g) for g in self.groups if g]}

    def api_group(self, name: str) -> dict[str, Any] | None:
        if not name or name not in self.groups:
            return None
        return {"kind": "APIGroup", "apiVersion": "v1", **self._group(name)}

    def resource_list(self, group: str, version: str) -> dict[str, Any] | None:
        infos = self.by_gv.get((group, version))
        if infos is None:
            return None
        out: list[dict[str, Any]] = []
        for info in infos:
            entry: dict[str, Any] = {
                "name": info.resource, "singularName": info.singular, "namespaced": info.namespaced,
                "kind": info.kind, "verbs": list(info.verbs), "storageVersionHash": _storage_hash(info),
            }
            if info.short_names:
                entry["shortNames"] = list(info.short_names)
            if info.categories:
                entry["categories"] = list(info.categories)
            out.append(entry)
            for sub in _subresources(info):
                sgroup, sversion, skind, verbs = subresource_info(info, sub)
                sentry: dict[str, Any] = {"name": f"{info.resource}/{sub}", "singularName": "",
                                          "namespaced": info.namespaced, "kind": skind, "verbs": list(verbs)}
                if (sgroup, sversion) != (info.group, info.version):
                    sentry["group"], sentry["version"] = sgroup, sversion
                out.append(sentry)
        gv = f"{group}/{version}" if group else version
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": out}

    # ------------------------------------------------------------------ aggregated

    def aggregated(self, legacy_core: bool) -> dict[str, Any]:
        """apidiscovery.k8s.io/v2 ``APIGroupDiscoveryList`` for ``/api`` (core) or ``/apis`` (groups)."""
        items = []
        for group, versions in self.groups.items():
            if (group == "") != legacy_core:
                continue
            vitems = []
            for version in versions:
                resources = []
                for info in self.by_gv[(group, version)]:
                    res: dict[str, Any] = {
                        "resource": info.resource,
                        "responseKind": {"group": info.group, "version": info.version, "kind": info.kind},
                        "scope": "Namespaced" if info.namespaced else "Cluster",
                        "singularResource": info.singular,
                        "verbs": list(info.verbs),
                    }
                    if info.short_names:
                        res["shortNames"] = list(info.short_names)
                    if info.categories:
                        res["categories"] = list(info.categories)
                    subs = []
                    for sub in _subresources(info):
                        sgroup, sversion, skind, verbs = subresource_info(info, sub)
                        subs.append({"subresource": sub,
                                     "responseKind": {"group": sgroup, "version": sversion, "kind": skind},
                                     "verbs": list(verbs)})
                    if subs:
                        res["subresources"] = subs
                    resources.append(res)
                vitems.append({"version": version, "resources": resources, "freshness": "Current"})
            items.append({"metadata": {"name": group, "creationTimestamp": None}, "versions": vitems})
        return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {},
                "items": items}


def _version_priority(version: str) -> tuple[int, int, int]:
    """Kubernetes' version ordering: GA before beta before alpha, higher numbers first."""
    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if not m:
        return (3, 0, 0)
    major = int(m.group(1))
    stage = {"": 0, "beta": 1, "alpha": 2}[m.group(2) or ""]
    minor = int(m.group(3) or 0)
    return (stage, -major, -minor)
