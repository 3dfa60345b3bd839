"""kubectl's server-side printer columns, as pure functions over plain-dict objects.

The API server answers ``Accept: application/json;as=Table`` with these columns, so ``kubectl get``
prints what it prints against a real cluster; the console reuses the same cells for its tables.
Each :class:`Printer` has upstream's column definitions (priority 1 = shown with ``-o wide``) and a
``cells(obj, now)`` function giving one row; ``now`` is simulated seconds since the epoch.
Stdlib only.

Public API: :func:`printer_for(group_resource)`, :func:`human_duration(seconds)` (the AGE format,
:func:`kconsole.objects.duration.format_age`), :func:`age(timestamp, now)`, :func:`parse_time(rfc3339)`
(lenient: None instead of an error), :data:`PRINTERS`, :class:`Column`, :class:`Printer`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kconsole.objects.duration import format_age as human_duration
from kconsole.objects.meta import parse_time as parse_rfc3339
from kconsole.objects.quantity import format_quantity
from kconsole.objects.storage import is_default_class

Obj = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    type: str = "string"
    format: str = ""
    description: str = ""
    priority: int = 0

    def definition(self) -> dict[str, Any]:
        """The ``TableColumnDefinition`` wire form."""
        return {"name": self.name, "type": self.type, "format": self.format,
                "description": self.description, "priority": self.priority}


@dataclass(frozen=True, slots=True)
class Printer:
    columns: tuple[Column, ...]
    cells: Callable[[Obj, float], list[Any]]
    #: Row conditions (``Completed``), as upstream marks finished pods.
    conditions: Callable[[Obj], list[dict[str, str]]] | None = None


# --------------------------------------------------------------------------- time


_TIME_CACHE: dict[str, float] = {}


def parse_time(value: str | None) -> float | None:
    """RFC 3339 -> epoch seconds, None when absent or unparsable (the cell shows ``<unknown>``).

    Memoised because every table refresh parses the same few timestamps again.
    """
    if not value:
        return None
    cached = _TIME_CACHE.get(value)
    if cached is not None:
        return cached
    try:
        ts = parse_rfc3339(value)
    except ValueError:
        return None
    if len(_TIME_CACHE) > 100_000:
        _TIME_CACHE.clear()
    _TIME_CACHE[value] = ts
    return ts


def age(timestamp: str | None, now: float) -> str:
    """``translateTimestampSince``: ``<unknown>`` for a missing time."""
    ts = parse_time(timestamp)
    if ts is None:
        return "<unknown>"
    return human_duration(now - ts)


# --------------------------------------------------------------------------- helpers


def _meta(o: Obj) -> Obj:
    return o.get("metadata") or {}


def _spec(o: Obj) -> Obj:
    return o.get("spec") or {}


def _status(o: Obj) -> Obj:
    return o.get("status") or {}


def _name(o: Obj) -> str:
    return _meta(o).get("name", "")


def _age(o: Obj, now: float) -> str:
    return age(_meta(o).get("creationTimestamp"), now)


def format_labels(labels: dict[str, str] | None) -> str:
    """``labels.FormatLabels``: sorted ``k=v`` joined by commas, ``<none>`` when empty."""
    if not labels:
        return "<none>"
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


def format_label_selector(selector: Obj | None) -> str:
    """``metav1.FormatLabelSelector``: matchLabels then matchExpressions, ``<none>`` when empty."""
    if selector is None:
        return "<none>"
    parts: list[str] = []
    for k in sorted(selector.get("matchLabels") or {}):
        parts.append(f"{k}={selector['matchLabels'][k]}")
    for expr in selector.get("matchExpressions") or []:
        op = expr.get("operator", "")
        key = expr.get("key", "")
        values = sorted(expr.get("values") or [])
        if op == "In":
            parts.append(f"{key} in ({','.join(values)})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({','.join(values)})")
        elif op == "Exists":
            parts.append(key)
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
        else:
            return "<error>"
    text = ",".join(parts)
    return text or "<none>"


def _containers(template_spec: Obj) -> tuple[str, str]:
    containers = template_spec.get("containers") or []
    return (",".join(c.get("name", "") for c in containers), ",".join(c.get("image", "") for c in containers))


def _int(v: Any) -> int:
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0


def _list_more(items: list[str], more: bool, count: int, limit: int, empty: str) -> str:
    text = ",".join(items)
    if more:
        return f"{text} + {count - limit} more..."
    return text or empty


NAME = Column("Name", format="name", description="Name must be unique within a namespace.")
AGE = Column("Age", description="CreationTimestamp is a timestamp representing the server time when this object "
             "was created.")
CONTAINERS = Column("Containers", priority=1, description="Names of each container in the template.")
IMAGES = Column("Images", priority=1, description="Images referenced by each container in the template.")
SELECTOR = Column("Selector", priority=1, description="Label selector for pods.")


# --------------------------------------------------------------------------- pods


def _pod_cells(pod: Obj, now: float) -> list[Any]:
    spec, status, meta = _spec(pod), _status(pod), _meta(pod)
    containers = spec.get("containers") or []
    init_specs = {c.get("name"): c for c in spec.get("initContainers") or []}
    total = len(containers) + sum(1 for c in init_specs.values() if c.get("restartPolicy") == "Always")
    ready = 0
    restarts = 0
    sidecar_restarts = 0
    last_restart: float | None = None
    last_sidecar_restart: float | None = None
    phase = status.get("phase", "")
    reason = status.get("reason") or phase
    for cond in status.get("conditions") or []:
        if cond.get("type") == "PodScheduled" and cond.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"

    def finished(cs: Obj) -> float | None:
        term = (cs.get("lastState") or {}).get("terminated")
        return parse_time(term.get("finishedAt")) if term else None

    initializing = False
    init_statuses = status.get("initContainerStatuses") or []
    for i, cs in enumerate(init_statuses):
        restarts += _int(cs.get("restartCount"))
        fin = finished(cs)
        if fin is not None and (last_restart is None or fin > last_restart):
            last_restart = fin
        sidecar = (init_specs.get(cs.get("name")) or {}).get("restartPolicy") == "Always"
        if sidecar:
            sidecar_restarts += _int(cs.get("restartCount"))
            if fin is not None and (last_sidecar_restart is None or fin > last_sidecar_restart):
                last_sidecar_restart = fin
        state = cs.get("state") or {}
        term, waiting = state.get("terminated"), state.get("waiting")
        if term is not None and _int(term.get("exitCode")) == 0:
            continue
        if sidecar and cs.get("started"):
            if cs.get("ready"):
                ready += 1
            continue
        if term is not None:
            if not term.get("reason"):
                reason = (f"Init:Signal:{term['signal']}" if term.get("signal")
                          else f"Init:ExitCode:{_int(term.get('exitCode'))}")
            else:
                reason = "Init:" + term["reason"]
        elif waiting is not None and waiting.get("reason") and waiting.get("reason") != "PodInitializing":
            reason = "Init:" + waiting["reason"]
        else:
            reason = f"Init:{i}/{len(init_specs)}"
        initializing = True
        break

    initialized = any(c.get("type") == "Initialized" and c.get("status") == "True"
                      for c in status.get("conditions") or [])
    if not initializing or initialized:
        restarts = sidecar_restarts
        last_restart = last_sidecar_restart
        has_running = False
        for cs in reversed(status.get("containerStatuses") or []):
            restarts += _int(cs.get("restartCount"))
            fin = finished(cs)
            if fin is not None and (last_restart is None or fin > last_restart):
                last_restart = fin
            state = cs.get("state") or {}
            waiting, term = state.get("waiting"), state.get("terminated")
            if waiting is not None and waiting.get("reason"):
                reason = waiting["reason"]
            elif term is not None and term.get("reason"):
                reason = term["reason"]
            elif term is not None:
                reason = (f"Signal:{term['signal']}" if term.get("signal")
                          else f"ExitCode:{_int(term.get('exitCode'))}")
            elif cs.get("ready") and state.get("running") is not None:
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            ready_cond = any(c.get("type") == "Ready" and c.get("status") == "True"
                             for c in status.get("conditions") or [])
            reason = "Running" if ready_cond else "NotReady"

    if meta.get("deletionTimestamp") and status.get("reason") == "NodeLost":
        reason = "Unknown"
    elif meta.get("deletionTimestamp") and phase not in ("Succeeded", "Failed"):
        reason = "Terminating"

    restarts_text = str(restarts)
    if restarts and last_restart is not None:
        restarts_text = f"{restarts} ({human_duration(now - last_restart)} ago)"

    pod_ips = status.get("podIPs") or []
    ip = (pod_ips[0].get("ip") if pod_ips else "") or status.get("podIP") or "<none>"
    gates = spec.get("readinessGates") or []
    gates_text = "<none>"
    if gates:
        conds = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
        gates_text = f"{sum(1 for g in gates if conds.get(g.get('conditionType')) == 'True')}/{len(gates)}"
    return [meta.get("name", ""), f"{ready}/{total}", reason, restarts_text, _age(pod, now), ip,
            spec.get("nodeName") or "<none>", status.get("nominatedNodeName") or "<none>", gates_text]


def _pod_conditions(pod: Obj) -> list[dict[str, str]]:
    phase = _status(pod).get("phase")
    if phase == "Succeeded":
        return [{"type": "Completed", "status": "True", "reason": "Succeeded",
                 "message": "The pod has completed successfully."}]
    if phase == "Failed":
        return [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]
    return []


PODS = Printer(
    (NAME,
     Column("Ready", description="The aggregate readiness state of this pod for accepting traffic."),
     Column("Status", description="The aggregate status of the containers in this pod."),
     Column("Restarts", description="The number of times the containers in this pod have been restarted and when "
            "the last container in this pod has restarted."),
     AGE,
     Column("IP", priority=1, description="podIP address allocated to the pod. Routable at least within the "
            "cluster. Empty if not yet allocated."),
     Column("Node", priority=1, description="NodeName indicates in which node this pod is scheduled."),
     Column("Nominated Node", priority=1, description="nominatedNodeName is set only when this pod preempts other "
            "pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful "
            "termination periods."),
     Column("Readiness Gates", priority=1, description="If specified, all readiness gates will be evaluated for "
            "pod readiness.")),
    _pod_cells,
    _pod_conditions,
)


# --------------------------------------------------------------------------- workloads


def _template_spec(o: Obj) -> Obj:
    return (_spec(o).get("template") or {}).get("spec") or {}


def _deployment_cells(d: Obj, now: float) -> list[Any]:
    spec, status = _spec(d), _status(d)
    names, images = _containers(_template_spec(d))
    desired = spec.get("replicas", 1)
    return [_name(d), f"{_int(status.get('readyReplicas'))}/{_int(desired)}", _int(status.get("updatedReplicas")),
            _int(status.get("availableReplicas")), _age(d, now), names, images,
            format_label_selector(spec.get("selector"))]


DEPLOYMENTS = Printer(
    (NAME, Column("Ready", description="Number of the pod with ready state"),
     Column("Up-to-date", description="Total number of non-terminated pods targeted by this deployment that have "
            "the desired template spec."),
     Column("Available", description="Total number of available pods (ready for at least minReadySeconds) "
            "targeted by this deployment."),
     AGE, CONTAINERS, IMAGES, SELECTOR),
    _deployment_cells,
)


def _replica_cells(obj: Obj, now: float, selector: str) -> list[Any]:
    """A ReplicaSet's or ReplicationController's row: they differ only in how the selector is written."""
    spec, status = _spec(obj), _status(obj)
    names, images = _containers(_template_spec(obj))
    return [_name(obj), _int(spec.get("replicas", 1)), _int(status.get("replicas")), _int(status.get("readyReplicas")),
            _age(obj, now), names, images, selector]


def _replicaset_cells(rs: Obj, now: float) -> list[Any]:
    return _replica_cells(rs, now, format_label_selector(_spec(rs).get("selector")))


REPLICASETS = Printer(
    (NAME, Column("Desired", type="integer", description="Replicas is the number of desired pods."),
     Column("Current", type="integer", description="Replicas is the most recently observed number of replicas."),
     Column("Ready", type="integer", description="The number of ready replicas for this replica set."),
     AGE, CONTAINERS, IMAGES, SELECTOR),
    _replicaset_cells,
)


def _daemonset_cells(ds: Obj, now: float) -> list[Any]:
    spec, status = _spec(ds), _status(ds)
    tspec = _template_spec(ds)
    names, images = _containers(tspec)
    return [_name(ds), _int(status.get("desiredNumberScheduled")), _int(status.get("currentNumberScheduled")),
            _int(status.get("numberReady")), _int(status.get("updatedNumberScheduled")),
            _int(status.get("numberAvailable")), format_labels(tspec.get("nodeSelector")), _age(ds, now),
            names, images, format_label_selector(spec.get("selector"))]


DAEMONSETS = Printer(
    (NAME, Column("Desired", type="integer", description="The total number of nodes that should be running the "
                  "daemon pod."),
     Column("Current", type="integer", description="The number of nodes that are running at least 1 daemon pod."),
     Column("Ready", type="integer", description="The number of nodes that should be running the daemon pod and "
            "have one or more of the daemon pod running and ready."),
     Column("Up-to-date", type="integer", description="The total number of nodes that are running updated daemon "
            "pod"),
     Column("Available", type="integer", description="The number of nodes that should be running the daemon pod "
            "and have one or more of the daemon pod running and available."),
     Column("Node Selector", description="NodeSelector is a selector which must be true for the pod to fit on a "
            "node."),
     AGE, CONTAINERS, IMAGES, SELECTOR),
    _daemonset_cells,
)


def _statefulset_cells(ss: Obj, now: float) -> list[Any]:
    names, images = _containers(_template_spec(ss))
    return [_name(ss), f"{_int(_status(ss).get('readyReplicas'))}/{_int(_spec(ss).get('replicas', 1))}",
            _age(ss, now), names, images]


STATEFULSETS = Printer(
    (NAME, Column("Ready", description="Number of the pod with ready state"), AGE, CONTAINERS, IMAGES),
    _statefulset_cells,
)


def _replicationcontroller_cells(rc: Obj, now: float) -> list[Any]:
    return _replica_cells(rc, now, format_labels(_spec(rc).get("selector")))


REPLICATIONCONTROLLERS = Printer(
    (NAME, Column("Desired", type="integer", description="Replicas is the number of desired replicas."),
     Column("Current", type="integer", description="Replicas is the most recently observed number of replicas."),
     Column("Ready", type="integer", description="The number of ready replicas for this replication controller."),
     AGE, CONTAINERS, IMAGES,
     Column("Selector", priority=1, description="Selector is a label query over pods that should match the Replicas "
            "count.")),
    _replicationcontroller_cells,
)


def _controller_revision_cells(cr: Obj, now: float) -> list[Any]:
    """``printControllerRevision``: the controller as ``kind.group/name`` in lower case."""
    owner = next((r for r in _meta(cr).get("ownerReferences") or [] if r.get("controller")), None)
    controller = "<none>"
    if owner is not None:
        group = str(owner.get("apiVersion", "")).rpartition("/")[0] if "/" in str(owner.get("apiVersion", "")) else ""
        kind = f"{owner.get('kind', '')}.{group}" if group else str(owner.get("kind", ""))
        controller = f"{kind.lower()}/{owner.get('name', '')}" if kind else str(owner.get("name", ""))
    return [_name(cr), controller, _int(cr.get("revision")), _age(cr, now)]


CONTROLLERREVISIONS = Printer(
    (NAME, Column("Controller", description="Controller of the object"),
     Column("Revision", description="Revision indicates the revision of the state represented by Data."), AGE),
    _controller_revision_cells,
)


def _has_condition(status: Obj, kind: str) -> bool:
    return any(c.get("type") == kind and c.get("status") == "True" for c in status.get("conditions") or [])


def _job_cells(job: Obj, now: float) -> list[Any]:
    spec, status = _spec(job), _status(job)
    succeeded = _int(status.get("succeeded"))
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{_int(spec['completions'])}"
    else:
        parallelism = _int(spec.get("parallelism"))
        completions = f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"
    start, done = parse_time(status.get("startTime")), parse_time(status.get("completionTime"))
    duration = "" if start is None else human_duration((done if done is not None else now) - start)
    if _has_condition(status, "Complete"):
        state = "Complete"
    elif _has_condition(status, "Failed"):
        state = "Failed"
    elif _meta(job).get("deletionTimestamp"):
        state = "Terminating"
    elif _has_condition(status, "Suspended"):
        state = "Suspended"
    elif _has_condition(status, "FailureTarget"):
        state = "FailureTarget"
    elif _has_condition(status, "SuccessCriteriaMet"):
        state = "SuccessCriteriaMet"
    else:
        state = "Running"
    names, images = _containers(_template_spec(job))
    return [_name(job), state, completions, duration, _age(job, now), names, images,
            format_label_selector(spec.get("selector"))]


JOBS = Printer(
    (NAME, Column("Status", description="Status of the job."),
     Column("Completions", description="The desired number of successfully finished pods the job should be run "
            "with."),
     Column("Duration", description="Time required to complete the job."), AGE, CONTAINERS, IMAGES, SELECTOR),
    _job_cells,
)


def _cronjob_cells(cj: Obj, now: float) -> list[Any]:
    spec, status = _spec(cj), _status(cj)
    job_spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    names, images = _containers((job_spec.get("template") or {}).get("spec") or {})
    suspend = spec.get("suspend")
    last = status.get("lastScheduleTime")
    return [_name(cj), spec.get("schedule", ""), spec.get("timeZone") or "<none>",
            "<unset>" if suspend is None else ("True" if suspend else "False"), len(status.get("active") or []),
            age(last, now) if last else "<none>", _age(cj, now), names, images,
            format_label_selector(job_spec.get("selector"))]


CRONJOBS = Printer(
    (NAME, Column("Schedule", description="The schedule in Cron format."),
     Column("Timezone", description="The time zone name for the given schedule."),
     Column("Suspend", type="boolean", description="This flag tells the controller to suspend subsequent "
            "executions."),
     Column("Active", type="integer", description="A list of pointers to currently running jobs."),
     Column("Last Schedule", description="Information when was the last time the job was successfully scheduled."),
     AGE, CONTAINERS, IMAGES, SELECTOR),
    _cronjob_cells,
)


# --------------------------------------------------------------------------- networking


def _service_external_ip(svc: Obj) -> str:
    spec = _spec(svc)
    kind = spec.get("type", "ClusterIP")
    external = spec.get("externalIPs") or []
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) if external else "<none>"
    if kind == "LoadBalancer":
        ingress = ((_status(svc).get("loadBalancer") or {}).get("ingress")) or []
        lb = [i.get("ip") or i.get("hostname") or "" for i in ingress]
        lb = [x for x in lb if x]
        results = lb + list(external)
        return ",".join(results) if results else "<pending>"
    if kind == "ExternalName":
        return spec.get("externalName", "")
    return "<unknown>"


def _service_ports(ports: Sequence[Obj]) -> str:
    pieces = []
    for p in ports:
        proto = p.get("protocol", "TCP")
        if _int(p.get("nodePort")) > 0:
            pieces.append(f"{_int(p.get('port'))}:{_int(p['nodePort'])}/{proto}")
        else:
            pieces.append(f"{_int(p.get('port'))}/{proto}")
    return ",".join(pieces) or "<none>"


def _service_cells(svc: Obj, now: float) -> list[Any]:
    spec = _spec(svc)
    return [_name(svc), spec.get("type", "ClusterIP"), spec.get("clusterIP") or "<none>", _service_external_ip(svc),
            _service_ports(spec.get("ports") or []), _age(svc, now), format_labels(spec.get("selector"))]


SERVICES = Printer(
    (NAME, Column("Type", description="type determines how the Service is exposed."),
     Column("Cluster-IP", description="clusterIP is the IP address of the service and is usually assigned "
            "randomly."),
     Column("External-IP", description="externalIPs is a list of IP addresses for which nodes in the cluster will "
            "also accept traffic for this service."),
     Column("Port(s)", description="The list of ports that are exposed by this service."),
     AGE,
     Column("Selector", priority=1, description="Route service traffic to pods with label keys and values "
            "matching this selector.")),
    _service_cells,
)


def _endpointslice_cells(es: Obj, now: float) -> list[Any]:
    ports = es.get("ports") or []
    port_items: list[str] = []
    for p in ports[:3]:
        if p.get("port") is not None:
            port_items.append(str(p["port"]))
        elif p.get("name") is not None:
            port_items.append(p["name"])
        else:
            port_items.append("*")
    addresses: list[str] = []
    count = 0
    for ep in es.get("endpoints") or []:
        for addr in ep.get("addresses") or []:
            if len(addresses) < 3:
                addresses.append(addr)
            count += 1
    return [_name(es), es.get("addressType", ""),
            _list_more(port_items, len(ports) > 3, len(ports), 3, "<unset>"),
            _list_more(addresses, count > 3, count, 3, "<unset>"), _age(es, now)]


ENDPOINTSLICES = Printer(
    (NAME, Column("AddressType", description="addressType specifies the type of address carried by this "
                  "EndpointSlice."),
     Column("Ports", description="ports specifies the list of network ports exposed by each endpoint in this "
            "slice."),
     Column("Endpoints", description="endpoints is a list of unique endpoints in this slice."), AGE),
    _endpointslice_cells,
)


def _endpoints_cells(ep: Obj, now: float) -> list[Any]:
    items: list[str] = []
    count = 0
    for subset in ep.get("subsets") or []:
        ports = subset.get("ports") or [{}]
        for addr in subset.get("addresses") or []:
            for port in ports:
                if len(items) < 3:
                    items.append(f"{addr.get('ip', '')}:{port['port']}" if "port" in port else addr.get("ip", ""))
                count += 1
    return [_name(ep), _list_more(items, count > 3, count, 3, "<none>"), _age(ep, now)]


ENDPOINTS = Printer(
    (NAME, Column("Endpoints", description="Endpoints is the list of endpoints in this object."), AGE),
    _endpoints_cells,
)


def _ingress_hosts(rules: Sequence[Obj]) -> str:
    """``formatHosts``: up to three hosts, ``*`` when no rule names one."""
    hosts: list[str] = []
    more = False
    for rule in rules:
        if len(hosts) == 3:
            more = True
        if not more and rule.get("host"):
            hosts.append(rule["host"])
    if not hosts:
        return "*"
    text = ",".join(hosts)
    return f"{text} + {len(rules) - 3} more..." if more else text


def _ingress_cells(ing: Obj, now: float) -> list[Any]:
    spec = _spec(ing)
    lb = ((_status(ing).get("loadBalancer") or {}).get("ingress")) or []
    addresses = sorted({i.get("ip") or i.get("hostname") for i in lb if i.get("ip") or i.get("hostname")})
    return [_name(ing), spec.get("ingressClassName") or "<none>", _ingress_hosts(spec.get("rules") or []),
            ",".join(addresses), "80, 443" if spec.get("tls") else "80", _age(ing, now)]


INGRESSES = Printer(
    (NAME, Column("Class", description="The name of the IngressClass resource that should be used for this Ingress."),
     Column("Hosts", description="Hosts that incoming requests are matched against before the ingress rule"),
     Column("Address", description="Address is a list containing ingress points for the load-balancer"),
     Column("Ports", description="Ports of TLS configurations that open"), AGE),
    _ingress_cells,
)

NETWORKPOLICIES = Printer(
    (NAME, Column("Pod-Selector", description="podSelector selects the pods to which this NetworkPolicy object "
                  "applies."), AGE),
    lambda np, now: [_name(np), format_label_selector(_spec(np).get("podSelector")), _age(np, now)],
)


_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
_ACCESS_MODES = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"),
                 ("ReadWriteOncePod", "RWOP"))


def _access_modes(modes: Sequence[str] | None) -> str:
    """``GetAccessModesAsString``: abbreviations in upstream's fixed order, each once."""
    given = set(modes or ())
    return ",".join(short for mode, short in _ACCESS_MODES if mode in given)


