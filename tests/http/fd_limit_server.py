"""A served API under a lowered file-descriptor limit, for tests/http/test_http_bad_input.py.

``python fd_limit_server.py DIR SOFT_LIMIT MAX_CONNECTIONS`` (``auto``: the front's default) prints
one JSON line (port, admin token, the connection cap) once serving, serves until stdin closes, then
prints the listener's counters (evictions, failed accepts) as a second JSON line. Logs go to stderr.
"""

from __future__ import annotations

import asyncio
import json
import logging
import resource
import sys
from pathlib import Path

from kconsole.api.server import APIServer
from kconsole.clock import VirtualClock
from kconsole.http.server import HTTPFront
from kconsole.store.revlog import RevisionLog


async def main(folder: Path, max_connections: int | None) -> None:
    clock = VirtualClock()
    kv = await RevisionLog.open(folder / "store.db", clock=clock, synchronous="NORMAL")
    api = APIServer(kv, clock, seed=3)
    await api.start()
    front = HTTPFront(api, port=0, tls=False, data_dir=folder / "data", clock=clock, max_connections=max_connections)
    port = await front.start()
    print(json.dumps({"port": port, "token": front.admin_token, "max": front.max_connections}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    listener = front._listener
    assert listener is not None
    print(json.dumps({"evicted": listener.evicted, "accept_failures": listener.accept_failures,
                      "open": listener.open}), flush=True)
    await front.stop()
    await api.stop()
    await kv.close()


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    soft = int(sys.argv[2])
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    asyncio.run(main(Path(sys.argv[1]), None if sys.argv[3] == "auto" else int(sys.argv[3])))
