"""kube-proxy: per node, the rules that send a Service's ClusterIP:port to its ready endpoints.

Upstream each node's kube-proxy watches Services and EndpointSlices and programs iptables/IPVS.
Here one :class:`ServiceTable` (fed by one Services and one EndpointSlices informer for the whole
fleet) computes the rules once per change, and each node's :class:`KubeProxy` reads it, keeping
only local endpoints for ``internalTrafficPolicy: Local``. A partitioned node's proxy keeps the
rules it had when the partition began, as a real kube-proxy that lost its watch would.

A rule: ``{"service": "ns/name", "type", "clusterIP", "port", "protocol", "portName", "nodePort",
"endpoints": ["10.244.1.5:8080", ...], "localOnly"}``; endpoints are the ready ones, or, when none
is ready, those still serving while terminating (upstream's fallback).
"""

from __future__ import annotations

from typing import Any

from kconsole.client import SharedInformer
from kconsole.nodes.images import repository

Obj = dict[str, Any]
SERVICE_NAME_LABEL = "kubernetes.io/service-name"


def _service_name_index(obj: Obj) -> list[str]:
    name = ((obj.get("metadata") or {}).get("labels") or {}).get(SERVICE_NAME_LABEL)
    return [f"{obj['metadata'].get('namespace')}/{name}"] if name else []


class ServiceTable:
    """Rules for every Service, recomputed per Service when it or one of its slices changes."""

    def __init__(self, services: SharedInformer, slices: SharedInformer) -> None:
        self.services = services
        self.slices = slices
        slices.add_indexer("serviceName", _service_name_index)
        self._rules: dict[str, list[Obj]] = {}
        #: per service: endpoint address -> node name, for Local policies.
        self._nodes: dict[str, dict[str, str]] = {}
        self.version = 0
        services.add_event_handler(on_add=self._service_changed, on_update=lambda _o, n: self._service_changed(n),
                                   on_delete=self._service_changed)
        slices.add_event_handler(on_add=self._slice_changed, on_update=self._slice_updated,
                                 on_delete=self._slice_changed)

    def _service_changed(self, svc: Obj) -> None:
        meta = svc["metadata"]
        self._recompute(f"{meta.get('namespace')}/{meta['name']}")

    def _slice_changed(self, sl: Obj) -> None:
        for key in _service_name_index(sl):
            self._recompute(key)

    def _slice_updated(self, old: Obj, new: Obj) -> None:
        keys = set(_service_name_index(old)) | set(_service_name_index(new))
        for key in keys:
            self._recompute(key)

    def _recompute(self, key: str) -> None:
        self.version += 1
        ns, _, name = key.partition("/")
        svc = self.services.get_by_name(ns, name)
        spec = (svc or {}).get("spec") or {}
        cluster_ip = spec.get("clusterIP")
        if svc is None or not cluster_ip or cluster_ip == "None" or spec.get("type") == "ExternalName":
            self._rules.pop(key, None)
            self._nodes.pop(key, None)
            return
        ready: dict[str, list[str]] = {}
        serving: dict[str, list[str]] = {}
        nodes: dict[str, str] = {}
        for sl in self.slices.list_by_index("serviceName", key):
            ports = {(p.get("name") or ""): p for p in sl.get("ports") or ()}
            for ep in sl.get("endpoints") or ():
                cond = ep.get("conditions") or {}
                is_ready = cond.get("ready") is not False
                is_serving = cond.get("serving", cond.get("ready")) is not False
                for addr in ep.get("addresses") or ():
                    if ep.get("nodeName"):
                        nodes[addr] = ep["nodeName"]
                    for pname, port in ports.items():
                        target = f"{addr}:{port.get('port')}"
                        if is_ready:
                            ready.setdefault(pname, []).append(target)
                        elif is_serving and cond.get("terminating"):
                            serving.setdefault(pname, []).append(target)
        rules = []
        local = spec.get("internalTrafficPolicy") == "Local"
        for port in spec.get("ports") or ():
            pname = port.get("name") or ""
            endpoints = sorted(ready.get(pname) or serving.get(pname) or [])
            rules.append({"service": key, "type": spec.get("type") or "ClusterIP", "clusterIP": cluster_ip,
                          "port": port.get("port"), "protocol": port.get("protocol") or "TCP", "portName": pname,
                          "nodePort": port.get("nodePort"), "endpoints": endpoints, "localOnly": local})
        self._rules[key] = rules
        self._nodes[key] = nodes

    def rules_for(self, node: str) -> list[Obj]:
        out: list[Obj] = []
        for key in sorted(self._rules):
            for rule in self._rules[key]:
                if rule["localOnly"]:
                    where = self._nodes.get(key) or {}
                    rule = {**rule, "endpoints": [e for e in rule["endpoints"]
                                                  if where.get(e.rsplit(":", 1)[0]) == node]}
                out.append(rule)
        return out


#: The image of the kube-proxy addon's DaemonSet (kconsole/addons.py): a node's proxy runs while a
#: container of it runs there.
KUBE_PROXY_REPOSITORY = "registry.k8s.io/kube-proxy"


class KubeProxy:
    """One node's kube-proxy, reading the shared table.

    ``as_pod``: the proxy is the node's ``kube-proxy-*`` pod (the addon): no rules until its
    container first runs, rules frozen while it is not running (crashed, deleted, its DaemonSet
    gone), as iptables keeps a dead kube-proxy's rules. Otherwise it runs with the node's machine.
    """

    def __init__(self, node: str, table: ServiceTable, as_pod: bool = False) -> None:
        self.node = node
        self.table = table
        self.running = not as_pod
        self.partitioned = False
        self._frozen: list[Obj] | None = [] if as_pod else None

    def rules(self) -> list[Obj]:
        """The node's rules table, for the console."""
        if self._frozen is not None:
            return [dict(r) for r in self._frozen]
        return self.table.rules_for(self.node)

    def _refreeze(self) -> None:
        if self.partitioned or not self.running:
            if self._frozen is None:
                self._frozen = self.table.rules_for(self.node)
        else:
            self._frozen = None

    def set_partitioned(self, partitioned: bool) -> None:
        self.partitioned = partitioned
        self._refreeze()

    def container_changed(self, image: str, running: bool) -> None:
        """A container started or ended on the node: the kube-proxy pod's turns the proxy on and off."""
        if repository(image) != KUBE_PROXY_REPOSITORY:
            return
        self.running = running
        self._refreeze()

    async def stop(self) -> None:
        """A stopped kube-proxy leaves its rules in place; they just stop following changes."""
        self.running = False
        self._refreeze()

    async def start(self) -> None:
        self.running = True
        self._refreeze()
