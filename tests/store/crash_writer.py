"""Crash-test subject: concurrent writers that print every acknowledged write, until killed.

Usage: python crash_writer.py DB_PATH SYNCHRONOUS WRITERS
Each line on stdout is ``key revision`` of a txn the log acknowledged, flushed at once.
"""

from __future__ import annotations

import asyncio
import sys

from kconsole.clock import RealClock
from kconsole.store.revlog import RevisionLog


async def main(path: str, synchronous: str, writers: int) -> None:
    log = await RevisionLog.open(path, clock=RealClock(), synchronous=synchronous)
    value = b"v" * 512

    async def writer(n: int) -> None:
        i = 0
        while True:
            key = f"/crash/{n}/{i % 10}"
            revision = await log.put(key, value)
            sys.stdout.write(f"{key} {revision}\n")
            sys.stdout.flush()
            i += 1

    await asyncio.gather(*(writer(n) for n in range(writers)))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
