"""SharedInformer against the real API server: sync, ordered handlers, indexes, 410 relist, resync."""

from __future__ import annotations

from typing import Any

from client_helpers import Partition, churn_past_watch_window, configmap, make_namespace

from kconsole.client import InformerFactory, SharedInformer


def label(cm: dict[str, Any], **labels: str) -> dict[str, Any]:
    cm["metadata"]["labels"] = labels
    return cm


def by_app(obj: dict[str, Any]) -> list[str]:
    app = (obj["metadata"].get("labels") or {}).get("app")
    return [app] if app else []


class Recorder:
    """Event handlers that write down what they saw, in order."""

    def __init__(self, inf: SharedInformer) -> None:
        self.log: list[tuple[str, str]] = []
        self.updates: list[tuple[dict[str, Any], dict[str, Any]]] = []
        self.deleted: list[dict[str, Any]] = []
        inf.add_event_handler(on_add=self.add, on_update=self.update, on_delete=self.delete)

    def add(self, obj: dict[str, Any]) -> None:
        self.log.append(("add", obj["metadata"]["name"]))

    def update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        self.log.append(("update", new["metadata"]["name"]))
        self.updates.append((old, new))

    def delete(self, obj: dict[str, Any]) -> None:
        self.log.append(("delete", obj["metadata"]["name"]))
        self.deleted.append(obj)


async def test_list_then_watch_delivers_every_change_in_order(env) -> None:
    c = env.client
    await make_namespace(env, "inf")
    for name in ("a", "b"):
        await c.create(configmap(name, "inf", v="0"))
    inf = SharedInformer(c, "configmaps", "inf")
    rec = Recorder(inf)
    await inf.start()
    await inf.wait_synced(timeout=5)
    assert inf.has_synced
    assert sorted(rec.log) == [("add", "a"), ("add", "b")]
    assert sorted(inf.keys()) == ["inf/a", "inf/b"]

    await c.create(configmap("c", "inf"))
    await c.patch("configmaps", "a", {"data": {"v": "1"}}, "inf")
    await c.delete("configmaps", "b", "inf")
    await c.patch("configmaps", "a", {"data": {"v": "2"}}, "inf")
    await env.clock.run_until(lambda: len(rec.log) >= 6, timeout=5, step=0.1)

    assert rec.log[2:] == [("add", "c"), ("update", "a"), ("delete", "b"), ("update", "a")]
    old, new = rec.updates[-1]
    assert (old["data"]["v"], new["data"]["v"]) == ("1", "2")
    assert rec.deleted[0]["metadata"]["name"] == "b", "on_delete receives the last state"
    assert inf.get("inf/a")["data"]["v"] == "2"
    assert inf.get_by_name("inf", "b") is None
    latest = await c.list("configmaps", "inf")
    assert int(inf.resource_version) >= int(max(o["metadata"]["resourceVersion"] for o in latest["items"]))
    await inf.stop()


async def test_late_handler_gets_existing_objects_as_adds(env) -> None:
    c = env.client
    await c.create(configmap("early"))
    inf = SharedInformer(c, "configmaps", "default")
    await inf.start()
    await inf.wait_synced(timeout=5)
    rec = Recorder(inf)
    assert ("add", "early") in rec.log
    await inf.stop()


async def test_indexes_follow_label_changes_and_deletes(env) -> None:
    c = env.client
    await make_namespace(env, "idx")
    await c.create(label(configmap("w1", "idx"), app="web"))
    await c.create(label(configmap("w2", "idx"), app="web"))
    await c.create(label(configmap("d1", "idx"), app="db"))
    inf = SharedInformer(c, "configmaps", indexers={"app": by_app})
    await inf.start()
    await inf.wait_synced(timeout=5)

    def names(index: str, value: str) -> list[str]:
        return sorted(o["metadata"]["name"] for o in inf.list_by_index(index, value))

    assert names("app", "web") == ["w1", "w2"]
    assert names("namespace", "idx") == ["d1", "w1", "w2"]

    await c.patch("configmaps", "w2", {"metadata": {"labels": {"app": "db"}}}, "idx")
    await c.delete("configmaps", "w1", "idx")
    await env.clock.run_until(lambda: names("app", "db") == ["d1", "w2"] and not names("app", "web"),
                              timeout=5, step=0.1)
    assert names("namespace", "idx") == ["d1", "w2"]
    inf.add_indexer("name-length", lambda o: [str(len(o["metadata"]["name"]))])
    assert names("name-length", "2") == ["d1", "w2"], "a late indexer indexes what is cached"
    await inf.stop()


