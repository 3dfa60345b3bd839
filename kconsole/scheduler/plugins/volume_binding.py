"""VolumeBinding: a pod runs only where the volumes its claims bind to can be used, and the scheduler
binds the claims of ``WaitForFirstConsumer`` classes itself, as upstream's plugin and its volume binder do.

PreFilter (Unresolvable, naming the claim): a claim that does not exist (for an ephemeral volume,
"waiting for ephemeral volume controller to create the persistentvolumeclaim"), is being deleted, or
lost its volume; and ``pod has unbound immediate PersistentVolumeClaims`` while a claim of an
``Immediate`` class waits for the binder. Filter, per node: a bound claim's volume must exist and
its ``nodeAffinity`` admit the node; each unbound ``WaitForFirstConsumer`` claim takes the smallest
Available matching volume the node can use, or else its class must be able to provision there (a
provisioner, ``allowedTopologies``). Reserve assumes the choice, so the next pod does not take the
same volume before the API has it; PreBind writes it (the volume's ``claimRef``, or the claim's
``volume.kubernetes.io/selected-node`` for its provisioner) and waits, polling each second for up
to ``bindTimeoutSeconds`` (600), until the claims are bound; only then is the pod bound.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kconsole.client import StatusError
from kconsole.objects.meta import deep_copy, is_being_deleted, is_controlled_by
from kconsole.objects.storage import (
    BOUND_BY_CONTROLLER,
    SELECTED_NODE,
    claim_class,
    claim_ref_of,
    is_fully_bound,
    matches,
    refers_to,
    storage,
    topology_allows,
    waits_for_first_consumer,
)
from kconsole.scheduler.cache import NodeInfo
from kconsole.scheduler.framework import ERROR, SKIP_STATUS, UNRESOLVABLE, Failed, Plugin, Status, register
from kconsole.scheduler.matchers import NodePredicate, node_selector_terms
from kconsole.scheduler.podinfo import PodInfo

Obj = dict[str, Any]

KEY = "VolumeBinding"
NODE_CONFLICT = "node(s) had volume node affinity conflict"
BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
DEFAULT_BIND_TIMEOUT = 600.0
POLL = 1.0


def _rv(obj: Obj | None) -> str:
    return ((obj or {}).get("metadata") or {}).get("resourceVersion", "")


def _node_predicate(volume: Obj) -> NodePredicate | None:
    """The volume's required node affinity, or None when it may be used anywhere."""
    required = ((volume.get("spec") or {}).get("nodeAffinity") or {}).get("required")
    return node_selector_terms(required.get("nodeSelectorTerms")) if required else None


class AssumeCache:
    """Upstream's assume cache: what this scheduler decided but has not written yet (a volume given a
    claimRef, a claim given its node) stands in for the informer's copy until that copy changes."""

    def __init__(self) -> None:
        self._objs: dict[str, tuple[Obj, str]] = {}

    def get(self, key: str, live: Obj | None) -> Obj | None:
        got = self._objs.get(key)
        if got is None:
            return live
        if live is None or _rv(live) != got[1]:
            del self._objs[key]
            return live
        return got[0]

    def assume(self, key: str, obj: Obj, live: Obj) -> None:
        self._objs[key] = (obj, _rv(live))

    def restore(self, key: str) -> None:
        self._objs.pop(key, None)


@dataclass(slots=True)
class ClaimPlan:
    """What PreFilter works out once for an unbound WaitForFirstConsumer claim; Filter then only asks
    which node may use what (upstream's FindMatchingVolume, with its node-independent tests hoisted)."""

    claim: Obj
    #: the node the claim was already given for provisioning (volume.kubernetes.io/selected-node)
    selected: str | None
    #: a volume pre-bound to the claim: the claim takes it where the node may use it, or nothing
    prebound: tuple[Obj, NodePredicate | None] | None
    #: otherwise the Available volumes that match it, smallest first (ties in the informer's order)
    options: list[tuple[Obj, NodePredicate | None]]
    #: the claim's class when it names a provisioner that can create volumes, else None
    provisioning: Obj | None


