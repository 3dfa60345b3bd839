"""EndpointSlice and Endpoints controllers: a Service's selector becomes the addresses behind it.

For every Service with a selector, the pods it selects that have an IP and are not terminal
become endpoints: ``ready`` (pod Ready, not terminating), ``serving`` (pod Ready) and
``terminating`` (being deleted) as upstream's EndpointSlice conditions, with the ports resolved
per pod (a named ``targetPort`` looks the name up in the pod's container ports; pods that do
not have it get no such port). Endpoints are grouped by their port list and cut into slices of
at most 100 (``settings["max_endpoints_per_slice"]``), labelled ``kubernetes.io/service-name``
and ``endpointslice.kubernetes.io/managed-by``, owned by the Service (so the garbage collector
removes them with it). A Service with nothing behind it keeps one empty placeholder slice.
Headless Services (``clusterIP: None``) get the same, labelled ``service.kubernetes.io/headless``.

:class:`EndpointsController` keeps the legacy ``v1 Endpoints`` object named after the Service:
ready addresses and not-ready addresses per port set; terminating pods left out unless the
Service publishes not-ready addresses; at most 1,000 addresses (then annotated ``truncated``).

Both annotate what they write with ``endpoints.kubernetes.io/last-change-trigger-time`` as upstream's
TriggerTimeTracker computes it: the Service's creation for a Service first seen, then the earliest
change (a pod's Ready transition, the Service's creation) since the previous sync; none when nothing
changed. The ``kubernetes`` Service's endpoints, written by the API server, carry none.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from kconsole.client import SharedInformer, StatusError, is_already_exists, is_forbidden, is_not_found
from kconsole.controllers.base import Controller, ControllerContext
from kconsole.objects.meta import deep_copy, owner_ref
from kconsole.objects.pod import is_pod_ready, is_terminal, node_zone
from kconsole.objects.selectors import selector_from_set

log = logging.getLogger(__name__)

Obj = dict[str, Any]

SERVICE_NAME_LABEL = "kubernetes.io/service-name"
MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by"
MANAGED_BY = "endpointslice-controller.k8s.io"
HEADLESS_LABEL = "service.kubernetes.io/headless"
OVER_CAPACITY = "endpoints.kubernetes.io/over-capacity"
MAX_ENDPOINTS_PER_SLICE = 100
MAX_ENDPOINTS_ADDRESSES = 1000
TRIGGER_TIME = "endpoints.kubernetes.io/last-change-trigger-time"


# ---------------------------------------------------------------------- shared reading of pods


def selects(svc: Obj) -> dict[str, str] | None:
    """The Service's selector, or None when it has none (its endpoints are managed by hand)."""
    spec = svc.get("spec") or {}
    if spec.get("type") == "ExternalName":
        return None
    return spec.get("selector") or None


def is_headless(svc: Obj) -> bool:
    return (svc.get("spec") or {}).get("clusterIP") == "None"


def find_port(pod: Obj, svc_port: Obj) -> int | None:
    """podutil.FindPort: a numeric targetPort as is; a named one from the pod's container ports."""
    target = svc_port.get("targetPort", svc_port.get("port"))
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    protocol = svc_port.get("protocol") or "TCP"
    spec = pod.get("spec") or {}
    for container in (spec.get("containers") or []) + [c for c in spec.get("initContainers") or ()
                                                        if c.get("restartPolicy") == "Always"]:
        for port in container.get("ports") or ():
            if port.get("name") == target and (port.get("protocol") or "TCP") == protocol:
                return int(port["containerPort"])
    return None


def endpoint_ports(pod: Obj, svc: Obj) -> list[Obj]:
    out = []
    for sp in (svc.get("spec") or {}).get("ports") or ():
        number = find_port(pod, sp)
        if number is None:
            continue
        port: Obj = {"name": sp.get("name") or "", "port": number, "protocol": sp.get("protocol") or "TCP"}
        if sp.get("appProtocol"):
            port["appProtocol"] = sp["appProtocol"]
        out.append(port)
    return out


def pod_ip(pod: Obj) -> str:
    status = pod.get("status") or {}
    return status.get("podIP") or next((p.get("ip") for p in status.get("podIPs") or () if p.get("ip")), "")


