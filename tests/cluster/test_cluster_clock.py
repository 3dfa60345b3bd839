"""Simulated time survives a restart: a cluster run faster than real time does not go back in time."""

from __future__ import annotations

from pathlib import Path

from kconsole.cluster import CLOCK_FILE, Cluster, ClusterConfig
from kconsole.clock import RealClock

DAY = 86_400.0


def config(data_dir: Path, **kw: object) -> ClusterConfig:
    return ClusterConfig(nodes=0, control_planes=1, http=False, manifests=None, data_dir=data_dir,
                         **kw)  # type: ignore[arg-type]


async def test_a_restarted_cluster_resumes_the_simulated_time_it_had_reached(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    ahead = RealClock().now() + DAY  # as after a day's worth of --speed 60 running
    (data / CLOCK_FILE).write_text(f"{ahead}\n")
    cluster = Cluster(config(data))
    assert cluster.clock.now() >= ahead
    await cluster.start()
    try:
        admin = cluster.api_client()
        ns = await admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "later"}})
        assert ns["metadata"]["creationTimestamp"] >= cluster.clock.rfc3339(ahead)
    finally:
        await cluster.stop()
    assert float((data / CLOCK_FILE).read_text()) >= ahead
    assert Cluster(config(data)).clock.now() >= ahead


async def test_time_never_moves_back_and_an_ephemeral_or_unreadable_record_is_ignored(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / CLOCK_FILE).write_text(f"{RealClock().now() - DAY}\n")
    assert Cluster(config(data)).clock.now() > RealClock().now() - 60
    (data / CLOCK_FILE).write_text("not a time\n")
    assert Cluster(config(data)).clock.now() > RealClock().now() - 60
    (data / CLOCK_FILE).write_text(f"{RealClock().now() + DAY}\n")
    assert Cluster(config(data, ephemeral=True)).clock.now() < RealClock().now() + 60
