"""PersistentVolumes and PersistentVolumeClaims (upstream ValidatePersistentVolume and
ValidatePersistentVolumeClaim{,Update}): a volume states its capacity, a claim its storage request,
and a claim's spec is fixed once created, but for the one-time volumeName and, when Bound, a
storage request that only grows."""

from __future__ import annotations

from typing import Any

from kconsole.api.validators.field import Cause, forbidden, go_value, required
from kconsole.objects.quantity import QuantityError, parse_quantity

Obj = dict[str, Any]

SPEC_IMMUTABLE = ("spec is immutable after creation except resources.requests and volumeAttributesClassName "
                  "for bound claims")
#: The claim spec's fields in Go's order and names, for the diff upstream prints with a refused update.
CLAIM_SPEC_FIELDS = (("accessModes", "AccessModes"), ("selector", "Selector"), ("resources", "Resources"),
                     ("volumeName", "VolumeName"), ("storageClassName", "StorageClassName"),
                     ("volumeMode", "VolumeMode"), ("dataSource", "DataSource"), ("dataSourceRef", "DataSourceRef"),
                     ("volumeAttributesClassName", "VolumeAttributesClassName"))
POINTER_FIELDS = frozenset(("storageClassName", "volumeMode", "volumeAttributesClassName"))


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


def _go(key: str, value: Any) -> str:
    if value is None:
        return "nil"
    if key == "accessModes" and isinstance(value, list):
        return "[]core.PersistentVolumeAccessMode{" + ", ".join(go_value(v) for v in value) + "}"
    return ("&" if key in POINTER_FIELDS else "") + go_value(value)


def spec_diff(old: Obj, new: Obj) -> str:
    """The changed fields in the layout of Go's cmp.Diff (``- old`` / ``+ new`` lines)."""
    lines = ["  core.PersistentVolumeClaimSpec{"]
    same = 0
    for key, name in CLAIM_SPEC_FIELDS:
        if old.get(key) == new.get(key):
            same += 1
            continue
        if key in old:
            lines.append(f"- \t{name}: {_go(key, old.get(key))},")
        if key in new:
            lines.append(f"+ \t{name}: {_go(key, new.get(key))},")
    if same:
        lines.append(f"  \t... // {same} identical fields")
    lines.append("  }")
    return "\n".join(lines) + "\n"


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
        causes.append(forbidden("spec", SPEC_IMMUTABLE + "\n" + spec_diff(was, now)))
    if _bigger(_storage(old_spec), _storage(spec)):
        causes.append(forbidden("spec.resources.requests.storage", "field can not be less than previous value"))
    return causes