@dataclass(slots=True)
class PodVolumes:
    """One pod's claims, sorted out by PreFilter; per node, what Filter chose; what Reserve assumed."""

    #: bound claims' volumes: (claim name, volume or None when missing, its node predicate)
    bound: list[tuple[str, Obj | None, NodePredicate | None]] = field(default_factory=list)
    #: unbound WaitForFirstConsumer claims, smallest request first
    delayed: list[ClaimPlan] = field(default_factory=list)
    #: node name -> (static bindings [(volume, claim)], claims to provision)
    by_node: dict[str, tuple[list[tuple[Obj, Obj]], list[Obj]]] = field(default_factory=dict)
    reserved: tuple[list[tuple[Obj, Obj]], list[Obj]] = field(default_factory=lambda: ([], []))


def _usable(admits: NodePredicate | None, node: NodeInfo) -> bool:
    return admits is None or admits(node.labels, node.name)


def _usable_volume(plan: ClaimPlan, node: NodeInfo, chosen: set[str]) -> Obj | None:
    """The volume the claim takes on ``node``: its pre-bound one if the node may use it, else the
    smallest matching one the node may use that this pod's other claims did not take."""
    if plan.prebound is not None:
        volume, admits = plan.prebound
        return volume if _usable(admits, node) else None
    for volume, admits in plan.options:
        if volume["metadata"]["name"] not in chosen and _usable(admits, node):
            return volume
    return None


class BindError(Exception):
    """A binding that cannot complete; the pod goes back to the queue."""


