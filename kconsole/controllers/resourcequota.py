"""ResourceQuota controller: every quota's status.hard is its spec.hard and status.used what the
namespace's objects use, kept current as objects come and go (``kubectl describe quota``).

Keyed by namespace: a change to any counted object, or to a quota, recomputes that namespace's
quotas from the informer caches, with :func:`kconsole.objects.resourcequota.usage` as the evaluator.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from kconsole.controllers.base import Controller, ControllerContext
from kconsole.objects.resourcequota import TRACKED, format_amount, in_scope, resources_of, usage


class ResourceQuotaController(Controller):
    name = "resourcequota-controller"
    component = ""
    workers = 1

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.quotas = self.informer("resourcequotas")
        self.quotas.add_event_handler(**self.handlers(self._enqueue_namespace))
        self.objects = {(resource, group): self.informer(resource) for resource, group in TRACKED
                        if resource != "resourcequotas"}
        self.objects[("resourcequotas", "")] = self.quotas
        for informer in self.objects.values():
            informer.add_event_handler(**self.handlers(self._enqueue_if_quota))

    def _enqueue_namespace(self, obj: dict[str, Any]) -> None:
        namespace = (obj.get("metadata") or {}).get("namespace")
        if namespace:
            self.queue.add(namespace)

    def _enqueue_if_quota(self, obj: dict[str, Any]) -> None:
        namespace = (obj.get("metadata") or {}).get("namespace")
        if namespace and self.quotas.list_by_index("namespace", namespace):
            self.queue.add(namespace)

    async def sync(self, key: str) -> None:
        for quota in list(self.quotas.list_by_index("namespace", key)):
            hard = dict((quota.get("spec") or {}).get("hard") or {})
            totals: dict[str, Fraction] = {}
            for resource, group in resources_of(hard):
                informer = self.objects.get((resource, group))
                if informer is None:
                    continue
                for obj in informer.list_by_index("namespace", key):
                    if not in_scope(quota, resource, group, obj):
                        continue
                    for name, amount in usage(resource, group, obj).items():
                        totals[name] = totals.get(name, Fraction(0)) + amount
            used = {name: format_amount(totals.get(name, Fraction(0))) for name in hard}
            await self.write_status(quota, {"hard": hard, "used": used})
