"""Test environment for the controller-manager and core controllers: a real API server on a real
SQLite revision log and a virtual clock, an admin client, a client acting as
``system:kube-controller-manager`` (RBAC applies), and helpers that play the parts the tests need
from kubelets (Node objects, Lease heartbeats, pod status). Tests import the ``ctrl`` fixture.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from kconsole.api.server import APIServer
from kconsole.api.types import UserInfo
from kconsole.client import Client, is_not_found
from kconsole.clock import VirtualClock
from kconsole.controllers.manager import ControllerManagerReplica
from kconsole.store.revlog import RevisionLog

Obj = dict[str, Any]


def node(name: str, *, zone: str = "", ready: str = "True", labels: dict[str, str] | None = None,
         taints: list[Obj] | None = None) -> Obj:
    """A Node as a kubelet registers it (Ready condition included)."""
    all_labels = {"kubernetes.io/hostname": name, **(labels or {})}
    if zone:
        all_labels["topology.kubernetes.io/zone"] = zone
    alloc = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    cond: Obj = {"type": "Ready", "status": ready, "reason": "KubeletReady" if ready == "True" else "KubeletNotReady",
                 "message": "kubelet is posting ready status"}
    obj: Obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": all_labels},
                "spec": {}, "status": {"capacity": alloc, "allocatable": alloc, "conditions": [cond]}}
    if taints:
        obj["spec"]["taints"] = taints
    return obj


def open_crd(plural: str, kind: str, group: str = "example.com") -> Obj:
    """A namespaced CustomResourceDefinition, served as v1, whose schema keeps any field."""
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": {"type": "object",
                                                                  "x-kubernetes-preserve-unknown-fields": True}}}]}}


def pod(name: str, *, namespace: str = "default", labels: dict[str, str] | None = None, node_name: str = "",
        ports: list[Obj] | None = None, owner: Obj | None = None, tolerations: list[Obj] | None = None,
        grace: int = 0) -> Obj:
    container: Obj = {"name": "app", "image": "nginx:1.25"}
    if ports:
        container["ports"] = ports
    spec: Obj = {"containers": [container], "terminationGracePeriodSeconds": grace}
    if node_name:
        spec["nodeName"] = node_name
    if tolerations is not None:
        spec["tolerations"] = tolerations
    meta: Obj = {"name": name, "namespace": namespace, "labels": labels or {}}
    if owner is not None:
        meta["ownerReferences"] = [owner]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


@dataclass
class Ctrl:
    clock: VirtualClock
    kv: RevisionLog
    api: APIServer
    admin: Client
    cm: Client  # system:kube-controller-manager
    managers: list[ControllerManagerReplica] = field(default_factory=list)
    tasks: list[asyncio.Task[Any]] = field(default_factory=list)

    async def manager(self, *controllers: str, identity: str = "cm-1", seed: int = 1,
                      settings: dict[str, dict[str, Any]] | None = None, wait: bool = True) -> ControllerManagerReplica:
        """A controller-manager replica running ``controllers`` (all available when none are named)."""
        replica = ControllerManagerReplica(self.cm, self.clock, identity=identity, rng=random.Random(seed),
                                           settings=settings, controllers=list(controllers) or None)
        self.managers.append(replica)
        await replica.start()
        if wait:
            await self.clock.run_until(lambda: replica.is_leader and bool(replica.active), 30, step=0.5)
        return replica

    async def wait(self, predicate: Callable[[], Any], timeout: float = 30.0, step: float = 0.5) -> float:
        return await self.clock.run_until(predicate, timeout, step=step)

    async def exists(self, resource: str, name: str, namespace: str | None = "default") -> bool:
        try:
            await self.admin.get(resource, name, namespace)
        except Exception as err:  # noqa: BLE001 - only NotFound means "gone"
            if is_not_found(err):
                return False
            raise
        return True

    async def names(self, resource: str, namespace: str | None = "default", selector: str = "") -> list[str]:
        items = await self.admin.list_all(resource, namespace, label_selector=selector)
        return sorted(i["metadata"]["name"] for i in items)

    async def events(self, reason: str, name: str | None = None) -> list[Obj]:
        evs = await self.admin.list_all("events", None)
        return [e for e in evs if e["reason"] == reason and (name is None or e["involvedObject"]["name"] == name)]

    async def set_pod_status(self, name: str, namespace: str = "default", *, phase: str = "Running",
                             ip: str = "", ready: bool = True) -> Obj:
        """What a kubelet reports for a pod."""
        current = await self.admin.get("pods", name, namespace)
        stamp = self.clock.rfc3339()
        status: Obj = {"phase": phase, "conditions": [
            {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": stamp},
            {"type": "ContainersReady", "status": "True" if ready else "False", "lastTransitionTime": stamp}]}
        if ip:
            status["podIP"] = ip
            status["podIPs"] = [{"ip": ip}]
        current["status"] = status
        return await self.admin.update_status(current)

    def heartbeat(self, *names: str, period: float = 10.0) -> Callable[[str], None]:
        """Renew the named nodes' Leases in kube-node-lease every ``period`` s, as their kubelets do.

        Returns ``stop(name)``: that node's kubelet goes quiet."""
        alive = set(names)

        async def renew(name: str) -> None:
            while name in alive:
                now = self.clock.rfc3339_micro()
                try:
                    lease = await self.admin.get("leases", name, "kube-node-lease")
                    lease["spec"]["renewTime"] = now
                    await self.admin.update(lease)
                except Exception as err:  # noqa: BLE001 - the first beat creates the Lease
                    if not is_not_found(err):
                        raise
                    await self.admin.create({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                             "metadata": {"name": name, "namespace": "kube-node-lease"},
                                             "spec": {"holderIdentity": name, "leaseDurationSeconds": 40,
                                                      "renewTime": now}})
                await self.clock.sleep(period)

        for n in names:
            self.tasks.append(asyncio.create_task(renew(n), name=f"heartbeat:{n}"))
        return alive.discard


@pytest.fixture
async def ctrl(tmp_path: Path) -> AsyncIterator[Ctrl]:
    clock = VirtualClock()
    kv = await RevisionLog.open(tmp_path / "db.sqlite", clock=clock, synchronous="NORMAL")
    api = APIServer(kv, clock, seed=1)
    await api.start()
    admin = Client(api, api.tokens.issue(UserInfo("admin", ("system:masters",))), clock)
    cm = Client(api, api.tokens.issue(UserInfo("system:kube-controller-manager")), clock)
    c = Ctrl(clock, kv, api, admin, cm)
    try:
        yield c
    finally:
        for task in c.tasks:
            task.cancel()
        await asyncio.gather(*c.tasks, return_exceptions=True)
        for m in c.managers:
            await m.stop()
        await api.stop()
        await kv.close()
