"""CustomResourceDefinitions through the API server's one door: the CRD's own validation, watches and
selectors on custom objects, RBAC on the group, conflicting names, and a restart that keeps them."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from crd_env import FIXTURES, close_api, established, handle, open_api

from kconsole.api.types import Credentials, Request, Response, UserInfo
from kconsole.client import Client
from kconsole.clock import VirtualClock

CRD: dict[str, Any] = yaml.safe_load((FIXTURES / "crd.yaml").read_text())


def widget(name: str, size: Any = 2, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": name, "labels": labels}, "spec": {"size": size}}


async def test_crd_validation_names_the_fields(tmp_path: Path) -> None:
    clock = VirtualClock()
    api = await open_api(tmp_path, clock)
    try:
        bad = copy.deepcopy(CRD)
        bad["metadata"]["name"] = "widget.example.com"
        bad["spec"]["group"] = "example"
        bad["spec"]["scope"] = "Global"
        bad["spec"]["versions"].append({"name": "v2", "served": True, "storage": True,
                                        "schema": {"openAPIV3Schema": {"type": "object"}}})
        resp = await handle(api, "create", "crd", body=bad)
        assert resp.code == 422
        message = resp.body["message"]
        assert message.startswith('CustomResourceDefinition.apiextensions.k8s.io "widget.example.com" is invalid: '
                                  '[metadata.name: Invalid value: "widget.example.com": must be '
                                  'spec.names.plural+"."+spec.group')
        assert 'spec.group: Invalid value: "example": should be a domain with at least one dot' in message
        assert 'spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"' in message
        assert "must have exactly one version marked as storage version" in message
        no_schema = copy.deepcopy(CRD)
        del no_schema["spec"]["versions"][0]["schema"]
        resp = await handle(api, "create", "crd", body=no_schema)
        assert "spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required" in resp.body["message"]
        assert api.registry.get("example.com", "widgets") is None  # nothing half-written
    finally:
        await close_api(api)


async def test_objects_watch_selectors_and_rbac(tmp_path: Path) -> None:
    clock = VirtualClock()
    api = await open_api(tmp_path, clock)
    try:
        await established(api, clock, CRD)
        watch = await api.handle(Request("watch", "widgets", group="example.com", namespace="default",
                                         resource_version="0",
                                         credentials=Credentials(token=api.tokens.issue(
                                             UserInfo("admin", ("system:masters",))))))
        for name, tier in (("a", "front"), ("b", "back")):
            resp = await handle(api, "create", "widgets", group="example.com", namespace="default",
                                body=widget(name, tier=tier))
            assert resp.code == 201, resp.body
        events = []
        async for event in watch:  # type: ignore[union-attr]
            events.append((event["type"], event["object"]["metadata"]["name"]))
            if len(events) == 2:
                break
        await watch.close()  # type: ignore[union-attr]
        assert events == [("ADDED", "a"), ("ADDED", "b")]
        listed = await handle(api, "list", "wg", namespace="default", label_selector="tier=back")
        assert [o["metadata"]["name"] for o in listed.body["items"]] == ["b"]
        listed = await handle(api, "list", "widgets", group="example.com", field_selector="metadata.name=a")
        assert [o["metadata"]["name"] for o in listed.body["items"]] == ["a"]
        assert listed.body["kind"] == "WidgetList"
        stale = (await handle(api, "get", "widgets", group="example.com", namespace="default", name="a")).body
        await handle(api, "update", "widgets", group="example.com", namespace="default", name="a",
                     body={**stale, "spec": {"size": 5}})
        conflict = await handle(api, "update", "widgets", group="example.com", namespace="default", name="a",
                                body={**stale, "spec": {"size": 6}})
        assert conflict.code == 409
        with_status = await handle(api, "create", "widgets", group="example.com", namespace="default",
                                   body={**widget("s"), "status": {"replicas": 5}})
        assert with_status.code == 201 and "status" not in with_status.body  # /status is the only way in
        applied = await handle(api, "patch", "widgets", group="example.com", namespace="default", name="t",
                               patch_type="apply", field_manager="me", body={**widget("t"), "status": {"replicas": 5}})
        assert applied.code == 201 and "status" not in applied.body  # apply never sets status (apply.py)
        dry = await handle(api, "create", "widgets", group="example.com", namespace="default",
                           body=widget("c"), dry_run=True)
        assert dry.code == 201
        assert (await handle(api, "get", "widgets", group="example.com", namespace="default", name="c")).code == 404

        carol = Credentials(token=api.tokens.issue(UserInfo("carol")))
        denied = await api.handle(Request("list", "widgets", group="example.com", namespace="default",
                                          credentials=carol))
        assert isinstance(denied, Response) and denied.code == 403
        assert 'cannot list resource "widgets" in API group "example.com"' in denied.body["message"]
        await handle(api, "create", "roles", group="rbac.authorization.k8s.io", namespace="default", body={
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "widget-reader"},
            "rules": [{"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["list"]}]})
        await handle(api, "create", "rolebindings", group="rbac.authorization.k8s.io", namespace="default", body={
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "carol"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "widget-reader"},
            "subjects": [{"kind": "User", "name": "carol", "apiGroup": "rbac.authorization.k8s.io"}]})
        for _ in range(20):
            allowed = await api.handle(Request("list", "widgets", group="example.com", namespace="default",
                                               credentials=carol))
            if isinstance(allowed, Response) and allowed.ok:
                break
            await clock.advance(0.01)
        assert isinstance(allowed, Response) and allowed.code == 200 and len(allowed.body["items"]) == 4
    finally:
        await close_api(api)


async def test_conflicting_names_are_not_accepted(tmp_path: Path) -> None:
    clock = VirtualClock()
    api = await open_api(tmp_path, clock)
    try:
        await established(api, clock, CRD)
        rival = copy.deepcopy(CRD)
        rival["metadata"]["name"] = "gadgets.example.com"
        rival["spec"]["names"] = {"plural": "gadgets", "singular": "gadget", "kind": "Widget"}
        resp = await handle(api, "create", "crd", body=rival)
        assert resp.code == 201
        for _ in range(50):
            got = (await handle(api, "get", "crd", name="gadgets.example.com")).body
            conditions = {c["type"]: c for c in (got.get("status") or {}).get("conditions") or ()}
            if "NamesAccepted" in conditions:
                break
            await clock.advance(0.01)
        assert conditions["NamesAccepted"]["status"] == "False"
        assert conditions["NamesAccepted"]["reason"] == "KindConflict"
        assert conditions["NamesAccepted"]["message"] == '"Widget" is already in use'
        assert conditions["Established"]["status"] == "False"
        assert api.registry.get("example.com", "gadgets") is None
    finally:
        await close_api(api)


async def test_crds_and_their_objects_survive_a_restart(tmp_path: Path) -> None:
    clock = VirtualClock()
    api = await open_api(tmp_path, clock)
    await established(api, clock, CRD)
    resp = await handle(api, "create", "widgets", group="example.com", namespace="default", body=widget("kept", 7))
    assert resp.code == 201
    await close_api(api)

    api = await open_api(tmp_path, clock)
    try:
        got = await handle(api, "get", "widgets", group="example.com", namespace="default", name="kept")
        assert got.code == 200 and got.body["spec"] == {"size": 7, "color": "blue", "replicas": 1}
        bad = await handle(api, "create", "widgets", group="example.com", namespace="default", body=widget("x", 0))
        assert bad.code == 422
        assert bad.body["message"] == ('Widget.example.com "x" is invalid: spec.size: Invalid value: 0: spec.size in '
                                       'body should be greater than or equal to 1')
        assert {i.resource for i in api.resources() if i.group == "example.com"} == {"widgets"}
    finally:
        await close_api(api)


async def test_generation_of_a_kind_without_status_subresource_counts_status(tmp_path: Path) -> None:
    clock = VirtualClock()
    api = await open_api(tmp_path, clock)
    try:
        plain = copy.deepcopy(CRD)
        del plain["spec"]["versions"][0]["subresources"]
        await established(api, clock, plain)
        created = (await handle(api, "create", "widgets", group="example.com", namespace="default",
                                body={**widget("g"), "status": {"replicas": 1}})).body
        assert created["status"] == {"replicas": 1}  # no /status: the main resource carries it
        updated = await handle(api, "update", "widgets", group="example.com", namespace="default", name="g",
                               body={**created, "status": {"replicas": 2}})
        assert updated.body["metadata"]["generation"] == 2
        same = await handle(api, "update", "widgets", group="example.com", namespace="default", name="g",
                            body={**updated.body, "metadata": {**updated.body["metadata"], "labels": {"a": "b"}}})
        assert same.body["metadata"]["generation"] == 2  # metadata alone does not move it
    finally:
        await close_api(api)


async def test_a_client_sees_a_crd_recreated_with_another_scope_and_version(tmp_path: Path) -> None:
    clock = VirtualClock()
    api = await open_api(tmp_path, clock)
    try:
        client = Client(api, api.tokens.issue(UserInfo("admin", ("system:masters",))), clock)
        await established(api, clock, CRD)
        before = client.resource_info("widgets.example.com")
        assert (before.namespaced, before.version) == (True, "v1")
        await client.delete("customresourcedefinitions", CRD["metadata"]["name"])
        for _ in range(50):
            if api.registry.get("example.com", "widgets") is None:
                break
            await clock.advance(0.01)
        again = copy.deepcopy(CRD)
        again["spec"]["scope"] = "Cluster"
        again["spec"]["versions"][0]["name"] = "v2"
        await established(api, clock, again)
        after = client.resource_info("widgets.example.com")
        assert (after.namespaced, after.version) == (False, "v2")
        made = await client.create({"apiVersion": "example.com/v2", "kind": "Widget",
                                    "metadata": {"name": "w"}, "spec": {"size": 2}})
        assert "namespace" not in made["metadata"]
    finally:
        await close_api(api)