def should_be_in_endpoints(pod: Obj, include_terminating: bool) -> bool:
    """endpointsliceutil.ShouldPodBeInEndpoints."""
    if is_terminal(pod) or not pod_ip(pod):
        return False
    return include_terminating or not pod["metadata"].get("deletionTimestamp")


def hostname_for(pod: Obj, svc: Obj) -> str:
    """A pod's hostname is published when its subdomain names this Service (ShouldSetHostname)."""
    spec = pod.get("spec") or {}
    if spec.get("hostname") and spec.get("subdomain") == svc["metadata"]["name"]:
        return str(spec["hostname"])
    return ""


def target_ref(pod: Obj) -> Obj:
    meta = pod["metadata"]
    return {"kind": "Pod", "namespace": meta.get("namespace", ""), "name": meta["name"], "uid": meta.get("uid", "")}


def _pod_signature(pod: Obj) -> tuple[Any, ...]:
    """What about a pod can change its endpoints (compared with ``==``: the labels as a dict)."""
    meta, spec, status = pod["metadata"], pod.get("spec") or {}, pod.get("status") or {}
    return (meta.get("labels") or {}, pod_ip(pod), is_pod_ready(pod),
            bool(meta.get("deletionTimestamp")), status.get("phase"), spec.get("nodeName"), spec.get("hostname"),
            spec.get("subdomain"))


class _ServiceEndpointsBase(Controller):
    """Services, pods and their handlers: pod changes enqueue the Services that select the pod."""

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.services = self.informer("services")
        self.pods = self.informer("pods")
        self.services.add_event_handler(**self.handlers())
        self.pods.add_event_handler(on_add=self._pod_changed, on_update=self._pod_updated,
                                    on_delete=self._pod_changed)
        self.trigger_times = TriggerTimeTracker()

    def _pod_updated(self, old: Obj, new: Obj) -> None:
        # Most pods are selected by no Service (a Deployment's 10,000 replicas without one): then no
        # change of theirs can matter, and comparing them is all the work an update would cost.
        if old is new or not self._selecting_services(new["metadata"].get("namespace") or ""):
            return
        if _pod_signature(old) != _pod_signature(new):
            self._pod_changed(new, old)

    def _selecting_services(self, ns: str) -> bool:
        return any(selects(svc) is not None for svc in self.services.list_by_index("namespace", ns))

    def _pod_changed(self, pod: Obj, old: Obj | None = None) -> None:
        ns = pod["metadata"].get("namespace") or ""
        label_sets = [pod["metadata"].get("labels") or {}]
        if old is not None:
            label_sets.append(old["metadata"].get("labels") or {})
        for svc in self.services.list_by_index("namespace", ns):
            sel = selects(svc)
            if sel is None:
                continue
            matcher = selector_from_set(sel)
            if any(matcher.matches(labels) for labels in label_sets):
                self.enqueue(svc)

    def selected_pods(self, svc: Obj) -> list[Obj]:
        sel = selects(svc)
        if sel is None:
            return []
        matcher = selector_from_set(sel)
        ns = svc["metadata"].get("namespace") or ""
        pods = [p for p in self.pods.list_by_index("namespace", ns)
                if matcher.matches(p["metadata"].get("labels") or {})]
        pods.sort(key=lambda p: p["metadata"]["name"])
        return pods


def _ready_transition(pod: Obj) -> str:
    """getPodTriggerTime: the Ready condition's lastTransitionTime ("" without one)."""
    for cond in (pod.get("status") or {}).get("conditions") or ():
        if cond.get("type") == "Ready":
            return str(cond.get("lastTransitionTime") or "")
    return ""


