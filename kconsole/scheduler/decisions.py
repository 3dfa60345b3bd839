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
        reasons:                                            # each distinct verdict once
        - {plugin: NodeResourcesFit, code: Unschedulable, reasons: [Insufficient cpu]}
        - {plugin: NodeUnschedulable, code: UnschedulableAndUnresolvable, reasons: [...]}
        failed:                                             # the nodes that failed a filter
          nodes: [worker-1, worker-7]
          reason: [0, 1]                                    # index into ``reasons`` (one number: all alike)
        preFilter: {plugin: ..., code: ..., reasons: [...]}   # only when PreFilter rejected the pod
      score:
        nodes: [worker-2, worker-3]                         # the feasible nodes, columns below align
        plugins:
        - {name: NodeResourcesFit, weight: 1, raw: [..]}           # no normalisation step, weight 1
        - {name: TaintToleration, weight: 3, raw: 0, normalized: 100, weighted: 300}  # same on every node
        skippedPlugins: [NodeAffinity, ...]
        total: [..]

A node's filter verdicts read: every plugin before ``plugin`` passed it, ``plugin`` rejected it
with ``reasons``, later plugins did not run (upstream stops at the first failure); nodes in
``score.nodes`` passed every filter. Only nodes that were actually evaluated appear. When
PreFilter rejects the pod no node is filtered: ``preFilter`` holds the verdict that applies to all.

