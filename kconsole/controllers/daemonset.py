"""The DaemonSet controller: one pod on every eligible node, following nodes as they come and go.

upstream's pkg/controller/daemon: a node is eligible when the pod template's nodeSelector and
required node affinity match it and its NoSchedule/NoExecute taints are tolerated — with the
tolerations every daemon pod gets automatically (not-ready/unreachable NoExecute, the pressure
and unschedulable NoSchedule taints). A pod already running may stay while only NoSchedule taints
are untolerated. Pods are pinned with a ``metadata.name`` node-affinity term and placed by the
scheduler, as upstream does since 1.12. Failed daemon pods are deleted and recreated
(``FailedDaemonPod``); extra pods on a node are deleted, oldest kept. A RollingUpdate replaces
pods whose ``controller-revision-hash`` is old, at most ``maxUnavailable`` unavailable at a time;
with ``maxSurge`` (upstream's surge path) the new pod starts beside the old one on up to maxSurge
nodes at once (at once wherever the old pod is unavailable), and the old pod goes when the new one
is available, so a node keeps a serving pod throughout.

The template history is ControllerRevisions (constructHistory): the revision whose data matches the
template is the current one and its hash labels new pods; a template put back by ``kubectl rollout
undo`` re-uses its old revision with the next number; old revisions no pod uses are deleted beyond
``revisionHistoryLimit`` (cleanupHistory).
"""

from __future__ import annotations

import logging
from typing import Any

from kconsole.client import StatusError
from kconsole.controllers.base import Controller, ControllerContext
from kconsole.controllers.deployment import scaled_value
from kconsole.controllers.expectations import ExpectationHandlers, Expectations
from kconsole.controllers.history import (
    HASH_LABEL,
    HashCollision,
    collided,
    create_revision,
    delete_revision,
    history_limit,
    new_revision,
    next_revision,
    renumber_revision,
    revision_data,
    revision_number,
    same_data,
    sort_revisions,
    template_hash,
)
from kconsole.controllers.podcontrol import (
    BURST_REPLICAS,
    CLAIM_INDEXERS,
    claim,
    create_pod,
    delete_pod,
    live_owner_key,
    owned_and_orphans,
    pod_from_template,
    selector_of,
    slow_start_batch,
    with_kind,
)
from kconsole.objects.meta import (
    controller_of,
    creation_timestamp,
    deep_copy,
    generation,
    is_being_deleted,
    labels,
    name,
    namespace,
    object_key,
)
from kconsole.objects.pod import RequiredNodeAffinity, find_untolerated_taint, is_pod_available, is_pod_ready
from kconsole.objects.selectors import SelectorError

log = logging.getLogger(__name__)

Obj = dict[str, Any]

REVISION_HASH_LABEL = HASH_LABEL
TEMPLATE_GENERATION_LABEL = "pod-template-generation"

#: AddOrUpdateDaemonPodTolerations.
DAEMON_TOLERATIONS: tuple[Obj, ...] = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
)
NETWORK_UNAVAILABLE = {"key": "node.kubernetes.io/network-unavailable", "operator": "Exists", "effect": "NoSchedule"}


def daemon_pod_spec(template: Obj) -> Obj:
    """The template's pod spec plus the automatic daemon tolerations."""
    spec = deep_copy(template.get("spec") or {})
    tolerations = spec.setdefault("tolerations", [])
    extra = list(DAEMON_TOLERATIONS) + ([NETWORK_UNAVAILABLE] if spec.get("hostNetwork") else [])
    for tol in extra:
        if not any(t.get("key") == tol["key"] and t.get("effect") == tol["effect"] for t in tolerations):
            tolerations.append(dict(tol))
    return spec


def should_run(spec: Obj, node: Obj) -> tuple[bool, bool]:
    """(should run a new pod, may keep an existing one) on ``node`` (NodeShouldRunDaemonPod)."""
    pinned = spec.get("nodeName")
    if pinned and pinned != name(node):
        return False, False
    if not RequiredNodeAffinity({"spec": spec}).matches(node):
        return False, False
    taints = (node.get("spec") or {}).get("taints") or []
    tolerations = spec.get("tolerations") or []
    blocked = find_untolerated_taint(taints, tolerations, ("NoSchedule", "NoExecute")) is not None
    evicted = find_untolerated_taint(taints, tolerations, ("NoExecute",)) is not None
    return not blocked, not evicted


def pin_to_node(spec: Obj, node_name: str) -> None:
    """ReplaceDaemonSetPodNodeNameNodeAffinity: a required matchFields term on metadata.name."""
    affinity = spec.setdefault("affinity", {})
    node_affinity = affinity.setdefault("nodeAffinity", {})
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [term]}


