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


async def test_a_pod_with_scheduling_gates_waits_until_the_last_gate_is_removed(env: Env) -> None:
    await env.admin.create(node("n0"))
    s = await env.scheduler()
    await env.admin.create(pod("gated", schedulingGates=[{"name": "example.com/quota"}, {"name": "example.com/ok"}]))
    await env.admin.create(pod("free"))
    await env.wait_bound("free")
    await env.clock.advance(30)
    assert await env.node_of("gated") == ""
    await env.admin.patch("pods", "gated", [{"op": "remove", "path": "/spec/schedulingGates/0"}], "default",
                          patch_type="json")
    await env.clock.advance(30)
    assert await env.node_of("gated") == ""
    await s.flush()
    assert await env.events("gated", "FailedScheduling") == []
    await env.admin.patch("pods", "gated", [{"op": "remove", "path": "/spec/schedulingGates"}], "default",
                          patch_type="json")
    assert await env.wait_bound("gated") == {"gated": "n0"}
