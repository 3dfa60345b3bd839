"""The API server's own control loops, which upstream's kube-apiserver runs beside serving.

* The ``default/kubernetes`` Service comes back when deleted (the bootstrap controller).
* Its Endpoints and EndpointSlice, both named ``kubernetes``, list every API server of the
  control plane at ``<address>:6443`` (the endpoint reconciler). The Service has no selector, so no
  controller fills them: the API servers keep them, and a deleted or edited one is reset within
  :data:`ENDPOINT_INTERVAL`, as upstream's reconciler resets it.
* Each API server holds an identity Lease ``kube-system/apiserver-<hash of its host>``, labelled
  ``apiserver.kubernetes.io/identity=kube-apiserver``, renewed every 10 s for an hour. Once an hour
  the leases of API servers gone for longer than their duration are deleted (a cluster restarted
  with fewer control planes loses the others' leases that way).

kconsole serves every control plane's API server from one process: each control-plane node stands
for one instance, its name the host and its InternalIP the advertised address, so the objects look
as a kubeadm cluster with that many control planes shows them. Every write is an ordinary request
of the API server's loopback client, audited like any other.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import logging
import random
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kconsole.api.tasks import cancel_and_wait
from kconsole.clock import TimerHandle
from kconsole.objects.meta import format_micro_time, parse_time

if TYPE_CHECKING:
    from kconsole.api.server import APIServer

log = logging.getLogger(__name__)

Obj = dict[str, Any]

#: Upstream's DefaultEndpointReconcilerInterval: how often the kubernetes Service, its endpoints
#: and the identity leases are reconciled (simulated seconds).
ENDPOINT_INTERVAL = 10.0
#: Upstream's IdentityLeaseDurationSeconds and IdentityLeaseGCPeriod.
IDENTITY_LEASE_SECONDS = 3600
IDENTITY_GC_PERIOD = 3600.0
IDENTITY_LABEL = "apiserver.kubernetes.io/identity"
KUBE_APISERVER = "kube-apiserver"
HOSTNAME_LABEL = "kubernetes.io/hostname"
SKIP_MIRROR_LABEL = "endpointslice.kubernetes.io/skip-mirror"
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
#: The secure port every kube-apiserver of a kubeadm cluster serves on.
SECURE_PORT = 6443
PORTS = [{"name": "https", "port": SECURE_PORT, "protocol": "TCP"}]


@dataclass(frozen=True, slots=True)
class Instance:
    """One kube-apiserver of the control plane: the host it runs on and the address it advertises."""

    host: str
    address: str


def identity_lease_name(host: str) -> str:
    """``apiserver-`` and the first 16 bytes of a SHA-256 over the host and the component, in
    lower-case base32: upstream's name, so a host keeps its lease across restarts."""
    data = b"".join(len(part).to_bytes(2, "big") + part for part in (host.encode(), KUBE_APISERVER.encode()))
    digest = hashlib.sha256(data).digest()[:16]
    return "apiserver-" + base64.b32encode(digest).decode().rstrip("=").lower()


