"""Validation hands a Pod's marshalled spec to the encoder of the same write: what the store holds is
still exactly the object written, when the write goes through, when a write is refused after validation,
and when the next write's spec differs."""

from __future__ import annotations

import json
import marshal
from typing import Any

from kconsole.api import marshalled
from kconsole.api.server import APIServer
from kconsole.api.storage import encode_stored
from tests.api.api_helpers import Client, pod


async def _stored(api: APIServer, name: str) -> dict[str, Any]:
    res = await api.storage.kv.range(f"/registry/pods/default/{name}")
    return json.loads(res.kvs[0].value)


def _without_rv(obj: dict[str, Any]) -> dict[str, Any]:
    out = json.loads(json.dumps(obj))
    out["metadata"].pop("resourceVersion", None)
    return out


async def test_stored_pods_are_the_objects_written(api: APIServer, admin: Client) -> None:
    first = await admin.ok("create", "pods", namespace="default", body=pod("a", {"app": "x"}))
    assert await _stored(api, "a") == _without_rv(first)
    # Refused after validation (already exists): the bytes it left must not reach another write.
    again = await admin.do("create", "pods", namespace="default", body=pod("a", {"app": "x"}, hostname="h"))
    assert again.code == 409
    second = await admin.ok("create", "pods", namespace="default", body=pod("b", nodeName="n1"))
    assert await _stored(api, "b") == _without_rv(second)
    body = json.loads(json.dumps(second))
    body["spec"]["activeDeadlineSeconds"] = 30
    updated = await admin.ok("update", "pods", namespace="default", name="b", body=body)
    assert await _stored(api, "b") == _without_rv(updated)
    assert updated["spec"]["activeDeadlineSeconds"] == 30
    assert await _stored(api, "a") == _without_rv(first)


def test_bytes_are_taken_once_and_only_for_their_own_object() -> None:
    spec = {"containers": [{"name": "c", "image": "i"}]}
    twin = json.loads(json.dumps(spec))
    marshalled.remember(spec, b"bytes of spec")
    assert marshalled.take(twin) is None, "an equal object is not the object the bytes were made from"
    assert marshalled.take(spec) == b"bytes of spec"
    assert marshalled.take(spec) is None, "taken once"
    marshalled.remember(spec, b"bytes of spec")
    marshalled.forget()
    assert marshalled.take(spec) is None


def test_the_encoder_uses_handed_bytes_only_for_that_object() -> None:
    pod_obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
               "spec": {"containers": [{"name": "c", "image": "one"}]}}
    other = {"containers": [{"name": "c", "image": "two"}]}
    marshalled.remember(other, marshal.dumps(other))
    assert json.loads(encode_stored(pod_obj))["spec"]["containers"][0]["image"] == "one"
    marshalled.forget()


async def test_creates_of_one_template_keep_their_own_managers(api: APIServer, admin: Client) -> None:
    made = []
    for name, manager in (("m1", "alpha"), ("m2", "beta"), ("m3", "alpha")):
        made.append(await admin.ok("create", "pods", namespace="default", body=pod(name, {"app": "x"}),
                                   field_manager=manager))
    made.append(await admin.ok("create", "pods", namespace="default", body=pod("m4", {"app": "y", "v": "2"}),
                               field_manager="alpha"))
    for obj, manager in zip(made, ("alpha", "beta", "alpha", "alpha")):
        stored = await _stored(api, obj["metadata"]["name"])
        assert stored == _without_rv(obj)
        assert [e["manager"] for e in stored["metadata"]["managedFields"]] == [manager]
    assert "f:v" in json.dumps((await _stored(api, "m4"))["metadata"]["managedFields"])
    assert "f:v" not in json.dumps((await _stored(api, "m3"))["metadata"]["managedFields"])


async def test_an_in_process_create_leaves_the_callers_body_alone(api: APIServer, admin: Client) -> None:
    body = pod("keep", {"app": "x"})
    sent = json.loads(json.dumps(body))
    for name in ("keep", "keep-2"):
        body["metadata"]["name"] = sent["metadata"]["name"] = name
        created = await admin.ok("create", "pods", namespace="default", body=body)
        assert body == sent, "defaulting worked on a copy"
        assert created["spec"]["containers"][0]["terminationMessagePath"] == "/dev/termination-log"
        assert list(created) == ["apiVersion", "kind", "metadata", "spec", "status"]
        assert await _stored(api, name) == _without_rv(created)


