"""A small hand-made trace: one pod of a Deployment created, bound, Ready; an event; an input; a fault."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from kconsole.trace.fileformat import FORMAT, VERSION, Trace, write_trace

T0 = 1767225600.0


def header(**kw: Any) -> dict[str, Any]:
    return {"format": FORMAT, "version": VERSION, "kconsole": "0.1.0", "seed": 1, "config": {"nodes": 2},
            "clusterStart": T0, "inputsRecorded": True, "from": {"revision": 10, "time": T0},
            "to": {"revision": 14, "time": T0 + 40}, **kw}


def pod(name: str, node: str | None = None, ready: bool = False, uid: str = "") -> dict[str, Any]:
    status: dict[str, Any] = {"phase": "Running" if ready else "Pending", "conditions": []}
    if ready:
        status["conditions"].append({"type": "Ready", "status": "True"})
    spec: dict[str, Any] = {"containers": [{"name": "app", "image": "nginx"}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "spec": spec, "status": status,
            "metadata": {"name": name, "namespace": "default", "uid": uid or name,
                         "creationTimestamp": "2026-01-01T00:00:10Z",
                         "ownerReferences": [{"kind": "ReplicaSet", "name": "web-1", "controller": True}]}}


def event(name: str, reason: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "namespace": "default"},
            "reason": reason, "type": "Normal", "message": reason, "involvedObject": {"kind": "Pod", "name": "a"},
            "lastTimestamp": "2026-01-01T00:00:20Z"}


def sample() -> Trace:
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
          "metadata": {"name": "web-1", "namespace": "default", "ownerReferences": [
              {"kind": "Deployment", "name": "web", "controller": True}]}}
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker-1"}}
    changes = [
        {"type": "change", "revision": 11, "time": T0 + 10, "event": "ADDED", "resource": "pods", "group": "",
         "namespace": "default", "name": "a", "object": pod("a")},
        {"type": "change", "revision": 12, "time": T0 + 11, "event": "MODIFIED", "resource": "pods", "group": "",
         "namespace": "default", "name": "a", "object": pod("a", "worker-1")},
        {"type": "change", "revision": 13, "time": T0 + 20, "event": "ADDED", "resource": "events", "group": "",
         "namespace": "default", "name": "a.1", "object": event("a.1", "Scheduled")},
        {"type": "change", "revision": 14, "time": T0 + 25, "event": "MODIFIED", "resource": "pods", "group": "",
         "namespace": "default", "name": "a", "object": pod("a", "worker-1", ready=True)},
    ]
    return Trace(header(), [{"revision": 10, "resource": "nodes", "group": "", "name": "worker-1", "object": node},
                            {"revision": 10, "resource": "replicasets", "group": "apps", "namespace": "default",
                             "name": "web-1", "object": rs}],
                 changes,
                 [{"type": "input", "time": T0 + 9, "revision": 11, "user": "alice", "verb": "create",
                   "resource": "pods", "namespace": "default", "name": "a", "body": pod("a")}],
                 [{"type": "fault", "action": "apply", "time": T0 + 30, "id": "f1", "fault": "cordon",
                   "target": "worker-1", "params": {}}])


def written(trace: Trace, tmp_path: Path) -> Path:
    out = io.StringIO()
    write_trace(out, trace)
    path = tmp_path / "t.jsonl"
    path.write_text(out.getvalue(), encoding="utf-8")
    return path
