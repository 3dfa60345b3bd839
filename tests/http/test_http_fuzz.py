"""Property: whatever a client sends as a body (an object with any field of any JSON type, as JSON or
YAML; a merge, strategic, JSON or apply patch; DeleteOptions), the answer is never a 5xx, and a
refused request stores nothing. Over the real HTTP front, with hypothesis' derandomized search."""

from __future__ import annotations

import asyncio
import copy
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from http_env import Cluster, start_cluster, stop_cluster

BASES: dict[str, dict[str, Any]] = {
    "/api/v1/namespaces/default/configmaps": {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "base", "labels": {"app": "x"}},
        "data": {"a": "b"}, "binaryData": {"c": "ZA=="}},
    "/api/v1/namespaces/default/secrets": {
        "apiVersion": "v1", "kind": "Secret", "metadata": {"name": "base"}, "type": "Opaque",
        "data": {"a": "Yg=="}, "stringData": {"s": "t"}},
    "/api/v1/namespaces/default/pods": {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "base", "annotations": {"a": "b"}},
        "spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}],
                                 "volumeMounts": [{"name": "v", "mountPath": "/v"}]}],
                 "volumes": [{"name": "v", "emptyDir": {}}], "automountServiceAccountToken": False}},
    "/apis/apps/v1/namespaces/default/deployments": {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "base"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "d"}},
                 "template": {"metadata": {"labels": {"app": "d"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}],
                                       "volumes": [{"name": "v", "configMap": {"name": "base"}}]}}}},
    "/api/v1/namespaces/default/services": {
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "base"},
        "spec": {"selector": {"app": "d"}, "ports": [{"port": 80, "targetPort": 8080}]}},
}
COLLECTIONS = sorted(BASES)

_scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**40, 2**40), st.floats(allow_nan=False, allow_infinity=False),
                     st.text(max_size=6), st.sampled_from(["\ud800", "abc", "", "1", "true", "-1", "1.5"]))
_values = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                         st.dictionaries(st.text(max_size=5), inner, max_size=3)),
                       max_leaves=8)
#: Keys a mutation may use: the object's own, and well-known fields of other kinds.
_KEYS = ["metadata", "data", "binaryData", "stringData", "managedFields", "labels", "annotations", "name",
         "ownerReferences", "finalizers", "spec", "volumes", "containers", "ports", "template", "selector",
         "replicas", "status", "type", "image", "env", "resources", "0", "-"]


def _paths(value: Any, prefix: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, prefix + (i,))
    return out