*The layout is columnar and deduplicated on purpose*: at 5,000 nodes the cut-off evaluates 500
nodes per pod, and a dict per node (per plugin) would cost the API server more than scheduling
the pod costs the scheduler. So a column whose values are all equal is written as that one
number, ``normalized`` is left out when the plugin has no normalisation step (it equals ``raw``),
``weighted`` when the weight is 1 (it equals ``normalized``), and a filter failure is an index
into the record's table of distinct verdicts (``filter.reasons``) rather than a copy of its
strings. :func:`node_rows` is the one function that expands a record back into one row per node
(the console and printers use it). Nodes never evaluated because of the nodes-to-score cut-off
are counted in ``skippedByCutoff``; their names are listed in ``skipped`` only up to
:data:`MAX_SKIPPED_NAMES`. A pod whose PreFilter named its nodes (NodeAffinity's PreFilterResult:
a DaemonSet pod's one node) is filtered on those alone; ``notInPreFilterResult`` counts the others,
and when it fails ``filter.failed`` lists them too with that plugin's verdict, as upstream's
diagnosis does.

Schema history: before the reason table, filter failures were ``filter.rejected``, a list of
``{node, plugin, code, reasons}`` dicts. :func:`node_rows` still reads that form, so records a
previous version wrote stay readable.

Writing: records are written after bindings and events, in the background. The recorder writes
only while no binding is in flight (``idle``), in concurrent batches the store commits together,
and retention deletes go out in the same batches. A record that retention retires before it was
ever written is dropped from the queue instead of being created and deleted again, so the set
stored is always the one retention defines while a burst of scheduling never waits for records.
In a burst (a batch or more queued) the writer holds until the oldest queued record is ``settle``
seconds old: a window of 500 records turns over in 3-7 s at the 70-170 pods/s of a 10,000-replica
rollout, so writing them at once cost a create and, seconds later, a delete for records nobody had
time to read (~5% of the rollout's CPU); held, retention supersedes them and the burst's last
``retain`` are written once it ends. A few records at a time are written at once, as before;
:meth:`flush` never holds.
``written``/``superseded``/``deleted`` count what happened.

Retention: the last ``retain`` records (default 500) plus the latest record of every pod still
pending; older ones are deleted. ``enabled=False`` turns records off for scale runs.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from operator import attrgetter
from typing import Any

from kconsole.clock import Clock
from kconsole.scheduler.framework import CODE_NAMES, FilterOutcome, ScoreOutcome, Status
from kconsole.objects.schedulingdecision import node_rows  # noqa: F401  (re-exported: the one reader of records)

log = logging.getLogger(__name__)

API_VERSION = "kconsole.dev/v1"
KIND = "SchedulingDecision"
RESOURCE = "schedulingdecisions"
LABEL_POD = "kconsole.dev/pod"
LABEL_RESULT = "kconsole.dev/result"
MAX_SKIPPED_NAMES = 100
MAX_NAME = 253
#: writes and deletes sent together (the store commits concurrent writes in one transaction)
BATCH = 64
#: seconds a burst's records wait before being written (see the module docstring)
SETTLE = 10.0
_name = attrgetter("name")


def record_name(pod_name: str, attempt: int) -> str:
    suffix = f"-{attempt}"
    return pod_name[: MAX_NAME - len(suffix)] + suffix


def _candidates(filtered: FilterOutcome, total_nodes: int) -> int:
    return total_nodes if filtered.named is None else filtered.named


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
        "skippedByCutoff": max(min(total_nodes, _candidates(filtered, total_nodes)) - evaluated, 0)
        if filtered is not None else 0,
    }
    if filtered is not None and filtered.named is not None:
        nodes["notInPreFilterResult"] = max(total_nodes - filtered.named, 0)
    if skipped_names is not None:
        nodes["skipped"] = skipped_names
    status: dict[str, Any] = {"result": result, "node": node, "message": message, "nodes": nodes}
    if nominated_node:
        status["nominatedNode"] = nominated_node
    if victims:
        status["victims"] = victims
    if filtered is not None:
        flt: dict[str, Any] = {
            "plugins": [p for p in filter_plugins or () if p not in filtered.skipped_plugins],
            "skippedPlugins": sorted(filtered.skipped_plugins),
        }
        if filtered.pre_filter_status is not None:
            flt["preFilter"] = _verdict(filtered.pre_filter_status)
        elif filtered.failed:
            flt["reasons"], flt["failed"] = _failures(filtered.failed)
        status["filter"] = flt
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


def _verdict(st: Status) -> dict[str, Any]:
    return {"plugin": st.plugin, "code": CODE_NAMES[st.code], "reasons": list(st.reasons)}


def _failures(failed: dict[str, Status]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(table of distinct verdicts, {nodes, reason}) with ``reason`` indexing the table."""
    table: list[dict[str, Any]] = []
    index: dict[tuple[str, int, tuple[str, ...]], int] = {}
    reason: list[int] = []
    for st in failed.values():
        k = (st.plugin, st.code, st.reasons)
        i = index.get(k)
        if i is None:
            i = index[k] = len(table)
            table.append(_verdict(st))
        reason.append(i)
    return table, {"nodes": list(failed), "reason": column(reason)}


def column(values: list[int]) -> list[int] | int:
    """A column, or its single value when every node has the same one."""
    if values and values.count(values[0]) == len(values):
        return values[0]
    return values


class LazyRecord:
    """A record built on first use: most records of a burst are retired unwritten and never built."""

    __slots__ = ("_build", "_record")

    def __init__(self, build: Callable[[], dict[str, Any]] | None = None,
                 record: dict[str, Any] | None = None) -> None:
        self._build = build
        self._record = record

    def get(self) -> dict[str, Any]:
        if self._record is None:
            assert self._build is not None
            self._record = self._build()
            self._build = None
        return self._record


class DecisionRecorder:
    """Writes records in the background, after bindings, and enforces retention.

    ``idle`` is set while nothing more urgent is in flight (the scheduler clears it while a
    binding is being written); the writer waits for it before each batch.
    """

    def __init__(self, client: Any, clock: Clock, *, enabled: bool = True, retain: int = 500,
                 keep_in_memory: int = 200, idle: asyncio.Event | None = None, batch: int = BATCH,
                 settle: float = SETTLE) -> None:
        self.client = client
        self.clock = clock
        self.enabled = enabled
        self.retain = retain
        self.batch = batch
        self.settle = settle
        if idle is None:
            idle = asyncio.Event()
            idle.set()
        self.idle = idle
        self._recent: deque[LazyRecord] = deque(maxlen=keep_in_memory)
        self._window: deque[tuple[str, str, str]] = deque()  # (namespace, name, pod key), oldest first
        self._latest: dict[str, str] = {}  # pod key -> its newest record name
        self._pinned: dict[str, tuple[str, str]] = {}  # pod key -> (namespace, name) kept past the window
        self._attempts: dict[str, int] = {}
        self._pending: set[str] = set()
        self._to_create: dict[tuple[str, str], LazyRecord] = {}  # not yet sent, oldest first
        self._queued_at: dict[tuple[str, str], float] = {}  # when each of _to_create was added
        self._to_delete: deque[tuple[str, str]] = deque()
        self._writing: set[tuple[str, str]] = set()
        self._delete_after: set[tuple[str, str]] = set()  # retired while its create was in flight
        self._wake = asyncio.Event()
        self._flushing = 0
        self._flush_now = asyncio.Event()
        self._done = asyncio.Event()
        self._done.set()
        self._writer: asyncio.Task[None] | None = None
        self.written = 0
        self.superseded = 0
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
            self._retire(pinned)

    def forget_pod(self, pod_key: str) -> None:
        self.set_pending(pod_key, False)
        self._attempts.pop(pod_key, None)
        self._latest.pop(pod_key, None)

    def recent(self) -> list[dict[str, Any]]:
        """The most recent records, newest last, for the console (no API round trip)."""
        return [r.get() for r in self._recent]

    def add(self, record: dict[str, Any], pod_key: str) -> None:
        """Queue ``record`` for writing and apply retention."""
        meta = record["metadata"]
        self.add_lazy(meta["namespace"], meta["name"], pod_key, LazyRecord(record=record))

    def add_lazy(self, namespace: str, name: str, pod_key: str, record: LazyRecord) -> None:
        """As :meth:`add`, for a record built only if it is written or looked at."""
        if not self.enabled:
            return
        self._recent.append(record)
        pinned = self._pinned.pop(pod_key, None)
        if pinned is not None:
            self._retire(pinned)
        self._window.append((namespace, name, pod_key))
        self._latest[pod_key] = name
        self._to_create[(namespace, name)] = record
        self._queued_at[(namespace, name)] = self.clock.now()
        self._evict()
        self._kick()

    @property
    def backlog(self) -> int:
        """Writes and deletes not yet sent."""
        return len(self._to_create) + len(self._to_delete)

    def _evict(self) -> None:
        while len(self._window) > self.retain:
            ns, name, key = self._window.popleft()
            if key in self._pending and self._latest.get(key) == name:
                self._pinned[key] = (ns, name)
            else:
                self._retire((ns, name))
        self._kick()

    def _retire(self, ident: tuple[str, str]) -> None:
        """Retention no longer keeps ``ident``: unqueue it if unwritten, else delete it."""
        if self._to_create.pop(ident, None) is not None:
            del self._queued_at[ident]
            self.superseded += 1
        elif ident in self._writing:
            self._delete_after.add(ident)
        else:
            self._to_delete.append(ident)

    def _kick(self) -> None:
        if not self._to_create and not self._to_delete:
            return
        self._done.clear()
        self._wake.set()
        if self._writer is None or self._writer.done():
            self._writer = asyncio.get_running_loop().create_task(self._write_loop(), name="decision-records")

    async def _write_loop(self) -> None:
        while True:
            if not self._to_create and not self._to_delete:
                if not self._writing:
                    self._done.set()
                self._wake.clear()
                await self._wake.wait()
                continue
            hold = self._hold()
            if hold > 0:
                self._flush_now.clear()
                try:
                    async with self.clock.timeout(hold):
                        await self._flush_now.wait()
                except TimeoutError:
                    pass
                continue
            await self.idle.wait()
            ops: list[Any] = []
            while self._to_delete and len(ops) < self.batch:
                ops.append(self._remove(self._to_delete.popleft()))
            while self._to_create and len(ops) < self.batch:
                ident = next(iter(self._to_create))
                del self._queued_at[ident]
                ops.append(self._create(ident, self._to_create.pop(ident)))
            await asyncio.gather(*ops)

    def _hold(self) -> float:
        """Seconds to wait before writing: a burst waits for its oldest record to settle."""
        if self._flushing or len(self._to_create) < self.batch:
            return 0.0
        oldest = self._queued_at[next(iter(self._to_create))]
        return oldest + self.settle - self.clock.now()

    async def _create(self, ident: tuple[str, str], record: LazyRecord) -> None:
        self._writing.add(ident)
        try:
            await self.client.create(record.get())
            self.written += 1
        except Exception as err:
            self.failed += 1
            log.info("decision record %s/%s not written: %s", ident[0], ident[1], err)
        finally:
            self._writing.discard(ident)
            if ident in self._delete_after:
                self._delete_after.discard(ident)
                self._to_delete.append(ident)

    async def _remove(self, ident: tuple[str, str]) -> None:
        try:
            await self.client.delete(RESOURCE, ident[1], ident[0])
            self.deleted += 1
        except Exception as err:
            if getattr(err, "code", 0) != 404:
                log.info("decision record %s/%s not deleted: %s", ident[0], ident[1], err)

    async def flush(self) -> None:
        """Wait until every queued write and delete has been sent and answered."""
        self._flushing += 1
        self._flush_now.set()
        try:
            while self._to_create or self._to_delete or self._writing:
                self._kick()
                await self._done.wait()
        finally:
            self._flushing -= 1

    async def close(self) -> None:
        await self.flush()
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.cancel()
            try:
                await writer
            except asyncio.CancelledError:
                pass