class ControlPlaneLoops:
    """The loops of :mod:`kconsole.api.controlplane` for one :class:`~kconsole.api.server.APIServer`.

    With no instances only the Service is kept (an API server embedded without a control plane).
    """

    def __init__(self, api: APIServer, instances: Sequence[Instance], rng: random.Random) -> None:
        self.api = api
        self.instances = list(instances)
        #: What each instance names itself as holder this run: upstream adds a fresh UUID per start.
        self.holders = {i.host: f"{identity_lease_name(i.host)}_{uuid.UUID(int=rng.getrandbits(128), version=4)}"
                        for i in self.instances}
        self._timer: TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None
        self._next_gc = 0.0
        self._running = False
        self._failed: str | None = None

    def start(self) -> None:
        """First pass now (the endpoints and leases exist once the server is up), then every interval."""
        self._running = True
        self._next_gc = self.api.clock.now() + IDENTITY_GC_PERIOD
        self._spawn(first=True)

    async def stop(self) -> None:
        self._running = False
        if self._timer is not None:
            self._timer.cancel()
        task, self._task = self._task, None
        await cancel_and_wait(task)

    def _spawn(self, first: bool = False) -> None:
        if not self._running:
            return
        self._task = asyncio.get_running_loop().create_task(self._pass(first), name="apiserver-control-loops")
        self._task.add_done_callback(self._schedule)

    def _schedule(self, _: object) -> None:
        if self._running:
            self._timer = self.api.clock.call_later(ENDPOINT_INTERVAL, self._spawn)

    async def _pass(self, first: bool) -> None:
        if not first:  # bootstrap created the Service a moment ago
            await self.api.ensure_kubernetes_service()
        if not self.instances:
            return
        try:
            await self._reconcile_endpoints()
            await self._reconcile_endpoint_slice()
            for instance in self.instances:
                await self._renew_identity(instance)
            if self.api.clock.now() >= self._next_gc:
                self._next_gc = self.api.clock.now() + IDENTITY_GC_PERIOD
                await self._collect_identities()
            self._failed = None
        except _WriteFailed as err:  # the store down, say: the next pass tries again
            if str(err) != self._failed:
                log.warning("%s (will retry every %gs)", err, ENDPOINT_INTERVAL)
            self._failed = str(err)

    async def _write(self, verb: str, resource: str, namespace: str, name: str | None = None,
                     body: Obj | None = None, group: str = "", allow: tuple[int, ...] = ()) -> None:
        resp = await self.api.loopback(verb, resource, namespace, name, body, group)
        if not resp.ok and resp.code not in allow:
            target = name or (body["metadata"]["name"] if body else "")
            raise _WriteFailed(f"{verb} {resource} {namespace}/{target}: "
                               f"{resp.body.get('message') if isinstance(resp.body, dict) else resp.body}")

    def _addresses(self) -> list[str]:
        """Sorted as strings, as upstream's set of lease IPs is."""
        return sorted({i.address for i in self.instances})

    async def _reconcile_endpoints(self) -> None:
        subsets = [{"addresses": [{"ip": ip} for ip in self._addresses()], "ports": PORTS}]
        await self._keep("endpoints", "", "Endpoints", self.api.get_object("endpoints", "default", "kubernetes"),
                         {SKIP_MIRROR_LABEL: "true"}, {"subsets": subsets})

    async def _reconcile_endpoint_slice(self) -> None:
        current = None
        for slice_ in self.api.list_objects("endpointslices", "default"):
            meta = slice_["metadata"]
            if (meta.get("labels") or {}).get(SERVICE_NAME_LABEL) != "kubernetes":
                continue
            if meta["name"] == "kubernetes" and slice_.get("addressType") == "IPv4":
                current = slice_
            else:  # as far as the API servers know, no other slice of theirs should exist
                await self._write("delete", "endpointslices", "default", meta["name"], group="discovery.k8s.io",
                                  allow=(404,))
        endpoints = [{"addresses": [ip], "conditions": {"ready": True}} for ip in self._addresses()]
        await self._keep("endpointslices", "discovery.k8s.io", "EndpointSlice", current,
                         {SERVICE_NAME_LABEL: "kubernetes"},
                         {"addressType": "IPv4", "endpoints": endpoints, "ports": PORTS})

    async def _keep(self, resource: str, group: str, kind: str, current: Obj | None, labels: dict[str, str],
                    fields: Obj) -> None:
        """Create ``default/kubernetes`` of ``resource`` with ``labels`` and top-level ``fields``, or
        reset the one there when any of them differs (what upstream's reconciler compares)."""
        if current is None:
            await self._write("create", resource, "default", body={
                "apiVersion": f"{group}/v1" if group else "v1", "kind": kind,
                "metadata": {"name": "kubernetes", "namespace": "default", "labels": labels}, **fields},
                group=group, allow=(409,))
        elif (current["metadata"].get("labels") or {}) != labels or any(current.get(k) != v for k, v in fields.items()):
            await self._write("update", resource, "default", "kubernetes", {
                **current, "metadata": {**current["metadata"], "labels": labels}, **fields}, group=group, allow=(409,))

    async def _renew_identity(self, instance: Instance) -> None:
        """Create the instance's lease, or renew it (taking it over after a restart, as upstream's
        lease controller does: the holder is this run's identity)."""
        name = identity_lease_name(instance.host)
        now = format_micro_time(self.api.clock.now())
        holder = self.holders[instance.host]
        labels = {IDENTITY_LABEL: KUBE_APISERVER, HOSTNAME_LABEL: instance.host}
        current = self.api.get_object("leases", "kube-system", name)
        if current is None:
            await self._write("create", "leases", "kube-system", body={
                "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": name, "namespace": "kube-system", "labels": labels},
                "spec": {"holderIdentity": holder, "leaseDurationSeconds": IDENTITY_LEASE_SECONDS,
                         "acquireTime": now, "renewTime": now}}, group="coordination.k8s.io", allow=(409,))
            return
        spec = dict(current.get("spec") or {})
        if spec.get("holderIdentity") != holder:
            spec["acquireTime"] = now
        spec.update(holderIdentity=holder, leaseDurationSeconds=IDENTITY_LEASE_SECONDS, renewTime=now)
        meta = current["metadata"]
        await self._write("update", "leases", "kube-system", name, {
            **current, "metadata": {**meta, "labels": {**(meta.get("labels") or {}), **labels}}, "spec": spec},
            group="coordination.k8s.io", allow=(409,))

    async def _collect_identities(self) -> None:
        """Delete kube-system identity leases not renewed within their duration (upstream's
        apiserver-identity lease GC): what is left of API servers that are gone."""
        now = self.api.clock.now()
        for lease in self.api.list_objects("leases", "kube-system"):
            meta = lease["metadata"]
            if (meta.get("labels") or {}).get(IDENTITY_LABEL) != KUBE_APISERVER:
                continue
            spec = lease.get("spec") or {}
            renewed = spec.get("renewTime") or spec.get("acquireTime")
            try:
                expires = parse_time(renewed) + int(spec.get("leaseDurationSeconds") or 0) if renewed else 0.0
            except ValueError:
                expires = 0.0
            if expires < now:
                await self._write("delete", "leases", "kube-system", meta["name"], group="coordination.k8s.io",
                                  allow=(404, 409))


class _WriteFailed(Exception):
    """A loop's write was refused; the pass stops and the next one tries again."""
