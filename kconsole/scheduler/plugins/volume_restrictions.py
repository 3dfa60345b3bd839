"""VolumeRestrictions: a ReadWriteOncePod claim serves one pod in the whole cluster, and a disk that
attaches to one node read-write (GCE PD, AWS EBS, iSCSI, RBD) is not mounted by two pods on it.

Upstream's plugin: PreFilter counts the placed pods already using the pod's ReadWriteOncePod claims
(the cache's ``claim_users``); Filter then refuses every node while any does (Unschedulable, so
preemption may evict the holder, with PreFilter extensions keeping the count right), and refuses a
node where another pod mounts the same disk, unless both mount it read-only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kconsole.scheduler.cache import NodeInfo
from kconsole.scheduler.framework import SKIP_STATUS, UNRESOLVABLE, UNSCHEDULABLE, Plugin, Status, register
from kconsole.scheduler.podinfo import PodInfo

KEY = "VolumeRestrictions"
DISK_CONFLICT = "node(s) had no available disk"
RWOP_CONFLICT = "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
READ_WRITE_ONCE_POD = "ReadWriteOncePod"

Obj = dict[str, Any]


@dataclass(slots=True)
class _State:
    #: "namespace/claim" of the pod's ReadWriteOncePod claims
    claims: frozenset[str]
    #: placed pods using one of them
    conflicts: int

    def clone(self) -> _State:
        return _State(self.claims, self.conflicts)


def _same_disk(kind: str, a: Obj, b: Obj) -> bool:
    """upstream's isVolumeConflict for one pair of volume sources of the same kind."""
    both_read_only = bool(a.get("readOnly")) and bool(b.get("readOnly"))
    if kind == "gcePersistentDisk":
        return a.get("pdName") == b.get("pdName") and not both_read_only
    if kind == "awsElasticBlockStore":
        return a.get("volumeID") == b.get("volumeID")
    if kind == "iscsi":
        return a.get("iqn") == b.get("iqn") and not both_read_only
    monitors = set(a.get("monitors") or ()) & set(b.get("monitors") or ())
    return (bool(monitors) and (a.get("pool") or "rbd") == (b.get("pool") or "rbd")
            and a.get("image") == b.get("image") and not both_read_only)


@register
class VolumeRestrictions(Plugin):
    name = "VolumeRestrictions"
    events = frozenset({"PodDelete", "PersistentVolumeClaim", "NodeAdd"})

    def pre_filter(self, state: dict[str, Any], pod: PodInfo) -> Status | None:
        claims: set[str] = set()
        if pod.claims:
            lister = self.handle.informers.informer("persistentvolumeclaims")
            for name, ephemeral in pod.claims:
                if ephemeral:  # upstream looks at persistentVolumeClaim volumes only
                    continue
                claim = lister.get(f"{pod.namespace}/{name}")
                if claim is None:
                    return Status(UNRESOLVABLE, f'persistentvolumeclaim "{name}" not found')
                if READ_WRITE_ONCE_POD in ((claim.get("spec") or {}).get("accessModes") or ()):
                    claims.add(f"{pod.namespace}/{name}")
        users = self.handle.cache.claim_users
        conflicts = sum(users.get(key, 0) for key in claims)
        if not conflicts and not pod.disks:
            return SKIP_STATUS
        state[KEY] = _State(frozenset(claims), conflicts)
        return None

    def _adjust(self, state: dict[str, Any], other: PodInfo, delta: int) -> None:
        found: _State | None = state.get(KEY)
        if found is not None and other.claims:
            found.conflicts += delta * sum(f"{other.namespace}/{name}" in found.claims for name, _ in other.claims)

    def remove_pod(self, state: dict[str, Any], pod: PodInfo, victim: PodInfo, node: NodeInfo) -> None:
        self._adjust(state, victim, -1)

    def add_pod(self, state: dict[str, Any], pod: PodInfo, other: PodInfo, node: NodeInfo) -> None:
        self._adjust(state, other, +1)

    def filter_node(self, state: dict[str, Any], pod: PodInfo, node: NodeInfo) -> Status | None:
        if pod.disks:
            for other in node.pods.values():
                if other.disks and any(kind == k and _same_disk(kind, mine, src)
                                       for kind, mine in pod.disks for k, src in other.disks):
                    return Status(UNSCHEDULABLE, DISK_CONFLICT)
        found: _State | None = state.get(KEY)
        if found is not None and found.conflicts > 0:
            return Status(UNSCHEDULABLE, RWOP_CONFLICT)
        return None
