"""The scheduler's view of the cluster: one NodeInfo per node, updated incrementally, plus assumed pods.

Upstream's speed comes from never re-deriving node state per pod: a node's requested resources,
pods, host ports and images are kept current as pods come and go. A pod is *assumed* onto its node
the moment the scheduler picks it — before the binding is written — so the very next pod already
sees those resources used. When the informer later reports the bound pod the assumption is
confirmed; when the bind fails it is forgotten.

The scheduling cycle runs without awaiting, so it reads the cache directly: nothing can change
under it between picking a pod and assuming it. That makes upstream's per-cycle snapshot copy
unnecessary here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from operator import itemgetter
from typing import Any

from kconsole.objects.quantity import resource_amount
from kconsole.scheduler.podinfo import LABEL_HOSTNAME, PodInfo, normalized_image

HARD_EFFECTS = ("NoSchedule", "NoExecute")
MAX_CHANGELOG = 200_000


class NodeInfo:
    """A node with the sums the filters and scores read, kept current as pods are added and removed."""

    __slots__ = (
        "name", "node", "labels", "unschedulable", "hard_taints", "soft_taints", "alloc_cpu", "alloc_mem",
        "alloc_pods", "alloc_scalar", "req_cpu", "req_mem", "req_scalar", "nz_cpu", "nz_mem", "pods",
        "free_cpu", "free_mem", "free_pods", "ports", "images", "affinity_pods", "anti_affinity_pods",
        "generation", "index",
    )

    def __init__(self, name: str) -> None:
        self.name = name
        self.node: dict[str, Any] | None = None
        self.labels: dict[str, str] = {}
        self.unschedulable = False
        self.hard_taints: tuple[dict[str, Any], ...] = ()
        self.soft_taints: tuple[dict[str, Any], ...] = ()
        self.alloc_cpu = self.alloc_mem = self.alloc_pods = 0
        self.alloc_scalar: dict[str, int] = {}
        self.req_cpu = self.req_mem = self.nz_cpu = self.nz_mem = 0
        self.req_scalar: dict[str, int] = {}
        self.pods: dict[str, PodInfo] = {}
        self.free_cpu = self.free_mem = self.free_pods = 0
        self.ports: dict[tuple[str, int], set[str]] = {}
        self.images: dict[str, int] = {}
        self.affinity_pods: list[PodInfo] = []
        self.anti_affinity_pods: list[PodInfo] = []
        self.generation = 0
        #: position in Cache.node_list(); -1 for copies and nodes not listed
        self.index = -1

    def set_node(self, node: dict[str, Any]) -> None:
        self.node = node
        meta = node.get("metadata") or {}
        spec = node.get("spec") or {}
        status = node.get("status") or {}
        self.labels = meta.get("labels") or {}
        self.unschedulable = bool(spec.get("unschedulable"))
        taints = spec.get("taints") or ()
        self.hard_taints = tuple(t for t in taints if t.get("effect") in HARD_EFFECTS)
        self.soft_taints = tuple(t for t in taints if t.get("effect") == "PreferNoSchedule")
        alloc = status.get("allocatable") or status.get("capacity") or {}
        amounts = {k: resource_amount(k, v) for k, v in alloc.items()}
        self.alloc_cpu = amounts.pop("cpu", 0)
        self.alloc_mem = amounts.pop("memory", 0)
        self.alloc_pods = amounts.pop("pods", 110 if "pods" not in alloc else 0)
        self.alloc_scalar = amounts
        images: dict[str, int] = {}
        for img in status.get("images") or ():
            for n in img.get("names") or ():
                images[normalized_image(n)] = int(img.get("sizeBytes") or 0)
        self.images = images
        self._refresh_free()

    def _refresh_free(self) -> None:
        self.free_cpu = self.alloc_cpu - self.req_cpu
        self.free_mem = self.alloc_mem - self.req_mem
        self.free_pods = self.alloc_pods - len(self.pods)
        self.generation += 1

    def add_pod(self, pi: PodInfo) -> None:
        if pi.key in self.pods:
            self.remove_pod(self.pods[pi.key])
        self.pods[pi.key] = pi
        self.req_cpu += pi.cpu
        self.req_mem += pi.mem
        self.nz_cpu += pi.nz_cpu
        self.nz_mem += pi.nz_mem
        for k, v in pi.scalar.items():
            self.req_scalar[k] = self.req_scalar.get(k, 0) + v
        for ip, proto, port in pi.host_ports:
            self.ports.setdefault((proto, port), set()).add(ip)
        if pi.affinity or pi.anti_affinity or pi.preferred_affinity or pi.preferred_anti_affinity:
            self.affinity_pods.append(pi)
        if pi.anti_affinity:
            self.anti_affinity_pods.append(pi)
        self._refresh_free()

    def remove_pod(self, pi: PodInfo) -> None:
        cur = self.pods.pop(pi.key, None)
        if cur is None:
            return
        self.req_cpu -= cur.cpu
        self.req_mem -= cur.mem
        self.nz_cpu -= cur.nz_cpu
        self.nz_mem -= cur.nz_mem
        for k, v in cur.scalar.items():
            self.req_scalar[k] = self.req_scalar.get(k, 0) - v
        for ip, proto, port in cur.host_ports:
            ips = self.ports.get((proto, port))
            if ips is not None:
                ips.discard(ip)
                if not ips:
                    del self.ports[(proto, port)]
        if cur in self.affinity_pods:
            self.affinity_pods.remove(cur)
        if cur in self.anti_affinity_pods:
            self.anti_affinity_pods.remove(cur)
        self._refresh_free()

    def clone(self) -> NodeInfo:
        """A copy preemption can remove pods from without touching the cache."""
        c = NodeInfo(self.name)
        for attr in self.__slots__:
            setattr(c, attr, getattr(self, attr))
        c.pods = dict(self.pods)
        c.req_scalar = dict(self.req_scalar)
        c.ports = {k: set(v) for k, v in self.ports.items()}
        c.affinity_pods = list(self.affinity_pods)
        c.anti_affinity_pods = list(self.anti_affinity_pods)
        c.index = -1
        return c

    def ports_conflict(self, ports: Iterable[tuple[str, str, int]]) -> bool:
        for ip, proto, port in ports:
            used = self.ports.get((proto, port))
            if used and (ip == "0.0.0.0" or ip in used or "0.0.0.0" in used):
                return True
        return False


class NodeSpan(list):  # type: ignore[type-arg]
    """Nodes known to be ``node_list()[(start + i) % total]`` of list version ``version``, where
    ``total`` was the list's length: a run of the round-robin search, wrapping past the end.

    Per-node tables indexed like ``node_list()`` (see :mod:`kconsole.scheduler.memo`) can then
    answer for the whole span with one or two slices instead of one lookup per node. Never mutated
    after it is built; anything derived from it (a filtered or concatenated list) is a plain list.
    """

    __slots__ = ("start", "version", "total")

    def __init__(self, nodes: list[NodeInfo], start: int, version: int, total: int) -> None:
        super().__init__(nodes)
        self.start = start
        self.version = version
        self.total = total

    def head(self, n: int) -> NodeSpan:
        return NodeSpan(self[:n], self.start, self.version, self.total)


class NodeSubset(list):  # type: ignore[type-arg]
    """Nodes of ``node_list()`` at ``version`` that are not one run (a filter dropped some, or two
    runs were joined), with their positions taken once: the memoised per-node tables answer the
    score plugins with one C-level pick each instead of reading every node's index again. Never
    mutated after it is built."""

    __slots__ = ("version", "pick")

    def __init__(self, nodes: list[NodeInfo], version: int) -> None:
        super().__init__(nodes)
        self.version = version
        self.pick = itemgetter(*[n.index for n in nodes])


class Cache:
    """Nodes and placed pods (bound or assumed), as the scheduler believes them to be."""

    def __init__(self) -> None:
        self.nodes: dict[str, NodeInfo] = {}
        self._order: list[NodeInfo] | None = []
        self._placed: dict[str, tuple[PodInfo, str]] = {}
        self.assumed: set[str] = set()
        self.namespaces: dict[str, dict[str, str]] = {}
        #: image name -> number of nodes having it (ImageLocality spreads its score by this).
        self.image_nodes: dict[str, int] = {}
        #: nodes with at least one pod carrying (anti-)affinity terms; InterPodAffinity skips work when empty.
        self.affinity_nodes: set[str] = set()
        self.anti_affinity_nodes: set[str] = set()
        #: Bumped on every change; plugins key memoised cluster-wide data by it.
        self.generation = 0
        #: Bumped when node_list() is rebuilt (indices change); with ``changelog`` (indices of nodes
        #: changed since) this lets plugins keep per-node results current incrementally.
        self.list_version = 0
        self.changelog: list[int] = []
        #: names of nodes that are cordoned / carry NoSchedule-NoExecute / PreferNoSchedule taints, so
        #: plugins can answer for every node at once in the common case where there are none
        self.cordoned: set[str] = set()
        self.hard_tainted: set[str] = set()
        self.soft_tainted: set[str] = set()
        #: "namespace/claim" -> placed pods using it (upstream's PVCRefCounts, cluster-wide):
        #: VolumeRestrictions keeps a ReadWriteOncePod claim to one pod with it.
        self.claim_users: dict[str, int] = {}

    # ----------------------------------------------------------------- nodes

    def node_list(self) -> list[NodeInfo]:
        """Nodes in a stable order (arrival); the round-robin search walks this list."""
        if self._order is None or len(self.changelog) > MAX_CHANGELOG:
            self._order = [n for n in self.nodes.values() if n.node is not None]
            for i, n in enumerate(self._order):
                n.index = i
            self.list_version += 1
            self.changelog = []
        return self._order

    def _changed(self, ni: NodeInfo) -> None:
        if ni.index >= 0:
            self.changelog.append(ni.index)

    def add_node(self, node: dict[str, Any]) -> NodeInfo:
        name = node["metadata"]["name"]
        ni = self.nodes.get(name)
        if ni is None:
            ni = self.nodes[name] = NodeInfo(name)
        was_known = ni.node is not None
        if was_known:
            self._count_images(ni, -1)
        ni.set_node(node)
        self._count_images(ni, +1)
        for flag, members in ((ni.unschedulable, self.cordoned), (bool(ni.hard_taints), self.hard_tainted),
                              (bool(ni.soft_taints), self.soft_tainted)):
            if flag:
                members.add(name)
            else:
                members.discard(name)
        if not was_known:
            if self._order is not None:
                ni.index = len(self._order)
                self._order.append(ni)
        else:
            self._changed(ni)
        self.generation += 1
        return ni

    update_node = add_node

    def remove_node(self, name: str) -> None:
        ni = self.nodes.get(name)
        if ni is None:
            return
        self._count_images(ni, -1)
        for members in (self.cordoned, self.hard_tainted, self.soft_tainted):
            members.discard(name)
        ni.index = -1
        if ni.pods:
            ni.node = None  # keep the pods' accounting until they are deleted, as upstream
        else:
            del self.nodes[name]
        self._order = None
        self.generation += 1

    def _count_images(self, ni: NodeInfo, delta: int) -> None:
        for img in ni.images:
            n = self.image_nodes.get(img, 0) + delta
            if n > 0:
                self.image_nodes[img] = n
            else:
                self.image_nodes.pop(img, None)

    def _node_for(self, name: str) -> NodeInfo:
        ni = self.nodes.get(name)
        if ni is None:
            ni = self.nodes[name] = NodeInfo(name)
        return ni

    # ----------------------------------------------------------------- pods

    def _place(self, pi: PodInfo, node_name: str) -> None:
        ni = self._node_for(node_name)
        ni.add_pod(pi)
        self._changed(ni)
        self._placed[pi.key] = (pi, node_name)
        for claim, _ in pi.claims:
            key = f"{pi.namespace}/{claim}"
            self.claim_users[key] = self.claim_users.get(key, 0) + 1
        if ni.affinity_pods:
            self.affinity_nodes.add(node_name)
        if ni.anti_affinity_pods:
            self.anti_affinity_nodes.add(node_name)
        self.generation += 1

    def _unplace(self, key: str) -> PodInfo | None:
        got = self._placed.pop(key, None)
        if got is None:
            return None
        pi, node_name = got
        for claim, _ in pi.claims:
            key = f"{pi.namespace}/{claim}"
            left = self.claim_users.get(key, 0) - 1
            if left > 0:
                self.claim_users[key] = left
            else:
                self.claim_users.pop(key, None)
        ni = self.nodes.get(node_name)
        if ni is not None:
            ni.remove_pod(pi)
            self._changed(ni)
            if not ni.affinity_pods:
                self.affinity_nodes.discard(node_name)
            if not ni.anti_affinity_pods:
                self.anti_affinity_nodes.discard(node_name)
            if ni.node is None and not ni.pods:
                del self.nodes[node_name]
        self.generation += 1
        return pi

    def assume(self, pi: PodInfo, node_name: str) -> None:
        """Count ``pi`` on ``node_name`` before its binding is written."""
        self._unplace(pi.key)
        self._place(pi, node_name)
        self.assumed.add(pi.key)

    def forget(self, pi: PodInfo) -> None:
        """Undo :meth:`assume` after a failed bind."""
        if pi.key in self.assumed:
            self.assumed.discard(pi.key)
            self._unplace(pi.key)

    def is_assumed(self, key: str) -> bool:
        return key in self.assumed

    def set_pod(self, pi: PodInfo) -> None:
        """A bound pod as the informer reports it (confirms an assumption, or moves it)."""
        self.assumed.discard(pi.key)
        self._unplace(pi.key)
        self._place(pi, pi.node_name)

    def remove_pod(self, key: str) -> None:
        self.assumed.discard(key)
        self._unplace(key)

    def placed(self, key: str) -> tuple[PodInfo, str] | None:
        return self._placed.get(key)

    def pod_count(self) -> int:
        return len(self._placed)

    # ----------------------------------------------------------------- namespaces

    def set_namespace(self, ns: Mapping[str, Any], deleted: bool = False) -> None:
        name = (ns.get("metadata") or {}).get("name", "")
        if deleted:
            self.namespaces.pop(name, None)
        else:
            self.namespaces[name] = (ns.get("metadata") or {}).get("labels") or {}
        self.generation += 1

    def namespace_labels(self, name: str) -> dict[str, str]:
        return self.namespaces.get(name) or {"kubernetes.io/metadata.name": name}


def node_hostname(ni: NodeInfo) -> str:
    return ni.labels.get(LABEL_HOSTNAME, ni.name)
