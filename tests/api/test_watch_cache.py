"""Watches served from the watch cache: replay from a revision, selectors, 410, bookmarks, slow watchers."""

from __future__ import annotations

import asyncio
from typing import Any

from api_helpers import Client, pod

from kconsole.api.server import APIServer
from kconsole.clock import VirtualClock


async def drain(stream: Any, clock: VirtualClock) -> list[dict[str, Any]]:
    """Every event the stream has queued right now (without waiting for more)."""
    await clock.settle()
    out = []
    while stream.pending():
        out.append(await stream.__anext__())
    return out


async def collect(stream: Any) -> list[dict[str, Any]]:
    return [e async for e in stream]


def summary(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(e["type"], e["object"]["metadata"].get("name", "")) for e in events]


async def test_watch_from_list_rv_sees_later_changes_in_order(api: APIServer, admin: Client,
                                                              clock: VirtualClock) -> None:
    await admin.ok("create", "configmaps", namespace="default", body={"metadata": {"name": "a"}})
    listed = await admin.ok("list", "configmaps", namespace="default")
    w = await admin.do("watch", "configmaps", namespace="default", resource_version=listed["metadata"]["resourceVersion"])
    await admin.ok("create", "configmaps", namespace="default", body={"metadata": {"name": "b"}})
    await admin.ok("patch", "configmaps", namespace="default", name="a", patch_type="merge", body={"data": {"x": "1"}})
    await admin.ok("delete", "configmaps", namespace="default", name="b")
    events = await drain(w, clock)
    assert summary(events) == [("ADDED", "b"), ("MODIFIED", "a"), ("DELETED", "b")]
    rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert rvs == sorted(rvs) and rvs[0] > int(listed["metadata"]["resourceVersion"])
    await w.close()


async def test_a_list_across_namespaces_shows_objects_as_modified_since_the_last_one(
        admin: Client, clock: VirtualClock) -> None:
    """The cache's key order for such lists held the objects themselves and was renewed only when one
    came or went: after a change, every list across namespaces (and an informer's first list, which
    then watched from a revision past the change) answered the object as it was."""
    await admin.ok("create", "configmaps", namespace="default", body={"metadata": {"name": "a"}, "data": {"v": "1"}})
    await admin.ok("create", "nodes", body={"metadata": {"name": "n1"}})
    assert [c.get("data") for c in (await admin.ok("list", "configmaps"))["items"]
            if c["metadata"]["name"] == "a"] == [{"v": "1"}]
    assert (await admin.ok("list", "nodes"))["items"][0]["metadata"].get("labels") is None
    await admin.ok("patch", "configmaps", namespace="default", name="a", patch_type="merge", body={"data": {"v": "2"}})
    await admin.ok("patch", "nodes", name="n1", patch_type="merge", body={"metadata": {"labels": {"zone": "b"}}})
    await clock.settle()
    assert [c.get("data") for c in (await admin.ok("list", "configmaps"))["items"]
            if c["metadata"]["name"] == "a"] == [{"v": "2"}]
    assert (await admin.ok("list", "nodes"))["items"][0]["metadata"]["labels"] == {"zone": "b"}
    selected = await admin.ok("list", "configmaps", field_selector="metadata.namespace=default")
    assert [c.get("data") for c in selected["items"] if c["metadata"]["name"] == "a"] == [{"v": "2"}]


async def test_watch_without_rv_starts_with_synthetic_added(admin: Client, clock: VirtualClock) -> None:
    for n in ("x", "y"):
        await admin.ok("create", "configmaps", namespace="default", body={"metadata": {"name": n}})
    w = await admin.do("watch", "configmaps", namespace="default")
    await admin.ok("create", "configmaps", namespace="default", body={"metadata": {"name": "z"}})
    assert summary(await drain(w, clock)) == [("ADDED", "x"), ("ADDED", "y"), ("ADDED", "z")]
    await w.close()


async def test_label_selector_watch_turns_modified_into_added_and_deleted(admin: Client, clock: VirtualClock) -> None:
    w = await admin.do("watch", "pods", namespace="default", label_selector="app=web", resource_version="0")
    await admin.ok("create", "pods", namespace="default", body=pod("p", {"app": "db"}))
    await admin.ok("patch", "pods", namespace="default", name="p", patch_type="merge",
                   body={"metadata": {"labels": {"app": "web"}}})
    await admin.ok("patch", "pods", namespace="default", name="p", patch_type="merge",
                   body={"metadata": {"annotations": {"note": "1"}}})
    await admin.ok("patch", "pods", namespace="default", name="p", patch_type="merge",
                   body={"metadata": {"labels": {"app": "db"}}})
    events = await drain(w, clock)
    assert summary(events) == [("ADDED", "p"), ("MODIFIED", "p"), ("DELETED", "p")]
    # The DELETED for "stopped matching" carries the last matching state at the change's revision.
    assert events[-1]["object"]["metadata"]["labels"] == {"app": "web"}
    await w.close()


