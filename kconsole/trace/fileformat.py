"""The trace file: JSON lines, one record per line, each with a ``type`` (docs/history.md, "Traces").

``header`` (first line, exactly once), then ``object`` lines (the cluster as it was at the first
revision of the trace), then ``change``, ``input`` and ``fault`` lines in time order. Reading checks
every line and names the line and the problem; it never trusts a field it has not checked.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import IO, Any

FORMAT = "kconsole-trace"
VERSION = 1
#: Cluster config fields a trace keeps: what shapes the cluster's behaviour, not where it serves.
CONFIG_FIELDS = ("nodes", "control_planes", "seed", "zones", "node_cpu", "node_memory", "pod_delay_factor",
                 "scheduler", "controllers", "addons")
RECORD_TYPES = ("header", "object", "change", "input", "fault")
CHANGE_TYPES = ("ADDED", "MODIFIED", "DELETED")
FAULT_ACTIONS = ("apply", "heal")

Obj = dict[str, Any]


class TraceError(ValueError):
    """A trace file that cannot be used; the message names the file, the line and the problem."""


def config_to_dict(config: Any) -> Obj:
    """The behaviour-shaping part of a :class:`~kconsole.cluster.ClusterConfig`, JSON-ready."""
    out: Obj = {}
    for name in CONFIG_FIELDS:
        value = getattr(config, name)
        out[name.replace("_", "-")] = list(value) if isinstance(value, tuple) else value
    return out


def config_from_dict(data: Obj, base: Any = None) -> Any:
    """A ClusterConfig from a trace header's config, over ``base`` (defaults when None)."""
    from kconsole.cluster import ClusterConfig

    config = base if base is not None else ClusterConfig()
    known = {f.name for f in fields(ClusterConfig)}
    for key, value in data.items():
        name = str(key).replace("-", "_")
        if name not in known or name not in CONFIG_FIELDS:
            continue
        setattr(config, name, tuple(value) if isinstance(value, list) else value)
    return config


def redact_secret(body: Any) -> Any:
    """A Secret's body with every value emptied (keys kept): a trace never holds Secret values."""
    if not isinstance(body, dict):
        return body
    out = dict(body)
    for key in ("data", "stringData"):
        if isinstance(out.get(key), dict):
            out[key] = {k: "" for k in out[key]}
    return out


def input_record(time: float, revision: int, user: Any, request: Any, body: Any) -> Obj:
    """An ``input`` line from an API request as it was sent (only the options it set)."""
    record: Obj = {"type": "input", "time": time, "revision": revision, "user": user.name,
                   "groups": list(user.groups), "verb": request.verb, "resource": request.resource}
    optional = {"group": request.group, "version": request.version, "namespace": request.namespace,
                "name": request.name, "subresource": request.subresource, "body": body,
                "patchType": request.patch_type, "fieldManager": request.field_manager,
                "force": request.force or None, "propagationPolicy": request.propagation_policy,
                "gracePeriodSeconds": request.grace_period_seconds,
                "labelSelector": request.label_selector or None, "fieldSelector": request.field_selector or None,
                "userAgent": request.user_agent or None}
    record.update({k: v for k, v in optional.items() if v is not None})
    return record


@dataclass
class Trace:
    """A trace file read into memory."""

    header: Obj
    objects: list[Obj] = field(default_factory=list)
    changes: list[Obj] = field(default_factory=list)
    inputs: list[Obj] = field(default_factory=list)
    faults: list[Obj] = field(default_factory=list)

    @property
    def seed(self) -> int:
        return int(self.header["seed"])

    @property
    def first_revision(self) -> int:
        return int(self.header["from"]["revision"])

    @property
    def last_revision(self) -> int:
        return int(self.header["to"]["revision"])


def write_trace(out: IO[str], trace: Trace) -> int:
    """Write ``trace``; returns the lines written. Changes, inputs and faults merge in time order."""
    def line(record: Obj) -> None:
        out.write(json.dumps(record, separators=(",", ":"), sort_keys=True, default=str) + "\n")

    line({"type": "header", **trace.header})
    for obj in trace.objects:
        line({"type": "object", **obj})
    order = {"input": 0, "fault": 1, "change": 2}
    timed = [*trace.inputs, *trace.faults, *trace.changes]
    timed.sort(key=lambda r: (float(r["time"]), order[r["type"]], int(r.get("revision") or 0)))
    for record in timed:
        line(record)
    return 1 + len(trace.objects) + len(timed)


