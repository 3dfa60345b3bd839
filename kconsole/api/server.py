"""The API server: the one door every client goes through.

:meth:`APIServer.handle` takes a :class:`~kconsole.api.types.Request` and runs upstream's pipeline —
authentication, authorization, mutating admission, validation, validating admission, storage —
answering a :class:`~kconsole.api.types.Response` (object, list or Status), a watch stream or a log
stream. It never raises for a client's mistake: every error becomes a Kubernetes Status, and every
request leaves one audit record naming the stage that rejected it.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from functools import partial
from typing import Any, NamedTuple

from kconsole.api import apiservices, componentstatus, flowcontrol, history, marshalled, prometheus, strategy
from kconsole.api.admission import dynamic, policy, webhooks
from kconsole.api.admission.metadata import new_uid
from kconsole.api.admission.serviceaccount import named_account
from kconsole.api.apply import track_update
from kconsole.api.crd.registration import CRD_SPEC, Registration, terminating_error
from kconsole.api.audit import AuditLog
from kconsole.api.writelog import WRITE_VERBS, WriteLog
from kconsole.api.controlplane import ControlPlaneLoops, Instance
from kconsole.api.authn import TokenAuthenticator
from kconsole.api.satoken import (
    OIDC_CONFIGURATION_PATH,
    ServiceAccountTokenAuthenticator,
    SigningKey,
    TokenSigner,
    jwks,
    openid_configuration,
)
from kconsole.api.decodetypes import check_patched_types, type_error
from kconsole.api.fieldvalidation import check as check_fields
from kconsole.api.filters import compile_filter, selected_name
from kconsole.api.impersonation import impersonated_user
from kconsole.api.ipalloc import AllocatedError, ClusterIPAllocator, NotInRangeError, RangeFullError, service_ips
from kconsole.api.patch import apply_patch, parse_patch, server_side_apply
from kconsole.api.prometheus import READ_ONLY, RequestMetrics
from kconsole.api.nodeauthz import Authorizers, NodeAuthorizer
from kconsole.api.nodegraph import NodeGraph
from kconsole.api.rbac import (
    AUTOUPDATE,
    BOOTSTRAP_LABELS,
    RECONCILED_OBJECTS,
    RETIRED_OBJECTS,
    RBACAuthorizer,
    bootstrap_objects,
    forbidden_error,
)
from kconsole.api.registry import BUILTIN_PRIORITY_CLASSES, Registry, ResourceSpec
from kconsole.api.stages import AdmissionContext, Attributes
from kconsole.api.storage import DeleteOptions, Storage, Transformer, clone, object_rv, own_copy, parse_rv
from kconsole.api.tasks import cancel_and_wait
from kconsole.api.types import (
    AuditRecord,
    Credentials,
    LogStream,
    PodNetwork,
    ProxiedResponse,
    Request,
    ResourceInfo,
    Response,
    StatusError,
    StreamSource,
    UserInfo,
    WatchStream,
    status_body,
)
from kconsole.api.versions import Alternate, Versions
from kconsole.clock import Clock, TimerHandle
from kconsole.objects.meta import parse_time
from kconsole.objects.names import generate_name
from kconsole.objects.podlog import LogOptions
from kconsole.store.kv import (
    ClosedError,
    CompactedError,
    FutureRevisionError,
    NoSpaceError,
    StoreError,
    TooLargeError,
    UnavailableError,
)

log = logging.getLogger(__name__)

Obj = dict[str, Any]
_Wanted = tuple[str, "str | None", dict[str, Any], str]  # resource, namespace, object, group
LogSource = Callable[[str, str, str, LogOptions], "str | LogStream | None"]
#: A node's kubelet endpoint: fn(node, path) -> the answer (text or a JSON object); None when the
#: node's kubelet does not answer (stopped, cut off, or no machine behind the Node); LookupError
#: for a path the kubelet does not serve.
KubeletEndpoints = Callable[[str, str], "str | dict[str, Any] | None"]


#: The user the API server acts as for its own bootstrap writes (upstream's loopback client).
LOOPBACK_USER = UserInfo("system:apiserver", ("system:masters",))
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
#: Field manager of a write that names none and sends no user agent.
UNKNOWN_MANAGER = "unknown"
#: The loopback client's user agent, as upstream's kube-apiserver sends it: its own writes (the
#: kubernetes Service, the system Namespaces, bootstrap policy) read manager kube-apiserver.
APISERVER_USER_AGENT = "kube-apiserver/v1.32.0 (linux/amd64) kubernetes/kconsole"
APISERVER_MANAGER = "kube-apiserver"
#: Simulated seconds before bootstrap retries a create that failed, doubling up to the maximum.
BOOTSTRAP_RETRY_FIRST = 0.5
BOOTSTRAP_RETRY_MAX = 10.0
#: Authorization questions kept for reuse (see APIServer._attributes).
MAX_QUESTIONS = 4096
#: ObjectMeta's collections are ``omitempty`` upstream: one sent empty (``labels: {}``) is neither
#: stored nor shown, as the Go types drop it.
OMIT_EMPTY_META = ("labels", "annotations", "finalizers", "ownerReferences")
_EMPTY: tuple[object, ...] = ({}, [], None)
#: Simulated seconds between sweeps for expired Events.
EVENT_GC_INTERVAL = 60.0


def _event_time(event: Obj) -> float:
    """When an Event was last written, as far as its own fields tell."""
    latest = 0.0
    for text in (event.get("lastTimestamp"), event.get("eventTime"), (event.get("series") or {}).get("lastObservedTime"),
                 event["metadata"].get("creationTimestamp")):
        if text:
            try:
                latest = max(latest, parse_time(text))
            except ValueError:
                continue
    return latest


def _optional(module: str, attr: str) -> Any:
    """A pipeline stage from its module, or None while that module does not exist yet."""
    try:
        return getattr(importlib.import_module(module), attr)
    except ModuleNotFoundError as err:
        if err.name is not None and module.startswith(err.name):
            return None
        raise


def _invalid(spec: ResourceSpec, name: str, causes: list[dict[str, str]]) -> StatusError:
    """422 for ``causes``, the kind named with its group (``Deployment.apps "web" is invalid``)."""
    return StatusError.invalid(spec.kind, name, causes, spec.group)


def _check_types(body: Obj, spec: ResourceSpec) -> None:
    """400 for a body the kind's Go struct could not be decoded from (a string ``metadata``...)."""
    problem = type_error(body, spec.kind)
    if problem is not None:
        version = spec.api_version.rpartition("/")[2]
        raise StatusError.bad_request(f'{spec.kind} in version "{version}" cannot be handled as a {spec.kind}: '
                                      f'{problem}')


#: The kind of a subresource's request body (its "kind" field may say it too).
_BODY_KINDS = {"scale": "Scale", "binding": "Binding", "eviction": "Eviction", "token": "TokenRequest",
               "exec": "PodExecOptions", "attach": "PodAttachOptions", "portforward": "PodPortForwardOptions"}


def _check_request_types(body: Obj, kind: str) -> None:
    """400 for a subresource or review body its Go struct could not be decoded from."""
    named = body.get("kind")
    if isinstance(named, str) and named:
        kind = named
    problem = type_error(body, kind)
    if problem is not None:
        raise StatusError.bad_request(f"{kind} cannot be decoded: {problem}")


def _omit_empty_meta(meta: Obj) -> None:
    for key in OMIT_EMPTY_META:
        if key in meta:
            value = meta[key]
            if not value and value in _EMPTY:  # "" or 0 stay for validation to refuse
                del meta[key]


async def _ready(result: Response) -> Response:
    """An answer made synchronously, as the awaitable :meth:`APIServer._route` returns."""
    return result


class _Call:
    """Per-request bookkeeping: who, what, and which stage is running (for the audit record)."""

    __slots__ = ("req", "user", "spec", "stage", "name", "allocated", "live", "warnings", "convert", "admitted")

    def __init__(self, req: Request) -> None:
        self.req = req
        self.user: UserInfo | None = None
        self.spec: ResourceSpec | None = None
        self.stage = "authentication"
        self.name = req.name
        #: Cluster IPs handed to this request; a shared empty tuple until the first (only Services take
        #: any), so a request allocates no list it never fills.
        self.allocated: list[str] | tuple[()] = ()
        #: Objects read live from the store for admission because the cache did not hold them yet
        #: (None until the first: the cache almost always holds them).
        self.live: dict[tuple[str, str | None, str], Obj] | None = None
        #: Warnings for the client (fieldValidation=Warn's unknown fields).
        self.warnings: list[str] | tuple[()] = ()
        #: The served version the request names when it is not the stored one (autoscaling/v1 HPAs).
        self.convert: Alternate | None = None
        #: The webhooks and policies that admitted the request, for the API log.
        self.admitted = ""

    def took(self, ip: str) -> None:
        if not self.allocated:
            self.allocated = []
        self.allocated.append(ip)  # type: ignore[union-attr]