def _storage(resources: Obj | None) -> str:
    """``Quantity.String()`` of ``storage``: ``0`` when absent."""
    text = (resources or {}).get("storage")
    if text is None:
        return "0"
    try:
        return format_quantity(text)
    except ValueError:
        return str(text)


def _storage_class(o: Obj) -> str:
    """The beta annotation wins over ``spec.storageClassName``, as upstream's helpers read it."""
    annotations = _meta(o).get("annotations") or {}
    if _STORAGE_CLASS_ANNOTATION in annotations:
        return annotations[_STORAGE_CLASS_ANNOTATION]
    return _spec(o).get("storageClassName") or ""


def _volume_phase(o: Obj) -> str:
    return "Terminating" if _meta(o).get("deletionTimestamp") else _status(o).get("phase", "")


def _pv_cells(pv: Obj, now: float) -> list[Any]:
    spec = _spec(pv)
    ref = spec.get("claimRef")
    claim = f"{ref.get('namespace', '')}/{ref.get('name', '')}" if ref else ""
    return [_name(pv), _storage(spec.get("capacity")), _access_modes(spec.get("accessModes")),
            spec.get("persistentVolumeReclaimPolicy", ""), _volume_phase(pv), claim, _storage_class(pv),
            spec.get("volumeAttributesClassName") or "<unset>", _status(pv).get("reason", ""), _age(pv, now),
            spec.get("volumeMode") or "<unset>"]


