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


def test_rows_become_the_records_they_describe_once_read() -> None:
    log = AuditLog(capacity=4)
    rows = [(i, 1.5, "u", "create", "pods", "ns", f"p{i}", 201, 0.25, None, "in-process", "") for i in range(6)]
    for row in rows:
        log.add_row(row)
    log.add(record(6))
    assert len(log) == 4
    got = log.recent(10)
    assert got == [AuditRecord(*row) for row in rows[3:]] + [record(6)]
    assert all(type(r) is AuditRecord for r in got)
    assert log.recent(2)[0] is got[-2]  # made once, kept in place
    assert log.recent(0) == []


async def test_a_follower_gets_rows_as_records() -> None:
    log = AuditLog(capacity=10)
    follower = log.follow()
    log.add_row((1, 0.0, "u", "get", "pods", None, "x", 404, 0.1, "storage", "http", "not found"))
    rec = await follower.__anext__()
    assert type(rec) is AuditRecord and (rec.seq, rec.code, rec.stage, rec.message) == (1, 404, "storage", "not found")
    follower.close()
