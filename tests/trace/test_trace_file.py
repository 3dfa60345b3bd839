"""The trace file: what it holds, and bad files refused with the line and the problem named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
import pytest

from kconsole.trace.fileformat import TraceError, read_trace
from kconsole.trace.film import Film
from kconsole.trace.outcome import compare, outcome
from kconsole.trace.when import When, parse_when
from trace_samples import T0, header, pod, sample, written

def test_a_trace_reads_back_as_written(tmp_path: Path) -> None:
    path = written(sample(), tmp_path)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["type"] for line in lines] == ["header", "object", "object", "input", "change", "change",
                                               "change", "change", "fault"]
    back = read_trace(path)
    assert back.header["seed"] == 1 and back.first_revision == 10 and back.last_revision == 14
    assert [c["revision"] for c in back.changes] == [11, 12, 13, 14]
    assert back.inputs[0]["user"] == "alice" and back.faults[0]["fault"] == "cordon"


def test_the_film_moves_both_ways_and_tells_what_happened(tmp_path: Path) -> None:
    film = Film(read_trace(written(sample(), tmp_path)))
    seen: list[tuple[str, bool, bool]] = []
    film.listeners.append(lambda key, old, new: seen.append((key[2], old is not None, new is not None)))
    assert film.objects("pods") == [] and film.revision == 10
    film.seek(film.length)
    assert film.revision == 14 and film.objects("pods")[0]["spec"]["nodeName"] == "worker-1"
    assert [e["reason"] for e in film.events()] == ["Scheduled"]
    assert ("a", False, True) in seen
    film.seek(1)
    assert "nodeName" not in film.objects("pods")[0]["spec"] and film.events() == []
    assert ("a.1", True, False) in seen
    film.seek_time(T0 + 20.5)
    assert film.position == 3 and film.now == T0 + 20.5
    texts = [m.text for m in film.recent()]
    assert texts[0].startswith("alice create pods default/a")
    film.toggle()
    film.tick(1.0)  # 10x: ten simulated seconds
    assert film.playing and film.position == film.length and film.now == T0 + 30.5
    film.tick(1.0)
    assert film.position == film.length and not film.playing  # reached the end
    assert film.now == T0 + 40  # the trace's last time: after the last change


def test_outcome_tells_placements_readiness_and_differences(tmp_path: Path) -> None:
    trace = sample()
    mine = outcome(trace.objects, trace.changes)
    web = mine["default/Deployment/web"].to_dict()
    assert web["placements"] == {"worker-1": 1} and web["ready"] == 1 and web["readyMax"] == 15.0
    other = [dict(c) for c in trace.changes]
    other[1] = {**other[1], "object": pod("a", "worker-2")}
    other[3] = {**other[3], "object": pod("a", "worker-2", ready=True)}
    differences = compare(mine, outcome(trace.objects, other))
    assert differences == [{"workload": "default/Deployment/web", "differs": ["placements"],
                            "original": {"placements": {"worker-1": 1}}, "rerun": {"placements": {"worker-2": 1}}}]
    assert compare(mine, outcome(trace.objects, trace.changes)) == []


@pytest.mark.parametrize("text, message", [
    ("", "empty, no header"),
    ("not json\n", ":1: not JSON"),
    ('{"type": "change"}\n', ":1: the first line must be the header"),
    ('{"type": "header", "format": "other"}\n', "not a kconsole trace (format 'other'"),
    (json.dumps({"type": "header", **header(version=99)}) + "\n", "version 99 is newer"),
    (json.dumps({"type": "header", **header(seed="x")}) + "\n", "header field 'seed' must be int"),
    (json.dumps({"type": "header", **header()}) + '\n{"type": "bogus"}\n', ":2: unknown record type 'bogus'"),
    (json.dumps({"type": "header", **header()}) + '\n{"type": "change", "revision": 3, "time": 1, "resource": '
     '"pods", "name": "a", "event": "ADDED"}\n', ":2: change field 'object' must be dict (missing)"),
    (json.dumps({"type": "header", **header()}) + '\n{"type": "input", "time": 1, "user": "u", "verb": "get", '
     '"resource": "pods"}\n', ":2: input verb 'get' is not a write"),
    (json.dumps({"type": "header", **header()}) + '\n[1, 2]\n', ":2: expected a JSON object per line"),
])
def test_bad_files_are_refused_naming_the_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TraceError) as err:
        read_trace(path)
    assert message in str(err.value)


def test_missing_and_binary_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="no such trace file"):
        read_trace(tmp_path / "nope.jsonl")
    with pytest.raises(TraceError, match="is a folder"):
        read_trace(tmp_path)
    (tmp_path / "bin").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(TraceError, match="not a text file"):
        read_trace(tmp_path / "bin")


def test_rev_or_time() -> None:
    assert parse_when("42") == When(revision=42)
    assert parse_when("-5m") == When(ago=300.0)
    assert parse_when("2026-01-01T00:00:00Z") == When(time=T0)
    for bad, message in (("0", "at least 1"), ("soon", "neither a revision"), ("2026-01-01T00:00:00", "needs a zone")):
        with pytest.raises(ValueError, match=message):
            parse_when(bad)


def test_outcome_counts_preemptions_and_evictions() -> None:
    trace = sample()

    def disrupted(name: str, reason: str) -> dict[str, Any]:
        p = pod(name, "worker-1", ready=True)
        p["status"]["conditions"].append({"type": "DisruptionTarget", "status": "True", "reason": reason})
        return p

    changes = [*trace.changes,
               {"revision": 15, "time": T0 + 30, "event": "MODIFIED", "resource": "pods", "group": "",
                "namespace": "default", "name": "a", "object": disrupted("a", "PreemptionByScheduler")},
               {"revision": 16, "time": T0 + 31, "event": "DELETED", "resource": "pods", "group": "",
                "namespace": "default", "name": "a", "object": None},
               {"revision": 17, "time": T0 + 32, "event": "ADDED", "resource": "pods", "group": "",
                "namespace": "default", "name": "b", "object": disrupted("b", "DeletionByTaintManager")}]
    web = outcome(trace.objects, changes)["default/Deployment/web"].to_dict()
    assert (web["pods"], web["preempted"], web["evicted"]) == (2, 1, 1)