_VOLUME_ATTRIBUTES_CLASS = "VolumeAttributesClass"

PERSISTENTVOLUMES = Printer(
    (NAME, Column("Capacity", description="capacity is the description of the persistent volume's resources and "
                  "capacity."),
     Column("Access Modes", description="accessModes contains all ways the volume can be mounted."),
     Column("Reclaim Policy", description="persistentVolumeReclaimPolicy defines what happens to a persistent volume "
            "when released from its claim."),
     Column("Status", description="phase indicates if a volume is available, bound to a claim, or released by a "
            "claim."),
     Column("Claim", description="claimRef is part of a bi-directional binding between PersistentVolume and "
            "PersistentVolumeClaim."),
     Column("StorageClass", description="StorageClass of the pv"),
     Column(_VOLUME_ATTRIBUTES_CLASS, description="VolumeAttributesClass of the pv"),
     Column("Reason", description="reason is a brief CamelCase string that describes any failure and is meant for "
            "machine parsing and tidy display in the CLI."),
     AGE,
     Column("VolumeMode", priority=1, description="volumeMode defines if a volume is intended to be used with a "
            "formatted filesystem or to remain in raw block state.")),
    _pv_cells,
)


def _pvc_cells(pvc: Obj, now: float) -> list[Any]:
    """Capacity and access modes show only once the claim names a volume, as upstream."""
    spec, status = _spec(pvc), _status(pvc)
    volume = spec.get("volumeName") or ""
    capacity = _storage(status.get("capacity")) if volume else ""
    modes = _access_modes(status.get("accessModes")) if volume else ""
    return [_name(pvc), _volume_phase(pvc), volume, capacity, modes, _storage_class(pvc),
            spec.get("volumeAttributesClassName") or "<unset>", _age(pvc, now), spec.get("volumeMode") or "<unset>"]


