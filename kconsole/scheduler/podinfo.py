"""What the scheduler needs to know about a pod, parsed once per pod version.

Upstream keeps a ``PodInfo`` beside each pod with its requests and affinity terms pre-parsed;
every filter and score then reads plain attributes instead of walking the spec. Requests follow
upstream's ``computePodResourceRequest``: the sum over containers (plus restartable init
containers), the max over ordinary init containers, plus overhead. *Non-zero* requests substitute
100m cpu / 200 MiB memory for containers that request none — used for scoring only, as upstream.
Quantities are read with :func:`kconsole.objects.quantity.resource_amount` (cpu in millicores,
everything else in whole units, rounded up), the same parser the API server validates with.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kconsole.objects.quantity import resource_amount
from kconsole.objects.storage import pod_claims, pod_disks
from kconsole.scheduler.matchers import LabelPredicate, NodePredicate, label_selector, match_labels_selector
from kconsole.scheduler.matchers import affinity_node_names, node_selector_term, node_selector_terms

DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_ZONE = "topology.kubernetes.io/zone"


def resource_list(spec: Mapping[str, Any] | None) -> dict[str, int]:
    return {k: resource_amount(k, v) for k, v in (spec or {}).items()}


def _container_requests(c: Mapping[str, Any]) -> dict[str, int]:
    res = c.get("resources") or {}
    req = resource_list(res.get("requests"))
    for k, v in resource_list(res.get("limits")).items():
        req.setdefault(k, v)  # API defaulting: requests default to limits
    return req


def _add(into: dict[str, int], more: Mapping[str, int]) -> None:
    for k, v in more.items():
        into[k] = into.get(k, 0) + v


def _max(into: dict[str, int], more: Mapping[str, int]) -> None:
    for k, v in more.items():
        if v > into.get(k, 0):
            into[k] = v


def pod_requests(spec: Mapping[str, Any], non_zero: bool = False) -> dict[str, int]:
    """Effective requests of a pod spec; ``non_zero`` applies the scoring defaults for cpu/memory."""

    def one(c: Mapping[str, Any]) -> dict[str, int]:
        r = _container_requests(c)
        if non_zero:
            r = {"cpu": r.get("cpu", DEFAULT_MILLI_CPU_REQUEST), "memory": r.get("memory", DEFAULT_MEMORY_REQUEST)}
        return r

    total: dict[str, int] = {}
    for c in spec.get("containers") or ():
        _add(total, one(c))
    sidecars: dict[str, int] = {}
    init_max: dict[str, int] = {}
    for c in spec.get("initContainers") or ():
        r = one(c)
        if c.get("restartPolicy") == "Always":
            _add(sidecars, r)
            _add(total, r)
        else:
            peak = dict(sidecars)
            _add(peak, r)
            _max(init_max, peak)
    _max(total, init_max)
    if not non_zero:
        _add(total, resource_list(spec.get("overhead")))
    return total


class AffinityTerm:
    """A pod (anti-)affinity term: which pods it selects and over which topology domain."""

    __slots__ = ("selector", "namespaces", "namespace_selector", "topology_key", "weight")

    def __init__(self, term: Mapping[str, Any], own_namespace: str, weight: int = 0) -> None:
        self.selector: LabelPredicate = label_selector(term.get("labelSelector"))
        ns_sel = term.get("namespaceSelector")
        names = frozenset(term.get("namespaces") or ())
        if not names and ns_sel is None:
            names = frozenset((own_namespace,))
        self.namespaces = names
        self.namespace_selector: LabelPredicate | None = label_selector(ns_sel) if ns_sel is not None else None
        self.topology_key: str = term.get("topologyKey", "")
        if not self.topology_key:
            raise ValueError("pod affinity term needs a topologyKey")
        self.weight = weight

    def matches(self, pod: PodInfo, ns_labels: Callable[[str], Mapping[str, str]]) -> bool:
        if pod.namespace not in self.namespaces and (
            self.namespace_selector is None or not self.namespace_selector(ns_labels(pod.namespace))
        ):
            return False
        return self.selector(pod.labels)


class SpreadConstraint:
    """A topology spread constraint with its selector compiled (matchLabelKeys folded in)."""

    __slots__ = ("max_skew", "topology_key", "hard", "selector", "min_domains", "honor_affinity", "honor_taints")

    def __init__(self, c: Mapping[str, Any], pod_labels: Mapping[str, str]) -> None:
        self.max_skew = int(c.get("maxSkew", 1))
        if self.max_skew < 1:
            raise ValueError(f"topologySpreadConstraint maxSkew must be >= 1, got {self.max_skew}")
        self.topology_key: str = c.get("topologyKey", "")
        if not self.topology_key:
            raise ValueError("topologySpreadConstraint needs a topologyKey")
        self.hard = c.get("whenUnsatisfiable", "DoNotSchedule") == "DoNotSchedule"
        sel = dict(c.get("labelSelector") or {})
        extra = [{"key": k, "operator": "In", "values": [pod_labels[k]]} for k in c.get("matchLabelKeys") or () if k in pod_labels]
        if extra:
            sel = {**sel, "matchExpressions": list(sel.get("matchExpressions") or []) + extra}
        self.selector: LabelPredicate = label_selector(sel if c.get("labelSelector") is not None or extra else None)
        self.min_domains = int(c.get("minDomains") or 1)
        self.honor_affinity = c.get("nodeAffinityPolicy", "Honor") == "Honor"
        self.honor_taints = c.get("nodeTaintsPolicy", "Ignore") == "Honor"


class PodInfo:
    """A pod plus everything the plugins read from it, parsed once."""

    __slots__ = (
        "pod", "key", "namespace", "name", "uid", "labels", "priority", "requests", "cpu", "mem", "scalar",
        "nz_cpu", "nz_mem", "host_ports", "tolerations", "node_selector", "required_node_affinity",
        "preferred_node_affinity", "has_node_affinity", "affinity_node_names", "affinity", "anti_affinity",
        "preferred_affinity",
        "preferred_anti_affinity", "spread", "images", "node_name", "nominated_node", "scheduler_name",
        "deleting", "preemption_policy", "start_time", "owner", "resource_version", "claims", "disks",
    )

    def __init__(self, pod: dict[str, Any]) -> None:
        meta = pod.get("metadata") or {}
        spec = pod.get("spec") or {}
        status = pod.get("status") or {}
        self.pod = pod
        self.namespace: str = meta.get("namespace") or "default"
        self.name: str = meta.get("name", "")
        self.key = f"{self.namespace}/{self.name}"
        self.uid: str = meta.get("uid", "")
        self.resource_version: str = meta.get("resourceVersion", "")
        self.labels: dict[str, str] = meta.get("labels") or {}
        self.priority: int = int(spec.get("priority") or 0)
        self.requests = pod_requests(spec)
        self.cpu = self.requests.get("cpu", 0)
        self.mem = self.requests.get("memory", 0)
        self.scalar = {k: v for k, v in self.requests.items() if k not in ("cpu", "memory", "pods") and v > 0}
        nz = pod_requests(spec, non_zero=True)
        self.nz_cpu = nz.get("cpu", 0)
        self.nz_mem = nz.get("memory", 0)
        ports = []
        for c in spec.get("containers") or ():
            for p in c.get("ports") or ():
                if p.get("hostPort"):
                    ports.append((p.get("hostIP") or "0.0.0.0", p.get("protocol") or "TCP", int(p["hostPort"])))
        self.host_ports: tuple[tuple[str, str, int], ...] = tuple(ports)
        self.tolerations: list[dict[str, Any]] = spec.get("tolerations") or []
        self.node_selector = match_labels_selector(spec.get("nodeSelector")) if spec.get("nodeSelector") else None
        affinity = spec.get("affinity") or {}
        na = affinity.get("nodeAffinity") or {}
        req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
        self.required_node_affinity: NodePredicate | None = (
            node_selector_terms(req.get("nodeSelectorTerms")) if req is not None else None
        )
        self.preferred_node_affinity: list[tuple[int, NodePredicate]] = [
            (int(t.get("weight", 0)), node_selector_term(t.get("preference") or {}))
            for t in na.get("preferredDuringSchedulingIgnoredDuringExecution") or ()
        ]
        self.has_node_affinity = self.node_selector is not None or self.required_node_affinity is not None
        #: The nodes required affinity confines the pod to by name (a DaemonSet pod's one node), or None.
        self.affinity_node_names = None if req is None else affinity_node_names(req.get("nodeSelectorTerms"))
        pa = affinity.get("podAffinity") or {}
        paa = affinity.get("podAntiAffinity") or {}
        ns = self.namespace
        self.affinity = [AffinityTerm(t, ns) for t in pa.get("requiredDuringSchedulingIgnoredDuringExecution") or ()]
        self.anti_affinity = [AffinityTerm(t, ns) for t in paa.get("requiredDuringSchedulingIgnoredDuringExecution") or ()]
        self.preferred_affinity = [
            AffinityTerm(t.get("podAffinityTerm") or {}, ns, int(t.get("weight", 0)))
            for t in pa.get("preferredDuringSchedulingIgnoredDuringExecution") or ()
        ]
        self.preferred_anti_affinity = [
            AffinityTerm(t.get("podAffinityTerm") or {}, ns, int(t.get("weight", 0)))
            for t in paa.get("preferredDuringSchedulingIgnoredDuringExecution") or ()
        ]
        self.spread = [SpreadConstraint(c, self.labels) for c in spec.get("topologySpreadConstraints") or ()]
        self.images: tuple[str, ...] = tuple(normalized_image(c.get("image", "")) for c in spec.get("containers") or ())
        self.node_name: str = spec.get("nodeName") or ""
        self.nominated_node: str = status.get("nominatedNodeName") or ""
        self.scheduler_name: str = spec.get("schedulerName") or "default-scheduler"
        self.deleting = bool(meta.get("deletionTimestamp"))
        self.preemption_policy: str = spec.get("preemptionPolicy") or "PreemptLowerPriority"
        self.start_time: str = status.get("startTime") or meta.get("creationTimestamp") or ""
        owner = None
        for ref in meta.get("ownerReferences") or ():
            if ref.get("controller"):
                owner = (ref.get("kind", ""), ref.get("name", ""), ref.get("uid", ""))
        self.owner: tuple[str, str, str] | None = owner
        vols = spec.get("volumes")
        #: (claim name, from an ephemeral volume) of the PersistentVolumeClaims the pod uses
        self.claims: tuple[tuple[str, bool], ...] = pod_claims(self.name, vols) if vols else ()
        #: (source kind, source) of the read-write-once disks it mounts (GCE PD, EBS, iSCSI, RBD)
        self.disks: tuple[tuple[str, dict[str, Any]], ...] = pod_disks(vols) if vols else ()

    @property
    def has_pod_affinity(self) -> bool:
        return bool(self.affinity or self.anti_affinity or self.preferred_affinity or self.preferred_anti_affinity)


def normalized_image(image: str) -> str:
    """``nginx`` -> ``docker.io/library/nginx:latest`` as ImageLocality compares names."""
    if not image:
        return image
    name, tag = image, ""
    if "@" not in image:
        slash = image.rfind("/")
        colon = image.rfind(":")
        if colon > slash:
            name, tag = image[:colon], image[colon:]
        else:
            tag = ":latest"
    first = name.split("/", 1)[0]
    if "/" not in name:
        name = "docker.io/library/" + name
    elif "." not in first and ":" not in first and first != "localhost":
        name = "docker.io/" + name
    return name + tag
