"""kill -9 a process running a 3-member cluster mid-stream: members answer before their SQLite
commits (the Raft WAL is what is durable), yet after reopening every acknowledged write is there,
revisions are gap-free and every member holds the same history."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from kconsole.clock import VirtualClock
from kconsole.store.facade import EtcdCluster
from kconsole.store.kv import prefix_end

ROOT = Path(__file__).resolve().parents[2]


async def run(clock: VirtualClock, aw: Any, timeout: float = 30.0) -> Any:
    task = asyncio.ensure_future(aw)
    await clock.run_until(task.done, timeout, step=0.05)
    return task.result()


async def test_acknowledged_writes_survive_kill_9_of_the_whole_cluster(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("etcd_crash_writer.py")), str(tmp_path), "16"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
    )
    acked: dict[str, int] = {}
    try:
        assert proc.stdout is not None
        for n, line in enumerate(proc.stdout, start=1):
            key, revision = line.split()
            acked[key] = max(acked.get(key, 0), int(revision))
            if n == 1500:
                proc.send_signal(signal.SIGKILL)
                break
        rest, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL, err
    for line in rest.splitlines(keepends=True):
        if line.endswith("\n"):  # a line cut short by the kill was never acknowledged to anyone
            key, revision = line.split()
            acked[key] = max(acked.get(key, 0), int(revision))
    top = max(acked.values())

    clock = VirtualClock()
    cluster = await EtcdCluster.open(tmp_path, clock=clock, members=3, seed=3, fsync=True, auto_compact_interval=0)
    await clock.run_until(lambda: cluster.leader() is not None, 10, step=0.1)
    got = await run(clock, cluster.range("/crash/", prefix_end("/crash/")))
    have = {kv.key: kv.mod_revision for kv in got.kvs}
    assert all(have.get(k, 0) >= r for k, r in acked.items())
    assert got.revision >= top
    await clock.run_until(lambda: len({m.machine.revision for m in cluster.members}) == 1, 10, step=0.05)
    for m in cluster.members:  # every member holds every revision, each exactly once
        history = await run(clock, m.machine.kv.read_history("/crash/", prefix_end("/crash/"), 0, 1 << 62, 1 << 30))
        assert [e.kv.mod_revision for _, e in history] == list(range(1, got.revision + 1))
    await cluster.close()
