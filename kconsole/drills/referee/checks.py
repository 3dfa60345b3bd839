"""The referee's checkers: pure functions over a :class:`~.record.Recorder`'s history and acknowledged
answers, each returning the violations it found with the recorded lines that show them.

As etcd's robustness tests do, a checker trusts only what clients were told and what watches
delivered: an acknowledged write must be in the watch history at its revision; a consistent read
must reflect every write acknowledged before it came in; a compare-and-swap update must directly
follow the revision it was based on. The Kubernetes-level invariants (one Lease holder at a time,
a pod bound once, a rollout within its surge) are judged over the same history.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from kconsole.drills.referee.record import Ack, Change, Recorder, ResourceLog, obj_key
from kconsole.objects.meta import format_micro_time, parse_time

Obj = dict[str, Any]

#: Simulated seconds a Deployment's earlier (larger) replica count still bounds its pods after a
#: scale-down: pods created for it may land just after the change.
SCALE_GRACE = 10.0
#: MicroTime rounding between a Lease's renewTime and a successor's acquireTime.
LEASE_SLACK = 0.001
#: Lines of history a violation carries at most.
HISTORY_LINES = 12


@dataclass(slots=True)
class Violation:
    check: str
    message: str
    time: float  # simulated seconds since the run's boot when the violating answer or event came
    history: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        lines = [f"[{self.check}] {self.message}"]
        lines += [f"    {line}" for line in self.history]
        return "\n".join(lines)


Checker = Callable[[Recorder], list[Violation]]


def _last(lines: Iterable[Any], n: int = HISTORY_LINES) -> list[str]:
    return [str(x) for x in list(lines)[-n:]]


def _writes(rec: Recorder) -> list[Ack]:
    return [a for a in rec.acks if a.verb in ("create", "update", "patch") and a.code < 300 and a.rv
            and a.resource in rec.logs and a.subresource in ("", "status", "scale")]


# --------------------------------------------------------------------------- watches


def recorded_findings(rec: Recorder) -> list[Violation]:
    """What the recorder saw go wrong while recording: a stream's order, a resumption's replay."""
    return [Violation(f.check, f.message, f.time, f.history) for f in rec.findings]


def acknowledged_writes(rec: Recorder) -> list[Violation]:
    """Every acknowledged write is in the watch history at the revision it was acknowledged with."""
    out = []
    for ack in _writes(rec):
        rlog = rec.logs[ack.resource]
        if rlog.in_gap(ack.rv):
            continue
        change = rlog.by_rv.get(ack.rv)
        if change is not None and change.key == ack.key:
            continue
        if ack.rv > rlog.head:
            why = f"the watch on {ack.resource} never got past rv {rlog.head}"
        elif change is None:
            why = f"the watch on {ack.resource} passed rv {ack.rv} without delivering it"
        else:
            why = f"the watch delivered rv {ack.rv} for {change.key} instead"
        out.append(Violation("acknowledged write", f"{ack.verb} {ack.resource} {ack.key} was acknowledged as "
                             f"rv {ack.rv} but {why}", ack.time,
                             [f"acknowledged: {ack}"] + _last(rlog.events_between(ack.rv - 20, ack.rv + 5), 8)
                             + _last(rlog.by_key.get(ack.key, []), 4)))
    return out


# --------------------------------------------------------------------------- reads


class _Latest:
    """Among writes grouped by what a read covers, the newest one acknowledged before an answer:
    writes in answer order with a running maximum of their revisions, searched by bisection."""

    def __init__(self, writes: Iterable[Ack]) -> None:
        self.indices: list[int] = []
        self.best: list[Ack] = []
        for a in sorted(writes, key=lambda a: a.index):
            top = self.best[-1] if self.best else None
            self.indices.append(a.index)
            self.best.append(a if top is None or a.rv > top.rv else top)

    def before(self, began: int) -> Ack | None:
        i = bisect_left(self.indices, began)
        return self.best[i - 1] if i else None


def consistent_reads(rec: Recorder) -> list[Violation]:
    """A read that asks for the latest state (no resourceVersion) answers with a revision no older
    than any write acknowledged before it came in, with the objects the history had there, and
    finds an object that was written and never deleted."""
    out: list[Violation] = []
    groups: dict[tuple[str, str | None, str | None], list[Ack]] = {}
    for w in _writes(rec):
        groups.setdefault((w.resource, None, w.key), []).append(w)  # a get of the key
        groups.setdefault((w.resource, None, None), []).append(w)  # a list of every namespace
        if w.namespace:
            groups.setdefault((w.resource, w.namespace, None), []).append(w)  # a list of its namespace
    latest = {k: _Latest(v) for k, v in groups.items()}
    lists: dict[str, list[Ack]] = {}
    for ack in rec.acks:
        if not ack.consistent or ack.code not in (200, 404) or ack.resource not in rec.logs or ack.subresource:
            continue
        rlog = rec.logs[ack.resource]
        if ack.verb == "get":
            found = latest.get((ack.resource, None, ack.key))
            newer = found.before(ack.began) if found is not None else None
            if ack.code == 404:
                if newer is not None and not _deleted_after(rlog, ack.key, newer.rv):
                    out.append(Violation("stale read", f"get {ack.resource} {ack.key} answered 404 Not Found, but "
                                         f"rv {newer.rv} was acknowledged before the read came in and the history "
                                         f"has no deletion after it", ack.time,
                                         [f"acknowledged: {newer}", f"read: {ack}"]
                                         + _last(rlog.by_key.get(ack.key, []), 6)))
                continue
            if newer is not None and newer.rv > ack.rv:
                out.append(Violation("stale read", f"get {ack.resource} {ack.key} answered rv {ack.rv}, older than "
                                     f"rv {newer.rv} acknowledged before the read came in", ack.time,
                                     [f"acknowledged: {newer}", f"read: {ack}"]
                                     + _last(rlog.by_key.get(ack.key, []), 6)))
                continue
            if not rlog.in_gap(ack.rv):
                change = rlog.by_rv.get(ack.rv)
                if change is None or change.key != ack.key:
                    out.append(Violation("read of an unwritten revision",
                                         f"get {ack.resource} {ack.key} answered rv {ack.rv}, which the history "
                                         f"never had for it", ack.time,
                                         [f"read: {ack}"] + _last(rlog.by_key.get(ack.key, []), 6)))
        elif ack.verb == "list" and ack.code == 200:
            ns = ack.namespace
            found = latest.get((ack.resource, ns, None))
            newer = found.before(ack.began) if found is not None else None
            if newer is not None and newer.rv > ack.rv:
                out.append(Violation("stale read", f"list {ack.resource}{f' in {ns}' if ns else ''} answered at rv "
                                     f"{ack.rv}, older than rv {newer.rv} acknowledged before the list came in",
                                     ack.time, [f"acknowledged: {newer}", f"list: {ack}"]))
                continue
            if not rlog.in_gap(ack.rv):
                lists.setdefault(ack.resource, []).append(ack)
    for resource, acks in lists.items():
        out += _lists_match(rec.logs[resource], acks)
    return out


def _deleted_after(rlog: ResourceLog, key: str, rv: int) -> bool:
    """Whether the history deleted ``key`` after ``rv`` (or cannot tell: a relist, a gap)."""
    if rlog.in_gap(rv, rlog.head):
        return True
    return any(c.rv > rv and c.type == "DELETED" for c in rlog.by_key.get(key, []))


def _state_at(rlog: ResourceLog) -> Callable[[int], dict[str, Obj]]:
    """The objects the history held at a revision; asked in non-decreasing order (one replay)."""
    state = dict(rlog.initial)
    changes = rlog.changes
    i = 0

    def at(rv: int) -> dict[str, Obj]:
        nonlocal i
        while i < len(changes) and changes[i].rv <= rv:
            c = changes[i]
            if c.type == "RELIST":
                state.clear()
                state.update(c.obj["items"])
            elif c.type == "DELETED":
                state.pop(c.key, None)
            else:
                state[c.key] = c.obj
            i += 1
        return state

    return at


def _compare(rlog: ResourceLog, state: dict[str, Obj], items: list[Obj], namespace: str | None,
             complete: bool) -> list[str]:
    """What differs between a list's items and the history's state (``complete``: no selector)."""
    problems = []
    listed = set()
    for item in items:
        key = obj_key(item)
        listed.add(key)
        have = state.get(key)
        rv = int(item["metadata"].get("resourceVersion") or 0)
        if have is None:
            problems.append(f"{key} rv {rv} listed, but the history had no such object")
        elif int(have["metadata"].get("resourceVersion") or 0) != rv:
            problems.append(f"{key} listed at rv {rv}, the history had rv {have['metadata'].get('resourceVersion')}")
    if complete:
        for key in state:
            if key not in listed and (namespace is None or key.startswith(namespace + "/")):
                problems.append(f"{key} (rv {state[key]['metadata'].get('resourceVersion')}) missing from the list")
    return problems


def _lists_match(rlog: ResourceLog, acks: list[Ack]) -> list[Violation]:
    out = []
    at = _state_at(rlog)
    for ack in sorted(acks, key=lambda a: a.rv):
        if ack.rv > rlog.head or not isinstance(ack.answer, dict):
            continue
        problems = _compare(rlog, at(ack.rv), ack.answer.get("items") or [], ack.namespace, not ack.selector)
        if problems:
            out.append(Violation("list disagrees with history", f"list {ack.resource} at rv {ack.rv} "
                                 f"({ack.agent}): {'; '.join(problems[:4])}", ack.time, [f"list: {ack}"]
                                 + [str(c) for k in _keys(problems) for c in rlog.by_key.get(k, [])[-3:]]))
    return out


def _keys(problems: list[str]) -> list[str]:
    return [p.split(" ", 1)[0] for p in problems[:3]]


def final_state(rlog: ResourceLog, items: list[Obj], rv: int, time: float) -> list[Violation]:
    """A last consistent list agrees with the whole history: every acknowledged write that survives
    is readable, nothing is there that the history did not have."""
    if rlog.in_gap(rv) or rv > rlog.head:
        return []
    problems = _compare(rlog, _state_at(rlog)(rv), items, None, True)
    if not problems:
        return []
    return [Violation("final read", f"the last list of {rlog.resource} at rv {rv} disagrees with the watch history: "
                      f"{'; '.join(problems[:4])}", time,
                      [str(c) for k in _keys(problems) for c in rlog.by_key.get(k, [])[-3:]])]


# --------------------------------------------------------------------------- compare-and-swap


def lost_updates(rec: Recorder) -> list[Violation]:
    """An update based on rv p and acknowledged as rv r must follow p directly in its object's
    history: a write in between was overwritten without being seen (a lost update)."""
    out = []
    for ack in _writes(rec):
        if not ack.base_rv or ack.rv == ack.base_rv:
            continue
        rlog = rec.logs[ack.resource]
        if rlog.in_gap(ack.base_rv, ack.rv):
            continue
        history = rlog.by_key.get(ack.key, [])
        at = next((i for i, c in enumerate(history) if c.rv == ack.rv and c.type != "RELIST"), None)
        if at is None:
            continue  # not in the history at all: acknowledged_writes reports it
        before = history[at - 1] if at else None
        if before is None and ack.base_rv <= rlog.start:
            continue  # based on the state listed before recording began
        if before is not None and (before.type == "RELIST" or before.rv == ack.base_rv):
            continue
        seen = f"rv {before.rv} ({before.type})" if before is not None else "nothing recorded"
        out.append(Violation("lost update", f"{ack.verb} {ack.resource} {ack.key} based on rv {ack.base_rv} was "
                             f"acknowledged as rv {ack.rv}, but {seen} came in between: that write was "
                             f"overwritten unseen", ack.time,
                             [f"acknowledged: {ack}"] + _last(history[max(0, at - 4):at + 1], 6)))
    return out


# --------------------------------------------------------------------------- Kubernetes invariants


def _lease_record(obj: Obj) -> tuple[str, float | None, float | None, float]:
    spec = obj.get("spec") or {}

    def t(field_name: str) -> float | None:
        try:
            return parse_time(str(spec.get(field_name)))
        except ValueError:
            return None

    return (str(spec.get("holderIdentity") or ""), t("acquireTime"), t("renewTime"),
            float(spec.get("leaseDurationSeconds") or 0))


def lease_holders(rec: Recorder) -> list[Violation]:
    """At most one holder per Lease at any moment: a new holder takes a Lease only once the previous
    holder's last renewal has expired (or it released it)."""
    out = []
    rlog = next((r for name, r in rec.logs.items() if name.startswith("leases.")), None)
    if rlog is None:
        return out
    current: dict[str, Obj] = dict(rlog.initial)
    for c in rlog.changes:
        if c.type == "RELIST":
            current = dict(c.obj["items"])
            continue
        prev = current.get(c.key)
        if c.type == "DELETED":
            current.pop(c.key, None)
            continue
        current[c.key] = c.obj
        if prev is None:
            continue
        old_holder, _, old_renew, old_duration = _lease_record(prev)
        holder, acquired, renewed, _ = _lease_record(c.obj)
        if not old_holder or not holder or holder == old_holder or old_renew is None:
            continue
        took = acquired if acquired is not None else renewed
        until = old_renew + old_duration
        if took is not None and took < until - LEASE_SLACK:
            out.append(Violation("two Lease holders", f"Lease {c.key}: {holder} took it at rv {c.rv} "
                                 f"({until - took:.3g} s early) while {old_holder}'s renewal held it until "
                                 f"{_iso(until)}", c.time, _last(rlog.by_key.get(c.key, [])[:_index(rlog, c) + 1], 6)))
    return out


