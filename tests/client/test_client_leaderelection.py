"""Leader election over a real Lease with three electors on the virtual clock."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from client_helpers import Partition

from kconsole.client import LeaderElector

LEASE, RENEW, RETRY = 15.0, 10.0, 2.0


class Replica:
    """One competing process: its own link to the server, an elector and a record of its work."""

    def __init__(self, env: Any, identity: str, *, release: bool = False) -> None:
        self.identity = identity
        self.link = Partition(env.entry)
        self.working = False
        self.started = 0
        self.stopped = 0
        self.leaders_seen: list[str] = []
        self.elector = LeaderElector(
            env.new_client(self.link), env.clock, namespace="kube-system", name="kube-scheduler",
            identity=identity, lease_duration=LEASE, renew_deadline=RENEW, retry_period=RETRY,
            on_started_leading=self.work, on_stopped_leading=self.on_stopped,
            on_new_leader=self.leaders_seen.append, release_on_cancel=release)
        self.task = asyncio.create_task(self.elector.run())

    async def work(self) -> None:
        self.started += 1
        self.working = True
        try:
            await asyncio.Event().wait()
        finally:
            self.working = False

    def on_stopped(self) -> None:
        self.stopped += 1


async def lease_spec(env: Any) -> dict[str, Any]:
    return (await env.client.get("leases", "kube-scheduler", "kube-system"))["spec"]


def leaders(replicas: list[Replica]) -> list[Replica]:
    return [r for r in replicas if r.elector.is_leader]


async def stop_all(replicas: list[Replica]) -> None:
    for r in replicas:
        await r.elector.stop()
        await asyncio.wait_for(r.task, 5)


async def test_exactly_one_leader_and_failover_after_expiry(env) -> None:
    replicas = [Replica(env, f"cp-{i}") for i in range(3)]
    await env.clock.run_until(lambda: len(leaders(replicas)) == 1, timeout=10, step=0.5)
    first = leaders(replicas)[0]
    spec = await lease_spec(env)
    assert spec["holderIdentity"] == first.identity
    assert spec["leaseDurationSeconds"] == 15 and spec["leaseTransitions"] == 0
    assert spec["renewTime"].endswith("Z") and "." in spec["renewTime"], "renewTime is a MicroTime"

    for _ in range(30):  # a minute of renewals: never two leaders, the holder never changes
        await env.clock.advance(2)
        assert leaders(replicas) == [first]
    assert first.working and first.started == 1
    assert all(r.elector.leader_identity == first.identity for r in replicas)
    assert all(r.leaders_seen == [first.identity] for r in replicas)
    renewed = await lease_spec(env)
    assert renewed["renewTime"] > spec["renewTime"] and renewed["acquireTime"] == spec["acquireTime"]

    stopped_at = env.clock.now()
    await first.elector.stop()
    await asyncio.wait_for(first.task, 5)
    assert not first.working and first.stopped == 1
    rest = [r for r in replicas if r is not first]
    took = await env.clock.run_until(lambda: len(leaders(rest)) == 1, timeout=60, step=0.25)
    # A candidate waits until the record has not changed for the lease duration by its own
    # observation (seen up to one retry after the last renewal), then wins on its next retry.
    assert LEASE - RETRY <= took <= LEASE + 2 * RETRY, took
    second = leaders(rest)[0]
    spec2 = await lease_spec(env)
    assert spec2["holderIdentity"] == second.identity
    assert spec2["leaseTransitions"] == 1
    assert env.clock.now() - stopped_at == pytest.approx(took)
    assert second.working and len(leaders(replicas)) == 1
    await env.clock.advance(4)
    assert all(r.elector.leader_identity == second.identity for r in rest)
    await stop_all(rest)


async def test_release_on_cancel_hands_over_without_waiting_for_expiry(env) -> None:
    replicas = [Replica(env, f"cm-{i}", release=True) for i in range(3)]
    await env.clock.run_until(lambda: len(leaders(replicas)) == 1, timeout=10, step=0.5)
    first = leaders(replicas)[0]
    await first.elector.stop()
    await asyncio.wait_for(first.task, 5)
    assert (await lease_spec(env))["holderIdentity"] == ""
    rest = [r for r in replicas if r is not first]
    took = await env.clock.run_until(lambda: len(leaders(rest)) == 1, timeout=30, step=0.25)
    assert took <= RETRY + 0.25
    assert (await lease_spec(env))["leaseTransitions"] == 1
    await stop_all(rest)


async def test_leader_cut_off_from_the_api_steps_down_then_others_take_over(env) -> None:
    replicas = [Replica(env, f"s-{i}") for i in range(3)]
    await env.clock.run_until(lambda: len(leaders(replicas)) == 1, timeout=10, step=0.5)
    first = leaders(replicas)[0]
    await first.link.cut()
    lost = await env.clock.run_until(lambda: not first.elector.is_leader, timeout=30, step=0.25)
    assert lost <= RENEW + RETRY, "a leader that cannot renew stops within the renew deadline"
    assert not first.working and first.stopped == 1
    rest = [r for r in replicas if r is not first]
    await env.clock.run_until(lambda: len(leaders(rest)) == 1, timeout=30, step=0.25)
    assert first.elector.is_leader is False
    first.link.heal()
    await env.clock.advance(20)
    assert len(leaders(replicas)) == 1 and not first.elector.is_leader, "the old leader rejoins as a candidate"
    assert first.elector.leader_identity == leaders(rest)[0].identity
    await stop_all(replicas)


async def test_leader_renews_without_reading_the_lease_and_recovers_from_a_conflict(env) -> None:
    replica = Replica(env, "solo")
    await env.clock.run_until(lambda: replica.elector.is_leader, timeout=10, step=0.5)
    seen: list[str] = []
    forward = replica.link.entry.handle

    async def counting(request: Any) -> Any:
        if request.resource == "leases":
            seen.append(request.verb)
        return await forward(request)

    replica.link.entry = type("Counted", (), {"handle": staticmethod(counting)})()
    await env.clock.advance(20)
    assert seen.count("get") == 0, "client-go's fast path: the leader writes the Lease it last wrote"
    assert 9 <= seen.count("update") <= 11, seen

    lease = await env.client.get("leases", "kube-scheduler", "kube-system")
    lease["metadata"].setdefault("annotations", {})["touched"] = "by someone else"
    await env.client.update(lease)  # the leader's copy is now stale: its next write conflicts
    seen.clear()
    await env.clock.advance(4)
    assert replica.elector.is_leader and replica.working
    assert "get" in seen, "after a conflict the leader reads the Lease again (the slow path)"
    spec = await lease_spec(env)
    assert spec["holderIdentity"] == "solo" and spec["leaseTransitions"] == 0
    await stop_all([replica])


def test_invalid_timings_are_rejected(env) -> None:
    async def noop() -> None:
        return None

    with pytest.raises(ValueError, match="lease_duration"):
        LeaderElector(env.client, env.clock, namespace="kube-system", name="x", identity="a",
                      lease_duration=5, renew_deadline=10, on_started_leading=noop)
    with pytest.raises(ValueError, match="identity"):
        LeaderElector(env.client, env.clock, namespace="kube-system", name="x", identity="",
                      on_started_leading=noop)
