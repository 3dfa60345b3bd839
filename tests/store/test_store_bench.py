"""`kconsole bench store` measures what a user's writes cost: every write carries its own value."""

from __future__ import annotations

import argparse
from pathlib import Path

from kconsole.bench.common import steal_pct
from kconsole.bench.store import add_arguments, run
from kconsole.clock import VirtualClock
from kconsole.store.kv import prefix_end
from kconsole.store.revlog import RevisionLog


async def test_bench_store_writes_a_distinct_value_of_the_asked_size_per_write(tmp_path: Path) -> None:
    p = argparse.ArgumentParser()
    add_arguments(p)
    args = p.parse_args(["--concurrency", "4", "--writes", "40", "--single-writes", "10", "--value-size", "64",
                         "--data-dir", str(tmp_path), "--bare", "--synchronous", "NORMAL", "--default-gc"])
    out = await run(args)
    assert (out["store"], out["members"], out["durability"]) == ("revlog (bare, not what serve runs)", 1, "NORMAL")
    assert out["writes"] == 40 and out["concurrency"] == 4 and out["writes_per_s"] > 0
    assert out["single_writer_writes_per_s"] > 0 and out["p99_ms"] >= out["p50_ms"] > 0
    if Path("/proc/stat").exists():
        assert 0 <= out["cpu_steal_pct"] <= 100

    log = await RevisionLog.open(tmp_path / "bench-store.db", clock=VirtualClock())
    try:
        prefix = "/registry/bench/"
        current = await log.range(prefix, prefix_end(prefix))
    finally:
        await log.close()
    assert current.count == 50  # each writer's few writes all go to keys of their own
    assert {len(kv.value) for kv in current.kvs} == {64}
    assert len({kv.value for kv in current.kvs}) == 50


async def test_bench_store_runs_on_the_store_serve_runs_unless_told(tmp_path: Path) -> None:
    p = argparse.ArgumentParser()
    add_arguments(p)
    small = ["--concurrency", "4", "--writes", "20", "--single-writes", "4", "--value-size", "64", "--default-gc"]
    served = await run(p.parse_args([*small, "--data-dir", str(tmp_path / "a")]))
    assert (served["store"], served["members"], served["durability"]) == ("etcd", 3, "synced")
    assert served["failover_s"] is not None and served["writes_per_s"] > 0
    lone = await run(p.parse_args([*small, "--data-dir", str(tmp_path / "b"), "--members", "1", "--no-sync"]))
    assert (lone["store"], lone["members"], lone["durability"]) == ("etcd", 1, "unsynced")
    assert lone["failover_s"] is None


async def test_bench_store_with_member_processes_prints_the_in_process_anchor_and_the_ratio(tmp_path: Path) -> None:
    p = argparse.ArgumentParser()
    add_arguments(p)
    out = await run(p.parse_args(["--concurrency", "4", "--writes", "20", "--single-writes", "4", "--value-size", "64",
                                  "--default-gc", "--member-processes", "--data-dir", str(tmp_path)]))
    assert (out["store"], out["members"], out["durability"], out["member_processes"]) == ("etcd", 3, "synced", True)
    assert out["failover_s"] is not None and out["members_cpu_us_per_write"] >= 0
    assert set(out["in_process"]) >= {"writes_per_s", "p99_ms", "failover_s"}
    assert out["writes_per_s_ratio"] == round(out["writes_per_s"] / out["in_process"]["writes_per_s"], 2)


def test_steal_is_the_hypervisors_share_of_the_cpu_time_between_two_readings() -> None:
    before = [100, 0, 50, 800, 10, 0, 0, 40]
    after = [400, 0, 150, 1000, 10, 0, 0, 140]  # 700 ticks passed, 100 of them stolen
    assert steal_pct(before, after) == 14.3
    assert steal_pct(before, before) == 0.0
    assert steal_pct(None, after) is None and steal_pct(before, after[:5]) is None
