"""``kubectl describe`` as kubectl 1.32 prints it, as pure functions over plain-dict objects.

kubectl writes ``Label:\\tvalue`` lines through Go's ``text/tabwriter`` (padding 2), so values line
up within each run of lines that share a column; :func:`tabwrite` does the same. Pods, Nodes,
Deployments, ReplicaSets and Services have kubectl's own describers; every other kind gets kubectl's
generic describer (every field, sorted, with kubectl's labels: ``creationTimestamp`` ->
``Creation Timestamp``). ``metadata.managedFields`` is never printed, as kubectl hides it; the
``Events:`` table comes last. Stdlib only.

Public API: :func:`describe(obj, events, now, related=None) -> str`, :func:`tabwrite(text) -> str`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kconsole.objects.printers import age, format_label_selector, parse_time

Obj = dict[str, Any]

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
#: kubectl's acronyms kept upper case in generic labels (``apiVersion`` -> ``API Version``).
ACRONYMS = {"API", "URL", "UID", "OSB", "GUID"}


# --------------------------------------------------------------------------- tabwriter


def tabwrite(text: str, padding: int = 2) -> str:
    """Go's ``tabwriter.NewWriter(out, 0, 8, padding, ' ', 0)``: tab-terminated cells are columns;
    a column's width holds over each run of consecutive lines that have a cell in it."""
    lines = [line.split("\t") for line in text.split("\n")]
    out: list[str] = []
    widths: list[int] = []

    def emit(line0: int, line1: int) -> None:
        for cells in lines[line0:line1]:
            parts = []
            for j, cell in enumerate(cells):
                parts.append(cell.ljust(widths[j]) if j < len(widths) and j < len(cells) - 1 else cell)
            out.append("".join(parts))

    def fmt(line0: int, line1: int) -> None:
        column = len(widths)
        this = line0
        while this < line1:
            if column >= len(lines[this]) - 1:
                this += 1
                continue
            emit(line0, this)
            line0 = this
            width = 0
            while this < line1 and column < len(lines[this]) - 1:
                width = max(width, len(lines[this][column]) + padding)
                this += 1
            widths.append(width)
            fmt(line0, this)
            widths.pop()
            line0 = this
        emit(line0, line1)

    fmt(0, len(lines))
    return "\n".join(out)


class _Writer:
    """kubectl's PrefixWriter: each level indents two spaces; ``flush`` ends every column run."""

    def __init__(self) -> None:
        self.blocks: list[list[str]] = [[]]

    def line(self, level: int, text: str) -> None:
        self.blocks[-1].append("  " * level + text)

    def flush(self) -> None:
        self.blocks.append([])

    def text(self) -> str:
        return "\n".join(tabwrite("\n".join(b)) for b in self.blocks if b) + "\n"


# --------------------------------------------------------------------------- helpers


def _meta(o: Obj) -> Obj:
    return o.get("metadata") or {}


