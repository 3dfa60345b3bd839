"""ClusterRole aggregation controller (upstream's clusterrole-aggregation-controller).

A ClusterRole with ``aggregationRule.clusterRoleSelectors`` holds the union of the rules of every
other ClusterRole its selectors match, so ``kubectl get clusterrole view -o yaml`` shows what a
ClusterRole labelled ``rbac.authorization.k8s.io/aggregate-to-view: "true"`` (a CRD install's
reader role) added. As upstream: selectors in order, matching roles by name, each rule once, the
result written by server-side apply as ``clusterrole-aggregation-controller``; any ClusterRole
change re-syncs every aggregated one, so chains (view into edit into admin) settle in turn.
"""

from __future__ import annotations

from typing import Any

from kconsole.controllers.base import Controller, ControllerContext
from kconsole.objects.selectors import from_label_selector_dict

Obj = dict[str, Any]
FIELD_MANAGER = "clusterrole-aggregation-controller"


def aggregated_rules(role: Obj, cluster_roles: list[Obj]) -> list[Obj]:
    """Upstream's syncClusterRole: the rules of the roles each selector picks, first seen first."""
    name = role["metadata"]["name"]
    by_name = sorted(cluster_roles, key=lambda r: r["metadata"]["name"])
    rules: list[Obj] = []
    for selector_spec in (role.get("aggregationRule") or {}).get("clusterRoleSelectors") or ():
        selector = from_label_selector_dict(selector_spec)
        for other in by_name:
            if other["metadata"]["name"] == name:
                continue
            if not selector.matches(other["metadata"].get("labels") or {}):
                continue
            for rule in other.get("rules") or ():
                if rule not in rules:
                    rules.append(rule)
    return rules


class ClusterRoleAggregationController(Controller):
    name = "clusterrole-aggregation-controller"
    component = ""  # upstream records no events here
    workers = 1

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.cluster_roles = self.informer("clusterroles")
        self.cluster_roles.add_event_handler(on_add=self._enqueue_all, on_update=lambda _o, _n: self._enqueue_all(),
                                             on_delete=self._enqueue_all)

    def _enqueue_all(self, _obj: Obj | None = None) -> None:
        """Any ClusterRole may feed any selector (labels change too): re-sync every aggregated one."""
        for role in self.cluster_roles.list():
            if role.get("aggregationRule"):
                self.queue.add(role["metadata"]["name"])

    async def sync(self, key: str) -> None:
        role = self.cluster_roles.get(key)
        if role is None or not role.get("aggregationRule"):
            return
        rules = aggregated_rules(role, self.cluster_roles.list())
        if rules == (role.get("rules") or []):
            return
        await self.client.apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                                 "metadata": {"name": key}, "rules": rules},
                                field_manager=FIELD_MANAGER, force=True)
