"""History on real etcd members: the same scripted writes through an API server on the embedded
store and on real etcd give the same history (bounds, listAt, changes, revisionAt, timeOf, writes,
an object's story), Secrets redacted alike; compaction answers 410 to API clients while etcd
itself is compacted only down to the history floor, which follows the retention and size bounds.

Real etcd runs on real time: revisions and times are compared only through what the API answers,
never how long anything took."""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
from collections.abc import AsyncIterator, Awaitable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
import pytest_asyncio

from kconsole.api.server import APIServer
from kconsole.api.types import Request, Response, StatusError, UserInfo
from kconsole.api.writelog import WriteLog
from kconsole.client.client import Client
from kconsole.client.history import HistoryClient
from kconsole.clock import VirtualClock
from kconsole.cluster import ADMIN as CLUSTER_ADMIN
from kconsole.cluster import Cluster, ClusterConfig
from kconsole.history import cmd
from kconsole.history.story import build, render_text
from kconsole.trace.exportcmd import _export
from kconsole.trace.fileformat import TraceError
from kconsole.trace.fork import fork
from kconsole.trace.when import parse_when
from kconsole.store import etcdlocal
from kconsole.store.etcdhistory import REVTIME_FILE, RevTimes
from kconsole.store.kv import CompactedError
from kconsole.store.etcdreal import RealEtcdCluster, open_real
from kconsole.store.revlog import RevisionLog

pytestmark = pytest.mark.skipif(shutil.which("etcd") is None,
                                reason="no etcd binary on PATH (CI installs Debian's etcd-server)")

T = TypeVar("T")
ADMIN = UserInfo("admin", ("system:masters",))
BOB = UserInfo("bob", ("system:authenticated",))


