"""metrics.k8s.io/v1beta1 (PodMetrics, NodeMetrics), as metrics-server serves it, so ``kubectl top`` works.

The simulated kubelets publish each running pod's usage as the ``kconsole.dev/cpu-usage`` and
``kconsole.dev/memory-usage`` annotations (the HPA controller reads the same); this answers from the
pods cache: a pod's usage split evenly over its containers, a node's the sum of its pods' plus what
its kubelet registered as running outside pods (``kconsole.dev/system-*-usage`` on the Node). A pod
that requests neither CPU nor memory shows its steady idle use until its kubelet publishes more
(``objects.pod.unpublished_usage``: idle pods cost no writes); any other pod with no published
usage yet has no metrics (kubectl says "metrics not available yet"), as with metrics-server before
its first scrape; neither has a node that is not Ready nor its pods, whose
kubelet metrics-server could not scrape (``kubectl top node`` prints ``<unknown>``). Read-only: get
and list, with label and name selectors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kconsole.api.filters import compile_filter
from kconsole.api.types import Response, StatusError
from kconsole.objects.pod import (
    SYSTEM_CPU_USAGE_ANNOTATION,
    SYSTEM_MEMORY_USAGE_ANNOTATION,
    is_node_ready,
    published_usage,
    running_usage,
)

if TYPE_CHECKING:
    from kconsole.api.registry import ResourceSpec
    from kconsole.api.server import APIServer, _Call

Obj = dict[str, Any]

#: The kubelets' publishing period: metrics-server's window.
WINDOW = "15s"


def _quantities(cores: float, nbytes: float) -> Obj:
    """metrics-server's units: nanocores and kibibytes."""
    return {"cpu": f"{int(cores * 1e9)}n", "memory": f"{int(nbytes / 1024)}Ki"}


def answer(server: APIServer, call: _Call, spec: ResourceSpec) -> Response:
    req = call.req
    if req.verb not in ("get", "list"):
        raise StatusError.method_not_supported(spec.group_resource, req.verb)
    pods_spec = server.registry.get("", "pods")
    cache = server.storage.caches.get("pods")
    if pods_spec is None or cache is None:
        raise StatusError.unavailable("the pods cache is not running")
    nodes = server.storage.caches.get("nodes")
    nodes_spec = server.registry.get("", "nodes")
    if nodes is None or nodes_spec is None:
        raise StatusError.unavailable("the nodes cache is not running")
    now = server.now()
    items: list[Obj] = []
    if spec.kind == "PodMetrics":
        scraped = {node["metadata"]["name"] for node in nodes.values() if is_node_ready(node)}
        flt = compile_filter(pods_spec, req.label_selector, req.field_selector, req.namespace, req.name)
        for pod in cache.list(flt):
            usage = running_usage(pod)
            if usage is None or (pod.get("spec") or {}).get("nodeName") not in scraped:
                continue
            meta = pod["metadata"]
            containers = [c.get("name") for c in (pod.get("spec") or {}).get("containers") or ()] or [""]
            share = (usage[0] / len(containers), usage[1] / len(containers))
            items.append({"metadata": {"name": meta["name"], "namespace": meta.get("namespace"),
                                       "creationTimestamp": now, "labels": dict(meta.get("labels") or {})},
                          "timestamp": now, "window": WINDOW,
                          "containers": [{"name": name, "usage": _quantities(*share)} for name in containers]})
    else:
        totals: dict[str, list[float]] = {}
        for pod in cache.values():
            usage = running_usage(pod)
            node = (pod.get("spec") or {}).get("nodeName")
            if usage is not None and node:
                total = totals.setdefault(node, [0.0, 0.0])
                total[0] += usage[0]
                total[1] += usage[1]
        flt = compile_filter(nodes_spec, req.label_selector, req.field_selector, None, req.name)
        for node in nodes.list(flt):
            if not is_node_ready(node):
                continue
            name = node["metadata"]["name"]
            cores, nbytes = totals.get(name, (0.0, 0.0))
            system = published_usage(node, SYSTEM_CPU_USAGE_ANNOTATION, SYSTEM_MEMORY_USAGE_ANNOTATION)
            if system is not None:
                cores, nbytes = cores + system[0], nbytes + system[1]
            items.append({"metadata": {"name": name, "creationTimestamp": now,
                                       "labels": dict(node["metadata"].get("labels") or {})},
                          "timestamp": now, "window": WINDOW, "usage": _quantities(cores, nbytes)})
    for item in items:
        item["apiVersion"], item["kind"] = spec.api_version, spec.kind
    if req.verb == "get":
        if not items:  # metrics-server's wording: podmetrics.metrics.k8s.io "default/web" not found
            what = f"{req.namespace}/{req.name}" if spec.namespaced else req.name or ""
            raise StatusError.not_found(f"{spec.kind.lower()}.{spec.group}", what, spec.group, spec.resource)
        return Response(200, items[0])
    return Response(200, {"kind": spec.list_kind, "apiVersion": spec.api_version, "metadata": {}, "items": items})