PERSISTENTVOLUMECLAIMS = Printer(
    (NAME, Column("Status", description="phase represents the current phase of PersistentVolumeClaim."),
     Column("Volume", description="volumeName is the binding reference to the PersistentVolume backing this claim."),
     Column("Capacity", description="capacity represents the actual resources of the underlying volume."),
     Column("Access Modes", description="accessModes contains the actual access modes the volume backing the PVC "
            "has."),
     Column("StorageClass", description="StorageClass of the pvc"),
     Column(_VOLUME_ATTRIBUTES_CLASS, description="VolumeAttributesClass of the pvc"),
     AGE,
     Column("VolumeMode", priority=1, description="volumeMode defines what type of volume is required by the "
            "claim.")),
    _pvc_cells,
)


def _quota_cells(quota: Obj, now: float) -> list[Any]:
    """``printResourceQuota``: ``resource: used/hard`` of status.hard, sorted; limits.* in LIMIT."""
    status = _status(quota)
    hard, used = status.get("hard") or {}, status.get("used") or {}
    request: list[str] = []
    limit: list[str] = []
    for resource in sorted(hard):
        target = limit if resource.split(".")[0] == "limits" and "." in resource else request
        target.append(f"{resource}: {_storage({'storage': used.get(resource, '0')})}/"
                      f"{_storage({'storage': hard[resource]})}")
    return [_name(quota), _age(quota, now), ", ".join(request), ", ".join(limit)]


