"""Crash-test subject: concurrent writers on a 3-member fsync'd cluster, printing every acknowledged
write until killed.

Usage: python etcd_crash_writer.py DATA_DIR WRITERS
Each line on stdout is ``key revision`` of a txn the cluster acknowledged, flushed at once.
"""

from __future__ import annotations

import asyncio
import sys

from kconsole.clock import RealClock
from kconsole.store.facade import EtcdCluster
from kconsole.store.kv import Put, StoreError


async def main(folder: str, writers: int) -> None:
    cluster = await EtcdCluster.open(folder, clock=RealClock(), members=3, seed=3, fsync=True, auto_compact_interval=0)
    while cluster.leader() is None:
        await asyncio.sleep(0.01)
    value = b"v" * 512

    async def writer(n: int) -> None:
        i = 0
        while True:
            key = f"/crash/{n}/{i % 10}"
            try:
                result = await cluster.txn([], [Put(key, value)])
            except StoreError:
                continue
            sys.stdout.write(f"{key} {result.revision}\n")
            sys.stdout.flush()
            i += 1

    await asyncio.gather(*(writer(n) for n in range(writers)))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