def read_trace(path: str | os.PathLike[str]) -> Trace:
    """Read and check a trace file; :class:`TraceError` names the line and what is wrong."""
    file = Path(path)
    try:
        handle = file.open(encoding="utf-8")
    except FileNotFoundError:
        raise TraceError(f"{file}: no such trace file") from None
    except IsADirectoryError:
        raise TraceError(f"{file}: is a folder, not a trace file") from None
    except OSError as err:
        raise TraceError(f"{file}: cannot read: {err.strerror}") from None
    trace: Trace | None = None
    with handle:
        try:
            for number, text in enumerate(handle, 1):
                if not text.strip():
                    continue
                where = f"{file}:{number}"
                try:
                    record = json.loads(text)
                except json.JSONDecodeError as err:
                    raise TraceError(f"{where}: not JSON ({err.msg})") from None
                if not isinstance(record, dict):
                    raise TraceError(f"{where}: expected a JSON object per line")
                kind = record.get("type")
                if trace is None:
                    if kind != "header":
                        raise TraceError(f"{where}: the first line must be the header (type \"header\"); "
                                         f"is this a kconsole trace?")
                    trace = Trace(_check_header(where, record))
                    continue
                if kind not in RECORD_TYPES:
                    raise TraceError(f"{where}: unknown record type {kind!r} (known: {', '.join(RECORD_TYPES)})")
                if kind == "header":
                    raise TraceError(f"{where}: a second header")
                _CHECKS[kind](where, record)
                getattr(trace, kind + "s" if kind != "change" else "changes").append(record)
        except UnicodeDecodeError:
            raise TraceError(f"{file}: not a text file (not UTF-8)") from None
    if trace is None:
        raise TraceError(f"{file}: empty, no header")
    return trace


def _need(where: str, record: Obj, key: str, types: type | tuple[type, ...], optional: bool = False) -> Any:
    value = record.get(key)
    if value is None and optional:
        return None
    if isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,)):
        value = object()  # a bool is not a number here
    if not isinstance(value, types):
        what = types.__name__ if isinstance(types, type) else " or ".join(t.__name__ for t in types)
        shown = "missing" if key not in record else f"got {json.dumps(record.get(key))[:40]}"
        raise TraceError(f"{where}: {record.get('type', 'record')} field {key!r} must be {what} ({shown})")
    return value


def _check_header(where: str, record: Obj) -> Obj:
    if record.get("format") != FORMAT:
        raise TraceError(f"{where}: not a kconsole trace (format {record.get('format')!r}, want {FORMAT!r})")
    version = _need(where, record, "version", int)
    if version > VERSION:
        raise TraceError(f"{where}: trace format version {version} is newer than this kconsole reads ({VERSION})")
    _need(where, record, "seed", int)
    _need(where, record, "config", dict)
    _need(where, record, "clusterStart", (int, float), optional=True)
    for key in ("from", "to"):
        bound = _need(where, record, key, dict)
        _need(where, {"type": f"header {key}", **bound}, "revision", int)
        _need(where, {"type": f"header {key}", **bound}, "time", (int, float))
    header = dict(record)
    header.pop("type", None)
    return header


def _check_object(where: str, record: Obj) -> None:
    _need(where, record, "resource", str)
    _need(where, record, "object", dict)


def _check_change(where: str, record: Obj) -> None:
    _need(where, record, "revision", int)
    _need(where, record, "time", (int, float))
    _need(where, record, "resource", str)
    _need(where, record, "name", str)
    if record.get("event") not in CHANGE_TYPES:
        raise TraceError(f"{where}: change field 'event' must be one of {', '.join(CHANGE_TYPES)}")
    if record["event"] != "DELETED":
        _need(where, record, "object", dict)


def _check_input(where: str, record: Obj) -> None:
    _need(where, record, "time", (int, float))
    _need(where, record, "user", str)
    _need(where, record, "verb", str)
    _need(where, record, "resource", str)
    if record["verb"] not in ("create", "update", "patch", "delete", "deletecollection"):
        raise TraceError(f"{where}: input verb {record['verb']!r} is not a write")


def _check_fault(where: str, record: Obj) -> None:
    _need(where, record, "time", (int, float))
    _need(where, record, "fault", str)
    _need(where, record, "target", str)
    if record.get("action") not in FAULT_ACTIONS:
        raise TraceError(f"{where}: fault field 'action' must be apply or heal")
    _need(where, record, "params", dict, optional=True)


_CHECKS = {"object": _check_object, "change": _check_change, "input": _check_input, "fault": _check_fault}
