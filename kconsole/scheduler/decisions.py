"""Decision records: one ``SchedulingDecision`` (kconsole.dev/v1) per scheduling attempt.

Namespaced like the pod, named ``<pod>-<attempt>`` and labelled ``kconsole.dev/pod`` and
``kconsole.dev/result``, so ``kubectl get sd -l kconsole.dev/pod=web-1 -o yaml`` shows a pod's
history. ``spec`` says which attempt of which pod; ``status`` what happened::

    status:
      result: Scheduled | Unschedulable | Error
      node: worker-2                      # the winner ("" when none)
      nominatedNode: worker-3             # preemption made room there
      victims: [default/low-1]
      message: "0/3 nodes are available: ..."
      nodes: {total: 5000, evaluated: 500, feasible: 500, skippedByCutoff: 4500, skipped: [...]}
      filter:
        plugins: [NodeUnschedulable, ..., NodeResourcesFit]   # in the order they ran
        skippedPlugins: [NodeAffinity, NodePorts, ...]       # PreFilter said Skip for this pod
        rejected:                                           # one row per node that failed
        - {node: worker-1, plugin: NodeResourcesFit, code: Unschedulable, reasons: [Insufficient cpu]}
      score:
        nodes: [worker-2, worker-3]                         # the feasible nodes, columns below align
        plugins:
        - {name: NodeResourcesFit, weight: 1, raw: [..]}           # no normalisation step, weight 1
        - {name: TaintToleration, weight: 3, raw: 0, normalized: 100, weighted: 300}  # same on every node
        skippedPlugins: [NodeAffinity, ...]
        total: [..]

A node's filter verdicts read: every plugin before ``plugin`` passed it, ``plugin`` rejected it
with ``reasons``, later plugins did not run (upstream stops at the first failure); nodes in
``score.nodes`` passed every filter. *The columnar score layout is deliberate*: at 5,000 nodes the
cut-off evaluates 500 nodes per pod, and a dict per node per plugin would cost more than scheduling
the pod. To keep records small enough not to cost throughput, a column whose values are all equal
is written as that one number, ``normalized`` is left out when the plugin has no normalisation
step (it equals ``raw``), and ``weighted`` when the weight is 1 (it equals ``normalized``);
:func:`node_rows` expands a record back into one row per node. Nodes never evaluated because of
the nodes-to-score cut-off are counted in ``skippedByCutoff``; their names are listed in
``skipped`` only up to :data:`MAX_SKIPPED_NAMES`.

Retention: the last ``retain`` records (default 500) plus the latest record of every pod still
pending; older ones are deleted. ``enabled=False`` turns records off for scale runs.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from operator import attrgetter
from typing import Any

from kconsole.clock import Clock
from kconsole.scheduler.framework import CODE_NAMES, FilterOutcome, ScoreOutcome

log = logging.getLogger(__name__)

API_VERSION = "kconsole.dev/v1"
KIND = "SchedulingDecision"
RESOURCE = "schedulingdecisions"
LABEL_POD = "kconsole.dev/pod"
LABEL_RESULT = "kconsole.dev/result"
MAX_SKIPPED_NAMES = 100
MAX_NAME = 253
MAX_IN_FLIGHT = 64
_name = attrgetter("name")


def record_name(pod_name: str, attempt: int) -> str:
    suffix = f"-{attempt}"
    return pod_name[: MAX_NAME - len(suffix)] + suffix


def build_record(*, namespace: str, pod_name: str, pod_uid: str, attempt: int, scheduler_name: str, time: str,
                 result: str, node: str, message: str, total_nodes: int, filtered: FilterOutcome | None,
                 scored: ScoreOutcome | None, filter_plugins: list[str] | None = None,
                 skipped_names: list[str] | None = None,
                 nominated_node: str = "", victims: list[str] | None = None) -> dict[str, Any]:
    """The SchedulingDecision object for one attempt."""
    labels = {LABEL_RESULT: result}
    if len(pod_name) <= 63:
        labels[LABEL_POD] = pod_name
    evaluated = filtered.processed if filtered is not None else 0
    nodes: dict[str, Any] = {
        "total": total_nodes,
        "evaluated": evaluated,
        "feasible": len(filtered.feasible) if filtered is not None else 0,
        "skippedByCutoff": max(total_nodes - evaluated, 0) if filtered is not None else 0,
    }
    if skipped_names is not None:
        nodes["skipped"] = skipped_names
    status: dict[str, Any] = {"result": result, "node": node, "message": message, "nodes": nodes}
    if nominated_node:
        status["nominatedNode"] = nominated_node
    if victims:
        status["victims"] = victims
    if filtered is not None:
        status["filter"] = {
            "plugins": [p for p in filter_plugins or () if p not in filtered.skipped_plugins],
            "skippedPlugins": sorted(filtered.skipped_plugins),
            "rejected": [
                {"node": name, "plugin": st.plugin, "code": CODE_NAMES[st.code], "reasons": list(st.reasons)}
                for name, st in filtered.failed.items()
            ],
        }
        if filtered.pre_filter_status is not None:
            st = filtered.pre_filter_status
            status["filter"]["preFilter"] = {"plugin": st.plugin, "code": CODE_NAMES[st.code],
                                             "reasons": list(st.reasons)}
    if scored is not None:
        plugins = []
        for (name, w), raw, norm, wt in zip(scored.plugins, scored.raw, scored.normalized, scored.weighted):
            entry: dict[str, Any] = {"name": name, "weight": w, "raw": column(raw)}
            if norm is not raw:
                entry["normalized"] = column(norm)
            if w != 1:
                entry["weighted"] = column(wt)
            plugins.append(entry)
        status["score"] = {
            "nodes": list(map(_name, scored.nodes)),
            "plugins": plugins,
            "skippedPlugins": scored.skipped,
            "total": column(scored.totals),
        }
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": record_name(pod_name, attempt), "namespace": namespace, "labels": labels},
        "spec": {"pod": pod_name, "podUID": pod_uid, "attempt": attempt, "schedulerName": scheduler_name,
                 "time": time},
        "status": status,
    }


def column(values: list[int]) -> list[int] | int:
    """A score column, or its single value when every node has the same one."""
    if values and values.count(values[0]) == len(values):
        return values[0]
    return values


def _at(col: list[int] | int, i: int) -> int:
    return col if isinstance(col, int) else col[i]


def node_rows(record: dict[str, Any]) -> list[dict[str, Any]]:
    """A record's per-node view (what the console shows): one dict per evaluated node."""
    status = record.get("status") or {}
    rows: list[dict[str, Any]] = []
    for r in (status.get("filter") or {}).get("rejected") or ():
        rows.append({"node": r["node"], "filter": f"{r['plugin']}: {', '.join(r['reasons'])}", "scores": {},
                     "total": None})
    score = status.get("score") or {}
    for i, name in enumerate(score.get("nodes") or ()):
        per = {}
        for p in score.get("plugins") or ():
            raw = _at(p["raw"], i)
            norm = _at(p["normalized"], i) if "normalized" in p else raw
            per[p["name"]] = {"raw": raw, "normalized": norm,
                              "weighted": _at(p["weighted"], i) if "weighted" in p else norm * p["weight"]}
        total = _at(score.get("total", 0), i)
        rows.append({"node": name, "filter": "passed", "scores": per, "total": total})
    return rows