def pod_node(pod: Obj) -> str:
    """The node a daemon pod is for: where it runs, else what its affinity pins it to."""
    bound = (pod.get("spec") or {}).get("nodeName")
    if bound:
        return bound
    required = ((((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    for term in required.get("nodeSelectorTerms") or ():
        for field in term.get("matchFields") or ():
            if field.get("key") == "metadata.name" and field.get("operator") == "In" and len(field.get("values") or []) == 1:
                return field["values"][0]
    return ""


class DaemonSetsController(ExpectationHandlers, Controller):
    name = "daemonset"
    component = "daemonset-controller"
    workers = 2

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.expectations = Expectations(ctx.clock)
        self.ds_informer = self.informer("daemonsets")
        self.node_informer = self.informer("nodes")
        self.pod_informer = self.informer("pods", indexers=CLAIM_INDEXERS)
        self.revision_informer = self.informer("controllerrevisions", indexers=CLAIM_INDEXERS)
        self.revision_informer.add_event_handler(on_delete=lambda r: self.enqueue_owner(r, "DaemonSet"))
        self.ds_informer.add_event_handler(on_add=self.enqueue, on_update=lambda o, n: self.enqueue(n),
                                           on_delete=self._ds_deleted)
        self.node_informer.add_event_handler(on_add=self._node_changed, on_update=self._node_updated,
                                             on_delete=self._node_changed)
        self.pod_informer.add_event_handler(on_add=self._pod_added, on_update=self._pod_updated,
                                            on_delete=self._pod_deleted)

    # ------------------------------------------------------------------ handlers

    def _ds_deleted(self, ds: Obj) -> None:
        self.expectations.forget(object_key(ds))
        self.enqueue(ds)

    def _node_changed(self, node: Obj) -> None:
        for ds in self.ds_informer.list():
            self.enqueue(ds)

    def _node_updated(self, old: Obj, cur: Obj) -> None:
        """Only changes that can alter eligibility matter (heartbeats do not)."""
        if (labels(old) != labels(cur) or (old.get("spec") or {}) != (cur.get("spec") or {})):
            self._node_changed(cur)

    def _owner_key(self, pod: Obj) -> str | None:
        return live_owner_key(pod, "DaemonSet", self.ds_informer)

    def _pod_added(self, pod: Obj) -> None:
        key = self._owner_key(pod)
        if key is None:
            if controller_of(pod) is None:
                for ds in self.ds_informer.list_by_index("namespace", namespace(pod)):
                    self.enqueue(ds)
            return
        self._owned_pod_seen(key, pod)

    def _pod_updated(self, old: Obj, cur: Obj) -> None:
        if old["metadata"].get("resourceVersion") == cur["metadata"].get("resourceVersion"):
            return
        key = self._owner_key(cur)
        if key is None:
            return
        if is_being_deleted(cur):
            self.expectations.deletion_observed(key, object_key(cur))
        self.queue.add(key)

    # ------------------------------------------------------------------ sync

    async def sync(self, key: str) -> float | None:
        cached = self.ds_informer.get(key)
        if cached is None:
            self.expectations.forget(key)
            return None
        ds = with_kind(cached, "apps/v1", "DaemonSet")
        try:
            selector = selector_of(ds)
        except SelectorError as err:
            log.error("daemonset %s: invalid selector: %s", key, err)
            return None
        if selector.empty:
            self._event(ds, "Warning", "SelectingAll",
                        "This daemon set is selecting all pods. A non-empty selector is required.")
            return None
        pods = await claim(self.client, ds, owned_and_orphans(self.pod_informer, ds), selector, "pods")
        nodes = self.node_informer.list()
        template = ds["spec"].get("template") or {}
        spec = daemon_pod_spec(template)
        by_node: dict[str, list[Obj]] = {}
        for pod in pods:
            if not is_being_deleted(pod):
                by_node.setdefault(pod_node(pod), []).append(pod)
        if is_being_deleted(ds):
            await self.write_status(ds, self._status(ds, nodes, spec, by_node, template_hash(ds)))
            return None
        revisions = await claim(self.client, ds, owned_and_orphans(self.revision_informer, ds), selector,
                                "controllerrevisions")
        try:
            current, old = await self._construct_history(ds, revisions)
        except HashCollision:
            await self.write_status(ds, collided(ds))
            return None
        current_hash = labels(current).get(HASH_LABEL) or template_hash(ds)
        if self.expectations.satisfied(key):
            await self._manage(ds, key, nodes, spec, by_node, current_hash)
            await self._cleanup_history(ds, pods, old)
        await self.write_status(ds, self._status(ds, nodes, spec, by_node, current_hash))
        return None

    async def _construct_history(self, ds: Obj, revisions: list[Obj]) -> tuple[Obj, list[Obj]]:
        """(current revision, old ones): the revision holding the template, created or renumbered
        past the old ones when needed (constructHistory)."""
        data = revision_data(ds)
        matching = [r for r in revisions if same_data(r.get("data") or {}, data)]
        old = [r for r in revisions if not same_data(r.get("data") or {}, data)]
        number = next_revision(old)
        if not matching:
            return await create_revision(self.client, ds, new_revision(ds, number)), old
        current = sort_revisions(matching)[-1]
        if revision_number(current) < number:
            current = await renumber_revision(self.client, current, number)
        return current, old

    async def _cleanup_history(self, ds: Obj, pods: list[Obj], old: list[Obj]) -> None:
        """Delete the oldest revisions no pod runs, beyond revisionHistoryLimit (cleanupHistory)."""
        to_kill = len(old) - history_limit(ds)
        if to_kill <= 0:
            return
        live = {labels(p).get(HASH_LABEL) for p in pods}
        for revision in sort_revisions(old):
            if to_kill <= 0:
                break
            if labels(revision).get(HASH_LABEL) in live:
                continue
            await delete_revision(self.client, revision)
            to_kill -= 1

    async def _manage(self, ds: Obj, key: str, nodes: list[Obj], spec: Obj, by_node: dict[str, list[Obj]],
                      current_hash: str) -> None:
        create_on: list[str] = []
        delete: list[Obj] = []
        node_names = {name(n) for n in nodes}
        surge = self._max_surge(ds, nodes, spec)
        for node in nodes:
            run, keep = should_run(spec, node)
            here = by_node.get(name(node), [])
            if run and not here:
                create_on.append(name(node))
            elif run or keep:
                alive = []
                for pod in here:
                    if (pod.get("status") or {}).get("phase") == "Failed":
                        self._event(ds, "Warning", "FailedDaemonPod",
                                    f"Found failed daemon pod {namespace(pod)}/{name(pod)} on node {name(node)}, "
                                    "will try to kill it")
                        delete.append(pod)
                    else:
                        alive.append(pod)
                if len(alive) > 1 and surge:
                    delete.extend(self._surge_extras(ds, alive, current_hash))
                elif len(alive) > 1:
                    alive.sort(key=lambda p: (creation_timestamp(p) or 0.0, name(p)))
                    delete.extend(alive[1:])
                if not alive and run and not delete:
                    create_on.append(name(node))
            else:
                delete.extend(here)
        for node_name, here in by_node.items():
            if node_name not in node_names:
                delete.extend(p for p in here if not (p.get("spec") or {}).get("nodeName"))
        if not create_on and not delete and surge:
            old_done, surge_on = self._surge_update(ds, nodes, spec, by_node, current_hash, surge)
            delete.extend(old_done)
            create_on.extend(surge_on)
        elif not create_on and not delete:
            delete.extend(self._rolling_update_victims(ds, nodes, spec, by_node, current_hash))
        create_on = create_on[:BURST_REPLICAS]
        delete = delete[:BURST_REPLICAS]
        if delete and not surge:
            create_on = []
        if delete:
            self.expectations.expect_deletions(key, [object_key(p) for p in delete])
            for pod in delete:
                try:
                    gone = await delete_pod(self.client, self.recorder, ds, pod)
                except StatusError:
                    self.expectations.deletion_observed(key, object_key(pod))
                    raise
                if not gone:
                    self.expectations.deletion_observed(key, object_key(pod))
        if not create_on:
            return
        self.expectations.expect_creations(key, len(create_on))
        template = ds["spec"].get("template") or {}

        async def create(i: int) -> None:
            pod = pod_from_template(template, ds)
            pod["spec"] = deep_copy(spec)
            pin_to_node(pod["spec"], create_on[i])
            lbls = pod["metadata"].setdefault("labels", {})
            lbls[REVISION_HASH_LABEL] = current_hash
            lbls[TEMPLATE_GENERATION_LABEL] = str(generation(ds))
            await create_pod(self.client, self.recorder, ds, pod)

        ok, err = await slow_start_batch(len(create_on), create)
        if ok < len(create_on):
            self.expectations.lower_creations(key, len(create_on) - ok)
        if err is not None:
            raise err

    @staticmethod
    def _max_surge(ds: Obj, nodes: list[Obj], spec: Obj) -> int:
        """maxSurge of a RollingUpdate, rounded up against the eligible nodes (0: no surge)."""
        strategy = ds["spec"].get("updateStrategy") or {}
        if (strategy.get("type") or "RollingUpdate") != "RollingUpdate":
            return 0
        value = (strategy.get("rollingUpdate") or {}).get("maxSurge")
        if value in (None, 0, "0", "0%"):
            return 0
        eligible = sum(1 for n in nodes if should_run(spec, n)[0])
        try:
            return scaled_value(value, eligible, True)
        except ValueError:
            return 0

    def _surge_extras(self, ds: Obj, alive: list[Obj], current_hash: str) -> list[Obj]:
        """podsShouldBeOnNode while surging: keep the oldest new and the oldest old pod; the old one
        too goes once it is not ready or the new one is available."""
        alive = sorted(alive, key=lambda p: (creation_timestamp(p) or 0.0, name(p)))
        newest: Obj | None = None
        oldest: Obj | None = None
        extra: list[Obj] = []
        for pod in alive:
            if labels(pod).get(REVISION_HASH_LABEL) == current_hash and newest is None:
                newest = pod
            elif labels(pod).get(REVISION_HASH_LABEL) != current_hash and oldest is None:
                oldest = pod
            else:
                extra.append(pod)
        if newest is not None and oldest is not None:
            min_ready = float(ds["spec"].get("minReadySeconds") or 0)
            if not is_pod_ready(oldest) or is_pod_available(newest, min_ready, self.clock.now()):
                extra.append(oldest)
        return extra

    def _surge_update(self, ds: Obj, nodes: list[Obj], spec: Obj, by_node: dict[str, list[Obj]],
                      current_hash: str, surge: int) -> tuple[list[Obj], list[str]]:
        """rollingUpdate with surge: (old pods whose replacement is available, nodes to surge onto)."""
        min_ready = float(ds["spec"].get("minReadySeconds") or 0)
        now = self.clock.now()
        done: list[Obj] = []
        allowed: list[str] = []
        candidates: list[str] = []
        surging = 0
        for node in nodes:
            if not should_run(spec, node)[0]:
                continue
            here = by_node.get(name(node), [])
            new = [p for p in here if labels(p).get(REVISION_HASH_LABEL) == current_hash]
            old = [p for p in here if labels(p).get(REVISION_HASH_LABEL) != current_hash]
            if len(new) > 1 or len(old) > 1:
                surging += 1
                continue
            if not old:
                continue
            if not new:
                (candidates if is_pod_available(old[0], min_ready, now) else allowed).append(name(node))
            elif is_pod_available(new[0], min_ready, now):
                done.append(old[0])
            else:
                surging += 1
        room = min(max(surge - surging, 0), len(candidates))
        return done, allowed + sorted(candidates)[:room]

    def _rolling_update_victims(self, ds: Obj, nodes: list[Obj], spec: Obj, by_node: dict[str, list[Obj]],
                                current_hash: str) -> list[Obj]:
        """Old-revision pods to replace now: unavailable ones freely, others within maxUnavailable."""
        strategy = ds["spec"].get("updateStrategy") or {}
        if (strategy.get("type") or "RollingUpdate") != "RollingUpdate":
            return []
        eligible = [name(n) for n in nodes if should_run(spec, n)[0]]
        rolling = strategy.get("rollingUpdate") or {}
        budget = scaled_value(rolling.get("maxUnavailable", 1), len(eligible), True) or 1
        min_ready = float(ds["spec"].get("minReadySeconds") or 0)
        now = self.clock.now()
        unavailable = 0
        old_available: list[Obj] = []
        victims: list[Obj] = []
        for node_name in eligible:
            here = by_node.get(node_name, [])
            if not here:
                unavailable += 1
                continue
            pod = here[0]
            available = is_pod_available(pod, min_ready, now)
            if labels(pod).get(REVISION_HASH_LABEL) != current_hash:
                if available:
                    old_available.append(pod)
                else:
                    victims.append(pod)
                    unavailable += 1
            elif not available:
                unavailable += 1
        room = max(0, budget - unavailable)
        old_available.sort(key=lambda p: name(p))
        return victims + old_available[:room]

    def _status(self, ds: Obj, nodes: list[Obj], spec: Obj, by_node: dict[str, list[Obj]], current_hash: str) -> Obj:
        min_ready = float(ds["spec"].get("minReadySeconds") or 0)
        now = self.clock.now()
        desired = current = misscheduled = ready = available = updated = 0
        for node in nodes:
            run, _ = should_run(spec, node)
            here = [p for p in by_node.get(name(node), []) if (p.get("spec") or {}).get("nodeName")]
            if run:
                desired += 1
                if here:
                    current += 1
                    pod = min(here, key=lambda p: (creation_timestamp(p) or 0.0, name(p)))
                    if is_pod_ready(pod):
                        ready += 1
                        if is_pod_available(pod, min_ready, now):
                            available += 1
                    if labels(pod).get(REVISION_HASH_LABEL) == current_hash:
                        updated += 1
            elif here:
                misscheduled += 1
        status: Obj = {"currentNumberScheduled": current, "numberMisscheduled": misscheduled,
                       "desiredNumberScheduled": desired, "numberReady": ready}
        if generation(ds):
            status["observedGeneration"] = generation(ds)
        if updated:
            status["updatedNumberScheduled"] = updated
        if available:
            status["numberAvailable"] = available
        if desired - available:
            status["numberUnavailable"] = desired - available
        return status

