"""The Node authorizer's graph: which objects each node has a reason to read.

Upstream's node authorizer keeps a graph fed by watches: a pod bound to a node points at the node,
and the Secrets, ConfigMaps, claims and service account the pod names point at the pod; a
PersistentVolume points at the claim it is bound to. A node may read an object only when a path
leads from the object to the node. The same edges here, kept as counts: for each object, how many
pods on each node name it, updated synchronously from the API server's watch caches of pods and
PersistentVolumes (see :attr:`kconsole.api.watchcache.WatchCache.listeners`), so the graph is never
behind what a kubelet's watch has shown it.
"""

from __future__ import annotations

import logging
from typing import Any

from kconsole.objects.pod import pod_configmap_names, pod_secret_names
from kconsole.objects.storage import volume_claim

log = logging.getLogger(__name__)

Obj = dict[str, Any]
#: (vertex type, namespace, name): "secret", "configmap", "pvc", "serviceaccount" (namespaced).
Vertex = tuple[str, str, str]

SECRET, CONFIGMAP, PVC, SERVICEACCOUNT, POD, PV = "secret", "configmap", "pvc", "serviceaccount", "pod", "pv"


def pod_vertices(pod: Obj) -> frozenset[Vertex]:
    """The objects a pod names, as the vertices pointing at it."""
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    ns, name = meta.get("namespace") or "", meta.get("name") or ""
    out: set[Vertex] = {(SECRET, ns, s) for s in pod_secret_names(pod)}
    out.update((CONFIGMAP, ns, c) for c in pod_configmap_names(pod))
    for vol in spec.get("volumes") or ():
        claim = volume_claim(name, vol)
        if claim is not None:
            out.add((PVC, ns, claim[0]))
    account = spec.get("serviceAccountName")
    if account:
        out.add((SERVICEACCOUNT, ns, account))
    return frozenset(out)


class NodeGraph:
    """Pods -> nodes, and what each pod names; PersistentVolumes -> their claims."""

    def __init__(self) -> None:
        #: (namespace, name) -> (node, uid, ephemeral containers, the vertices it names)
        self._pods: dict[tuple[str, str], tuple[str, str, int, frozenset[Vertex]]] = {}
        #: vertex -> node -> how many of the node's pods name it
        self._reach: dict[Vertex, dict[str, int]] = {}
        #: PersistentVolume name -> (namespace, claim) it is bound to
        self._pv_claims: dict[str, tuple[str, str]] = {}
        self._pod_source: Any = None
        self._pv_source: Any = None

    # ------------------------------------------------------------------ feeding

    def follow(self, pods: Any, volumes: Any | None) -> None:
        """Keep up with the watch caches of pods and (when served) PersistentVolumes; again after a
        restart of the caches, leaving the ones followed before."""
        for source, listener in ((self._pod_source, self._on_pod), (self._pv_source, self._on_pv)):
            if source is not None and listener in source.listeners:
                source.listeners.remove(listener)
        self._pod_source, self._pv_source = pods, volumes
        pods.listeners.append(self._on_pod)
        self._on_pod(None)
        if volumes is not None:
            volumes.listeners.append(self._on_pv)
            self._on_pv(None)

    def _on_pod(self, ev: Any) -> None:
        try:
            if ev is None:
                self._pods.clear()
                self._reach.clear()
                for bucket in self._pod_source.objects.values():
                    for pod in bucket.values():
                        self.set_pod(pod)
            elif ev.type == "DELETED":
                self.remove_pod(ev.ns, ev.name)
            else:
                self.set_pod(ev.obj)
        except Exception:  # noqa: BLE001 - a malformed object must not stop the cache feeding us
            log.exception("node authorizer graph: pod event not applied")

    def _on_pv(self, ev: Any) -> None:
        try:
            if ev is None:
                self._pv_claims.clear()
                for pv in self._pv_source.objects.get("", {}).values():
                    self.set_pv(pv)
            elif ev.type == "DELETED":
                self._pv_claims.pop(ev.name, None)
            else:
                self.set_pv(ev.obj)
        except Exception:  # noqa: BLE001
            log.exception("node authorizer graph: volume event not applied")

    def set_pod(self, pod: Obj) -> None:
        """Add or update a pod: a pod not bound to a node has no edges (upstream's AddPod)."""
        meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
        key = (meta.get("namespace") or "", meta.get("name") or "")
        node = spec.get("nodeName") or ""
        uid = meta.get("uid") or ""
        ephemeral = len(spec.get("ephemeralContainers") or ())
        known = self._pods.get(key)
        if known is not None and known[:3] == (node, uid, ephemeral):
            return  # what a pod names is immutable but for its ephemeral containers
        self.remove_pod(*key)
        if not node:
            return
        vertices = pod_vertices(pod)
        self._pods[key] = (node, uid, ephemeral, vertices)
        reach = self._reach
        for v in vertices:
            counts = reach.get(v)
            if counts is None:
                counts = reach[v] = {}
            counts[node] = counts.get(node, 0) + 1

    def remove_pod(self, namespace: str, name: str) -> None:
        known = self._pods.pop((namespace, name), None)
        if known is None:
            return
        node, _, _, vertices = known
        for v in vertices:
            counts = self._reach.get(v)
            if counts is None:
                continue
            left = counts.get(node, 0) - 1
            if left > 0:
                counts[node] = left
            else:
                counts.pop(node, None)
                if not counts:
                    del self._reach[v]

    def set_pv(self, pv: Obj) -> None:
        name = (pv.get("metadata") or {}).get("name") or ""
        ref = (pv.get("spec") or {}).get("claimRef") or {}
        if ref.get("name"):
            self._pv_claims[name] = (ref.get("namespace") or "", ref["name"])
        else:
            self._pv_claims.pop(name, None)

    # ------------------------------------------------------------------ questions

    def related(self, node: str, kind: str, namespace: str, name: str) -> bool:
        """Is there a path from the object to the node (upstream's hasPathFrom)?"""
        if kind == POD:
            known = self._pods.get((namespace, name))
            return known is not None and known[0] == node
        if kind == PV:
            claim = self._pv_claims.get(name)
            return claim is not None and self.related(node, PVC, *claim)
        counts = self._reach.get((kind, namespace, name))
        return bool(counts) and node in counts
