"""managedFields as kubectl get --show-managed-fields shows them on a real cluster: a status write has its
own entry (subresource: status) beside the creator's, and the API server's own objects are kube-apiserver's."""

from __future__ import annotations

import json
from typing import Any

import pytest

from http_env import Cluster

pytestmark = [pytest.mark.kubectl, pytest.mark.asyncio(loop_scope="module")]


def _entries(obj: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {(e["manager"], e["operation"], e.get("subresource", "")): e for e in obj["metadata"]["managedFields"]}


async def test_status_write_has_its_own_entry_with_the_status_fields(cluster: Cluster) -> None:
    await cluster.kubectl("create", "namespace", "mf")
    await cluster.kubectl("create", "deployment", "web", "-n", "mf", "--image=nginx")
    created = (await cluster.kubectl("get", "deploy", "web", "-n", "mf", "-o", "json",
                                     "--show-managed-fields")).json()
    creator = _entries(created)[("kubectl-create", "Update", "")]
    await cluster.clock.advance(5)
    await cluster.kubectl("patch", "deploy", "web", "-n", "mf", "--subresource=status", "--type=merge",
                          "--field-manager=kube-controller-manager",
                          "-p", json.dumps({"status": {"replicas": 1, "observedGeneration": 1}}))
    patched = (await cluster.kubectl("get", "deploy", "web", "-n", "mf", "-o", "json",
                                     "--show-managed-fields")).json()
    entries = _entries(patched)
    assert set(entries) == {("kubectl-create", "Update", ""), ("kube-controller-manager", "Update", "status")}
    status = entries[("kube-controller-manager", "Update", "status")]
    assert status["fieldsV1"] == {"f:status": {"f:observedGeneration": {}, "f:replicas": {}}}
    assert status["time"] > creator["time"]
    assert entries[("kubectl-create", "Update", "")]["fieldsV1"] == creator["fieldsV1"]

    # A second status write by the same manager updates its one entry, not a new one.
    await cluster.kubectl("patch", "deploy", "web", "-n", "mf", "--subresource=status", "--type=merge",
                          "--field-manager=kube-controller-manager", "-p", json.dumps({"status": {"readyReplicas": 1}}))
    again = _entries((await cluster.kubectl("get", "deploy", "web", "-n", "mf", "-o", "json",
                                            "--show-managed-fields")).json())
    assert len(again) == 2
    assert again[("kube-controller-manager", "Update", "status")]["fieldsV1"] == {
        "f:status": {"f:observedGeneration": {}, "f:readyReplicas": {}, "f:replicas": {}}}


async def test_the_api_servers_own_objects_are_kube_apiservers(cluster: Cluster) -> None:
    for args in (("svc", "kubernetes", "-n", "default"), ("namespace", "default"), ("clusterrole", "view"),
                 ("clusterrolebinding", "cluster-admin"), ("priorityclass", "system-node-critical")):
        obj = (await cluster.kubectl("get", *args, "-o", "json", "--show-managed-fields")).json()
        assert [(e["manager"], e["operation"]) for e in obj["metadata"]["managedFields"]] == \
            [("kube-apiserver", "Update")], args


STATUS_APPLY = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  namespace: mf
spec:
  replicas: 9
status:
  conditions:
  - type: {type}
    status: "True"
    reason: Checked
"""


async def test_server_side_apply_of_status_sets_it_and_owns_it_apart(cluster: Cluster) -> None:
    """kubectl apply --server-side --subresource=status (controller-runtime's Status().Patch(Apply)) was
    accepted and did nothing: the status was dropped as on a main-resource apply."""
    await cluster.kubectl("create", "namespace", "mf", check=False)
    await cluster.kubectl("create", "deployment", "api", "-n", "mf", "--image=nginx")
    await cluster.kubectl("apply", "--server-side", "--subresource=status", "--field-manager=checker", "-f", "-",
                          stdin=STATUS_APPLY.format(type="Checked"))
    obj = (await cluster.kubectl("get", "deploy", "api", "-n", "mf", "-o", "json", "--show-managed-fields")).json()
    assert obj["status"]["conditions"] == [{"type": "Checked", "status": "True", "reason": "Checked"}]
    assert obj["spec"]["replicas"] == 1  # the configuration's spec does not go through /status
    entries = _entries(obj)
    assert set(entries) == {("kubectl-create", "Update", ""), ("checker", "Apply", "status")}
    assert entries[("checker", "Apply", "status")]["fieldsV1"] == {"f:status": {"f:conditions": {
        'k:{"type":"Checked"}': {".": {}, "f:reason": {}, "f:status": {}, "f:type": {}}}}}

    # Applying again without that condition removes it: the manager owned it and lets go.
    await cluster.kubectl("apply", "--server-side", "--subresource=status", "--field-manager=checker", "-f", "-",
                          stdin=STATUS_APPLY.format(type="Audited"))
    obj = (await cluster.kubectl("get", "deploy", "api", "-n", "mf", "-o", "json")).json()
    assert [c["type"] for c in obj["status"]["conditions"]] == ["Audited"]
