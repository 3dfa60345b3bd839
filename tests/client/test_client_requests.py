"""The Client against the real API server: CRUD, errors, paging, watch, conflicts, binding."""

from __future__ import annotations

import asyncio

import pytest
from client_helpers import churn_past_watch_window, configmap, make_namespace, pod

from kconsole.api.types import StatusError
from kconsole.client import is_already_exists, is_conflict, is_not_found, retry_on_conflict


async def test_create_get_update_delete_roundtrip(env) -> None:
    c = env.client
    created = await c.create(configmap("settings", color="blue"))
    assert created["metadata"]["uid"] and created["metadata"]["resourceVersion"]
    got = await c.get("configmaps", "settings", "default")
    assert got["data"] == {"color": "blue"}
    got["data"]["color"] = "green"
    updated = await c.update(got)
    assert updated["data"]["color"] == "green"
    assert int(updated["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
    await c.delete("cm", "settings", "default")  # short names resolve too
    with pytest.raises(StatusError) as err:
        await c.get("configmaps", "settings", "default")
    assert is_not_found(err.value)
    assert err.value.message == 'configmaps "settings" not found'


async def test_namespaced_create_defaults_to_default_namespace(env) -> None:
    obj = configmap("x")
    del obj["metadata"]["namespace"]
    created = await env.client.create(obj)
    assert created["metadata"]["namespace"] == "default"


async def test_errors_carry_upstream_reasons(env) -> None:
    c = env.client
    await c.create(configmap("dup"))
    with pytest.raises(StatusError) as exists:
        await c.create(configmap("dup"))
    assert is_already_exists(exists.value) and not is_conflict(exists.value)
    stale = await c.get("configmaps", "dup", "default")
    fresh = dict(stale, data={"v": "1"})
    await c.update(fresh)
    with pytest.raises(StatusError) as conflict:
        await c.update(dict(stale, data={"v": "2"}))
    assert is_conflict(conflict.value)
    assert "the object has been modified" in conflict.value.message


async def test_unknown_kind_is_a_clear_error(env) -> None:
    with pytest.raises(StatusError) as err:
        await env.client.create({"apiVersion": "v1", "kind": "Gizmo", "metadata": {"name": "g"}})
    assert err.value.code == 404
    assert err.value.message == 'no matches for kind "Gizmo" in version "v1"'
    with pytest.raises(StatusError, match="apiVersion and kind"):
        await env.client.create({"metadata": {"name": "g"}})


async def test_resource_info_resolves_names_kinds_and_groups(env) -> None:
    c = env.client
    deploy = c.resource_info("deploy")
    assert (deploy.group, deploy.resource, deploy.kind) == ("apps", "deployments", "Deployment")
    assert c.resource_info("Deployment", "apps/v1") is deploy
    assert c.resource_info("deployments.apps") is deploy
    assert c.resource_info("events").group == "", "core wins an ambiguous name"
    assert c.resource_info("Lease", "coordination.k8s.io/v1").resource == "leases"


async def test_clients_over_one_entry_share_their_lookups_until_the_resources_change(env) -> None:
    # A fleet has a Client per kubelet: one discovery, one set of lookup tables for all of them.
    a, b = env.new_client(), env.new_client()
    assert a.resource_info("pods") is b.resource_info("pods")
    assert a._by_name is b._by_name
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "gizmos.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": {"type": "object"}}}]}}
    await a.create(crd)
    await env.clock.settle()
    if hasattr(env.entry, "discover"):
        await env.entry.discover()
    assert a.resource_info("gizmos").kind == "Gizmo" and b.resource_info("Gizmo", "example.com/v1").resource == "gizmos"
    assert a._by_name is b._by_name


async def test_list_pages_follow_continue_tokens(env) -> None:
    c = env.client
    await make_namespace(env, "paged")
    for i in range(12):
        await c.create(configmap(f"cm-{i:02d}", "paged"))
    page = await c.list("configmaps", "paged", limit=5)
    assert len(page["items"]) == 5 and page["metadata"].get("continue")
    items, rv = await c.list_pages("configmaps", "paged", limit=5)
    assert sorted(o["metadata"]["name"] for o in items) == [f"cm-{i:02d}" for i in range(12)]
    assert int(rv) >= max(int(o["metadata"]["resourceVersion"]) for o in items)
    assert len(await c.list_all("configmaps", "paged", limit=4)) == 12


async def test_label_and_field_selectors(env) -> None:
    c = env.client
    await make_namespace(env, "sel")
    await c.create(configmap("a", "sel") | {"metadata": {"name": "a", "namespace": "sel", "labels": {"tier": "web"}}})
    await c.create(configmap("b", "sel") | {"metadata": {"name": "b", "namespace": "sel", "labels": {"tier": "db"}}})
    web = await c.list_all("configmaps", "sel", label_selector="tier=web")
    assert [o["metadata"]["name"] for o in web] == ["a"]
    byname = await c.list_all("configmaps", "sel", field_selector="metadata.name=b")
    assert [o["metadata"]["name"] for o in byname] == ["b"]


