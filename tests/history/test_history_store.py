"""The store keeps history beside compaction: a property test against a model, the members' agreement
on revision times and history floors, and history across a restart."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest

from kconsole.clock import VirtualClock
from kconsole.store.facade import EtcdCluster
from kconsole.store.kv import CompactedError, Delete, Put
from kconsole.store.revlog import RevisionLog

KEYS = [f"/registry/pods/ns/p{i}" for i in range(8)]


def _state(kvs: list[Any]) -> dict[str, bytes]:
    return {kv.key: kv.value for kv in kvs}


async def _check(log: RevisionLog, model: list[dict[str, bytes]], times: list[float], rng: random.Random) -> None:
    floor, current = log.history_floor, log.revision
    assert current == len(model) - 1
    for rev in range(1, current + 1):
        if rev < floor:
            with pytest.raises(CompactedError):
                await log.range("/registry/", "/registry0", revision=rev, history=True)
            continue
        got = await log.range("/registry/", "/registry0", revision=rev, history=True)
        assert _state(got.kvs) == model[rev], f"state at revision {rev}"
        single = await log.range(KEYS[rev % len(KEYS)], revision=rev, history=True)
        assert _state(single.kvs) == {k: v for k, v in model[rev].items() if k == KEYS[rev % len(KEYS)]}
        if rev < log.compact_revision:  # API clients still get upstream's answer
            with pytest.raises(CompactedError):
                await log.range("/registry/", "/registry0", revision=rev)
        assert log.time_of(rev) == times[rev]
        assert log.revision_at(times[rev]) >= rev
    for _ in range(30):
        after = rng.randint(max(floor - 1, 0), current)
        upto = rng.randint(after, current)
        events = await log.changes("/registry/", "/registry0", after, upto)
        state = dict(model[after])
        for event in events:
            assert after < event.kv.mod_revision <= upto
            prev = state.get(event.kv.key)
            assert (event.prev_kv.value if event.prev_kv else None) == prev
            if event.type == "PUT":
                state[event.kv.key] = event.kv.value
            else:
                del state[event.kv.key]
        assert state == model[upto]
    if floor > 2:
        with pytest.raises(CompactedError):
            await log.changes("/registry/", "/registry0", floor - 2, current)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
async def test_state_at_every_kept_revision_equals_the_model(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    clock = VirtualClock()
    log = await RevisionLog.open(tmp_path / "member.db", clock=clock, synchronous="NORMAL")
    model: list[dict[str, bytes]] = [{}]
    times: list[float] = [0.0]
    try:
        for step in range(250):
            roll = rng.random()
            state = dict(model[-1])
            if roll < 0.55:
                key, value = rng.choice(KEYS), b"v%d" % step
                await log.txn([], [Put(key, value)])
                state[key] = value
            elif roll < 0.75:
                key = rng.choice(KEYS)
                await log.txn([], [Delete(key)])
                if key not in state:
                    await clock.advance(rng.choice([0.0, 1.0]))
                    continue  # deleting nothing writes no revision
                del state[key]
            elif roll < 0.9:
                a, b = rng.sample(KEYS, 2)
                await log.txn([], [Put(a, b"a%d" % step), Put(b, b"b%d" % step)])
                state[a], state[b] = b"a%d" % step, b"b%d" % step
            else:
                if log.revision > log.compact_revision:
                    target = rng.randint(log.compact_revision + 1, log.revision)
                    floor = rng.randint(min(log.history_floor, target), target)
                    await log.compact(target, floor)
                await clock.advance(rng.choice([0.0, 0.5, 2.0]))
                continue
            model.append(state)
            times.append(clock.now())
            await clock.advance(rng.choice([0.0, 0.25, 1.0, 5.0]))
        await _check(log, model, times, rng)
        floor = log.history_floor
        await log.close()
        log = await RevisionLog.open(tmp_path / "member.db", clock=clock, synchronous="NORMAL")
        assert log.history_floor == floor
        await _check(log, model, times, rng)
    finally:
        await log.close()


async def test_history_floor_follows_retention_and_size(tmp_path: Path) -> None:
    clock = VirtualClock()
    log = await RevisionLog.open(tmp_path / "member.db", clock=clock, synchronous="NORMAL")
    try:
        for i in range(100):
            await log.txn([], [Put("/registry/pods/ns/a", b"x" * 100)])
            await clock.advance(10.0)
        now = clock.now()
        # 200 s of history: the revision written at now - 200 s (revision N at N-1 ten-second steps) is the floor.
        assert log.floor_for(now, 200.0, 0) == log.revision_at(now - 200.0) == 81
        # A size bound smaller than that wins.
        per_write = log.history_bytes() // 100
        assert log.floor_for(now, 200.0, per_write * 5) > 81
        assert log.floor_for(now, 0, 0) == 0
        await log.compact(90, log.floor_for(now, 200.0, 0))
        assert log.history_floor == 81 and log.compact_revision == 90
        assert log.history_bytes() < per_write * 25
    finally:
        await log.close()


async def _run(clock: VirtualClock, aw: Any, timeout: float = 30.0) -> Any:
    task = asyncio.ensure_future(aw)
    await clock.run_until(task.done, timeout, step=0.05)
    return task.result()


async def test_members_agree_on_times_and_floor_and_history_survives_restart(tmp_path: Path) -> None:
    clock = VirtualClock()

    async def open_cluster() -> EtcdCluster:
        cluster = await EtcdCluster.open(tmp_path, clock=clock, members=3, seed=3, auto_compact_interval=0,
                                         history_retention=30.0)
        await clock.run_until(lambda: cluster.leader() is not None, 10, step=0.1)
        return cluster

    cluster = await open_cluster()
    for i in range(40):
        await _run(clock, cluster.txn([], [Put(f"/registry/pods/ns/p{i % 4}", b"v%d" % i)]))
        await clock.advance(1.0)
    await _run(clock, cluster.compact(35))
    await clock.run_until(lambda: all(m.machine.revision == 40 and m.machine.log.compact_revision == 35
                                      for m in cluster.members), 5)
    logs = [m.machine.log for m in cluster.members]
    assert len({log.history_floor for log in logs}) == 1
    floor = logs[0].history_floor
    assert 1 < floor < 35
    assert len({tuple(log.time_of(r) for r in range(floor, 41)) for log in logs}) == 1
    with pytest.raises(CompactedError):
        await _run(clock, cluster.range("/registry/pods/", "/registry/pods0", revision=floor))
    before = await _run(clock, cluster.history_range("/registry/pods/", "/registry/pods0", floor))
    times = [cluster.time_of(r) for r in range(floor, 41)]
    await _run(clock, cluster.close())

    cluster = await open_cluster()
    try:
        assert cluster.history_bounds()[0] == floor
        again = await _run(clock, cluster.history_range("/registry/pods/", "/registry/pods0", floor))
        assert _state(again.kvs) == _state(before.kvs)
        assert [cluster.time_of(r) for r in range(floor, 41)] == times
        with pytest.raises(CompactedError):
            await _run(clock, cluster.history_range("/registry/pods/", "/registry/pods0", floor - 1))
    finally:
        await _run(clock, cluster.close())
