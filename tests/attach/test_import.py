"""``kconsole import`` from a served cluster in another process into a new folder; the twin it
opens (started here on a virtual clock) has the same nodes and objects, and its controllers make
the Deployment's pods again."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from kconsole.client.https import connect
from kconsole.cluster import Cluster, ClusterConfig
from kconsole.clock import VirtualClock
from kconsole.importer import ImportFailed, copy_cluster, node_entry

ROOT = Path(__file__).resolve().parents[2]


async def _drive(clock: VirtualClock, aw, limit: float = 300.0):
    task = asyncio.ensure_future(aw)
    spent = 0.0
    while not task.done():
        assert spent <= limit, f"not done within {limit} simulated seconds"
        await clock.advance(0.1)
        spent += 0.1
    return await task


async def _until(clock: VirtualClock, pred, what: str, limit: float = 300.0) -> None:
    spent = 0.0
    while not await pred():
        assert spent <= limit, f"not within {limit} simulated seconds: {what}"
        await clock.advance(1.0)
        spent += 1.0


def _spec(obj: dict) -> dict:
    return obj.get("spec") or {}


async def test_import_round_trips(served, tmp_path: Path) -> None:
    twin = tmp_path / "twin"
    out = subprocess.run([sys.executable, "-m", "kconsole", "import", "--kubeconfig", str(served.kubeconfig),
                          "--with-secrets", str(twin)], capture_output=True, text=True, timeout=120,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert "nodes (3): control-plane, worker-1, worker-2" in out.stdout
    assert (twin / ".kconsole" / "nodes.yaml").exists() and (twin / "ns-shop.yaml").exists()

    source = await connect(served.kubeconfig)
    try:
        src_nodes = {n["metadata"]["name"]: n for n in await source.list_all("nodes")}
        src = {(kind, name): await source.get(kind, name, ns) for kind, name, ns in (
            ("deployments", "web", "shop"), ("services", "web", "shop"), ("configmaps", "settings", "shop"),
            ("poddisruptionbudgets", "web", "shop"), ("priorityclasses", "shop-high", None),
            ("pods", "huge", "shop"))}
    finally:
        await source.entry.close()

    clock = VirtualClock()
    config = ClusterConfig(http=False, manifests=twin, data_dir=twin / ".kconsole", control_planes=1)
    config.load_node_list()
    config.validate()
    cluster = Cluster(config, clock=clock)
    await _drive(clock, cluster.start())
    try:
        client = cluster.api_client()

        async def synced() -> bool:
            pods = await client.list_all("pods", "shop")
            running = [p for p in pods if p["metadata"]["name"].startswith("web-")
                       and (p.get("status") or {}).get("phase") == "Running"]
            return len(running) == 2 and any(p["metadata"]["name"] == "huge" for p in pods)

        await _until(clock, synced, "the twin's Deployment runs 2 pods and the bare pod is copied")
        nodes = {n["metadata"]["name"]: n for n in await client.list_all("nodes")}
        assert sorted(nodes) == sorted(src_nodes)
        for name, node in nodes.items():
            theirs = src_nodes[name]
            assert node["status"]["allocatable"] == theirs["status"]["allocatable"], name
            assert node["status"]["capacity"] == theirs["status"]["capacity"], name
            assert node["metadata"]["labels"] == theirs["metadata"]["labels"], name
            assert _spec(node).get("taints") == _spec(theirs).get("taints"), name
        for (kind, name), theirs in src.items():
            ns = theirs["metadata"].get("namespace")
            ours = await client.get(kind, name, ns)
            if kind == "services":
                assert {k: v for k, v in _spec(ours).items() if k not in ("clusterIP", "clusterIPs")} == \
                    {k: v for k, v in _spec(theirs).items() if k not in ("clusterIP", "clusterIPs")}
            elif kind == "pods":
                assert ours["spec"]["containers"][0]["resources"] == theirs["spec"]["containers"][0]["resources"]
            elif kind == "priorityclasses":
                assert ours["value"] == theirs["value"]
            else:
                assert _spec(ours) == _spec(theirs), kind
    finally:
        await _drive(clock, cluster.stop(), limit=60)


def test_node_entry_keeps_what_the_scheduler_sees() -> None:
    node = {"metadata": {"name": "gpu-1", "labels": {"kubernetes.io/hostname": "gpu-1", "pool": "gpu",
                                                      "topology.kubernetes.io/zone": "eu-1a"}},
            "spec": {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"},
                                {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute",
                                 "timeAdded": "2024-01-01T00:00:00Z"}]},
            "status": {"capacity": {"cpu": "8", "memory": "32Gi", "pods": "110", "nvidia.com/gpu": "2",
                                    "hugepages-2Mi": "0"},
                       "allocatable": {"cpu": "7910m", "memory": "31Gi", "pods": "110", "nvidia.com/gpu": "2"}}}
    assert node_entry(node) == {
        "name": "gpu-1", "cpu": "8", "memory": "32Gi", "pods": 110, "extended": {"nvidia.com/gpu": "2"},
        "allocatable": {"cpu": "7910m", "memory": "31Gi"}, "zone": "eu-1a", "region": "",
        "labels": {"pool": "gpu"}, "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]}


async def test_import_refuses_a_folder_in_use(served, tmp_path: Path) -> None:
    (tmp_path / "x.yaml").write_text("{}")
    client = await connect(served.kubeconfig)
    try:
        with pytest.raises(ImportFailed, match="is not empty"):
            await copy_cluster(client, tmp_path)
        with pytest.raises(ImportFailed, match="no such namespace"):
            await copy_cluster(client, tmp_path / "new", namespaces=["nope"])
    finally:
        await client.entry.close()
