"""``kconsole etcdctl`` and ``kconsole snapshot`` on real data folders."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import io
import json
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kconsole.cli import main
from kconsole.cluster import Cluster, ClusterConfig
from kconsole.clock import VirtualClock
from kconsole.store import snapshot
from kconsole.objects.humanize import human_bytes
from kconsole.store.facade import EtcdCluster
from kconsole.store.kv import Delete, Put, prefix_end


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


def cli(*args: str) -> Result:
    """``kconsole ARGS`` through the real entry point, in-process (a subprocess costs a second each)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return Result(code, out.getvalue(), err.getvalue())


async def run(clock: VirtualClock, aw: Any) -> Any:
    task = asyncio.ensure_future(aw)
    await clock.run_until(task.done, 30, step=0.05)
    return task.result()


async def filled(data: Path, clock: VirtualClock) -> EtcdCluster:
    cluster = await EtcdCluster.open(data, clock=clock, members=3, seed=9, auto_compact_interval=0)
    await clock.run_until(lambda: cluster.leader() is not None, 10, step=0.1)
    for i in range(12):
        await run(clock, cluster.txn([], [Put(f"/registry/configmaps/default/c{i % 5}", b"v%d" % i)]))
    await run(clock, cluster.txn([], [Delete("/registry/configmaps/default/c0")]))
    # Tools read the files, which commit within the members' backend batch interval.
    await clock.run_until(lambda: all(m.machine.flushed_revision == 13 for m in cluster.members), 5)
    return cluster


def test_human_bytes_matches_etcdctl() -> None:
    assert [human_bytes(n) for n in (0, 9, 25_000, 1_234_567, 20_480)] == ["0 B", "9 B", "25 kB", "1.2 MB", "20 kB"]


async def test_etcdctl_reads_a_live_data_folder(tmp_path: Path) -> None:
    clock = VirtualClock()
    cluster = await filled(tmp_path, clock)
    leader = cluster.leader()
    assert leader is not None
    out = cli("etcdctl", "endpoint", "status", "-w", "table", "--data-dir", str(tmp_path))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[1].startswith("|    ENDPOINT     |        ID        |")  # real etcdctl 3.4's, byte for byte
    assert [h.strip() for h in lines[1].strip("|").split("|")] == [
        "ENDPOINT", "ID", "VERSION", "DB SIZE", "IS LEADER", "IS LEARNER", "RAFT TERM", "RAFT INDEX",
        "RAFT APPLIED INDEX", "ERRORS"]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines[3:-1]]
    assert len(rows) == 3 and [r[4] for r in rows].count("true") == 1
    assert rows[[m.name for m in cluster.members].index(leader.name)][4] == "true"
    assert {r[8] for r in rows} == {str(leader.applied)}
    data = json.loads(cli("etcdctl", "endpoint", "status", "-w", "json", "--data-dir", str(tmp_path)).stdout)
    assert {d["Status"]["header"]["revision"] for d in data} == {13}
    health = cli("etcdctl", "endpoint", "health", "--data-dir", str(tmp_path))
    assert health.returncode == 0 and health.stdout.count("is healthy: successfully committed proposal") == 3
    members = cli("etcdctl", "member", "list", "--data-dir", str(tmp_path)).stdout.splitlines()
    assert len(members) == 3 and all(", started, etcd-" in m for m in members)
    frozen = next(m for m in cluster.members if m is not leader)
    frozen.pause()  # as SIGSTOP: etcdctl's request to it times out
    paused = cli("etcdctl", "endpoint", "status", "--data-dir", str(tmp_path))
    assert paused.returncode == 1 and len(paused.stdout.splitlines()) == 2
    assert paused.stderr == f"Failed to get the status of endpoint {frozen.endpoint} (context deadline exceeded)\n"
    health = cli("etcdctl", "endpoint", "health", "--data-dir", str(tmp_path))
    assert health.returncode == 1
    assert f"{frozen.endpoint} is unhealthy: failed to commit proposal: context deadline exceeded" in health.stdout
    frozen.resume()
    assert cli("etcdctl", "endpoint", "status", "--data-dir", str(tmp_path)).returncode == 0
    await cluster.close()
    down = cli("etcdctl", "endpoint", "health", "--data-dir", str(tmp_path))
    assert down.returncode == 1 and "is unhealthy" in down.stdout
    bad = cli("etcdctl", "endpoint", "status", "--data-dir", str(tmp_path / "nope"))
    assert bad.returncode == 1 and "no etcd members" in bad.stderr


async def test_snapshot_round_trip(tmp_path: Path) -> None:
    clock = VirtualClock()
    src = tmp_path / "src"
    cluster = await filled(src, clock)
    snap = tmp_path / "backup.db"
    out = cli("snapshot", "save", str(snap), "--data-dir", str(src))  # while the cluster runs
    assert out.returncode == 0, out.stderr
    assert stat.S_IMODE(snap.stat().st_mode) == 0o600  # it holds every Secret: owner-only, as etcdctl's
    before = await run(clock, cluster.range("/", prefix_end("/")))
    await cluster.close()
    st = snapshot.status(snap)
    assert (st.revision, st.total_keys) == (13, 4)
    shown = cli("snapshot", "status", str(snap), "-w", "table")
    assert "| REVISION |" in shown.stdout.replace("  ", " ") or "REVISION" in shown.stdout
    assert json.loads(cli("snapshot", "status", str(snap), "-w", "json").stdout)["revision"] == 13

    dst = tmp_path / "restored"
    out = cli("snapshot", "restore", str(snap), "--data-dir", str(dst))
    assert out.returncode == 0, out.stderr
    again = await EtcdCluster.open(dst / "etcd", clock=clock, members=3, seed=2, auto_compact_interval=0)
    try:
        await clock.run_until(lambda: again.leader() is not None, 10, step=0.1)
        after = await run(clock, again.range("/", prefix_end("/")))
        assert after.revision == 13
        assert [(k.key, k.value, k.create_revision, k.mod_revision, k.version) for k in after.kvs] == [
            (k.key, k.value, k.create_revision, k.mod_revision, k.version) for k in before.kvs]
        res = await run(clock, again.txn([], [Put("/registry/configmaps/default/new", b"x")]))
        assert res.revision == 14
        await clock.run_until(lambda: all(m.machine.revision == 14 for m in again.members), 5)
    finally:
        await again.close()
    assert snapshot.status(snap).hash == st.hash
    again_out = cli("snapshot", "restore", str(snap), "--data-dir", str(dst))
    assert again_out.returncode == 1 and "already holds etcd members" in again_out.stderr


