"""The faults a real cluster allows through its API, for a console attached by kubeconfig.

An attached console cannot stop a kubelet or an etcd member it does not run; what it can do is what
``kubectl`` can: delete or evict a pod, cordon, drain or taint a node, scale a workload, delete a
leader's Lease to force a re-election. These are the catalog's API-only entries plus a few more,
applied and healed by the same :class:`~kconsole.faults.FaultCatalog` machinery (one Event each).
Nothing is written unless the console was attached with ``--allow-writes``: otherwise every apply
is refused with the reason.
"""

from __future__ import annotations

from typing import Any

from kconsole.client import StatusError, is_not_found
from kconsole.faults import (
    CATALOG,
    Applied,
    FaultCatalog,
    FaultError,
    FaultType,
    Param,
    _lease_ref,
    _node_ref,
    _pod_name,
    _pod_ref,
)

Obj = dict[str, Any]

#: The taint the ``taint`` fault puts on a node (and removes when healed).
FAULT_TAINT = {"key": "kconsole.dev/fault", "value": "taint", "effect": "NoSchedule"}
LEADER_LEASES = {"scheduler": "kube-scheduler", "controller-manager": "kube-controller-manager"}


async def _pod_evict(cat: FaultCatalog, target: str, params: dict[str, str]) -> Applied:
    pod = await cat._pod(target)
    meta = pod["metadata"]
    body = {"apiVersion": "policy/v1", "kind": "Eviction",
            "metadata": {"name": meta["name"], "namespace": meta.get("namespace", "default")}}
    try:
        await cat.client.create_subresource("pods", meta["name"], meta.get("namespace"), "eviction", body)
    except StatusError as err:
        why = "a PodDisruptionBudget refuses it" if err.code == 429 else err.message
        raise FaultError(f"cannot evict pod {_pod_name(pod)}: {why}") from None
    return Applied(_pod_name(pod), _pod_ref(pod), detail="evicted (the Eviction API, PodDisruptionBudgets apply)")


async def _node(cat: FaultCatalog, name: str) -> Obj:
    try:
        return await cat.client.get("nodes", name)
    except StatusError as err:
        if is_not_found(err):
            raise FaultError(f"node {name!r} not found") from None
        raise FaultError(f"cannot read node {name}: {err.message}") from None


async def _set_taints(cat: FaultCatalog, name: str, taints: list[Obj]) -> None:
    try:
        await cat.client.patch("nodes", name, {"spec": {"taints": taints or None}})
    except StatusError as err:
        raise FaultError(f"cannot change the taints of node {name}: {err.message}") from None


def _is_fault_taint(t: Obj) -> bool:
    return t.get("key") == FAULT_TAINT["key"] and t.get("effect") == FAULT_TAINT["effect"]


async def _taint(cat: FaultCatalog, target: str, params: dict[str, str]) -> Applied:
    node = await _node(cat, target)
    taints = list((node.get("spec") or {}).get("taints") or ())
    if any(_is_fault_taint(t) for t in taints):
        raise FaultError(f"node {target} already has the {FAULT_TAINT['key']} taint")
    await _set_taints(cat, target, [*taints, dict(FAULT_TAINT)])

    async def heal() -> None:
        now = await _node(cat, target)
        await _set_taints(cat, target, [t for t in (now.get("spec") or {}).get("taints") or ()
                                        if not _is_fault_taint(t)])

    return Applied(target, _node_ref(target), heal, detail=f"{FAULT_TAINT['key']}={FAULT_TAINT['value']}:NoSchedule")


def _scale(resource: str, kind: str) -> Any:
    async def apply(cat: FaultCatalog, target: str, params: dict[str, str]) -> Applied:
        ns, _, name = target.rpartition("/")
        ns = ns or "default"
        try:
            replicas = int(params.get("replicas", "0"))
        except ValueError:
            raise FaultError(f"replicas must be a whole number, got {params.get('replicas')!r}") from None
        if replicas < 0:
            raise FaultError(f"replicas must be >= 0, got {replicas}")
        try:
            scale = await cat.client.get(resource, name, ns, subresource="scale")
            was = int((scale.get("spec") or {}).get("replicas") or 0)
            await cat.client.patch(resource, name, {"spec": {"replicas": replicas}}, ns, subresource="scale")
        except StatusError as err:
            if is_not_found(err):
                raise FaultError(f"{kind} {ns}/{name} not found") from None
            raise FaultError(f"cannot scale {kind} {ns}/{name}: {err.message}") from None

        async def heal() -> None:
            try:
                await cat.client.patch(resource, name, {"spec": {"replicas": was}}, ns, subresource="scale")
            except StatusError as err:
                if not is_not_found(err):
                    raise FaultError(f"cannot scale {kind} {ns}/{name} back to {was}: {err.message}") from None

        ref = {"apiVersion": "apps/v1", "kind": kind, "namespace": ns, "name": name}
        return Applied(f"{ns}/{name}", ref, heal, detail=f"replicas {was} -> {replicas}")

    return apply


