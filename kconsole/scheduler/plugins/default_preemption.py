"""DefaultPreemption: when nothing fits, evict the smallest set of lower-priority pods from one node.

For each node where eviction could help (its filter failure was not *unresolvable*) all
lower-priority pods are removed in a copy of the node; if the pod then fits, pods are given back
one by one, most important first and PDB-protected ones before the rest, keeping each that still
leaves room. Among candidate nodes upstream's order picks: fewest PDB violations, lowest
highest-victim priority, smallest priority sum, fewest victims, latest-started victims. The
victims are deleted (with a ``Preempted`` event each, ``Preempted by pod <preemptor UID> on node
<node>``, the preemptor as its related object) and the preemptor is nominated to the node;
it schedules once the victims are gone.
"""

from __future__ import annotations

import logging
from typing import Any

from kconsole.scheduler.cache import NodeInfo
from kconsole.scheduler.diagnosis import fit_error_message
from kconsole.scheduler.framework import UNRESOLVABLE, UNSCHEDULABLE, Plugin, PostFilterResult, Status, register
from kconsole.scheduler.matchers import label_selector
from kconsole.scheduler.podinfo import PodInfo

log = logging.getLogger(__name__)

NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"
NEVER = "not eligible due to preemptionPolicy=Never."
TERMINATING = "not eligible due to a terminating pod on the nominated node."
INT32_OFFSET = 2**31


def copy_state(state: dict[str, Any]) -> dict[str, Any]:
    """Per-node copy of cycle state: plugin states with ``clone()`` are cloned, others shared."""
    return {k: (v.clone() if hasattr(v, "clone") else v) for k, v in state.items()}


class Candidate:
    __slots__ = ("node", "victims", "pdb_violations")

    def __init__(self, node: NodeInfo, victims: list[PodInfo], pdb_violations: int) -> None:
        self.node = node
        self.victims = victims
        self.pdb_violations = pdb_violations


def _importance(p: PodInfo) -> tuple[int, str]:
    return (-p.priority, p.start_time)


