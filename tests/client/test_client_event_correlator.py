"""The EventCorrelator's upstream rules (no server needed): count, combine, spam filter."""

from __future__ import annotations

from typing import Any

import pytest

from kconsole.client.events import (
    AGGREGATE_MAX_EVENTS,
    COMBINED_PREFIX,
    SPAM_BURST,
    EventCorrelator,
    object_reference,
)
from kconsole.clock import VirtualClock

POD = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": "web-1", "namespace": "prod", "uid": "u-1", "resourceVersion": "7"}}


def make_event(message: str, *, reason: str = "BackOff", name: str = "web-1.1", ts: str = "t0",
               obj: dict[str, Any] = POD) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "prod"}, "involvedObject": object_reference(obj),
            "reason": reason, "message": message, "type": "Warning", "source": {"component": "kubelet"},
            "count": 1, "firstTimestamp": ts, "lastTimestamp": ts}


def test_object_reference_copies_identity_fields_only() -> None:
    assert object_reference(POD) == {"kind": "Pod", "namespace": "prod", "name": "web-1", "uid": "u-1",
                                     "apiVersion": "v1", "resourceVersion": "7"}
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "uid": "u"}}
    assert "namespace" not in object_reference(node)
    with pytest.raises(ValueError, match="metadata.name"):
        object_reference({"kind": "Pod", "metadata": {}})


def test_repeat_becomes_a_patch_of_the_first_event_with_growing_count() -> None:
    c = EventCorrelator(VirtualClock())
    first = c.correlate(make_event("Back-off", name="web-1.a", ts="t0"), 0.0)
    assert first is not None and first[1] is None, "the first occurrence is created"
    c.update_state(first[2], {**first[0], "metadata": {**first[0]["metadata"], "resourceVersion": "9"}})
    second = c.correlate(make_event("Back-off", name="web-1.b", ts="t1"), 5.0)
    assert second is not None
    event, patch, _ = second
    assert event["metadata"]["name"] == "web-1.a", "patches target the first event's name"
    assert patch == {"count": 2, "lastTimestamp": "t1", "message": "Back-off"}
    assert event["firstTimestamp"] == "t0"
    third = c.correlate(make_event("Back-off", name="web-1.c", ts="t2"), 9.0)
    assert third is not None and third[1] is not None and third[1]["count"] == 3


def test_different_message_or_reason_is_a_new_event() -> None:
    c = EventCorrelator(VirtualClock())
    assert c.correlate(make_event("a"), 0)[1] is None  # type: ignore[index]
    assert c.correlate(make_event("b"), 0)[1] is None  # type: ignore[index]
    assert c.correlate(make_event("a", reason="Other"), 0)[1] is None  # type: ignore[index]


def test_many_distinct_messages_combine_into_one_event() -> None:
    c = EventCorrelator(VirtualClock())
    results = [c.correlate(make_event(f"message {i}", name=f"e{i}"), float(i)) for i in range(AGGREGATE_MAX_EVENTS + 2)]
    plain = results[: AGGREGATE_MAX_EVENTS - 1]
    assert all(r is not None and not r[0]["message"].startswith(COMBINED_PREFIX) for r in plain)
    combined = results[AGGREGATE_MAX_EVENTS - 1]
    assert combined is not None and combined[0]["message"] == COMBINED_PREFIX + f"message {AGGREGATE_MAX_EVENTS - 1}"
    assert combined[1] is None, "the first combined event is created"
    after = results[AGGREGATE_MAX_EVENTS]
    assert after is not None and after[1] is not None and after[1]["count"] == 2, "later ones count into it"


def test_combining_window_resets_after_ten_quiet_minutes() -> None:
    c = EventCorrelator(VirtualClock())
    for i in range(AGGREGATE_MAX_EVENTS - 1):
        c.correlate(make_event(f"m{i}"), 0.0)
    r = c.correlate(make_event("late"), 601.0)
    assert r is not None and not r[0]["message"].startswith(COMBINED_PREFIX)


def test_spam_filter_allows_a_burst_then_one_per_five_minutes() -> None:
    c = EventCorrelator(VirtualClock())
    accepted = sum(c.correlate(make_event(f"m{i % 3}"), 0.0) is not None for i in range(SPAM_BURST + 10))
    assert accepted == SPAM_BURST
    assert c.correlate(make_event("m0"), 299.0) is None
    assert c.correlate(make_event("m0"), 300.5) is not None
    other = {**POD, "metadata": {**POD["metadata"], "name": "web-2", "uid": "u-2"}}
    assert c.correlate(make_event("m0", obj=other), 300.5) is not None, "the bucket is per object"
