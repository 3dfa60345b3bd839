"""The API server's own metrics at ``/metrics``, in Prometheus' text format, as upstream serves them.

Upstream's names, labels and help texts, so a dashboard or a ``kubectl get --raw /metrics | grep``
learnt on a real cluster reads the same here: every request counted by verb, group, version,
resource, subresource, scope and code (``apiserver_request_total``) with its latency
(``apiserver_request_duration_seconds``), requests in flight, open watches, objects stored per
resource, the watch caches' event counts and the process' CPU and memory. The controllers, the
scheduler and the kubelets are clients like any other: their lease renewals and status writes are in
the counts.

Counting runs on every request, so :meth:`RequestMetrics.observe` only bumps a counter and a bucket
under the request's raw fields; labels are worked out when someone scrapes. A WATCH is counted when it
is established and not timed: upstream observes a watch's latency only when it ends, and the time to
start one says nothing a histogram reader expects.
"""

from __future__ import annotations

import os
import time
from bisect import bisect_left
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kconsole.api.registry import ResourceSpec
    from kconsole.api.server import APIServer
    from kconsole.api.types import Request

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

#: Upstream's apiserver_request_duration_seconds buckets (k8s.io/apiserver/pkg/endpoints/metrics).
BUCKETS = (0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0,
           15.0, 20.0, 30.0, 45.0, 60.0)
FIRST_BUCKET = BUCKETS[0]

#: The request verb as upstream's metrics name it (the HTTP verb, LIST and WATCH told apart).
VERBS = {"get": "GET", "list": "LIST", "watch": "WATCH", "create": "POST", "update": "PUT", "patch": "PATCH",
         "delete": "DELETE", "deletecollection": "DELETECOLLECTION"}
READ_ONLY = frozenset(("get", "list", "watch"))

_START = time.time()

#: Raw fields of one series: (verb, patch type, group, version, resource, subresource, scope, dry run).
SeriesKey = tuple[Any, ...]


class RequestMetrics:
    """Counters the API server bumps per request; rendered into Prometheus' format on demand."""

    __slots__ = ("series", "inflight")

    def __init__(self) -> None:
        #: raw key -> [{code: count}, bucket counts (one more for +Inf), sum of seconds]
        self.series: dict[SeriesKey, list[Any]] = {}
        #: request_kind -> requests being answered now (a watch only while it is set up: once it streams,
        #: it is long-running, counted in apiserver_longrunning_requests)
        self.inflight = {"mutating": 0, "readOnly": 0}

    def observe(self, req: Request, spec: ResourceSpec | None, code: int, seconds: float) -> None:
        verb = req.verb
        scope = "resource" if req.name or verb == "create" else "namespace" if req.namespace else "cluster"
        if spec is not None:
            key = (verb, req.patch_type, spec.group, req.version or spec.info.version, spec.resource,
                   req.subresource, scope, req.dry_run)
        else:  # a resource the server does not serve: as the client named it
            key = (verb, req.patch_type, req.group, req.version, req.resource, req.subresource, scope, req.dry_run)
        self._count(key, code, seconds, verb != "watch")

    def observe_path(self, path: str, code: int, seconds: float) -> None:
        """A non-resource request (``/metrics`` itself): upstream files its path as the subresource."""
        self._count(("get", None, "", "", "", path, "", False), code, seconds, True)

    def _count(self, key: SeriesKey, code: int, seconds: float, timed: bool) -> None:
        """One answer with ``code`` in ``key``'s series; its latency too unless it is a watch's."""
        entry = self.series.get(key)
        if entry is None:
            entry = self.series[key] = [{}, [0] * (len(BUCKETS) + 1), 0.0]
        codes = entry[0]
        codes[code] = codes.get(code, 0) + 1
        if timed:
            entry[1][0 if seconds <= FIRST_BUCKET else bisect_left(BUCKETS, seconds)] += 1
            entry[2] += seconds


def _labels(key: SeriesKey) -> dict[str, str]:
    verb, patch_type, group, version, resource, subresource, scope, dry_run = key
    return {"component": "apiserver", "dry_run": "All" if dry_run else "", "group": group or "",
            "resource": resource or "", "scope": scope, "subresource": subresource or "",
            "verb": "APPLY" if patch_type == "apply" else VERBS.get(verb, verb.upper()), "version": version or ""}


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _format_labels(labels: dict[str, str]) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in sorted(labels.items())) + "}"


def _number(value: float) -> str:
    if isinstance(value, int) or value.is_integer():
        return str(int(value))
    return repr(value)


#: Each family's TYPE and HELP, upstream's words.
FAMILIES: dict[str, tuple[str, str]] = {
    "apiserver_request_total": (
        "counter", "[STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, "
        "resource, scope, component, and HTTP response code."),
    "apiserver_request_duration_seconds": (
        "histogram", "[STABLE] Response latency distribution in seconds for each verb, dry run value, group, "
        "version, resource, subresource, scope and component."),
    "apiserver_current_inflight_requests": (
        "gauge", "[STABLE] Maximal number of currently used inflight request limit of this apiserver per request "
        "kind in last second."),
    "apiserver_storage_objects": (
        "gauge", "[STABLE] Number of stored objects at the time of last check split by kind. In case of a fetching "
        "error, the value will be -1."),
    "apiserver_longrunning_requests": (
        "gauge", "[STABLE] Gauge of all active long-running apiserver requests broken out by verb, group, version, "
        "resource, scope and component. Not all requests are tracked this way."),
    "apiserver_watch_cache_events_received_total": (
        "counter", "[ALPHA] Counter of events received in watch cache broken by resource type."),
    "apiserver_watch_cache_events_dispatched_total": (
        "counter", "[ALPHA] Counter of events dispatched in watch cache broken by resource type."),
    "apiserver_watch_cache_resource_version": (
        "gauge", "[ALPHA] Current resource version of watch cache broken by resource type."),
    "process_cpu_seconds_total": ("counter", "Total user and system CPU time spent in seconds."),
    "process_start_time_seconds": ("gauge", "Start time of the process since unix epoch in seconds."),
    "process_resident_memory_bytes": ("gauge", "Resident memory size in bytes."),
    "process_virtual_memory_bytes": ("gauge", "Virtual memory size in bytes."),
    "process_open_fds": ("gauge", "Number of open file descriptors."),
    "apiserver_audit_event_total": (
        "counter", "[ALPHA] Counter of audit events generated and sent to the audit backend."),
    "apiserver_storage_size_bytes": (
        "gauge", "[STABLE] Size of the storage database file physically allocated in bytes."),
}