def _delete_leader_lease(kind: str) -> Any:
    lease = LEADER_LEASES[kind]

    async def apply(cat: FaultCatalog, target: str, params: dict[str, str]) -> Applied:
        try:
            current = await cat.client.get("leases", lease, "kube-system")
            await cat.client.delete("leases", lease, "kube-system")
        except StatusError as err:
            if is_not_found(err):
                raise FaultError(f"there is no kube-system/{lease} Lease (is the {kind} running with "
                                 "leader election?)") from None
            raise FaultError(f"cannot delete Lease kube-system/{lease}: {err.message}") from None
        holder = (current.get("spec") or {}).get("holderIdentity") or "nobody"
        return Applied("leader", _lease_ref(lease), detail=f"held by {holder}; the replicas elect again")

    return apply


API_FAULTS: dict[str, FaultType] = {f.name: f for f in [
    CATALOG["pod-kill"],
    FaultType("pod-evict", "pod", "Evict the pod through the Eviction API, as kubectl drain does.",
              "PodDisruptionBudgets may refuse it (429); an evicted pod's controller creates a replacement.",
              _pod_evict, one_shot=True),
    CATALOG["cordon"],
    CATALOG["uncordon"],
    CATALOG["drain"],
    FaultType("taint", "node", "Put a NoSchedule taint (kconsole.dev/fault) on the node.",
              "New pods without a toleration avoid the node; pods already there keep running.", _taint),
    FaultType("scale-deployment", "deployment", "Scale the Deployment (to 0 unless replicas says otherwise).",
              "The ReplicaSet removes (or adds) pods; healing scales back to the replicas it had.",
              _scale("deployments", "Deployment"), params=(Param("replicas", "0", "the new replica count"),)),
    FaultType("scale-statefulset", "statefulset", "Scale the StatefulSet (to 0 unless replicas says otherwise).",
              "Pods go from the highest ordinal down; healing scales back to the replicas it had.",
              _scale("statefulsets", "StatefulSet"), params=(Param("replicas", "0", "the new replica count"),)),
    FaultType("delete-scheduler-lease", "scheduler", "Delete the kube-scheduler leader Lease.",
              "A replica takes the Lease again (the old leader may win it back); scheduling pauses meanwhile.",
              _delete_leader_lease("scheduler"), one_shot=True),
    FaultType("delete-controller-manager-lease", "controller-manager",
              "Delete the kube-controller-manager leader Lease.",
              "A replica takes the Lease again; controllers pause until one leads.",
              _delete_leader_lease("controller-manager"), one_shot=True),
]}


class APIFaultCatalog(FaultCatalog):
    """The API-only faults on an attached cluster; refuses everything without ``allow_writes``."""

    def __init__(self, cluster: Any, *, context: str, allow_writes: bool) -> None:
        super().__init__(cluster)
        self.context = context
        self.allow_writes = allow_writes

    @staticmethod
    def types() -> list[FaultType]:  # type: ignore[override]
        return list(API_FAULTS.values())

    async def targets(self, kind: str) -> list[str]:
        if kind == "node":
            return sorted(n["metadata"]["name"] for n in await self.client.list_all("nodes"))
        if kind in LEADER_LEASES:
            return ["leader"]
        return await super().targets(kind)

    async def apply(self, type_name: str, target: str, params: dict[str, str] | None = None) -> Any:
        if not self.allow_writes:
            raise FaultError(f"read-only: attached to context {self.context} without --allow-writes, "
                             f"so {type_name} is not sent")
        return await super().apply(type_name, target, params)

    async def heal(self, fault_id: str) -> Any:
        if not self.allow_writes:
            raise FaultError(f"read-only: attached to context {self.context} without --allow-writes")
        return await super().heal(fault_id)
