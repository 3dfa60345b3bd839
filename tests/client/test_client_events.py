"""EventRecorder against the real API server: aggregation into count, fields, ordering, overflow."""

from __future__ import annotations

from typing import Any

import pytest
from client_helpers import configmap

from kconsole.client import EventRecorder


async def events_in(env: Any, namespace: str) -> list[dict[str, Any]]:
    return await env.client.list_all("events", namespace)


async def test_same_event_three_times_is_one_event_with_count_3(env) -> None:
    obj = await env.client.create(configmap("web"))
    rec = EventRecorder(env.client, env.clock, component="replicaset-controller", host="cp-1")
    first_time = env.clock.rfc3339()
    rec.event(obj, "Warning", "FailedCreate", "quota exceeded")
    await env.clock.advance(30)
    rec.event(obj, "Warning", "FailedCreate", "quota exceeded")
    await env.clock.advance(30)
    last_time = env.clock.rfc3339()
    rec.event(obj, "Warning", "FailedCreate", "quota exceeded")
    await rec.flush()

    events = await events_in(env, "default")
    assert len(events) == 1
    ev = events[0]
    assert ev["count"] == 3
    assert ev["firstTimestamp"] == first_time and ev["lastTimestamp"] == last_time
    assert ev["metadata"]["name"].startswith("web.")
    assert ev["involvedObject"] == {"kind": "ConfigMap", "namespace": "default", "name": "web",
                                    "uid": obj["metadata"]["uid"], "apiVersion": "v1",
                                    "resourceVersion": obj["metadata"]["resourceVersion"]}
    assert ev["source"] == {"component": "replicaset-controller", "host": "cp-1"}
    assert (ev["type"], ev["reason"], ev["message"]) == ("Warning", "FailedCreate", "quota exceeded")
    assert ev["reportingComponent"] == "replicaset-controller" and ev["reportingInstance"] == "cp-1"
    assert ev.get("eventTime") is None
    assert (rec.written, rec.patched) == (1, 2)
    await rec.close()


async def test_distinct_events_are_separate_and_written_in_order(env) -> None:
    obj = await env.client.create(configmap("app"))
    rec = EventRecorder(env.client, env.clock, component="kubelet", host="node-1")
    reasons = ["Pulling", "Pulled", "Created", "Started"]
    for reason in reasons:
        rec.event(obj, "Normal", reason, f"{reason} container app")
    await rec.flush()
    events = await events_in(env, "default")
    assert len(events) == 4, "same simulated instant, same object: names must still be unique"
    by_rv = sorted(events, key=lambda e: int(e["metadata"]["resourceVersion"]))
    assert [e["reason"] for e in by_rv] == reasons
    assert all(e["count"] == 1 for e in events)
    await rec.close()


async def test_cluster_scoped_object_events_go_to_default(env) -> None:
    ns = await env.client.get("namespaces", "kube-system")
    rec = EventRecorder(env.client, env.clock, component="namespace-controller")
    rec.event(ns, "Normal", "Checked", "all good")
    await rec.flush()
    ev = [e for e in await events_in(env, "default") if e["reason"] == "Checked"]
    assert len(ev) == 1
    assert "namespace" not in ev[0]["involvedObject"] and ev[0]["source"] == {"component": "namespace-controller"}
    await rec.close()


async def test_full_queue_drops_instead_of_blocking(env) -> None:
    obj = await env.client.create(configmap("busy"))
    rec = EventRecorder(env.client, env.clock, component="noisy", queue_size=2)
    for i in range(5):
        rec.event(obj, "Normal", f"R{i}", "m")  # returns at once even when full
    assert rec.dropped == 3
    await rec.flush()
    assert sorted(e["reason"] for e in await events_in(env, "default")) == ["R0", "R1"]
    await rec.close()
    rec.event(obj, "Normal", "After", "closed")
    assert rec.dropped == 4


async def test_bad_event_type_is_refused(env) -> None:
    rec = EventRecorder(env.client, env.clock, component="x")
    with pytest.raises(ValueError, match="Normal"):
        rec.event(configmap("y"), "Info", "R", "m")