class _Plugins(NamedTuple):
    """The admission plugins that can act on one kind."""

    mutating: list[Any]
    validating: list[Any]
    #: ``validating`` less those whose check repeats the one they made as mutating plugins.
    after_mutating: list[Any]
    #: A create's body may lend its spec to admission uncopied: the first mutating plugin to change
    #: a spec of this kind replaces it with a private copy first (``privatizes_spec``), and those
    #: before it never change a spec (``spec_untouched``).
    borrow_spec: bool


def _spec_lendable(mutating: list[Any], kind: tuple[str, str]) -> bool:
    """See :attr:`_Plugins.borrow_spec`."""
    for plugin in mutating:
        if kind in getattr(plugin, "privatizes_spec", ()):
            return True
        if not getattr(plugin, "spec_untouched", False):
            return False
    return False


def _around_spec(body: Obj) -> Obj:
    """A private copy of an in-process body except its spec, which stays the caller's (lent, see
    :meth:`APIServer._body`), in the body's key order. Section by section: a string is shared, a map
    of strings (labels) copied shallowly, anything deeper cloned; a marshal round trip of the whole
    rest cost about 3x as much for a Pod's apiVersion, kind and name with labels."""
    obj: Obj = {}
    for key, value in body.items():
        if key == "spec":
            obj[key] = value
        elif key == "metadata" and type(value) is dict:
            obj[key] = {mkey: own_copy(mvalue) for mkey, mvalue in value.items()}
        else:
            obj[key] = own_copy(value)
    return obj


