"""Service IP and node-port assignment, as upstream's service REST storage does on create/update.

A new Service gets a ClusterIP from the API server's allocator unless it is headless ("None"),
names its own IP, or is an ExternalName. NodePort and LoadBalancer ports get a node port in
30000-32767 drawn from the seeded rng, avoiding ports other Services hold. An update that omits
the assigned values keeps them (kubectl replace/apply never mention them).
"""

from __future__ import annotations

from typing import Any

from kconsole.api.stages import AdmissionContext
from kconsole.api.types import StatusError

Obj = dict[str, Any]

NODE_PORT_MIN = 30000
NODE_PORT_MAX = 32767
NODE_PORT_TYPES = ("NodePort", "LoadBalancer")


def needs_cluster_ip(spec: Obj) -> bool:
    return spec.get("type", "ClusterIP") != "ExternalName"


def needs_node_ports(spec: Obj) -> bool:
    if spec.get("type") == "NodePort":
        return True
    return spec.get("type") == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts", True) is not False


def used_node_ports(ctx: AdmissionContext, own: Obj) -> set[int]:
    meta = own.get("metadata") or {}
    used: set[int] = set()
    for svc in ctx.list_objects("services", None):
        other = svc.get("metadata") or {}
        if other.get("namespace") == meta.get("namespace") and other.get("name") == meta.get("name"):
            continue
        for port in (svc.get("spec") or {}).get("ports") or ():
            if isinstance(port, dict) and port.get("nodePort"):
                used.add(int(port["nodePort"]))
    return used


class ServiceAllocation:
    """ClusterIPs and node ports: assigned on create, kept across updates."""

    name = "ServiceAllocation"
    #: The (group, kind) pairs this plugin can act on: the server asks it about no other.
    kinds = frozenset({("", "Service")})

    def admit(self, ctx: AdmissionContext, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        if ctx.info.group != "" or ctx.info.kind != "Service" or ctx.subresource:
            return
        if ctx.operation not in ("CREATE", "UPDATE"):
            return
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        old_spec = (old or {}).get("spec") or {} if ctx.operation == "UPDATE" else {}
        self._cluster_ip(ctx, spec, old_spec)
        self._node_ports(ctx, obj, spec, old_spec)

    def _cluster_ip(self, ctx: AdmissionContext, spec: Obj, old_spec: Obj) -> None:
        if not needs_cluster_ip(spec):
            return
        if old_spec and needs_cluster_ip(old_spec):
            if not spec.get("clusterIP") and old_spec.get("clusterIP"):
                spec["clusterIP"] = old_spec["clusterIP"]
            same_ip = spec.get("clusterIP") == old_spec.get("clusterIP")
            if not spec.get("clusterIPs") and old_spec.get("clusterIPs") and same_ip:
                spec["clusterIPs"] = list(old_spec["clusterIPs"])
        ip = spec.get("clusterIP") or next(iter(spec.get("clusterIPs") or ()), "")
        if not ip:
            ip = ctx.allocate_cluster_ip()
        if ip:
            spec["clusterIP"] = ip
            if not spec.get("clusterIPs"):
                spec["clusterIPs"] = [ip]

    @staticmethod
    def _taken_node_ports(ctx: AdmissionContext, obj: Obj, ports: list[Obj], old_ports: list[Obj]) -> None:
        """A node port asked for that another Service holds: 422, as upstream's allocator refuses it."""
        kept = {p.get("nodePort") for p in old_ports}
        asked = [(i, p["nodePort"]) for i, p in enumerate(ports) if p.get("nodePort") and p["nodePort"] not in kept]
        if not asked:
            return
        used = used_node_ports(ctx, obj)
        causes = [{"reason": "FieldValueInvalid", "field": f"spec.ports[{i}].nodePort",
                   "message": f"Invalid value: {port}: provided port is already allocated"}
                  for i, port in asked if isinstance(port, int) and port in used]
        if causes:
            raise StatusError.invalid("Service", (obj.get("metadata") or {}).get("name", ""), causes)

    def _node_ports(self, ctx: AdmissionContext, obj: Obj, spec: Obj, old_spec: Obj) -> None:
        ports = [p for p in spec.get("ports") or () if isinstance(p, dict)]
        old_ports = [p for p in old_spec.get("ports") or () if isinstance(p, dict)]
        if not needs_node_ports(spec):
            if old_spec and needs_node_ports(old_spec):
                previous = {(p.get("port"), p.get("protocol")): p.get("nodePort") for p in old_ports}
                for p in ports:
                    if p.get("nodePort") and previous.get((p.get("port"), p.get("protocol"))) == p["nodePort"]:
                        del p["nodePort"]
            return
        if old_spec and needs_node_ports(old_spec):
            previous = {(p.get("port"), p.get("protocol")): p.get("nodePort") for p in old_ports}
            for p in ports:
                if not p.get("nodePort") and previous.get((p.get("port"), p.get("protocol"))):
                    p["nodePort"] = previous[(p.get("port"), p.get("protocol"))]
        self._taken_node_ports(ctx, obj, ports, old_ports if old_spec else [])
        missing = [p for p in ports if not p.get("nodePort")]
        if not missing:
            return
        taken = used_node_ports(ctx, obj) | {int(p["nodePort"]) for p in ports if p.get("nodePort")}
        free = NODE_PORT_MAX - NODE_PORT_MIN + 1 - len(taken)
        if free < len(missing):
            raise StatusError.invalid("Service", (obj.get("metadata") or {}).get("name", ""), [{
                "reason": "FieldValueInvalid", "field": "spec.ports[0].nodePort",
                "message": "Invalid value: 0: range is full"}])
        for p in missing:
            while True:
                candidate = ctx.rng.randint(NODE_PORT_MIN, NODE_PORT_MAX)
                if candidate not in taken:
                    break
            taken.add(candidate)
            p["nodePort"] = candidate