def test_snapshot_status_rejects_junk(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(ValueError, match="not a kconsole snapshot"):
        snapshot.status(junk)
    out = cli("snapshot", "status", str(tmp_path / "missing.db"))
    assert out.returncode == 1 and "no such snapshot file" in out.stderr


async def _cluster(data: Path, clock: VirtualClock) -> Cluster:
    cluster = Cluster(ClusterConfig(nodes=0, control_planes=3, http=False, data_dir=data, manifests=None), clock=clock)
    await run(clock, cluster.start())
    return cluster


async def _stopped(cluster: Cluster, clock: VirtualClock) -> None:
    await run(clock, cluster.stop())


async def test_tools_work_on_the_data_folder_a_cluster_ran_with(tmp_path: Path) -> None:
    """What a user types: ``--data-dir`` is the folder ``kconsole serve`` used (members in its etcd/)."""
    clock = VirtualClock()
    data = tmp_path / "data"
    cluster = await _cluster(data, clock)
    try:
        admin = cluster.api_client()
        await run(clock, admin.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                                       "data": {"k": "v"}}, namespace="default"))
        await run(clock, admin.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
                                       "data": {"password": base64.b64encode(b"hunter2").decode()}},
                                      namespace="default"))
        etcd = cluster.etcd
        assert etcd is not None
        top = etcd.revision
        await clock.run_until(lambda: all(m.machine.flushed_revision >= top for m in etcd.members), 5)
        status = cli("etcdctl", "endpoint", "status", "-w", "json", "--data-dir", str(data))
        assert status.returncode == 0, status.stderr
        assert len(json.loads(status.stdout)) == 3
        assert max(d["Status"]["header"]["revision"] for d in json.loads(status.stdout)) >= top
        snap = tmp_path / "backup.db"
        saved = cli("snapshot", "save", str(snap), "--data-dir", str(data))
        assert saved.returncode == 0, saved.stderr
    finally:
        await _stopped(cluster, clock)

    restored = tmp_path / "restored"
    out = cli("snapshot", "restore", str(snap), "--data-dir", str(restored))
    assert out.returncode == 0, out.stderr
    assert "encryption-key" in out.stdout
    assert cli("etcdctl", "member", "list", "--data-dir", str(restored)).stdout.count("etcd-") == 3
    shutil.copyfile(data / "encryption-key", restored / "encryption-key")
    again = await _cluster(restored, clock)
    try:
        admin = again.api_client()
        cm = await run(clock, admin.get("configmaps", "c", "default"))
        assert cm["data"] == {"k": "v"}
        secret = await run(clock, admin.get("secrets", "s", "default"))
        assert base64.b64decode(secret["data"]["password"]) == b"hunter2", secret
    finally:
        await _stopped(again, clock)


def test_tools_name_the_folder_they_expected(tmp_path: Path) -> None:
    out = cli("etcdctl", "endpoint", "status", "--data-dir", str(tmp_path))
    assert out.returncode == 1
    assert f"no etcd members in {tmp_path} (expected {tmp_path / 'etcd'}/etcd-0" in out.stderr


async def test_etcdctl_quorum_counts_from_live_members(tmp_path: Path) -> None:
    """Failures tolerated come from the members that answer: 1 with all three up, 0 with one down
    (the next failure loses quorum), and quorum LOST with two down; endpoint health adds the line."""
    clock = VirtualClock()
    cluster = await filled(tmp_path, clock)
    data = str(tmp_path)
    assert cli("etcdctl", "quorum", "--data-dir", data).stdout == "quorum ok: 3 alive / 2 needed / tolerates 1\n"
    followers = [m for m in cluster.members if m is not cluster.leader()]
    followers[0].pause()
    one_down = cli("etcdctl", "quorum", "--data-dir", data)
    assert one_down.returncode == 0 and one_down.stdout == "quorum ok: 2 alive / 2 needed / tolerates 0\n"
    health = cli("etcdctl", "endpoint", "health", "--data-dir", data)
    assert health.stderr.endswith("quorum ok: 2 alive / 2 needed / tolerates 0\n")
    followers[1].pause()
    lost = cli("etcdctl", "quorum", "--data-dir", data)
    assert lost.returncode == 1 and lost.stdout == "quorum LOST: 1 alive / 2 needed\n"
    as_json = json.loads(cli("etcdctl", "quorum", "-w", "json", "--data-dir", data).stdout)
    assert as_json == {"members": 3, "alive": 1, "needed": 2, "failuresTolerated": 0, "ok": False}
    for m in followers:
        m.resume()
    await cluster.close()