def _set(obj: Any, path: tuple[str | int, ...], value: Any) -> Any:
    """``obj`` with ``path`` set to ``value`` (creating maps on the way); the root stays a map."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(obj, list) and isinstance(head, int) and head < len(obj):
        out_list = list(obj)
        out_list[head] = _set(obj[head], rest, value)
        return out_list
    out = dict(obj) if isinstance(obj, dict) else {}
    out[str(head)] = _set(out.get(str(head)), rest, value)
    return out


@st.composite
def _mutations(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """A collection, and its base object with one to three fields set to arbitrary JSON values."""
    collection = draw(st.sampled_from(COLLECTIONS))
    obj = copy.deepcopy(BASES[collection])
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(obj) if p]
        path = draw(st.sampled_from(paths))
        if draw(st.booleans()):
            path = path + (draw(st.sampled_from(_KEYS)),)
        obj = _set(obj, path, draw(_values))
    return collection, obj


def _pointer(path: tuple[str | int, ...]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


@st.composite
def _json_patches(draw: st.DrawFn, base: dict[str, Any]) -> list[Any]:
    ops = []
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(base)))
        if draw(st.booleans()):
            path = path + (draw(st.sampled_from(_KEYS)),)
        op: dict[str, Any] = {"op": draw(st.sampled_from(["add", "replace", "remove", "test", "move", "copy",
                                                          "bogus"])),
                              "path": _pointer(path)}
        if draw(st.booleans()):
            op["value"] = draw(_values)
        if op["op"] in ("move", "copy"):
            op["from"] = _pointer(draw(st.sampled_from(_paths(base))))
        if draw(st.integers(0, 9)) == 0:
            op = draw(_values)  # not an operation at all
        ops.append(op)
    return ops


_delete_options = st.fixed_dictionaries({}, optional={
    "kind": st.sampled_from(["DeleteOptions", "Pod", 1]), "apiVersion": st.sampled_from(["v1", 2]),
    "gracePeriodSeconds": st.one_of(st.integers(-5, 100), st.just("abc"), st.just([1])),
    "preconditions": st.one_of(st.just([1, 2]), st.dictionaries(st.sampled_from(["uid", "resourceVersion"]),
                                                                 _scalars, max_size=2)),
    "propagationPolicy": st.one_of(st.sampled_from(["Orphan", "Background", "Foreground", "Sideways"]), _values),
    "orphanDependents": _values, "dryRun": st.one_of(st.just(["All"]), _values)})


@dataclass
class Served:
    loop: asyncio.AbstractEventLoop
    cluster: Cluster
    session: aiohttp.ClientSession

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    async def request(self, method: str, path: str, body: bytes, content_type: str) -> tuple[int, Any]:
        async with self.session.request(method, path, data=body, headers={"Content-Type": content_type}) as r:
            text = await r.text()
            return r.status, text

    async def stored(self, collection: str, name: str) -> str | None:
        """The object's resourceVersion, None when it does not exist."""
        async with self.session.get(f"{collection}/{name}") as r:
            if r.status == 404:
                return None
            assert r.status == 200, await r.text()
            return str((await r.json())["metadata"]["resourceVersion"])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    loop = asyncio.new_event_loop()
    cluster = loop.run_until_complete(start_cluster(Path(tmp_path_factory.mktemp("fuzz")), tls=False))

    async def open_session() -> aiohttp.ClientSession:
        return aiohttp.ClientSession(cluster.front.url,
                                     headers={"Authorization": f"Bearer {cluster.front.admin_token}"})

    session = loop.run_until_complete(open_session())
    try:
        s = Served(loop, cluster, session)
        for collection, base in BASES.items():
            code, text = s.run(s.request("POST", collection, json.dumps(base).encode(), "application/json"))
            assert code == 201, text
        yield s
    finally:
        loop.run_until_complete(session.close())
        loop.run_until_complete(stop_cluster(cluster))
        loop.close()


def _check(code: int, text: str, what: str) -> None:
    assert code < 500, f"{what} -> {code}: {text[:400]}"