class _Family:
    """One metric's HELP and TYPE lines and its samples."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.kind, self.help = FAMILIES[name]
        self.samples: list[tuple[str, dict[str, str], float]] = []

    def add(self, labels: dict[str, str], value: float, suffix: str = "") -> None:
        self.samples.append((suffix, labels, value))

    def lines(self) -> Iterable[str]:
        yield f"# HELP {self.name} {self.help}"
        yield f"# TYPE {self.name} {self.kind}"
        for suffix, labels, value in self.samples:
            yield f"{self.name}{suffix}{_format_labels(labels)} {_number(value)}"


def _request_families(metrics: RequestMetrics) -> list[_Family]:
    total = _Family("apiserver_request_total")
    duration = _Family("apiserver_request_duration_seconds")
    merged: dict[tuple[tuple[str, str], ...], list[Any]] = {}
    for key, (codes, buckets, seconds) in list(metrics.series.items()):
        labels = _labels(key)
        if not labels["resource"]:  # a non-resource path: upstream leaves scope empty
            labels["scope"] = ""
        ident = tuple(sorted(labels.items()))
        into = merged.get(ident)
        if into is None:
            merged[ident] = [dict(codes), list(buckets), seconds]
            continue
        for code, n in codes.items():
            into[0][code] = into[0].get(code, 0) + n
        into[1] = [a + b for a, b in zip(into[1], buckets)]
        into[2] += seconds
    for ident, (codes, buckets, seconds) in sorted(merged.items()):
        labels = dict(ident)
        for code, n in sorted(codes.items()):
            total.add({**labels, "code": str(code)}, n)
        count = sum(buckets)
        if not count:
            continue
        running = 0
        for bound, n in zip((*BUCKETS, None), buckets):
            running += n
            duration.add({**labels, "le": "+Inf" if bound is None else _number(bound)}, running, "_bucket")
        duration.add(labels, seconds, "_sum")
        duration.add(labels, count, "_count")
    inflight = _Family("apiserver_current_inflight_requests")
    for kind, n in metrics.inflight.items():
        inflight.add({"request_kind": kind}, n)
    return [total, duration, inflight]


def _cache_families(server: APIServer) -> list[_Family]:
    objects = _Family("apiserver_storage_objects")
    watches = _Family("apiserver_longrunning_requests")
    received = _Family("apiserver_watch_cache_events_received_total")
    dispatched = _Family("apiserver_watch_cache_events_dispatched_total")
    revision = _Family("apiserver_watch_cache_resource_version")
    for name, cache in sorted(server.storage.caches.items()):
        spec = cache.spec
        objects.add({"resource": name}, cache.count if cache.ready else -1)
        received.add({"resource": name}, cache.events_received)
        dispatched.add({"resource": name}, cache.events_dispatched)
        revision.add({"resource": name}, cache.rv)
        every, one_namespace, one_name = cache.watcher_counts()
        # A watch of one object names it in a field selector, which upstream scopes as the list it filters.
        by_scope = {"cluster": every + (0 if spec.namespaced else one_name),
                    "namespace": one_namespace + (one_name if spec.namespaced else 0)}
        for scope, n in by_scope.items():
            if n:
                watches.add({"component": "apiserver", "group": spec.group, "resource": spec.resource,
                             "scope": scope, "subresource": "", "verb": "WATCH", "version": spec.info.version}, n)
    return [objects, watches, received, dispatched, revision]


def _process_families() -> list[_Family]:
    cpu = _Family("process_cpu_seconds_total")
    cpu.add({}, round(time.process_time(), 3))
    start = _Family("process_start_time_seconds")
    start.add({}, round(_START, 3))
    out = [cpu, start]
    try:
        with open("/proc/self/statm") as f:
            pages = [int(x) for x in f.read().split()[:2]]
        page = os.sysconf("SC_PAGE_SIZE")
        resident = _Family("process_resident_memory_bytes")
        resident.add({}, pages[1] * page)
        virtual = _Family("process_virtual_memory_bytes")
        virtual.add({}, pages[0] * page)
        fds = _Family("process_open_fds")
        fds.add({}, len(os.listdir("/proc/self/fd")))
        out += [resident, virtual, fds]
    except (OSError, ValueError, IndexError):  # no procfs (not Linux): what the platform gives
        pass
    return out


def render(server: APIServer, db_size: int | None) -> str:
    """The whole exposition; ``db_size`` is the store's size in bytes, None when it did not answer."""
    families = _request_families(server.request_metrics)
    families += _cache_families(server)
    audit = _Family("apiserver_audit_event_total")
    audit.add({}, server.audit.total)
    families.append(audit)
    size = _Family("apiserver_storage_size_bytes")
    size.add({"storage_cluster_id": "etcd-0"}, -1 if db_size is None else db_size)
    families.append(size)
    families += _process_families()
    return "\n".join(line for family in families for line in family.lines()) + "\n"
