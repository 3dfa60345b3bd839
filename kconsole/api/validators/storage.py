"""PersistentVolumes and PersistentVolumeClaims (upstream ValidatePersistentVolume and
ValidatePersistentVolumeClaim{,Update}): a volume states its capacity, a claim its storage request,
and a claim's spec is fixed once created, but for the one-time volumeName and, when Bound, a
storage request that only grows."""

from __future__ import annotations

from typing import Any

from kconsole.api.validators import gocmp
from kconsole.api.validators.field import Cause, forbidden, required
from kconsole.objects.quantity import QuantityError, parse_quantity

Obj = dict[str, Any]

SPEC_IMMUTABLE = ("spec is immutable after creation except resources.requests and volumeAttributesClassName "
                  "for bound claims")


def _spec(obj: Obj) -> Obj:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def validate_persistentvolume(obj: Obj) -> list[Cause]:
    return [] if _spec(obj).get("capacity") else [required("spec.capacity")]


def validate_persistentvolumeclaim(obj: Obj) -> list[Cause]:
    requests = (_spec(obj).get("resources") or {}).get("requests") or {}
    return [] if isinstance(requests, dict) and "storage" in requests else [required("spec.resources[storage]")]


def _storage(spec: Obj) -> Any:
    return ((spec.get("resources") or {}).get("requests") or {}).get("storage")


def _bigger(a: Any, b: Any) -> bool:
    try:
        return parse_quantity(a) > parse_quantity(b)
    except (QuantityError, TypeError):
        return False


def validate_persistentvolumeclaim_update(obj: Obj, old: Obj) -> list[Cause]:
    spec, old_spec = _spec(obj), _spec(old)
    was = dict(old_spec)
    now = dict(spec)
    if not old_spec.get("volumeName"):  # the binder names the volume once
        was.pop("volumeName", None)
        if "volumeName" in now:
            was["volumeName"] = now["volumeName"]
    phase = (obj.get("status") or {}).get("phase") or (old.get("status") or {}).get("phase")
    if phase == "Bound" and isinstance(now.get("resources"), dict):
        resources = dict(now["resources"])
        requests = dict(resources.get("requests") or {})
        old_storage = _storage(old_spec)
        if old_storage is None:
            requests.pop("storage", None)
        else:
            requests["storage"] = old_storage
        resources["requests"] = requests
        now["resources"] = resources
    causes: list[Cause] = []
    if now != was:
        # upstream: cmp.Diff(oldPvc.Spec, newPvcClone.Spec) of the internal structs
        causes.append(forbidden("spec", SPEC_IMMUTABLE + "\n" + gocmp.diff("PersistentVolumeClaimSpec", was, now)))
    if _bigger(_storage(old_spec), _storage(spec)):
        causes.append(forbidden("spec.resources.requests.storage", "field can not be less than previous value"))
    return causes
