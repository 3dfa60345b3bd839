"""Storage helpers (classes, claims, volumes) shared by the API server, the printers, the volume
controllers and the scheduler's VolumeBinding plugin."""

from __future__ import annotations

from typing import Any

from kconsole.objects.meta import deep_copy
from kconsole.objects.quantity import QuantityError, parse_quantity
from kconsole.objects.selectors import SelectorError, from_label_selector_dict

Obj = dict[str, Any]

#: The annotations that make a StorageClass the default (GA and beta), as upstream's IsDefaultAnnotation.
DEFAULT_CLASS_ANNOTATIONS = ("storageclass.kubernetes.io/is-default-class",
                             "storageclass.beta.kubernetes.io/is-default-class")


def is_default_class(sc: dict[str, Any]) -> bool:
    annotations = (sc.get("metadata") or {}).get("annotations") or {}
    return any(annotations.get(key) == "true" for key in DEFAULT_CLASS_ANNOTATIONS)


BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
SELECTED_NODE = "volume.kubernetes.io/selected-node"
#: The in-use protection finalizers (StorageObjectInUseProtection admission adds them; the protection
#: controllers remove them).
PVC_PROTECTION = "kubernetes.io/pvc-protection"
PV_PROTECTION = "kubernetes.io/pv-protection"


def storage(obj: Obj, path: str) -> int:
    """Bytes of ``spec.resources.requests.storage`` (claim) or ``spec.capacity.storage`` (volume)."""
    spec = obj.get("spec") or {}
    section = (spec.get("resources") or {}).get("requests") if path == "requests" else spec.get("capacity")
    try:
        return int(parse_quantity((section or {}).get("storage", "0")))
    except QuantityError:
        return 0


def claim_class(claim: Obj) -> str:
    return (claim.get("spec") or {}).get("storageClassName") or ""


def claim_ref_of(claim: Obj) -> Obj:
    meta = claim["metadata"]
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": meta.get("namespace"),
            "name": meta["name"], "uid": meta.get("uid"), "resourceVersion": meta.get("resourceVersion")}


def refers_to(volume: Obj, claim: Obj) -> bool:
    """The volume's claimRef names this claim (a uid, when set, must be this claim's)."""
    ref = (volume.get("spec") or {}).get("claimRef") or {}
    meta = claim["metadata"]
    return (ref.get("name") == meta["name"] and ref.get("namespace") == meta.get("namespace")
            and ref.get("uid") in (None, "", meta.get("uid")))


def matches(volume: Obj, claim: Obj) -> bool:
    """The volume can serve the claim: same class and volume mode, the access modes, enough storage,
    the claim's label selector."""
    vspec, cspec = volume.get("spec") or {}, claim.get("spec") or {}
    if (vspec.get("storageClassName") or "") != claim_class(claim):
        return False
    if (vspec.get("volumeMode") or "Filesystem") != (cspec.get("volumeMode") or "Filesystem"):
        return False
    if not set(cspec.get("accessModes") or ()) <= set(vspec.get("accessModes") or ()):
        return False
    if storage(volume, "capacity") < storage(claim, "requests"):
        return False
    selector = cspec.get("selector")
    if selector:
        try:
            return from_label_selector_dict(selector).matches(volume["metadata"].get("labels") or {})
        except SelectorError:
            return False
    return True


def is_fully_bound(claim: Obj) -> bool:
    """Upstream's isPVCFullyBound: the claim names its volume and the binder finished the binding."""
    meta = claim.get("metadata") or {}
    return bool((claim.get("spec") or {}).get("volumeName")) and BIND_COMPLETED in (meta.get("annotations") or {})


def waits_for_first_consumer(sc: Obj | None) -> bool:
    """A class whose claims are bound only once a pod using them is scheduled (WaitForFirstConsumer)."""
    return sc is not None and sc.get("volumeBindingMode") == "WaitForFirstConsumer"


def claim_from_template(template: Obj, name: str, namespace: str | None, *, labels: dict[str, str] | None = None,
                        owners: list[Obj] | None = None) -> Obj:
    """A claim made from a ``volumeClaimTemplate`` (a StatefulSet's, or a generic ephemeral volume's):
    the template's labels (plus ``labels``, which also make the map present) and annotations, a copy
    of its spec, and ``owners`` as ownerReferences."""
    tmeta = template.get("metadata") or {}
    meta: Obj = {"name": name, "namespace": namespace}
    merged = {**(tmeta.get("labels") or {}), **(labels or {})}
    if merged or labels is not None:
        meta["labels"] = merged
    if tmeta.get("annotations"):
        meta["annotations"] = dict(tmeta["annotations"])
    if owners:
        meta["ownerReferences"] = owners
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta,
            "spec": deep_copy(template.get("spec") or {})}


def volume_claim(pod_name: str, vol: Obj) -> tuple[str, bool] | None:
    """(claim name, from a generic ephemeral volume) when the volume is a claim; an ephemeral
    volume's claim is ``<pod>-<volume>``, as the ephemeral volume controller names it."""
    pvc = vol.get("persistentVolumeClaim")
    if pvc and pvc.get("claimName"):
        return pvc["claimName"], False
    if vol.get("ephemeral") is not None:
        return f"{pod_name}-{vol.get('name', '')}", True
    return None


#: Volume sources of disks that attach read-write to one node (VolumeRestrictions' disk conflicts).
DISK_SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "iscsi", "rbd")


def pod_disks(volumes: list[Obj] | None) -> tuple[tuple[str, Obj], ...]:
    """(source kind, source) of each of a pod's volumes that is such a disk."""
    return tuple((kind, vol[kind]) for vol in volumes or () for kind in DISK_SOURCES
                 if isinstance(vol, dict) and isinstance(vol.get(kind), dict))


def pod_claims(pod_name: str, volumes: list[Obj] | None) -> tuple[tuple[str, bool], ...]:
    """:func:`volume_claim` for each of a pod's volumes that is a claim."""
    return tuple(c for vol in volumes or () if (c := volume_claim(pod_name, vol)) is not None)


def topology_allows(sc: Obj, labels: dict[str, str]) -> bool:
    """A class's ``allowedTopologies`` admit a node with these labels (none: every node)."""
    terms = sc.get("allowedTopologies") or []
    if not terms:
        return True
    return any(all(labels.get(e.get("key", "")) in (e.get("values") or ())
                   for e in term.get("matchLabelExpressions") or ()) for term in terms)