RESOURCEQUOTAS = Printer(
    (NAME, AGE,
     Column("Request", description="Request represents a minimum amount of cpu/memory that a container may "
            "consume."),
     Column("Limit", description="Limits control the maximum amount of cpu/memory that a container may use "
            "independent of contention on the node.")),
    _quota_cells,
)


# --------------------------------------------------------------------------- cluster


def _node_cells(node: Obj, now: float) -> list[Any]:
    status, labels = _status(node), _meta(node).get("labels") or {}
    states = []
    for cond in status.get("conditions") or []:
        if cond.get("type") == "Ready":
            states.append("Ready" if cond.get("status") == "True" else "NotReady")
    if not states:
        states.append("Unknown")
    if _spec(node).get("unschedulable"):
        states.append("SchedulingDisabled")
    roles = set()
    for key, value in labels.items():
        if key.startswith("node-role.kubernetes.io/"):
            roles.add(key.removeprefix("node-role.kubernetes.io/"))
        elif key == "kubernetes.io/role":
            roles.add(value)
    addresses = status.get("addresses") or []
    internal = next((a.get("address") for a in addresses if a.get("type") == "InternalIP"), None)
    external = next((a.get("address") for a in addresses if a.get("type") == "ExternalIP"), None)
    info = status.get("nodeInfo") or {}
    return [_name(node), ",".join(states), ",".join(sorted(r for r in roles if r)) or "<none>", _age(node, now),
            info.get("kubeletVersion", ""), internal or "<none>", external or "<none>",
            info.get("osImage") or "<unknown>", info.get("kernelVersion") or "<unknown>",
            info.get("containerRuntimeVersion") or "<unknown>"]


NODES = Printer(
    (NAME, Column("Status", description="The status of the node"),
     Column("Roles", description="The roles of the node"), AGE,
     Column("Version", description="Kubelet Version reported by the node."),
     Column("Internal-IP", priority=1, description="List of addresses reachable to the node."),
     Column("External-IP", priority=1, description="List of addresses reachable to the node."),
     Column("OS-Image", priority=1, description="OS Image reported by the node from /etc/os-release."),
     Column("Kernel-Version", priority=1, description="Kernel Version reported by the node from 'uname -r'."),
     Column("Container-Runtime", priority=1, description="ContainerRuntime Version reported by the node through "
            "runtime remote API.")),
    _node_cells,
)

NAMESPACES = Printer(
    (NAME, Column("Status", description="The status of the namespace"), AGE),
    lambda ns, now: [_name(ns), _status(ns).get("phase", ""), _age(ns, now)],
)


def _event_cells(ev: Obj, now: float) -> list[Any]:
    first = ev.get("firstTimestamp")
    first_text = age(first, now) if first else age(ev.get("eventTime"), now)
    last = ev.get("lastTimestamp")
    last_text = age(last, now) if last else first_text
    count = _int(ev.get("count"))
    series = ev.get("series")
    if series:
        last_text = age(series.get("lastObservedTime"), now)
        count = _int(series.get("count"))
    elif count == 0:
        count = 1
    involved = ev.get("involvedObject") or {}
    kind = (involved.get("kind") or "").lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    source = ev.get("source") or {}
    component, host = source.get("component", ""), source.get("host", "")
    if not component:
        component, host = ev.get("reportingComponent", ""), ev.get("reportingInstance", "")
    source_text = ", ".join(x for x in (component, host) if x)
    return [last_text, ev.get("type", ""), ev.get("reason", ""), target, involved.get("fieldPath", ""),
            source_text, (ev.get("message") or "").strip(), first_text, count, _name(ev)]


EVENTS = Printer(
    (Column("Last Seen", description="Time when this Event was last seen"),
     Column("Type", description="Type of this event (Normal, Warning), new types could be added in the future."),
     Column("Reason", description="This should be a short, machine understandable string that gives the reason "
            "for this event being generated."),
     Column("Object", description="The object this Event is about."),
     Column("Subobject", priority=1, description="If referring to a piece of an object instead of an entire "
            "object, this string should contain a valid JSON/Go field access statement."),
     Column("Source", priority=1, description="The component reporting this event."),
     Column("Message", description="A human-readable description of the status of this operation."),
     Column("First Seen", priority=1, description="The time at which the event was first recorded."),
     Column("Count", priority=1, description="The number of times this event has occurred."),
     Column("Name", priority=1, format="name", description="Name must be unique within a namespace.")),
    _event_cells,
)