class DecisionRecorder:
    """Writes records in the background (bounded concurrency) and enforces retention."""

    def __init__(self, client: Any, clock: Clock, *, enabled: bool = True, retain: int = 500,
                 keep_in_memory: int = 200) -> None:
        self.client = client
        self.clock = clock
        self.enabled = enabled
        self.retain = retain
        #: the most recent records, newest last, for the console (no API round trip)
        self.recent: deque[dict[str, Any]] = deque(maxlen=keep_in_memory)
        self._window: deque[tuple[str, str, str]] = deque()  # (namespace, name, pod key), oldest first
        self._latest: dict[str, str] = {}  # pod key -> its newest record name
        self._pinned: dict[str, tuple[str, str]] = {}  # pod key -> (namespace, name) kept past the window
        self._attempts: dict[str, int] = {}
        self._pending: set[str] = set()
        self._sem = asyncio.Semaphore(MAX_IN_FLIGHT)
        self._tasks: set[asyncio.Task[None]] = set()
        self._creating: dict[tuple[str, str], asyncio.Task[None]] = {}
        self.written = 0
        self.deleted = 0
        self.failed = 0

    async def load_existing(self) -> None:
        """Adopt records a previous leader wrote, so retention and attempt numbers continue."""
        if not self.enabled:
            return
        try:
            items = await self.client.list_all(RESOURCE)
        except Exception as err:
            log.warning("decision records: cannot list existing records: %s", err)
            return
        items.sort(key=lambda o: int((o.get("metadata") or {}).get("resourceVersion") or 0))
        for o in items:
            meta = o.get("metadata") or {}
            spec = o.get("spec") or {}
            key = f"{meta.get('namespace')}/{spec.get('pod', '')}"
            self._window.append((meta.get("namespace", ""), meta.get("name", ""), key))
            self._latest[key] = meta.get("name", "")
            self._attempts[key] = max(self._attempts.get(key, 0), int(spec.get("attempt") or 0))
        self._evict()

    def next_attempt(self, pod_key: str) -> int:
        n = self._attempts.get(pod_key, 0) + 1
        self._attempts[pod_key] = n
        return n

    def set_pending(self, pod_key: str, pending: bool) -> None:
        """Track which pods are pending; a pod that stops pending releases its pinned record."""
        if pending:
            self._pending.add(pod_key)
            return
        self._pending.discard(pod_key)
        pinned = self._pinned.pop(pod_key, None)
        if pinned is not None:
            self._delete(*pinned)

    def forget_pod(self, pod_key: str) -> None:
        self.set_pending(pod_key, False)
        self._attempts.pop(pod_key, None)
        self._latest.pop(pod_key, None)

    def add(self, record: dict[str, Any], pod_key: str) -> None:
        """Queue ``record`` for writing and apply retention."""
        if not self.enabled:
            return
        self.recent.append(record)
        meta = record["metadata"]
        pinned = self._pinned.pop(pod_key, None)
        if pinned is not None:
            self._delete(*pinned)
        self._window.append((meta["namespace"], meta["name"], pod_key))
        self._latest[pod_key] = meta["name"]
        ident = (meta["namespace"], meta["name"])
        task = self._spawn(self._create(record))
        self._creating[ident] = task
        task.add_done_callback(lambda _t: self._creating.pop(ident, None))
        self._evict()

    def _evict(self) -> None:
        while len(self._window) > self.retain:
            ns, name, key = self._window.popleft()
            if key in self._pending and self._latest.get(key) == name:
                self._pinned[key] = (ns, name)
            else:
                self._delete(ns, name)

    def _delete(self, namespace: str, name: str) -> None:
        self._spawn(self._remove(namespace, name))

    def _spawn(self, coro: Any) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _create(self, record: dict[str, Any]) -> None:
        async with self._sem:
            try:
                await self.client.create(record)
                self.written += 1
            except Exception as err:
                self.failed += 1
                log.info("decision record %s/%s not written: %s", record["metadata"]["namespace"],
                         record["metadata"]["name"], err)

    async def _remove(self, namespace: str, name: str) -> None:
        creating = self._creating.get((namespace, name))
        if creating is not None:
            await asyncio.wait([creating])
        async with self._sem:
            try:
                await self.client.delete(RESOURCE, name, namespace)
                self.deleted += 1
            except Exception as err:
                if getattr(err, "code", 0) != 404:
                    log.info("decision record %s/%s not deleted: %s", namespace, name, err)

    async def flush(self) -> None:
        """Wait for every queued write and delete."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def close(self) -> None:
        await self.flush()