def _go(value: Any) -> str:
    """``%v`` of a JSON value as Go prints it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def rfc1123z(timestamp: str | None) -> str:
    ts = parse_time(timestamp)
    if ts is None:
        return "<unknown>"
    return time.strftime("%a, %d %b %Y %H:%M:%S +0000", time.gmtime(ts))


def _multiline(w: _Writer, title: str, items: Sequence[str], level: int = 0) -> None:
    """``printLabelsMultiline``: the first item beside the title, the rest under it, ``<none>`` if empty."""
    if not items:
        w.line(level, f"{title}:\t<none>")
        return
    w.line(level, f"{title}:\t{items[0]}")
    for item in items[1:]:
        w.line(level, f"\t{item}")


def _labels(w: _Writer, title: str, labels: Mapping[str, str] | None, level: int = 0) -> None:
    _multiline(w, title, [f"{k}={(labels or {})[k]}" for k in sorted(labels or {})], level)


def _annotations(w: _Writer, title: str, annotations: Mapping[str, str] | None, level: int = 0) -> None:
    items = {k: v for k, v in (annotations or {}).items() if k != LAST_APPLIED}
    _multiline(w, title, [f"{k}: {items[k]}" for k in sorted(items)], level)


def _tolerations(w: _Writer, title: str, tolerations: Sequence[Obj] | None, level: int = 0) -> None:
    items = []
    for t in tolerations or ():
        text = t.get("key", "")
        if t.get("value"):
            text += f"={t['value']}"
        if t.get("effect"):
            text += f":{t['effect']}"
        if t.get("operator") == "Exists" and not t.get("value"):
            text += " op=Exists" if t.get("key") else "op=Exists"
        if t.get("tolerationSeconds") is not None:
            text += f" for {t['tolerationSeconds']}s"
        items.append(text)
    _multiline(w, title, items, level)


def _controller(o: Obj) -> str:
    ref = next((r for r in _meta(o).get("ownerReferences") or () if r.get("controller")), None)
    return f"{ref.get('kind')}/{ref.get('name')}" if ref else ""


def _events(w: _Writer, events: Sequence[Obj] | None, now: float) -> None:
    """``DescribeEvents``: oldest first, ``3m (x5 over 10m)`` for repeats."""
    if events is None:
        return
    if not events:
        w.line(0, "Events:\t<none>")
        return
    w.flush()
    w.line(0, "Events:")
    w.line(1, "Type\tReason\tAge\tFrom\tMessage")
    w.line(1, "----\t------\t----\t----\t-------")

    def last(ev: Obj) -> float:
        series = ev.get("series") or {}
        return parse_time(series.get("lastObservedTime") or ev.get("lastTimestamp") or ev.get("eventTime")
                          or ev.get("firstTimestamp")) or 0.0

    for ev in sorted(events, key=last):
        first = age(ev.get("eventTime"), now) if ev.get("eventTime") else age(ev.get("firstTimestamp"), now)
        series = ev.get("series")
        count = ev.get("count") or 0
        if series:
            interval = f"{age(series.get('lastObservedTime'), now)} (x{series.get('count')} over {first})"
        elif count > 1:
            interval = f"{age(ev.get('lastTimestamp'), now)} (x{count} over {first})"
        else:
            interval = first
        source = (ev.get("source") or {}).get("component") or ev.get("reportingComponent") or ""
        w.line(1, f"{ev.get('type', '')}\t{ev.get('reason', '')}\t{interval}\t{source}\t"
                  f"{(ev.get('message') or '').strip()}")


# --------------------------------------------------------------------------- containers and templates


def _ports(container: Obj, field: str) -> str:
    """``describeContainerPorts`` / ``describeContainerHostPorts``: ``80/TCP, 53/UDP`` (0 for an unset host port)."""
    return ", ".join(f"{p.get(field) or 0}/{p.get('protocol') or 'TCP'}" for p in container.get("ports") or ())


def _port_lines(w: _Writer, container: Obj) -> None:
    for field, one, many in (("containerPort", "Port", "Ports"), ("hostPort", "Host Port", "Host Ports")):
        text = _ports(container, field)
        w.line(2, f"{many}:\t{text}" if "," in text else f"{one}:\t{text or '<none>'}")


def _state(w: _Writer, title: str, state: Obj, level: int) -> None:
    if "running" in state:
        w.line(level, f"{title}:\tRunning")
        w.line(level, f"  Started:\t{rfc1123z(state['running'].get('startedAt'))}")
    elif "waiting" in state:
        w.line(level, f"{title}:\tWaiting")
        if state["waiting"].get("reason"):
            w.line(level, f"  Reason:\t{state['waiting']['reason']}")
        if state["waiting"].get("message"):
            w.line(level, f"  Message:\t{state['waiting']['message']}")
    elif "terminated" in state:
        t = state["terminated"]
        w.line(level, f"{title}:\tTerminated")
        if t.get("reason"):
            w.line(level, f"  Reason:\t{t['reason']}")
        if t.get("message"):
            w.line(level, f"  Message:\t{t['message']}")
        w.line(level, f"  Exit Code:\t{t.get('exitCode', 0)}")
        if t.get("signal"):
            w.line(level, f"  Signal:\t{t['signal']}")
        w.line(level, f"  Started:\t{rfc1123z(t.get('startedAt'))}")
        w.line(level, f"  Finished:\t{rfc1123z(t.get('finishedAt'))}")
    else:
        w.line(level, f"{title}:\tWaiting")


def _probe(kind: str, probe: Obj | None, w: _Writer) -> None:
    if not probe:
        return
    if "httpGet" in probe:
        h = probe["httpGet"]
        target = f"http-get {h.get('scheme', 'HTTP').lower()}://{h.get('host', '')}:{h.get('port')}{h.get('path', '')}"
    elif "tcpSocket" in probe:
        target = f"tcp-socket {probe['tcpSocket'].get('host', '')}:{probe['tcpSocket'].get('port')}"
    elif "exec" in probe:
        target = f"exec [{' '.join(probe['exec'].get('command') or ())}]"
    elif "grpc" in probe:
        target = f"grpc <pod>:{probe['grpc'].get('port')} {probe['grpc'].get('service', '')}"
    else:
        target = "unknown"
    w.line(2, f"{kind}:\t{target} delay={probe.get('initialDelaySeconds', 0)}s "
              f"timeout={probe.get('timeoutSeconds', 1)}s period={probe.get('periodSeconds', 10)}s "
              f"#success={probe.get('successThreshold', 1)} #failure={probe.get('failureThreshold', 3)}")


def _containers(w: _Writer, title: str, containers: Sequence[Obj], statuses: Sequence[Obj] | None,
                space: str = "") -> None:
    """``describeContainers``; in a pod template (``space``) kubectl indents the names one more."""
    w.line(0, f"{space}{title}:")
    by_name = {s.get("name"): s for s in statuses or ()}
    for c in containers:
        w.line(1, f"{' ' if space else ''}{c.get('name')}:")
        status = by_name.get(c.get("name"))
        if status is not None:
            w.line(2, f"Container ID:\t{status.get('containerID', '')}")
        w.line(2, f"Image:\t{c.get('image', '')}")
        if status is not None:
            w.line(2, f"Image ID:\t{status.get('imageID', '')}")
        _port_lines(w, c)
        for field, label in (("command", "Command"), ("args", "Args")):
            if c.get(field):
                w.line(2, f"{label}:")
                for part in c[field]:
                    w.line(3, str(part))
        if status is not None:
            _state(w, "State", status.get("state") or {}, 2)
            if status.get("lastState"):
                _state(w, "Last State", status["lastState"], 2)
            w.line(2, f"Ready:\t{'True' if status.get('ready') else 'False'}")
            w.line(2, f"Restart Count:\t{status.get('restartCount', 0)}")
        resources = c.get("resources") or {}
        for field, label in (("limits", "Limits"), ("requests", "Requests")):
            if resources.get(field):
                w.line(2, f"{label}:")
                for name in sorted(resources[field]):
                    w.line(3, f"{name}:\t{resources[field][name]}")
        for field, label in (("livenessProbe", "Liveness"), ("readinessProbe", "Readiness"),
                             ("startupProbe", "Startup")):
            _probe(label, c.get(field), w)
        env = c.get("env") or []
        if not env and not c.get("envFrom"):
            w.line(2, "Environment:\t<none>")
        else:
            w.line(2, "Environment:")
            for e in env:
                if "value" in e or "valueFrom" not in e:
                    w.line(3, f"{e.get('name')}:\t{e.get('value', '')}")
                else:
                    src = e["valueFrom"]
                    ref = next(iter(src), "")
                    w.line(3, f"{e.get('name')}:\t<set to the key of {ref}>")
        mounts = c.get("volumeMounts") or []
        if not mounts:
            w.line(2, "Mounts:\t<none>")
        else:
            w.line(2, "Mounts:")
            for m in sorted(mounts, key=lambda m: m.get("mountPath", "")):
                flags = "ro" if m.get("readOnly") else "rw"
                sub = f",path=\"{m['subPath']}\"" if m.get("subPath") else ""
                w.line(3, f"{m.get('mountPath')} from {m.get('name')} ({flags}{sub})")


VOLUME_TYPES: dict[str, tuple[str, Callable[[Obj], list[str]]]] = {
    "emptyDir": ("EmptyDir (a temporary directory that shares a pod's lifetime)",
                 lambda v: [f"Medium:\t{v.get('medium', '')}", f"SizeLimit:\t{v.get('sizeLimit', '<unset>')}"]),
    "hostPath": ("HostPath (bare host directory volume)",
                 lambda v: [f"Path:\t{v.get('path', '')}", f"HostPathType:\t{v.get('type', '')}"]),
    "configMap": ("ConfigMap (a volume populated by a ConfigMap)",
                  lambda v: [f"Name:\t{v.get('name', '')}", f"Optional:\t{_go(bool(v.get('optional')))}"]),
    "secret": ("Secret (a volume populated by a Secret)",
               lambda v: [f"SecretName:\t{v.get('secretName', '')}", f"Optional:\t{_go(bool(v.get('optional')))}"]),
    "persistentVolumeClaim": ("PersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)",
                              lambda v: [f"ClaimName:\t{v.get('claimName', '')}",
                                         f"ReadOnly:\t{_go(bool(v.get('readOnly')))}"]),
    "projected": ("Projected (a volume that contains injected data from multiple sources)", lambda v: [
        line for s in v.get("sources") or () for line in (
            [f"TokenExpirationSeconds:\t{s['serviceAccountToken'].get('expirationSeconds', 3607)}"]
            if "serviceAccountToken" in s else
            [f"ConfigMapName:\t{s['configMap'].get('name', '')}", f"Optional:\t{_go(bool(s['configMap'].get('optional')))}"]
            if "configMap" in s else
            ["DownwardAPI:\ttrue"] if "downwardAPI" in s else [])]),
}


def _volumes(w: _Writer, volumes: Sequence[Obj] | None, space: str = "") -> None:
    level = 0
    if not volumes:
        w.line(level, f"{space}Volumes:\t<none>")
        return
    w.line(level, f"{space}Volumes:")
    for v in volumes:
        w.line(level + 1, f"{' ' if space else ''}{v.get('name')}:")
        kind = next((k for k in VOLUME_TYPES if k in v), None)
        if kind is None:
            w.line(level + 2, "Type:\t<unknown>")
            continue
        label, details = VOLUME_TYPES[kind]
        w.line(level + 2, f"Type:\t{label}")
        for line in details(v[kind] or {}):
            w.line(level + 2, line)


def _pod_template(w: _Writer, template: Obj) -> None:
    """``DescribePodTemplate`` at level 1 under ``Pod Template:``."""
    w.line(0, "Pod Template:")
    meta, spec = _meta(template), template.get("spec") or {}
    _labels(w, "Labels", meta.get("labels"), 1)
    if meta.get("annotations"):
        _annotations(w, "Annotations", meta.get("annotations"), 1)
    if spec.get("serviceAccountName"):
        w.line(1, f"Service Account:\t{spec['serviceAccountName']}")
    if spec.get("initContainers"):
        _containers(w, "Init Containers", spec["initContainers"], None, "  ")
    _containers(w, "Containers", spec.get("containers") or [], None, "  ")
    _volumes(w, spec.get("volumes"), "  ")
    _labels(w, "Node-Selectors", spec.get("nodeSelector"), 1)
    _tolerations(w, "Tolerations", spec.get("tolerations"), 1)


def _conditions(w: _Writer, conditions: Sequence[Obj] | None, reason: bool) -> None:
    if not conditions:
        return
    w.line(0, "Conditions:")
    if reason:
        w.line(1, "Type\tStatus\tReason")
        w.line(1, "----\t------\t------")
        for c in conditions:
            w.line(1, f"{c.get('type')} \t{c.get('status')}\t{c.get('reason', '')}")
    else:
        w.line(1, "Type\tStatus")
        for c in conditions:
            w.line(1, f"{c.get('type')} \t{c.get('status')} ")


# --------------------------------------------------------------------------- kinds


def _pod(w: _Writer, pod: Obj, related: Mapping[str, Any]) -> None:
    meta, spec, status = _meta(pod), pod.get("spec") or {}, pod.get("status") or {}
    w.line(0, f"Name:\t{meta.get('name', '')}")
    w.line(0, f"Namespace:\t{meta.get('namespace', '')}")
    if spec.get("priority") is not None:
        w.line(0, f"Priority:\t{spec['priority']}")
    if spec.get("priorityClassName"):
        w.line(0, f"Priority Class Name:\t{spec['priorityClassName']}")
    if spec.get("runtimeClassName"):
        w.line(0, f"Runtime Class Name:\t{spec['runtimeClassName']}")
    w.line(0, f"Service Account:\t{spec.get('serviceAccountName', '')}")
    node = spec.get("nodeName")
    w.line(0, f"Node:\t{node}/{status.get('hostIP', '')}" if node else "Node:\t<none>")
    if status.get("startTime"):
        w.line(0, f"Start Time:\t{rfc1123z(status['startTime'])}")
    _labels(w, "Labels", meta.get("labels"))
    _annotations(w, "Annotations", meta.get("annotations"))
    if meta.get("deletionTimestamp"):
        w.line(0, f"Status:\tTerminating (lasts {age(meta['deletionTimestamp'], related.get('now', 0.0))})")
        w.line(0, f"Termination Grace Period:\t{meta.get('deletionGracePeriodSeconds', 0)}s")
    else:
        w.line(0, f"Status:\t{status.get('phase', '')}")
    if status.get("reason"):
        w.line(0, f"Reason:\t{status['reason']}")
    if status.get("message"):
        w.line(0, f"Message:\t{status['message']}")
    w.line(0, f"IP:\t{status.get('podIP', '')}")
    ips = status.get("podIPs") or []
    if not ips:
        w.line(0, "IPs:\t<none>")
    else:
        w.line(0, "IPs:")
        for ip in ips:
            w.line(1, f"IP:\t{ip.get('ip', '')}")
    if _controller(pod):
        w.line(0, f"Controlled By:\t{_controller(pod)}")
    if status.get("nominatedNodeName"):
        w.line(0, f"NominatedNodeName:\t{status['nominatedNodeName']}")
    if spec.get("initContainers"):
        _containers(w, "Init Containers", spec["initContainers"], status.get("initContainerStatuses"))
    _containers(w, "Containers", spec.get("containers") or [], status.get("containerStatuses"))
    _conditions(w, status.get("conditions"), reason=False)
    _volumes(w, spec.get("volumes"))
    w.line(0, f"QoS Class:\t{status.get('qosClass', '')}")
    _labels(w, "Node-Selectors", spec.get("nodeSelector"))
    _tolerations(w, "Tolerations", spec.get("tolerations"))


def _node(w: _Writer, node: Obj, related: Mapping[str, Any]) -> None:
    meta, spec, status = _meta(node), node.get("spec") or {}, node.get("status") or {}
    labels = meta.get("labels") or {}
    roles = sorted({k.removeprefix("node-role.kubernetes.io/") for k in labels
                    if k.startswith("node-role.kubernetes.io/")} - {""})
    w.line(0, f"Name:\t{meta.get('name', '')}")
    w.line(0, f"Roles:\t{','.join(roles) or '<none>'}")
    _labels(w, "Labels", labels)
    _annotations(w, "Annotations", meta.get("annotations"))
    w.line(0, f"CreationTimestamp:\t{rfc1123z(meta.get('creationTimestamp'))}")
    _multiline(w, "Taints", [f"{t.get('key')}{'=' + t['value'] if t.get('value') else ''}:{t.get('effect')}"
                             for t in spec.get("taints") or ()])
    w.line(0, f"Unschedulable:\t{_go(bool(spec.get('unschedulable')))}")
    lease = related.get("lease")
    if lease is not None:
        ls = lease.get("spec") or {}
        w.line(0, "Lease:")
        w.line(1, f"HolderIdentity:\t{ls.get('holderIdentity', '<unset>')}")
        w.line(1, f"AcquireTime:\t{rfc1123z(ls['acquireTime']) if ls.get('acquireTime') else '<unset>'}")
        w.line(1, f"RenewTime:\t{rfc1123z(ls.get('renewTime'))}")
    conditions = status.get("conditions") or []
    if conditions:
        w.line(0, "Conditions:")
        w.line(1, "Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage")
        w.line(1, "----\t------\t-----------------\t------------------\t------\t-------")
        for c in conditions:
            w.line(1, f"{c.get('type')} \t{c.get('status')} \t{rfc1123z(c.get('lastHeartbeatTime'))} \t"
                      f"{rfc1123z(c.get('lastTransitionTime'))} \t{c.get('reason', '')} \t{c.get('message', '')}")
    w.line(0, "Addresses:")
    for a in status.get("addresses") or ():
        w.line(1, f"{a.get('type')}:\t{a.get('address')}")
    for field, label in (("capacity", "Capacity"), ("allocatable", "Allocatable")):
        if status.get(field):
            w.line(0, f"{label}:")
            for name in sorted(status[field]):
                w.line(1, f"{name}:\t{status[field][name]}")
    info = status.get("nodeInfo") or {}
    w.line(0, "System Info:")
    for key, label in (("machineID", "Machine ID"), ("systemUUID", "System UUID"), ("bootID", "Boot ID"),
                       ("kernelVersion", "Kernel Version"), ("osImage", "OS Image"),
                       ("operatingSystem", "Operating System"), ("architecture", "Architecture"),
                       ("containerRuntimeVersion", "Container Runtime Version"),
                       ("kubeletVersion", "Kubelet Version"), ("kubeProxyVersion", "Kube-Proxy Version")):
        w.line(1, f"{label}:\t{info.get(key, '')}")
    if spec.get("podCIDR"):
        w.line(0, f"PodCIDR:\t{spec['podCIDR']}")
        w.line(0, f"PodCIDRs:\t{','.join(spec.get('podCIDRs') or [spec['podCIDR']])}")
    if spec.get("providerID"):
        w.line(0, f"ProviderID:\t{spec['providerID']}")
    pods = related.get("pods")
    if pods is not None:
        running = [p for p in pods if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
        w.line(0, f"Non-terminated Pods:\t({len(running)} in total)")
        w.line(1, "Namespace\tName\t\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge")
        w.line(1, "---------\t----\t\t------------\t----------\t---------------\t-------------\t---")
        for p in sorted(running, key=lambda p: (_meta(p).get("namespace", ""), _meta(p).get("name", ""))):
            totals = _pod_resources(p, status.get("allocatable") or {})
            w.line(1, f"{_meta(p).get('namespace', '')}\t{_meta(p).get('name', '')}\t\t"
                      f"{totals[0]}\t{totals[1]}\t{totals[2]}\t{totals[3]}\t"
                      f"{age(_meta(p).get('creationTimestamp'), related.get('now', 0.0))}")
        _allocated(w, running, status.get("allocatable") or {})


def _allocated(w: _Writer, pods: Sequence[Obj], allocatable: Mapping[str, Any]) -> None:
    """``Allocated resources:``: the node's pods' requests and limits against its allocatable."""
    from kconsole.objects.quantity import add_resource_lists, format_quantity, resource_amount

    containers = [c for p in pods for c in (p.get("spec") or {}).get("containers") or ()]
    requests = add_resource_lists(*((c.get("resources") or {}).get("requests") for c in containers))
    limits = add_resource_lists(*((c.get("resources") or {}).get("limits") for c in containers))
    w.line(0, "Allocated resources:")
    w.line(1, "(Total limits may be over 100 percent, i.e., overcommitted.)")
    w.line(1, "Resource\tRequests\tLimits")
    w.line(1, "--------\t--------\t------")
    for resource in ("cpu", "memory", "ephemeral-storage"):
        whole = resource_amount(resource, allocatable.get(resource, "0"))
        cells = []
        for totals in (requests, limits):
            amount = totals.get(resource, 0)
            share = int(resource_amount(resource, amount) * 100 / whole) if whole else 0
            cells.append(f"{format_quantity(amount) if amount else '0'} ({share}%)")
        w.line(1, f"{resource}\t{cells[0]}\t{cells[1]}")


def _pod_resources(pod: Obj, allocatable: Mapping[str, Any]) -> list[str]:
    """CPU requests, limits, memory requests, limits of one pod's containers, each with its share
    of the node's allocatable as kubectl prints it (``100m (2%)``)."""
    from kconsole.objects.quantity import add_resource_lists, format_quantity, resource_amount

    containers = (pod.get("spec") or {}).get("containers") or ()
    requests = add_resource_lists(*((c.get("resources") or {}).get("requests") for c in containers))
    limits = add_resource_lists(*((c.get("resources") or {}).get("limits") for c in containers))
    cells = []
    for resource in ("cpu", "memory"):
        whole = resource_amount(resource, allocatable.get(resource, "0"))
        for totals in (requests, limits):
            amount = totals.get(resource, 0)
            share = int(resource_amount(resource, amount) * 100 / whole) if whole else 0
            cells.append(f"{format_quantity(amount) if amount else '0'} ({share}%)")
    return [cells[0], cells[1], cells[2], cells[3]]


