"""Scheme defaults of PodSpec and Container, shared by Pods and every pod template.

These are upstream's SetDefaults_PodSpec / SetDefaults_Container (and friends) as they apply to
the JSON wire form; the Pod-only ones (enableServiceLinks, requests from limits, hostNetwork
hostPorts) are in :func:`default_pod_only`, and the QoS class a new Pod's status reports is
:func:`qos_class`.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Any

from kconsole.objects.quantity import QuantityError, parse_quantity

Obj = dict[str, Any]

CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")
PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
QOS_RESOURCES = ("cpu", "memory")
DEFAULT_MODE = 420  # 0644


def image_tag(image: str) -> str:
    """The tag docker's reference parser would find: "latest" when there is neither tag nor digest."""
    name, at, _digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        return last.rsplit(":", 1)[1]
    return "" if at else "latest"


def default_probe(probe: Obj) -> None:
    probe.setdefault("timeoutSeconds", 1)
    probe.setdefault("periodSeconds", 10)
    probe.setdefault("successThreshold", 1)
    probe.setdefault("failureThreshold", 3)
    http = probe.get("httpGet")
    if isinstance(http, dict):
        http.setdefault("path", "/")
        http.setdefault("scheme", "HTTP")


def default_container(c: Obj) -> None:
    if not c.get("terminationMessagePath"):
        c["terminationMessagePath"] = "/dev/termination-log"
    if not c.get("terminationMessagePolicy"):
        c["terminationMessagePolicy"] = "File"
    if not c.get("imagePullPolicy"):
        c["imagePullPolicy"] = "Always" if image_tag(str(c.get("image") or "")) == "latest" else "IfNotPresent"
    if not isinstance(c.get("resources"), dict):
        c["resources"] = {}
    for port in c.get("ports") or ():
        if isinstance(port, dict) and not port.get("protocol"):
            port["protocol"] = "TCP"
    for probe_key in PROBES:
        probe = c.get(probe_key)
        if isinstance(probe, dict):
            default_probe(probe)
    for env in c.get("env") or ():
        value_from = (env or {}).get("valueFrom") if isinstance(env, dict) else None
        if not isinstance(value_from, dict):
            continue
        field_ref = value_from.get("fieldRef")
        if isinstance(field_ref, dict) and not field_ref.get("apiVersion"):
            field_ref["apiVersion"] = "v1"
        default_divisor(value_from.get("resourceFieldRef"))


def default_divisor(ref: Any) -> None:
    """A resourceFieldRef's divisor: Go's zero Quantity, which 1.32 prints as ``"0"`` (meaning 1)."""
    if isinstance(ref, dict) and ref.get("divisor") is None:
        ref["divisor"] = "0"


def _default_downward_items(source: Any) -> None:
    for item in (source.get("items") or ()) if isinstance(source, dict) else ():
        if isinstance(item, dict):
            default_divisor(item.get("resourceFieldRef"))


def default_volume(v: Obj) -> None:
    sources = [k for k in v if k != "name"]
    if not sources:
        v["emptyDir"] = {}
        return
    for key in ("secret", "configMap", "projected", "downwardAPI"):
        src = v.get(key)
        if isinstance(src, dict) and src.get("defaultMode") is None:
            src["defaultMode"] = DEFAULT_MODE
    host_path = v.get("hostPath")
    if isinstance(host_path, dict) and host_path.get("type") is None:
        host_path["type"] = ""
    ephemeral = v.get("ephemeral")
    if isinstance(ephemeral, dict) and isinstance(ephemeral.get("volumeClaimTemplate"), dict):
        null_timestamp(ephemeral["volumeClaimTemplate"])
    _default_downward_items(v.get("downwardAPI"))
    projected = v.get("projected")
    for source in (projected.get("sources") or ()) if isinstance(projected, dict) else ():
        if isinstance(source, dict):
            _default_downward_items(source.get("downwardAPI"))


def default_pod_spec(spec: Obj) -> None:
    """SetDefaults_PodSpec plus the defaults of everything a PodSpec contains."""
    if not spec.get("dnsPolicy"):
        spec["dnsPolicy"] = "ClusterFirst"
    if not spec.get("restartPolicy"):
        spec["restartPolicy"] = "Always"
    if not isinstance(spec.get("securityContext"), dict):
        spec["securityContext"] = {}
    if spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = 30
    if not spec.get("schedulerName"):
        spec["schedulerName"] = "default-scheduler"
    if spec.get("serviceAccount") and not spec.get("serviceAccountName"):
        spec["serviceAccountName"] = spec["serviceAccount"]
    for key in CONTAINER_LISTS:
        for c in spec.get(key) or ():
            if isinstance(c, dict):
                default_container(c)
    for v in spec.get("volumes") or ():
        if isinstance(v, dict):
            default_volume(v)


def default_pod_template(template: Obj | None) -> None:
    if isinstance(template, dict):
        null_timestamp(template)
        if isinstance(template.get("spec"), dict):
            default_pod_spec(template["spec"])


#: ObjectMeta's fields before creationTimestamp, in the Go struct's (and so the JSON's) order.
_META_BEFORE_TIMESTAMP = ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation")


