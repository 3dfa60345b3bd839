"""ResourceQuota controller: every quota's status.hard is its spec.hard and status.used what the
namespace's objects use, kept current as objects come and go (``kubectl describe quota``).

Keyed by namespace: a change to any counted object, or to a quota, recomputes that namespace's
quotas from the informer caches, with :func:`kconsole.objects.resourcequota.usage` as the evaluator.
The usual kinds are watched from the start; a ``count/<resource>.<group>`` of any other namespaced
kind (a Lease, a custom resource) gets its informer when a quota first names it, as upstream's
quota monitors follow discovery, and a custom resource whose definition comes later is counted once
it is established.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from kconsole.client import StatusError
from kconsole.client.informer import SharedInformer
from kconsole.controllers.base import Controller, ControllerContext
from kconsole.objects.resourcequota import TRACKED, format_amount, in_scope, resources_of, usage

CRDS = "customresourcedefinitions.apiextensions.k8s.io"
#: Simulated seconds a newly watched kind's first list may take before its count is written anyway.
SYNC_TIMEOUT = 30.0


class ResourceQuotaController(Controller):
    name = "resourcequota-controller"
    component = ""
    workers = 1

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.quotas = self.informer("resourcequotas")
        self.quotas.add_event_handler(**self.handlers(self._enqueue_namespace))
        self.objects: dict[tuple[str, str], SharedInformer] = {}
        self._handles: dict[tuple[str, str], object] = {}
        for resource, group in TRACKED:
            if resource != "resourcequotas":
                self._watch(resource, group)
        self.objects[("resourcequotas", "")] = self.quotas
        try:
            self.client.resource_info(CRDS)
        except StatusError:
            return
        self.informer(CRDS).add_event_handler(on_add=self._enqueue_all, on_update=lambda _old, new: self._enqueue_all(new),
                                              on_delete=self._custom_kind_gone)

    def _watch(self, resource: str, group: str) -> SharedInformer:
        informer = self.objects[(resource, group)] = self.informer(f"{resource}.{group}" if group else resource)
        self._handles[(resource, group)] = informer.add_event_handler(**self.handlers(self._enqueue_if_quota))
        return informer

    def _custom_kind_gone(self, crd: dict[str, Any]) -> None:
        """Its objects went with it: stop watching a kind a quota started watching."""
        spec = crd.get("spec") or {}
        key = ((spec.get("names") or {}).get("plural", ""), spec.get("group", ""))
        informer = self.objects.pop(key, None) if key not in TRACKED else None
        if informer is not None:
            informer.remove_event_handler(self._handles.pop(key))
            self.spawn(informer.stop())

    def _enqueue_namespace(self, obj: dict[str, Any]) -> None:
        namespace = (obj.get("metadata") or {}).get("namespace")
        if namespace:
            self.queue.add(namespace)

    def _enqueue_if_quota(self, obj: dict[str, Any]) -> None:
        namespace = (obj.get("metadata") or {}).get("namespace")
        if namespace and self.quotas.list_by_index("namespace", namespace):
            self.queue.add(namespace)

    def _enqueue_all(self, _crd: dict[str, Any]) -> None:
        """A kind came or changed: quotas counting it by name may find it now."""
        for quota in self.quotas.list():
            self._enqueue_namespace(quota)

    async def _objects_of(self, resource: str, group: str) -> SharedInformer | None:
        """The synced informer of a counted kind; None for a kind the server does not serve (yet)
        or that has no namespaced objects to count."""
        informer = self.objects.get((resource, group))
        if informer is None:
            try:
                info = self.client.resource_info(f"{resource}.{group}" if group else resource)
            except StatusError:
                return None
            if (info.resource, info.group) != (resource, group) or not info.namespaced or "watch" not in info.verbs:
                return None
            informer = self._watch(resource, group)
        if not informer.running:
            await informer.start()
        try:
            await informer.wait_synced(SYNC_TIMEOUT)
        except TimeoutError:
            return None
        return informer

    async def sync(self, key: str) -> None:
        for quota in list(self.quotas.list_by_index("namespace", key)):
            hard = dict((quota.get("spec") or {}).get("hard") or {})
            totals: dict[str, Fraction] = {}
            for resource, group in resources_of(hard):
                informer = await self._objects_of(resource, group)
                if informer is None:
                    continue
                for obj in informer.list_by_index("namespace", key):
                    if not in_scope(quota, resource, group, obj):
                        continue
                    for name, amount in usage(resource, group, obj).items():
                        totals[name] = totals.get(name, Fraction(0)) + amount
            used = {name: format_amount(totals.get(name, Fraction(0))) for name in hard}
            await self.write_status(quota, {"hard": hard, "used": used})
