"""Namespace controller: a Terminating namespace loses all its content, then its ``kubernetes`` finalizer.

Deleting a namespace only marks it (``deletionTimestamp``, phase Terminating, the API server
refuses new content). This controller then deletes every namespaced resource type in it (the
server's own resource list, so new kinds are covered), reports progress in upstream's five
``NamespaceDeletion*`` / ``NamespaceContentRemaining`` / ``NamespaceFinalizersRemaining`` conditions,
and once nothing is left removes ``kubernetes`` from ``spec.finalizers`` through
``namespaces/finalize`` — at which point the API server deletes the namespace.

Pods on live nodes take their grace period to go; the controller looks again after half the
longest remaining grace (upstream's estimate), and otherwise backs off 0.5 s doubling to 60 s.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from kconsole.client import ResourceInfo, StatusError, is_conflict, is_not_found
from kconsole.controllers.base import Controller, ControllerContext
from kconsole.objects.meta import deep_copy, deletion_timestamp, is_being_deleted, set_condition

log = logging.getLogger(__name__)

FINALIZER = "kubernetes"
RETRY_BASE = 0.5
RETRY_MAX = 60.0


@dataclass
class _Sweep:
    """What one pass over the namespace's content found."""

    remaining: dict[str, int] = field(default_factory=dict)  # group resource -> instances left
    finalizers: dict[str, int] = field(default_factory=dict)  # finalizer -> instances carrying it
    failures: list[str] = field(default_factory=list)
    estimate: float = 0.0  # seconds until graceful deletions should be over


def _group_resource(info: ResourceInfo) -> str:
    return f"{info.resource}.{info.group}" if info.group else info.resource


class NamespaceController(Controller):
    name = "namespace-controller"
    component = "namespace-controller"
    workers = 2

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.namespaces = self.informer("namespaces")
        self.namespaces.add_event_handler(**self.handlers())
        self._attempts: dict[str, int] = {}

    def deletable_resources(self) -> list[ResourceInfo]:
        """Namespaced kinds that can be listed and deleted (reviews and other virtual kinds cannot)."""
        return [info for info in self.client.entry.resources()
                if info.namespaced and "list" in info.verbs and "delete" in info.verbs]

    async def sync(self, key: str) -> float | None:
        cached = self.namespaces.get(key)
        if cached is None or not is_being_deleted(cached):
            self._attempts.pop(key, None)
            return None
        try:
            ns = await self.client.get("namespaces", key)
        except StatusError as err:
            if is_not_found(err):
                self._attempts.pop(key, None)
                return None
            raise
        if not is_being_deleted(ns) or FINALIZER not in ((ns.get("spec") or {}).get("finalizers") or ()):
            return None
        sweep = await self._delete_content(key)
        await self._report(ns, sweep)
        if sweep.failures or sweep.remaining:
            if sweep.estimate > 0 and not sweep.failures:
                return sweep.estimate / 2 + 1
            attempt = self._attempts.get(key, 0)
            self._attempts[key] = attempt + 1
            return min(RETRY_BASE * 2 ** attempt, RETRY_MAX)
        self._attempts.pop(key, None)
        await self._finalize(key)
        return None

    async def _delete_content(self, namespace: str) -> _Sweep:
        sweep = _Sweep()
        now = self.clock.now()
        for info in self.deletable_resources():
            gr = _group_resource(info)
            try:
                items = await self.client.list_all(gr, namespace)
                pending = [i for i in items if not is_being_deleted(i)]
                for item in pending:
                    await self._delete_one(gr, item)
                if pending:
                    items = await self.client.list_all(gr, namespace)
            except StatusError as err:
                sweep.failures.append(f"{gr}: {err}")
                continue
            if not items:
                continue
            sweep.remaining[gr] = len(items)
            for item in items:
                for fin in (item.get("metadata") or {}).get("finalizers") or ():
                    sweep.finalizers[fin] = sweep.finalizers.get(fin, 0) + 1
                if info.kind == "Pod" and info.group == "":
                    ends = deletion_timestamp(item)
                    if ends is not None:
                        sweep.estimate = max(sweep.estimate, ends - now)
        return sweep

    async def _delete_one(self, gr: str, item: dict[str, Any]) -> None:
        meta = item["metadata"]
        try:
            await self.client.delete(gr, meta["name"], meta.get("namespace"))
        except StatusError as err:
            if not is_not_found(err):
                raise

    async def _report(self, ns: dict[str, Any], sweep: _Sweep) -> None:
        """Upstream's five deletion conditions; written only when they change."""
        new = deep_copy(ns)
        status = new.setdefault("status", {})
        now = self.clock.now()
        changed = False
        changed |= set_condition(status, "NamespaceDeletionDiscoveryFailure", "False", "ResourcesDiscovered",
                                 "All resources successfully discovered", now)
        changed |= set_condition(status, "NamespaceDeletionGroupVersionParsingFailure", "False",
                                 "ParsedGroupVersions", "All legacy kube types successfully parsed", now)
        if sweep.failures:
            changed |= set_condition(status, "NamespaceDeletionContentFailure", "True", "ContentDeletionFailed",
                                     f"Failed to delete all resource types, {len(sweep.failures)} remaining: "
                                     + ", ".join(sweep.failures), now)
        else:
            changed |= set_condition(status, "NamespaceDeletionContentFailure", "False", "ContentDeleted",
                                     "All content successfully deleted, may be waiting on finalization", now)
        if sweep.remaining:
            parts = sorted(f"{gr} has {n} resource instances" for gr, n in sweep.remaining.items())
            changed |= set_condition(status, "NamespaceContentRemaining", "True", "SomeResourcesRemain",
                                     "Some resources are remaining: " + ", ".join(parts), now)
        else:
            changed |= set_condition(status, "NamespaceContentRemaining", "False", "ContentRemoved",
                                     "All content successfully removed", now)
        if sweep.finalizers:
            parts = sorted(f"{fin} in {n} resource instances" for fin, n in sweep.finalizers.items())
            changed |= set_condition(status, "NamespaceFinalizersRemaining", "True", "SomeFinalizersRemain",
                                     "Some content in the namespace has finalizers remaining: " + ", ".join(parts),
                                     now)
        else:
            changed |= set_condition(status, "NamespaceFinalizersRemaining", "False", "ContentHasNoFinalizers",
                                     "All content-preserving finalizers finished", now)
        if not changed:
            return
        try:
            await self.client.update_status(new)
        except StatusError as err:
            if not (is_conflict(err) or is_not_found(err)):
                raise
            # Stale copy or already gone: the next pass reports again.

    async def _finalize(self, name: str) -> None:
        """Drop our finalizer through namespaces/finalize; the server then deletes the namespace."""
        for _ in range(5):
            try:
                ns = await self.client.get("namespaces", name)
            except StatusError as err:
                if is_not_found(err):
                    return
                raise
            finalizers = list((ns.get("spec") or {}).get("finalizers") or ())
            if FINALIZER not in finalizers:
                return
            ns = deep_copy(ns)
            ns.setdefault("spec", {})["finalizers"] = [f for f in finalizers if f != FINALIZER]
            try:
                await self.client.update(ns, subresource="finalize")
                return
            except StatusError as err:
                if is_not_found(err):
                    return
                if not is_conflict(err):
                    raise
        raise StatusError.conflict("namespaces", name, "")
