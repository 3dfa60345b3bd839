"""Patches by type through the pipeline: JSON patch, merge patch, strategic/apply dispatch, errors."""

from __future__ import annotations

import importlib.util

import pytest
from api_helpers import Client

from kconsole.api.patch import apply_patch, merge_patch, parse_patch
from kconsole.api.types import StatusError


async def test_json_and_merge_patches(admin: Client) -> None:
    await admin.ok("create", "configmaps", namespace="default",
                   body={"metadata": {"name": "p", "labels": {"a": "1"}}, "data": {"k": "v", "drop": "x"}})
    out = await admin.ok("patch", "configmaps", namespace="default", name="p", patch_type="json",
                         body='[{"op": "add", "path": "/data/n", "value": "1"}, {"op": "remove", "path": "/data/drop"}]')
    assert out["data"] == {"k": "v", "n": "1"}
    out = await admin.ok("patch", "configmaps", namespace="default", name="p", patch_type="merge",
                         body=b'{"metadata": {"labels": {"a": null, "b": "2"}}, "data": {"k": "w"}}')
    assert out["metadata"]["labels"] == {"b": "2"} and out["data"] == {"k": "w", "n": "1"}


async def test_patch_errors(admin: Client) -> None:
    resp = await admin.do("patch", "configmaps", namespace="default", name="missing", patch_type="merge",
                          body={"data": {}})
    assert resp.code == 404 and resp.body["message"] == 'configmaps "missing" not found'
    await admin.ok("create", "configmaps", namespace="default", body={"metadata": {"name": "q"}})
    resp = await admin.do("patch", "configmaps", namespace="default", name="q", patch_type="merge", body="{not json")
    assert resp.code == 400 and "error decoding patch" in resp.body["message"]
    resp = await admin.do("patch", "configmaps", namespace="default", name="q", patch_type="json",
                          body={"op": "add"})
    assert resp.code == 400
    assert resp.body["message"] == "json: cannot unmarshal object into Go value of type jsonpatch.Patch"
    resp = await admin.do("patch", "configmaps", namespace="default", name="q", patch_type="json",
                          body=[{"op": "test", "path": "/data/x", "value": "1"}])
    # upstream's NewGenericServerResponse(422): no cause, the same words whatever failed
    assert resp.code == 422 and resp.body["details"] == {}
    assert resp.body["message"] == "the server rejected our request due to an error in our request"
    resp = await admin.do("patch", "configmaps", namespace="default", name="q", patch_type="yaml-ish", body={})
    assert resp.code == 415


async def test_patch_carrying_stale_resource_version_conflicts(admin: Client) -> None:
    await admin.ok("create", "configmaps", namespace="default", body={"metadata": {"name": "r"}})
    resp = await admin.do("patch", "configmaps", namespace="default", name="r", patch_type="merge",
                          body={"metadata": {"resourceVersion": "1"}, "data": {"a": "b"}})
    assert resp.code == 409 and resp.body["reason"] == "Conflict"


async def test_strategic_and_apply_dispatch(admin: Client) -> None:
    await admin.ok("create", "configmaps", namespace="default", body={"metadata": {"name": "s"}, "data": {"a": "1"}})
    resp = await admin.do("patch", "configmaps", namespace="default", name="s", patch_type="strategic",
                          body={"data": {"b": "2"}})
    if importlib.util.find_spec("kconsole.api.strategicpatch") is None:
        assert resp.code == 415 and resp.body["message"] == "the patch type is not supported yet"
    else:
        assert resp.code == 200 and resp.body["data"] == {"a": "1", "b": "2"}
    resp = await admin.do("patch", "configmaps", namespace="default", name="created-by-apply", patch_type="apply",
                          field_manager="kubectl",
                          body="apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: created-by-apply\ndata:\n  x: '1'\n")
    if importlib.util.find_spec("kconsole.api.apply") is None:
        assert resp.code == 415
    else:
        assert resp.code == 201 and resp.body["data"] == {"x": "1"}


def test_merge_patch_is_rfc7386() -> None:
    assert merge_patch({"a": "b"}, {"a": "c"}) == {"a": "c"}
    assert merge_patch({"a": "b"}, {"b": "c"}) == {"a": "b", "b": "c"}
    assert merge_patch({"a": "b"}, {"a": None}) == {}
    assert merge_patch({"a": ["b"]}, {"a": "c"}) == {"a": "c"}
    assert merge_patch({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}) == {"a": {"b": "d"}}
    assert merge_patch({"e": None}, {"a": 1}) == {"e": None, "a": 1}
    assert apply_patch("merge", {"a": {"x": 1}}, {"a": {"y": 2}}, "ConfigMap") == {"a": {"x": 1, "y": 2}}


def test_parse_patch_names_the_problem() -> None:
    with pytest.raises(StatusError) as err:
        parse_patch("merge", "[1, 2]")
    assert err.value.code == 400 and "must be a JSON object" in err.value.message
    assert parse_patch("apply", "a: 1\n") == {"a": 1}
