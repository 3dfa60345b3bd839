"""The whole cluster on real etcd members (``--etcd local``): a chain reaction, quorum loss and the
faults acting on the real processes.

Real etcd runs on real time: the tests wait for it with bounded polling (generous limits), and
assert only on outcomes, never on how long anything took.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from kconsole.client import StatusError
from kconsole.cluster import Cluster
from kconsole.store import etcdlocal

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from e2e_env import boot, deployment, running, shutdown, vclock  # noqa: E402

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.skipif(shutil.which("etcd") is None,
                       reason="no etcd binary on PATH (CI installs Debian's etcd-server)"),
]


@pytest.fixture(scope="module", autouse=True)
def patient_elections() -> Iterator[None]:
    """Raft timing for a busy shared machine: a member the scheduler leaves waiting is not deposed."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(etcdlocal, "HEARTBEAT_MS", 300)
        patch.setattr(etcdlocal, "ELECTION_MS", 3000)
        yield


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster(tmp_path_factory: pytest.TempPathFactory, patient_elections: None) -> AsyncIterator[Cluster]:
    c = await boot(tmp_path_factory.mktemp("real-etcd") / "data", nodes=3, control_planes=3, etcd="local",
                   pod_delay_factor=0.1)
    try:
        yield c
    finally:
        await shutdown(c)