def _index(rlog: ResourceLog, change: Change) -> int:
    return next(i for i, c in enumerate(rlog.by_key[change.key]) if c is change)


def _iso(t: float) -> str:
    return format_micro_time(t)


def pod_bindings(rec: Recorder) -> list[Violation]:
    """A pod is bound once: its nodeName never changes once set, and no second binding is acknowledged."""
    out = []
    rlog = rec.logs.get("pods")
    if rlog is None:
        return out
    nodes: dict[str, tuple[str, Change | None]] = {}
    for key, obj in rlog.initial.items():
        node = (obj.get("spec") or {}).get("nodeName")
        if node:
            nodes[str(obj["metadata"].get("uid"))] = (node, None)
    for c in rlog.changes:
        if c.type in ("RELIST", "DELETED"):
            continue
        uid = str(c.obj["metadata"].get("uid"))
        node = (c.obj.get("spec") or {}).get("nodeName")
        if not node:
            continue
        had = nodes.get(uid)
        if had is None:
            nodes[uid] = (node, c)
        elif had[0] != node:
            out.append(Violation("pod bound twice", f"pod {c.key} (uid {uid[:8]}) bound to {had[0]} moved to {node} "
                                 f"at rv {c.rv}", c.time, _last(rlog.by_key.get(c.key, [])[:_index(rlog, c) + 1], 6)))
            nodes[uid] = (node, c)
    bound: dict[tuple[str, str], list[Ack]] = {}
    for ack in rec.acks:
        if ack.resource == "pods" and ack.subresource == "binding" and ack.verb == "create" and ack.code < 300 and ack.uid:
            bound.setdefault((ack.key, ack.uid), []).append(ack)
    for (key, uid), acks in bound.items():
        if len(acks) > 1:
            targets = [str(((a.body or {}).get("target") or {}).get("name")) for a in acks]
            out.append(Violation("pod bound twice", f"pod {key} (uid {uid[:8]}) had {len(acks)} bindings "
                                 f"acknowledged: to {', '.join(targets)}", acks[1].time,
                                 [f"acknowledged: {a}" for a in acks] + _last(rlog.by_key.get(key, []), 4)))
    return out


