"""Seeded randomised fault schedules over real members, the simulated network and virtual time.

Each schedule runs writers and a watcher through the facade while members crash and restart,
pause, get partitioned, lose messages and hand over leadership, then heals everything and checks
the properties etcd's robustness suite checks:

- no acknowledged write is lost (every member ends up holding it at its acknowledged revision);
- at most one leader per term;
- a leader cut off in a minority never advances its commit index;
- members that caught up hold the identical, gap-free history;
- a watch never goes back in time, never repeats and never skips a revision across leader changes.

``KCONSOLE_RAFT_SCHEDULES=N`` runs N schedules instead of the CI's 200.
"""

from __future__ import annotations

import asyncio
import os
import random

import pytest
from etcd_sim import Sim, make_sim

from kconsole.store.kv import Compare, Get, Put, StoreError, prefix_end

SCHEDULES = int(os.environ.get("KCONSOLE_RAFT_SCHEDULES", "200"))


async def run_schedule(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.choice((3, 3, 3, 5))
    # Half the schedules deliver messages at once (in order), half with delay and reordering jitter.
    delay, jitter = rng.choice(((0.0, 0.0), (0.002, 0.003)))
    sim = make_sim(n, seed, delay=delay, jitter=jitter)
    clock, cluster = sim.clock, sim.cluster
    await cluster.start()
    acked: list[tuple[str, bytes, int]] = []
    watched: list[tuple[int, str]] = []
    watch_batches: list[int] = []
    frozen: dict[str, int] = {}  # leader cut off in a minority -> its last log index at the cut

    async def writer(i: int) -> None:
        key = f"/k/{rng.randrange(6)}"
        value = f"{seed}-{i}".encode()
        try:
            if rng.random() < 0.3:
                cur = await cluster.range(key)
                mod = cur.kvs[0].mod_revision if cur.kvs else 0
                res = await cluster.txn([Compare(key, "mod", "=", mod)], [Put(key, value)], [Get(key)])
                if not res.succeeded:
                    return
            else:
                res = await cluster.txn([], [Put(key, value)])
            acked.append((key, value, res.revision))
        except StoreError:
            pass

    async def watcher() -> None:
        async for resp in cluster.watch("/k/", prefix_end("/k/"), start_revision=1):
            assert not resp.canceled, f"seed {seed}: watch canceled"
            for e in resp.events:
                watched.append((e.kv.mod_revision, e.kv.key))
            if resp.events:
                watch_batches.append(resp.events[0].kv.mod_revision)

    watch_task = asyncio.ensure_future(watcher())
    tasks: list[asyncio.Future[None]] = []
    steps = rng.randrange(20, 35)
    for i in range(steps):
        action = rng.random()
        members = cluster.members
        if action < 0.55:
            tasks.append(asyncio.ensure_future(writer(i)))
        elif action < 0.62:
            running = [m for m in members if m.running]
            if len(running) > 1:
                await rng.choice(running).stop()
        elif action < 0.70:
            stopped = [m for m in members if not m.running]
            if stopped:
                await rng.choice(stopped).start()
        elif action < 0.76:
            side = rng.sample([m.name for m in members], rng.randrange(1, n // 2 + 1))
            cluster.partition(side)
            frozen.clear()
            leader = cluster.leader()
            if leader is not None and leader.name in side and leader.node is not None:
                frozen[leader.name] = leader.node.log.last_index
        elif action < 0.82:
            cluster.heal()
            frozen.clear()
        elif action < 0.86:
            m = rng.choice(members)
            m.pause() if not m.paused else m.resume()
        elif action < 0.90:
            cluster.set_network(drop=rng.choice((0.0, 0.0, 0.1, 0.3)))
        elif action < 0.94:
            target = rng.choice(members)
            if target.running and not target.paused:
                tasks.append(asyncio.ensure_future(_quiet(cluster.move_leader(target.name))))
        else:
            await cluster.kill_leader()
        await clock.advance(rng.choice((0.01, 0.05, 0.2, 0.5, 1.0)))
        sim.observe()
        for name, last in frozen.items():
            m = cluster.member(name)
            if m.running and m.node is not None:
                # Entries it appended after the cut can never commit while it is cut off.
                assert m.node.log.committed <= last, f"seed {seed}: cut-off leader {name} committed"

    # Heal everything and let the cluster converge.
    cluster.heal()
    cluster.set_network(drop=0.0)
    for m in cluster.members:
        if m.paused:
            m.resume()
        if not m.running:
            await m.start()
    await clock.run_until(lambda: all(t.done() for t in tasks), 30, step=0.5)
    tail = asyncio.ensure_future(cluster.txn([], [Put("/k/final", b"end")]))
    await clock.run_until(lambda: tail.done(), 30, step=0.5)
    final = tail.result().revision
    await clock.run_until(
        lambda: all(m.machine is not None and m.machine.revision == final for m in cluster.members)
        and len({w[0] for w in watched}) == final, 30, step=0.5)

    # At most one leader per term.
    for term, names in sim.leaders_by_term.items():
        assert len(names) == 1, f"seed {seed}: term {term} had leaders {names}"
    # Identical gap-free histories.
    histories = []
    for m in cluster.members:
        disk = sim.disks[m.name]
        revs = sorted({e.kv.mod_revision for e in disk.events})
        assert revs == list(range(1, final + 1)), f"seed {seed}: {m.name} history has gaps"
        histories.append([(e.kv.mod_revision, e.kv.key, e.kv.value) for e in disk.events])
    assert all(h == histories[0] for h in histories), f"seed {seed}: histories differ"
    # No acknowledged write lost.
    for key, value, rev in acked:
        for m in cluster.members:
            got = await sim.disks[m.name].range(key, revision=rev)
            assert got.kvs and got.kvs[0].value == value and got.kvs[0].mod_revision == rev, (
                f"seed {seed}: acknowledged {key}={value!r}@{rev} missing on {m.name}")
    # The watch: in order, no repeats, no gaps.
    assert watched == sorted(watched), f"seed {seed}: watch went back in time"
    assert len(set(watched)) == len(watched), f"seed {seed}: watch repeated an event"
    assert sorted({w[0] for w in watched}) == list(range(1, final + 1)), f"seed {seed}: watch skipped"
    watch_task.cancel()
    await cluster.close()


async def _quiet(aw) -> None:  # type: ignore[no-untyped-def]
    try:
        await aw
    except StoreError:
        pass


@pytest.mark.parametrize("seed", range(SCHEDULES))
async def test_fault_schedule(seed: int) -> None:
    await run_schedule(seed)