async def test_field_selector_name_watch_like_kubectl_delete(admin: Client, clock: VirtualClock) -> None:
    await admin.ok("create", "configmaps", namespace="default", body={"metadata": {"name": "target"}})
    await admin.ok("create", "configmaps", namespace="default", body={"metadata": {"name": "other"}})
    listed = await admin.ok("list", "configmaps", namespace="default", field_selector="metadata.name=target")
    assert [i["metadata"]["name"] for i in listed["items"]] == ["target"]
    w = await admin.do("watch", "configmaps", namespace="default", field_selector="metadata.name=target",
                       resource_version=listed["metadata"]["resourceVersion"])
    await admin.ok("delete", "configmaps", namespace="default", name="other")
    await admin.ok("delete", "configmaps", namespace="default", name="target")
    assert summary(await drain(w, clock)) == [("DELETED", "target")]
    await w.close()


async def test_pod_field_selectors_filter_lists_and_watches(admin: Client, clock: VirtualClock) -> None:
    w = await admin.do("watch", "pods", field_selector="spec.nodeName=n1", resource_version="0")
    await admin.ok("create", "pods", namespace="default", body=pod("on-n1", nodeName="n1"))
    await admin.ok("create", "pods", namespace="default", body=pod("on-n2", nodeName="n2"))
    listed = await admin.ok("list", "pods", field_selector="spec.nodeName=n2,status.phase!=Succeeded")
    assert [p["metadata"]["name"] for p in listed["items"]] == ["on-n2"]
    assert summary(await drain(w, clock)) == [("ADDED", "on-n1")]
    await w.close()


async def test_too_old_resource_version_is_410_error_event(tmp_path, clock: VirtualClock) -> None:
    from kconsole.api.types import Credentials, Request, UserInfo
    from kconsole.store.revlog import RevisionLog

    kv = await RevisionLog.open(tmp_path / "s.db", clock=clock)
    api = APIServer(kv, clock, cache_options={"min_events": 5, "history_seconds": 75.0})
    await api.start()
    c = Credentials(token=api.tokens.issue(UserInfo("admin", ("system:masters",))))
    first = await api.handle(Request("create", "configmaps", namespace="default", credentials=c,
                                     body={"metadata": {"name": "c0"}}))
    old_rv = int(first.body["metadata"]["resourceVersion"])
    await api.handle(Request("create", "configmaps", namespace="default", credentials=c,
                             body={"metadata": {"name": "c0b"}}))
    await clock.advance(100)
    for i in range(1, 12):
        await api.handle(Request("create", "configmaps", namespace="default", credentials=c,
                                 body={"metadata": {"name": f"c{i}"}}))
    w = await api.handle(Request("watch", "configmaps", namespace="default", credentials=c,
                                 resource_version=str(old_rv)))
    events = await asyncio.wait_for(collect(w), 5)
    assert len(events) == 1 and events[0]["type"] == "ERROR"
    status = events[0]["object"]
    assert status["code"] == 410 and status["reason"] == "Expired"
    assert status["message"].startswith(f"too old resource version: {old_rv} (")
    await api.stop()
    await kv.close()


async def test_bookmarks_at_start_and_every_minute(admin: Client, clock: VirtualClock) -> None:
    await admin.ok("create", "configmaps", namespace="default", body={"metadata": {"name": "a"}})
    listed = await admin.ok("list", "configmaps", namespace="default")
    w = await admin.do("watch", "configmaps", namespace="default", allow_watch_bookmarks=True,
                       resource_version=listed["metadata"]["resourceVersion"])
    first = await drain(w, clock)
    assert [e["type"] for e in first] == ["BOOKMARK"]
    assert first[0]["object"]["kind"] == "ConfigMap"
    # A write to another resource moves the store revision; the bookmark reports it.
    await admin.ok("create", "secrets", namespace="default", body={"metadata": {"name": "s"}})
    await clock.advance(61)
    later = await drain(w, clock)
    assert [e["type"] for e in later] == ["BOOKMARK"]
    assert int(later[0]["object"]["metadata"]["resourceVersion"]) >= int(
        first[0]["object"]["metadata"]["resourceVersion"]) + 1
    await w.close()


