"""``/readyz``, ``/livez`` and ``/healthz`` as kube-apiserver 1.32 answers them: every check in
upstream's order, each addressable, ``?exclude=``, and the etcd check following the store."""

from __future__ import annotations

from pathlib import Path

import pytest

from http_env import Cluster, start_cluster
from kconsole.api.server import APIServer
from kconsole.clock import VirtualClock
from kconsole.http import health
from kconsole.http.server import HTTPFront
from kconsole.store.facade import EtcdCluster

pytestmark = [pytest.mark.kubectl, pytest.mark.asyncio(loop_scope="module")]


async def test_readyz_verbose_lists_upstreams_checks_in_order(cluster: Cluster) -> None:
    out = (await cluster.kubectl("get", "--raw", "/readyz?verbose")).out
    lines = out.splitlines()
    assert lines[:6] == ["[+]ping ok", "[+]log ok", "[+]etcd ok", "[+]etcd-readiness ok", "[+]informer-sync ok",
                         "[+]poststarthook/start-apiserver-admission-initializer ok"]
    assert lines[-2:] == ["[+]shutdown ok", "readyz check passed"]
    assert [line[3:-3] for line in lines[:-1]] == list(health.READYZ)
    assert "[+]poststarthook/rbac/bootstrap-roles ok" in lines
    assert (await cluster.kubectl("get", "--raw", "/readyz")).out == "ok"


async def test_livez_and_healthz_leave_out_the_readiness_checks(cluster: Cluster) -> None:
    for endpoint in ("livez", "healthz"):
        lines = (await cluster.kubectl("get", "--raw", f"/{endpoint}?verbose")).out.splitlines()
        assert lines[-1] == f"{endpoint} check passed"
        names = [line[3:-3] for line in lines[:-1]]
        assert names == list(health.LIVEZ)
        assert "etcd-readiness" not in names and "informer-sync" not in names and "shutdown" not in names


async def test_each_check_is_addressable_and_excludable(cluster: Cluster) -> None:
    assert (await cluster.kubectl("get", "--raw", "/readyz/etcd")).out == "ok"
    assert (await cluster.kubectl("get", "--raw", "/readyz/poststarthook/rbac/bootstrap-roles")).out == "ok"
    assert (await cluster.kubectl("get", "--raw", "/livez/ping")).out == "ok"
    missing = await cluster.kubectl("get", "--raw", "/readyz/nonsense", check=False)
    assert missing.code == 1 and "NotFound" in missing.err
    out = (await cluster.kubectl("get", "--raw", "/readyz?verbose&exclude=etcd&exclude=nonsense")).out
    assert "[+]etcd excluded: ok" in out.splitlines()
    assert out.endswith('warn: some health checks cannot be excluded: no matches for "nonsense"\n'
                        "readyz check passed\n")


async def test_etcd_failure_fails_readyz_with_the_reason_withheld(tmp_path: Path) -> None:
    own = await start_cluster(tmp_path)
    try:
        await own.api.kv.close()
        refused = await own.api.loopback("create", "configmaps", "default", body={
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})
        assert refused.code >= 500
        failed = await own.kubectl("get", "--raw", "/readyz", check=False)
        assert failed.code == 1
        verbose = await own.kubectl("get", "--raw", "/readyz?verbose", check=False)
        assert "[-]etcd failed: reason withheld" in verbose.err
        assert "[-]etcd-readiness failed: reason withheld" in verbose.err
        assert "readyz check failed" in verbose.err
        single = await own.kubectl("get", "--raw", "/readyz/etcd", check=False)
        assert single.code == 1 and "internal server error" in single.err
        assert (await own.kubectl("get", "--raw", "/readyz/ping")).out == "ok"
    finally:
        await own.front.stop()
        await own.api.stop()


async def test_etcd_quorum_lost_fails_the_etcd_checks(tmp_path: Path) -> None:
    """With two of three members stopped, /readyz fails on etcd before any request has failed, as
    upstream's check probes etcd itself; it passes again once a member is back."""
    clock = VirtualClock()
    etcd = await EtcdCluster.open(tmp_path / "etcd", clock=clock, members=3, seed=3)
    await clock.run_until(lambda: etcd.leader() is not None, 10, step=0.1)
    api = APIServer(etcd, clock, seed=3)
    await api.start()
    front = HTTPFront(api, port=0, tls=True, data_dir=tmp_path / "data", clock=clock)
    await front.start()
    own = Cluster(api, front, clock, tmp_path)
    try:
        assert (await own.kubectl("get", "--raw", "/readyz/etcd")).out == "ok"
        stopped = [m for m in etcd.members if not m.is_leader][:1] + [m for m in etcd.members if m.is_leader]
        for member in stopped:
            await member.stop()
        verbose = await own.kubectl("get", "--raw", "/readyz?verbose", check=False)
        assert verbose.code == 1
        assert "[-]etcd failed: reason withheld" in verbose.err and "readyz check failed" in verbose.err
        single = await own.kubectl("get", "--raw", "/readyz/etcd", check=False)
        assert "quorum LOST: 1 alive / 2 needed" in single.err
        live = await own.kubectl("get", "--raw", "/livez?verbose", check=False)
        assert "[-]etcd failed: reason withheld" in live.err
    finally:
        await front.stop()
        await api.stop()
        await etcd.close()
