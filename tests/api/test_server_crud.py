"""CRUD through the full pipeline, with upstream's Status shapes and messages."""

from __future__ import annotations

import asyncio

from api_helpers import Client, pod

from kconsole.api.server import APIServer
from kconsole.api.types import Credentials, Request, Response


async def test_create_get_list_update_delete_roundtrip(admin: Client) -> None:
    created = await admin.ok("create", "pods", namespace="default", body=pod("web", {"app": "web"}))
    assert created["metadata"]["uid"] and created["metadata"]["creationTimestamp"]
    rv = int(created["metadata"]["resourceVersion"])

    got = await admin.ok("get", "po", namespace="default", name="web")
    assert got["metadata"]["resourceVersion"] == str(rv)
    assert got["spec"]["containers"][0]["image"] == "nginx"

    listed = await admin.ok("list", "pods", namespace="default")
    assert listed["kind"] == "PodList" and [p["metadata"]["name"] for p in listed["items"]] == ["web"]
    assert int(listed["metadata"]["resourceVersion"]) >= rv

    got["metadata"]["labels"]["tier"] = "front"
    updated = await admin.ok("update", "pods", namespace="default", name="web", body=got)
    assert updated["metadata"]["labels"] == {"app": "web", "tier": "front"}
    assert int(updated["metadata"]["resourceVersion"]) > rv

    deleted = await admin.ok("delete", "pods", namespace="default", name="web")
    assert deleted["metadata"]["name"] == "web"
    missing = await admin.do("get", "pods", namespace="default", name="web")
    assert missing.code == 404


async def test_not_found_already_exists_conflict_messages(admin: Client) -> None:
    resp = await admin.do("get", "pods", namespace="default", name="foo")
    assert resp.code == 404
    assert resp.body["kind"] == "Status" and resp.body["status"] == "Failure"
    assert resp.body["reason"] == "NotFound" and resp.body["message"] == 'pods "foo" not found'
    assert resp.body["details"] == {"name": "foo", "kind": "pods"}

    await admin.ok("create", "pods", namespace="default", body=pod("foo"))
    resp = await admin.do("create", "pods", namespace="default", body=pod("foo"))
    assert resp.code == 409 and resp.body["reason"] == "AlreadyExists"
    assert resp.body["message"] == 'pods "foo" already exists'

    cur = await admin.ok("get", "pods", namespace="default", name="foo")
    stale = dict(cur, metadata=dict(cur["metadata"], resourceVersion="1"))
    resp = await admin.do("update", "pods", namespace="default", name="foo", body=stale)
    assert resp.code == 409 and resp.body["reason"] == "Conflict"
    assert resp.body["message"] == ('Operation cannot be fulfilled on pods "foo": the object has been modified; '
                                    "please apply your changes to the latest version and try again")

    resp = await admin.do("get", "deployments", group="apps", namespace="default", name="nope")
    assert resp.body["message"] == 'deployments.apps "nope" not found'


