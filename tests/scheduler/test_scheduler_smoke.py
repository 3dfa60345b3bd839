from __future__ import annotations

from tests.scheduler.conftest import Env, node, pod


async def test_pods_get_bound_and_scheduled_events(env: Env) -> None:
    for i in range(3):
        await env.admin.create(node(f"n{i}"))
    s = await env.scheduler()
    for i in range(5):
        await env.admin.create(pod(f"p{i}"))
    placed = await env.wait_bound(*[f"p{i}" for i in range(5)])
    assert set(placed.values()) <= {"n0", "n1", "n2"}
    await s.flush()
    evs = await env.events("p0", "Scheduled")
    assert evs and evs[0]["message"] == f"Successfully assigned default/p0 to {placed['p0']}"