async def until(predicate, what: str, limit: float = 120.0) -> None:  # type: ignore[no-untyped-def]
    """Poll ``predicate`` (async) every 0.1 s of real time, up to ``limit`` real seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while not await predicate():
        if loop.time() > deadline:
            raise AssertionError(f"{what}: not within {limit:g} s")
        await asyncio.sleep(0.1)


async def test_the_store_is_real_etcd_with_kube_apiserver_keys(cluster: Cluster) -> None:
    etcd = cluster.etcd
    assert etcd is not None and etcd.local is not None

    async def all_answer() -> bool:
        statuses = await etcd.member_status()
        return all(s.version.startswith("3.") for s in statuses) and sum(s.is_leader for s in statuses) == 1

    await until(all_answer, "three members answering, one of them the leader")
    raw = await etcd._call("/v3/kv/range", {"key": "L3JlZ2lzdHJ5L21pbmlvbnMv", "range_end": "L3JlZ2lzdHJ5L21pbmlvbnMw",
                                             "count_only": True})  # /registry/minions/ as kube-apiserver keys nodes
    assert int(raw.get("count", 0)) == 6


async def test_etcdctl_reads_the_real_members(cluster: Cluster) -> None:
    import json
    import os
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    rows: list[dict] = []

    async def answered() -> bool:  # a member the busy machine keeps from answering in time: ask again
        out = await asyncio.to_thread(subprocess.run, [sys.executable, "-m", "kconsole", "etcdctl", "endpoint",
                                                       "status", "-w", "json", "--data-dir", str(cluster.data_dir)],
                                      capture_output=True, text=True, env=env, timeout=60)
        rows[:] = json.loads(out.stdout or "[]")
        return out.returncode == 0

    await until(answered, "etcdctl endpoint status answered by every member")
    assert len(rows) == 3 and all(r["Status"]["version"].startswith("3.") for r in rows)
    assert len({r["Status"]["leader"] for r in rows}) == 1
    assert sum(r["Status"]["leader"] == r["Status"]["header"]["member_id"] for r in rows) == 1


async def test_chain_reaction_deployment_to_running_pods(cluster: Cluster) -> None:
    clock = vclock(cluster)
    await cluster.api_client().create(deployment("web", "nginx:1.25", 3))

    async def three_running() -> bool:
        return len(await running(cluster, "default", "app=web")) == 3

    await clock.run_until(three_running, timeout=600, step=0.5)
    rss = await cluster.api_client().list_all("replicasets", "default")
    assert [rs["metadata"]["name"].startswith("web-") for rs in rss] == [True]


async def test_quorum_loss_refuses_writes_and_loses_nothing_acknowledged(cluster: Cluster) -> None:
    etcd = cluster.etcd
    assert etcd is not None and etcd.local is not None
    admin = cluster.api_client()
    acknowledged: list[str] = []
    for i in range(5):
        await admin.create(_cm(f"before-{i}"))
        acknowledged.append(f"before-{i}")

    stopped = [m for m in etcd.members if not m.is_leader][:1] + [m for m in etcd.members if m.is_leader]
    for m in stopped:
        await m.stop()

    async def refused() -> bool:
        try:
            await admin.create(_cm("during"))
        except StatusError as err:
            assert err.code in (500, 503, 504), err
            assert "etcdserver:" in str(err) or "etcd" in str(err), err
            return True
        acknowledged.append("during")  # taken before the members' loss was noticed: it must survive
        return False

    await until(refused, "writes refused once 2 of 3 members are down")
    for m in stopped:
        await m.start()

    async def all_there() -> bool:
        try:
            names = {c["metadata"]["name"] for c in await admin.list_all("configmaps", "default")}
        except StatusError:
            return False
        return set(acknowledged) <= names

    await until(all_there, "every acknowledged write back after quorum returns")
    await until(lambda: _leader(cluster), "a leader again")
    await admin.create(_cm("after"))


def _cm(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"},
            "data": {"name": name}}


async def _leader(cluster: Cluster) -> bool:
    assert cluster.etcd is not None
    await cluster.etcd.poll()
    return cluster.etcd.leader() is not None


async def test_faults_act_on_the_real_processes(cluster: Cluster) -> None:
    assert cluster.faults is not None
    etcd = cluster.etcd
    assert etcd is not None

    async def all_three() -> bool:  # members an earlier test restarted may still be rejoining
        statuses = await etcd.member_status()
        return len(statuses) == 3 and not any(s.errors for s in statuses) and await _leader(cluster)

    await until(all_three, "three members answering and a leader")
    killed = await cluster.faults.apply("etcd-kill-leader", "leader")
    victim = etcd.member(killed.target)
    assert not victim.running
    await until(lambda: _leader(cluster), "a new leader after SIGKILL")
    await cluster.faults.heal(killed.id)
    assert victim.running

    paused = await cluster.faults.apply("etcd-pause", "etcd-1")
    assert etcd.member("etcd-1").paused
    await cluster.faults.heal(paused.id)
    assert not etcd.member("etcd-1").paused

    cut = await cluster.faults.apply("etcd-partition", "etcd-2")
    assert etcd.network.isolated

    async def written() -> bool:
        # A write the cut-off member took while it still believed it led times out, as etcd's do;
        # the majority elects another leader and takes the retry.
        try:
            await cluster.api_client().create(_cm("while-cut"))
        except StatusError as err:
            assert err.code in (409, 503, 504), err
            return err.code == 409
        return True

    await until(written, "a write taken by the majority while etcd-2 is cut off")

    async def majority_leads() -> bool:
        await etcd.poll()
        lead = etcd.leader()
        return lead is not None and lead.name != "etcd-2"

    await until(majority_leads, "a leader on the majority's side")
    await cluster.faults.heal(cut.id)
    assert not etcd.network.isolated


async def test_the_referee_watches_a_chaos_run_on_real_etcd(tmp_path: Path) -> None:
    """A seeded chaos schedule (its faults include killing the etcd leader) over a busy workload, on
    real members: the referee's checks (acknowledged writes, consistent reads, watch resumption,
    compare-and-swap, one Lease holder, pods bound once) all hold."""
    from kconsole.drills.chaos import ChaosRunner

    runner = ChaosRunner(1, 120.0)
    cluster = runner.prepare(tmp_path / "run", etcd="local")
    try:
        result = await runner.run()
    finally:
        stopping = asyncio.ensure_future(cluster.stop())
        await runner.clock.run_until(stopping.done, timeout=120, step=0.1)
    assert not result.setup_errors
    report = result.referee.to_dict() if hasattr(result.referee, "to_dict") else result.referee
    assert report["passed"], report["violations"]
    assert any("etcd-" in line for line in runner.log.lines), runner.log.lines
