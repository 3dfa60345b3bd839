"""The scheduler benchmark counts to the flush, not just to the last binding."""

from __future__ import annotations

import argparse

from kconsole.bench.scheduler import add_arguments, run


async def test_bench_reports_binding_and_end_to_end_rates_with_every_record_accounted_for() -> None:
    p = argparse.ArgumentParser()
    add_arguments(p)
    out = await run(p.parse_args(["--nodes", "20", "--pods", "60"]))
    assert out["records_total"] == 60
    assert out["records_written"] + out["records_superseded_unwritten"] == 60
    assert out["events_written"] + out["events_dropped"] == 60
    assert out["pods_per_s_end_to_end"] <= out["pods_per_s"]
    assert out["phases"]["flush_records_events"] >= out["phases"]["flush_records"] >= 0
    assert out["record_bytes_avg"] > 0
    assert out["gc_policy"] is True
    off = await run(p.parse_args(["--nodes", "20", "--pods", "30", "--no-records", "--default-gc"]))
    assert off["records_total"] == 0 and off["record_bytes_avg"] == 0
    assert off["gc_policy"] is False
