"""A trace from a cluster's history: the state at the first revision, every change after it, and the
inputs and faults the recorder kept (:mod:`kconsole.trace.recorder`) between the two times."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from kconsole import __version__
from kconsole.api.types import StatusError
from kconsole.trace.fileformat import FORMAT, VERSION, Trace, TraceError, config_to_dict, redact_secret

log = logging.getLogger(__name__)

Obj = dict[str, Any]

#: Revisions read per history query.
WINDOW = 20_000
#: Resources served from another resource's objects (listed once, under that one's name).
SAME_STORAGE = frozenset({"events.events.k8s.io"})


async def build_trace(history: Any, client: Any, inputs_file: Path | None, *, first: int | None = None,
                      last: int | None = None) -> Trace:
    """The trace of revisions ``(first, last]`` (defaults: the oldest kept revision and now), with
    the objects as they were at ``first``."""
    bounds = await history.bounds()
    first = bounds.oldest if first is None else first
    last = bounds.current if last is None else last
    if first > last:
        raise TraceError(f"--from revision {first} is after --to revision {last}")
    if last > bounds.current:
        raise TraceError(f"revision {last} is in the future (the newest revision is {bounds.current})")
    first_time = await history.time_of(first) if first > 0 else bounds.oldest_time
    last_time = await history.time_of(last)
    objects: list[Obj] = []
    listed: set[tuple[str, str]] = set()
    for info in sorted(client.resources(), key=lambda i: (i.group, i.resource)):
        if "list" not in info.verbs or "/" in info.resource or (info.group, info.resource) in listed \
                or f"{info.resource}.{info.group}" in SAME_STORAGE:
            continue
        listed.add((info.group, info.resource))
        try:
            found = await history.list_at(info.resource, first, group=info.group)
        except StatusError as err:
            if err.code == 410 or err.code >= 500:
                raise
            continue  # served but never stored (componentstatuses): no history to picture
        for obj in found:
            obj = _redacted(info.resource, info.group, obj)
            meta = obj.get("metadata") or {}
            objects.append({"revision": first, "resource": info.resource, "group": info.group,
                            "namespace": meta.get("namespace"), "name": meta.get("name"), "object": obj})
    changes: list[Obj] = []
    after = first
    while after < last:  # in windows, so no one answer has to hold a whole day of writes
        upto = min(last, after + WINDOW)
        changes += [_change(c) for c in await history.changes(after, upto)]
        after = upto
    recorded = read_inputs(inputs_file) if inputs_file is not None else []
    starts = [r for r in recorded if r["type"] == "start"]
    start = next((s for s in reversed(starts) if s["time"] <= first_time), starts[0] if starts else None)
    inputs = [r for r in recorded if r["type"] == "input" and first_time <= r["time"] <= last_time
              and (not r.get("revision") or first < r["revision"] <= last)]
    faults = [r for r in recorded if r["type"] == "fault" and first_time <= r["time"] <= last_time]
    if start is not None:
        config, seed, cluster_start = start["config"], start["seed"], start["clusterStart"]
    else:
        from kconsole.cluster import ClusterConfig

        default = ClusterConfig()
        config, seed, cluster_start = config_to_dict(default), default.seed, None
    header = {"format": FORMAT, "version": VERSION, "kconsole": __version__, "seed": seed, "config": config,
              "clusterStart": cluster_start, "inputsRecorded": start is not None,
              "from": {"revision": first, "time": first_time}, "to": {"revision": last, "time": last_time}}
    return Trace(header, objects, changes, inputs, faults)


def _change(change: Any) -> Obj:
    return {"type": "change", "revision": change.revision, "time": change.time, "event": change.type,
            "resource": change.resource, "group": change.group, "namespace": change.namespace,
            "name": change.name, "object": _redacted(change.resource, change.group, change.object)}


def _redacted(resource: str, group: str, obj: Any) -> Any:
    """A trace never holds Secret values, whoever read the history."""
    return redact_secret(obj) if resource == "secrets" and not group else obj


def read_inputs(path: Path) -> list[Obj]:
    """The recorder's lines; a torn last line (the process was killed mid-write) is skipped."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            log.warning("%s:%d: skipped a line that is not JSON", path, number)
            continue
        if isinstance(record, dict) and record.get("type") in ("start", "input", "fault"):
            out.append(record)
    return out