@pytest.fixture(autouse=True)
def patient_elections() -> Iterator[None]:
    """Raft timing for a busy shared machine: a member the scheduler leaves waiting is not deposed."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(etcdlocal, "HEARTBEAT_MS", 300)
        patch.setattr(etcdlocal, "ELECTION_MS", 3000)
        yield


async def drive(clock: VirtualClock, aw: Awaitable[T], limit: float = 300.0) -> T:
    """Await ``aw`` while the virtual clock moves (real etcd answers in real time meanwhile)."""
    task = asyncio.ensure_future(aw)
    spent = 0.0
    await clock.settle()  # real I/O in flight holds the clock: writes keep the times they started at
    while not task.done():
        if spent > limit:
            task.cancel()
            raise TimeoutError(f"not done within {limit} simulated seconds")
        await clock.advance(0.05)
        spent += 0.05
    return await task


async def real_etcd(folder: Path, clock: VirtualClock, members: int, retention: float = 86400.0,
                    max_bytes: int = 0) -> RealEtcdCluster:
    return await open_real(local_dir=folder / "etcd", members=members, clock=clock,
                           history=(folder / REVTIME_FILE, retention, max_bytes), compaction_interval=0)


@pytest_asyncio.fixture(params=["embedded", "etcd"])
async def api(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[APIServer]:
    clock = VirtualClock()
    if request.param == "embedded":
        kv: Any = await RevisionLog.open(tmp_path / "store.db", clock=clock, synchronous="NORMAL")
    else:
        kv = await real_etcd(tmp_path, clock, members=1)
    server = APIServer(kv, clock, seed=7)
    server.writelog = WriteLog(clock, tmp_path / "writes.sqlite")
    await drive(clock, server.start())
    yield server
    await drive(clock, server.stop())
    await kv.close()


def client(api: APIServer, user: UserInfo) -> Client:
    return Client(api, api.tokens.issue(user), api.clock)


def deployment(image: str) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x", "namespace": "default"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "x"}},
                     "template": {"metadata": {"labels": {"app": "x"}},
                                  "spec": {"containers": [{"name": "x", "image": image}]}}}}


async def script(api: APIServer) -> dict[str, int]:
    """The same writes on either store, ten simulated seconds apart; the revisions they made."""
    clock = api.clock
    assert isinstance(clock, VirtualClock)
    admin = client(api, ADMIN)
    revs: dict[str, int] = {}

    async def step(name: str, aw: Awaitable[dict[str, Any]]) -> None:
        obj = await drive(clock, aw)
        revs[name] = int(obj["metadata"]["resourceVersion"])
        await clock.advance(10)

    await step("deploy", admin.apply(deployment("nginx:1.27"), field_manager="kubectl"))
    await step("rollout", admin.apply(deployment("nginx:1.28"), field_manager="rollout-bot", force=True))
    await step("secret", admin.create({"apiVersion": "v1", "kind": "Secret",
                                       "metadata": {"name": "s", "namespace": "default"},
                                       "data": {"password": "aHVudGVyMg=="}}))
    await step("cm", admin.create({"apiVersion": "v1", "kind": "ConfigMap",
                                   "metadata": {"name": "c", "namespace": "default"}, "data": {"a": "1"}}))
    await drive(clock, admin.delete("configmaps", "c", "default"))
    revs["cm-deleted"] = api.kv.revision
    await clock.advance(10)
    await drive(clock, admin.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                                     "metadata": {"name": "history-only"},
                                     "rules": [{"apiGroups": ["history.kconsole.io"],
                                                "resources": ["historyqueries"], "verbs": ["create"]}]}))
    await drive(clock, admin.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                                     "metadata": {"name": "bob-history"},
                                     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                                 "name": "history-only"},
                                     "subjects": [{"kind": "User", "name": "bob",
                                                   "apiGroup": "rbac.authorization.k8s.io"}]}))
    await clock.advance(1)
    return revs


async def shape(api: APIServer, revs: dict[str, int]) -> dict[str, Any]:
    """What the history tells of the script, with revisions as the script's step names (the two
    stores number revisions differently: the embedded one starts with its own bookkeeping)."""
    clock = api.clock
    name_of = {v: k for k, v in revs.items()}
    admin = HistoryClient(client(api, ADMIN))
    bob = HistoryClient(client(api, BOB))
    bounds = await drive(clock, admin.bounds())
    t0 = await drive(clock, admin.time_of(revs["deploy"]))
    out: dict[str, Any] = {}
    assert bounds.oldest <= revs["deploy"] <= bounds.current and bounds.current_time - t0 >= 40

    at_rollout = await drive(clock, admin.list_at("deployments", revs["deploy"], group="apps", namespace="default"))
    out["listAt"] = [(d["metadata"]["name"], d["spec"]["template"]["spec"]["containers"][0]["image"])
                     for d in at_rollout]
    changes = await drive(clock, admin.changes(revs["deploy"] - 1, revs["cm-deleted"], namespace="default"))
    out["changes"] = [(name_of.get(c.revision, "?"), c.type, c.resource, c.group, c.name, c.time - t0,
                       c.object is not None, c.previous is not None)
                      for c in changes if c.resource in ("deployments", "secrets", "configmaps")]
    out["revisionAt"] = [revs[a] <= await drive(clock, admin.revision_at(t0 + dt)) < revs[b]
                         for dt, a, b in ((5, "deploy", "rollout"), (15, "rollout", "secret"), (25, "secret", "cm"))]
    out["timeOf"] = [await drive(clock, admin.time_of(revs[n])) - t0 for n in ("deploy", "rollout", "cm")]
    writes = await drive(clock, admin.writes("deployments", "x", group="apps", namespace="default"))
    out["writes"] = [(w.verb, w.user, name_of.get(w.revision, "?"), w.field_manager) for w in writes]
    secret_admin = await drive(clock, admin.list_at("secrets", revs["secret"], namespace="default"))
    secret_bob = await drive(clock, bob.list_at("secrets", revs["secret"], namespace="default"))
    out["secrets"] = [s["data"] for s in secret_admin] + [s["data"] for s in secret_bob]
    story = await drive(clock, build(admin, "deployments", "x", group="apps", namespace="default"))
    text = render_text(story)
    for rev, name in name_of.items():
        text = text.replace(f"rev {rev} ", f"rev <{name}> ")
    out["story"] = text.split("\n", 1)[1]
    return out


async def test_the_same_script_tells_the_same_history_on_embedded_and_real_etcd(
        api: APIServer, tmp_path_factory: pytest.TempPathFactory) -> None:
    revs = await script(api)
    got = await shape(api, revs)
    assert got["listAt"] == [("x", "nginx:1.27")]
    assert [c[:5] for c in got["changes"]] == [
        ("deploy", "ADDED", "deployments", "apps", "x"), ("rollout", "MODIFIED", "deployments", "apps", "x"),
        ("secret", "ADDED", "secrets", "", "s"), ("cm", "ADDED", "configmaps", "", "c"),
        ("cm-deleted", "DELETED", "configmaps", "", "c")]
    assert [c[5] for c in got["changes"]] == [0, 10, 20, 30, 40]
    assert got["revisionAt"] == [True, True, True] and got["timeOf"] == [0, 10, 30]
    assert got["writes"] == [("patch", "admin", "deploy", "kubectl"), ("patch", "admin", "rollout", "rollout-bot")]
    assert got["secrets"] == [{"password": "aHVudGVyMg=="}, {"password": ""}]
    assert "manager rollout-bot" in got["story"] and "+      - image: nginx:1.28" in got["story"]
    # Both parametrisations write their shape; the second one compares it with the first.
    record = tmp_path_factory.getbasetemp() / "history-shape.txt"
    text = repr(got)
    if record.exists():
        assert record.read_text() == text
    else:
        record.write_text(text)


async def test_compaction_answers_410_to_api_clients_and_keeps_the_history_floor(tmp_path: Path) -> None:
    clock = VirtualClock()
    etcd = await real_etcd(tmp_path, clock, members=3, retention=60.0)
    api = APIServer(etcd, clock, seed=7)
    api.writelog = WriteLog(clock, tmp_path / "writes.sqlite")
    try:
        await drive(clock, api.start())
        admin = client(api, ADMIN)
        history = HistoryClient(admin)
        first = await drive(clock, admin.apply(deployment("nginx:1"), field_manager="kubectl"))
        first_rev = int(first["metadata"]["resourceVersion"])
        await clock.advance(30)
        second = await drive(clock, admin.apply(deployment("nginx:2"), field_manager="kubectl", force=True))
        second_rev = int(second["metadata"]["resourceVersion"])
        await clock.advance(40)

        # kube-apiserver's compactor: a first round takes compact_rev_key, the next one compacts to
        # the revision the first saw (API clients lose `first`; 60 s of history stay in etcd).
        version, seen = await drive(clock, etcd.compact_once(0, 0))
        await drive(clock, etcd.compact_once(version, seen))
        assert etcd.compacted == seen > second_rev and etcd.history_floor <= first_rev
        resp = await drive(clock, api.handle(Request(
            "list", "deployments", group="apps", version="v1", namespace="default",
            resource_version=str(first_rev), resource_version_match="Exact", credentials=admin._credentials)))
        assert isinstance(resp, Response) and resp.code == 410
        then = await drive(clock, history.list_at("deployments", first_rev, group="apps", namespace="default"))
        assert [d["spec"]["template"]["spec"]["containers"][0]["image"] for d in then] == ["nginx:1"]
        assert (await drive(clock, history.bounds())).oldest == etcd.history_floor

        await clock.advance(50)  # the retention now starts after `first`: the next compaction drops it
        third = await drive(clock, admin.apply(deployment("nginx:3"), field_manager="kubectl", force=True))
        await drive(clock, etcd.compact(int(third["metadata"]["resourceVersion"])))
        floor = etcd.history_floor
        assert first_rev < floor <= second_rev
        with pytest.raises(StatusError) as gone:
            await drive(clock, history.list_at("deployments", first_rev, group="apps", namespace="default"))
        assert gone.value.code == 410 and f"revision {floor}" in gone.value.message
        kept = await drive(clock, history.list_at("deployments", second_rev, group="apps", namespace="default"))
        assert [d["spec"]["template"]["spec"]["containers"][0]["image"] for d in kept] == ["nginx:2"]
        story = await drive(clock, build(history, "deployments", "x", group="apps", namespace="default"))
        assert [r.type for r in story.revisions] == ["KEPT", "MODIFIED", "MODIFIED"]  # from the floor on
    finally:
        await drive(clock, api.stop())
        await etcd.close()

    # Restarted, the API server learns both compactions back: the API's from compact_rev_key's
    # value (what the compactor writes, as upstream's), etcd's own from a watch; the times from the file.
    etcd = await real_etcd(tmp_path, clock, members=3, retention=60.0)
    try:
        assert etcd.compacted == seen and etcd.history_floor == floor
        assert etcd.time_of(second_rev) - etcd.time_of(floor) >= 0
        with pytest.raises(CompactedError):
            await etcd.range("/registry/deployments.apps/default/x", revision=second_rev)
        assert (await etcd.history_range("/registry/deployments.apps/default/x", None, second_rev)).kvs
    finally:
        await etcd.close()


def test_the_size_bound_drops_the_oldest_revisions_worth_the_excess() -> None:
    marks = RevTimes(None)
    for rev in range(10, 20):
        marks.mark(rev, float(rev), 100)
    assert marks.floor_for(1, 19, 19.0, 0.0, 0) == 1
    assert marks.floor_for(1, 19, 19.0, 0.0, 250) == 13  # 300 bytes written before 13: 250 freed
    assert marks.floor_for(1, 19, 19.0, 5.0, 0) == 14  # the last written at or before 14 s
    assert marks.floor_for(1, 19, 19.0, 0.0, 10_000) == 19  # more over than history holds: none kept
    assert marks.revision_at(12.5, 19) == 12 and marks.time_of(15) == 15.0



async def test_the_cli_prints_the_story_from_a_cluster_on_real_etcd_running_and_stopped(tmp_path: Path) -> None:
    clock = VirtualClock()
    config = ClusterConfig(nodes=1, control_planes=1, seed=1, port=0, etcd="local", data_dir=tmp_path / "data")
    c = Cluster(config, clock=clock)
    await drive(clock, c.start())
    try:
        admin = c.api_client(CLUSTER_ADMIN)
        await drive(clock, admin.apply(deployment("nginx:1.27"), field_manager="kubectl"))
        await clock.advance(30)
        await drive(clock, admin.apply(deployment("nginx:1.28"), field_manager="rollout-bot", force=True))
        await clock.advance(30)
        args = argparse.Namespace(object="deploy/x", namespace="default", diff=True, json=False)
        running = await drive(clock, cmd._fetch(args, c.data_dir))
        text = render_text(running)
        assert text.startswith("Deployment default/x: ")
        assert "+      - image: nginx:1.28" in text and "manager rollout-bot" in text
        assert running.revisions[0].type == "ADDED" and running.revisions[0].user == "kubernetes-admin"
    finally:
        await drive(clock, c.stop())
    stopped = await cmd._fetch(args, c.data_dir)  # the folder's etcd members, started to read them
    assert json.dumps(stopped.to_json()) == json.dumps(running.to_json())

    lines, header = await _export(c.data_dir, tmp_path / "trace.jsonl", None, None)  # trace export, stopped
    records = [json.loads(x) for x in (tmp_path / "trace.jsonl").read_text().splitlines()]
    assert lines == len(records) and header["to"]["revision"] >= running.revisions[-1].revision
    images = [r["object"]["spec"]["template"]["spec"]["containers"][0]["image"] for r in records
              if r.get("type") in ("object", "change") and r.get("resource") == "deployments"
              and r.get("name") == "x" and r.get("object")]
    assert images[0] == "nginx:1.27" and "nginx:1.28" in images
    with pytest.raises(TraceError, match="runs on real etcd"):
        await fork(c.data_dir, parse_when(str(header["to"]["revision"])), tmp_path / "forked")


def test_history_keeps_half_of_etcds_quota_at_most() -> None:
    etcd = RealEtcdCluster(["http://127.0.0.1:1"])
    etcd.keep_history(None, 0.0, 2 * 1024**3)
    etcd.quota_bytes = 1024**3
    assert etcd.size_bound() == 512 * 1024**2
    etcd.history_max_bytes = 100
    assert etcd.size_bound() == 100
    etcd.history_max_bytes = 0
    assert etcd.size_bound() == 512 * 1024**2


async def test_changes_read_by_key_and_by_watch_agree_with_what_was_written(tmp_path: Path) -> None:
    """The writes the API server made are read back by key (its index of what each revision
    wrote); a window with a revision someone else wrote, or too many writes, by one watch."""
    from kconsole.store import etcdhistory
    from kconsole.store.kv import Delete, Put, prefix_end

    clock = VirtualClock()
    etcd = await real_etcd(tmp_path, clock, members=1)
    try:
        rng = random.Random(5)
        written: list[tuple[int, str, str]] = []
        alive: set[str] = set()
        for i in range(120):
            key = f"/registry/deployments.apps/ns{rng.randrange(2)}/d{rng.randrange(6)}"
            if key in alive and rng.random() < 0.3:
                res = await etcd.txn([], [Delete(key)])
                alive.discard(key)
                written.append((res.revision, "DELETE", key))
            else:
                res = await etcd.txn([], [Put(key, f"v{i}".encode())])
                alive.add(key)
                written.append((res.revision, "PUT", key))
            if i % 40 == 39:
                await clock.advance(1)
        gone = await etcd.txn([], [Delete("/registry/deployments.apps/ns1/", prefix_end("/registry/deployments.apps/ns1/"))])
        written += [(gone.revision, "DELETE", k) for k in sorted(k for k in alive if "/ns1/" in k)]
        first, last = written[0][0], etcd.revision
        windows = [(first - 1, last), (first + 10, first + 11), (first + 30, first + 90), (last - 1, last)]
        scopes = [("/registry/deployments.apps/", prefix_end("/registry/deployments.apps/")),
                  ("/registry/deployments.apps/ns0/", prefix_end("/registry/deployments.apps/ns0/")),
                  ("/registry/deployments.apps/ns0/d1", None)]

        def expect(after: int, upto: int, key: str, end: str | None) -> list[tuple[int, str, str]]:
            return [w for w in written if after < w[0] <= upto and (w[2] == key if end is None else key <= w[2] < end)]

        async def read(after: int, upto: int, key: str, end: str | None) -> list[tuple[int, str, str]]:
            events = await etcd.history_changes(key, end, after, upto)
            return [(e.kv.mod_revision, e.type, e.kv.key) for e in events]

        by_key = [await read(a, u, k, e) for a, u in windows for k, e in scopes]
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(etcdhistory, "INDEX_MOST", -1)  # every window by watch
            by_watch = [await read(a, u, k, e) for a, u in windows for k, e in scopes]
        assert by_key == by_watch == [expect(a, u, k, e) for a, u in windows for k, e in scopes]
        limited = await etcd.history_changes(*scopes[0], first - 1, last, 7)
        assert [(e.kv.mod_revision, e.type, e.kv.key) for e in limited] == expect(first - 1, last, *scopes[0])[:7]
        assert etcd.marks is not None
        assert etcd.marks.written_in("/registry/", "\0", first - 1, last, 10_000) is not None
        await etcd._call("/v3/kv/put", {"key": "L2Vsc2V3aGVyZQ==", "value": "eA=="})  # someone else's write
        await etcd.range("/registry/", "\0", count_only=True)  # (the client sees the new revision)
        assert etcd.marks.written_in("/registry/", "\0", first - 1, etcd.revision, 10_000) is None
        assert await read(first - 1, etcd.revision, *scopes[0]) == expect(first - 1, last, *scopes[0])
    finally:
        await etcd.close()


def test_marks_of_another_etcd_cluster_are_dropped(tmp_path: Path) -> None:
    marks = RevTimes(tmp_path / REVTIME_FILE)
    marks.open()
    marks.bind("111")
    marks.mark(5, 1.0, 10)
    marks.wrote(5, [("/registry/pods/default/a", False)])
    marks.close()
    again = RevTimes(tmp_path / REVTIME_FILE)
    again.open()
    again.bind("111")
    assert again.revs == [5] and again.written_in("/registry/", "\0", 4, 5, 10) == [(5, "/registry/pods/default/a", False)]
    again.bind("222")  # the folder now points at another etcd: its revision 5 is another write
    assert again.revs == [] and again.written_in("/registry/", "\0", 4, 5, 10) is None
    again.close()
