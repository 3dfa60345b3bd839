"""Gaps between the API server and its neighbours: namespaces written elsewhere, field ownership of
ordinary writes meeting server-side apply, admission lists, and bootstrap that outlasts a sick store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from api_helpers import Client, pod

from kconsole.api.server import APIServer
from kconsole.api.types import Request, Response, StatusError
from kconsole.clock import VirtualClock
from kconsole.store.kv import Put
from kconsole.store.revlog import RevisionLog


def _deployment(replicas: int = 1) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


async def test_create_right_after_a_namespace_the_cache_has_not_seen(api: APIServer, kv: RevisionLog,
                                                                     admin: Client) -> None:
    # Another API server (or a restore) wrote the Namespace; ours has not received the event yet.
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fresh", "uid": "u-1"},
          "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}
    await kv.txn([], [Put("/registry/namespaces/fresh", json.dumps(ns).encode())])
    created = await admin.ok("create", "configmaps", namespace="fresh", body={"metadata": {"name": "c"}})
    assert created["metadata"]["namespace"] == "fresh"
    resp = await admin.do("create", "configmaps", namespace="nowhere", body={"metadata": {"name": "c"}})
    assert resp.code == 404 and resp.body["message"] == 'namespaces "nowhere" not found'


async def test_scale_then_server_side_apply_of_other_replicas_conflicts(api: APIServer, admin: Client) -> None:
    await admin.ok("create", "deployments", group="apps", namespace="default", body=_deployment(),
                   user_agent="kubectl/v1.32.0 (linux/amd64) kubernetes/abc")
    created = await admin.ok("get", "deployments", group="apps", namespace="default", name="web")
    assert [e["manager"] for e in created["metadata"]["managedFields"]] == ["kubectl"]
    await admin.ok("patch", "deployments", group="apps", namespace="default", name="web", subresource="scale",
                   patch_type="merge", body={"spec": {"replicas": 5}}, field_manager="kubectl-scale")
    doc = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {"replicas": 3}}
    resp = await admin.do("patch", "deployments", group="apps", namespace="default", name="web",
                          patch_type="apply", body=doc, field_manager="deploy-tool")
    assert isinstance(resp, Response) and resp.code == 409, resp.body
    assert resp.body["details"]["causes"] == [{
        "reason": "FieldManagerConflict", "field": ".spec.replicas",
        "message": 'conflict with "kubectl-scale" with subresource "scale" using apps/v1'}]
    scaled = await admin.ok("get", "deployments", group="apps", namespace="default", name="web")
    assert [(e["manager"], e.get("subresource")) for e in scaled["metadata"]["managedFields"]] == \
        [("kubectl", None), ("kubectl-scale", "scale")]  # Update entries of one time: by manager, as upstream
    forced = await admin.ok("patch", "deployments", group="apps", namespace="default", name="web",
                            patch_type="apply", body=doc, field_manager="deploy-tool", force=True)
    assert forced["spec"]["replicas"] == 3


async def test_update_without_managed_fields_keeps_the_live_ones(api: APIServer, admin: Client) -> None:
    await admin.ok("create", "configmaps", namespace="default", body={"metadata": {"name": "c"}, "data": {"a": "1"}},
                   field_manager="creator")
    await admin.ok("update", "configmaps", namespace="default", name="c",
                   body={"metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}}, field_manager="editor")
    got = await admin.ok("get", "configmaps", namespace="default", name="c")
    owners = {e["manager"]: e["fieldsV1"] for e in got["metadata"]["managedFields"]}
    assert set(owners) == {"creator", "editor"}
    assert "f:b" in owners["editor"]["f:data"] and "f:a" in owners["creator"]["f:data"]


async def test_priority_admission_uses_the_global_default_class(api: APIServer, admin: Client) -> None:
    await admin.ok("create", "priorityclasses", group="scheduling.k8s.io",
                   body={"metadata": {"name": "normal"}, "value": 1000, "globalDefault": True})
    await api.clock.settle()  # admission reads the watch cache, as upstream's reads its informers
    created = await admin.ok("create", "pods", namespace="default", body=pod("p"))
    assert created["spec"]["priority"] == 1000 and created["spec"]["priorityClassName"] == "normal"


async def test_admission_lists_services_in_use(api: APIServer, admin: Client) -> None:
    svc = {"metadata": {"name": "np"}, "spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30080}]}}
    await admin.ok("create", "services", namespace="default", body=svc)
    await api.clock.settle()
    ports = {p.get("nodePort") for s in api.list_objects("services", None) for p in s["spec"]["ports"]}
    assert 30080 in ports
    assert [s["metadata"]["name"] for s in api.list_objects("services", "kube-system")] == []


async def test_bootstrap_retries_until_the_store_answers(tmp_path: Path) -> None:
    clock = VirtualClock()
    kv = await RevisionLog.open(tmp_path / "boot.db", clock=clock, synchronous="NORMAL")
    api = APIServer(kv, clock, seed=3)
    failures = {"left": 5}

    async def sick_store(req: Request) -> None:
        if req.source == "bootstrap" and failures["left"] > 0:
            failures["left"] -= 1
            raise StatusError.unavailable("etcdserver: request timed out")

    api.fault_injector = sick_store
    try:
        await api.start()
        assert api.health_checks()["poststarthook/rbac/bootstrap-roles"][0] is False
        assert api.get_object("namespaces", None, "default") is None
        await clock.run_until(lambda: api.health_checks()["poststarthook/rbac/bootstrap-roles"][0], timeout=60)
        for ns in ("default", "kube-system", "kube-public", "kube-node-lease"):
            assert api.get_object("namespaces", None, ns) is not None
        assert api.get_object("services", "default", "kubernetes") is not None
    finally:
        await api.stop()
        await kv.close()


async def test_bootstrap_retries_end_when_the_server_stops(tmp_path: Path) -> None:
    clock = VirtualClock()
    kv = await RevisionLog.open(tmp_path / "boot.db", clock=clock, synchronous="NORMAL")
    api = APIServer(kv, clock, seed=3)
    attempts: list[str] = []

    async def dead_store(req: Request) -> None:
        attempts.append(req.resource)
        raise StatusError.unavailable("etcdserver: no leader")

    api.fault_injector = dead_store
    try:
        await api.start()
        await clock.advance(30)
        assert len(attempts) > 1 + len(api._bootstrap_wanted())  # retried, not given up
        await api.stop()
        seen = len(attempts)
        await clock.advance(120)
        assert len(attempts) == seen
    finally:
        await kv.close()

