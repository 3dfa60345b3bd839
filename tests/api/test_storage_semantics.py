"""Generic store semantics: generation, status isolation, graceful and finalized deletion, paging."""

from __future__ import annotations

from api_helpers import Client, pod

from kconsole.api.server import APIServer
from kconsole.clock import VirtualClock


def deployment(name: str, replicas: int = 1) -> dict:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


async def test_generation_moves_only_on_spec_changes(admin: Client) -> None:
    d = await admin.ok("create", "deployments", group="apps", namespace="default", body=deployment("web"))
    assert d["metadata"]["generation"] == 1
    d = await admin.ok("patch", "deployments", group="apps", namespace="default", name="web", patch_type="merge",
                       body={"metadata": {"labels": {"x": "y"}}})
    assert d["metadata"]["generation"] == 1
    d = await admin.ok("patch", "deployments", group="apps", namespace="default", name="web", patch_type="json",
                       body=[{"op": "replace", "path": "/spec/replicas", "value": 3}])
    assert d["metadata"]["generation"] == 2
    d["metadata"]["generation"] = 99  # clients cannot set it
    d = await admin.ok("update", "deployments", group="apps", namespace="default", name="web", body=d)
    assert d["metadata"]["generation"] == 2


async def test_status_subresource_isolation(admin: Client) -> None:
    await admin.ok("create", "deployments", group="apps", namespace="default", body=deployment("iso"))
    # The main resource ignores status...
    cur = await admin.ok("get", "deployments", group="apps", namespace="default", name="iso")
    cur["status"] = {"replicas": 5}
    cur["spec"]["replicas"] = 2
    out = await admin.ok("update", "deployments", group="apps", namespace="default", name="iso", body=cur)
    assert out["spec"]["replicas"] == 2 and "replicas" not in (out.get("status") or {})
    # ...and the status subresource ignores everything but status.
    out["status"] = {"replicas": 2, "readyReplicas": 1}
    out["spec"]["replicas"] = 7
    out["metadata"]["labels"] = {"sneaky": "yes"}
    st = await admin.ok("update", "deployments", group="apps", namespace="default", name="iso", subresource="status",
                        body=out)
    assert st["status"] == {"replicas": 2, "readyReplicas": 1}
    assert st["spec"]["replicas"] == 2 and "sneaky" not in (st["metadata"].get("labels") or {})
    assert st["metadata"]["generation"] == 2
    patched = await admin.ok("patch", "deployments", group="apps", namespace="default", name="iso",
                             subresource="status", patch_type="merge", body={"status": {"readyReplicas": 2}})
    assert patched["status"] == {"replicas": 2, "readyReplicas": 2}


async def test_graceful_pod_deletion_then_final_delete(admin: Client, clock: VirtualClock) -> None:
    await admin.ok("create", "pods", namespace="default", body=pod("g", nodeName="node-1"))
    marked = await admin.ok("delete", "pods", namespace="default", name="g")
    meta = marked["metadata"]
    assert meta["deletionGracePeriodSeconds"] == 30 and meta["deletionTimestamp"] == clock.rfc3339(clock.now() + 30)
    still = await admin.ok("get", "pods", namespace="default", name="g")
    assert still["metadata"]["deletionTimestamp"]
    # The kubelet confirms with grace 0 once containers stopped: gone.
    await admin.ok("delete", "pods", namespace="default", name="g", grace_period_seconds=0)
    assert (await admin.do("get", "pods", namespace="default", name="g")).code == 404


async def test_unbound_pod_is_deleted_at_once(admin: Client) -> None:
    await admin.ok("create", "pods", namespace="default", body=pod("u"))
    await admin.ok("delete", "pods", namespace="default", name="u")
    assert (await admin.do("get", "pods", namespace="default", name="u")).code == 404


async def test_finalizers_hold_deletion_until_removed(admin: Client) -> None:
    await admin.ok("create", "configmaps", namespace="default",
                   body={"metadata": {"name": "f", "finalizers": ["example.com/hold"]}})
    marked = await admin.ok("delete", "configmaps", namespace="default", name="f")
    assert marked["metadata"]["deletionTimestamp"] and marked["metadata"]["deletionGracePeriodSeconds"] == 0
    got = await admin.ok("get", "configmaps", namespace="default", name="f")
    assert got["metadata"]["finalizers"] == ["example.com/hold"]
    # Deleting again changes nothing.
    again = await admin.ok("delete", "configmaps", namespace="default", name="f")
    assert again["metadata"]["resourceVersion"] == got["metadata"]["resourceVersion"]
    await admin.ok("patch", "configmaps", namespace="default", name="f", patch_type="merge",
                   body={"metadata": {"finalizers": None}})
    assert (await admin.do("get", "configmaps", namespace="default", name="f")).code == 404


