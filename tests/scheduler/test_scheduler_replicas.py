"""Leader-elected replicas: only the leader schedules; stopping it hands over after the Lease expires."""

from __future__ import annotations

import random

from kconsole.scheduler.replicas import SchedulerReplica
from tests.scheduler.conftest import Env, node, pod


async def test_only_the_leader_schedules_and_stopping_it_hands_over(env: Env) -> None:
    await env.admin.create(node("n0"))
    replicas = [SchedulerReplica(env.sched_client, env.clock, identity=f"cp-{i}", rng=random.Random(i))
                for i in range(2)]
    for r in replicas:
        await r.start()
    try:
        await env.clock.run_until(lambda: any(r.is_leader for r in replicas), 20)
        leader = next(r for r in replicas if r.is_leader)
        other = next(r for r in replicas if r is not leader)
        assert leader.scheduler is not None and other.scheduler is None
        await env.admin.create(pod("first"))
        await env.wait_bound("first")
        lease = await env.admin.get("leases", "kube-scheduler", "kube-system")
        assert lease["spec"]["holderIdentity"] == leader.identity

        await leader.stop()
        assert not leader.running and leader.scheduler is None
        await env.admin.create(pod("second"))
        took = await env.clock.run_until(lambda: other.is_leader, 30)
        assert took <= 15 + 2 + 1  # lease duration plus a retry period
        await env.wait_bound("second")
        lease = await env.admin.get("leases", "kube-scheduler", "kube-system")
        assert lease["spec"]["holderIdentity"] == other.identity

        await leader.start()
        await env.clock.advance(10)
        assert leader.running and not leader.is_leader and other.is_leader
    finally:
        for r in replicas:
            await r.stop()
