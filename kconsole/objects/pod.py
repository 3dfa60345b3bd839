"""Pod, node, taint and toleration helpers shared by the scheduler, kubelets and controllers.

Each helper mirrors the upstream function the same decision is made with (noted per function),
so a pod is "active", "ready" or "fits" by the same rule in every component. Resource amounts
are ints: cpu in millicores, everything else in whole units (bytes for memory).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kconsole.objects.meta import get_condition, is_being_deleted, parse_time
from kconsole.objects.quantity import NANO, QuantityError, _nanos, parse_quantity
from kconsole.objects.selectors import NodeSelector, selector_from_set

Obj = Mapping[str, Any]

PENDING, RUNNING, SUCCEEDED, FAILED, UNKNOWN = "Pending", "Running", "Succeeded", "Failed", "Unknown"

#: what the scheduler's scoring assumes for containers that request nothing (upstream defaults)
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"
HOSTNAME_LABEL = "kubernetes.io/hostname"
#: The cluster DNS Service address a pod's resolv.conf names: kubeadm's, the tenth of 10.96.0.0/12
#: (the kubelets' clusterDNS, the kube-dns Service of kconsole/addons.py).
CLUSTER_DNS_IP = "10.96.0.10"
#: What marks a kubelet's mirror of a static pod it runs.
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
#: The usage a simulated kubelet publishes on each running pod (kconsole's stand-in for
#: metrics-server): the HPA controller and the metrics API read it, NodeRestriction guards it.
CPU_USAGE_ANNOTATION = "kconsole.dev/cpu-usage"
MEMORY_USAGE_ANNOTATION = "kconsole.dev/memory-usage"
#: On a Node: what runs outside pods (kubelet, container runtime, the OS), which metrics-server counts
#: in the node's usage. Set by the kubelet when it registers the node.
SYSTEM_CPU_USAGE_ANNOTATION = "kconsole.dev/system-cpu-usage"
SYSTEM_MEMORY_USAGE_ANNOTATION = "kconsole.dev/system-memory-usage"
_LEGACY_ZONE_LABEL = "failure-domain.beta.kubernetes.io/zone"
_LEGACY_REGION_LABEL = "failure-domain.beta.kubernetes.io/region"

_EMPTY: dict[str, Any] = {}


# --- pod state ----------------------------------------------------------------------------------


def is_mirror_pod(pod: Obj) -> bool:
    """A kubelet's mirror of a static pod (upstream IsMirrorPod); tolerates malformed metadata."""
    meta = pod.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    return isinstance(annotations, dict) and MIRROR_ANNOTATION in annotations


def pod_phase(pod: Obj) -> str:
    """``status.phase``; ``Pending`` when unset, as the API server initialises new pods."""
    return (pod.get("status") or _EMPTY).get("phase") or PENDING


def is_terminal(pod: Obj) -> bool:
    return pod_phase(pod) in (SUCCEEDED, FAILED)


def is_pod_active(pod: Obj) -> bool:
    """controller.IsPodActive: not Succeeded/Failed and not being deleted."""
    return not is_terminal(pod) and not is_being_deleted(pod)


def is_pod_ready(pod: Obj) -> bool:
    """podutil.IsPodReady: the Ready condition is True."""
    cond = get_condition(pod.get("status"), "Ready")
    return cond is not None and cond.get("status") == "True"


def is_pod_available(pod: Obj, min_ready_seconds: float, now: float) -> bool:
    """podutil.IsPodAvailable: ready for at least ``min_ready_seconds`` (Deployment availability)."""
    cond = get_condition(pod.get("status"), "Ready")
    if cond is None or cond.get("status") != "True":
        return False
    if min_ready_seconds <= 0:
        return True
    since = cond.get("lastTransitionTime")
    return bool(since) and parse_time(since) + min_ready_seconds <= now


def is_pod_scheduled(pod: Obj) -> bool:
    return bool((pod.get("spec") or _EMPTY).get("nodeName"))