def _deployment(w: _Writer, d: Obj, related: Mapping[str, Any]) -> None:
    meta, spec, status = _meta(d), d.get("spec") or {}, d.get("status") or {}
    w.line(0, f"Name:\t{meta.get('name', '')}")
    w.line(0, f"Namespace:\t{meta.get('namespace', '')}")
    w.line(0, f"CreationTimestamp:\t{rfc1123z(meta.get('creationTimestamp'))}")
    _labels(w, "Labels", meta.get("labels"))
    _annotations(w, "Annotations", meta.get("annotations"))
    w.line(0, f"Selector:\t{format_label_selector(spec.get('selector'))}")
    w.line(0, f"Replicas:\t{spec.get('replicas', 1)} desired | {status.get('updatedReplicas', 0)} updated | "
              f"{status.get('replicas', 0)} total | {status.get('availableReplicas', 0)} available | "
              f"{status.get('unavailableReplicas', 0)} unavailable")
    strategy = spec.get("strategy") or {}
    w.line(0, f"StrategyType:\t{strategy.get('type', 'RollingUpdate')}")
    w.line(0, f"MinReadySeconds:\t{spec.get('minReadySeconds', 0)}")
    if strategy.get("type", "RollingUpdate") == "RollingUpdate":
        ru = strategy.get("rollingUpdate") or {}
        w.line(0, f"RollingUpdateStrategy:\t{ru.get('maxUnavailable', '25%')} max unavailable, "
                  f"{ru.get('maxSurge', '25%')} max surge")
    _pod_template(w, spec.get("template") or {})
    _conditions(w, status.get("conditions"), reason=True)
    replicasets = related.get("replicasets")
    if replicasets is not None:
        revision = meta.get("annotations", {}).get("deployment.kubernetes.io/revision")
        new = [rs for rs in replicasets
               if (_meta(rs).get("annotations") or {}).get("deployment.kubernetes.io/revision") == revision]
        old = [rs for rs in replicasets if rs not in new and ((rs.get("spec") or {}).get("replicas") or 0) > 0]

        def names(items: list[Obj]) -> str:
            return ", ".join(f"{_meta(rs).get('name')} ({(rs.get('status') or {}).get('replicas', 0)}/"
                             f"{(rs.get('spec') or {}).get('replicas', 0)} replicas created)" for rs in items)
        w.line(0, f"OldReplicaSets:\t{names(old) or '<none>'}")
        w.line(0, f"NewReplicaSet:\t{names(new) or '<none>'}")


