"""Pod garbage collector: clears away pods nobody else will, every 20 simulated seconds.

As upstream's podgc, in this order:

* terminated pods (Succeeded/Failed) beyond the threshold (12,500; ``settings["threshold"]``,
  0 disables), oldest first;
* terminating pods on a NotReady node carrying the ``node.kubernetes.io/out-of-service`` taint;
* orphaned pods, bound to a node that does not exist: missing from the cache for the quarantine
  time (40 s) and confirmed absent by a live GET; they are marked Failed with a DisruptionTarget
  condition, then force-deleted;
* unscheduled pods that are terminating.

Force deletion means grace period 0: no kubelet is left to finish the pod's termination.
"""

from __future__ import annotations

import logging
from typing import Any

from kconsole.client import StatusError, is_conflict, is_not_found
from kconsole.controllers.base import Controller, ControllerContext
from kconsole.objects.meta import creation_timestamp, deep_copy, set_condition
from kconsole.objects.pod import is_node_ready, is_terminal, node_taints

log = logging.getLogger(__name__)

GC_PERIOD = 20.0
DEFAULT_THRESHOLD = 12500
QUARANTINE = 40.0
OUT_OF_SERVICE_TAINT = "node.kubernetes.io/out-of-service"
KEY = "podgc"


class PodGCController(Controller):
    name = "pod-garbage-collector-controller"
    component = "pod-garbage-collector-controller"
    workers = 1

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        cfg = self.settings()
        self.threshold = int(cfg.get("threshold", DEFAULT_THRESHOLD))
        self.period = float(cfg.get("period", GC_PERIOD))
        self.quarantine = float(cfg.get("quarantine", QUARANTINE))
        if self.threshold < 0 or self.period <= 0 or self.quarantine < 0:
            raise ValueError(f"{self.name}: threshold and quarantine must be >= 0 and period > 0, got "
                             f"{self.threshold}, {self.quarantine}, {self.period}")
        self.pods = self.informer("pods")
        self.nodes = self.informer("nodes")
        self._missing_since: dict[str, float] = {}
        #: Pods deleted, by reason, for the console and tests.
        self.deleted: dict[str, int] = {"terminated": 0, "out-of-service": 0, "orphaned": 0, "unscheduled": 0}

    async def start(self) -> None:
        self.queue.add(KEY)
        await super().start()

    async def sync(self, key: str) -> float:
        try:
            await self.gc()
        except Exception:  # noqa: BLE001 - a failing pass must not stop the periodic loop
            log.exception("%s: pass failed", self.name)
        return self.period

    async def gc(self) -> None:
        pods = self.pods.list()
        if self.threshold > 0:
            await self._gc_terminated(pods)
        await self._gc_terminating(pods)
        await self._gc_orphaned(pods)
        await self._gc_unscheduled_terminating(pods)

    async def _gc_terminated(self, pods: list[dict[str, Any]]) -> None:
        terminated = [p for p in pods if is_terminal(p)]
        excess = len(terminated) - self.threshold
        if excess <= 0:
            return
        terminated.sort(key=lambda p: (creation_timestamp(p) or 0.0, p["metadata"]["name"]))
        for pod in terminated[:excess]:
            if await self._force_delete(pod):
                self.deleted["terminated"] += 1

    async def _gc_terminating(self, pods: list[dict[str, Any]]) -> None:
        for pod in pods:
            if not pod["metadata"].get("deletionTimestamp"):
                continue
            node = self.nodes.get((pod.get("spec") or {}).get("nodeName") or "")
            if node is None or is_node_ready(node):
                continue
            if any(t.get("key") == OUT_OF_SERVICE_TAINT for t in node_taints(node)):
                if await self._mark_failed_and_delete(pod, "PodGC: node is out of service"):
                    self.deleted["out-of-service"] += 1

    async def _gc_orphaned(self, pods: list[dict[str, Any]]) -> None:
        now = self.clock.now()
        bound = {(p.get("spec") or {}).get("nodeName") for p in pods} - {None, ""}
        missing = {n for n in bound if self.nodes.get(n) is None}
        for name in list(self._missing_since):
            if name not in missing:
                del self._missing_since[name]
        for name in missing:
            self._missing_since.setdefault(name, now)
        gone: set[str] = set()
        for name in missing:
            if now - self._missing_since[name] < self.quarantine:
                continue
            try:
                await self.client.get("nodes", name)
            except StatusError as err:
                if is_not_found(err):
                    gone.add(name)
                    continue
                raise
        if not gone:
            return
        for pod in pods:
            node_name = (pod.get("spec") or {}).get("nodeName")
            if node_name in gone:
                if await self._mark_failed_and_delete(pod, "PodGC: node no longer exists"):
                    self.deleted["orphaned"] += 1

    async def _gc_unscheduled_terminating(self, pods: list[dict[str, Any]]) -> None:
        for pod in pods:
            if pod["metadata"].get("deletionTimestamp") and not (pod.get("spec") or {}).get("nodeName"):
                if await self._force_delete(pod):
                    self.deleted["unscheduled"] += 1

    async def _mark_failed_and_delete(self, pod: dict[str, Any], message: str) -> bool:
        """Upstream's markFailedAndDeletePod: a DisruptionTarget condition (and Failed phase if it
        was still running) so owners see why, then a forced delete."""
        new = deep_copy(pod)
        status = new.setdefault("status", {})
        changed = set_condition(status, "DisruptionTarget", "True", "DeletionByPodGC", message, self.clock.now())
        if not is_terminal(pod):
            status["phase"] = "Failed"
            changed = True
        if changed:
            try:
                await self.client.update_status(new)
            except StatusError as err:
                if is_not_found(err):
                    return False
                if not is_conflict(err):
                    raise
        return await self._force_delete(pod)

    async def _force_delete(self, pod: dict[str, Any]) -> bool:
        meta = pod["metadata"]
        try:
            await self.client.delete("pods", meta["name"], meta.get("namespace"), grace_period_seconds=0,
                                     preconditions={"uid": meta.get("uid", "")})
        except StatusError as err:
            if is_not_found(err) or is_conflict(err):
                return False
            raise
        log.info("%s: deleted pod %s/%s", self.name, meta.get("namespace"), meta["name"])
        return True