async def test_propagation_policies_add_gc_finalizers(admin: Client) -> None:
    await admin.ok("create", "deployments", group="apps", namespace="default", body=deployment("fg"))
    out = await admin.ok("delete", "deployments", group="apps", namespace="default", name="fg",
                         propagation_policy="Foreground")
    assert out["metadata"]["finalizers"] == ["foregroundDeletion"]
    await admin.ok("create", "deployments", group="apps", namespace="default", body=deployment("or"))
    out = await admin.ok("delete", "deployments", group="apps", namespace="default", name="or",
                         propagation_policy="Orphan")
    assert out["metadata"]["finalizers"] == ["orphan"]
    await admin.ok("create", "deployments", group="apps", namespace="default", body=deployment("bg"))
    await admin.ok("delete", "deployments", group="apps", namespace="default", name="bg",
                   propagation_policy="Background")
    assert (await admin.do("get", "deployments", group="apps", namespace="default", name="bg")).code == 404


async def test_delete_preconditions(admin: Client) -> None:
    cm = await admin.ok("create", "configmaps", namespace="default", body={"metadata": {"name": "p"}})
    resp = await admin.do("delete", "configmaps", namespace="default", name="p", preconditions={"uid": "nope"})
    assert resp.code == 409 and "Precondition failed: UID in precondition: nope" in resp.body["message"]
    resp = await admin.do("delete", "configmaps", namespace="default", name="p",
                          preconditions={"resourceVersion": "1"})
    assert resp.code == 409 and "ResourceVersion in precondition: 1" in resp.body["message"]
    await admin.ok("delete", "configmaps", namespace="default", name="p",
                   preconditions={"uid": cm["metadata"]["uid"]})


async def test_label_selectors_and_delete_collection(admin: Client) -> None:
    for i in range(6):
        await admin.ok("create", "configmaps", namespace="default",
                       body={"metadata": {"name": f"s{i}", "labels": {"tier": "a" if i % 2 else "b", "n": str(i)}}})
    got = await admin.ok("list", "configmaps", namespace="default", label_selector="tier=a,n notin (5)")
    assert [c["metadata"]["name"] for c in got["items"]] == ["s1", "s3"]
    await admin.ok("deletecollection", "configmaps", namespace="default", label_selector="tier=b")
    left = await admin.ok("list", "configmaps", namespace="default", label_selector="n")
    assert [c["metadata"]["name"] for c in left["items"]] == ["s1", "s3", "s5"]


async def test_limit_and_continue_pages_at_one_revision(admin: Client) -> None:
    for i in range(7):
        await admin.ok("create", "configmaps", namespace="default", body={"metadata": {"name": f"c{i}"}})
    page1 = await admin.ok("list", "configmaps", namespace="default", limit=3)
    assert [c["metadata"]["name"] for c in page1["items"]] == ["c0", "c1", "c2"]
    assert page1["metadata"]["remainingItemCount"] == 4
    token = page1["metadata"]["continue"]
    # A change after the first page does not show up in later pages (same snapshot).
    await admin.ok("create", "configmaps", namespace="default", body={"metadata": {"name": "c3a"}})
    page2 = await admin.ok("list", "configmaps", namespace="default", limit=3, continue_=token)
    assert [c["metadata"]["name"] for c in page2["items"]] == ["c3", "c4", "c5"]
    assert page2["metadata"]["resourceVersion"] == page1["metadata"]["resourceVersion"]
    page3 = await admin.ok("list", "configmaps", namespace="default", limit=3, continue_=page2["metadata"]["continue"])
    assert [c["metadata"]["name"] for c in page3["items"]] == ["c6"]
    assert "continue" not in page3["metadata"]


async def test_paging_with_a_selector_fills_pages(admin: Client) -> None:
    for i in range(10):
        await admin.ok("create", "configmaps", namespace="default",
                       body={"metadata": {"name": f"p{i}", "labels": {"odd": str(i % 2)}}})
    names, token = [], None
    while True:
        page = await admin.ok("list", "configmaps", namespace="default", limit=2, label_selector="odd=1",
                              continue_=token)
        names += [c["metadata"]["name"] for c in page["items"]]
        token = page["metadata"].get("continue")
        if not token:
            break
    assert names == ["p1", "p3", "p5", "p7", "p9"]


