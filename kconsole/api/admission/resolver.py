"""Where a webhook named by ``clientConfig.service`` is dialled: upstream's ServiceResolver, for a
cluster whose Services carry no packets.

Upstream's client always speaks to ``https://<name>.<namespace>.svc:<port><path>`` (so TLS verifies
that name against ``caBundle``) and its dialer asks the ServiceResolver for the address: the
Service's ClusterIP by default, the endpoints with ``--enable-aggregator-routing``. Its errors are
the dial's: ``service "x" not found``, ``no service port 443 found for service "x"``, ``cannot route
to service with ClusterIP "None"``.

In kconsole a ClusterIP leads nowhere, so the Service is resolved to its ready endpoints
(EndpointSlices labelled ``kubernetes.io/service-name``, or an Endpoints object for a selector-less
Service written by hand) on the Service port's name, and the first endpoint this machine can reach
is dialled: one that names no Pod as its ``targetRef`` and whose address lies in no Node's
``podCIDRs`` (a Pod's IP is simulated; ``127.0.0.1`` where the user's webhook server listens is
real). When none is reachable the dial fails as it would
against a Service whose Pods do not listen: ``dial tcp <clusterIP>:<port>: connect: connection
refused``. An ExternalName Service is dialled at its external name.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kconsole.api.admission.dynamic import Attributes

Obj = dict[str, Any]
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
ENDPOINT_SLICES = "endpointslices.discovery.k8s.io"


class ResolveError(Exception):
    """The dial failed before any packet: the text is upstream's dial error."""


@dataclass(frozen=True)
class Target:
    """Where to connect (``host``, ``port``) and the name TLS verifies (``server_name``)."""

    host: str
    port: int
    server_name: str


def resolve(service: Obj, attrs: Attributes) -> Target:
    """The address a ``clientConfig.service`` reference is dialled at; ResolveError otherwise."""
    namespace = str(service.get("namespace") or "")
    name = str(service.get("name") or "")
    port = service.get("port") or 443
    server_name = f"{name}.{namespace}.svc"
    svc = attrs.get_object("services", namespace, name)
    if svc is None:
        raise ResolveError(f"service {json.dumps(name)} not found")
    spec = svc.get("spec") or {}
    kind = spec.get("type") or "ClusterIP"
    if kind == "ExternalName":
        return Target(str(spec.get("externalName") or ""), int(port), server_name)
    if kind not in ("ClusterIP", "NodePort", "LoadBalancer"):
        raise ResolveError(f"unsupported service type {json.dumps(kind)}")
    cluster_ip = spec.get("clusterIP") or ""
    if cluster_ip == "None":
        raise ResolveError('cannot route to service with ClusterIP "None"')
    svc_port = next((p for p in spec.get("ports") or () if isinstance(p, dict) and p.get("port") == port), None)
    if svc_port is None:
        raise ResolveError(f"no service port {port} found for service {json.dumps(name)}")
    simulated = _pod_networks(attrs)
    for address, target_port, pod in _ready_endpoints(attrs, namespace, name, str(svc_port.get("name") or "")):
        if not pod and not _in(address, simulated):
            return Target(address, target_port, server_name)
    host = f"[{cluster_ip}]" if ":" in cluster_ip else cluster_ip
    raise ResolveError(f"dial tcp {host}:{port}: connect: connection refused")


def _ready_endpoints(attrs: Attributes, namespace: str, name: str,
                     port_name: str) -> Iterator[tuple[str, int, bool]]:
    """(address, port, whether a Pod's) of the Service's ready endpoints on the port named
    ``port_name``, in order."""
    slices = [s for s in attrs.list_objects(ENDPOINT_SLICES, namespace)
              if ((s.get("metadata") or {}).get("labels") or {}).get(SERVICE_NAME_LABEL) == name]
    for slice_ in sorted(slices, key=lambda s: (s.get("metadata") or {}).get("name", "")):
        port = next((p.get("port") for p in slice_.get("ports") or ()
                     if isinstance(p, dict) and (p.get("name") or "") == port_name), None)
        if not isinstance(port, int):
            continue
        for endpoint in slice_.get("endpoints") or ():
            if not isinstance(endpoint, dict) or (endpoint.get("conditions") or {}).get("ready") is False:
                continue
            pod = ((endpoint.get("targetRef") or {}).get("kind")) == "Pod"
            for address in endpoint.get("addresses") or ():
                yield str(address), port, pod
    endpoints = attrs.get_object("endpoints", namespace, name) or {}
    for subset in endpoints.get("subsets") or ():
        if not isinstance(subset, dict):
            continue
        port = next((p.get("port") for p in subset.get("ports") or ()
                     if isinstance(p, dict) and (p.get("name") or "") == port_name), None)
        if not isinstance(port, int):
            continue
        for address in subset.get("addresses") or ():
            if isinstance(address, dict) and address.get("ip"):
                yield str(address["ip"]), port, ((address.get("targetRef") or {}).get("kind")) == "Pod"


def _pod_networks(attrs: Attributes) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """The Nodes' Pod networks: addresses in them belong to simulated Pods."""
    out = []
    for node in attrs.list_objects("nodes", None):
        spec = node.get("spec") or {}
        for cidr in spec.get("podCIDRs") or ([spec["podCIDR"]] if spec.get("podCIDR") else []):
            try:
                out.append(ipaddress.ip_network(str(cidr), strict=False))
            except ValueError:
                continue
    return out


def _in(address: str, networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip.version == net.version and ip in net for net in networks)