async def test_relist_after_410_delivers_the_missed_diff(env) -> None:
    c = env.client
    await make_namespace(env, "gap")
    for name in ("keep", "change", "gone"):
        await c.create(configmap(name, "gap", v="0"))
    link = Partition(env.entry)
    inf = SharedInformer(env.new_client(link), "configmaps", "gap")
    rec = Recorder(inf)
    await inf.start()
    await inf.wait_synced(timeout=5)
    assert inf.relists == 1

    await link.cut()
    await c.delete("configmaps", "gone", "gap")
    await c.patch("configmaps", "change", {"data": {"v": "1"}}, "gap")
    await c.create(configmap("new", "gap"))
    await churn_past_watch_window(env, "gap")
    link.heal()
    await env.clock.run_until(lambda: inf.relists == 2 and inf.get("gap/gone") is None, timeout=120)

    after_cut = rec.log[3:]
    assert ("delete", "gone") in after_cut
    assert ("update", "change") in after_cut
    assert ("add", "new") in after_cut and ("add", "churn") in after_cut
    assert ("update", "keep") not in after_cut, "unchanged objects are not re-delivered on relist"
    assert sorted(inf.keys()) == ["gap/change", "gap/churn", "gap/keep", "gap/new"]
    assert inf.get("gap/churn")["data"] == {"i": "149"}
    await inf.stop()


async def test_watch_reconnects_from_last_version_after_a_short_cut(env) -> None:
    c = env.client
    link = Partition(env.entry)
    inf = SharedInformer(env.new_client(link), "configmaps", "default")
    rec = Recorder(inf)
    await inf.start()
    await inf.wait_synced(timeout=5)
    await link.cut()
    await c.create(configmap("during-cut"))
    await env.clock.advance(3)
    link.heal()
    await env.clock.run_until(lambda: inf.get("default/during-cut") is not None, timeout=60)
    assert inf.relists == 1, "a re-watch within the cache window needs no relist"
    assert rec.log.count(("add", "during-cut")) == 1
    await inf.stop()


async def test_resync_redelivers_updates_on_the_clock(env) -> None:
    c = env.client
    await c.create(configmap("r1"))
    await c.create(configmap("r2"))
    inf = SharedInformer(c, "configmaps", "default", resync_period=30)
    rec = Recorder(inf)
    await inf.start()
    await inf.wait_synced(timeout=5)
    await env.clock.advance(29)
    assert not rec.updates
    await env.clock.advance(2)
    resynced = sorted(new["metadata"]["name"] for old, new in rec.updates if old is new)
    assert resynced == ["r1", "r2"]
    await env.clock.advance(30)
    assert len(rec.updates) == 4
    await inf.stop()


async def test_factory_shares_one_informer_per_resource_and_selectors(env) -> None:
    c = env.client
    await c.create(configmap("f1"))
    factory = InformerFactory(c)
    a = factory.informer("configmaps")
    assert factory.informer("cm") is a
    assert factory.informer("configmaps", resync_period=10) is a and a.resync_period == 10
    other = factory.informer("configmaps", label_selector="app=x")
    assert other is not a
    await factory.start_all()
    await factory.wait_for_cache_sync(timeout=5)
    assert a.get("default/f1") is not None and other.get("default/f1") is None
    await factory.stop_all()
    assert not a.running


async def test_keep_caches_only_matching_objects_and_turns_leaving_ones_into_deletes(env) -> None:
    # A selector the API cannot express (a kubelet worker's "pods on any of my nodes") acts as a field
    # selector's watch does: never-matching objects are never seen, one that stops matching is deleted.
    c = env.client
    await make_namespace(env, "keep")
    await c.create(configmap("listed-mine", "keep", side="mine"))
    await c.create(configmap("listed-theirs", "keep", side="theirs"))
    inf = SharedInformer(c, "configmaps", "keep", keep=lambda cm: (cm.get("data") or {}).get("side") == "mine")
    rec = Recorder(inf)
    await inf.start()
    await inf.wait_synced(timeout=5)
    assert rec.log == [("add", "listed-mine")] and inf.keys() == ["keep/listed-mine"]

    await c.create(configmap("theirs", "keep", side="theirs"))
    await c.patch("configmaps", "theirs", {"data": {"side": "mine"}}, "keep")  # starts matching: an add
    await c.patch("configmaps", "listed-mine", {"data": {"side": "theirs"}}, "keep")  # stops: a delete
    await c.delete("configmaps", "listed-theirs", "keep")  # never matched: nothing
    await c.create(configmap("last", "keep", side="mine"))
    await env.clock.run_until(lambda: ("add", "last") in rec.log, timeout=5, step=0.1)
    assert rec.log == [("add", "listed-mine"), ("add", "theirs"), ("delete", "listed-mine"), ("add", "last")]
    assert rec.deleted[0]["data"]["side"] == "mine"  # the last state it matched in
    assert sorted(inf.keys()) == ["keep/last", "keep/theirs"]
    await inf.stop()