async def test_expired_continue_after_compaction_is_410(api: APIServer, admin: Client) -> None:
    for i in range(4):
        await admin.ok("create", "configmaps", namespace="default", body={"metadata": {"name": f"e{i}"}})
    page1 = await admin.ok("list", "configmaps", namespace="default", limit=2)
    await admin.ok("create", "configmaps", namespace="default", body={"metadata": {"name": "later"}})
    await api.kv.compact(api.kv.revision)
    resp = await admin.do("list", "configmaps", namespace="default", limit=2, continue_=page1["metadata"]["continue"])
    assert resp.code == 410 and resp.body["reason"] == "Expired"
    assert resp.body["message"].startswith("The provided continue parameter is too old")
    bad = await admin.do("list", "configmaps", namespace="default", limit=2, continue_="!!garbage")
    assert bad.code == 400 and bad.body["message"] == ("invalid continue token: continue key is not valid: illegal "
                                                       "base64 data at input byte 0")
    garbled = await admin.do("list", "configmaps", namespace="default", limit=2, continue_="bm90IGpzb24")
    assert garbled.body["message"] == ("invalid continue token: continue key is not valid: invalid character 'n' "
                                       "looking for beginning of value")  # Go's words, not Python's


async def test_exact_resource_version_list_reads_the_past(admin: Client) -> None:
    await admin.ok("create", "configmaps", namespace="default", body={"metadata": {"name": "old"}})
    then = await admin.ok("list", "configmaps", namespace="default")
    await admin.ok("create", "configmaps", namespace="default", body={"metadata": {"name": "new"}})
    past = await admin.ok("list", "configmaps", namespace="default",
                          resource_version=then["metadata"]["resourceVersion"], resource_version_match="Exact")
    assert [c["metadata"]["name"] for c in past["items"]] == ["old"]
    now = await admin.ok("list", "configmaps", namespace="default", resource_version="0")
    assert [c["metadata"]["name"] for c in now["items"]] == ["new", "old"]


async def test_secrets_pass_through_the_transformer(tmp_path, clock: VirtualClock) -> None:
    from kconsole.api.types import Credentials, Request, UserInfo
    from kconsole.store.revlog import RevisionLog

    class Reverse:
        def to_storage(self, data: bytes, key: str) -> bytes:
            return b"k8s:rev:" + data[::-1]

        def from_storage(self, data: bytes, key: str) -> bytes:
            assert data.startswith(b"k8s:rev:")
            return data[len(b"k8s:rev:"):][::-1]

    kv = await RevisionLog.open(tmp_path / "s.db", clock=clock)
    api = APIServer(kv, clock, transformers={"secrets": Reverse()})
    await api.start()
    c = Credentials(token=api.tokens.issue(UserInfo("admin", ("system:masters",))))
    resp = await api.handle(Request("create", "secrets", namespace="default", credentials=c,
                                    body={"metadata": {"name": "s"}, "stringData": {"pw": "hunter2"}, "data": {"k": "dg=="}}))
    assert resp.code == 201, resp.body
    raw = (await kv.range("/registry/secrets/default/s")).kvs[0].value
    assert raw.startswith(b"k8s:rev:") and b'"name":"s"' not in raw
    got = await api.handle(Request("get", "secrets", namespace="default", name="s", credentials=c))
    assert got.body["data"]["k"] == "dg=="
    await api.stop()
    await kv.close()


async def test_keys_follow_the_registry_layout(api: APIServer, admin: Client) -> None:
    await admin.ok("create", "deployments", group="apps", namespace="default", body=deployment("k"))
    await admin.ok("create", "namespaces", body={"metadata": {"name": "team"}})
    import json

    dep = (await api.kv.range("/registry/deployments.apps/default/k")).kvs[0]
    stored = json.loads(dep.value)
    assert "resourceVersion" not in stored["metadata"] and stored["kind"] == "Deployment"
    assert (await api.kv.range("/registry/namespaces/team")).kvs


async def test_events_expire_an_hour_after_their_last_write(admin: Client, clock: VirtualClock) -> None:
    def event(name: str) -> dict:
        return {"metadata": {"name": name}, "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
                "reason": "Test", "message": "m", "type": "Normal", "lastTimestamp": clock.rfc3339()}

    await admin.ok("create", "events", namespace="default", body=event("old"))
    await clock.advance(1800)
    await admin.ok("create", "events", namespace="default", body=event("young"))
    await clock.advance(1900)
    names = [e["metadata"]["name"] for e in (await admin.ok("list", "events", namespace="default"))["items"]]
    assert names == ["young"]
    await clock.advance(1800)
    assert (await admin.ok("list", "events", namespace="default"))["items"] == []
