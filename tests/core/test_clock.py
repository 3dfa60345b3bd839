"""The clock is what makes simulated minutes cost no wall time, deterministically."""

from __future__ import annotations

import asyncio

import pytest

from kconsole.clock import RealClock, VirtualClock


async def test_virtual_sleep_takes_no_wall_time_and_orders_wakeups() -> None:
    clock = VirtualClock()
    order: list[tuple[str, float]] = []

    async def sleeper(name: str, delay: float) -> None:
        await clock.sleep(delay)
        order.append((name, clock.now() - clock_start))

    clock_start = clock.now()
    tasks = [asyncio.create_task(sleeper(n, d)) for n, d in [("c", 300), ("a", 10), ("b", 50)]]
    await clock.advance(299)
    assert order == [("a", 10), ("b", 50)]
    await clock.advance(1)
    assert order[-1] == ("c", 300)
    await asyncio.gather(*tasks)


async def test_same_deadline_fires_in_creation_order() -> None:
    clock = VirtualClock()
    seen: list[int] = []
    for i in range(5):
        clock.call_later(5, lambda i=i: seen.append(i))
    await clock.advance(5)
    assert seen == [0, 1, 2, 3, 4]


async def test_cancelled_timer_does_not_fire() -> None:
    clock = VirtualClock()
    seen: list[str] = []
    handle = clock.call_later(1, lambda: seen.append("x"))
    handle.cancel()
    await clock.advance(2)
    assert seen == []


async def test_timeout_raises_in_simulated_time_only() -> None:
    clock = VirtualClock()

    async def slow() -> None:
        async with clock.timeout(30):
            await clock.sleep(60)

    task = asyncio.create_task(slow())
    await clock.advance(29)
    assert not task.done()
    await clock.advance(1)
    with pytest.raises(TimeoutError):
        await task


async def test_timeout_does_not_fire_when_work_finishes() -> None:
    clock = VirtualClock()
    result = await clock.wait_for(asyncio.sleep(0, result="done"), timeout=1)
    assert result == "done"
    await clock.advance(5)


async def test_run_until_reports_simulated_seconds() -> None:
    clock = VirtualClock()
    flag = {"set": False}
    clock.call_later(42, lambda: flag.update(set=True))
    took = await clock.run_until(lambda: flag["set"], timeout=100, step=1)
    assert took == 42
    with pytest.raises(TimeoutError):
        await clock.run_until(lambda: False, timeout=10)


async def test_io_tracking_makes_settle_wait_for_thread_work() -> None:
    clock = VirtualClock()
    loop = asyncio.get_running_loop()
    done: list[int] = []

    async def threaded() -> None:
        with clock.io():
            value = await loop.run_in_executor(None, sum, range(100_000))
        done.append(value)

    asyncio.create_task(threaded())
    await clock.settle()
    assert done == [sum(range(100_000))]


async def test_real_clock_pause_step_and_speed() -> None:
    clock = RealClock(speed=1000.0, start=0.0)
    clock.pause()
    frozen = clock.now()
    assert clock.now() == frozen
    fired: list[float] = []
    clock.call_later(60, lambda: fired.append(clock.now()))
    clock.step(61)
    assert fired and fired[0] >= 60
    clock.resume()
    clock.set_speed(10.0)
    assert clock.speed == 10.0
    with pytest.raises(ValueError):
        clock.set_speed(0)


def test_a_fast_clock_keeps_real_seconds_for_server_timers() -> None:
    """Request timeouts run on ``wall``: at speed 10, paused or stepped, a second there stays a real one."""
    sim = RealClock(speed=10.0)
    wall = sim.wall
    assert wall is not sim and wall.speed == 1.0 and wall.wall is wall and sim.wall is wall
    sim.pause()
    sim.step(3600)
    assert not wall.paused and abs(wall.now() - RealClock().now()) < 60
    virtual = VirtualClock()
    assert virtual.wall is virtual  # tests that drive time drive the server's timers too
