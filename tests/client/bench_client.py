"""Figures for the client's hot paths (not a test): ``python tests/client/bench_client.py [--e2e]``.

* workqueue: keys/s through add -> get -> sync -> done with 4 workers, heavy duplicate adds;
* informer: watch events/s applied to a 10,000-pod cache with the namespace, node and owner
  indexes and two enqueueing handlers;
* ``--e2e``: 10,000 pods in a real API server; informer initial sync time (paged list of 500)
  and the time for 10,000 status updates to reach the informer's handlers.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from kconsole.client import Client, SharedInformer, WorkQueue, index_by_node_name, index_by_owner_uid, run_workers
from kconsole.clock import RealClock


def make_pod(i: int, rv: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"web-{i}", "namespace": f"ns-{i % 50}", "uid": f"uid-{i}",
                         "resourceVersion": str(rv),
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"rs-{i % 100}", "uid": f"rs-{i % 100}",
                                              "controller": True}]},
            "spec": {"nodeName": f"node-{i % 1000}", "containers": [{"name": "app", "image": "nginx"}]},
            "status": {"phase": "Running"}}


async def bench_workqueue(keys: int = 10_000, adds: int = 200_000) -> dict[str, Any]:
    q = WorkQueue(RealClock(), name="bench")
    synced = 0

    async def sync(key: str) -> None:
        nonlocal synced
        synced += 1
        await asyncio.sleep(0)

    runner = asyncio.create_task(run_workers(q, 4, sync))
    t0 = time.perf_counter()
    for i in range(adds):
        q.add(f"ns/k{i % keys}")
        if i % 1000 == 999:
            await asyncio.sleep(0)
    await q.shutdown_with_drain()
    while len(q) or q.processing:
        await asyncio.sleep(0)
    dt = time.perf_counter() - t0
    runner.cancel()
    await asyncio.gather(runner, return_exceptions=True)
    return {"workqueue_adds_per_s": round(adds / dt), "workqueue_syncs": synced,
            "workqueue_syncs_per_s": round(synced / dt)}


async def bench_informer_apply(pods: int = 10_000, rounds: int = 5) -> dict[str, Any]:
    class _NoClient:
        clock = RealClock()

    inf = SharedInformer(_NoClient(), "pods", indexers={"node": index_by_node_name,  # type: ignore[arg-type]
                                                        "owner": index_by_owner_uid})
    queue: set[str] = set()
    inf.add_event_handler(on_add=lambda o: queue.add(o["metadata"]["name"]),
                          on_update=lambda old, new: queue.add(new["metadata"]["name"]),
                          on_delete=lambda o: queue.add(o["metadata"]["name"]))
    inf.add_event_handler(on_update=lambda old, new: None)
    events = [{"type": "ADDED", "object": make_pod(i, i + 1)} for i in range(pods)]
    for r in range(rounds):
        events += [{"type": "MODIFIED", "object": make_pod(i, pods * (r + 1) + i + 1)} for i in range(pods)]
    t0 = time.perf_counter()
    for ev in events:
        inf._apply_event(ev)
    dt = time.perf_counter() - t0
    assert len(inf) == pods and len(inf.list_by_index("node", "node-7")) == pods // 1000
    return {"informer_events": len(events), "informer_events_per_s": round(len(events) / dt)}


async def bench_e2e(pods: int = 10_000) -> dict[str, Any]:
    from kconsole.api.server import APIServer
    from kconsole.api.types import UserInfo
    from kconsole.store.revlog import RevisionLog

    clock = RealClock()
    with tempfile.TemporaryDirectory() as tmp:
        kv = await RevisionLog.open(Path(tmp) / "db.sqlite", clock=clock, synchronous="NORMAL")
        api = APIServer(kv, clock, seed=1)
        await api.start()
        client = Client(api, api.tokens.issue(UserInfo("admin", ("system:masters",))), clock)
        sem = asyncio.Semaphore(64)

        async def create(i: int) -> None:
            async with sem:
                p = make_pod(i, 0)
                del p["metadata"]["resourceVersion"], p["metadata"]["uid"], p["status"]
                p["metadata"]["namespace"] = "default"
                await client.create(p)

        await asyncio.gather(*(create(i) for i in range(pods)))
        inf = SharedInformer(client, "pods", indexers={"node": index_by_node_name})
        seen = 0
        done = asyncio.Event()

        def on_update(old: dict[str, Any], new: dict[str, Any]) -> None:
            nonlocal seen
            seen += 1
            if seen == pods:
                done.set()

        inf.add_event_handler(on_update=on_update)
        t0 = time.perf_counter()
        await inf.start()
        await inf.wait_synced()
        sync_s = time.perf_counter() - t0
        objs = inf.list()
        t1 = time.perf_counter()

        async def touch(o: dict[str, Any]) -> None:
            async with sem:
                await client.patch("pods", o["metadata"]["name"], {"status": {"phase": "Succeeded"}},
                                   "default", subresource="status")

        await asyncio.gather(*(touch(o) for o in objs))
        await done.wait()
        upd_s = time.perf_counter() - t1
        await inf.stop()
        await api.stop()
        await kv.close()
    return {"e2e_pods": pods, "informer_initial_sync_s": round(sync_s, 3),
            "status_patches_seen_by_informer_s": round(upd_s, 3), "informer_watches": inf.watches,
            "informer_relists": inf.relists}


async def main(e2e: bool) -> None:
    figures: dict[str, Any] = {}
    figures.update(await bench_workqueue())
    figures.update(await bench_informer_apply())
    if e2e:
        figures.update(await bench_e2e())
    width = max(len(k) for k in figures)
    for k, v in figures.items():
        print(f"{k:<{width}}  {v}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--e2e", action="store_true")
    asyncio.run(main(parser.parse_args().e2e))
