"""A kubelet's stop (and so the fleet's and the cluster's) ends even when its API writes cannot.

A partitioned kubelet's event recorder retries every 10 simulated seconds, twelve times; the stop
used to flush that queue first, so with the clock standing still (or a swamped API server) it never
returned. Now the queued events are dropped, as a crash drops them."""

from __future__ import annotations

import asyncio

from node_env import NodeEnv


async def test_stop_of_a_partitioned_kubelet_with_queued_events_returns(env: NodeEnv) -> None:
    fleet = await env.fleet(workers=2)
    kubelet = fleet.kubelets["worker-1"]
    node = await env.admin.get("nodes", "worker-1")
    assert kubelet.recorder is not None
    await kubelet.recorder.flush()  # its start's node events
    kubelet.partition()
    for i in range(5):
        kubelet.recorder.event(node, "Normal", "Probe", f"queued while cut off {i}")
    await asyncio.sleep(0)
    assert kubelet.recorder.queued == 5
    stopping = asyncio.ensure_future(fleet.stop())
    done, _ = await asyncio.wait({stopping}, timeout=30)  # a hang guard only: the stop is not timed
    assert stopping in done and stopping.exception() is None
    assert not kubelet.running and kubelet.recorder.queued == 0
    assert not [e for e in await env.events("worker-1") if e["reason"] == "Probe"]
    assert not fleet.kubelets["worker-2"].running