def _replicaset(w: _Writer, rs: Obj, related: Mapping[str, Any]) -> None:
    meta, spec, status = _meta(rs), rs.get("spec") or {}, rs.get("status") or {}
    w.line(0, f"Name:\t{meta.get('name', '')}")
    w.line(0, f"Namespace:\t{meta.get('namespace', '')}")
    w.line(0, f"Selector:\t{format_label_selector(spec.get('selector'))}")
    _labels(w, "Labels", meta.get("labels"))
    _annotations(w, "Annotations", meta.get("annotations"))
    if _controller(rs):
        w.line(0, f"Controlled By:\t{_controller(rs)}")
    w.line(0, f"Replicas:\t{status.get('replicas', 0)} current / {spec.get('replicas', 1)} desired")
    pods = related.get("pods")
    if pods is not None:
        phases = {p: sum(1 for pod in pods if (pod.get("status") or {}).get("phase") == p)
                  for p in ("Running", "Pending", "Succeeded", "Failed")}
        w.line(0, f"Pods Status:\t{phases['Running']} Running / {phases['Pending']} Waiting / "
                  f"{phases['Succeeded']} Succeeded / {phases['Failed']} Failed")
    _pod_template(w, spec.get("template") or {})
    _conditions(w, status.get("conditions"), reason=True)