@register
class DefaultPreemption(Plugin):
    name = "DefaultPreemption"

    def __init__(self, handle: Any, args: dict[str, Any]) -> None:
        super().__init__(handle, args)
        self.min_percentage = int(args.get("minCandidateNodesPercentage", 10))
        self.min_absolute = int(args.get("minCandidateNodesAbsolute", 100))
        if not 0 <= self.min_percentage <= 100 or self.min_absolute < 0:
            raise ValueError("DefaultPreemption: minCandidateNodesPercentage must be in 0..100 and "
                             "minCandidateNodesAbsolute >= 0")

    # ----------------------------------------------------------------- eligibility

    def eligible(self, pod: PodInfo, statuses: dict[str, Status]) -> str | None:
        if pod.preemption_policy == "Never":
            return NEVER
        nom = pod.nominated_node
        if nom:
            st = statuses.get(nom)
            if st is None or st.code != UNRESOLVABLE:
                node = self.handle.cache.nodes.get(nom)
                if node is not None and any(p.deleting and p.priority < pod.priority for p in node.pods.values()):
                    return TERMINATING
        return None

    # ----------------------------------------------------------------- dry run

    def select_victims(self, state: dict[str, Any], pod: PodInfo, node: NodeInfo,
                       pdbs: list[tuple[dict[str, Any], Any]]) -> tuple[list[PodInfo], int, Status | None]:
        fw = self.handle.framework
        assert fw is not None
        state = copy_state(state)
        clone = node.clone()
        lower = [p for p in clone.pods.values() if p.priority < pod.priority]
        if not lower:
            return [], 0, Status(UNRESOLVABLE, NO_VICTIMS, plugin=self.name)

        def remove(p: PodInfo) -> None:
            clone.remove_pod(p)
            for f in fw.filters:
                f.remove_pod(state, pod, p, clone)

        def add(p: PodInfo) -> None:
            clone.add_pod(p)
            for f in fw.filters:
                f.add_pod(state, pod, p, clone)

        def fits() -> Status | None:
            _, failed = fw.filter_nodes(state, pod, [clone], frozenset(state.get("__skipped__", ())))
            return failed[0][1] if failed else None

        for p in lower:
            remove(p)
        st = fits()
        if st is not None:
            return [], 0, st
        lower.sort(key=_importance)
        violating, ok = self._split_by_pdb(lower, pdbs)
        victims: list[PodInfo] = []
        violations = 0
        for group, counts in ((violating, True), (ok, False)):
            for p in group:
                add(p)
                if fits() is not None:
                    remove(p)
                    victims.append(p)
                    if counts:
                        violations += 1
        victims.sort(key=_importance)
        return victims, violations, None

    @staticmethod
    def _split_by_pdb(pods: list[PodInfo], pdbs: list[tuple[dict[str, Any], Any]]) -> tuple[list[PodInfo], list[PodInfo]]:
        allowed = [int((pdb.get("status") or {}).get("disruptionsAllowed") or 0) for pdb, _ in pdbs]
        violating: list[PodInfo] = []
        ok: list[PodInfo] = []
        for p in pods:
            hit = False
            if p.labels:
                for i, (pdb, selector) in enumerate(pdbs):
                    if selector is None or (pdb.get("metadata") or {}).get("namespace") != p.namespace:
                        continue
                    if not selector(p.labels):
                        continue
                    if p.name in ((pdb.get("status") or {}).get("disruptedPods") or {}):
                        continue
                    allowed[i] -= 1
                    if allowed[i] < 0:
                        hit = True
            (violating if hit else ok).append(p)
        return violating, ok

    @staticmethod
    def pick(candidates: list[Candidate]) -> Candidate:
        """Fewest PDB violations, lowest top victim priority, smallest priority sum, fewest victims,
        then the node whose most important victims started last."""

        def key(c: Candidate) -> tuple[int, int, int, int]:
            top = c.victims[0].priority
            return (c.pdb_violations, top, sum(v.priority + INT32_OFFSET for v in c.victims), len(c.victims))

        def earliest_start(c: Candidate) -> str:
            top = c.victims[0].priority
            return min(v.start_time for v in c.victims if v.priority == top)

        best = min(key(c) for c in candidates)
        return max((c for c in candidates if key(c) == best), key=earliest_start)

    def find_candidates(self, state: dict[str, Any], pod: PodInfo,
                        statuses: dict[str, Status]) -> tuple[list[Candidate], dict[str, Status], int]:
        nodes = self.handle.cache.node_list()
        out_statuses: dict[str, Status] = {}
        potential = []
        for n in nodes:
            st = statuses.get(n.name)
            if st is not None and st.code == UNRESOLVABLE:
                out_statuses[n.name] = Status(UNRESOLVABLE, NOT_HELPFUL, plugin=self.name)
            else:
                potential.append(n)
        if not potential:
            return [], out_statuses, len(nodes)
        pdbs = [(p, label_selector((p.get("spec") or {}).get("selector")) if (p.get("spec") or {}).get("selector")
                 else None) for p in self.handle.pdbs()]
        want = max(len(potential) * self.min_percentage // 100, self.min_absolute)
        want = min(want, len(potential))
        offset = self.handle.rng.randrange(len(potential))
        candidates: list[Candidate] = []
        non_violating = 0
        for i in range(len(potential)):
            node = potential[(offset + i) % len(potential)]
            victims, violations, st = self.select_victims(state, pod, node, pdbs)
            if st is None and victims:
                candidates.append(Candidate(node, victims, violations))
                if violations == 0:
                    non_violating += 1
                if non_violating >= want:
                    break
            elif st is None:
                out_statuses[node.name] = Status(UNSCHEDULABLE, f'expected at least one victim pod on node "{node.name}"')
            else:
                out_statuses[node.name] = st
        return candidates, out_statuses, len(nodes)

    # ----------------------------------------------------------------- post filter

    async def post_filter(self, state: dict[str, Any], pod: PodInfo, statuses: dict[str, Status]) -> PostFilterResult:
        """Nominate the pod to the best candidate node after deleting its victims, or say why not."""
        why = self.eligible(pod, statuses)
        if why is not None:
            return PostFilterResult(Status(UNSCHEDULABLE, f"preemption: {why}", plugin=self.name))
        candidates, out_statuses, total = self.find_candidates(state, pod, statuses)
        if not candidates:
            msg = fit_error_message(total, out_statuses)
            return PostFilterResult(Status(UNSCHEDULABLE, f"preemption: {msg}", plugin=self.name))
        best = self.pick(candidates)
        await self.prepare(pod, best)
        return PostFilterResult(Status(UNSCHEDULABLE, plugin=self.name), best.node.name,
                                [v.key for v in best.victims])

    async def prepare(self, pod: PodInfo, c: Candidate) -> None:
        """Delete the victims (marking them as disrupted first) and clear weaker nominations to the node."""
        client, recorder, clock = self.handle.client, self.handle.recorder, self.handle.clock
        now = clock.rfc3339() if clock is not None else ""
        for v in c.victims:
            cond = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
                    "message": f"{pod.scheduler_name}: preempting to accommodate a higher priority pod",
                    "lastTransitionTime": now}
            conds = [x for x in ((v.pod.get("status") or {}).get("conditions") or []) if x.get("type") != "DisruptionTarget"]
            try:
                await client.patch("pods", v.name, {"status": {"conditions": conds + [cond]}}, v.namespace,
                                   subresource="status")
            except Exception as err:
                log.info("preemption: cannot mark %s as disrupted: %s", v.key, err)
            try:
                await client.delete("pods", v.name, v.namespace)
            except Exception as err:
                if getattr(err, "code", 0) != 404:
                    log.warning("preemption: deleting victim %s failed: %s", v.key, err)
                    continue
            if recorder is not None:
                # upstream 1.32 names the preemptor by UID only (its name may be in a namespace the victim's
                # readers cannot see) and links it as the related object
                recorder.event(v.pod, "Normal", "Preempted", f"Preempted by pod {pod.uid} on node {c.node.name}",
                               related=pod.pod)
        for other in list(self.handle.nominated.get(c.node.name, {}).values()):
            if other.priority < pod.priority and other.key != pod.key:
                try:
                    await client.patch("pods", other.name, {"status": {"nominatedNodeName": None}}, other.namespace,
                                       subresource="status")
                except Exception as err:
                    log.info("preemption: cannot clear nomination of %s: %s", other.key, err)