async def test_invalid_object_is_422_naming_the_field(admin: Client) -> None:
    resp = await admin.do("create", "configmaps", namespace="default", body={"metadata": {}})
    assert resp.code == 422 and resp.body["reason"] == "Invalid"
    assert "metadata.name" in resp.body["message"]
    assert resp.body["message"].startswith('ConfigMap "" is invalid: ')
    bad = {"metadata": {"name": "web"}, "spec": {"replicas": -1, "selector": {"matchLabels": {"app": "web"}},
           "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
    resp = await admin.do("create", "deployments", group="apps", namespace="default", body=bad)
    assert resp.code == 422 and resp.body["details"]["kind"] == "Deployment"  # kubectl: The Deployment "web" is invalid
    assert resp.body["message"].startswith('Deployment.apps "web" is invalid: spec.replicas: ')  # upstream's qualified kind


async def test_bad_input_is_a_clear_400(admin: Client) -> None:
    resp = await admin.do("create", "configmaps", namespace="default", body=["not", "an", "object"])
    assert resp.code == 400 and "must be a ConfigMap object" in resp.body["message"]
    resp = await admin.do("create", "configmaps", namespace="default",
                          body={"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}})
    assert resp.code == 400 and "kind in the data (Secret)" in resp.body["message"]
    resp = await admin.do("create", "configmaps", namespace="default",
                          body={"metadata": {"name": "x", "namespace": "other"}})
    assert resp.code == 400 and "namespace of the provided object" in resp.body["message"]
    resp = await admin.do("list", "pods", namespace="default", label_selector="a in (b")
    assert resp.code == 400 and "label selector" in resp.body["message"]
    resp = await admin.do("list", "pods", namespace="default", field_selector="spec.bogus=1")
    assert resp.code == 400 and resp.body["message"] == "field label not supported: spec.bogus"
    # A kind without field label conversions of its own words it as upstream's default conversion.
    resp = await admin.do("list", "configmaps", namespace="default", field_selector="data.k=1")
    assert resp.code == 400 and resp.body["message"] == ('"data.k" is not a known field selector: only '
                                                         '"metadata.name", "metadata.namespace"')
    resp = await admin.do("list", "nosuchthings")
    assert resp.code == 404 and "nosuchthings" in resp.body["message"]


async def test_unauthenticated_and_forbidden(api: APIServer, admin: Client) -> None:
    resp = await api.handle(Request("list", "pods", namespace="default"))
    assert resp.code == 401 and resp.body["reason"] == "Unauthorized"
    from kconsole.api.types import UserInfo

    bob = Credentials(token=api.tokens.issue(UserInfo("bob")))
    resp = await api.handle(Request("create", "pods", namespace="default", body=pod("x"), credentials=bob))
    assert resp.code == 403
    assert resp.body["message"].startswith('pods is forbidden: User "bob" cannot create resource "pods" in API group '
                                           '"" in the namespace "default"')
    records = api.audit_recent(2)
    assert records[-1].stage == "authorization" and records[-1].code == 403 and records[-1].user == "bob"
    assert records[-2].stage == "authentication" and records[-2].code == 401


async def test_generate_name_is_deterministic_for_a_seed(tmp_path, clock) -> None:
    from kconsole.api.types import UserInfo
    from kconsole.store.revlog import RevisionLog

    names = []
    for run in range(2):
        kv = await RevisionLog.open(tmp_path / f"s{run}.db", clock=clock)
        api = APIServer(kv, clock, seed=42)
        await api.start()
        c = Credentials(token=api.tokens.issue(UserInfo("admin", ("system:masters",))))
        resp = await api.handle(Request("create", "configmaps", namespace="default", credentials=c,
                                        body={"metadata": {"generateName": "cfg-"}}))
        assert resp.code == 201
        names.append((resp.body["metadata"]["name"], resp.body["metadata"]["uid"]))
        await api.stop()
        await kv.close()
    assert names[0] == names[1]
    assert names[0][0].startswith("cfg-") and len(names[0][0]) == len("cfg-") + 5


async def test_cas_conflict_under_concurrent_updaters_loses_nothing(admin: Client) -> None:
    await admin.ok("create", "configmaps", namespace="default",
                   body={"metadata": {"name": "counter"}, "data": {"n": "0"}})
    n_tasks, per_task = 8, 5
    conflicts = 0

    async def incrementer() -> None:
        nonlocal conflicts
        for _ in range(per_task):
            while True:
                cur = await admin.ok("get", "configmaps", namespace="default", name="counter")
                cur["data"]["n"] = str(int(cur["data"]["n"]) + 1)
                resp = await admin.do("update", "configmaps", namespace="default", name="counter", body=cur)
                if resp.code == 409:
                    conflicts += 1
                    continue
                assert resp.ok, resp.body
                break

    await asyncio.gather(*(incrementer() for _ in range(n_tasks)))
    final = await admin.ok("get", "configmaps", namespace="default", name="counter")
    assert final["data"]["n"] == str(n_tasks * per_task)
    assert conflicts > 0  # the updaters really did race


async def test_dry_run_writes_nothing(api: APIServer, admin: Client) -> None:
    before = api.kv.revision
    resp = await admin.ok("create", "pods", namespace="default", body=pod("dry"), dry_run=True)
    assert resp["metadata"]["name"] == "dry" and resp["metadata"]["uid"]
    assert api.kv.revision == before
    assert (await admin.do("get", "pods", namespace="default", name="dry")).code == 404

    await admin.ok("create", "configmaps", namespace="default", body={"metadata": {"name": "c"}, "data": {"a": "1"}})
    before = api.kv.revision
    patched = await admin.ok("patch", "configmaps", namespace="default", name="c", patch_type="merge",
                             body={"data": {"a": "2"}}, dry_run=True)
    assert patched["data"]["a"] == "2"
    await admin.ok("delete", "configmaps", namespace="default", name="c", dry_run=True)
    assert api.kv.revision == before
    assert (await admin.ok("get", "configmaps", namespace="default", name="c"))["data"]["a"] == "1"


async def test_update_without_resource_version_is_unconditional(admin: Client) -> None:
    await admin.ok("create", "configmaps", namespace="default", body={"metadata": {"name": "u"}, "data": {"a": "1"}})
    out = await admin.ok("update", "configmaps", namespace="default", name="u",
                         body={"metadata": {"name": "u"}, "data": {"a": "2"}})
    assert out["data"] == {"a": "2"}


async def test_uid_is_immutable_and_creation_timestamp_kept(admin: Client) -> None:
    cm = await admin.ok("create", "configmaps", namespace="default", body={"metadata": {"name": "m"}})
    body = {"metadata": {"name": "m", "uid": "other", "creationTimestamp": "2000-01-01T00:00:00Z"}}
    resp = await admin.do("update", "configmaps", namespace="default", name="m", body=body)
    assert resp.code == 422 and "metadata.uid" in resp.body["message"] and "field is immutable" in resp.body["message"]
    body["metadata"].pop("uid")
    out = await admin.ok("update", "configmaps", namespace="default", name="m", body=body)
    assert out["metadata"]["creationTimestamp"] == cm["metadata"]["creationTimestamp"]
    assert out["metadata"]["uid"] == cm["metadata"]["uid"]


async def test_empty_metadata_collections_are_not_stored_as_upstreams_omitempty_drops_them(
        api: APIServer, admin: Client) -> None:
    cm = await admin.ok("create", "configmaps", namespace="default", body={"metadata": {
        "name": "bare", "labels": {}, "annotations": {}, "finalizers": [], "ownerReferences": []}})
    assert set(cm["metadata"]) == {"name", "namespace", "uid", "resourceVersion", "creationTimestamp",
                                   "managedFields"}
    cm["metadata"]["labels"] = {"team": "blue"}
    labelled = await admin.ok("update", "configmaps", namespace="default", name="bare", body=cm)
    labelled["metadata"]["labels"] = {}  # clearing them leaves no empty map behind
    cleared = await admin.ok("update", "configmaps", namespace="default", name="bare", body=labelled)
    assert "labels" not in cleared["metadata"]
    assert "labels" not in (await admin.ok("get", "configmaps", namespace="default", name="bare"))["metadata"]
    bad = await admin.do("create", "configmaps", namespace="default", body={"metadata": {"name": "x", "labels": ""}})
    assert bad.code in (400, 422)


async def test_noop_update_does_not_write(api: APIServer, admin: Client) -> None:
    cm = await admin.ok("create", "configmaps", namespace="default", body={"metadata": {"name": "same"},
                                                                          "data": {"a": "1"}})
    before = api.kv.revision
    out = await admin.ok("update", "configmaps", namespace="default", name="same", body=cm)
    assert out["metadata"]["resourceVersion"] == cm["metadata"]["resourceVersion"]
    assert api.kv.revision == before


async def test_bootstrap_objects_exist(admin: Client) -> None:
    ns = await admin.ok("list", "namespaces")
    assert {n["metadata"]["name"] for n in ns["items"]} >= {"default", "kube-system", "kube-public",
                                                            "kube-node-lease"}
    pcs = {p["metadata"]["name"]: p["value"] for p in (await admin.ok("list", "pc"))["items"]}
    assert pcs == {"system-cluster-critical": 2000000000, "system-node-critical": 2000001000}
    svc = await admin.ok("get", "services", namespace="default", name="kubernetes")
    assert svc["spec"]["clusterIP"] == "10.96.0.1"
    roles = await admin.ok("list", "clusterroles")
    assert "cluster-admin" in {r["metadata"]["name"] for r in roles["items"]}


async def test_restart_keeps_objects_and_does_not_duplicate_bootstrap(tmp_path, clock) -> None:
    from kconsole.api.types import UserInfo
    from kconsole.store.revlog import RevisionLog

    for run in range(2):
        kv = await RevisionLog.open(tmp_path / "s.db", clock=clock)
        api = APIServer(kv, clock, seed=3)
        await api.start()
        c = Credentials(token=api.tokens.issue(UserInfo("admin", ("system:masters",))))
        if run == 0:
            resp = await api.handle(Request("create", "services", namespace="default", credentials=c,
                                            body={"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}}))
            assert resp.code == 201, resp.body
            first_ip = resp.body["spec"]["clusterIP"]
            rev_after = kv.revision
        else:
            assert kv.revision == rev_after  # nothing re-created
            resp = await api.handle(Request("get", "services", namespace="default", name="s", credentials=c))
            assert resp.body["spec"]["clusterIP"] == first_ip
            assert api.ipalloc.is_allocated(first_ip)
        await api.stop()
        await kv.close()


async def test_start_returns_once_the_caches_hold_the_bootstrap(tmp_path, clock) -> None:
    """A component started right after the server must not be refused while the watch caches (which
    RBAC decides from) still lack the bootstrap policy: its first cluster-wide list is allowed."""
    from kconsole.api.types import UserInfo
    from kconsole.store.revlog import RevisionLog

    kv = await RevisionLog.open(tmp_path / "s.db", clock=clock)
    api = APIServer(kv, clock, seed=3)
    await api.start()
    assert api.storage.caches["services"].get("default", "kubernetes") is not None
    bindings = api.storage.caches["clusterrolebindings.rbac.authorization.k8s.io"]
    assert bindings.get(None, "system:kconsole-node-agents") is not None
    agents = Credentials(token=api.tokens.issue(UserInfo("system:kconsole-node-agents", ("system:authenticated",))))
    resp = await api.handle(Request("list", "pods", credentials=agents))
    assert resp.code == 200, resp.body
    await api.stop()
    await kv.close()


async def test_every_request_is_audited_with_rejecting_stage(api: APIServer, admin: Client) -> None:
    await admin.do("get", "pods", namespace="default", name="ghost")
    await admin.do("create", "configmaps", namespace="default", body={"metadata": {}})
    recs = api.audit_recent(2)
    assert (recs[0].verb, recs[0].code, recs[0].stage, recs[0].resource) == ("get", 404, "storage", "pods")
    assert (recs[1].verb, recs[1].code, recs[1].stage) == ("create", 422, "validation")
    assert all(r.user == "admin" and r.latency_ms >= 0 for r in recs)


async def test_store_errors_become_statuses(api: APIServer, admin: Client) -> None:
    # SchedulingDecisions are stored as written (no size validation): the store's 1.5 MiB limit answers.
    huge = {"metadata": {"name": "big"}, "detail": "a" * (2 * 1024 * 1024)}
    resp = await admin.do("create", "schedulingdecisions", group="kconsole.dev", namespace="default", body=huge)
    assert isinstance(resp, Response) and resp.code == 413 and resp.body["reason"] == "RequestEntityTooLarge"
    assert (await admin.do("get", "sd", namespace="default", name="big")).code == 404
    assert api.audit_recent(2)[0].stage == "storage"


async def test_health_checks_report_each_check(api: APIServer) -> None:
    checks = api.health_checks()
    assert checks["etcd"] == (True, "ok") and checks["informer-sync"] == (True, "ok")
    assert checks["poststarthook/rbac/bootstrap-roles"][0] is True
    await api.stop()
    assert api.health_checks()["informer-sync"][0] is False


async def test_namespaced_watch_sees_only_its_namespace(api: APIServer, admin: Client) -> None:
    import asyncio

    await admin.ok("create", "namespaces", body={"metadata": {"name": "other"}})
    w = await admin.do("watch", "configmaps", namespace="other", resource_version="0")
    everywhere = await admin.do("watch", "configmaps", resource_version="0")
    await admin.ok("create", "configmaps", namespace="default", body={"metadata": {"name": "d"}})
    await admin.ok("create", "configmaps", namespace="other", body={"metadata": {"name": "o"}})
    await api.clock.settle()
    assert [e["object"]["metadata"]["name"] for e in [await asyncio.wait_for(w.__anext__(), 1)]] == ["o"]
    assert w.pending() == 0
    assert [(await everywhere.__anext__())["object"]["metadata"]["name"] for _ in range(2)] == ["d", "o"]
    await w.close()
    await everywhere.close()


async def test_secret_string_data_is_write_only_and_merged_into_data(admin: Client) -> None:
    """A manifest's stringData (the common way to write a Secret by hand) lands in data, base64,
    winning over the same key in data, and is never stored or read back: as upstream."""
    created = await admin.ok("create", "secrets", namespace="default", body={
        "apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"},
        "data": {"user": "YWRtaW4=", "password": "b2xk"}, "stringData": {"password": "hunter2"}})
    assert created["data"] == {"user": "YWRtaW4=", "password": "aHVudGVyMg=="}
    assert "stringData" not in created
    got = await admin.ok("get", "secrets", namespace="default", name="db")
    assert got["data"] == created["data"] and "stringData" not in got
    patched = await admin.ok("patch", "secrets", namespace="default", name="db", patch_type="merge",
                             body=b'{"stringData": {"token": "t0k"}}')
    assert patched["data"] == {"user": "YWRtaW4=", "password": "aHVudGVyMg==", "token": "dDBr"}
    assert "stringData" not in patched
    bad = await admin.do("create", "secrets", namespace="default", body={
        "apiVersion": "v1", "kind": "Secret", "metadata": {"name": "bad"}, "stringData": {"a b": "x"}})
    assert bad.code == 422 and "a b" in bad.body["message"]


async def test_a_create_starts_the_status_afresh(admin: Client) -> None:
    """A manifest exported with -o yaml and applied again does not bring its old status back."""
    exported = {"metadata": {"name": "old"}, "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "old"}},
                "template": {"metadata": {"labels": {"app": "old"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}},
                "status": {"replicas": 2, "readyReplicas": 2, "availableReplicas": 2, "observedGeneration": 7,
                           "conditions": [{"type": "Available", "status": "True"}]}}
    resp = await admin.do("create", "deployments", group="apps", namespace="default", body=exported)
    assert resp.code == 201 and resp.body["status"] == {}
    svc = {"metadata": {"name": "old"}, "spec": {"ports": [{"port": 80}]},
           "status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.9"}]}}}
    resp = await admin.do("create", "services", namespace="default", body=svc)
    assert resp.code == 201 and resp.body["status"] == {"loadBalancer": {}}
    node = {"metadata": {"name": "n1"}, "status": {"capacity": {"cpu": "4"}}}
    resp = await admin.do("create", "nodes", body=node)
    assert resp.code == 201 and resp.body["status"]["capacity"] == {"cpu": "4"}  # a kubelet registers with it