def _service(w: _Writer, svc: Obj, related: Mapping[str, Any]) -> None:
    meta, spec = _meta(svc), svc.get("spec") or {}
    w.line(0, f"Name:\t{meta.get('name', '')}")
    w.line(0, f"Namespace:\t{meta.get('namespace', '')}")
    _labels(w, "Labels", meta.get("labels"))
    _annotations(w, "Annotations", meta.get("annotations"))
    selector = spec.get("selector") or {}
    w.line(0, f"Selector:\t{','.join(f'{k}={selector[k]}' for k in sorted(selector))}")
    w.line(0, f"Type:\t{spec.get('type', 'ClusterIP')}")
    if spec.get("ipFamilyPolicy"):
        w.line(0, f"IP Family Policy:\t{spec['ipFamilyPolicy']}")
    if spec.get("ipFamilies"):
        w.line(0, f"IP Families:\t{','.join(spec['ipFamilies'])}")
    w.line(0, f"IP:\t{spec.get('clusterIP', '')}")
    if spec.get("clusterIPs"):
        w.line(0, f"IPs:\t{','.join(spec['clusterIPs'])}")
    endpoints = related.get("endpoints")
    for port in spec.get("ports") or ():
        name = port.get("name") or "<unset>"
        w.line(0, f"Port:\t{name}\t{port.get('port')}/{port.get('protocol', 'TCP')}")
        target = port.get("targetPort", port.get("port"))
        w.line(0, f"TargetPort:\t{target}/{port.get('protocol', 'TCP')}")
        if port.get("nodePort"):
            w.line(0, f"NodePort:\t{name}\t{port['nodePort']}/{port.get('protocol', 'TCP')}")
        addresses = [f"{a.get('ip')}:{p.get('port')}" for s in (endpoints or {}).get("subsets") or ()
                     for p in s.get("ports") or () if (p.get("name") or "") == (port.get("name") or "")
                     for a in s.get("addresses") or ()]
        w.line(0, f"Endpoints:\t{','.join(addresses) or '<none>'}")
    w.line(0, f"Session Affinity:\t{spec.get('sessionAffinity', 'None')}")
    if spec.get("internalTrafficPolicy"):
        w.line(0, f"Internal Traffic Policy:\t{spec['internalTrafficPolicy']}")


