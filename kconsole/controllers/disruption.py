"""The disruption controller: keep each PodDisruptionBudget's status, which the Eviction API spends.

upstream's pkg/controller/disruption. A sync counts the budget's pods (its selector in its namespace:
``{}`` selects all, a missing selector none) and works out:

* ``expectedPods`` and ``desiredHealthy``: an integer ``minAvailable`` is the wanted count against the
  pods found; a percentage ``minAvailable`` or any ``maxUnavailable`` is scaled (rounding up) against
  the replicas of the pods' controllers (a Deployment through its ReplicaSet, a ReplicaSet, a
  StatefulSet), each counted once; a controlled pod whose controller has no scale fails the sync;
* ``currentHealthy``: pods not being deleted, Ready, and not in ``disruptedPods`` (an eviction the
  API server granted and whose deletion has not shown yet; entries expire after two minutes);
* ``disruptionsAllowed`` = currentHealthy - desiredHealthy, never negative, 0 while nothing is
  expected; the ``DisruptionAllowed`` condition (SufficientPods / InsufficientPods).

A failed sync fails safe: no disruptions allowed, reason ``SyncFailed`` and a Warning event, as
upstream. Events come from ``controllermanager``, upstream's source name for this controller.
"""

from __future__ import annotations

import logging
from typing import Any

from kconsole.controllers.base import Controller, ControllerContext
from kconsole.controllers.deployment import scaled_value
from kconsole.controllers.podcontrol import with_kind
from kconsole.objects.meta import (
    controller_of,
    deep_copy,
    format_time,
    generation,
    is_being_deleted,
    name,
    namespace,
    parse_time,
)
from kconsole.objects.pod import is_pod_ready
from kconsole.objects.selectors import SelectorError, from_label_selector_dict

log = logging.getLogger(__name__)

Obj = dict[str, Any]

#: How long an eviction's entry in disruptedPods holds its pod out of currentHealthy (upstream DeletionTimeout).
DELETION_TIMEOUT = 120.0
CONDITION = "DisruptionAllowed"


class ScaleError(Exception):
    """The expected pod count cannot be worked out (upstream: the sync fails safe)."""