class APIServer:
    """Implements :class:`kconsole.api.types.Entry`."""

    def __init__(self, kv: Any, clock: Clock, *, seed: int = 1, transformers: dict[str, Transformer] | None = None,
                 audit_capacity: int = 10_000, cache_options: dict[str, Any] | None = None,
                 service_cidr: str = "10.96.0.0/12", event_ttl: float = 3600.0,
                 instances: Sequence[Instance] = (), sa_key: SigningKey | None = None) -> None:
        self.kv = kv
        self.clock = clock
        self.rng = random.Random(seed)
        self.registry = Registry()
        self.versions = Versions(self.registry)
        #: CustomResourceDefinitions: their resource, and the kinds they add at run time.
        self.crds = Registration(self)
        self.storage = Storage(kv, clock, self.registry, transformers, cache_options=cache_options)
        self.audit = AuditLog(audit_capacity)
        #: Every write request by object, for the objects' history (the cluster gives it a file).
        self.writelog = WriteLog(clock)
        self.request_metrics = RequestMetrics()
        self.ipalloc = ClusterIPAllocator(service_cidr, random.Random(seed * 7919 + 1))
        self.tokens = TokenAuthenticator(now=clock.now)
        #: Signs service account tokens; the cluster hands in the key it keeps, else one of its own.
        self.sa_signer = TokenSigner(sa_key)
        self.tokens.fallback = ServiceAccountTokenAuthenticator(self.sa_signer, clock.now, self.get_object).authenticate
        #: Pods mount their service account's token, CA and namespace (kube-api-access-*): only where
        #: there is a CA for the root-ca-certificate-publisher to put in kube-root-ca.crt.
        self.token_volumes = False
        #: What each node may read (pods bound to it and what they name), kept from the watch caches.
        self.node_graph = NodeGraph()
        self.authorizer = Authorizers(NodeAuthorizer(self.node_graph), RBACAuthorizer(self._rbac_lister))
        mutating = _optional("kconsole.api.admission", "mutating_plugins")
        validating = _optional("kconsole.api.admission", "validating_plugins")
        validator_cls = _optional("kconsole.api.validation", "ObjectValidator")
        self.mutating = list(mutating()) if mutating is not None else []
        self.validating = list(validating()) if validating is not None else []
        self.validator = validator_cls() if validator_cls is not None else None
        #: Validating plugins whose check only repeats the one they made as mutating plugins of the same
        #: admission (``repeats_admit``, NamespaceLifecycle): one synchronous admission reads the same
        #: caches twice, so they are not asked again after validation; deletions still ask them.
        self._judged_early = {type(p) for p in self.mutating if getattr(p, "repeats_admit", False)}
        self._plugin_index: tuple[Any, Any, Any, dict[tuple[str, str], _Plugins]] = (None, None, None, {})
        self._log_source: LogSource | None = None
        self._kubelet_endpoints: KubeletEndpoints | None = None
        self._exec_source: StreamSource | None = None
        self._pod_network: PodNetwork | None = None
        self._component_probe: componentstatus.ComponentProbe | None = None
        #: Simulated seconds an Event lives after its last write (upstream's --event-ttl); 0 keeps them.
        self.event_ttl = event_ttl
        self._event_gc: TimerHandle | None = None
        #: The kubernetes Service, its endpoints and the identity Leases of ``instances`` (the
        #: control plane's API servers this one stands for).
        self._loops = ControlPlaneLoops(self, instances, random.Random(seed * 7919 + 2))
        self._ensure_failed: str | None = None
        self._event_gc_task: asyncio.Task[None] | None = None
        self._lookup: dict[str, tuple[Any, bool]] = {}
        #: Bumped whenever the served resources change: a client's discovery made before is stale.
        self.resources_version = 0
        self._impersonations: dict[tuple[str, UserInfo], UserInfo] = {}
        #: Cluster-wide admission lists by resource: (cache, its generation then, the objects).
        self._listed: dict[str, tuple[Any, int, list[Obj]]] = {}
        self._questions: dict[tuple[int, str, str, str, str, str, str, str, str], Attributes] = {}
        #: Fault injection (kconsole.faults): awaited before a request is served; it may sleep on the
        #: clock (latency) or raise a StatusError (error injection). None in normal operation.
        self.fault_injector: Callable[[Request], Awaitable[None]] | None = None
        #: Observers of every answer (the drills' referee records acknowledged writes and reads):
        #: ``tap(request, result, began)``, ``began`` being :attr:`answered` when the request came in,
        #: so a read can be ordered after the writes acknowledged before it. Empty in normal operation.
        self.taps: list[Callable[[Request, Response | WatchStream | LogStream, int], None]] = []
        #: Requests answered so far.
        self.answered = 0
        self._loopback = self.tokens.issue(LOOPBACK_USER)
        self._now_second = -1
        self._now_text = ""
        self._started = False
        self._bootstrapped = False
        self._bootstrap_task: asyncio.Task[None] | None = None
        self._etcd_error = ""
        from kconsole.api import subresources  # noqa: PLC0415 - they call back into this module

        self._sub = subresources

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Fill the watch caches, then create what a fresh cluster needs (idempotent on restart)."""
        await self.storage.bind_encrypted()
        await self.storage.start_caches()
        self.ipalloc.rebuild(self.storage.caches["services"].values())
        self.node_graph.follow(self.storage.caches["pods"], self.storage.caches.get("persistentvolumes"))
        await self.crds.start()
        self._started = True
        await self._bootstrap()

    async def stop(self) -> None:
        self._started = False
        await self.crds.stop()
        task, self._bootstrap_task = self._bootstrap_task, None
        await cancel_and_wait(task)
        if self._event_gc is not None:
            self._event_gc.cancel()
        await self._loops.stop()
        await cancel_and_wait(self._event_gc_task)
        await self.storage.stop_caches()
        self._lookup.clear()
        self._listed.clear()

    # ------------------------------------------------------------------ event TTL

    def _schedule_event_gc(self) -> None:
        if self._started and self.event_ttl > 0:
            self._event_gc = self.clock.call_later(EVENT_GC_INTERVAL, self._spawn_event_gc)

    def _spawn_event_gc(self) -> None:
        self._event_gc_task = asyncio.get_running_loop().create_task(self._collect_events(), name="event-ttl")

    async def _collect_events(self) -> None:
        """Events expire ``event_ttl`` after their last write (upstream attaches an etcd lease, 1 h)."""
        try:
            spec = self.registry.get("", "events")
            cache = self.storage.caches.get("events")
            if spec is None or cache is None:
                return
            cutoff = self.clock.now() - self.event_ttl
            for event in cache.values():
                if _event_time(event) >= cutoff:
                    continue
                meta = event["metadata"]
                try:
                    await self.storage.delete(spec, meta.get("namespace"), meta["name"],
                                              DeleteOptions(preconditions={"resourceVersion": meta["resourceVersion"]}))
                except (StatusError, StoreError):
                    continue  # changed meanwhile (fresh again) or the store is down: next round
        finally:
            self._schedule_event_gc()

    def _bootstrap_wanted(self) -> list[_Wanted]:
        """What a fresh cluster needs, in the order it is created."""
        wanted: list[_Wanted] = [("namespaces", None, {"apiVersion": "v1", "kind": "Namespace",
                                                       "metadata": {"name": ns}}, "") for ns in SYSTEM_NAMESPACES]
        for obj in bootstrap_objects():
            spec = self.registry.for_kind(obj["apiVersion"], obj["kind"])
            if spec is not None:
                wanted.append((spec.resource, obj["metadata"].get("namespace"), obj, spec.group))
        for name, value in BUILTIN_PRIORITY_CLASSES:
            wanted.append(("priorityclasses", None, {
                "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                "value": value, "preemptionPolicy": "PreemptLowerPriority",
                "description": "Used for system critical pods that must not be moved from their current node.",
            }, "scheduling.k8s.io"))
        for obj in apiservices.wanted(self.resources(), self.now()):
            wanted.append(("apiservices", None, obj, "apiregistration.k8s.io"))
        for resource, obj in flowcontrol.wanted(self.now()):
            wanted.append((resource, None, obj, "flowcontrol.apiserver.k8s.io"))
        wanted.append(self._kubernetes_service())
        return wanted

    def _kubernetes_service(self) -> _Wanted:
        return ("services", "default", {
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "kubernetes", "namespace": "default",
                         "labels": {"component": "apiserver", "provider": "kubernetes"}},
            "spec": {"type": "ClusterIP", "clusterIP": self.ipalloc.kubernetes_ip,
                     "clusterIPs": [self.ipalloc.kubernetes_ip], "sessionAffinity": "None",
                     "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}]},
        }, "")

    async def _bootstrap(self) -> None:
        """One pass at start; what failed (the store down, say) is retried in the background with
        back-off until it exists or the server stops, as upstream's post-start hooks retry."""
        wanted = self._bootstrap_wanted()
        pending = await self._ensure_all(wanted)
        await self._reconcile_policy()
        if pending:
            self._bootstrap_task = asyncio.get_running_loop().create_task(self._retry_bootstrap(pending),
                                                                          name="bootstrap-retry")
            return
        await self._until_cached(wanted)
        self._bootstrap_done()

    async def _until_cached(self, wanted: list[_Wanted]) -> None:
        """Start returns once the caches hold the bootstrap policy: RBAC decides from the caches, so a
        component started right after would otherwise be refused until the watch delivered it."""
        for group, resource in dict.fromkeys((group, resource) for resource, _, _, group in wanted):
            spec = self.registry.get(group, resource)
            if spec is None:
                continue
            try:
                await self.storage.fresh_cache(spec)
            except StatusError as err:  # a slow store: components retry a refusal, as upstream's do
                log.warning("cache of %s not caught up after bootstrap: %s", resource, err)

    async def _retry_bootstrap(self, pending: list[_Wanted]) -> None:
        delay = BOOTSTRAP_RETRY_FIRST
        while pending and self._started:
            await self.clock.sleep(delay)
            if not self._started:
                return
            pending = await self._ensure_all(pending)
            delay = min(delay * 2, BOOTSTRAP_RETRY_MAX)
        if not pending:
            self._bootstrap_done()

    def _bootstrap_done(self) -> None:
        self._bootstrapped = True
        self._schedule_event_gc()
        if self._started:
            self._loops.start()

    async def _reconcile_policy(self) -> None:
        """Put a data folder's bootstrap policy from an older version right (see RETIRED_OBJECTS and
        RECONCILED_OBJECTS in kconsole.api.rbac); a failure is logged and left for the next start."""
        group = "rbac.authorization.k8s.io"
        for resource, namespace, name in RETIRED_OBJECTS:
            found = self.get_object(f"{resource}.{group}", namespace, name)
            labels = ((found or {}).get("metadata") or {}).get("labels") or {}
            if found is not None and all(labels.get(k) == v for k, v in BOOTSTRAP_LABELS.items()):
                resp = await self.loopback("delete", resource, namespace, name, group=group)
                if not resp.ok and resp.code != 404:
                    log.warning("retiring %s %s/%s failed: %s", resource, namespace, name, resp.body.get("message"))
        wanted = {(o["kind"], o["metadata"]["name"]): o for o in bootstrap_objects()}
        kinds = {"clusterroles": "ClusterRole", "clusterrolebindings": "ClusterRoleBinding"}
        for resource, name in RECONCILED_OBJECTS:
            found = self.get_object(f"{resource}.{group}", None, name)
            want = wanted[(kinds[resource], name)]
            if found is None or any(((found.get("metadata") or {}).get("annotations") or {}).get(k) != v
                                    for k, v in AUTOUPDATE.items()):
                continue
            fields = ("rules",) if resource == "clusterroles" else ("roleRef", "subjects")
            if all(found.get(f) == want.get(f) for f in fields):
                continue
            body = clone(found)
            for f in fields:
                if f in want:
                    body[f] = want[f]
                else:
                    body.pop(f, None)
            resp = await self.loopback("update", resource, None, name, body=body, group=group)
            if not resp.ok:
                log.warning("reconciling %s %s failed: %s", resource, name, resp.body.get("message"))

    async def ensure_kubernetes_service(self) -> bool:
        """The default/kubernetes Service comes back when deleted (upstream's bootstrap controller
        reconciles it every 10 s): in-cluster clients and ``kubectl cluster-info`` rely on it."""
        return await self._ensure(*self._kubernetes_service(), quiet=True)

    async def _ensure_all(self, wanted: list[_Wanted]) -> list[_Wanted]:
        """Create what is missing; returns what could not be created yet."""
        failed: list[_Wanted] = []
        for item in wanted:
            if not await self._ensure(*item):
                failed.append(item)
        return failed

    async def _ensure(self, resource: str, namespace: str | None, obj: Obj, group: str = "",
                      quiet: bool = False) -> bool:
        """Create ``obj`` unless it exists; ``quiet``: a failure is logged once, not on every retry
        (the periodic Service check, whose IP a user's Service may hold for good)."""
        cache = self.storage.caches.get(f"{resource}.{group}" if group else resource)
        if cache is not None and cache.get(namespace, obj["metadata"]["name"]) is not None:
            return True
        resp = await self.loopback("create", resource, namespace, body=obj, group=group)
        if resp.ok and "status" in obj and resp.body.get("status") != obj["status"]:
            # A create drops the status of a kind with a status subresource; write it as its controller would.
            body = {**resp.body, "status": obj["status"]}
            resp = await self.loopback("update", resource, namespace, obj["metadata"]["name"], body, group, "status")
        if not resp.ok and resp.code != 409:
            message = resp.body.get("message")
            if not quiet or message != self._ensure_failed:
                log.warning("bootstrap of %s %s failed (will retry): %s", resource, obj["metadata"]["name"], message)
            if quiet:
                self._ensure_failed = message
            return False
        return True

    def health_checks(self) -> dict[str, tuple[bool, str]]:
        """What /readyz and /livez report, check by check."""
        synced = self._started and all(c.ready for c in self.storage.caches.values())
        etcd_error = self._etcd_error
        quorum = getattr(self.kv, "quorum", None)  # a cluster of members answers only with quorum
        if not etcd_error and callable(quorum):
            state = quorum()
            if not state.ok:
                etcd_error = f"etcdserver: no leader ({state.line()})"
        return {
            "ping": (True, "ok"),
            "etcd": (not etcd_error, etcd_error or "ok"),
            "informer-sync": (synced, "ok" if synced else "watch caches are not synced"),
            "poststarthook/generic-apiserver-start-informers": (self._started, "ok" if self._started else
                                                                "not finished"),
            "poststarthook/rbac/bootstrap-roles": (self._bootstrapped, "ok" if self._bootstrapped else "not finished"),
            "poststarthook/scheduling/bootstrap-system-priority-classes":
                (self._bootstrapped, "ok" if self._bootstrapped else "not finished"),
        }

    def resources_changed(self) -> None:
        """The resource table grew, shrank or changed (a CRD): forget lookups made by resource name,
        and tell in-process clients their discovery is stale (:attr:`resources_version`)."""
        self._lookup.clear()
        self._listed.clear()
        self.resources_version += 1

    def set_component_probe(self, probe: componentstatus.ComponentProbe | None) -> None:
        """Which control-plane components run, for ComponentStatus (upstream probes their /healthz)."""
        self._component_probe = probe

    def set_log_source(self, source: LogSource | None) -> None:
        """Where pods/log reads come from: fn(namespace, pod, container, options), as the kubelet's endpoint."""
        self._log_source = source

    def set_exec_source(self, source: StreamSource | None) -> None:
        """What serves pods/exec, pods/attach and pods/portforward once the API server has checked
        them: the pod's kubelet, as the API server hands the stream to it (the fleet)."""
        self._exec_source = source

    def set_pod_network(self, network: PodNetwork | None) -> None:
        """How pods/proxy and services/proxy reach a pod's address: the pod network (the fleet)."""
        self._pod_network = network

    def set_kubelet_endpoints(self, source: KubeletEndpoints | None) -> None:
        """What answers nodes/<name>/proxy/<path>: the node's kubelet, as the API server proxies to it."""
        self._kubelet_endpoints = source

    # ------------------------------------------------------------------ Entry

    def resources(self) -> list[ResourceInfo]:
        return self.registry.resources() + self.versions.infos()

    def audit_recent(self, n: int = 500) -> list[AuditRecord]:
        return self.audit.recent(n)

    def audit_follow(self) -> AsyncIterator[AuditRecord]:
        return self.audit.follow()

    async def metrics(self, credentials: Credentials, source: str = "in-process") -> str:
        """``GET /metrics``: upstream's apiserver_* families in Prometheus' text format, for whom RBAC
        lets get that path (cluster-admin, the system:monitoring group)."""
        async def render() -> str:
            try:
                db_size: int | None = (await self.kv.status()).db_size
            except StoreError:
                db_size = None  # upstream reports the size it could not read as -1
            return prometheus.render(self, db_size)
        return await self._non_resource(credentials, "/metrics", source, render)

    async def issuer_discovery(self, credentials: Credentials, path: str, base_url: str,
                               source: str = "in-process") -> Obj:
        """The service account issuer's OpenID discovery document and its keys (``/.well-known/
        openid-configuration``, ``/openid/v1/jwks``), for whom RBAC lets get them (upstream binds
        system:service-account-issuer-discovery to every service account)."""
        async def document() -> Obj:
            if path.rstrip("/") == OIDC_CONFIGURATION_PATH:
                return openid_configuration(base_url)
            return jwks(self.sa_signer)
        return await self._non_resource(credentials, path, source, document)

    async def _non_resource(self, credentials: Credentials, path: str, source: str,
                            produce: Callable[[], Awaitable[Any]]) -> Any:
        """A non-resource request: authenticated, authorized by RBAC on its path, counted and audited."""
        t0 = time.perf_counter()
        user: UserInfo | None = None
        stage: str | None = "authentication"
        code, message = 500, ""
        try:
            user = self.tokens.authenticate(credentials)
            stage = "authorization"
            if credentials.impersonate_user is not None:
                user = self._impersonated(user, credentials)
            self._authorize(Attributes(user=user, verb="get", resource_request=False, path=path))
            stage = "storage"
            answer = await produce()
            code, stage = 200, None
            return answer
        except StatusError as err:
            code, message = err.code, err.message
            raise
        finally:
            elapsed = time.perf_counter() - t0
            audit = self.audit
            audit.add_row((audit.next_seq(), self.clock.now(), user.name if user else "", "get", path, None,
                           None, code, elapsed * 1000.0, stage, source, message))
            self.request_metrics.observe_path(path, code, elapsed)

    async def loopback(self, verb: str, resource: str, namespace: str | None, name: str | None = None,
                       body: Obj | None = None, group: str = "", subresource: str | None = None) -> Response:
        """A request of the API server's own client, as its post-start hooks and control loops make
        them (system:masters, user agent kube-apiserver, audited with source "bootstrap")."""
        resp = await self.handle(Request(verb, resource, group=group, namespace=namespace, name=name, body=body,
                                         subresource=subresource, credentials=Credentials(token=self._loopback),
                                         source="bootstrap", user_agent=APISERVER_USER_AGENT))
        assert isinstance(resp, Response)  # no watch or log verb comes this way
        return resp

    def loopback_credentials(self) -> Credentials:
        """Credentials of the API server's own (system:masters) user, for in-process bootstrap work."""
        return Credentials(token=self._loopback)

    async def handle(self, request: Request) -> Response | WatchStream | LogStream:
        t0 = time.perf_counter()
        began = self.answered
        call = _Call(request)
        message = ""
        inflight = self.request_metrics.inflight
        kind = "readOnly" if request.verb in READ_ONLY else "mutating"
        inflight[kind] += 1
        try:
            if self.fault_injector is not None:
                call.stage = "fault-injection"
                await self.fault_injector(request)
                call.stage = "authentication"
            result = await self._route(call)
            if call.convert is not None:
                result = call.convert.outgoing(result)
            code = result.code if isinstance(result, (Response, ProxiedResponse)) else 200
            if call.warnings and isinstance(result, Response):
                result.warnings.extend(call.warnings)
            stage, message = None, call.admitted
            if self._etcd_error and request.verb not in ("get", "list", "watch"):
                self._etcd_error = ""  # a write went through: the store answers again
        except StatusError as err:
            result = Response(err.code, err.status)
            code, stage, message = err.code, call.stage, err.message
        except StoreError as err:
            status = self._store_status(err)
            result = Response(status["code"], status)
            code, stage, message = status["code"], "storage", status["message"]
        except Exception as err:  # noqa: BLE001 - the door never raises: 500 with the text, logged
            log.exception("%s %s failed", request.verb, request.resource)
            status = status_body(500, "InternalError", f"Internal error occurred: {err}")
            result = Response(500, status)
            code, stage, message = 500, call.stage, status["message"]
        finally:
            inflight[kind] -= 1
            for ip in call.allocated:
                # Addresses handed to a request that did not store its Service go back to the pool.
                self.ipalloc.release(ip)
        elapsed = time.perf_counter() - t0
        spec = call.spec
        if spec is not None:
            resource = spec.group_resource
        else:
            resource = request.resource if request.group in (None, "") else f"{request.resource}.{request.group}"
        if request.subresource:
            resource = f"{resource}/{request.subresource}"
        audit = self.audit
        audit.add_row((  # AuditRecord's fields, in its order
            audit.next_seq(), self.clock.now(), call.user.name if call.user else "", request.verb, resource,
            request.namespace, call.name, code, elapsed * 1000.0, stage, request.source, message,
        ))
        if request.verb in WRITE_VERBS and request.subresource != "proxy":  # a proxied POST writes no object
            self._record_write(request, call, result, code, stage, message)
        self.request_metrics.observe(request, spec, code, elapsed)
        self.answered += 1
        for tap in self.taps:
            tap(request, result, began)
        return result

    def _record_write(self, request: Request, call: _Call, result: Any, code: int, stage: str | None,
                      message: str) -> None:
        """Note a write for its object's history: who, and the revision written or the refusing stage."""
        spec = call.spec
        body = result.body if isinstance(result, Response) else None
        meta = body.get("metadata") if isinstance(body, dict) and body.get("kind") != "Status" else None
        name = call.name or request.name or (meta.get("name") if isinstance(meta, dict) else None)
        if not name and isinstance(request.body, dict) and isinstance(request.body.get("metadata"), dict):
            name = request.body["metadata"].get("name")
        revision = 0
        if code < 300 and isinstance(meta, dict):
            rv = meta.get("resourceVersion")
            revision = int(rv) if isinstance(rv, str) and rv.isdigit() else 0
        self.writelog.record(
            self.clock.now(), call.user.name if call.user else "", request.verb,
            spec.group_resource if spec is not None else request.resource, request.subresource,
            request.namespace, name, code, stage, message, revision, request.field_manager)

    def _store_status(self, err: StoreError) -> dict[str, Any]:
        text = str(err)
        if isinstance(err, CompactedError):
            return status_body(410, "Expired", f"The resourceVersion for the provided request is too old: {text}")
        if isinstance(err, FutureRevisionError):
            return status_body(504, "Timeout", f"Timeout: Too large resource version: {text}")
        if isinstance(err, TooLargeError):
            return status_body(413, "RequestEntityTooLarge", f"Request entity too large: {text}")
        if isinstance(err, NoSpaceError):
            # Upstream passes etcd's error through unwrapped (reason Unknown, ""): kubectl prints
            # "Error from server: etcdserver: mvcc: database space exceeded", the line users know.
            return status_body(500, "", text)
        self._etcd_error = text
        if isinstance(err, UnavailableError) and "timed out" in text:
            return status_body(504, "Timeout", text)
        if isinstance(err, (UnavailableError, ClosedError)):
            return status_body(503, "ServiceUnavailable", text)
        return status_body(500, "InternalError", f"Internal error occurred: {text}")

    # ------------------------------------------------------------------ routing

    def _route(self, call: _Call) -> Awaitable[Response | WatchStream | LogStream]:
        """Authenticate, resolve and authorize, then the verb's handler, whose coroutine the caller
        awaits directly: a coroutine level less between every request and the store."""
        req = call.req
        creds = req.credentials
        user = call.user = self.tokens.authenticate(creds)
        call.stage = "authorization"
        if creds.impersonate_user is not None:
            user = call.user = self._impersonated(user, creds)
        try:
            spec = self.registry.resolve(req.resource, req.group, req.version)
        except StatusError:
            alternate = self.versions.find(req.group, req.resource, req.version)
            if alternate is None:
                call.stage = "storage"
                raise
            spec = self._converting(call, alternate)
        call.spec = spec
        verb = req.verb
        sub = req.subresource or None
        if sub is not None and sub not in spec.info.subresources:
            call.stage = "storage"
            raise StatusError(status_body(404, "NotFound", f'the server could not find the requested resource '
                                          f'({spec.group_resource}/{sub})'))
        if sub is None and verb not in spec.info.verbs:
            raise StatusError.method_not_supported(spec.group_resource, verb)
        namespace = req.namespace if spec.namespaced else None
        if spec.namespaced and namespace is None and verb in ("create", "update", "patch") and isinstance(req.body, dict):
            namespace = (req.body.get("metadata") or {}).get("namespace") or None
        if spec.namespaced and namespace is None and verb not in ("list", "watch", "deletecollection"):
            namespace = "default"
        req.namespace = namespace
        name, selector = req.name or "", ""
        if verb in ("list", "watch"):
            selector = req.field_selector
            if not name and selector:
                name = selected_name(selector)
        self._authorize(self._attributes(user, verb, spec, sub or "", namespace or "", name, selector))
        call.stage = "storage"
        if (sub not in (None, "status") or not spec.stored) and verb in ("create", "update") \
                and isinstance(req.body, dict):
            _check_request_types(req.body, _BODY_KINDS.get(sub or "", spec.kind))
        if spec.kind == "Binding":  # the bindings resource: pods/binding by another path
            return self._sub.bind(self, call, self.registry.resolve("pods", ""))
        if not spec.stored:
            if spec.group == history.GROUP:
                return history.answer(self, call, spec)
            return _ready(self._sub.review(self, call, spec))
        if sub is not None and sub not in strategy.SPEC_SUBRESOURCES:
            return self._sub.dispatch(self, call, spec, sub)
        if verb == "create":
            return self._create(call, spec)
        if verb == "get":
            return self._get(call, spec)
        if verb == "list":
            return self._list(call, spec)
        if verb == "watch":
            return self._watch(call, spec)
        if verb == "update":
            return self._update(call, spec, sub)
        if verb == "patch":
            return self._patch(call, spec, sub)
        if verb == "delete":
            return self._delete(call, spec)
        if verb == "deletecollection":
            return self._delete_collection(call, spec)
        raise StatusError.method_not_supported(spec.group_resource, verb)

    def _converting(self, call: _Call, alternate: Alternate) -> ResourceSpec:
        """A request for a served version that is not the stored one: its body in the stored version
        (its answers go back in :meth:`handle`)."""
        req = call.req
        call.convert = alternate
        if req.verb in ("create", "update"):
            req.body = alternate.incoming(req.body)
        req.field_selector = alternate.field_selector(req.field_selector)
        return alternate.spec

    def _attributes(self, user: UserInfo, verb: str, spec: ResourceSpec, sub: str, namespace: str,
                    name: str, field_selector: str = "") -> Attributes:
        """The authorizer's question for a resource request; Attributes are immutable, so the questions
        clients keep asking (a controller creating Pods in one namespace) are built once. Bounded."""
        key = (id(user), verb, spec.group, spec.info.version, spec.resource, sub, namespace, name, field_selector)
        attrs = self._questions.get(key)
        # Keyed by the user object's identity (hashing a UserInfo is a Python call): an entry holds
        # its user, so that id cannot be reused while the entry lives; another user object of the
        # same name simply asks again.
        if attrs is None or attrs.user is not user:
            attrs = Attributes(user=user, verb=verb, group=spec.group, version=spec.info.version,
                               resource=spec.resource, subresource=sub, namespace=namespace, name=name,
                               field_selector=field_selector)
            if len(self._questions) >= MAX_QUESTIONS:
                self._questions.clear()
            self._questions[key] = attrs
        return attrs

    def _authorize(self, attrs: Attributes) -> None:
        allowed, reason = self.authorizer.authorize(attrs)
        if not allowed:
            raise forbidden_error(attrs, reason)

    def _impersonated(self, requester: UserInfo, creds: Credentials) -> UserInfo:
        """The user a request impersonates, after the requester's ``impersonate`` checks; one UserInfo
        object per (requester, impersonation), so the authorizer's questions about it stay memoised."""
        user = impersonated_user(requester, creds, self._authorize)
        key = (requester.name, user)
        known = self._impersonations.get(key)
        if known is not None:
            return known
        if len(self._impersonations) >= MAX_QUESTIONS:
            self._impersonations.clear()
        self._impersonations[key] = user
        return user

    def _rbac_lister(self, resource: str) -> tuple[int, Iterable[Obj]]:
        """Runs on every authorization: the objects are only walked when the generation moved."""
        cache = self.storage.caches.get(f"{resource}.rbac.authorization.k8s.io")
        if cache is None:
            return 0, ()
        return cache.generation, (o for bucket in cache.objects.values() for o in bucket.values())

    # ------------------------------------------------------------------ admission

    def now(self) -> str:
        """RFC 3339 of the simulated clock, formatted once per second."""
        t = int(self.clock.now())
        if t != self._now_second:
            self._now_second = t
            self._now_text = self.clock.rfc3339(t)
        return self._now_text

    def admission_context(self, call: _Call, spec: ResourceSpec, operation: str, name: str | None,
                          subresource: str | None = None) -> AdmissionContext:
        req = call.req
        get_object = self.get_object
        if call.live:
            live = call.live

            def get_object(resource: str, namespace: str | None, name: str) -> Obj | None:
                found = live.get((resource, namespace, name))
                return found if found is not None else self.get_object(resource, namespace, name)

        # Positional, in the field order of AdmissionContext: a keyword call of a dataclass's __init__
        # costs about three times as much, once per admission.
        return AdmissionContext(operation, spec.info, call.user or LOOPBACK_USER, req.namespace, name, subresource,
                                req.dry_run, self.now(), self.rng, get_object, partial(self._allocate_ip, call),
                                self.list_objects, self.token_volumes)

    def _allocate_ip(self, call: _Call) -> str:
        """An admission plugin's new cluster IP, released again unless the request stores its object."""
        try:
            ip = self.ipalloc.allocate()
        except RangeFullError as err:
            raise StatusError.internal(str(err)) from None
        call.took(ip)
        return ip

    def _cache_of(self, resource: str) -> tuple[Any, bool] | None:
        found = self._lookup.get(resource)
        if found is None:
            try:
                spec = self.registry.resolve(resource)
            except StatusError:
                return None
            cache = self.storage.caches.get(spec.group_resource)
            if cache is None:
                return None
            found = self._lookup[resource] = (cache, spec.namespaced)
        return found

    def get_object(self, resource: str, namespace: str | None, name: str) -> Obj | None:
        """Read from the watch cache without authorization (admission plugins' lookups; shared, read-only)."""
        found = self._cache_of(resource)
        if found is None:
            return None
        cache, namespaced = found
        return cache.get(namespace if namespaced else None, name)

    def list_objects(self, resource: str, namespace: str | None) -> list[Obj]:
        """Objects of one resource from the watch cache (namespace None: all), without authorization;
        for admission questions a name cannot answer (globalDefault PriorityClass, node ports in use).
        Shared and read-only: a cluster-wide list is built again only when the cache's objects changed
        (Priority admission asks for every PriorityClass on each Pod create)."""
        found = self._cache_of(resource)
        if found is None:
            return []
        cache, namespaced = found
        if namespace is None or not namespaced:
            listed = self._listed.get(resource)
            if listed is None or listed[0] is not cache or listed[1] != cache.generation:
                listed = self._listed[resource] = (cache, cache.generation, cache.values())
            return listed[2]
        return list(cache.objects.get(namespace, {}).values())

    def _plugins(self, spec: ResourceSpec) -> _Plugins:
        """The plugins that can act on the resource's kind (a plugin's ``kinds``, when it has them): the
        Pod plugins are not called for an Event or a Lease, nor ServiceAllocation for a Pod. Built once
        per kind, again when the plugin lists are replaced."""
        mutating, validating, judged, by_kind = self._plugin_index
        if mutating is not self.mutating or validating is not self.validating or judged is not self._judged_early:
            mutating, validating, judged = self.mutating, self.validating, self._judged_early
            by_kind = {}
            self._plugin_index = (mutating, validating, judged, by_kind)
        key = (spec.info.group, spec.info.kind)
        found = by_kind.get(key)
        if found is None:
            def acts(plugin: Any) -> bool:
                kinds = getattr(plugin, "kinds", None)
                return kinds is None or key in kinds

            every = [p for p in validating if acts(p)]
            mine = [p for p in mutating if acts(p)]
            found = by_kind[key] = _Plugins(mine, every, [p for p in every if type(p) not in judged],
                                            _spec_lendable(mine, key))
        return found

    def admit(self, call: _Call, spec: ResourceSpec, operation: str, obj: Obj, old: Obj | None,
              subresource: str | None = None) -> None:
        """Mutating admission -> validation -> validating admission, recording the running stage."""
        marshalled.forget()
        ctx = self.admission_context(call, spec, operation, obj["metadata"].get("name") or call.req.name,
                                     subresource)
        plugins = self._plugins(spec)
        call.stage = "mutating-admission"
        for plugin in plugins.mutating:
            plugin.admit(ctx, obj, old)
        if operation == "CREATE":
            self._fill_system_meta(obj)
        call.stage = "validation"
        causes: list[dict[str, str]] = []
        meta = obj["metadata"]
        _omit_empty_meta(meta)
        if not meta.get("name"):
            causes.append({"reason": "FieldValueRequired", "field": "metadata.name",
                           "message": "Required value: name or generateName is required"})
        if old is not None:
            causes.extend(strategy.immutable_meta_causes(obj, old))
        if self.validator is not None and spec.kind != "SchedulingDecision":
            causes.extend(self.validator.validate(ctx, obj, old))
        if causes:
            raise _invalid(spec, meta.get("name") or "", causes)
        if spec.resource == "services" and operation == "CREATE":
            self._reserve_service_ips(call, spec, obj)
        call.stage = "validating-admission"
        ctx.name = meta.get("name")
        for vplugin in plugins.after_mutating:
            vplugin.validate(ctx, obj, old)
        call.stage = "storage"

    def _after_admission(self, call: _Call, spec: ResourceSpec,
                         sub: str | None) -> Callable[[Obj, Obj | None], Awaitable[Obj]] | None:
        """The dynamic admission of an update or apply (None when no webhook or policy is configured)."""
        if not dynamic.configured(self.list_objects):
            return None

        async def after(new: Obj, current: Obj | None) -> Obj:
            operation = "CREATE" if current is None else "UPDATE"
            return await self._dynamic_admission(call, spec, operation, new, current, sub)

        return after

    async def _dynamic_admission(self, call: _Call, spec: ResourceSpec, operation: str, obj: Obj, old: Obj | None,
                                 sub: str | None) -> Obj:
        """Mutating webhooks, then (on what they made, validated again) ValidatingAdmissionPolicies and
        validating webhooks, as upstream orders them after the built-in plugins. The admission
        configuration kinds themselves are never sent to webhooks (upstream's rule: no lock-out)."""
        if spec.group == dynamic.GROUP:
            return obj
        name = (obj.get("metadata") or {}).get("name") or call.req.name or ""
        attrs = dynamic.Attributes(operation, spec.group, spec.info.version, spec.resource, sub or "", spec.kind,
                                   call.req.namespace or "", name, spec.namespaced, call.user or LOOPBACK_USER,
                                   call.req.dry_run, obj, old, self.get_object, self.list_objects,
                                   authorize=self.authorizer.authorize)
        call.stage = "mutating-admission"
        new = await webhooks.mutate(attrs, obj, spec.kind)
        if new is not obj:
            call.stage = "validation"
            causes = strategy.immutable_meta_causes(new, old) if old is not None else []
            if self.validator is not None:
                causes.extend(self.validator.validate(self.admission_context(call, spec, operation, name, sub),
                                                      new, old))
            if causes:
                raise _invalid(spec, name, causes)
        attrs.obj = new
        await self._validate_dynamically(call, attrs)
        if attrs.admitted_by or attrs.annotations:
            notes = [f"admitted by {', '.join(attrs.admitted_by)}"] if attrs.admitted_by else []
            notes += [f"{k}={v}" for k, v in sorted(attrs.annotations.items())]
            call.admitted = "; ".join(notes)
        return new

    async def _validate_dynamically(self, call: _Call, attrs: Any) -> None:
        """ValidatingAdmissionPolicies, then validating webhooks; their warnings reach the answer."""
        call.stage = "validating-admission"
        try:
            policy.admit(attrs)
            await webhooks.validate(attrs)
        finally:
            if attrs.warnings:
                call.warnings = [*call.warnings, *attrs.warnings]
        call.stage = "storage"

    async def _dynamic_delete(self, call: _Call, spec: ResourceSpec, namespace: str | None, name: str, old: Obj,
                              dry_run: bool) -> None:
        """A DELETE through mutating webhooks, ValidatingAdmissionPolicies and validating webhooks
        (``oldObject`` is the object, ``object`` null, as upstream's AdmissionToValidateObjectDeleteFunc
        sends it; a mutating webhook may not patch)."""
        attrs = dynamic.Attributes("DELETE", spec.group, spec.info.version, spec.resource, "", spec.kind,
                                   namespace or "", name, spec.namespaced, call.user or LOOPBACK_USER,
                                   dry_run, None, old, self.get_object, self.list_objects,
                                   authorize=self.authorizer.authorize)
        call.stage = "mutating-admission"
        try:
            await webhooks.mutate_delete(attrs)
        finally:
            if attrs.warnings:
                call.warnings = [*call.warnings, *attrs.warnings]
                attrs.warnings.clear()
        await self._validate_dynamically(call, attrs)
        if attrs.admitted_by:
            call.admitted = f"admitted by {', '.join(attrs.admitted_by)}"

    def admit_subresource(self, call: _Call, spec: ResourceSpec, sub: str, body: Obj) -> None:
        """Validating admission of a create on a subresource that is not the object itself (an
        Eviction, a TokenRequest): the plugins that judge it (their ``subresources``) see its body."""
        plugins = [p for p in self._plugins(spec).validating if sub in getattr(p, "subresources", ())]
        if not plugins:
            return
        ctx = self.admission_context(call, spec, "CREATE", call.req.name, sub)
        call.stage = "validating-admission"
        for plugin in plugins:
            plugin.validate(ctx, body, None)
        call.stage = "storage"

    def _fill_system_meta(self, obj: Obj) -> None:
        """What upstream's BeforeCreate always sets, in case no defaulting plugin did."""
        meta = obj["metadata"]
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = generate_name(meta["generateName"], self.rng)
        if not meta.get("uid"):
            meta["uid"] = new_uid(self.rng)
        if not meta.get("creationTimestamp"):
            meta["creationTimestamp"] = self.now()

    def _reserve_service_ips(self, call: _Call, spec: ResourceSpec, obj: Obj) -> None:
        for ip in service_ips(obj):
            if ip in call.allocated:
                continue
            try:
                self.ipalloc.allocate_specific(ip)
            except (AllocatedError, NotInRangeError) as err:
                raise _invalid(spec, obj["metadata"].get("name", ""), [
                    {"reason": "FieldValueInvalid", "field": "spec.clusterIPs",
                     "message": f'Invalid value: ["{ip}"]: {err}'}]) from None
            call.took(ip)

    def _stored(self, call: _Call, spec: ResourceSpec) -> None:
        """The write reached the store: its addresses are now the Service's."""
        if spec.resource == "services" and not call.req.dry_run:
            call.allocated = ()

    def _deleted(self, spec: ResourceSpec, obj: Obj) -> None:
        if spec.resource == "services":
            for ip in service_ips(obj):
                self.ipalloc.release(ip)

    # ------------------------------------------------------------------ reads

    async def _get(self, call: _Call, spec: ResourceSpec) -> Response:
        req = call.req
        obj = await self.read(spec, req.namespace, req.name or "", req.resource_version)
        return Response(200, clone(obj))

    async def read(self, spec: ResourceSpec, namespace: str | None, name: str, rv: str | None = None) -> Obj:
        """The object: without ``rv`` read from the store with quorum, with one from the watch cache
        (shared: copy before changing it); 404 when absent."""
        if not name:
            raise StatusError.bad_request("name is required for a get")
        min_rv = parse_rv(rv)
        if min_rv is None:
            # A consistent get is a quorum read of the store, as upstream serves it from etcd: it fails
            # while quorum is lost (waiting on a lagging cache instead failed leader-election renewals).
            obj = await self.storage.read(spec, self.storage.key(spec, namespace, name))
            if obj is None:
                raise StatusError.not_found(spec.group_resource, name, spec.group, spec.resource)
            return obj
        cache = self.storage.cache(spec) if min_rv == 0 else await self.storage.fresh_cache(spec, min_rv)
        obj = cache.get(namespace, name)
        if obj is None:
            raise StatusError.not_found(spec.group_resource, name, spec.group, spec.resource)
        return obj

    async def _list(self, call: _Call, spec: ResourceSpec) -> Response:
        req = call.req
        flt = compile_filter(spec, req.label_selector, req.field_selector, req.namespace, req.name)
        rv = parse_rv(req.resource_version)
        match = req.resource_version_match
        if match and rv is None:
            raise StatusError.bad_request("resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden "
                                          "unless resourceVersion is provided")
        if match not in (None, "", "Exact", "NotOlderThan"):
            raise StatusError.bad_request(f'resourceVersionMatch: Unsupported value: "{match}": supported values: '
                                          '"Exact", "NotOlderThan"')
        meta: dict[str, Any] = {}
        if req.continue_ or (req.limit > 0 and rv is None) or (match == "Exact" and rv):
            result = await self.storage.list_from_store(spec, flt, limit=req.limit, continue_=req.continue_,
                                                        revision=rv if match == "Exact" and rv else 0)
            items, list_rv = result.items, result.rv
            if result.continue_:
                meta["continue"] = result.continue_
                if result.remaining is not None:
                    meta["remainingItemCount"] = result.remaining
        else:
            if rv == 0:
                cache = self.storage.cache(spec)
            elif rv is None:
                # A consistent list from the cache once it holds the store's current revision, read
                # with quorum (upstream's ConsistentListFromCache): it fails while quorum is lost.
                cache = await self.storage.fresh_cache(spec, await self.storage.current_revision(spec))
            else:
                cache = await self.storage.fresh_cache(spec, rv)
            items = cache.list(flt)
            list_rv = cache.catch_up()
        meta["resourceVersion"] = str(list_rv)
        return Response(200, {"kind": spec.list_kind, "apiVersion": spec.api_version, "metadata": meta,
                              "items": items})

    async def _watch(self, call: _Call, spec: ResourceSpec) -> WatchStream:
        req = call.req
        flt = compile_filter(spec, req.label_selector, req.field_selector, req.namespace, req.name)
        rv = parse_rv(req.resource_version)
        if rv is None:
            cache = await self.storage.fresh_cache(spec)
        elif rv == 0:
            cache = self.storage.cache(spec)
        else:
            cache = self.storage.cache(spec)
            await cache.wait_for(rv)
        return cache.watch(flt, rv or None, bookmarks=req.allow_watch_bookmarks,
                           send_initial_events=req.send_initial_events, timeout=req.timeout_seconds)

    # ------------------------------------------------------------------ writes

    def _body(self, call: _Call, spec: ResourceSpec, lend_spec: bool = False) -> Obj:
        """The request's object to admit: the HTTP front's body itself (decoded for this request), an
        in-process caller's as a private copy, whose spec stays the caller's when ``lend_spec`` (the
        admission replaces it with a private copy before changing it, see _Plugins.borrow_spec)."""
        body = call.req.body
        if not isinstance(body, dict):
            raise StatusError.bad_request(f"the request body must be a {spec.kind} object, got "
                                          f"{type(body).__name__}")
        av, kind = body.get("apiVersion"), body.get("kind")
        _check_types(body, spec)
        if av is not None and av != spec.api_version:
            raise StatusError.bad_request(f"the API version in the data ({av}) does not match the expected API "
                                          f"version ({spec.api_version})")
        if kind is not None and kind != spec.kind:
            raise StatusError.bad_request(f"the kind in the data ({kind}) does not match the expected kind "
                                          f"({spec.kind})")
        # The HTTP front hands over a body it just decoded and never looks at again: no copy needed.
        if call.req.source == "http":
            obj = body
        elif lend_spec and type(body.get("spec")) is dict:
            obj = _around_spec(body)
        else:
            obj = clone(body)
        if call.req.field_validation is not None or spec.info.custom is not None:
            self._check_fields(call, spec, obj)
        obj["apiVersion"], obj["kind"] = spec.api_version, spec.kind
        meta = obj.get("metadata")
        if meta is None:
            meta = obj["metadata"] = {}
        elif not isinstance(meta, dict):
            raise StatusError.bad_request("metadata must be an object")
        if spec.namespaced:
            ns = meta.get("namespace")
            if ns and ns != call.req.namespace:
                raise StatusError.bad_request("the namespace of the provided object does not match the namespace "
                                              "sent on the request")
            meta["namespace"] = call.req.namespace
        else:
            meta.pop("namespace", None)
        return obj

    def _check_fields(self, call: _Call, spec: ResourceSpec, obj: Obj, patched: bool = False,
                      before: Obj | None = None) -> None:
        """The request's fieldValidation directive on ``obj`` (kubectl sends Strict); a custom kind's
        schema prunes and defaults ``obj`` whatever the directive."""
        custom = spec.info.custom
        if custom is not None:
            warnings = custom.decode(obj, call.req.field_validation or "Warn", patched, before)
        else:
            warnings = check_fields(obj, spec.kind, spec.info.version, call.req.field_validation or "", patched,
                                    before)
        if warnings:
            call.warnings = warnings

    def _namespace_cached(self, call: _Call, spec: ResourceSpec) -> bool:
        """Nothing for :meth:`_namespace_seen` to do: not namespaced, or the cache holds the namespace."""
        namespace = call.req.namespace
        if not spec.namespaced or not namespace:
            return True
        cache = self.storage.caches.get("namespaces")
        return cache is None or cache.get(None, namespace) is not None

    async def _namespace_seen(self, call: _Call) -> None:
        """NamespaceLifecycle reads the namespaces cache; when it misses (callers ask
        :meth:`_namespace_cached` first), wait for writes this server acknowledged, then read the
        store (upstream's live lookup), so content created right after its Namespace is not refused."""
        namespace = call.req.namespace
        namespaces = self.registry.get("", "namespaces")
        if namespaces is None:
            return
        cache = await self.storage.fresh_cache(namespaces)
        if cache.get(None, namespace) is not None:
            return
        live = await self.storage.read(namespaces, self.storage.key(namespaces, None, namespace))
        if live is not None:
            if call.live is None:
                call.live = {}
            call.live[("namespaces", None, namespace)] = live

    async def _account_seen(self) -> None:
        """ServiceAccount admission reads the cache: a pod naming an account the cache does not hold
        (yet) waits for the writes this server acknowledged, as for a Namespace (upstream looks live)."""
        accounts = self.registry.get("", "serviceaccounts")
        if accounts is not None:
            await self.storage.fresh_cache(accounts)

    async def _create(self, call: _Call, spec: ResourceSpec) -> Response:
        if spec.info.custom is not None and spec.info.custom.terminating:
            raise terminating_error()
        if not self._namespace_cached(call, spec):
            await self._namespace_seen(call)
        obj = self._body(call, spec, self._plugins(spec).borrow_spec)
        if spec.info.custom is not None and spec.has_status:
            obj.pop("status", None)  # upstream's CR PrepareForCreate: status is written through /status only
        meta = obj["metadata"]
        if meta.get("resourceVersion"):
            raise StatusError.internal("resourceVersion should not be set on objects to be created")
        if not meta.get("name") and not meta.get("generateName"):
            if call.req.name:
                meta["name"] = call.req.name
        if spec.kind == "Pod" and not spec.group:
            account = named_account(obj)
            if account is not None and self.get_object("serviceaccounts", call.req.namespace, account) is None:
                await self._account_seen()
        self.admit(call, spec, "CREATE", obj, None)
        if dynamic.configured(self.list_objects):
            obj = await self._dynamic_admission(call, spec, "CREATE", obj, None, None)
            meta = obj["metadata"]
        self._track(call, spec, None, obj)
        call.name = meta["name"]
        created = await self.storage.create(spec, obj, dry_run=call.req.dry_run)
        self._stored(call, spec)
        return Response(201, created)

    def _check_name(self, call: _Call, spec: ResourceSpec, obj: Obj) -> None:
        meta = obj["metadata"]
        name = meta.get("name")
        if not name:
            meta["name"] = call.req.name
        elif call.req.name and name != call.req.name:
            raise StatusError.bad_request(f"the name of the object ({name}) does not match the name on the URL "
                                          f"({call.req.name})")

    def _updater(self, call: _Call, spec: ResourceSpec, sub: str | None,
                 produce: Callable[[Obj], Obj]) -> Callable[[Obj | None], Obj]:
        """The tryUpdate of GuaranteedUpdate: new object from the current one, through the pipeline."""
        name = call.req.name or ""

        def try_update(current: Obj | None) -> Obj:
            if current is None:
                raise StatusError.not_found(spec.group_resource, name, spec.group, spec.resource)
            old = clone(current)
            new = produce(old)
            if new.get("metadata") is None:
                new["metadata"] = {}  # null or absent decodes as an empty ObjectMeta, as in Go
            new["apiVersion"], new["kind"] = spec.api_version, spec.kind
            self._check_name(call, spec, new)
            if spec.namespaced:
                new["metadata"]["namespace"] = current["metadata"].get("namespace")
            rv = new["metadata"].get("resourceVersion")
            if rv and rv != current["metadata"].get("resourceVersion"):
                raise StatusError.conflict(spec.group_resource, name, spec.group)
            if sub == "status":
                applied = new["metadata"].get("managedFields") if call.req.patch_type == "apply" else None
                new = strategy.prepare_status_update(new, old)
                if applied is not None:  # the apply's own entries, as it computed them
                    new["metadata"]["managedFields"] = applied
            elif sub == "finalize":
                new = strategy.prepare_finalize(new, old)
            elif sub == "approval":
                new = strategy.prepare_approval(new, old, self.now())
            elif sub == "ephemeralcontainers":
                new = strategy.prepare_ephemeral_update(new, old)
            else:
                strategy.carry_system_meta(new, old)
            self.admit_update(call, spec, new, old, current, sub)
            return new

        return try_update

    def admit_update(self, call: _Call, spec: ResourceSpec, new: Obj, old: Obj, current: Obj,
                     sub: str | None) -> None:
        """UPDATE through the pipeline; ``old`` is a private copy of ``current`` (the stored object)."""
        marshalled.forget()
        ctx = self.admission_context(call, spec, "UPDATE", call.req.name, sub)
        plugins = self._plugins(spec)
        call.stage = "mutating-admission"
        for plugin in plugins.mutating:
            plugin.admit(ctx, new, current)
        if sub in (None, "scale"):
            # The main-resource strategy runs after mutating admission, as upstream's BeforeUpdate.
            strategy.prepare_update(spec, new, old)
        _omit_empty_meta(new["metadata"])
        self._validate(call, spec, ctx, new, current, plugins)
        self._track(call, spec, old, new)

    def _track(self, call: _Call, spec: ResourceSpec, old: Obj | None, new: Obj) -> None:
        """Field ownership of a non-apply write (upstream's Update managedFields entries), so a later
        server-side apply of a field another manager changed conflicts. The manager is the request's
        fieldManager, else the user agent's product name (upstream's prefix before '/'); the API
        server's own loopback writes are kube-apiserver's. A subresource write (status, scale) has an
        entry of its own, as upstream's fieldmanager records the subresource."""
        req = call.req
        if req.patch_type == "apply":
            return
        manager = req.field_manager or req.user_agent.split("/", 1)[0].strip() or (
            APISERVER_MANAGER if call.user is not None and call.user.name == LOOPBACK_USER.name else UNKNOWN_MANAGER)
        if old is not None and "managedFields" not in new["metadata"]:
            kept = old["metadata"].get("managedFields")
            if kept:
                new["metadata"]["managedFields"] = kept  # a body without them keeps the live ones
        track_update(old, new, manager, self.now(), spec.kind,
                     subresource=req.subresource or "")

    def _validate(self, call: _Call, spec: ResourceSpec, ctx: AdmissionContext, new: Obj, old: Obj,
                  plugins: _Plugins) -> None:
        call.stage = "validation"
        causes = strategy.immutable_meta_causes(new, old)
        if self.validator is not None and spec.kind != "SchedulingDecision":
            causes.extend(self.validator.validate(ctx, new, old))
        if causes:
            raise _invalid(spec, new["metadata"].get("name") or "", causes)
        call.stage = "validating-admission"
        for plugin in plugins.after_mutating:
            plugin.validate(ctx, new, old)
        call.stage = "storage"

    async def _update(self, call: _Call, spec: ResourceSpec, sub: str | None) -> Response:
        body: Obj | None = self._body(call, spec)
        handed_over = body is not call.req.body  # a private copy of the caller's body, still pristine

        def produce(old: Obj) -> Obj:
            """The body to store: an in-process body's private copy goes as is on the first try (it was
            cloned a second time before); a retry copies the caller's untouched body again."""
            nonlocal body
            if body is None:
                return self._body(call, spec)
            new, body = (body, None) if handed_over else (clone(body), body)
            return new

        result, outcome = await self.storage.guaranteed_update(
            spec, call.req.namespace, call.req.name or "", self._updater(call, spec, sub, produce),
            dry_run=call.req.dry_run, after=self._after_admission(call, spec, sub))
        if outcome == "deleted":
            self._deleted(spec, result)
        return Response(200, result)

    async def _patch(self, call: _Call, spec: ResourceSpec, sub: str | None) -> Response:
        req = call.req
        if req.patch_type == "strategic" and spec.info.custom is not None and not spec.info.custom.strategic_merge:
            raise StatusError.unsupported_media_type(
                "the body of the request was in an unknown format - accepted media types include: "
                "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml")
        doc = parse_patch(req.patch_type, req.body)
        if req.patch_type == "apply":
            return await self._apply(call, spec, sub, doc)

        convert = call.convert

        def produce(old: Obj) -> Obj:
            if convert is not None:  # the patch is of the served version's view of the object
                new = convert.to_stored(apply_patch(req.patch_type or "", convert.from_stored(old), doc, spec.kind))
            else:
                new = apply_patch(req.patch_type or "", clone(old), doc, spec.kind)
            check_patched_types(new, spec.kind, req.name or "", spec.group)
            if req.field_validation is not None or spec.info.custom is not None:
                self._check_fields(call, spec, new, patched=True, before=old)
            return new

        result, outcome = await self.storage.guaranteed_update(
            spec, req.namespace, req.name or "", self._updater(call, spec, sub, produce), dry_run=req.dry_run,
            after=self._after_admission(call, spec, sub))
        if outcome == "deleted":
            self._deleted(spec, result)
        return Response(200, result)

    async def _apply(self, call: _Call, spec: ResourceSpec, sub: str | None, doc: Obj) -> Response:
        req = call.req
        manager = req.field_manager
        if not manager:
            raise StatusError.bad_request("PATCH, application/apply-patch+yaml requests must set fieldManager")
        convert = call.convert
        problem = type_error(doc, spec.kind)
        if problem is not None:
            raise StatusError.bad_request(f"failed to create typed patch object ({spec.api_version}, "
                                          f"Kind={spec.kind}): {problem}")
        if req.field_validation is not None and spec.info.custom is None:
            self._check_fields(call, spec, convert.to_stored(doc) if convert is not None else doc, patched=True)
        if not self._namespace_cached(call, spec):
            await self._namespace_seen(call)

        via = "status" if sub == "status" else ""

        def applied(old: Obj | None) -> Obj:
            """The apply's result; of a served version that is not the stored one, applied to its view."""
            if spec.info.custom is not None:
                result = server_side_apply(old, doc, manager, req.force, self.now(), spec.kind, via)
                self._check_fields(call, spec, result, patched=True, before=old)
                return result
            if convert is None:
                return server_side_apply(old, doc, manager, req.force, self.now(), spec.kind, via)
            view = convert.from_stored(old) if old is not None else None
            return convert.to_stored(server_side_apply(view, doc, manager, req.force, self.now(), spec.kind, via))

        update = self._updater(call, spec, sub, applied)

        def try_update(current: Obj | None) -> Obj:
            if current is not None:
                return update(current)
            if sub is not None:
                raise StatusError.not_found(spec.group_resource, req.name or "", spec.group, spec.resource)
            obj = applied(None)
            obj["apiVersion"], obj["kind"] = spec.api_version, spec.kind
            self._check_name(call, spec, obj)
            if spec.namespaced:
                obj["metadata"]["namespace"] = req.namespace
            self.admit(call, spec, "CREATE", obj, None)
            return obj

        result, outcome = await self.storage.guaranteed_update(spec, req.namespace, req.name or "", try_update,
                                                               dry_run=req.dry_run,
                                                               after=self._after_admission(call, spec, sub))
        if outcome == "created":
            self._stored(call, spec)
            return Response(201, result)
        if outcome == "deleted":
            self._deleted(spec, result)
        return Response(200, result)

    def _delete_options(self, call: _Call) -> DeleteOptions:
        req = call.req
        body = req.body if isinstance(req.body, dict) else {}
        grace = req.grace_period_seconds if req.grace_period_seconds is not None else body.get("gracePeriodSeconds")
        policy = req.propagation_policy or body.get("propagationPolicy")
        if policy not in (None, "Orphan", "Background", "Foreground"):
            raise StatusError.bad_request(f'propagationPolicy: Unsupported value: "{policy}": supported values: '
                                          '"Foreground", "Background", "Orphan"')
        pre = req.preconditions or body.get("preconditions")
        dry = req.dry_run or bool(body.get("dryRun"))
        return DeleteOptions(grace, policy, pre, dry)

    async def _delete(self, call: _Call, spec: ResourceSpec) -> Response:
        req = call.req
        options = self._delete_options(call)
        if spec is CRD_SPEC:
            await self.crds.mark_deleting(req.name or "", options.dry_run)
        obj, deleted = await self.delete_object(call, spec, req.namespace, req.name or "", options)
        return Response(200, obj)

    async def delete_object(self, call: _Call, spec: ResourceSpec, namespace: str | None, name: str,
                            options: DeleteOptions) -> tuple[Obj, bool]:
        def admit(old: Obj) -> None:
            validating = self._plugins(spec).validating
            if not validating:
                return
            ctx = self.admission_context(call, spec, "DELETE", name)
            call.stage = "validating-admission"
            for plugin in validating:
                plugin.validate(ctx, old, old)
            call.stage = "storage"

        after = None
        if spec.group != dynamic.GROUP and dynamic.configured(self.list_objects):
            async def after(old: Obj) -> None:
                await self._dynamic_delete(call, spec, namespace, name, old, options.dry_run)

        call.stage = "storage"
        obj, deleted = await self.storage.delete(spec, namespace, name, options, admit, after)
        if deleted and not options.dry_run:
            self._deleted(spec, obj)
        return (clone(obj) if deleted else obj), deleted

    async def _delete_collection(self, call: _Call, spec: ResourceSpec) -> Response:
        req = call.req
        flt = compile_filter(spec, req.label_selector, req.field_selector, req.namespace)
        cache = await self.storage.fresh_cache(spec)
        options = self._delete_options(call)
        out = []
        for obj in cache.list(flt):
            meta = obj["metadata"]
            try:
                result, _ = await self.delete_object(call, spec, meta.get("namespace"), meta["name"], options)
            except StatusError as err:
                if err.code == 404:
                    continue
                raise
            out.append(result)
        return Response(200, {"kind": spec.list_kind, "apiVersion": spec.api_version,
                              "metadata": {"resourceVersion": str(cache.catch_up())}, "items": out})


__all__ = ["APIServer", "LOOPBACK_USER", "object_rv"]