LEASES = Printer(
    (NAME, Column("Holder", description="holderIdentity contains the identity of the holder of a current lease."),
     AGE),
    lambda lease, now: [_name(lease), _spec(lease).get("holderIdentity", "<unknown>"), _age(lease, now)],
)

CONFIGMAPS = Printer(
    (NAME, Column("Data", type="string", description="Data contains the configuration data."), AGE),
    lambda cm, now: [_name(cm), len(cm.get("data") or {}) + len(cm.get("binaryData") or {}), _age(cm, now)],
)

SECRETS = Printer(
    (NAME, Column("Type", description="Used to facilitate programmatic handling of secret data."),
     Column("Data", type="string", description="Data contains the secret data."), AGE),
    lambda s, now: [_name(s), s.get("type", ""), len(s.get("data") or {}), _age(s, now)],
)

SERVICEACCOUNTS = Printer(
    (NAME, Column("Secrets", type="string", description="Secrets is a list of the secrets in the same namespace "
                  "that pods running using this ServiceAccount are allowed to use."), AGE),
    lambda sa, now: [_name(sa), len(sa.get("secrets") or []), _age(sa, now)],
)


def _hpa_targets(hpa: Obj) -> str:
    spec, status = _spec(hpa), _status(hpa)
    current = {}
    for m in status.get("currentMetrics") or []:
        res = m.get("resource") or {}
        if m.get("type") == "Resource" and res.get("name"):
            current[res["name"]] = res.get("current") or {}
    parts = []
    for m in spec.get("metrics") or []:
        if m.get("type") != "Resource":
            parts.append("<unknown>/<unknown>")
            continue
        res = m.get("resource") or {}
        target = res.get("target") or {}
        cur = current.get(res.get("name"), {})
        if target.get("type") == "Utilization":
            now_text = f"{cur['averageUtilization']}%" if "averageUtilization" in cur else "<unknown>"
            parts.append(f"{res.get('name')}: {now_text}/{target.get('averageUtilization', 0)}%")
        else:
            want = target.get("averageValue") or target.get("value") or "<unknown>"
            now_text = cur.get("averageValue") or cur.get("value") or "<unknown>"
            parts.append(f"{res.get('name')}: {now_text}/{want}")
    if not parts:
        return "<none>"
    if len(parts) > 2:
        return ", ".join(parts[:2]) + f" + {len(parts) - 2} more..."
    return ", ".join(parts)


def _hpa_cells(hpa: Obj, now: float) -> list[Any]:
    spec, status = _spec(hpa), _status(hpa)
    ref = spec.get("scaleTargetRef") or {}
    min_pods = spec.get("minReplicas")
    return [_name(hpa), f"{ref.get('kind', '')}/{ref.get('name', '')}", _hpa_targets(hpa),
            str(min_pods) if min_pods is not None else "<unset>", _int(spec.get("maxReplicas")),
            _int(status.get("currentReplicas")), _age(hpa, now)]


HPAS = Printer(
    (NAME, Column("Reference", description="reference to scaled resource"),
     Column("Targets", description="the metrics used to calculate the desired replica count"),
     Column("MinPods", description="minReplicas is the lower limit for the number of replicas."),
     Column("MaxPods", type="integer", description="maxReplicas is the upper limit for the number of replicas."),
     Column("Replicas", type="integer", description="current number of replicas of pods managed by this "
            "autoscaler."),
     AGE),
    _hpa_cells,
)


def _pdb_cells(pdb: Obj, now: float) -> list[Any]:
    spec = _spec(pdb)
    return [_name(pdb), str(spec["minAvailable"]) if "minAvailable" in spec else "N/A",
            str(spec["maxUnavailable"]) if "maxUnavailable" in spec else "N/A",
            _int(_status(pdb).get("disruptionsAllowed")), _age(pdb, now)]


PDBS = Printer(
    (NAME, Column("Min Available", description="The minimum number of pods that must be available simultaneously."),
     Column("Max Unavailable", description="The maximum number of pods that may be unavailable simultaneously."),
     Column("Allowed Disruptions", type="integer", description="Number of pod disruptions that are currently "
            "allowed."),
     AGE),
    _pdb_cells,
)

def _apiservice_available(a: Obj) -> str:
    """The condition's status, with its reason when not True (kube-aggregator's printer)."""
    for cond in _status(a).get("conditions") or ():
        if cond.get("type") == "Available":
            status = str(cond.get("status", "Unknown"))
            return status if status == "True" else f"{status} ({cond.get('reason', '')})"
    return "Unknown"


def _apiservice_service(a: Obj) -> str:
    svc = _spec(a).get("service")
    return f"{svc.get('namespace', '')}/{svc.get('name', '')}" if svc else "Local"


APISERVICES = Printer(
    (NAME, Column("Service", description="The reference to the service that hosts this API endpoint."),
     Column("Available", description="Whether this service is available."), AGE),
    lambda a, now: [_name(a), _apiservice_service(a), _apiservice_available(a), _age(a, now)],
)

RUNTIMECLASSES = Printer(
    (NAME, Column("Handler", description="handler specifies the underlying runtime and configuration that the CRI "
                  "implementation will use to handle pods of this class."), AGE),
    lambda rc, now: [_name(rc), rc.get("handler") or "", _age(rc, now)],
)


def _csr_condition(csr: Obj) -> str:
    """upstream's printer: the condition types in order, "Issued" once a certificate is there."""
    status = _status(csr)
    kinds = [c.get("type", "") for c in status.get("conditions") or () if isinstance(c, dict)]
    if status.get("certificate"):
        kinds.append("Issued")
    return ",".join(kinds) or "Pending"


def _csr_duration(csr: Obj) -> str:
    seconds = (csr.get("spec") or {}).get("expirationSeconds")
    return human_duration(float(seconds)) if isinstance(seconds, int) else "<none>"


CERTIFICATESIGNINGREQUESTS = Printer(
    (NAME, AGE, Column("SignerName", description="signerName indicates the requested signer, and is a qualified "
                       "name."),
     Column("Requestor", description="username contains the name of the user that created the "
            "CertificateSigningRequest."),
     Column("RequestedDuration", description="expirationSeconds is the requested duration of validity of the "
            "issued certificate."),
     Column("Condition", description="conditions applied to the request.")),
    lambda csr, now: [_name(csr), _age(csr, now), (csr.get("spec") or {}).get("signerName") or "",
                      (csr.get("spec") or {}).get("username") or "", _csr_duration(csr), _csr_condition(csr)],
)