def pod_node_name(pod: Obj) -> str:
    return (pod.get("spec") or _EMPTY).get("nodeName") or ""


def pod_scheduler_name(pod: Obj) -> str:
    return (pod.get("spec") or _EMPTY).get("schedulerName") or "default-scheduler"


def pod_priority(pod: Obj) -> int:
    return int((pod.get("spec") or _EMPTY).get("priority") or 0)


# --- resources ----------------------------------------------------------------------------------


def _add_into(acc: dict[str, int], rl: Mapping[str, Any] | None) -> None:
    for res, q in (rl or _EMPTY).items():
        acc[res] = acc.get(res, 0) + _nanos(q)


def _max_into(acc: dict[str, int], rl: Mapping[str, int]) -> None:
    for res, n in rl.items():
        if res not in acc or n > acc[res]:
            acc[res] = n


def _container_requests(c: Obj, non_zero: bool) -> Mapping[str, Any]:
    reqs = (c.get("resources") or _EMPTY).get("requests") or _EMPTY
    if not non_zero:
        return reqs
    out = dict(reqs)
    if "cpu" not in out:
        out["cpu"] = f"{DEFAULT_MILLI_CPU_REQUEST}m"
    if "memory" not in out:
        out["memory"] = DEFAULT_MEMORY_REQUEST
    return out


