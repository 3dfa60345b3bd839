"""A custom kind's openAPIV3Schema on writes, through the API: each keyword's refusal in upstream's
words, pruning (kept under preserve-unknown-fields and additionalProperties), defaults and nullable."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from crd_env import close_api, established, handle, open_api

from kconsole.clock import VirtualClock

SCHEMA = {"type": "object", "properties": {"spec": {"type": "object", "required": ["mode"], "properties": {
    "mode": {"type": "string", "enum": ["fast", "slow"]},
    "port": {"x-kubernetes-int-or-string": True},
    "ratio": {"type": "number", "minimum": 0, "exclusiveMaximum": True, "maximum": 1},
    "tags": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string", "minLength": 2}},
    "env": {"type": "object", "additionalProperties": {"type": "integer"}},
    "note": {"type": "string", "nullable": True},
    "owner": {"type": "string", "default": "nobody"},
    "nested": {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}}},
    "blob": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
}}}}
CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "metadata": {"name": "probes.test.dev"},
       "spec": {"group": "test.dev", "scope": "Namespaced", "names": {"plural": "probes", "kind": "Probe"},
                "versions": [{"name": "v1", "served": True, "storage": True,
                              "schema": {"openAPIV3Schema": SCHEMA}}]}}


def probe(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "test.dev/v1", "kind": "Probe", "metadata": {"name": name}, "spec": {"mode": "fast", **spec}}


@pytest.mark.parametrize(("spec", "message"), [
    ({"mode": "warp"}, 'spec.mode: Unsupported value: "warp": supported values: "fast", "slow"'),
    ({"port": 1.5}, 'spec.port: Invalid value: "number": spec.port in body must be of type integer,string: "number"'),
    ({"ratio": 1}, "spec.ratio: Invalid value: 1: spec.ratio in body should be less than 1"),
    ({"ratio": -0.5}, "spec.ratio: Invalid value: -0.5: spec.ratio in body should be greater than or equal to 0"),
    ({"tags": []}, "spec.tags: Invalid value: 0: spec.tags in body should have at least 1 items"),
    ({"tags": ["aa", "bb", "cc"]}, "spec.tags: Too many: 3: must have at most 2 items"),
    ({"tags": ["ok", "x"]}, 'spec.tags[1]: Invalid value: "x": spec.tags[1] in body should be at least 2 chars long'),
    ({"env": {"A": "one"}}, 'spec.env.A: Invalid value: "string": spec.env.A in body must be of type integer: '
                            '"string"'),
    ({"nested": {}}, "spec.nested.id: Required value"),
    ({"owner": None}, None),
    ({"mode": None}, 'spec.mode: Invalid value: "null": spec.mode in body must be of type string: "null"'),
])
async def test_schema_keywords(tmp_path: Path, spec: dict[str, Any], message: str | None) -> None:
    clock = VirtualClock()
    api = await open_api(tmp_path, clock)
    try:
        await established(api, clock, copy.deepcopy(CRD))
        resp = await handle(api, "create", "probes", group="test.dev", namespace="default", body=probe("p", **spec))
        if message is None:
            assert resp.code == 201 and resp.body["spec"]["owner"] == "nobody"  # null -> the default
        else:
            assert resp.code == 422, resp.body
            assert resp.body["message"] == f'Probe.test.dev "p" is invalid: {message}'
    finally:
        await close_api(api)


async def test_pruning_defaults_and_what_is_kept(tmp_path: Path) -> None:
    clock = VirtualClock()
    api = await open_api(tmp_path, clock)
    try:
        await established(api, clock, copy.deepcopy(CRD))
        resp = await handle(api, "create", "probes", group="test.dev", namespace="default", body={
            **probe("p", port="http", note=None, env={"A": 1}, blob={"any": {"thing": [1]}}, stray=1), "top": 2})
        assert resp.code == 201, resp.body
        assert resp.body["spec"] == {"mode": "fast", "port": "http", "note": None, "env": {"A": 1},
                                     "blob": {"any": {"thing": [1]}}, "owner": "nobody"}
        assert "top" not in resp.body
        assert resp.warnings == ['unknown field "spec.stray"', 'unknown field "top"']
        missing = await handle(api, "create", "probes", group="test.dev", namespace="default",
                               body={"apiVersion": "test.dev/v1", "kind": "Probe", "metadata": {"name": "q"},
                                     "spec": {}})
        assert missing.body["message"] == 'Probe.test.dev "q" is invalid: spec.mode: Required value'
    finally:
        await close_api(api)