class TriggerTimeTracker:
    """upstream's TriggerTimeTracker: per Service, the trigger times seen at its previous sync."""

    def __init__(self) -> None:
        self._states: dict[str, tuple[dict[str, str], str]] = {}

    def compute(self, key: str, svc: Obj, pods: list[Obj]) -> str:
        """ComputeEndpointLastChangeTriggerTime: "" means no annotation (times are RFC 3339 in UTC, so
        they compare as strings)."""
        state = self._states.get(key)
        last_pods, last_service = state if state is not None else ({}, "")
        changed = ""
        pod_times: dict[str, str] = {}
        for pod in pods:
            stamp = _ready_transition(pod)
            if stamp:
                name = pod["metadata"]["name"]
                pod_times[name] = stamp
                if stamp > last_pods.get(name, "") and (not changed or stamp < changed):
                    changed = stamp
        service_time = str(svc["metadata"].get("creationTimestamp") or "")
        if service_time > last_service and (not changed or service_time < changed):
            changed = service_time
        self._states[key] = (pod_times, service_time)
        return service_time if state is None else changed

    def forget(self, key: str) -> None:
        self._states.pop(key, None)


def with_trigger_time(annotations: dict[str, str], stamp: str) -> dict[str, str]:
    """The annotations with the trigger time set, or cleared when there is none."""
    out = {k: v for k, v in annotations.items() if k != TRIGGER_TIME}
    if stamp:
        out[TRIGGER_TIME] = stamp
    return out


# ---------------------------------------------------------------------- EndpointSlices


