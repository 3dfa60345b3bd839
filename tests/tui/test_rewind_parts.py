"""The rewind's parts that need no cluster: jump targets, the strip's drawing, the faults a past
revision's Events say were active, snapshot caches, recorded etcd member state."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace

import pytest

from kconsole.tui.etcdsamples import EtcdSamples
from kconsole.tui.rewind import EventIndex, EventMark, SnapshotInformer, TargetError, faults_at, parse_target
from kconsole.tui.widgets.timeline import TimelineData, cursor_cell, render_strip

NOON = datetime(2026, 1, 1, 12, 0, 0, tzinfo=timezone.utc).timestamp()


def test_jump_targets() -> None:
    assert parse_target("r1234", NOON).revision == 1234
    assert parse_target("77", NOON).revision == 77
    assert parse_target("-5m", NOON).time == NOON - 300
    assert parse_target("+1h30s", NOON).time == NOON + 3630
    assert parse_target("11:03:10", NOON).time == NOON - 3600 + 190
    # a time of day later than the cursor is the day before
    assert parse_target("12:00:01", NOON).time == NOON + 1 - 86400
    for bad, says in (("", "empty"), ("-5x", "not a duration"), ("25:00", "not a time of day"),
                      ("yesterday", "r1234")):
        with pytest.raises(TargetError, match=says):
            parse_target(bad, NOON)


def test_strip_marks_faults_and_warnings_and_puts_the_cursor_on_its_bucket() -> None:
    data = TimelineData(NOON, NOON + 100, writes=(0, 4, 8, 2, 0, 1, 1, 1, 1, 1) * 3,
                        warnings=(0, 0, 1) + (0,) * 27, faults=(0,) * 10 + (1,) + (0,) * 19)
    line1, line2 = render_strip(data, NOON + 55, "rev 12").split("\n")
    assert "[$error]◆[/]" in line1 and "[$warning]█[/]" in line1
    assert cursor_cell(data, NOON + 55) == 16 and cursor_cell(data, None) == 29
    assert line2.startswith("[b]rev 12 [/] ") and line2.index("▲") == len("[b]rev 12 [/] ") + 16
    assert "12:00:00" in line2 and "12:01:40" in line2
    # a label under the cursor gives way whole
    assert "12:01:40" not in render_strip(data, NOON + 90, "rev 12")
    assert render_strip(data, None, "LIVE").endswith("12:01:40 ▲")
    assert "reading the history" in render_strip(None, None, "LIVE")


def test_faults_at_a_revision_are_the_injected_ones_not_yet_healed() -> None:
    def event(name: str, reason: str, message: str, at: float) -> dict:
        stamp = datetime.fromtimestamp(at, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        return {"metadata": {"name": name, "namespace": "default"}, "reason": reason, "message": message,
                "type": "Warning" if reason == "FaultInjected" else "Normal", "lastTimestamp": stamp,
                "source": {"component": "kconsole-faults"}}

    events = [event("a", "FaultInjected", "Fault f1 kubelet-stop on worker-2: stop it. Expect: NotReady", NOON),
              event("b", "FaultInjected", "Fault f2 cordon on worker-1: mark it. Expect: no new pods", NOON + 5),
              event("c", "FaultHealed", "Fault f2 cordon on worker-1 healed", NOON + 9),
              {"metadata": {"name": "d", "namespace": "default"}, "reason": "FaultInjected", "type": "Warning",
               "message": "Fault f9 pod-kill on x/y: by someone else", "source": {"component": "kubectl"}}]
    active = faults_at(events, NOON + 60)
    assert [(f.id, f.type, f.target, f.since, f.expect) for f in active] == [
        ("f1", "kubelet-stop", "worker-2", "60s ago", "NotReady")]


def test_snapshot_cache_tells_its_handlers_like_an_informer() -> None:
    seen: list[tuple[str, str]] = []
    cache = SnapshotInformer("pods", [{"metadata": {"name": "a", "namespace": "d"}}])
    cache.add_event_handler(lambda o: seen.append(("add", o["metadata"]["name"])),
                            lambda old, new: seen.append(("update", new["metadata"]["name"])),
                            lambda o: seen.append(("delete", o["metadata"]["name"])))
    cache.put("d/b", {"metadata": {"name": "b", "namespace": "d"}})
    cache.put("d/a", {"metadata": {"name": "a", "namespace": "d", "labels": {"x": "1"}}})
    cache.put("d/b", None)
    cache.put("d/zz", None)
    assert seen == [("add", "a"), ("add", "b"), ("update", "a"), ("delete", "b")]
    assert cache.keys() == ["d/a"] and cache.get_by_name("d", "a")["metadata"]["labels"] == {"x": "1"}


def test_event_index_finds_the_neighbouring_warning() -> None:
    index = EventIndex()
    for rev, warning, fault in ((10, False, False), (20, True, False), (30, False, True), (40, False, False)):
        index.marks.append(EventMark(rev, float(rev), warning, fault))
        index.revisions.append(rev)
    warn = lambda m: m.warning or m.fault  # noqa: E731
    assert index.neighbour(35, -1, warn).revision == 30
    assert index.neighbour(30, -1, warn).revision == 20
    assert index.neighbour(20, 1, warn).revision == 30
    assert index.neighbour(30, 1, warn) is None
    assert index.neighbour(30, 1, lambda m: True).revision == 40


def test_etcd_samples_kept_on_change_and_read_back_from_the_data_folder(tmp_path: Path) -> None:
    def member(name: str, leader: bool, running: bool = True) -> SimpleNamespace:
        return SimpleNamespace(name=name, id="1", endpoint="e", version="3.5", running=running, paused=False,
                               healthy=running, is_leader=leader, leader="etcd-0", role="", raft_term=2,
                               raft_index=5, raft_applied_index=5, revision=0, db_size=1, db_size_in_use=1,
                               wal_size=1, errors=[], last_commit_ms=1.0, slow_disk_s=0.0)

    quorum = SimpleNamespace(members=2, alive=2, needed=2, failures_tolerated=0)
    samples = EtcdSamples(tmp_path)
    assert samples.record([member("etcd-0", True), member("etcd-1", False)], quorum,
                          SimpleNamespace(revision=100, compact_revision=1, db_size=1, db_size_in_use=1, keys=3,
                                          alarms=[]), NOON)
    assert not samples.record([member("etcd-0", True), member("etcd-1", False)], quorum,
                              SimpleNamespace(revision=120, compact_revision=1, db_size=1, db_size_in_use=1,
                                              keys=3, alarms=[]), NOON + 1)
    lost = SimpleNamespace(members=2, alive=1, needed=2, failures_tolerated=0)
    assert samples.record([member("etcd-0", True), member("etcd-1", False, running=False)], lost,
                          SimpleNamespace(revision=130, compact_revision=1, db_size=1, db_size_in_use=1, keys=3,
                                          alarms=[]), NOON + 2)
    again = EtcdSamples(tmp_path)
    assert again.at(99) is None
    at = again.at(125)
    assert at is not None and at.revision == 100 and at.status.revision == 125 and at.quorum.ok
    at = again.at(500)
    assert not at.quorum.ok and not at.members[1].running and at.members[1].NO_ANSWER
