"""What the write path keeps between requests and what it leaves alone: the globalDefault PriorityClass
follows the classes as they change, and an in-process update never touches the caller's body."""

from __future__ import annotations

import copy

from tests.api.api_helpers import Client, pod


async def _priority_of_new_pod(admin: Client, name: str) -> tuple[int, str | None]:
    await admin.ok("list", "priorityclasses")  # the classes' cache holds every acknowledged write
    created = await admin.ok("create", "pods", namespace="default", body=pod(name))
    return created["spec"]["priority"], created["spec"].get("priorityClassName")


async def test_the_global_default_priority_class_follows_its_changes(admin: Client) -> None:
    assert await _priority_of_new_pod(admin, "a") == (0, None)
    await admin.ok("create", "priorityclasses", body={
        "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "normal"},
        "value": 50, "globalDefault": True})
    assert await _priority_of_new_pod(admin, "b") == (50, "normal")
    low = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "low"},
           "value": 10, "globalDefault": True}
    refused = await admin.do("create", "priorityclasses", body=low)
    assert refused.code == 403  # one default at a time
    normal = await admin.ok("get", "priorityclasses", name="normal")
    normal["globalDefault"] = False
    await admin.ok("update", "priorityclasses", name="normal", body=normal)
    await admin.ok("create", "priorityclasses", body=low)
    assert await _priority_of_new_pod(admin, "c") == (10, "low")
    await admin.ok("delete", "priorityclasses", name="low")
    await admin.ok("delete", "priorityclasses", name="normal")
    assert await _priority_of_new_pod(admin, "d") == (0, None)


async def test_an_update_leaves_the_callers_body_alone(admin: Client) -> None:
    created = await admin.ok("create", "pods", namespace="default", body=pod("web", {"app": "web"}))
    body = copy.deepcopy(created)
    body["metadata"]["labels"]["tier"] = "front"
    sent = copy.deepcopy(body)
    updated = await admin.ok("update", "pods", namespace="default", name="web", body=body)
    assert body == sent
    assert updated["metadata"]["labels"] == {"app": "web", "tier": "front"}
    assert updated is not body and updated["metadata"] is not body["metadata"]
    updated["metadata"]["labels"]["tier"] = "changed"
    got = await admin.ok("get", "pods", namespace="default", name="web")
    assert got["metadata"]["labels"] == {"app": "web", "tier": "front"}
    stale = copy.deepcopy(created)
    stale["metadata"]["labels"]["tier"] = "back"
    resp = await admin.do("update", "pods", namespace="default", name="web", body=stale)
    assert resp.code == 409
    assert stale["metadata"]["labels"] == {"app": "web", "tier": "back"}
