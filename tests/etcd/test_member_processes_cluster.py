"""A cluster whose etcd members run as processes (``member_processes: true``): objects are written,
read and watched through the API server as ever, and the etcd faults of the catalog act on the
processes (kill the leader is a SIGKILL; healing starts a new process that replays its files).
Real processes on the real clock: the waits are wall-clock bounds on conditions."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from test_member_processes import until

from kconsole.cluster import Cluster, ClusterConfig, ConfigError
from kconsole.clock import RealClock
from kconsole.store.remote import RemoteMember


def _configmap(name: str, value: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"},
            "data": {"v": value}}


async def test_objects_and_etcd_faults_through_the_api_server(tmp_path: Path) -> None:
    config = ClusterConfig(nodes=1, control_planes=3, member_processes=True, http=False, data_dir=tmp_path / "data",
                           manifests=None, addons=())
    cluster = Cluster(config, clock=RealClock())
    await cluster.start()
    try:
        etcd = cluster.etcd
        assert etcd is not None and all(isinstance(m, RemoteMember) and m.running for m in etcd.members)
        assert "in their own processes" in cluster.store_mode.describe()
        client = cluster.api_client()
        created = await client.create(_configmap("before", "1"))
        seen: list[str] = []

        async def watch() -> None:
            async with client.watch("configmaps", "default", resource_version=created["metadata"]["resourceVersion"]) \
                    as events:
                async for ev in events:
                    if ev["type"] != "BOOKMARK":
                        seen.append(f'{ev["type"]} {ev["object"]["metadata"]["name"]}')

        watcher = asyncio.ensure_future(watch())
        await client.create(_configmap("second", "2"))
        await until(lambda: "ADDED second" in seen, "the watch through the API server sees the write")

        fault = await cluster.faults.apply("etcd-kill-leader", "leader")
        killed = etcd.member(fault.target)
        assert not killed.running and killed.process.returncode == -9  # type: ignore[attr-defined]

        async def written() -> bool:
            try:
                await client.create(_configmap("after", "3"))
                return True
            except Exception:  # noqa: BLE001 - 503/504 while the members elect a new leader
                return False

        await until(written, "a write is acknowledged by the next leader")
        got = await client.get("configmaps", "before", "default")
        assert got["data"] == {"v": "1"}
        await until(lambda: "ADDED after" in seen, "the watch follows the new leader")
        await cluster.faults.heal(fault.id)
        assert killed.running and killed.process.returncode is None  # type: ignore[attr-defined]

        follower = next(m for m in etcd.members if not m.is_leader)
        cut = await cluster.faults.apply("etcd-partition", follower.name)
        assert etcd.quorum().ok and etcd.quorum().alive == 2
        await client.create(_configmap("during-cut", "4"))
        await cluster.faults.heal(cut.id)
        revision = etcd.revision

        async def caught_up() -> bool:
            return (await follower.status()).revision >= revision

        await until(caught_up, "the healed member catches up over its sockets")
        watcher.cancel()
        names = sorted(o["metadata"]["name"] for o in await client.list_all("configmaps", "default"))
        assert names == ["after", "before", "during-cut", "second"]
    finally:
        await cluster.stop()


def test_the_config_key_and_where_it_does_not_apply(tmp_path: Path) -> None:
    (tmp_path / "on.yaml").write_text("member-processes: true\n")
    config = ClusterConfig.from_file(tmp_path / "on.yaml")
    assert config.member_processes and config.store_mode().processes
    assert not config.store_mode(virtual_clock=True).processes  # tests' virtual clock: members stay in process
    (tmp_path / "real.yaml").write_text("member-processes: true\netcd: local\n")
    with pytest.raises(ConfigError, match="member-processes runs kconsole's own etcd members"):
        ClusterConfig.from_file(tmp_path / "real.yaml")