def _stamp(value: Any) -> float | None:
    """A disruptedPods entry as epoch seconds (RFC 3339 as upstream writes it; a number is tolerated)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    try:
        return parse_time(value)
    except ValueError:
        return None


class DisruptionController(Controller):
    name = "disruption"
    component = "controllermanager"

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.pdbs = self.informer("poddisruptionbudgets")
        self.pods = self.informer("pods")
        self.replicasets = self.informer("replicasets")
        self.deployments = self.informer("deployments")
        self.statefulsets = self.informer("statefulsets")
        self.pdbs.add_event_handler(**self.handlers())
        self.pods.add_event_handler(on_add=self._pod_changed, on_update=self._pod_updated,
                                    on_delete=self._pod_changed)

    def _pod_updated(self, old: Obj, new: Obj) -> None:
        if old.get("metadata", {}).get("labels") != new.get("metadata", {}).get("labels"):
            self._pod_changed(old)
        self._pod_changed(new)

    def _pod_changed(self, pod: Obj) -> None:
        labels = pod["metadata"].get("labels") or {}
        for pdb in self.pdbs.list_by_index("namespace", namespace(pod) or ""):
            try:
                if from_label_selector_dict((pdb.get("spec") or {}).get("selector")).matches(labels):
                    self.enqueue(pdb)
            except SelectorError:
                continue

    # ------------------------------------------------------------------ sync

    async def sync(self, key: str) -> float | None:
        cached = self.pdbs.get(key)
        if cached is None or is_being_deleted(cached):
            return None
        pdb = with_kind(cached, "policy/v1", "PodDisruptionBudget")
        now = self.clock.now()
        try:
            pods = self._pods_for(pdb)
            if not pods:
                self._event(pdb, "Normal", "NoPods", "No matching pods found")
            expected, desired = self._expected_and_desired(pdb, pods)
        except (ScaleError, SelectorError, ValueError) as err:
            self._event(pdb, "Warning", "CalculateExpectedPodCountFailed",
                        f"Failed to calculate the number of expected pods: {err}")
            await self._fail_safe(pdb, str(err), now)
            return None
        disrupted, recheck = self._disrupted(pdb, pods, now)
        healthy = sum(1 for p in pods if not is_being_deleted(p) and name(p) not in disrupted and is_pod_ready(p))
        allowed = healthy - desired if expected > 0 else 0
        status = deep_copy(pdb.get("status") or {})
        status.update({"disruptionsAllowed": max(allowed, 0), "currentHealthy": healthy, "desiredHealthy": desired,
                       "expectedPods": expected, "observedGeneration": generation(pdb)})
        if disrupted:
            status["disruptedPods"] = disrupted
        else:
            status.pop("disruptedPods", None)
        if allowed > 0:
            self._set_condition(status, "True", "SufficientPods", "", now)
        else:
            self._set_condition(status, "False", "InsufficientPods", "", now)
        await self.write_status(pdb, status)
        return None if recheck is None else max(recheck - now, 0.001)

    def _pods_for(self, pdb: Obj) -> list[Obj]:
        selector = from_label_selector_dict((pdb.get("spec") or {}).get("selector"))
        return [p for p in self.pods.list_by_index("namespace", namespace(pdb) or "")
                if selector.matches(p["metadata"].get("labels") or {})]

    def _expected_and_desired(self, pdb: Obj, pods: list[Obj]) -> tuple[int, int]:
        spec = pdb.get("spec") or {}
        if spec.get("maxUnavailable") is not None:
            expected = self._expected_scale(pods)
            return expected, max(expected - scaled_value(spec["maxUnavailable"], expected, True), 0)
        min_available = spec.get("minAvailable")
        if isinstance(min_available, str) and min_available.endswith("%"):
            expected = self._expected_scale(pods)
            return expected, scaled_value(min_available, expected, True)
        if min_available is not None:
            return len(pods), scaled_value(min_available, len(pods), True)
        return 0, 0

    def _expected_scale(self, pods: list[Obj]) -> int:
        """The replicas the pods' controllers want, each controller counted once (getExpectedScale)."""
        scales: dict[str, int] = {}
        for pod in pods:
            ref = controller_of(pod)
            if ref is None:
                continue  # upstream: an unmanaged pod, left out of the expected count
            found = self._controller_scale(ref, namespace(pod) or "")
            if found is None:
                raise ScaleError(f'found no controllers for pod "{name(pod)}"')
            scales[found[0]] = found[1]
        return sum(scales.values())

    def _controller_scale(self, ref: Obj, ns: str) -> tuple[str, int] | None:
        kind, uid = ref.get("kind"), ref.get("uid")
        if kind == "ReplicaSet":
            rs = self.replicasets.get_by_name(ns, ref.get("name", ""))
            if rs is None or rs["metadata"].get("uid") != uid:
                return None
            owner = controller_of(rs)
            if owner is not None and owner.get("kind") == "Deployment":
                d = self.deployments.get_by_name(ns, owner.get("name", ""))
                if d is None or d["metadata"].get("uid") != owner.get("uid"):
                    return None
                return d["metadata"]["uid"], int((d.get("spec") or {}).get("replicas", 1))
            return rs["metadata"]["uid"], int((rs.get("spec") or {}).get("replicas", 1))
        if kind == "StatefulSet":
            sts = self.statefulsets.get_by_name(ns, ref.get("name", ""))
            if sts is None or sts["metadata"].get("uid") != uid:
                return None
            return sts["metadata"]["uid"], int((sts.get("spec") or {}).get("replicas", 1))
        return None

    @staticmethod
    def _disrupted(pdb: Obj, pods: list[Obj], now: float) -> tuple[dict[str, str], float | None]:
        """disruptedPods kept for pods that exist, are not yet being deleted and whose entry has not
        expired; and when the earliest kept entry expires (buildDisruptedPodMap)."""
        entries = (pdb.get("status") or {}).get("disruptedPods") or {}
        kept: dict[str, str] = {}
        recheck: float | None = None
        for pod in pods:
            if is_being_deleted(pod) or name(pod) not in entries:
                continue
            stamp = _stamp(entries[name(pod)])
            if stamp is None or stamp + DELETION_TIMEOUT < now:
                continue
            kept[name(pod)] = format_time(stamp)
            expiry = stamp + DELETION_TIMEOUT
            recheck = expiry if recheck is None else min(recheck, expiry)
        return kept, recheck

    @staticmethod
    def _set_condition(status: Obj, cond_status: str, reason: str, message: str, now: float) -> None:
        """meta.SetStatusCondition: the transition time moves only when the status does."""
        conds = status.setdefault("conditions", [])
        current = next((c for c in conds if c.get("type") == CONDITION), None)
        cond = {"type": CONDITION, "status": cond_status, "observedGeneration": status.get("observedGeneration", 0),
                "lastTransitionTime": format_time(now), "reason": reason, "message": message}
        if current is None:
            conds.append(cond)
            return
        if current.get("status") == cond_status:
            cond["lastTransitionTime"] = current.get("lastTransitionTime") or cond["lastTransitionTime"]
        current.clear()
        current.update(cond)

    async def _fail_safe(self, pdb: Obj, message: str, now: float) -> None:
        status = deep_copy(pdb.get("status") or {})
        status["disruptionsAllowed"] = 0
        for field in ("currentHealthy", "desiredHealthy", "expectedPods"):
            status.setdefault(field, 0)
        self._set_condition(status, "False", "SyncFailed", message, now)
        await self.write_status(pdb, status)

