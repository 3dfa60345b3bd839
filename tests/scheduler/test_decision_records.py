"""Decision records: the compact layout expands back to per-node rows, retention keeps exactly the
set it promises, and records wait for bindings."""

from __future__ import annotations

import asyncio
from typing import Any

from kconsole.scheduler.cache import NodeInfo
from kconsole.scheduler.decisions import DecisionRecorder, build_record, node_rows
from kconsole.scheduler.framework import UNRESOLVABLE, UNSCHEDULABLE, FilterOutcome, ScoreOutcome, Status
from kconsole.scheduler.matchers import label_selector, node_selector_term, node_selector_terms
from tests.scheduler.conftest import Env


def _record(name: str, attempt: int = 1, **kw: Any) -> dict[str, Any]:
    return build_record(namespace="default", pod_name=name, pod_uid="u", attempt=attempt, scheduler_name="s",
                        time="2026-01-01T00:00:00Z", result=kw.pop("result", "Scheduled"), node="", message="",
                        total_nodes=0, filtered=None, scored=None, **kw)


def test_filter_failures_are_a_reason_table_and_expand_per_node() -> None:
    fit = Status(UNSCHEDULABLE, "Insufficient cpu", plugin="NodeResourcesFit")
    cordon = Status(UNRESOLVABLE, "node(s) were unschedulable", plugin="NodeUnschedulable")
    failed = {f"n{i}": (cordon if i == 3 else Status(UNSCHEDULABLE, "Insufficient cpu", plugin="NodeResourcesFit"))
              for i in range(6)}
    ok = [NodeInfo("a"), NodeInfo("b")]
    scored = ScoreOutcome(ok, [("NodeResourcesFit", 1), ("TaintToleration", 3)], [[10, 20], [0, 0]],
                          [[10, 20], [100, 100]], [[10, 20], [300, 300]], [310, 320], [])
    rec = build_record(namespace="default", pod_name="web", pod_uid="u", attempt=2, scheduler_name="s",
                       time="t", result="Scheduled", node="b", message="", total_nodes=8,
                       filtered=FilterOutcome(ok, failed, 8), scored=scored,
                       filter_plugins=["NodeUnschedulable", "NodeResourcesFit"])
    flt = rec["status"]["filter"]
    assert flt["reasons"] == [
        {"plugin": "NodeResourcesFit", "code": "Unschedulable", "reasons": ["Insufficient cpu"]},
        {"plugin": "NodeUnschedulable", "code": "UnschedulableAndUnresolvable",
         "reasons": ["node(s) were unschedulable"]}]
    assert flt["failed"] == {"nodes": [f"n{i}" for i in range(6)], "reason": [0, 0, 0, 1, 0, 0]}
    assert "rejected" not in flt
    rows = {r["node"]: r for r in node_rows(rec)}
    assert rows["n3"]["plugin"] == "NodeUnschedulable" and rows["n3"]["code"] == "UnschedulableAndUnresolvable"
    assert rows["n5"]["filter"] == "NodeResourcesFit: Insufficient cpu" and not rows["n5"]["passed"]
    assert rows["b"]["total"] == 320 and rows["b"]["scores"]["TaintToleration"] == {
        "raw": 0, "normalized": 100, "weighted": 300}
    fit_only = build_record(namespace="default", pod_name="x", pod_uid="u", attempt=1, scheduler_name="s",
                            time="t", result="Unschedulable", node="", message="m", total_nodes=2,
                            filtered=FilterOutcome([], {"p": fit, "q": fit}, 2), scored=None)
    assert fit_only["status"]["filter"]["failed"] == {"nodes": ["p", "q"], "reason": 0}


def test_node_rows_reads_records_written_before_the_reason_table() -> None:
    old = {"status": {"filter": {"rejected": [
        {"node": "n1", "plugin": "TaintToleration", "code": "UnschedulableAndUnresolvable",
         "reasons": ["node(s) had untolerated taint {a: b}"]}]}}}
    [row] = node_rows(old)
    assert row["node"] == "n1" and row["plugin"] == "TaintToleration" and not row["passed"]


