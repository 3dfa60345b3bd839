"""History reads through the API server: RBAC-guarded, Secrets redacted for whom may not get them,
while API clients keep upstream's 410 for compacted revisions."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from kconsole.api.server import APIServer
from kconsole.api.types import Request, Response, StatusError, UserInfo
from kconsole.client.client import Client
from kconsole.client.history import HistoryClient
from kconsole.clock import VirtualClock
from kconsole.store.revlog import RevisionLog


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[APIServer]:
    clock = VirtualClock()
    log = await RevisionLog.open(tmp_path / "store.db", clock=clock, synchronous="NORMAL")
    server = APIServer(log, clock, seed=7)
    await server.start()
    yield server
    await server.stop()
    await log.close()


def _client(api: APIServer, user: UserInfo) -> Client:
    return Client(api, api.tokens.issue(user), api.clock)


def _pod(image: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": image}]}}


async def _write_pod_twice(api: APIServer, admin: Client) -> tuple[int, int]:
    created = await admin.create(_pod("nginx:1"))
    await api.clock.advance(10)
    changed = dict(created)
    changed["spec"] = {**created["spec"], "containers": [{**created["spec"]["containers"][0], "image": "nginx:2"}]}
    updated = await admin.update(changed, field_manager="deployer")
    await api.clock.advance(10)
    return int(created["metadata"]["resourceVersion"]), int(updated["metadata"]["resourceVersion"])


async def test_compacted_revisions_answer_410_while_history_reads_them(api: APIServer) -> None:
    admin = _client(api, UserInfo("admin", ("system:masters",)))
    first, second = await _write_pod_twice(api, admin)
    await api.kv.compact(second, 1)  # API clients lose everything before `second`; history keeps it
    resp = await api.handle(Request("list", "pods", namespace="default", resource_version=str(first),
                                    resource_version_match="Exact", credentials=admin._credentials))
    assert isinstance(resp, Response) and resp.code == 410 and resp.body["reason"] == "Expired"

    history = HistoryClient(admin)
    bounds = await history.bounds()
    assert bounds.oldest == 1 and bounds.current == api.kv.revision
    then = await history.list_at("pods", first, namespace="default")
    assert [p["spec"]["containers"][0]["image"] for p in then] == ["nginx:1"]
    changes = await history.changes(first - 1, second, resource="pods", namespace="default", name="web")
    assert [(c.type, c.revision) for c in changes] == [("ADDED", first), ("MODIFIED", second)]
    assert changes[1].previous["spec"]["containers"][0]["image"] == "nginx:1"
    assert changes[1].object["spec"]["containers"][0]["image"] == "nginx:2"
    assert changes[1].time == await history.time_of(second) == changes[0].time + 10
    assert await history.revision_at(changes[0].time + 5) == first
    writes = await history.writes("pods", "web", namespace="default")
    assert [(w.verb, w.user, w.revision, w.field_manager) for w in writes] == [
        ("create", "admin", first, ""), ("update", "admin", second, "deployer")]

    await admin.create({**_pod("nginx:3"), "metadata": {"name": "other", "namespace": "default"}})
    await api.kv.compact(second + 1, second)  # now the history starts at `second`
    with pytest.raises(StatusError) as gone:
        await history.list_at("pods", first, namespace="default")
    assert gone.value.code == 410 and f"revision {second}" in gone.value.message
    with pytest.raises(StatusError) as future:
        await history.list_at("pods", api.kv.revision + 5)
    assert future.value.code == 504 and "future" in future.value.message


async def test_history_needs_rbac_and_secrets_are_redacted_without_get(api: APIServer) -> None:
    admin = _client(api, UserInfo("admin", ("system:masters",)))
    await admin.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "default"},
                        "data": {"password": "aHVudGVyMg=="}})
    rev = api.kv.revision
    with pytest.raises(StatusError) as denied:
        await HistoryClient(_client(api, UserInfo("alice", ("system:authenticated",)))).bounds()
    assert denied.value.code == 403 and "historyqueries" in denied.value.message

    console = HistoryClient(_client(api, UserInfo("system:kconsole-console", ("system:authenticated",))))
    seen = await console.list_at("secrets", rev, namespace="default")
    assert seen[0]["data"] == {"password": "aHVudGVyMg=="}  # decrypted, for a user who may get Secrets

    await admin.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                        "metadata": {"name": "history-only"},
                        "rules": [{"apiGroups": ["history.kconsole.io"], "resources": ["historyqueries"],
                                   "verbs": ["create"]}]})
    await admin.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                        "metadata": {"name": "bob-history"},
                        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                    "name": "history-only"},
                        "subjects": [{"kind": "User", "name": "bob", "apiGroup": "rbac.authorization.k8s.io"}]})
    await api.clock.advance(1)
    bob = HistoryClient(_client(api, UserInfo("bob", ("system:authenticated",))))
    redacted = await bob.list_at("secrets", rev, namespace="default")
    assert redacted[0]["data"] == {"password": ""}
    changes = await bob.changes(rev - 1, rev, resource="secrets")
    assert changes[0].object["data"] == {"password": ""}


async def test_refused_writes_name_their_stage(api: APIServer) -> None:
    admin = _client(api, UserInfo("admin", ("system:masters",)))
    bad = _pod("nginx")
    bad["spec"]["containers"][0]["name"] = "Not_A_DNS_Label"
    with pytest.raises(StatusError):
        await admin.create(bad)
    writes = await HistoryClient(admin).writes("pods", "web", namespace="default")
    assert [(w.verb, w.code, w.stage) for w in writes] == [("create", 422, "validation")]


async def test_bad_queries_are_clear_errors(api: APIServer) -> None:
    admin = _client(api, UserInfo("admin", ("system:masters",)))
    for spec, text in [({"op": "nope"}, "spec.op must be one of"),
                       ({"op": "listAt", "resource": "pods"}, "spec.revision is required"),
                       ({"op": "changes", "after": "x", "upto": 1}, "spec.after must be an integer"),
                       ({"op": "listAt", "resource": "selfsubjectreviews", "revision": 1}, "not stored")]:
        with pytest.raises(StatusError) as err:
            await admin.create({"apiVersion": "history.kconsole.io/v1", "kind": "HistoryQuery",
                                "metadata": {}, "spec": spec})
        assert err.value.code == 400 and text in err.value.message
