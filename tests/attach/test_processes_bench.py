"""`kconsole bench converge --processes` prints the one-process anchor beside the split run, and
the memory of every process: the workers' own peaks, read while they run, added to the cluster's."""

from __future__ import annotations

import argparse

from kconsole.bench.converge import add_arguments, run


async def test_converge_with_processes_prints_the_anchor_the_ratios_and_every_process_peak() -> None:
    p = argparse.ArgumentParser()
    add_arguments(p)
    out = await run(p.parse_args(["--nodes", "2", "--pods", "4", "--processes", "2", "--members", "1",
                                  "--no-sync", "--timeout", "120"]))
    assert out["processes"] == 2 and out["nodes"] == 2 and out["pods"] == 4
    assert out["nodes_ready_s"] > 0 and out["pods_running_s"] > 0, out
    assert out["one_process"]["nodes_ready_s"] > 0 and out["one_process"]["pods_running_s"] > 0
    assert out["pods_running_s_ratio"] == round(out["pods_running_s"] / out["one_process"]["pods_running_s"], 2)
    # A worker process is a whole Python with kconsole imported: tens of MB at least.
    assert out["worker_peak_rss_mb"] > 20
    assert out["all_processes_peak_rss_mb"] >= out["peak_rss_mb"] + out["worker_peak_rss_mb"]