def test_selectors_follow_the_shared_object_semantics() -> None:
    assert label_selector(None)({"a": "b"}) is False
    assert label_selector({})({"a": "b"}) is True
    expr = label_selector({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}]})
    assert expr({}) and expr({"tier": "web"}) and not expr({"tier": "db"})
    gt = node_selector_terms([{"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["8"]}]}])
    assert gt({"cores": "16"}, "n") and not gt({"cores": "8"}, "n") and not gt({"cores": "x"}, "n")
    by_name = node_selector_terms([{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]}])
    assert by_name({}, "n2") and not by_name({}, "n1")
    invalid = node_selector_term({"matchExpressions": [{"key": "a", "operator": "Near", "values": ["b"]}]})
    assert not invalid({"a": "b"}, "n")  # upstream's lazy-error selector: an invalid term never matches


async def _names(env: Env) -> list[str]:
    return sorted(r["metadata"]["name"] for r in await env.admin.list_all("schedulingdecisions", "default"))


async def test_records_wait_for_bindings_and_retention_keeps_the_last_ones(env: Env) -> None:
    idle = asyncio.Event()  # a binding is in flight
    rec = DecisionRecorder(env.sched_client, env.clock, retain=3, idle=idle)
    for i in range(10):
        rec.add(_record(f"p{i}"), f"default/p{i}")
    await env.clock.advance(5)
    assert await _names(env) == [] and rec.written == 0  # bindings first
    idle.set()
    await rec.flush()
    assert await _names(env) == ["p7-1", "p8-1", "p9-1"]
    assert (rec.written, rec.superseded, rec.deleted) == (3, 7, 0)  # retired before written: never created
    for i in range(10, 12):
        rec.add(_record(f"p{i}"), f"default/p{i}")
    await rec.flush()
    assert await _names(env) == ["p10-1", "p11-1", "p9-1"]
    assert (rec.written, rec.deleted) == (5, 2)
    await rec.close()


async def test_a_pending_pods_latest_record_outlives_the_window(env: Env) -> None:
    rec = DecisionRecorder(env.sched_client, env.clock, retain=2)
    rec.set_pending("default/stuck", True)
    rec.add(_record("stuck", result="Unschedulable"), "default/stuck")
    for i in range(4):
        rec.add(_record(f"p{i}"), f"default/p{i}")
    await rec.flush()
    assert await _names(env) == ["p2-1", "p3-1", "stuck-1"]
    rec.set_pending("default/stuck", False)  # it got scheduled elsewhere: the pin goes
    await rec.flush()
    assert await _names(env) == ["p2-1", "p3-1"]
    await rec.close()


async def test_a_burst_writes_only_the_records_retention_keeps(env: Env) -> None:
    rec = DecisionRecorder(env.sched_client, env.clock, retain=20, batch=4, settle=5.0)
    for second in range(6):  # 10 records a second: the window of 20 turns over in 2 s
        for i in range(10):
            rec.add(_record(f"p{second}x{i}"), f"default/p{second}x{i}")
        await env.clock.advance(1)
        assert rec.written == 0 and await _names(env) == []  # held: retention may still retire them
    await env.wait(lambda: rec.written == 20, timeout=6)
    assert await _names(env) == sorted(f"p{s}x{i}-1" for s in (4, 5) for i in range(10))
    assert (rec.superseded, rec.deleted) == (40, 0)  # never created, so never deleted
    rec.add(_record("late"), "default/late")  # a lone record is written at once
    assert await env.clock.run_until(lambda: rec.written == 21, timeout=1, step=0.1) < 0.5
    await rec.close()


async def test_flush_writes_a_held_burst_at_once(env: Env) -> None:
    rec = DecisionRecorder(env.sched_client, env.clock, retain=20, batch=4, settle=60.0)
    for i in range(8):
        rec.add(_record(f"p{i}"), f"default/p{i}")
    await env.clock.advance(1)
    assert rec.written == 0
    await rec.flush()
    assert await _names(env) == sorted(f"p{i}-1" for i in range(8))
    await rec.close()