async def test_retry_on_conflict_loses_no_update(env) -> None:
    c = env.client
    await c.create(configmap("counter", n="0"))

    async def increment() -> None:
        async def attempt() -> None:
            cm = await c.get("configmaps", "counter", "default")
            await asyncio.sleep(0)  # let the others read the same version
            cm["data"]["n"] = str(int(cm["data"]["n"]) + 1)
            await c.update(cm)

        await retry_on_conflict(attempt, attempts=50)

    await asyncio.gather(*(increment() for _ in range(8)))
    assert (await c.get("configmaps", "counter", "default"))["data"]["n"] == "8"


async def test_retry_on_conflict_gives_up_and_passes_other_errors_through(env) -> None:
    calls = 0

    async def always_conflicts() -> None:
        nonlocal calls
        calls += 1
        raise StatusError.conflict("configmaps", "x")

    with pytest.raises(StatusError):
        await retry_on_conflict(always_conflicts, attempts=3)
    assert calls == 3

    async def missing() -> None:
        await env.client.get("configmaps", "absent", "default")

    with pytest.raises(StatusError) as err:
        await retry_on_conflict(missing)
    assert is_not_found(err.value)


async def test_watch_streams_changes_in_order(env) -> None:
    c = env.client
    await make_namespace(env, "w")
    start = await c.list("configmaps", "w")
    rv = start["metadata"]["resourceVersion"]
    seen: list[tuple[str, str]] = []
    async with c.watch("configmaps", "w", resource_version=rv) as events:
        await c.create(configmap("one", "w"))
        obj = await c.patch("configmaps", "one", {"data": {"k": "v"}}, "w")
        assert obj["data"] == {"k": "v"}
        await c.delete("configmaps", "one", "w")
        async for ev in events:
            if ev["type"] == "BOOKMARK":
                continue
            seen.append((ev["type"], ev["object"]["metadata"]["name"]))
            if len(seen) == 3:
                break
    assert seen == [("ADDED", "one"), ("MODIFIED", "one"), ("DELETED", "one")]


async def test_watch_with_too_old_version_reports_410(env) -> None:
    c = env.client
    old_rv = (await c.list("configmaps", "default"))["metadata"]["resourceVersion"]
    await churn_past_watch_window(env)
    with pytest.raises(StatusError) as err:
        async with c.watch("configmaps", resource_version=old_rv) as events:
            async for ev in events:
                if ev["type"] == "ERROR":
                    raise StatusError(ev["object"])
    assert err.value.code == 410


async def test_bind_assigns_the_node_and_status_update(env) -> None:
    c = env.client
    created = await c.create(pod("p1"))
    await c.bind(created, "node-a")
    bound = await c.get("pods", "p1", "default")
    assert bound["spec"]["nodeName"] == "node-a"
    with pytest.raises(StatusError) as err:
        await c.bind(bound, "node-b")
    assert err.value.code == 409
    bound["status"] = {**bound.get("status", {}), "phase": "Running"}
    after = await c.update_status(bound)
    assert after["status"]["phase"] == "Running"


async def test_dry_run_create_writes_nothing(env) -> None:
    c = env.client
    out = await c.create(configmap("ghost"), dry_run=True)
    assert out["metadata"]["name"] == "ghost"
    with pytest.raises(StatusError) as err:
        await c.get("configmaps", "ghost", "default")
    assert is_not_found(err.value)


async def test_apply_creates_then_updates_and_patch_types(env) -> None:
    c = env.client
    applied = await c.apply(configmap("applied", a="1"), field_manager="tests")
    assert applied["data"] == {"a": "1"}
    again = await c.apply(configmap("applied", a="2"), field_manager="tests")
    assert again["data"] == {"a": "2"} and again["metadata"]["uid"] == applied["metadata"]["uid"]
    patched = await c.patch("configmaps", "applied", [{"op": "add", "path": "/data/b", "value": "3"}], "default",
                            patch_type="json")
    assert patched["data"] == {"a": "2", "b": "3"}
    with pytest.raises(StatusError, match="field manager"):
        await c.apply(configmap("applied"), field_manager="")
    with pytest.raises(StatusError) as err:
        await c.patch("configmaps", "applied", {}, "default", patch_type="yaml")
    assert err.value.code == 415


async def test_eviction_deletes_the_pod(env) -> None:
    c = env.client
    await c.create(pod("victim"))
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "victim", "namespace": "default"}}
    await c.create_subresource("pods", "victim", "default", "eviction", eviction)
    with pytest.raises(StatusError) as err:
        await c.get("pods", "victim", "default")
    assert is_not_found(err.value)