def null_timestamp(embedded: Obj) -> None:
    """An embedded ObjectMeta (a pod template's, a jobTemplate's, a claim template's) as 1.32 writes
    it: Go's zero creationTimestamp, which its encoder writes as ``null`` (the struct is never
    omitted, so a template without metadata gets ``metadata: {creationTimestamp: null}``). Hashes and
    template comparisons ignore it (:func:`kconsole.objects.names.pod_template_hash`), as the Go
    structs they compare cannot tell it from absent."""
    meta = embedded.get("metadata")
    if meta is None:
        embedded["metadata"] = {"creationTimestamp": None}
        return
    if type(meta) is not dict or "creationTimestamp" in meta:
        return
    ordered = {k: meta[k] for k in _META_BEFORE_TIMESTAMP if k in meta}
    ordered["creationTimestamp"] = None
    for key, value in meta.items():
        ordered.setdefault(key, value)
    embedded["metadata"] = ordered


def default_claim_template(claim: Any) -> Any:
    """A StatefulSet's claim template as SetDefaults_PersistentVolumeClaim leaves it (upstream's
    defaulters recurse into it): the null creationTimestamp, volumeMode Filesystem, phase Pending."""
    if not isinstance(claim, dict):
        return claim
    null_timestamp(claim)
    claim_spec = claim.get("spec")
    if isinstance(claim_spec, dict) and not claim_spec.get("volumeMode"):
        claim_spec["volumeMode"] = "Filesystem"
    status = claim.setdefault("status", {})
    if isinstance(status, dict) and not status.get("phase"):
        status["phase"] = "Pending"
    return claim


def default_pod_only(spec: Obj) -> None:
    """SetDefaults_Pod: what a Pod gets that a template does not."""
    for key in ("initContainers", "containers"):
        for c in spec.get(key) or ():
            if not isinstance(c, dict):
                continue
            resources = c.get("resources") or {}
            limits = resources.get("limits")
            if isinstance(limits, dict) and limits:
                requests = resources.setdefault("requests", {})
                if isinstance(requests, dict):
                    for name, value in limits.items():
                        requests.setdefault(name, value)
            if spec.get("hostNetwork"):
                for port in c.get("ports") or ():
                    if isinstance(port, dict) and not port.get("hostPort") and port.get("containerPort"):
                        port["hostPort"] = port["containerPort"]
    if spec.get("enableServiceLinks") is None:
        spec["enableServiceLinks"] = True


@lru_cache(maxsize=4096)
def _positive_str(value: str) -> Fraction | None:
    try:
        q = parse_quantity(value)
    except (QuantityError, TypeError, ValueError):
        return None
    return q if q > 0 else None


def _positive(value: Any) -> Fraction | None:
    """A positive amount, or None; the same few strings repeat on every pod, so they are cached."""
    if isinstance(value, str):
        return _positive_str(value)
    try:
        q = parse_quantity(value)
    except (QuantityError, TypeError, ValueError):
        return None
    return q if q > 0 else None


#: QoS by the containers' (requests, limits) strings: pods of one template all ask the same.
_QOS_CACHE: dict[tuple[Any, ...], str] = {}
_QOS_CACHE_SIZE = 4096


def _qos_key(spec: Obj) -> tuple[Any, ...] | None:
    key: list[Any] = []
    for field in ("containers", "initContainers"):
        for c in spec.get(field) or ():
            resources = c.get("resources") if type(c) is dict else None
            if not resources:
                key.append(None)
                continue
            if type(resources) is not dict:
                return None
            requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
            if type(requests) is not dict or type(limits) is not dict:
                return None
            key.append((tuple(requests.items()), tuple(limits.items())))
        key.append("|")
    try:
        hash(tuple(key))
    except TypeError:
        return None
    return tuple(key)


def qos_class(spec: Obj) -> str:
    """upstream GetPodQOS: BestEffort without cpu/memory amounts, Guaranteed when every container
    limits both and requests equal limits, Burstable otherwise."""
    key = _qos_key(spec)
    if key is None:
        return _qos_class(spec)
    found = _QOS_CACHE.get(key)
    if found is None:
        if len(_QOS_CACHE) >= _QOS_CACHE_SIZE:
            _QOS_CACHE.clear()
        found = _QOS_CACHE[key] = _qos_class(spec)
    return found


def _qos_class(spec: Obj) -> str:
    requests: dict[str, Fraction] = {}
    limits: dict[str, Fraction] = {}
    guaranteed = True
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or ():
            resources = (c or {}).get("resources") or {}
            for name, value in (resources.get("requests") or {}).items():
                q = _positive(value) if name in QOS_RESOURCES else None
                if q is not None:
                    requests[name] = requests.get(name, Fraction(0)) + q
            found: set[str] = set()
            for name, value in (resources.get("limits") or {}).items():
                q = _positive(value) if name in QOS_RESOURCES else None
                if q is not None:
                    found.add(name)
                    limits[name] = limits.get(name, Fraction(0)) + q
            if not found.issuperset(QOS_RESOURCES):
                guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and all(limits.get(name) == q for name, q in requests.items()) and len(requests) == len(limits):
        return "Guaranteed"
    return "Burstable"
