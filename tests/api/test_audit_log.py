"""The audit ring and its followers."""

from __future__ import annotations

from api_helpers import Client

from kconsole.api.audit import AuditLog
from kconsole.api.server import APIServer
from kconsole.api.types import AuditRecord


def record(seq: int) -> AuditRecord:
    return AuditRecord(seq=seq, time=0.0, user="u", verb="get", resource="pods", namespace="default", name="p",
                       code=200, latency_ms=0.1, stage=None, source="in-process")


def test_ring_keeps_the_newest() -> None:
    log = AuditLog(capacity=5)
    for i in range(12):
        log.add(record(i))
    assert [r.seq for r in log.recent(3)] == [9, 10, 11]
    assert [r.seq for r in log.recent(100)] == [7, 8, 9, 10, 11]


async def test_slow_follower_drops_instead_of_blocking() -> None:
    log = AuditLog(capacity=100, follower_capacity=3)
    follower = log.follow()
    for i in range(10):
        log.add(record(i))  # never blocks even though nobody reads
    assert follower.dropped == 7
    got = [await follower.__anext__() for _ in range(3)]
    assert [r.seq for r in got] == [0, 1, 2]
    log.add(record(10))
    assert (await follower.__anext__()).seq == 10
    follower.close()
    assert [r async for r in follower] == []


async def test_follow_sees_live_requests(api: APIServer, admin: Client) -> None:
    follower = api.audit_follow()
    await admin.do("get", "pods", namespace="default", name="x")
    rec = await follower.__anext__()
    assert (rec.verb, rec.resource, rec.name, rec.code, rec.stage) == ("get", "pods", "x", 404, "storage")
    follower.close()
