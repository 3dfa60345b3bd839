"""Garbage collector: deletes what lost its owners, following upstream's three propagation policies.

The collector keeps an ownerReferences graph (uid -> object, owner uid -> dependents) fed by
informers over the kinds that own or are owned in practice: the workloads and their pods,
services and their EndpointSlices, config objects that apps attach to their owners, nodes and
node Leases. Events, Endpoints, namespaces and RBAC objects are left out: nothing owns them in
kconsole and watching them would only add churn. An owner outside the graph (any other kind) is
looked up with a live GET, and a uid found absent is remembered (upstream's absent-owner cache).

* Background (the default): an object whose owners are all gone is deleted.
* Foreground: an owner being deleted with the ``foregroundDeletion`` finalizer gets its dependents
  deleted first; the finalizer comes off once no dependent with ``blockOwnerDeletion`` remains.
* Orphan: an owner with the ``orphan`` finalizer has its ownerReferences removed from every
  dependent, then the finalizer comes off and the owner goes, leaving them be.

An object with a live owner and a dangling one only loses the dangling reference.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kconsole.client import StatusError, is_conflict, is_not_found, retry_on_conflict
from kconsole.controllers.base import Controller, ControllerContext

log = logging.getLogger(__name__)

FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"
ABSENT_CACHE_SIZE = 500

#: (resource, namespace) the graph watches; resources the server does not serve are skipped.
GRAPH_RESOURCES: tuple[tuple[str, str | None], ...] = (
    ("pods", None),
    ("replicasets.apps", None),
    ("deployments.apps", None),
    ("daemonsets.apps", None),
    ("statefulsets.apps", None),
    ("controllerrevisions.apps", None),
    ("jobs.batch", None),
    ("cronjobs.batch", None),
    ("services", None),
    ("endpointslices.discovery.k8s.io", None),
    ("configmaps", None),
    ("secrets", None),
    ("serviceaccounts", None),
    ("horizontalpodautoscalers.autoscaling", None),
    ("poddisruptionbudgets.policy", None),
    ("persistentvolumeclaims", None),
    ("nodes", None),
    ("leases.coordination.k8s.io", "kube-node-lease"),
)

DEPENDENT, OWNER = "dependent", "owner"
#: Custom resources join the graph when their CRD is Established (upstream's GC follows discovery).
CRDS = "customresourcedefinitions.apiextensions.k8s.io"


@dataclass(slots=True)
class _Node:
    uid: str
    resource: str  # what the client calls it ("replicasets.apps")
    namespace: str
    name: str
    owners: tuple[dict[str, Any], ...]
    deleting: bool
    finalizers: tuple[str, ...]

    @property
    def foreground(self) -> bool:
        """Deleting and waiting for its dependents (upstream's deletingDependents)."""
        return self.deleting and FOREGROUND in self.finalizers


class GarbageCollector(Controller):
    name = "garbage-collector-controller"
    component = "garbage-collector-controller"
    workers = 4

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.nodes: dict[str, _Node] = {}
        self.dependents: dict[str, set[str]] = {}
        self._absent: OrderedDict[str, None] = OrderedDict()
        self.watched: list[str] = []
        for resource, namespace in GRAPH_RESOURCES:
            try:
                self.client.resource_info(resource)
            except StatusError:
                continue
            self._follow(resource, namespace)
        try:
            self.client.resource_info(CRDS)
        except StatusError:
            return
        self.informer(CRDS).add_event_handler(on_add=self._custom_kind,
                                              on_update=lambda _old, new: self._custom_kind(new),
                                              on_delete=self._custom_kind_gone)

    def _follow(self, resource: str, namespace: str | None = None) -> None:
        inf = self.informer(resource, namespace=namespace)
        inf.add_event_handler(on_add=lambda o, r=resource: self._observe(r, o),
                              on_update=lambda _old, new, r=resource: self._observe(r, new),
                              on_delete=self._forget)
        self.watched.append(resource)

    @staticmethod
    def _custom_resource(crd: dict[str, Any]) -> str | None:
        """``plural.group`` of an Established CRD, else None."""
        status = crd.get("status") or {}
        if not any(c.get("type") == "Established" and c.get("status") == "True" for c in status.get("conditions") or ()):
            return None
        plural = (status.get("acceptedNames") or {}).get("plural")
        group = (crd.get("spec") or {}).get("group")
        return f"{plural}.{group}" if plural and group else None

    def _custom_kind(self, crd: dict[str, Any]) -> None:
        resource = self._custom_resource(crd)
        if resource is None or resource in self.watched or (crd.get("metadata") or {}).get("deletionTimestamp"):
            return
        self._follow(resource)
        self.spawn(self.ctx.informers.start_all())

    def _custom_kind_gone(self, crd: dict[str, Any]) -> None:
        resource = self._custom_resource(crd)
        if resource is None or resource not in self.watched:
            return
        self.watched.remove(resource)
        self.spawn(self.informer(resource).stop())

    # ------------------------------------------------------------------ graph

    def _observe(self, resource: str, obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        uid = meta.get("uid")
        if not uid:
            return
        node = _Node(uid, resource, meta.get("namespace") or "", meta["name"],
                     tuple(meta.get("ownerReferences") or ()), bool(meta.get("deletionTimestamp")),
                     tuple(meta.get("finalizers") or ()))
        old = self.nodes.get(uid)
        old_owners = {r.get("uid") for r in old.owners} if old else set()
        new_owners = {r.get("uid") for r in node.owners}
        for gone in old_owners - new_owners:
            deps = self.dependents.get(gone)
            if deps is not None:
                deps.discard(uid)
                if not deps and gone not in self.nodes:
                    del self.dependents[gone]
        for owner in new_owners - old_owners:
            if owner:
                self.dependents.setdefault(owner, set()).add(uid)
        self.nodes[uid] = node
        if node.deleting and (FOREGROUND in node.finalizers or ORPHAN in node.finalizers):
            self.queue.add((OWNER, uid))
            if node.foreground and not (old and old.foreground):
                for dep in self.dependents.get(uid, ()):
                    self.queue.add((DEPENDENT, dep))
        if node.owners and not node.deleting and self._needs_attention(node):
            self.queue.add((DEPENDENT, uid))

    def _needs_attention(self, node: _Node) -> bool:
        """An owner is unknown to the graph, known absent, or waiting for its dependents."""
        for ref in node.owners:
            owner = self.nodes.get(ref.get("uid") or "")
            if owner is None or owner.foreground:
                return True
        return False

    def _forget(self, obj: dict[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        uid = meta.get("uid")
        node = self.nodes.pop(uid, None) if uid else None
        if node is None:
            return
        for ref in node.owners:
            owner_uid = ref.get("uid") or ""
            deps = self.dependents.get(owner_uid)
            if deps is not None:
                deps.discard(uid)
                if not deps and owner_uid not in self.nodes:
                    del self.dependents[owner_uid]
            owner = self.nodes.get(owner_uid)
            if owner is not None and owner.deleting:
                self.queue.add((OWNER, owner_uid))
        self._mark_absent(uid)
        for dep in self.dependents.get(uid, ()):
            self.queue.add((DEPENDENT, dep))

    def _mark_absent(self, uid: str) -> None:
        self._absent[uid] = None
        self._absent.move_to_end(uid)
        while len(self._absent) > ABSENT_CACHE_SIZE:
            self._absent.popitem(last=False)

    # ------------------------------------------------------------------ work

    async def sync(self, item: tuple[str, str]) -> None:
        kind, uid = item
        if kind == OWNER:
            await self._process_deleting_owner(uid)
        else:
            await self._attempt_to_delete(uid)

    async def _owner_state(self, ref: dict[str, Any], dependent: _Node) -> str:
        """``solid``, ``waiting`` (foreground-deleting) or ``dangling`` (gone)."""
        uid = ref.get("uid") or ""
        if uid in self._absent:
            return "dangling"
        owner = self.nodes.get(uid)
        if owner is not None:
            return "waiting" if owner.foreground else "solid"
        try:
            info = self.client.resource_info(ref.get("kind") or "", ref.get("apiVersion") or "")
        except StatusError:
            log.info("garbage collector: %s/%s refers to unknown kind %s %s; leaving it", dependent.namespace,
                     dependent.name, ref.get("apiVersion"), ref.get("kind"))
            return "solid"
        if info.namespaced and not dependent.namespace:
            return "dangling"  # a cluster-scoped object cannot be owned by a namespaced one
        try:
            live = await self.client.get(info.group_resource, ref.get("name") or "",
                                         dependent.namespace if info.namespaced else None)
        except StatusError as err:
            if is_not_found(err):
                self._mark_absent(uid)
                return "dangling"
            raise
        meta = live.get("metadata") or {}
        if meta.get("uid") != uid:
            self._mark_absent(uid)
            return "dangling"
        if meta.get("deletionTimestamp") and FOREGROUND in (meta.get("finalizers") or ()):
            return "waiting"
        return "solid"

    async def _attempt_to_delete(self, uid: str) -> None:
        node = self.nodes.get(uid)
        if node is None:
            return
        if node.deleting:
            if node.foreground:
                self.queue.add((OWNER, uid))
            return
        if not node.owners:
            return
        solid, dangling, waiting = [], [], []
        for ref in node.owners:
            state = await self._owner_state(ref, node)
            {"solid": solid, "dangling": dangling, "waiting": waiting}[state].append(ref)
        if solid:
            drop = {r.get("uid") for r in dangling + waiting}
            if drop:
                await self._edit_owner_refs(node, lambda refs: [r for r in refs if r.get("uid") not in drop])
            return
        if waiting and self.dependents.get(uid):
            if any((d := self.nodes.get(dep)) is not None and d.foreground for dep in self.dependents[uid]):
                # A dependent is itself waiting on its dependents: unblock our owners to avoid a cycle.
                waiting_uids = {r.get("uid") for r in waiting}
                await self._edit_owner_refs(node, lambda refs: [
                    {**r, "blockOwnerDeletion": False} if r.get("uid") in waiting_uids else r for r in refs])
            await self._delete(node, "Foreground")
            return
        if ORPHAN in node.finalizers:
            policy = "Orphan"
        elif FOREGROUND in node.finalizers:
            policy = "Foreground"
        else:
            policy = "Background"
        await self._delete(node, policy)

    async def _process_deleting_owner(self, uid: str) -> None:
        node = self.nodes.get(uid)
        if node is None or not node.deleting:
            return
        deps = [d for dep in list(self.dependents.get(uid, ())) if (d := self.nodes.get(dep)) is not None]
        if ORPHAN in node.finalizers:
            for dep in deps:
                await self._edit_owner_refs(dep, lambda refs: [r for r in refs if r.get("uid") != uid])
            await self._remove_finalizer(node, ORPHAN)
            return
        if FOREGROUND in node.finalizers:
            blocking = [d for d in deps if any(r.get("uid") == uid and r.get("blockOwnerDeletion")
                                               for r in d.owners)]
            if not blocking:
                await self._remove_finalizer(node, FOREGROUND)
                return
            for dep in blocking:
                if not dep.deleting:
                    self.queue.add((DEPENDENT, dep.uid))

    # ------------------------------------------------------------------ writes

    async def _delete(self, node: _Node, policy: str) -> None:
        log.debug("garbage collector: deleting %s %s/%s (%s)", node.resource, node.namespace, node.name, policy)
        try:
            await self.client.delete(node.resource, node.name, node.namespace or None, propagation_policy=policy,
                                     preconditions={"uid": node.uid})
        except StatusError as err:
            if not (is_not_found(err) or is_conflict(err)):  # gone, or replaced by a namesake
                raise

    async def _edit_owner_refs(self, node: _Node, edit: Callable[[list[Any]], list[Any]]) -> None:
        await self._edit_meta_list(node, "ownerReferences", edit)

    async def _remove_finalizer(self, node: _Node, finalizer: str) -> None:
        await self._edit_meta_list(node, "finalizers", lambda fins: [f for f in fins if f != finalizer])

    async def _edit_meta_list(self, node: _Node, field: str, edit: Callable[[list[Any]], list[Any]]) -> None:
        """Read-modify-write of one metadata list of exactly ``node`` (a namesake with another uid is left alone).

        An emptied list is removed rather than written as ``[]``, as upstream's patches leave it.
        """
        async def attempt() -> None:
            try:
                live = await self.client.get(node.resource, node.name, node.namespace or None)
            except StatusError as err:
                if is_not_found(err):
                    return
                raise
            meta = live["metadata"]
            if meta.get("uid") != node.uid:
                return
            current = list(meta.get(field) or ())
            new = edit(current)
            if new == current:
                return
            if new:
                meta[field] = new
            else:
                meta.pop(field, None)
            await self.client.update(live)

        await retry_on_conflict(attempt, clock=self.clock)