def _missing_pl(fs: Obj) -> str:
    for cond in _status(fs).get("conditions") or ():
        if isinstance(cond, dict) and cond.get("type") == "Dangling":
            return str(cond.get("status") == "True")
    return "?"


FLOWSCHEMAS = Printer(
    (NAME, Column("PriorityLevel", description="priorityLevelConfiguration should reference a "
                  "PriorityLevelConfiguration in the cluster."),
     Column("MatchingPrecedence", type="string", description="matchingPrecedence is used to choose among the "
            "FlowSchemas that match a given request."),
     Column("DistinguisherMethod", description="distinguisherMethod defines how to compute the flow "
            "distinguisher for requests that match this schema."),
     AGE, Column("MissingPL", description="Whether the referenced PriorityLevelConfiguration is missing.")),
    lambda fs, now: [_name(fs), ((fs.get("spec") or {}).get("priorityLevelConfiguration") or {}).get("name", ""),
                     str((fs.get("spec") or {}).get("matchingPrecedence", "")),
                     ((fs.get("spec") or {}).get("distinguisherMethod") or {}).get("type") or "<none>",
                     _age(fs, now), _missing_pl(fs)],
)


def _plc_cells(pl: Obj, now: float) -> list[Any]:
    spec = pl.get("spec") or {}
    limited = spec.get("limited") or {}
    queuing = (limited.get("limitResponse") or {}).get("queuing") or {}
    shares = limited.get("nominalConcurrencyShares") if spec.get("type") == "Limited" else \
        (spec.get("exempt") or {}).get("nominalConcurrencyShares", 0)
    cells = [str(queuing[k]) if k in queuing else "<none>" for k in ("queues", "handSize", "queueLengthLimit")]
    return [_name(pl), spec.get("type") or "", str(shares if shares is not None else "<none>"), *cells,
            _age(pl, now)]


PRIORITYLEVELCONFIGURATIONS = Printer(
    (NAME, Column("Type", description="type indicates whether this priority level is subject to limitation on "
                  "request execution."),
     Column("NominalConcurrencyShares", description="nominalConcurrencyShares (NCS) contributes to the "
            "computation of the NominalConcurrencyLimit (NominalCL) of this level."),
     Column("Queues", description="queues is the number of queues for this priority level."),
     Column("HandSize", description="handSize is a small positive number that configures the shuffle sharding "
            "of requests into queues."),
     Column("QueueLengthLimit", description="queueLengthLimit is the maximum number of requests allowed to be "
            "waiting in a given queue of this priority level at a time."),
     AGE),
    _plc_cells,
)

WEBHOOK_CONFIGURATIONS = Printer(
    (NAME, Column("Webhooks", type="integer", description="Webhooks is a list of webhooks and the affected "
                  "resources and operations."), AGE),
    lambda c, now: [_name(c), len(c.get("webhooks") or ()), _age(c, now)],
)


def _param_kind(policy: Obj) -> str:
    kind = (policy.get("spec") or {}).get("paramKind")
    if not isinstance(kind, dict) or not kind.get("kind"):
        return "<unset>"
    return f"{kind.get('apiVersion', '')}/{kind['kind']}"


VALIDATING_ADMISSION_POLICIES = Printer(
    (NAME, Column("Validations", type="integer", description="Validations contain CEL expressions which is used "
                  "to apply the validation."),
     Column("ParamKind", description="ParamKind specifies the kind of resources used to parameterize this "
            "policy"), AGE),
    lambda p, now: [_name(p), len((p.get("spec") or {}).get("validations") or ()), _param_kind(p), _age(p, now)],
)


def _param_ref(binding: Obj) -> str:
    ref = (binding.get("spec") or {}).get("paramRef")
    if not isinstance(ref, dict):
        return "<unset>"
    if ref.get("name"):
        return f"{ref['namespace']}/{ref['name']}" if ref.get("namespace") else f"*/{ref['name']}"
    return "*/*" if ref.get("selector") is not None else "<unset>"


VALIDATING_ADMISSION_POLICY_BINDINGS = Printer(
    (NAME, Column("PolicyName", description="PolicyName references a ValidatingAdmissionPolicy name which the "
                  "ValidatingAdmissionPolicyBinding binds to."),
     Column("ParamRef", description="paramRef specifies the parameter resource used to configure the admission "
            "control policy."), AGE),
    lambda b, now: [_name(b), (b.get("spec") or {}).get("policyName") or "", _param_ref(b), _age(b, now)],
)

PRIORITYCLASSES = Printer(
    (NAME, Column("Value", type="integer", description="The value of this priority class."),
     Column("Global-Default", type="boolean", description="globalDefault specifies whether this PriorityClass "
            "should be considered as the default priority."),
     AGE,
     Column("PreemptionPolicy", description="PreemptionPolicy is the Policy for preempting pods with lower "
            "priority.")),
    lambda pc, now: [_name(pc), _int(pc.get("value")), bool(pc.get("globalDefault")), _age(pc, now),
                     pc.get("preemptionPolicy") or "PreemptLowerPriority"],
)

def _storageclass_cells(sc: Obj, now: float) -> list[Any]:
    return [_name(sc) + (" (default)" if is_default_class(sc) else ""), sc.get("provisioner") or "",
            sc.get("reclaimPolicy") or "Delete", sc.get("volumeBindingMode") or "Immediate",
            str(bool(sc.get("allowVolumeExpansion"))).lower(), _age(sc, now)]


STORAGECLASSES = Printer(
    (NAME, Column("Provisioner", description="provisioner indicates the type of the provisioner."),
     Column("ReclaimPolicy", description="reclaimPolicy controls the reclaimPolicy for dynamically provisioned "
            "PersistentVolumes of this storage class. Defaults to Delete."),
     Column("VolumeBindingMode", description="volumeBindingMode indicates how PersistentVolumeClaims should be "
            "provisioned and bound.  When unset, VolumeBindingImmediate is used. This field is only honored by "
            "servers that enable the VolumeScheduling feature."),
     Column("AllowVolumeExpansion", description="allowVolumeExpansion shows whether the storage class allow volume "
            "expand."),
     AGE),
    _storageclass_cells,
)

_CREATED_AT = Column("Created At", type="date", description="CreationTimestamp is a timestamp representing the "
                     "server time when this object was created.")

ROLES = Printer((NAME, _CREATED_AT), lambda r, now: [_name(r), _meta(r).get("creationTimestamp", "")])