async def test_send_initial_events_ends_with_annotated_bookmark(admin: Client, clock: VirtualClock) -> None:
    await admin.ok("create", "configmaps", namespace="default", body={"metadata": {"name": "a"}})
    w = await admin.do("watch", "configmaps", namespace="default", allow_watch_bookmarks=True,
                       send_initial_events=True, resource_version="")
    events = await drain(w, clock)
    assert [e["type"] for e in events] == ["ADDED", "BOOKMARK"]
    assert events[1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    await w.close()


async def test_timeout_seconds_ends_the_stream(admin: Client, clock: VirtualClock) -> None:
    w = await admin.do("watch", "configmaps", namespace="default", timeout_seconds=30)
    got: list[dict[str, Any]] = []

    async def consume() -> None:
        async for e in w:
            got.append(e)

    task = asyncio.ensure_future(consume())
    await clock.advance(29)
    assert not task.done()
    await clock.advance(2)
    assert task.done()


async def test_slow_watcher_is_terminated_without_blocking_writes(tmp_path, clock: VirtualClock) -> None:
    from kconsole.api.types import Credentials, Request, UserInfo
    from kconsole.store.revlog import RevisionLog

    kv = await RevisionLog.open(tmp_path / "s.db", clock=clock)
    api = APIServer(kv, clock, cache_options={"watcher_capacity": 10})
    await api.start()
    c = Credentials(token=api.tokens.issue(UserInfo("admin", ("system:masters",))))
    slow = await api.handle(Request("watch", "configmaps", namespace="default", credentials=c, resource_version="0"))
    fast = await api.handle(Request("watch", "configmaps", namespace="default", credentials=c, resource_version="0"))
    fast_seen: list[str] = []

    async def consume() -> None:
        async for e in fast:
            fast_seen.append(e["object"]["metadata"]["name"])

    task = asyncio.ensure_future(consume())
    for i in range(30):
        resp = await api.handle(Request("create", "configmaps", namespace="default", credentials=c,
                                        body={"metadata": {"name": f"m{i:02d}"}}))
        assert resp.code == 201
    await clock.settle()
    assert fast_seen == [f"m{i:02d}" for i in range(30)]
    # The slow watcher got at most its queue's worth, then its stream ended (the client re-watches).
    slow_events = await asyncio.wait_for(collect(slow), 5)
    assert len(slow_events) <= 10
    await fast.close()
    await task
    await api.stop()
    await kv.close()


async def test_watch_at_future_rv_waits_then_times_out(api: APIServer, admin: Client, clock: VirtualClock) -> None:
    task = asyncio.ensure_future(admin.do("watch", "configmaps", namespace="default",
                                          resource_version=str(api.kv.revision + 100)))
    await clock.advance(2)
    assert not task.done()
    await clock.advance(2)
    resp = task.result()
    assert resp.code == 504 and "Too large resource version" in resp.body["message"]


async def test_watch_at_rv_from_another_resource_starts_immediately(admin: Client, clock: VirtualClock) -> None:
    # A revision taken from a Secret write is newer than any ConfigMap event; the cache still serves it.
    s = await admin.ok("create", "secrets", namespace="default", body={"metadata": {"name": "s"}})
    w = await admin.do("watch", "configmaps", namespace="default", resource_version=s["metadata"]["resourceVersion"])
    await admin.ok("create", "configmaps", namespace="default", body={"metadata": {"name": "after"}})
    assert summary(await drain(w, clock)) == [("ADDED", "after")]
    await w.close()


async def test_store_watch_cancel_relists_and_ends_client_watches(tmp_path, clock: VirtualClock) -> None:
    from kconsole.api.types import Credentials, Request, UserInfo
    from kconsole.store.revlog import RevisionLog

    # A tiny store-side watch buffer: a burst of writes cancels the cache's store watch as too slow.
    kv = await RevisionLog.open(tmp_path / "s.db", clock=clock, watch_buffer=5)
    api = APIServer(kv, clock)
    await api.start()
    c = Credentials(token=api.tokens.issue(UserInfo("admin", ("system:masters",))))
    listed = await api.handle(Request("list", "configmaps", namespace="default", credentials=c))
    w = await api.handle(Request("watch", "configmaps", namespace="default", credentials=c,
                                 resource_version=listed.body["metadata"]["resourceVersion"]))
    cache = api.storage.caches["configmaps"]
    before = cache.relists
    results = await asyncio.gather(*(api.handle(Request("create", "configmaps", namespace="default", credentials=c,
                                                        body={"metadata": {"name": f"b{i:02d}"}}))
                                     for i in range(40)))
    assert all(r.code == 201 for r in results)
    await clock.run_until(lambda: cache.relists > before, timeout=10)
    # The client watch ended (its client re-lists); the cache holds every object again.
    await asyncio.wait_for(collect(w), 5)
    got = await api.handle(Request("list", "configmaps", namespace="default", credentials=c))
    assert [o["metadata"]["name"] for o in got.body["items"]] == [f"b{i:02d}" for i in range(40)]
    again = await api.handle(Request("watch", "configmaps", namespace="default", credentials=c,
                                     resource_version=listed.body["metadata"]["resourceVersion"]))
    events = await asyncio.wait_for(collect(again), 5)
    assert events[0]["type"] == "ERROR" and events[0]["object"]["code"] == 410
    await api.stop()
    await kv.close()


async def test_a_write_still_in_the_store_stream_is_not_skipped_by_a_list_and_watch(
        api: APIServer, admin: Client, clock: VirtualClock, kv: Any) -> None:
    """A write the API server did not make (a proposal that failed here and committed after a leader
    change, Raft applying its log after a restart) reaches the cache through the store watch a moment
    after the store's revision moved. A list in that moment must not claim the new revision: a watch
    from the list's revision would skip the write for good (a kubelet never saw its pod bound)."""
    from kconsole.store.kv import Put

    await admin.ok("create", "configmaps", namespace="default", body={"metadata": {"name": "a"}})
    await clock.settle()
    value = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"late","namespace":"default","uid":"u1"}}'
    await kv.txn([], [Put("/registry/configmaps/default/late", value)])
    listed = await admin.ok("list", "configmaps", namespace="default")  # before the cache read its stream
    names = [o["metadata"]["name"] for o in listed["items"]]
    await clock.settle()  # the cache reads the write; then the client's watch comes (two requests)
    w = await admin.do("watch", "configmaps", namespace="default",
                       resource_version=listed["metadata"]["resourceVersion"])
    seen = names + [e["object"]["metadata"]["name"] for e in await drain(w, clock)]
    assert sorted(seen) == ["a", "late"], (listed["metadata"]["resourceVersion"], names)
    again = await admin.ok("list", "configmaps", namespace="default")  # settled: the store's revision again
    assert again["metadata"]["resourceVersion"] == str(kv.revision)