def _namespace(w: _Writer, ns: Obj, related: Mapping[str, Any]) -> None:
    meta = _meta(ns)
    w.line(0, f"Name:\t{meta.get('name', '')}")
    _labels(w, "Labels", meta.get("labels"))
    _annotations(w, "Annotations", meta.get("annotations"))
    w.line(0, f"Status:\t{(ns.get('status') or {}).get('phase', '')}")
    quotas = related.get("resourcequotas") or []
    if not quotas:
        w.line(0, "")
        w.line(0, "No resource quota.")
    else:
        w.line(0, "")
        w.line(0, "Resource Quotas")
        for q in quotas:
            w.line(1, f"Name:\t{_meta(q).get('name')}")
            w.line(1, "Resource\tUsed\tHard")
            w.line(1, "--------\t---\t---")
            hard, used = (q.get("status") or {}).get("hard") or {}, (q.get("status") or {}).get("used") or {}
            for name in sorted(hard):
                w.line(1, f"{name}\t{used.get(name, '0')}\t{hard[name]}")
    w.line(0, "")
    w.line(0, "No LimitRange resource.")


def smart_label(field: str) -> str:
    """kubectl's ``smartLabelFor``: camelCase split into capitalised words, acronyms upper-cased."""
    if re.search(r"[^A-Za-z-]", field):
        return field
    parts = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|-", field)
    return " ".join(p.upper() if p.upper() in ACRONYMS else p[:1].upper() + p[1:] for p in parts)


