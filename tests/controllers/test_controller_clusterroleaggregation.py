"""ClusterRole aggregation: a ClusterRole labelled aggregate-to-view (as a CRD install ships) shows up
in view, edit and admin, read with the real kubectl, and leaves them when the label goes."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from workload_env import Env, wl  # noqa: F401 - wl is the fixture

from kconsole.controllers.clusterroleaggregation import ClusterRoleAggregationController, aggregated_rules
from kconsole.http.server import HTTPFront

Obj = dict[str, Any]
WIDGET_RULE = {"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get", "list", "watch"]}
AGG_VIEW = "rbac.authorization.k8s.io/aggregate-to-view"

WIDGET_CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
"""

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


class Kubectl:
    def __init__(self, front: HTTPFront, home: Path) -> None:
        self.front = front
        self.home = home

    async def __call__(self, *args: str, stdin: str | None = None, check: bool = True) -> str:
        binary = shutil.which("kubectl")
        if binary is None:
            pytest.fail("kubectl is not on PATH: these tests drive the real kubectl 1.32")
        assert self.front.kubeconfig_path is not None
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(self.home),
               "KUBECONFIG": str(self.front.kubeconfig_path), "KUBECACHEDIR": str(self.home / "kube-cache")}
        proc = await asyncio.create_subprocess_exec(binary, *args, stdin=asyncio.subprocess.PIPE,
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                                                    env=env)
        out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin else None), 30)
        if check and proc.returncode:
            raise AssertionError(f"kubectl {' '.join(args)} failed:\n{err.decode()}{out.decode()}")
        return out.decode()


@pytest_asyncio.fixture
async def kubectl(wl: Env, tmp_path: Path) -> AsyncIterator[Kubectl]:  # noqa: F811 - the fixture
    front = HTTPFront(wl.api, port=0, tls=True, data_dir=tmp_path / "front", clock=wl.clock)
    await front.start()
    try:
        yield Kubectl(front, tmp_path)
    finally:
        await front.stop()


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