async def test_a_watch_resumed_from_an_old_rv_replays_more_than_its_queue_bound(admin: Client,
                                                                                 clock: VirtualClock) -> None:
    """The live queue's bound (1,000) is for a client that falls behind, not for the replay: every
    event after the resourceVersion arrives, in order, and the watch then follows live events."""
    start = (await admin.ok("list", "configmaps", namespace="replay"))["metadata"]["resourceVersion"]
    await admin.ok("create", "namespaces", body={"metadata": {"name": "replay"}})
    for i in range(1_050):
        await admin.ok("create", "configmaps", namespace="replay", body={"metadata": {"name": f"r{i:04d}"}})
    w = await admin.do("watch", "configmaps", namespace="replay", resource_version=start)
    await admin.ok("create", "configmaps", namespace="replay", body={"metadata": {"name": "live"}})
    events = await drain(w, clock)
    assert summary(events) == [("ADDED", f"r{i:04d}") for i in range(1_050)] + [("ADDED", "live")]
    assert not w.terminated
    await w.close()


class _FastClock(VirtualClock):
    """A simulated clock with a separate wall clock, as a cluster at ``--speed`` has: each is advanced
    on its own, so a test sees which one a timer runs on."""

    def __init__(self) -> None:
        super().__init__()
        self.real = VirtualClock()

    @property
    def wall(self) -> VirtualClock:
        return self.real


async def test_request_timers_run_on_the_wall_clock_not_the_simulated_one(tmp_path) -> None:
    """At ``--speed 10`` a watch's timeoutSeconds=30 closed after 3 real seconds and informers never
    resynced: timeoutSeconds and the wait for a too-new resourceVersion are real seconds, as on a server."""
    from kconsole.api.types import UserInfo
    from kconsole.store.revlog import RevisionLog

    clock = _FastClock()
    kv = await RevisionLog.open(tmp_path / "s.db", clock=clock)
    api = APIServer(kv, clock)
    await api.start()
    try:
        admin = Client(api, api.tokens.issue(UserInfo("admin", ("system:masters",))))
        w = await admin.do("watch", "configmaps", namespace="default", timeout_seconds=1)
        task = asyncio.ensure_future(collect(w))
        await clock.advance(100)
        assert not task.done()
        await clock.real.advance(1.1)
        assert task.done()

        listed = await admin.ok("list", "configmaps", namespace="default")
        ahead = str(int(listed["metadata"]["resourceVersion"]) + 1000)
        waiting = asyncio.ensure_future(admin.do("list", "configmaps", namespace="default", resource_version=ahead))
        await clock.advance(100)
        assert not waiting.done()
        await clock.real.advance(3.1)
        assert waiting.done() and waiting.result().code == 504
    finally:
        await api.stop()
        await kv.close()