def _unstructured(w: _Writer, level: int, content: Mapping[str, Any], prefix: str, skip: set[str]) -> None:
    for field in sorted(content):
        value, path = content[field], f"{prefix}.{field}"
        if path in skip:
            continue
        if isinstance(value, Mapping):
            w.line(level, f"{smart_label(field)}:")
            _unstructured(w, level + 1, value, path, skip)
        elif isinstance(value, list):
            w.line(level, f"{smart_label(field)}:")
            for child in value:
                if isinstance(child, Mapping):
                    _unstructured(w, level + 1, child, path, skip)
                else:
                    w.line(level + 1, _go(child))
        else:
            w.line(level, f"{smart_label(field)}:\t{_go(value)}")


def _generic(w: _Writer, obj: Obj, related: Mapping[str, Any]) -> None:
    meta = _meta(obj)
    w.line(0, f"Name:\t{meta.get('name', '')}")
    w.line(0, f"Namespace:\t{meta.get('namespace', '')}")
    _labels(w, "Labels", meta.get("labels"))
    _annotations(w, "Annotations", meta.get("annotations"))
    _unstructured(w, 0, obj, "", {".metadata.managedFields", ".metadata.name", ".metadata.namespace",
                                  ".metadata.labels", ".metadata.annotations"})


DESCRIBERS: dict[str, Callable[[_Writer, Obj, Mapping[str, Any]], None]] = {
    "Pod": _pod, "Node": _node, "Deployment": _deployment, "ReplicaSet": _replicaset, "Service": _service,
    "Namespace": _namespace,
}


#: Kinds whose kubectl describer prints no events.
WITHOUT_EVENTS = frozenset({"Namespace"})


def describe(obj: Obj, events: Sequence[Obj] | None, now: float, related: Mapping[str, Any] | None = None) -> str:
    """What ``kubectl describe`` prints for ``obj``. ``related`` holds what some describers list
    besides the object (``pods`` on a node or of a ReplicaSet, a Deployment's ``replicasets``, a
    Service's ``endpoints``, a node's ``lease``); absent entries leave those sections out."""
    w = _Writer()
    extra = dict(related or {})
    extra.setdefault("now", now)
    DESCRIBERS.get(obj.get("kind", ""), _generic)(w, obj, extra)
    if obj.get("kind") not in WITHOUT_EVENTS:
        _events(w, events, now)
    return w.text()