def _surge(deployment: Obj, replicas: int) -> int:
    strategy = (deployment.get("spec") or {}).get("strategy") or {}
    if strategy.get("type") == "Recreate":
        return 0
    value = (strategy.get("rollingUpdate") or {}).get("maxSurge", "25%")
    if isinstance(value, str) and value.endswith("%"):
        return math.ceil(replicas * float(value[:-1]) / 100)
    return int(value)


def _controller(obj: Obj) -> str:
    return next((str(o.get("uid")) for o in (obj.get("metadata") or {}).get("ownerReferences") or ()
                 if o.get("controller")), "")


def _active(pod: Obj) -> bool:
    return not pod["metadata"].get("deletionTimestamp") and \
        (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


def rollout_surge(rec: Recorder) -> list[Violation]:
    """A rollout stays within replicas + maxSurge, as upstream's two controllers guarantee it: when
    a Deployment's ReplicaSets are scaled up their replicas add up to no more than its replicas +
    maxSurge (the Deployment controller), and a pod created for a ReplicaSet never takes its active
    pods above its replicas (the ReplicaSet controller). Pods above that are only ever surplus of a
    ReplicaSet scaled down, waiting for their deletion. A replica count lowered in the last
    :data:`SCALE_GRACE` seconds still bounds: work begun before the change may land after it."""
    logs = [rec.logs.get(r) for r in ("deployments.apps", "replicasets.apps", "pods")]
    if any(r is None for r in logs):
        return []
    deps_log, rss_log, pods_log = logs  # type: ignore[misc]
    tables: dict[str, dict[str, Obj]] = {"deployments.apps": {}, "replicasets.apps": {}, "pods": {}}
    deps, rss, pods = tables["deployments.apps"], tables["replicasets.apps"], tables["pods"]
    sizes: dict[str, list[tuple[float, int]]] = {}  # owner uid -> (time, replicas) as they changed
    recent: dict[str, list[Change]] = {}  # deployment uid -> its last changes, for the history

    def uid(o: Obj) -> str:
        return str(o["metadata"].get("uid"))

    def put(table: dict[str, Obj], o: Obj, t: float) -> None:
        table[uid(o)] = o
        if table is not pods:
            n = int((o.get("spec") or {}).get("replicas", 1 if table is deps else 0))
            hist = sizes.setdefault(uid(o), [])
            if not hist or hist[-1][1] != n:
                hist.append((t, n))

    def size(owner: str, t: float) -> int:
        """The largest replica count ``owner`` had in the grace window (its last before it included)."""
        hist = sizes[owner]
        values = [n for when, n in hist if when >= t - SCALE_GRACE]
        earlier = [n for when, n in hist if when < t - SCALE_GRACE]
        return max(values + earlier[-1:])

    for name, rlog in (("deployments.apps", deps_log), ("replicasets.apps", rss_log), ("pods", pods_log)):
        for o in rlog.initial.values():
            put(tables[name], o, 0.0)
    begin = max(deps_log.start, rss_log.start, pods_log.start)
    out: list[Violation] = []
    for c in heapq.merge(deps_log.changes, rss_log.changes, pods_log.changes, key=lambda c: c.rv):
        table = tables[c.resource]
        if c.type == "RELIST":
            table.clear()
            for o in c.obj["items"].values():
                put(table, o, c.time)
            continue
        u = uid(c.obj)
        prev = table.get(u)
        if c.type == "DELETED":
            table.pop(u, None)
            continue
        put(table, c.obj, c.time)
        d = u if table is deps else _controller(c.obj) if table is rss else _controller(rss.get(_controller(c.obj), {}))
        if d in deps:
            recent.setdefault(d, []).append(c)
        if c.rv <= begin or d not in deps:
            continue
        dep = deps[d]
        if table is rss:
            was = int(((prev or {}).get("spec") or {}).get("replicas", 0))
            if int((c.obj.get("spec") or {}).get("replicas", 0)) <= was:
                continue
            total = sum(int((r.get("spec") or {}).get("replicas", 0)) for r in rss.values() if _controller(r) == d)
            top = size(d, c.time)
            limit = top + _surge(dep, top)
            if total > limit:
                replicas = int((dep.get("spec") or {}).get("replicas", 1))
                out.append(Violation("rollout above surge", f"Deployment {obj_key(dep)}: its ReplicaSets' replicas "
                                     f"add up to {total} at rv {c.rv}, above replicas + maxSurge = {replicas} + "
                                     f"{_surge(dep, replicas)}" + (f" (up to {limit} while it scaled down)"
                                                                   if top != replicas else ""),
                                     c.time, _last(recent.get(d, []))))
        elif table is pods and _active(c.obj) and not (prev is not None and _active(prev)):
            owner = _controller(c.obj)
            active = sum(1 for p in pods.values() if _active(p) and _controller(p) == owner)
            limit = size(owner, c.time)
            if active > limit:
                rs = rss[owner]
                out.append(Violation("rollout above surge", f"ReplicaSet {obj_key(rs)} of Deployment {obj_key(dep)}: "
                                     f"pod {c.key} made its active pods {active} at rv {c.rv}, above its replicas "
                                     f"{limit}", c.time, _last(recent.get(d, []))))
    return out


#: Every checker, by the name a report gives it.
CHECKERS: dict[str, Checker] = {
    "watch streams and resumption": recorded_findings,
    "acknowledged writes in the history": acknowledged_writes,
    "consistent reads": consistent_reads,
    "no lost update under compare-and-swap": lost_updates,
    "one Lease holder at a time": lease_holders,
    "a pod bound once": pod_bindings,
    "rollouts within maxSurge": rollout_surge,
}