def _to_amounts(nanos: Mapping[str, int]) -> dict[str, int]:
    return {
        res: -(-n // 10**6) if res == "cpu" else -(-n // NANO)
        for res, n in nanos.items()
    }


def pod_requests(pod: Obj, non_zero: bool = False) -> dict[str, int]:
    """resourcehelper.PodRequests: what the pod reserves on a node.

    ``max(sum of containers, each init container's need)`` + ``spec.overhead``, where
    restartable (sidecar) init containers keep running: they add to the app containers' sum and
    to every later init container's need. With ``non_zero`` containers that request no cpu or
    memory count as 100m / 200Mi, as upstream's scoring assumes.
    """
    spec = pod.get("spec") or _EMPTY
    reqs: dict[str, int] = {}
    for c in spec.get("containers") or ():
        _add_into(reqs, _container_requests(c, non_zero))
    sidecars: dict[str, int] = {}
    init_max: dict[str, int] = {}
    for c in spec.get("initContainers") or ():
        own = _container_requests(c, non_zero)
        if c.get("restartPolicy") == "Always":
            _add_into(reqs, own)
            _add_into(sidecars, own)
            need = dict(sidecars)
        else:
            need = dict(sidecars)
            _add_into(need, own)
        _max_into(init_max, need)
    _max_into(reqs, init_max)
    _add_into(reqs, spec.get("overhead"))
    return _to_amounts(reqs)


#: What an idle container uses: CPU millicores and memory MiB, inclusive ranges.
IDLE_CPU_M = (1, 3)
IDLE_MEMORY_MI = (3, 15)


def idle_usage(pod: Obj) -> tuple[int, int]:
    """(CPU millicores, memory bytes) the pod's containers use idle, as an idle nginx or busybox
    shows in ``kubectl top``; fixed per pod uid and container name, so the kubelet and the metrics
    API arrive at the same figures without the kubelet writing a value that never changes."""
    meta = pod.get("metadata") or _EMPTY
    uid = meta.get("uid") or meta.get("name") or ""
    cpu = mem = 0
    for c in (pod.get("spec") or _EMPTY).get("containers") or (_EMPTY,):
        h = zlib.crc32(f"{uid}/{c.get('name', '')}".encode())
        cpu += IDLE_CPU_M[0] + h % (IDLE_CPU_M[1] - IDLE_CPU_M[0] + 1)
        mem += IDLE_MEMORY_MI[0] + (h >> 8) % (IDLE_MEMORY_MI[1] - IDLE_MEMORY_MI[0] + 1)
    return cpu, mem * 1024 * 1024


def published_usage(obj: Obj, cpu_key: str = CPU_USAGE_ANNOTATION,
                    memory_key: str = MEMORY_USAGE_ANNOTATION) -> tuple[float, float] | None:
    """(cores, bytes) a kubelet published on ``obj`` under the two annotations; None when either is
    missing or unreadable."""
    annotations = (obj.get("metadata") or _EMPTY).get("annotations") or _EMPTY
    cpu, memory = annotations.get(cpu_key), annotations.get(memory_key)
    if cpu is None or memory is None:
        return None
    try:
        return float(parse_quantity(cpu)), float(parse_quantity(memory))
    except QuantityError:
        return None


def unpublished_usage(pod: Obj) -> tuple[int, int] | None:
    """What metrics show for a running pod whose kubelet published no usage: the idle use of a pod
    that requests neither CPU nor memory (its kubelet need not write it), else nothing yet."""
    req = pod_requests(pod)
    return None if req.get("cpu", 0) > 0 or req.get("memory", 0) > 0 else idle_usage(pod)


def running_usage(pod: Obj) -> tuple[float, float] | None:
    """(cores, bytes) a running pod uses as its kubelet reports it (published, or an idle pod's
    steady use), or None: not running, or nothing reported yet."""
    if (pod.get("status") or _EMPTY).get("phase") != "Running":
        return None
    published = published_usage(pod)
    if published is None:
        idle = unpublished_usage(pod)
        return None if idle is None else (idle[0] / 1000, float(idle[1]))
    return published


def pod_limits(pod: Obj) -> dict[str, int]:
    """Sum of container limits (init containers by the same max rule), plus overhead for the
    resources that have a limit (upstream PodLimits)."""
    spec = pod.get("spec") or _EMPTY
    total: dict[str, int] = {}
    for c in spec.get("containers") or ():
        _add_into(total, (c.get("resources") or _EMPTY).get("limits"))
    init_max: dict[str, int] = {}
    for c in spec.get("initContainers") or ():
        own: dict[str, int] = {}
        _add_into(own, (c.get("resources") or _EMPTY).get("limits"))
        _max_into(init_max, own)
    _max_into(total, init_max)
    for res, q in (spec.get("overhead") or _EMPTY).items():
        if res in total:
            total[res] += _nanos(q)
    return _to_amounts(total)


def node_allocatable(node: Obj) -> dict[str, int]:
    """``status.allocatable`` (``capacity`` if a node reports none) as ints; ``pods`` included."""
    status = node.get("status") or _EMPTY
    rl = status.get("allocatable") or status.get("capacity") or _EMPTY
    nanos: dict[str, int] = {}
    _add_into(nanos, rl)
    return _to_amounts(nanos)


# --- ports --------------------------------------------------------------------------------------


def host_ports(pod: Obj) -> list[tuple[str, str, int]]:
    """``(hostIP, protocol, hostPort)`` of every container port with a hostPort, as the NodePorts
    plugin sees them: empty hostIP is ``0.0.0.0``, empty protocol is ``TCP``."""
    spec = pod.get("spec") or _EMPTY
    out = []
    for group in ("initContainers", "containers"):
        for c in spec.get(group) or ():
            for p in c.get("ports") or ():
                hp = p.get("hostPort") or 0
                if hp > 0:
                    out.append((p.get("hostIP") or "0.0.0.0", p.get("protocol") or "TCP", int(hp)))
    return out


def host_ports_conflict(a: tuple[str, str, int], b: tuple[str, str, int]) -> bool:
    """Same port and protocol, and the same IP or either binds every address."""
    return a[1] == b[1] and a[2] == b[2] and (a[0] == b[0] or a[0] == "0.0.0.0" or b[0] == "0.0.0.0")


# --- taints and tolerations ---------------------------------------------------------------------


def tolerates(toleration: Obj, taint: Obj) -> bool:
    """v1.Toleration.ToleratesTaint: effect and key must match when set; ``Exists`` ignores the
    value, ``Equal`` (or empty) compares it; an empty key with ``Exists`` tolerates everything."""
    effect = toleration.get("effect") or ""
    if effect and effect != (taint.get("effect") or ""):
        return False
    key = toleration.get("key") or ""
    if key and key != (taint.get("key") or ""):
        return False
    op = toleration.get("operator") or "Equal"
    if op == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return op == "Exists"


def tolerations_tolerate_taint(tolerations: Iterable[Obj] | None, taint: Obj) -> bool:
    return any(tolerates(t, taint) for t in tolerations or ())


def find_untolerated_taint(
    taints: Iterable[Obj] | None,
    tolerations: Iterable[Obj] | None,
    effects: Iterable[str] | Callable[[Obj], bool] | None = None,
) -> Obj | None:
    """v1helper.FindMatchingUntoleratedTaint: the first taint (with an effect in ``effects``, or
    passing the filter function) that no toleration tolerates; None when all are tolerated."""
    tols = list(tolerations or ())
    if effects is None:
        keep: Callable[[Obj], bool] = lambda _t: True  # noqa: E731
    elif callable(effects):
        keep = effects
    else:
        wanted = frozenset(effects)
        keep = lambda t: t.get("effect") in wanted  # noqa: E731
    for taint in taints or ():
        if keep(taint) and not tolerations_tolerate_taint(tols, taint):
            return taint
    return None


def node_taints(node: Obj) -> list[dict[str, Any]]:
    return (node.get("spec") or _EMPTY).get("taints") or []


def taint_string(taint: Obj) -> str:
    """``key=value:Effect`` (``key:Effect`` without a value), as kubectl prints and takes taints."""
    key, value, effect = taint.get("key") or "", taint.get("value") or "", taint.get("effect") or ""
    return f"{key}={value}:{effect}" if value else f"{key}:{effect}"


def no_execute_toleration_seconds(taints: Iterable[Obj] | None, tolerations: Iterable[Obj] | None) -> float | None:
    """How long a pod may stay on a node with these NoExecute taints (the taint manager's rule).

    ``0.0`` when some NoExecute taint is not tolerated (evict now); ``None`` when all are
    tolerated forever; otherwise the smallest ``tolerationSeconds`` among matching tolerations
    (negative values count as 0).
    """
    tols = list(tolerations or ())
    shortest: float | None = None
    for taint in taints or ():
        if taint.get("effect") != "NoExecute":
            continue
        matching = [t for t in tols if tolerates(t, taint)]
        if not matching:
            return 0.0
        for t in matching:
            secs = t.get("tolerationSeconds")
            if secs is None:
                continue
            secs = max(float(secs), 0.0)
            if shortest is None or secs < shortest:
                shortest = secs
    return shortest


# --- nodes --------------------------------------------------------------------------------------


def node_ready_condition(node: Obj) -> dict[str, Any] | None:
    return get_condition(node.get("status"), "Ready")


def is_node_ready(node: Obj) -> bool:
    cond = node_ready_condition(node)
    return cond is not None and cond.get("status") == "True"


def is_node_unschedulable(node: Obj) -> bool:
    return bool((node.get("spec") or _EMPTY).get("unschedulable"))


def node_zone(node: Obj) -> str:
    """``topology.kubernetes.io/zone`` (or its deprecated beta label); ``""`` if unlabelled."""
    labels = (node.get("metadata") or _EMPTY).get("labels") or _EMPTY
    return labels.get(ZONE_LABEL) or labels.get(_LEGACY_ZONE_LABEL) or ""


def node_region(node: Obj) -> str:
    labels = (node.get("metadata") or _EMPTY).get("labels") or _EMPTY
    return labels.get(REGION_LABEL) or labels.get(_LEGACY_REGION_LABEL) or ""


def node_zone_key(node: Obj) -> str:
    """utilnode.GetZoneKey: region and zone together (zones are only unique within a region)."""
    region, zone = node_region(node), node_zone(node)
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


class RequiredNodeAffinity:
    """A pod's hard node constraints compiled once: ``spec.nodeSelector`` AND
    ``requiredDuringSchedulingIgnoredDuringExecution`` (nodeaffinity.GetRequiredNodeAffinity)."""

    __slots__ = ("label_selector", "node_selector")

    def __init__(self, pod: Obj) -> None:
        spec = pod.get("spec") or _EMPTY
        ns = spec.get("nodeSelector")
        self.label_selector = selector_from_set(ns) if ns else None
        required = (((spec.get("affinity") or _EMPTY).get("nodeAffinity") or _EMPTY)
                    .get("requiredDuringSchedulingIgnoredDuringExecution"))
        self.node_selector = NodeSelector(required) if required is not None else None

    def matches(self, node: Obj) -> bool:
        if self.label_selector is not None:
            labels = (node.get("metadata") or _EMPTY).get("labels") or _EMPTY
            if not self.label_selector.matches(labels):
                return False
        return self.node_selector is None or self.node_selector.matches(node)


def pod_matches_node(pod: Obj, node: Obj) -> bool:
    """Whether ``node`` satisfies the pod's nodeSelector and required node affinity."""
    return RequiredNodeAffinity(pod).matches(node)


#: Volume sources that name a Secret, and the field holding its name (upstream's VisitPodSecretNames).
_SECRET_VOLUME_FIELDS = (("azureFile", "secretName"), ("cephfs", "secretRef"), ("cinder", "secretRef"),
                         ("flexVolume", "secretRef"), ("rbd", "secretRef"), ("iscsi", "secretRef"),
                         ("scaleIO", "secretRef"), ("storageos", "secretRef"), ("csi", "nodePublishSecretRef"))


def _all_containers(spec: Obj) -> Iterable[Obj]:
    for key in ("initContainers", "containers", "ephemeralContainers"):
        yield from spec.get(key) or ()


def pod_secret_names(pod: Obj) -> set[str]:
    """Every Secret a pod names: image pull secrets, env and envFrom, secret and projected volumes and
    the volume plugins' secret references, in all its containers (upstream's VisitPodSecretNames)."""
    spec = pod.get("spec") or {}
    names = {ref.get("name") or "" for ref in spec.get("imagePullSecrets") or ()}
    for c in _all_containers(spec):
        for source in c.get("envFrom") or ():
            names.add((source.get("secretRef") or {}).get("name") or "")
        for var in c.get("env") or ():
            names.add(((var.get("valueFrom") or {}).get("secretKeyRef") or {}).get("name") or "")
    for vol in spec.get("volumes") or ():
        names.add((vol.get("secret") or {}).get("secretName") or "")
        for source in (vol.get("projected") or {}).get("sources") or ():
            names.add((source.get("secret") or {}).get("name") or "")
        for kind, field in _SECRET_VOLUME_FIELDS:
            src = vol.get(kind)
            if src:
                ref = src.get(field)
                names.add(ref if isinstance(ref, str) else (ref or {}).get("name") or "")
    names.discard("")
    return names


def pod_configmap_names(pod: Obj) -> set[str]:
    """Every ConfigMap a pod names: env and envFrom, configMap and projected volumes, in all its
    containers (upstream's VisitPodConfigmapNames)."""
    spec = pod.get("spec") or {}
    names: set[str] = set()
    for c in _all_containers(spec):
        for source in c.get("envFrom") or ():
            names.add((source.get("configMapRef") or {}).get("name") or "")
        for var in c.get("env") or ():
            names.add(((var.get("valueFrom") or {}).get("configMapKeyRef") or {}).get("name") or "")
    for vol in spec.get("volumes") or ():
        names.add((vol.get("configMap") or {}).get("name") or "")
        for source in (vol.get("projected") or {}).get("sources") or ():
            names.add((source.get("configMap") or {}).get("name") or "")
    names.discard("")
    return names