_FUZZ = settings(max_examples=int(os.environ.get("FUZZ_N", "150")), deadline=None, derandomize=not os.environ.get("FUZZ_N"),
                 suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@_FUZZ
@given(mutation=_mutations(), as_yaml=st.booleans(), n=st.integers(0, 10**6))
def test_any_body_creates_or_is_refused_and_nothing_is_stored(served: Served, mutation: tuple[str, Any],
                                                              as_yaml: bool, n: int) -> None:
    collection, obj = mutation
    name = f"fuzz-{n}"
    if isinstance(obj.get("metadata"), dict):
        obj["metadata"] = {**obj["metadata"], "name": name}
    text = json.dumps(obj)
    if as_yaml:
        try:
            text = yaml.safe_dump(obj)
        except yaml.YAMLError:
            pass
    body, content_type = text.encode(errors="surrogatepass"), "application/yaml" if as_yaml else "application/json"
    if b"\xed" in body:  # a surrogate YAML could not escape: send the JSON spelling
        body, content_type = json.dumps(obj).encode(), "application/json"
    before = served.run(served.stored(collection, name))
    code, answer = served.run(served.request("POST", collection, body, content_type))
    _check(code, answer, f"POST {collection} {text[:300]}")
    if code >= 400:
        assert served.run(served.stored(collection, name)) == before, f"{code} but stored: {text[:300]}"
    elif before is None:
        served.run(served.request("DELETE", f"{collection}/{name}", b"", "application/json"))


@_FUZZ
@given(mutation=_mutations(), kind=st.sampled_from(["update", "merge", "strategic", "apply"]))
def test_any_update_or_patch_is_applied_or_refused_without_a_trace(served: Served, mutation: tuple[str, Any],
                                                                   kind: str) -> None:
    collection, obj = mutation
    path = f"{collection}/base"
    before = served.run(served.stored(collection, "base"))
    if kind == "update":
        method, content_type, body = "PUT", "application/json", json.dumps(obj)
    elif kind == "apply":
        method, content_type, body = "PATCH", "application/apply-patch+yaml", json.dumps(obj)
        path += "?fieldManager=fuzz&force=true"
    else:
        method, content_type = "PATCH", f"application/{kind}-patch+json".replace("strategic-patch", "strategic-merge-patch")
        body = json.dumps({k: v for k, v in obj.items() if k not in ("apiVersion", "kind")})
    code, answer = served.run(served.request(method, path, body.encode(), content_type))
    _check(code, answer, f"{kind} {collection} {body[:300]}")
    if code >= 400:
        assert served.run(served.stored(collection, "base")) == before, f"{code} but stored: {body[:300]}"


@_FUZZ
@given(data=st.data(), collection=st.sampled_from(COLLECTIONS))
def test_any_json_patch_is_applied_or_refused_without_a_trace(served: Served, data: st.DataObject,
                                                              collection: str) -> None:
    base = BASES[collection]
    ops = data.draw(_json_patches(base))
    before = served.run(served.stored(collection, "base"))
    body = json.dumps(ops)
    code, answer = served.run(served.request("PATCH", f"{collection}/base", body.encode(),
                                             "application/json-patch+json"))
    _check(code, answer, f"json patch {collection} {body[:300]}")
    if code >= 400:
        assert served.run(served.stored(collection, "base")) == before, f"{code} but stored: {body[:300]}"


@_FUZZ
@given(options=_delete_options, collection=st.sampled_from(COLLECTIONS))
def test_any_delete_options_are_understood_or_refused(served: Served, options: dict[str, Any],
                                                      collection: str) -> None:
    body = json.dumps(options)
    code, answer = served.run(served.request("DELETE", f"{collection}/absent", body.encode(), "application/json"))
    _check(code, answer, f"DELETE {collection} {body}")
    assert code in (400, 404, 422), f"{code}: {answer[:300]}"


SUBRESOURCE_BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("PUT", "/apis/apps/v1/namespaces/default/deployments/base/scale"): {
        "apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "base"}, "spec": {"replicas": 1}},
    ("POST", "/api/v1/namespaces/default/pods/absent/eviction"): {
        "apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "absent"},
        "deleteOptions": {"gracePeriodSeconds": 0}},
    ("POST", "/api/v1/namespaces/default/pods/absent/binding"): {
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "absent"}, "target": {"kind": "Node", "name": "n"}},
    ("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"): {
        "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "default"}}},
    ("POST", "/api/v1/namespaces/default/serviceaccounts/default/token"): {
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}},
}


@st.composite
def _subresource_bodies(draw: st.DrawFn) -> tuple[tuple[str, str], Any]:
    target = draw(st.sampled_from(sorted(SUBRESOURCE_BODIES)))
    obj: Any = copy.deepcopy(SUBRESOURCE_BODIES[target])
    for _ in range(draw(st.integers(1, 2))):
        path = draw(st.sampled_from([p for p in _paths(obj) if p]))
        if draw(st.booleans()):
            path = path + (draw(st.sampled_from(_KEYS)),)
        obj = _set(obj, path, draw(_values))
    return target, obj


@_FUZZ
@given(case=_subresource_bodies(), patch=st.booleans())
def test_any_subresource_or_review_body_is_understood_or_refused(served: Served, case: tuple[tuple[str, str], Any],
                                                                 patch: bool) -> None:
    (method, path), obj = case
    content_type = "application/json"
    if patch and path.endswith("/scale"):
        method, content_type = "PATCH", "application/merge-patch+json"
    before = served.run(served.stored("/apis/apps/v1/namespaces/default/deployments", "base"))
    code, answer = served.run(served.request(method, path, json.dumps(obj).encode(), content_type))
    _check(code, answer, f"{method} {path} {json.dumps(obj)[:300]}")
    if code >= 400:
        assert served.run(served.stored("/apis/apps/v1/namespaces/default/deployments", "base")) == before
