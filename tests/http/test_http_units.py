"""Pure pieces of the HTTP area: protobuf wire decoding, strategic merge patch, server-side apply,
printers and URL routing."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kconsole.api.apply import server_side_apply, track_update
from kconsole.api.strategicpatch import apply_strategic_patch
from kconsole.api.types import StatusError
from kconsole.http import protobuf, rest
from kconsole.objects.printers import human_duration, printer_for


def _varint(n: int) -> bytes:
    out = b""
    n &= (1 << 64) - 1
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def _field(num: int, value: bytes | int) -> bytes:
    if isinstance(value, int):
        return _varint(num << 3) + _varint(value)
    return _varint(num << 3 | 2) + _varint(len(value)) + value


def _unknown(api_version: str, kind: str, raw: bytes) -> bytes:
    type_meta = _field(1, api_version.encode()) + _field(2, kind.encode())
    return protobuf.MAGIC + _field(1, type_meta) + _field(2, raw)


def test_protobuf_decodes_maps_pointers_inline_and_intorstring() -> None:
    meta = _field(1, b"web") + _field(11, _field(1, b"app") + _field(2, b"web")) + _field(8, b"")
    port = _field(3, 80) + _field(4, b"TCP")
    container = _field(1, b"web") + _field(2, b"nginx") + _field(6, port) + _field(16, 0)
    spec = _field(1, 0) + _field(3, _field(1, meta) + _field(2, _field(2, container)))
    strategy = _field(2, _field(1, _field(1, 1) + _field(3, b"25%")) + _field(2, _field(2, 1)))
    body = _unknown("apps/v1", "Deployment", _field(1, meta) + _field(2, spec + _field(4, strategy)))
    obj = protobuf.decode(body)
    assert obj["metadata"] == {"name": "web", "labels": {"app": "web"}}
    assert obj["spec"]["replicas"] == 0  # a pointer field keeps its explicit zero
    container_out = obj["spec"]["template"]["spec"]["containers"][0]
    assert container_out == {"name": "web", "image": "nginx", "ports": [{"containerPort": 80, "protocol": "TCP"}]}
    assert obj["spec"]["strategy"]["rollingUpdate"] == {"maxUnavailable": "25%", "maxSurge": 1}
    volume = _field(1, b"cfg") + _field(2, _field(19, _field(1, _field(1, b"my-config"))))
    pod = protobuf.decode(_unknown("v1", "Pod", _field(2, _field(1, volume))))
    assert pod["spec"]["volumes"] == [{"name": "cfg", "configMap": {"name": "my-config"}}]
    secret = protobuf.decode(_unknown("v1", "Secret", _field(2, _field(1, b"k") + _field(2, b"\x00\xff"))))
    assert secret["data"] == {"k": "AP8="}


@pytest.mark.parametrize("body, problem", [
    (b"{}", "magic prefix"),
    (protobuf.MAGIC + b"\x0a\x05\x0a\x02v1", "runs past the end"),
    (_unknown("v1", "Widget", b""), "no protobuf decoder for kind 'Widget'"),
    (_unknown("v1", "Pod", b"\x0a\x03\xff\xfe\xfd"), "truncated varint"),
    (_unknown("v1", "ConfigMap", _field(1, _field(1, b"\xff\xfe"))), "not valid UTF-8"),
])
def test_protobuf_errors_name_the_problem(body: bytes, problem: str) -> None:
    with pytest.raises(protobuf.ProtobufError, match=problem):
        protobuf.decode(body)


@given(st.binary(max_size=200))
def test_protobuf_never_crashes_on_garbage(data: bytes) -> None:
    try:
        protobuf.decode(protobuf.MAGIC + data)
    except protobuf.ProtobufError:
        pass


def test_strategic_patch_merges_by_key_and_honours_directives() -> None:
    live = {"metadata": {"name": "web", "finalizers": ["a"]},
            "spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}},
                     "template": {"spec": {"containers": [
                         {"name": "web", "image": "nginx:1", "ports": [{"containerPort": 80}],
                          "env": [{"name": "A", "value": "1"}]},
                         {"name": "side", "image": "busybox"}],
                         "tolerations": [{"key": "x"}]}}}}
    patch = {"metadata": {"finalizers": ["b"], "$deleteFromPrimitiveList/finalizers": ["a"]},
             "spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"},
                      "template": {"spec": {"containers": [
                          {"name": "web", "image": "nginx:2", "env": [{"name": "B", "value": "2"}]},
                          {"name": "side", "$patch": "delete"}],
                          "tolerations": [{"key": "y"}]}}}}
    out = apply_strategic_patch(live, patch, "Deployment")
    assert out["metadata"]["finalizers"] == ["b"]
    assert out["spec"]["strategy"] == {"type": "Recreate"}
    spec = out["spec"]["template"]["spec"]
    # An env var the original lacked goes first, as upstream's normalizeElementOrder puts new items.
    assert spec["containers"] == [{"name": "web", "image": "nginx:2", "ports": [{"containerPort": 80}],
                                   "env": [{"name": "B", "value": "2"}, {"name": "A", "value": "1"}]}]
    assert spec["tolerations"] == [{"key": "y"}]  # no merge key: replaced
    assert live["spec"]["template"]["spec"]["containers"][1]["name"] == "side"  # original untouched
    ordered = apply_strategic_patch({"spec": {"ports": [{"port": 1}, {"port": 2}]}},
                                    {"spec": {"$setElementOrder/ports": [{"port": 2}, {"port": 1}]}}, "Service")
    assert ordered["spec"]["ports"] == [{"port": 2}, {"port": 1}]
    with pytest.raises(StatusError, match="merge key"):
        apply_strategic_patch(live, {"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}},
                              "Deployment")


def test_server_side_apply_owns_conflicts_forces_and_prunes() -> None:
    cfg = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "labels": {"a": "1"}},
           "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}
    obj = server_side_apply(None, cfg, "alice", False, "T1", "Deployment")
    fields = obj["metadata"]["managedFields"][0]["fieldsV1"]
    assert fields["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"web"}'] == \
        {".": {}, "f:image": {}, "f:name": {}}
    bob = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {"replicas": 5}}
    with pytest.raises(StatusError) as err:
        server_side_apply(obj, bob, "bob", False, "T2", "Deployment")
    assert err.value.code == 409 and err.value.causes == [
        {"reason": "FieldManagerConflict", "message": 'conflict with "alice"', "field": ".spec.replicas"}]
    same = dict(bob, spec={"replicas": 2})
    shared = server_side_apply(obj, same, "bob", False, "T2", "Deployment")
    assert {m["manager"] for m in shared["metadata"]["managedFields"]} == {"alice", "bob"}
    forced = server_side_apply(obj, bob, "bob", True, "T2", "Deployment")
    assert forced["spec"]["replicas"] == 5
    smaller = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
               "spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx:2"}]}}}}
    pruned = server_side_apply(forced, smaller, "alice", False, "T3", "Deployment")
    assert "labels" not in pruned["metadata"] and pruned["spec"]["replicas"] == 5  # bob still owns replicas
    scaled = track_update(pruned, {**pruned, "spec": {**pruned["spec"], "replicas": 7}}, "kubectl", "T4",
                          "Deployment")
    # upstream's order: Apply entries first, then Update by time
    assert [(e["manager"], e["operation"]) for e in scaled["metadata"]["managedFields"]] == \
        [("alice", "Apply"), ("kubectl", "Update")]  # bob, forced off replicas by kubectl, owns nothing
    with pytest.raises(StatusError, match='conflict with "kubectl"'):
        server_side_apply(scaled, bob, "bob", False, "T5", "Deployment")


def test_printers_match_upstream_cells() -> None:
    assert [human_duration(s) for s in (5, 119, 185, 600, 3 * 3600 + 300, 50 * 3600, 9 * 86400, 800 * 86400)] == \
        ["5s", "119s", "3m5s", "10m", "3h5m", "2d2h", "9d", "2y70d"]
    now = 1_767_225_600.0 + 3600
    pod = {"metadata": {"name": "p", "creationTimestamp": "2026-01-01T00:00:00Z"},
           "spec": {"containers": [{"name": "a"}, {"name": "b"}], "nodeName": "n1"},
           "status": {"phase": "Running", "podIPs": [{"ip": "10.0.0.5"}], "containerStatuses": [
               {"name": "a", "ready": True, "restartCount": 2, "state": {"running": {}},
                "lastState": {"terminated": {"finishedAt": "2026-01-01T00:50:00Z"}}},
               {"name": "b", "ready": False, "restartCount": 0, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}}
    assert printer_for("pods").cells(pod, now) == ["p", "1/2", "CrashLoopBackOff", "2 (10m ago)", "60m",
                                                   "10.0.0.5", "n1", "<none>", "<none>"]
    deleting = {**pod, "metadata": {**pod["metadata"], "deletionTimestamp": "2026-01-01T01:00:00Z"}}
    assert printer_for("pods").cells(deleting, now)[2] == "Terminating"
    svc = {"metadata": {"name": "lb"}, "spec": {"type": "LoadBalancer", "clusterIP": "10.96.0.9",
                                                 "ports": [{"port": 80, "nodePort": 30001, "protocol": "TCP"}]}}
    assert printer_for("services").cells(svc, now)[1:5] == ["LoadBalancer", "10.96.0.9", "<pending>",
                                                            "80:30001/TCP"]
    assert [c.name for c in printer_for("widgets.example.com").columns] == ["Name", "Created At"]


def test_routes_match_kubectls_urls() -> None:
    r = rest.parse_path("/api/v1/namespaces/default/pods/web/log")
    assert (r.group, r.resource, r.namespace, r.name, r.subresource) == ("", "pods", "default", "web", "log")
    r = rest.parse_path("/api/v1/namespaces/team-a/status")
    assert (r.resource, r.namespace, r.name, r.subresource) == ("namespaces", None, "team-a", "status")
    r = rest.parse_path("/apis/apps/v1/watch/namespaces/x/deployments")
    assert r.watch_prefix and (r.group, r.resource, r.namespace) == ("apps", "deployments", "x")
    with pytest.raises(StatusError):
        rest.parse_path("/api/v1/namespaces/a/pods/b/log/extra")
    pods = rest.resource_route("/api/v1/namespaces/default/pods")
    assert pods is not None and (pods.resource, pods.namespace, pods.name) == ("pods", "default", None)
    assert rest.resource_route("/api/v1/namespaces/default/pods") == pods
    assert rest.resource_route("/apis/apps/v1") is None and rest.resource_route("/api") is None
    with pytest.raises(StatusError):
        rest.resource_route("/api/v1/namespaces/a/pods/b/log/extra")


@pytest.mark.parametrize(("path", "resource", "name", "proxied"), [
    ("/api/v1/namespaces/ns/services/web/proxy", "services", "web", ""),
    ("/api/v1/namespaces/ns/services/https:web:443/proxy/", "services", "https:web:443", "/"),
    ("/api/v1/namespaces/ns/pods/p:8080/proxy/a/b/", "pods", "p:8080", "/a/b/"),
    ("/api/v1/namespaces/ns/pods/p/proxy/a//b", "pods", "p", "/a//b"),
])
def test_proxy_routes_keep_the_proxied_path(path: str, resource: str, name: str, proxied: str) -> None:
    """What follows ``.../proxy`` is passed on as it is, trailing slash included (an empty one redirects)."""
    r = rest.parse_path(path)
    assert (r.resource, r.namespace, r.name, r.subresource, r.proxy_path) == (resource, "ns", name, "proxy", proxied)
    assert rest.proxied(r) and not rest.streaming_refused(r, "POST")
