"""What a run did to its workloads, told from its changes, and how two runs differ.

A workload is a pod's controller: a ReplicaSet's pods count for its Deployment, a bare pod is its own
workload (``namespace/Kind/name``). For each: where its pods ran at the end (pods per node), how long
each pod took from creation to its first Ready, the pods still unscheduled at the end and why (their
PodScheduled condition), how many were preempted (``DisruptionTarget`` PreemptionByScheduler) and
how many evicted (any other ``DisruptionTarget`` but pod GC's, or the kubelet's ``Evicted``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kconsole.objects.printers import parse_time

Obj = dict[str, Any]

EVICTION_REASONS = frozenset({"DeletionByTaintManager", "EvictionByEvictionAPI", "TerminationByKubelet"})


@dataclass
class Workload:
    name: str
    placements: dict[str, int] = field(default_factory=dict)  # node -> pods running there at the end
    ready_seconds: list[float] = field(default_factory=list)  # per pod: creation to first Ready
    pending: list[dict[str, str]] = field(default_factory=list)  # {pod, reason, message} at the end
    preempted: int = 0
    evicted: int = 0
    pods: int = 0  # pods ever created

    def to_dict(self) -> Obj:
        ready = sorted(self.ready_seconds)
        return {"workload": self.name, "pods": self.pods, "placements": dict(sorted(self.placements.items())),
                "ready": len(ready), "readyP50": _pct(ready, 0.5), "readyMax": ready[-1] if ready else None,
                "pending": self.pending, "preempted": self.preempted, "evicted": self.evicted}


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    return round(values[min(len(values) - 1, int(q * len(values)))], 3)


def _key(change: Obj) -> tuple[str, str]:
    return change.get("namespace") or "", change["name"]


def _is_ready(pod: Obj) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or ())


def _condition(pod: Obj, kind: str) -> Obj | None:
    return next((c for c in (pod.get("status") or {}).get("conditions") or () if c.get("type") == kind), None)


def outcome(objects: list[Obj], changes: list[Obj]) -> dict[str, Workload]:
    """Workloads by name, from a starting picture (``object`` records) and the changes after it."""
    owners: dict[tuple[str, str], Obj] = {}  # replicaset (ns, name) -> its controller ref
    pods: dict[tuple[str, str], Obj] = {}
    created: dict[str, float] = {}  # pod uid -> creation time
    ready_at: dict[str, float] = {}
    workload_of: dict[str, str] = {}  # pod uid -> workload
    marked: dict[str, str] = {}  # pod uid -> "preempted" | "evicted"

    def track_rs(ns: str, name: str, obj: Obj | None) -> None:
        ref = _controller(obj) if obj is not None else None
        if ref is not None:
            owners[(ns, name)] = ref

    def workload(pod: Obj) -> str:
        meta = pod.get("metadata") or {}
        ns = meta.get("namespace") or ""
        ref = _controller(pod)
        if ref is None:
            return f"{ns}/Pod/{meta.get('name')}"
        if ref.get("kind") == "ReplicaSet":
            parent = owners.get((ns, ref.get("name", "")))
            if parent is not None:
                return f"{ns}/{parent.get('kind')}/{parent.get('name')}"
        return f"{ns}/{ref.get('kind')}/{ref.get('name')}"

    def see_pod(pod: Obj, when: float) -> None:
        meta = pod.get("metadata") or {}
        uid = meta.get("uid") or f"{meta.get('namespace')}/{meta.get('name')}"
        if uid not in created:
            created[uid] = parse_time(meta.get("creationTimestamp")) or when
            workload_of[uid] = workload(pod)
        if uid not in ready_at and _is_ready(pod):
            ready_at[uid] = when
        target = _condition(pod, "DisruptionTarget")
        if target is not None and target.get("status") == "True" and uid not in marked:
            if target.get("reason") == "PreemptionByScheduler":
                marked[uid] = "preempted"
            elif target.get("reason") in EVICTION_REASONS:
                marked[uid] = "evicted"
        if (pod.get("status") or {}).get("reason") == "Evicted" and uid not in marked:
            marked[uid] = "evicted"

    for rec in objects:
        if rec.get("resource") == "replicasets":
            obj = rec["object"]
            track_rs((obj.get("metadata") or {}).get("namespace") or "", obj["metadata"]["name"], obj)
    for rec in objects:
        if rec.get("resource") == "pods" and not rec.get("group"):
            obj = rec["object"]
            pods[_key({"namespace": obj["metadata"].get("namespace"), "name": obj["metadata"]["name"]})] = obj
            see_pod(obj, parse_time((obj.get("metadata") or {}).get("creationTimestamp")) or 0.0)
    for change in changes:
        resource, group = change["resource"], change.get("group") or ""
        if resource == "replicasets" and group == "apps" and change.get("object") is not None:
            track_rs(*_key(change), change["object"])
        if resource != "pods" or group:
            continue
        if change["event"] == "DELETED":
            pods.pop(_key(change), None)
            continue
        pods[_key(change)] = change["object"]
        see_pod(change["object"], float(change["time"]))

    result: dict[str, Workload] = {}

    def get(name: str) -> Workload:
        return result.setdefault(name, Workload(name))

    for uid, name in workload_of.items():
        w = get(name)
        w.pods += 1
        if uid in ready_at:
            w.ready_seconds.append(round(ready_at[uid] - created[uid], 3))
        if marked.get(uid) == "preempted":
            w.preempted += 1
        elif marked.get(uid) == "evicted":
            w.evicted += 1
    for pod in pods.values():
        meta = pod.get("metadata") or {}
        if meta.get("deletionTimestamp") or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        uid = meta.get("uid") or f"{meta.get('namespace')}/{meta.get('name')}"
        w = get(workload_of.get(uid) or workload(pod))
        node = (pod.get("spec") or {}).get("nodeName")
        if node:
            w.placements[node] = w.placements.get(node, 0) + 1
        else:
            cond = _condition(pod, "PodScheduled") or {}
            w.pending.append({"pod": meta.get("name", ""), "reason": cond.get("reason") or "not yet scheduled",
                              "message": cond.get("message") or ""})
    return dict(sorted(result.items()))


def _controller(obj: Obj) -> Obj | None:
    refs = (obj.get("metadata") or {}).get("ownerReferences") or ()
    return next((r for r in refs if r.get("controller")), refs[0] if refs else None)


# --------------------------------------------------------------------------- comparing


def compare(original: dict[str, Workload], rerun: dict[str, Workload]) -> list[Obj]:
    """One entry per workload that differs: which figures, with both values."""
    out = []
    for name in sorted(set(original) | set(rerun)):
        a = original.get(name, Workload(name)).to_dict()
        b = rerun.get(name, Workload(name)).to_dict()
        moved = [k for k in ("placements", "pods", "ready", "readyP50", "readyMax", "preempted", "evicted")
                 if a[k] != b[k]]
        if [p["pod"] + p["reason"] for p in a["pending"]] != [p["pod"] + p["reason"] for p in b["pending"]]:
            moved.append("pending")
        if moved:
            out.append({"workload": name, "differs": moved, "original": {k: a[k] for k in moved},
                        "rerun": {k: b[k] for k in moved}})
    return out


def render(original: dict[str, Workload], rerun: dict[str, Workload], differences: list[Obj]) -> str:
    """The comparison as text: each workload's figures side by side, changed ones marked with ``*``."""
    changed = {d["workload"]: set(d["differs"]) for d in differences}
    names = sorted(set(original) | set(rerun))
    blocks: list[tuple[str, list[tuple[str, str, str, bool]]]] = []
    for name in names:
        a = original.get(name, Workload(name)).to_dict()
        b = rerun.get(name, Workload(name)).to_dict()
        moved = changed.get(name, set())
        rows = [("pods per node", _placements(a), _placements(b), "placements" in moved),
                ("pods created", str(a["pods"]), str(b["pods"]), "pods" in moved),
                ("ready (p50 / max s)", _ready(a), _ready(b), bool(moved & {"ready", "readyP50", "readyMax"})),
                ("pending at end", _pending(a), _pending(b), "pending" in moved),
                ("preempted", str(a["preempted"]), str(b["preempted"]), "preempted" in moved),
                ("evicted", str(a["evicted"]), str(b["evicted"]), "evicted" in moved)]
        blocks.append((f"{name}  [{'CHANGED' if moved else 'same'}]", rows))
    width = max([len("original"), *(len(left) for _, rows in blocks for _, left, _, _ in rows)]) + 3
    lines = [f"   {'':<20} {'original':<{width}} rerun"]
    for title, rows in blocks:
        lines.append(title)
        lines += [f" {'*' if moved else ' '} {label:<20} {left:<{width}} {right}" for label, left, right, moved in rows]
    summary = (f"{len(differences)} of {len(names)} workloads differ" if differences
               else "no differences: every workload landed and behaved as recorded")
    return "\n".join([*lines, "", summary])


def _placements(w: Obj) -> str:
    return " ".join(f"{node}:{n}" for node, n in w["placements"].items()) or "-"


def _ready(w: Obj) -> str:
    if not w["ready"]:
        return "-"
    return f"{w['ready']} ({w['readyP50']:g} / {w['readyMax']:g})"


def _pending(w: Obj) -> str:
    if not w["pending"]:
        return "0"
    reasons: dict[str, int] = {}
    for p in w["pending"]:
        reasons[p["reason"]] = reasons.get(p["reason"], 0) + 1
    return f"{len(w['pending'])} (" + ", ".join(f"{r} {n}" for r, n in sorted(reasons.items())) + ")"