@register
class VolumeBinding(Plugin):
    name = "VolumeBinding"
    events = frozenset({"PersistentVolumeClaim", "PersistentVolume", "StorageClass", "NodeAdd", "NodeUpdate"})

    def __init__(self, handle: Any, args: dict[str, Any]) -> None:
        super().__init__(handle, args)
        timeout = args.get("bindTimeoutSeconds", DEFAULT_BIND_TIMEOUT)
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
            raise ValueError(f"VolumeBinding: bindTimeoutSeconds must be a positive number, got {timeout!r}")
        self.bind_timeout = float(timeout)
        self.assumed_volumes = AssumeCache()
        self.assumed_claims = AssumeCache()

    # ------------------------------------------------------------------ listers

    def _informer(self, resource: str) -> Any:
        return self.handle.informers.informer(resource)

    def _claim(self, namespace: str, name: str) -> Obj | None:
        key = f"{namespace}/{name}"
        return self.assumed_claims.get(key, self._informer("persistentvolumeclaims").get(key))

    def _volume(self, name: str) -> Obj | None:
        return self.assumed_volumes.get(name, self._informer("persistentvolumes").get(name))

    def _class(self, name: str) -> Obj | None:
        return self._informer("storageclasses").get(name) if name else None

    # ------------------------------------------------------------------ PreFilter

    def pre_filter(self, state: dict[str, Any], pod: PodInfo) -> Status | None:
        if not pod.claims:
            return SKIP_STATUS
        found = PodVolumes()
        delayed: list[Obj] = []
        unbound_immediate = False
        for name, ephemeral in pod.claims:
            claim = self._claim(pod.namespace, name)
            if claim is None:
                if ephemeral:
                    return Status(UNRESOLVABLE, "waiting for ephemeral volume controller to create the "
                                                f'persistentvolumeclaim "{name}"')
                return Status(UNRESOLVABLE, f'persistentvolumeclaim "{name}" not found')
            if ephemeral and not is_controlled_by(claim, pod.pod):
                return Status(UNRESOLVABLE, f"PVC {pod.namespace}/{name} was not created for pod {pod.key} "
                                            "(pod is not owner)")
            if (claim.get("status") or {}).get("phase") == "Lost":
                return Status(UNRESOLVABLE, f'persistentvolumeclaim "{name}" bound to non-existent persistentvolume '
                                            f'"{claim["spec"].get("volumeName", "")}"')
            if is_being_deleted(claim):
                return Status(UNRESOLVABLE, f'persistentvolumeclaim "{name}" is being deleted')
            if is_fully_bound(claim):
                volume = self._volume(claim["spec"]["volumeName"])
                found.bound.append((name, volume, _node_predicate(volume) if volume else None))
            elif not claim["spec"].get("volumeName") and waits_for_first_consumer(self._class(claim_class(claim))):
                delayed.append(claim)
            else:
                unbound_immediate = True
        if unbound_immediate:
            return Status(UNRESOLVABLE, UNBOUND_IMMEDIATE)
        delayed.sort(key=lambda c: storage(c, "requests"))
        by_class: dict[str, list[tuple[Obj, int]]] = {}
        for cls in {claim_class(c) for c in delayed}:
            by_class[cls] = [
                (v, storage(v, "capacity"))
                for v in (self.assumed_volumes.get(live["metadata"]["name"], live)
                          for live in self._informer("persistentvolumes").list())
                if v is not None and ((v.get("spec") or {}).get("storageClassName") or "") == cls
                and not is_being_deleted(v)
            ]
        found.delayed = [self._plan(claim, by_class[claim_class(claim)]) for claim in delayed]
        state[KEY] = found
        return None

    def _plan(self, claim: Obj, volumes: list[tuple[Obj, int]]) -> ClaimPlan:
        prebound: tuple[Obj, NodePredicate | None] | None = None
        options: list[tuple[Obj, int]] = []
        for volume, size in volumes:
            if (volume.get("spec") or {}).get("claimRef"):
                if refers_to(volume, claim):
                    prebound = (volume, _node_predicate(volume))
                    break
            elif (volume.get("status") or {}).get("phase") == "Available" and matches(volume, claim):
                options.append((volume, size))
        options.sort(key=lambda o: o[1])
        sc = self._class(claim_class(claim))
        can_provision = sc is not None and (sc.get("provisioner") or "") not in ("", NOT_SUPPORTED_PROVISIONER)
        return ClaimPlan(claim, (claim["metadata"].get("annotations") or {}).get(SELECTED_NODE), prebound,
                         [] if prebound else [(v, _node_predicate(v)) for v, _ in options],
                         sc if can_provision else None)

    # ------------------------------------------------------------------ Filter

    def filter(self, state: dict[str, Any], pod: PodInfo, nodes: list[NodeInfo]) -> tuple[list[NodeInfo], Failed]:
        if KEY not in state:  # PreFilter did not run (a pod without claims skips this plugin anyway)
            return nodes, []
        return super().filter(state, pod, nodes)

    def filter_node(self, state: dict[str, Any], pod: PodInfo, node: NodeInfo) -> Status | None:
        found: PodVolumes = state[KEY]
        reasons: list[str] = []
        missing = False
        for _name, volume, admits in found.bound:
            if volume is None:
                missing = True
            elif admits is not None and not admits(node.labels, node.name) and NODE_CONFLICT not in reasons:
                reasons.append(NODE_CONFLICT)
        if found.delayed and not self._find_volumes(found, node):
            reasons.append(BIND_CONFLICT)
        if missing:
            reasons.append(PV_NOT_EXIST)
        return Status(UNRESOLVABLE, *reasons) if reasons else None

    def _find_volumes(self, found: PodVolumes, node: NodeInfo) -> bool:
        """Whether every delayed claim can be bound on ``node``; remembers how, for Reserve."""
        provision: list[ClaimPlan] = []
        to_match: list[ClaimPlan] = []
        for plan in found.delayed:
            if plan.selected is None:
                to_match.append(plan)
            elif plan.selected != node.name:
                return False
            else:
                provision.append(plan)
        static: list[tuple[Obj, Obj]] = []
        chosen: set[str] = set()
        for plan in to_match:
            volume = _usable_volume(plan, node, chosen)
            if volume is None:
                provision.append(plan)
            else:
                chosen.add(volume["metadata"]["name"])
                static.append((volume, plan.claim))
        for plan in provision:
            if plan.provisioning is None or not topology_allows(plan.provisioning, node.labels):
                return False
        found.by_node[node.name] = (static, [plan.claim for plan in provision])
        return True

    # ------------------------------------------------------------------ Reserve

    def reserve(self, state: dict[str, Any], pod: PodInfo, node_name: str) -> Status | None:
        found: PodVolumes | None = state.get(KEY)
        if found is None or not found.delayed:
            return None
        static, provision = found.by_node.get(node_name, ([], []))
        assumed_static: list[tuple[Obj, Obj]] = []
        for volume, claim in static:
            new = deep_copy(volume)
            new["spec"]["claimRef"] = claim_ref_of(claim)
            if not refers_to(volume, claim):
                new["metadata"]["annotations"] = {**(new["metadata"].get("annotations") or {}),
                                                  BOUND_BY_CONTROLLER: "yes"}
            self.assumed_volumes.assume(new["metadata"]["name"], new, volume)
            assumed_static.append((new, claim))
        assumed_provision: list[Obj] = []
        for claim in provision:
            new = deep_copy(claim)
            new["metadata"]["annotations"] = {**(new["metadata"].get("annotations") or {}), SELECTED_NODE: node_name}
            self.assumed_claims.assume(f"{pod.namespace}/{claim['metadata']['name']}", new, claim)
            assumed_provision.append(new)
        found.reserved = (assumed_static, assumed_provision)
        return None

    def unreserve(self, state: dict[str, Any], pod: PodInfo, node_name: str) -> None:
        found: PodVolumes | None = state.get(KEY)
        if found is not None:
            self._forget(pod, found)

    def _forget(self, pod: PodInfo, found: PodVolumes) -> None:
        static, provision = found.reserved
        for volume, _claim in static:
            self.assumed_volumes.restore(volume["metadata"]["name"])
        for claim in provision:
            self.assumed_claims.restore(f"{pod.namespace}/{claim['metadata']['name']}")

    # ------------------------------------------------------------------ PreBind

    def pre_bind_pre_flight(self, state: dict[str, Any], pod: PodInfo, node_name: str) -> Status | None:
        found: PodVolumes | None = state.get(KEY)
        return None if found is not None and found.delayed else SKIP_STATUS

    async def pre_bind(self, state: dict[str, Any], pod: PodInfo, node_name: str) -> Status | None:
        found: PodVolumes = state[KEY]
        static, provision = found.reserved
        clock = self.handle.clock
        try:
            for volume, _claim in static:
                await self.handle.client.update(volume)
            for claim in provision:
                await self.handle.client.update(claim)
            deadline = clock.now() + self.bind_timeout
            while not self._bound(pod, node_name, static, provision):
                if clock.now() >= deadline:
                    raise BindError("binding volumes: context deadline exceeded")
                await clock.sleep(POLL)
        except (StatusError, BindError) as err:
            self._forget(pod, found)
            return Status(ERROR, str(err))
        self._forget(pod, found)
        return None

    def _bound(self, pod: PodInfo, node_name: str, static: list[tuple[Obj, Obj]], provision: list[Obj]) -> bool:
        """Upstream's checkBindings: True once every claim is bound as decided; BindError when it cannot be."""
        if self._informer("pods").get(pod.key) is None:
            raise BindError(f'binding volumes: pod does not exist any more: pod "{pod.name}" not found')
        for volume, claim in static:
            name = volume["metadata"]["name"]
            live = self._volume(name)
            current = self._informer("persistentvolumeclaims").get(f"{pod.namespace}/{claim['metadata']['name']}")
            if live is None or current is None:
                raise BindError(f'binding volumes: failed to check binding: "{name}" not found')
            ref = (live.get("spec") or {}).get("claimRef") or {}
            if not ref.get("uid") or ref.get("uid") != current["metadata"].get("uid"):
                raise BindError(f'binding volumes: ClaimRef got reset for pv "{name}"')
            if not is_fully_bound(current):
                return False
        node = self.handle.cache.nodes.get(node_name)
        for claim in provision:
            name = claim["metadata"]["name"]
            current = self._claim(pod.namespace, name)
            if current is None:
                raise BindError(f'binding volumes: failed to check provisioning pvc: "{name}" not found')
            if (current["metadata"].get("annotations") or {}).get(SELECTED_NODE) != node_name:
                raise BindError(f'binding volumes: provisioning failed for PVC "{name}"')
            volume_name = current["spec"].get("volumeName")
            if volume_name:
                volume = self._informer("persistentvolumes").get(volume_name)
                if volume is None:
                    return False
                admits = _node_predicate(volume)
                if admits is not None and node is not None and not admits(node.labels, node_name):
                    raise BindError(f'binding volumes: pv "{volume_name}" node affinity doesn\'t match node '
                                    f'"{node_name}"')
            if not is_fully_bound(current):
                return False
        return True
