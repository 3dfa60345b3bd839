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


class _CountingEntry:
    """The real API server, counting how many requests are in flight at once."""

    def __init__(self, api: Any) -> None:
        self.api = api
        self.in_flight = 0
        self.most = 0

    async def handle(self, request: Any) -> Any:
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        try:
            return await self.api.handle(request)
        finally:
            self.in_flight -= 1

    def __getattr__(self, name: str) -> Any:
        return getattr(self.api, name)


async def test_a_10000_pod_burst_is_written_concurrently_without_drops(env) -> None:
    entry = _CountingEntry(env.entry)
    rec = EventRecorder(env.new_client(entry), env.clock, component="default-scheduler", host="cp-1")
    pods = [{"kind": "Pod", "namespace": "default", "name": f"p-{i:05d}", "uid": f"uid-{i}", "apiVersion": "v1"}
            for i in range(10_000)]
    for ref in pods:
        rec.event(ref, "Normal", "Scheduled", f"Successfully assigned default/{ref['name']} to node-1")
    assert rec.dropped == 0 and rec.queued == 10_000
    repeated = pods[-50:]  # still in the correlator's LRU (4096 objects), so they patch
    for ref in repeated:
        rec.event(ref, "Normal", "Scheduled", f"Successfully assigned default/{ref['name']} to node-1")
    await rec.flush()
    assert (rec.dropped, rec.written, rec.patched, rec.queued) == (0, 10_000, 50, 0)
    assert entry.most > 1, "events were written one at a time"
    events = await events_in(env, "default")
    counts = {e["involvedObject"]["name"]: e["count"] for e in events if e["reason"] == "Scheduled"}
    assert len(counts) == 10_000 and sum(counts.values()) == 10_050
    await rec.close()


async def test_recorder_refuses_nonsense_sizes(env) -> None:
    with pytest.raises(ValueError, match="writers"):
        EventRecorder(env.client, env.clock, component="x", writers=0)
    with pytest.raises(ValueError, match="queue_size"):
        EventRecorder(env.client, env.clock, component="x", queue_size=0)


async def test_reporting_instance_without_a_source_host(env) -> None:
    """As upstream's scheduler records through events/v1: describe shows the component alone."""
    obj = await env.client.create(configmap("sched"))
    rec = EventRecorder(env.client, env.clock, component="default-scheduler", instance="default-scheduler-cp-1")
    rec.event(obj, "Normal", "Scheduled", "Successfully assigned default/sched to node-1")
    await rec.flush()
    (ev,) = await events_in(env, "default")
    assert ev["source"] == {"component": "default-scheduler"}
    assert (ev["reportingComponent"], ev["reportingInstance"]) == ("default-scheduler", "default-scheduler-cp-1")
    await rec.close()
