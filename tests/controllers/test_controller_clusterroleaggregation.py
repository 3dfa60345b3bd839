"""ClusterRole aggregation: a ClusterRole labelled aggregate-to-view (as a CRD install ships) shows up
in view, edit and admin, read with the real kubectl, and leaves them when the label goes."""

from __future__ import annotations

import json
from typing import Any

from ctrl_env import open_crd
from kubectl_env import Kubectl, kubectl  # noqa: F401 - kubectl is the fixture
from workload_env import Env, wl  # noqa: F401 - wl is the fixture

from kconsole.controllers.clusterroleaggregation import ClusterRoleAggregationController, aggregated_rules

Obj = dict[str, Any]
WIDGET_RULE = {"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get", "list", "watch"]}
AGG_VIEW = "rbac.authorization.k8s.io/aggregate-to-view"

WIDGET_CRD = json.dumps(open_crd("widgets", "Widget"))

WIDGET_READER = f"""apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: widget-reader
  labels:
    {AGG_VIEW}: "true"
rules:
- apiGroups: ["example.com"]
  resources: ["widgets"]
  verbs: ["get", "list", "watch"]
"""


async def rules_of(wl: Env, name: str) -> list[Obj]:
    return (await wl.admin.get("clusterroles", name)).get("rules") or []


async def test_a_role_labelled_aggregate_to_view_joins_view_edit_and_admin(wl: Env, kubectl: Kubectl) -> None:
    await wl.start(ClusterRoleAggregationController)
    await kubectl("create", "clusterrolebinding", "jane-view", "--clusterrole=view", "--user=jane")
    await kubectl("apply", "-f", "-", stdin=WIDGET_CRD)
    await kubectl("wait", "--for=condition=Established", "crd/widgets.example.com", "--timeout=20s")
    assert (await kubectl("auth", "can-i", "list", "widgets", "--as", "jane", check=False)).strip() == "no"
    await kubectl("apply", "-f", "-", stdin=WIDGET_READER)

    async def everywhere() -> bool:
        return all([WIDGET_RULE in await rules_of(wl, n) for n in ("view", "edit", "admin")])
    await wl.wait(everywhere, timeout=30)
    view = json.loads(await kubectl("get", "clusterrole", "view", "-o", "json"))
    assert view["rules"][-1] == WIDGET_RULE
    reader = await wl.admin.get("clusterroles", "system:aggregate-to-view")
    assert view["rules"] == reader["rules"] + [WIDGET_RULE], "view is the union of what its selector picks"
    stored = await wl.admin.get("clusterroles", "view")
    managers = {(m["manager"], m["operation"]) for m in stored["metadata"]["managedFields"]}
    assert ("clusterrole-aggregation-controller", "Apply") in managers
    assert (await kubectl("auth", "can-i", "list", "widgets", "--as", "jane")).strip() == "yes"

    await kubectl("label", "clusterrole", "widget-reader", f"{AGG_VIEW}-")

    async def gone() -> bool:
        return not any([WIDGET_RULE in await rules_of(wl, n) for n in ("view", "edit", "admin")])
    await wl.wait(gone, timeout=30)
    assert await rules_of(wl, "view") == reader["rules"]
    out = await kubectl("auth", "can-i", "list", "widgets", "--as", "jane", check=False)
    assert out.strip() == "no"


def test_selectors_in_order_roles_by_name_each_rule_once() -> None:
    def role(name: str, labels: dict[str, str], rules: list[Obj]) -> Obj:
        return {"metadata": {"name": name, "labels": labels}, "rules": rules}
    a, b, c = ({"verbs": ["get"], "resources": [r]} for r in ("a", "b", "c"))
    agg = {"metadata": {"name": "agg"}, "rules": [c],
           "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"x": "1"}}, {"matchLabels": {"y": "1"}}]}}
    roles = [agg, role("zed", {"x": "1"}, [b, a]), role("amy", {"x": "1"}, [a]), role("yan", {"y": "1"}, [c, b]),
             role("off", {}, [c])]
    assert aggregated_rules(agg, roles) == [a, b, c]