def _binding_cells(b: Obj, now: float) -> list[Any]:
    ref = b.get("roleRef") or {}
    users, groups, sas = [], [], []
    for s in b.get("subjects") or []:
        if s.get("kind") == "User":
            users.append(s.get("name", ""))
        elif s.get("kind") == "Group":
            groups.append(s.get("name", ""))
        elif s.get("kind") == "ServiceAccount":
            sas.append(f"{s.get('namespace', '')}/{s.get('name', '')}")
    return [_name(b), f"{ref.get('kind', '')}/{ref.get('name', '')}", _age(b, now), ", ".join(users),
            ", ".join(groups), ", ".join(sas)]


BINDINGS = Printer(
    (NAME, Column("Role", description="RoleRef can reference a Role in the current namespace or a ClusterRole in "
                  "the global namespace."), AGE,
     Column("Users", priority=1, description="Users in the roleBinding"),
     Column("Groups", priority=1, description="Groups in the roleBinding"),
     Column("ServiceAccounts", priority=1, description="ServiceAccounts in the roleBinding")),
    _binding_cells,
)


def _decision_cells(d: Obj, now: float) -> list[Any]:
    """A SchedulingDecision as kconsole.scheduler.decisions writes it: ``spec.pod``/``spec.attempt``,
    ``status.result``/``node``/``message`` and the node counts in ``status.nodes``."""
    spec = d.get("spec") or {}
    status = d.get("status") or {}
    counts = status.get("nodes") or {}
    feasible, evaluated = counts.get("feasible"), counts.get("evaluated")
    if feasible is None:
        feasible_text = "<none>"
    else:
        feasible_text = f"{feasible}/{evaluated}" if evaluated is not None else str(feasible)
    return [spec.get("pod") or "<none>", spec.get("attempt") or 0, status.get("result") or "<none>",
            status.get("node") or "<none>", feasible_text, _age(d, now), status.get("message") or ""]


SCHEDULINGDECISIONS = Printer(
    (Column("Pod", description="The pod this decision is about."),
     Column("Attempt", type="integer", description="Which scheduling attempt of the pod this is."),
     Column("Result", description="Scheduled, Unschedulable or Error."),
     Column("Node", description="The node chosen, if any."),
     Column("Feasible", description="Nodes that passed every filter, of those evaluated."), AGE,
     Column("Message", priority=1, description="Why the pod went where it went, or why it could not.")),
    _decision_cells,
)


def _component_cells(c: Obj, now: float) -> list[Any]:
    """upstream printComponentStatus: the Healthy condition, Healthy only when True."""
    status, message, error = "Unknown", "", ""
    for cond in c.get("conditions") or ():
        if isinstance(cond, dict) and cond.get("type") == "Healthy":
            status = "Healthy" if cond.get("status") == "True" else "Unhealthy"
            message, error = cond.get("message") or "", cond.get("error") or ""
            break
    return [_name(c), status, message, error]


COMPONENTSTATUSES = Printer(
    (NAME, Column("Status", description="Status of the component conditions"),
     Column("Message", description="Message of the component conditions"),
     Column("Error", description="Error of the component conditions")),
    _component_cells,
)

#: group-resource -> printer, as upstream's printers register them.
PRINTERS: dict[str, Printer] = {
    "pods": PODS,
    "deployments.apps": DEPLOYMENTS,
    "replicasets.apps": REPLICASETS,
    "daemonsets.apps": DAEMONSETS,
    "statefulsets.apps": STATEFULSETS,
    "jobs.batch": JOBS,
    "cronjobs.batch": CRONJOBS,
    "services": SERVICES,
    "endpointslices.discovery.k8s.io": ENDPOINTSLICES,
    "endpoints": ENDPOINTS,
    "replicationcontrollers": REPLICATIONCONTROLLERS,
    "controllerrevisions.apps": CONTROLLERREVISIONS,
    "ingresses.networking.k8s.io": INGRESSES,
    "networkpolicies.networking.k8s.io": NETWORKPOLICIES,
    "persistentvolumes": PERSISTENTVOLUMES,
    "persistentvolumeclaims": PERSISTENTVOLUMECLAIMS,
    "resourcequotas": RESOURCEQUOTAS,
    "nodes": NODES,
    "namespaces": NAMESPACES,
    "events": EVENTS,
    "leases.coordination.k8s.io": LEASES,
    "configmaps": CONFIGMAPS,
    "secrets": SECRETS,
    "serviceaccounts": SERVICEACCOUNTS,
    "horizontalpodautoscalers.autoscaling": HPAS,
    "poddisruptionbudgets.policy": PDBS,
    "priorityclasses.scheduling.k8s.io": PRIORITYCLASSES,
    "storageclasses.storage.k8s.io": STORAGECLASSES,
    "roles.rbac.authorization.k8s.io": ROLES,
    "clusterroles.rbac.authorization.k8s.io": ROLES,
    "rolebindings.rbac.authorization.k8s.io": BINDINGS,
    "clusterrolebindings.rbac.authorization.k8s.io": BINDINGS,
    "schedulingdecisions.kconsole.dev": SCHEDULINGDECISIONS,
    "componentstatuses": COMPONENTSTATUSES,
    "apiservices.apiregistration.k8s.io": APISERVICES,
    "runtimeclasses.node.k8s.io": RUNTIMECLASSES,
    "validatingwebhookconfigurations.admissionregistration.k8s.io": WEBHOOK_CONFIGURATIONS,
    "mutatingwebhookconfigurations.admissionregistration.k8s.io": WEBHOOK_CONFIGURATIONS,
    "validatingadmissionpolicies.admissionregistration.k8s.io": VALIDATING_ADMISSION_POLICIES,
    "validatingadmissionpolicybindings.admissionregistration.k8s.io": VALIDATING_ADMISSION_POLICY_BINDINGS,
    "certificatesigningrequests.certificates.k8s.io": CERTIFICATESIGNINGREQUESTS,
    "flowschemas.flowcontrol.apiserver.k8s.io": FLOWSCHEMAS,
    "prioritylevelconfigurations.flowcontrol.apiserver.k8s.io": PRIORITYLEVELCONFIGURATIONS,
}

#: Upstream's DefaultTableConvertor for kinds without a printer: NAME and CREATED AT.
DEFAULT = Printer((NAME, _CREATED_AT), lambda o, now: [_name(o), _meta(o).get("creationTimestamp", "")])


def printer_for(group_resource: str) -> Printer:
    """The printer for ``plural`` or ``plural.group``; the default NAME/CREATED AT one otherwise."""
    return PRINTERS.get(group_resource, DEFAULT)