async def test_answers_share_managed_fields_that_no_later_write_changes(api: APIServer, admin: Client) -> None:
    first = await admin.ok("create", "pods", namespace="default", body=pod("s1", {"app": "x"}), field_manager="m")
    second = await admin.ok("create", "pods", namespace="default", body=pod("s2", {"app": "x"}), field_manager="m")
    entries = json.loads(json.dumps(second["metadata"]["managedFields"]))
    assert first["metadata"]["managedFields"] == entries
    # The usual client pattern: change an answer and send it back, by another manager, taking a field
    # the creator owned (its entry loses it: built anew, not changed in place).
    first["metadata"]["labels"]["app"] = "web"
    updated = await admin.ok("update", "pods", namespace="default", name="s1", body=first, field_manager="other")
    assert [e["manager"] for e in updated["metadata"]["managedFields"]] == ["m", "other"]  # one time: by manager
    patched = await admin.ok("patch", "pods", namespace="default", name="s2", patch_type="merge",
                             body={"metadata": {"labels": {"app": "db"}}}, field_manager="third")
    assert [e["manager"] for e in patched["metadata"]["managedFields"]] == ["m", "third"]
    assert "f:app" not in json.dumps(updated["metadata"]["managedFields"][0])
    assert second["metadata"]["managedFields"] == entries and "f:app" in json.dumps(entries)
    third = await admin.ok("create", "pods", namespace="default", body=pod("s3", {"app": "x"}), field_manager="m")
    assert third["metadata"]["managedFields"] in (entries, [{**entries[0], "time": third["metadata"]["creationTimestamp"]}])
    assert (await _stored(api, "s3"))["metadata"]["managedFields"] == third["metadata"]["managedFields"]


class _Tagging:
    """A mutating plugin that changes the spec in place and declares nothing."""

    name = "Tagging"

    def admit(self, ctx: Any, obj: Any, old: Any) -> None:
        obj["spec"]["containers"][0]["image"] += "-tagged"


async def test_a_lent_spec_comes_back_untouched_whatever_admission_does(api: APIServer, admin: Client) -> None:
    # A template no earlier create had (defaulting works afresh), then the same again (remembered).
    body = pod("fresh-1", {"app": "x"}, containers=[{"name": "c", "image": f"img-{id(api)}"}])
    sent = json.loads(json.dumps(body))
    for name in ("fresh-1", "fresh-2"):
        body["metadata"]["name"] = sent["metadata"]["name"] = name
        created = await admin.ok("create", "pods", namespace="default", body=body)
        assert body == sent
        assert created["spec"]["containers"][0]["imagePullPolicy"] == "Always"  # untagged: latest
        assert created["spec"] is not body["spec"]
    # A plugin that changes specs ahead of defaulting: the body is copied whole, as for any kind.
    api.mutating = [_Tagging(), *api.mutating]
    body["metadata"]["name"] = sent["metadata"]["name"] = "fresh-3"
    created = await admin.ok("create", "pods", namespace="default", body=body)
    assert body == sent
    assert created["spec"]["containers"][0]["image"] == f"img-{id(api)}-tagged"
    assert await _stored(api, "fresh-3") == _without_rv(created)


async def test_an_answer_and_the_callers_body_share_no_metadata(api: APIServer, admin: Client) -> None:
    body = pod("own-meta", {"app": "x"})
    meta = body["metadata"]
    meta["annotations"] = {"note": "a"}
    meta["finalizers"] = ["example.com/keep"]
    meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "u-1"}]
    sent = json.loads(json.dumps(body))
    created = await admin.ok("create", "pods", namespace="default", body=body)
    answered = json.loads(json.dumps(created))
    meta["labels"]["app"] = "changed"
    meta["annotations"]["note"] = "changed"
    meta["finalizers"].append("example.com/more")
    meta["ownerReferences"][0]["name"] = "changed"
    assert created == answered
    created["metadata"]["labels"]["extra"] = "1"
    created["metadata"]["ownerReferences"][0]["uid"] = "u-2"
    meta["labels"]["app"], meta["annotations"]["note"] = "x", "a"
    meta["finalizers"].pop()
    meta["ownerReferences"][0]["name"] = "owner"
    assert body == sent