class EndpointSliceController(_ServiceEndpointsBase):
    name = "endpointslice-controller"
    component = "endpoint-slice-controller"
    workers = 2

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.max_per_slice = int(self.settings().get("max_endpoints_per_slice", MAX_ENDPOINTS_PER_SLICE))
        if not 1 <= self.max_per_slice <= 1000:
            raise ValueError(f"{self.name}: max_endpoints_per_slice must be within 1..1000, got {self.max_per_slice}")
        self.slices: SharedInformer = self.informer("endpointslices.discovery.k8s.io")
        self.nodes = self.informer("nodes")
        self.slices.add_event_handler(on_update=lambda old, new: self._slice_changed(new),
                                      on_delete=self._slice_changed)

    def _slice_changed(self, es: Obj) -> None:
        labels = es["metadata"].get("labels") or {}
        if labels.get(MANAGED_BY_LABEL) == MANAGED_BY and labels.get(SERVICE_NAME_LABEL):
            self.queue.add(f"{es['metadata'].get('namespace')}/{labels[SERVICE_NAME_LABEL]}")

    def endpoint(self, pod: Obj, svc: Obj) -> Obj:
        publish = bool((svc.get("spec") or {}).get("publishNotReadyAddresses"))
        terminating = bool(pod["metadata"].get("deletionTimestamp"))
        serving = publish or is_pod_ready(pod)
        ready = serving and (publish or not terminating)
        ep: Obj = {"addresses": [pod_ip(pod)],
                   "conditions": {"ready": ready, "serving": serving, "terminating": terminating},
                   "targetRef": target_ref(pod)}
        hostname = hostname_for(pod, svc)
        if hostname:
            ep["hostname"] = hostname
        node_name = (pod.get("spec") or {}).get("nodeName")
        if node_name:
            ep["nodeName"] = node_name
            node = self.nodes.get(node_name)
            zone = node_zone(node) if node is not None else ""
            if zone:
                ep["zone"] = zone
        return ep

    def desired(self, svc: Obj) -> list[tuple[list[Obj], list[Obj]]]:
        """(ports, endpoints) per slice to have: grouped by port list, chunked by the slice limit."""
        groups: dict[str, tuple[list[Obj], list[Obj]]] = {}
        has_ports = bool((svc.get("spec") or {}).get("ports"))
        for pod in self.selected_pods(svc):
            if not should_be_in_endpoints(pod, include_terminating=True):
                continue
            ports = endpoint_ports(pod, svc)
            if not ports and has_ports:
                continue
            key = json.dumps(ports, sort_keys=True)
            groups.setdefault(key, (ports, []))[1].append(self.endpoint(pod, svc))
        out = []
        for key in sorted(groups):
            ports, endpoints = groups[key]
            for i in range(0, len(endpoints), self.max_per_slice):
                out.append((ports, endpoints[i:i + self.max_per_slice]))
        return out or [([], [])]  # the placeholder

    def labels_for(self, svc: Obj) -> dict[str, str]:
        labels = {k: v for k, v in (svc["metadata"].get("labels") or {}).items()
                  if k not in (SERVICE_NAME_LABEL, MANAGED_BY_LABEL, HEADLESS_LABEL)}
        labels[SERVICE_NAME_LABEL] = svc["metadata"]["name"]
        labels[MANAGED_BY_LABEL] = MANAGED_BY
        if is_headless(svc):
            labels[HEADLESS_LABEL] = ""
        return labels

    def owned_slices(self, svc: Obj) -> list[Obj]:
        ns, name = svc["metadata"].get("namespace") or "", svc["metadata"]["name"]
        out = []
        for es in self.slices.list_by_index("namespace", ns):
            labels = es["metadata"].get("labels") or {}
            if labels.get(SERVICE_NAME_LABEL) == name and labels.get(MANAGED_BY_LABEL) == MANAGED_BY:
                out.append(es)
        out.sort(key=lambda s: s["metadata"]["name"])
        return out

    async def sync(self, key: str) -> None:
        svc = self.services.get(key)
        if svc is None or selects(svc) is None or svc["metadata"].get("deletionTimestamp"):
            self.trigger_times.forget(key)
            return  # slices of a deleted Service go with it (ownerReferences)
        trigger = self.trigger_times.compute(key, svc, self.selected_pods(svc))
        svc_uid = svc["metadata"].get("uid")
        labels = self.labels_for(svc)
        existing: dict[str, list[Obj]] = {}
        stale: list[Obj] = []
        for es in self.owned_slices(svc):
            owners = {r.get("uid") for r in es["metadata"].get("ownerReferences") or ()}
            if svc_uid not in owners:
                stale.append(es)  # left by an earlier Service of the same name
                continue
            existing.setdefault(json.dumps(es.get("ports") or [], sort_keys=True), []).append(es)
        for ports, endpoints in self.desired(svc):
            bucket = existing.get(json.dumps(ports, sort_keys=True))
            current = bucket.pop(0) if bucket else None
            if current is None:
                await self._create(svc, labels, ports, endpoints, trigger)
            elif ((current.get("endpoints") or []) != endpoints or (current.get("ports") or []) != ports
                  or (current["metadata"].get("labels") or {}) != labels):
                await self._update(current, labels, ports, endpoints, trigger)
        for bucket in existing.values():
            stale.extend(bucket)
        for es in stale:
            try:
                await self.client.delete("endpointslices.discovery.k8s.io", es["metadata"]["name"],
                                         es["metadata"].get("namespace"))
            except StatusError as err:
                if not is_not_found(err):
                    raise

    async def _create(self, svc: Obj, labels: dict[str, str], ports: list[Obj], endpoints: list[Obj],
                      trigger: str) -> None:
        meta = svc["metadata"]
        body: Obj = {
            "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"generateName": f"{meta['name']}-", "namespace": meta.get("namespace"),
                         "labels": dict(labels), "ownerReferences": [owner_ref(svc)]},
            "addressType": "IPv4", "endpoints": deep_copy(endpoints), "ports": deep_copy(ports),
        }
        if trigger:
            body["metadata"]["annotations"] = {TRIGGER_TIME: trigger}
        try:
            await self.client.create(body)
        except StatusError as err:
            if not (is_already_exists(err) or is_forbidden(err)):
                raise

    async def _update(self, current: Obj, labels: dict[str, str], ports: list[Obj], endpoints: list[Obj],
                      trigger: str) -> None:
        new = deep_copy(current)
        new["metadata"]["labels"] = dict(labels)
        annotations = with_trigger_time(current["metadata"].get("annotations") or {}, trigger)
        if annotations:
            new["metadata"]["annotations"] = annotations
        else:
            new["metadata"].pop("annotations", None)
        new["endpoints"] = deep_copy(endpoints)
        new["ports"] = deep_copy(ports)
        try:
            await self.client.update(new)
        except StatusError as err:
            if not is_not_found(err):
                raise  # a Conflict is retried by the queue with a fresher cache


# ---------------------------------------------------------------------- v1 Endpoints


class EndpointsController(_ServiceEndpointsBase):
    name = "endpoints-controller"
    component = "endpoint-controller"
    workers = 2

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.endpoints = self.informer("endpoints")
        self.endpoints.add_event_handler(on_delete=self.enqueue)

    def subsets(self, svc: Obj) -> tuple[list[Obj], bool]:
        """Upstream's subsets (after RepackSubsets) and whether addresses were truncated."""
        spec = svc.get("spec") or {}
        publish = bool(spec.get("publishNotReadyAddresses"))
        has_ports = bool(spec.get("ports"))
        if not has_ports and not is_headless(svc):
            return [], False
        groups: dict[str, tuple[list[Obj], list[Obj], list[Obj]]] = {}
        total = 0
        truncated = False
        for pod in self.selected_pods(svc):
            if not should_be_in_endpoints(pod, include_terminating=publish):
                continue
            ports = [{k: v for k, v in p.items() if k != "appProtocol" or v} for p in endpoint_ports(pod, svc)]
            if has_ports and not ports:
                continue
            if total >= MAX_ENDPOINTS_ADDRESSES:
                truncated = True
                break
            total += 1
            addr: Obj = {"ip": pod_ip(pod), "targetRef": target_ref(pod)}
            node_name = (pod.get("spec") or {}).get("nodeName")
            if node_name:
                addr["nodeName"] = node_name
            hostname = hostname_for(pod, svc)
            if hostname:
                addr["hostname"] = hostname
            ports.sort(key=lambda p: (p["name"], p["port"], p["protocol"]))
            key = json.dumps(ports, sort_keys=True)
            group = groups.setdefault(key, (ports, [], []))
            (group[1] if publish or is_pod_ready(pod) else group[2]).append(addr)
        out = []
        for key in sorted(groups):
            ports, ready, not_ready = groups[key]
            subset: Obj = {}
            if ready:
                subset["addresses"] = sorted(ready, key=lambda a: a["ip"])
            if not_ready:
                subset["notReadyAddresses"] = sorted(not_ready, key=lambda a: a["ip"])
            if ports:
                subset["ports"] = ports
            out.append(subset)
        return out, truncated

    async def sync(self, key: str) -> None:
        svc = self.services.get(key)
        ns, _, name = key.partition("/")
        if svc is None:
            self.trigger_times.forget(key)
            try:
                await self.client.delete("endpoints", name, ns)
            except StatusError as err:
                if not is_not_found(err):
                    raise
            return
        if selects(svc) is None:
            return
        trigger = self.trigger_times.compute(key, svc, self.selected_pods(svc))
        subsets, truncated = self.subsets(svc)
        labels = {k: v for k, v in (svc["metadata"].get("labels") or {}).items() if k != HEADLESS_LABEL}
        if is_headless(svc):
            labels[HEADLESS_LABEL] = ""
        current = self.endpoints.get(key)
        if current is None:
            body: Obj = {"apiVersion": "v1", "kind": "Endpoints",
                         "metadata": {"name": name, "namespace": ns, "labels": labels}, "subsets": subsets}
            created = with_trigger_time({OVER_CAPACITY: "truncated"} if truncated else {}, trigger)
            if created:
                body["metadata"]["annotations"] = created
            try:
                await self.client.create(body)
            except StatusError as err:
                if not (is_already_exists(err) or is_forbidden(err)):
                    raise
            return
        annotations = dict(current["metadata"].get("annotations") or {})
        if truncated:
            annotations[OVER_CAPACITY] = "truncated"
        else:
            annotations.pop(OVER_CAPACITY, None)
        if ((current.get("subsets") or []) == subsets and (current["metadata"].get("labels") or {}) == labels
                and (current["metadata"].get("annotations") or {}) == annotations):
            return  # the trigger time alone is no reason to write, as upstream
        annotations = with_trigger_time(annotations, trigger)
        new = deep_copy(current)
        new["subsets"] = subsets
        new["metadata"]["labels"] = labels
        if annotations:
            new["metadata"]["annotations"] = annotations
        else:
            new["metadata"].pop("annotations", None)
        try:
            await self.client.update(new)
        except StatusError as err:
            if not is_not_found(err):
                raise  # a Conflict is retried by the queue with a fresher cache
