"""The console's view of the fault catalog (``cluster.faults``, built in :mod:`kconsole.faults`).

The catalog is another layer's object; the console only needs four things from it — the fault
types (name, target kind, description, expected reaction), the active faults, apply and heal —
and reads them through these functions so a catalog entry may be an object or a plain mapping.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

from kconsole.objects.printers import human_duration


@dataclass(frozen=True, slots=True)
class FaultType:
    name: str
    target: str  # kind it applies to: Pod, Node, EtcdMember, ControllerManager, Scheduler, APIServer, ...
    description: str
    expect: str


@dataclass(frozen=True, slots=True)
class ActiveFault:
    id: str
    type: str
    target: str
    since: str
    expect: str


class FaultsUnavailable(RuntimeError):
    """The cluster has no fault catalog (not built, or not started)."""


def _get(obj: Any, *names: str, default: Any = "") -> Any:
    for name in names:
        if isinstance(obj, dict) and name in obj:
            return obj[name]
        if not isinstance(obj, dict) and hasattr(obj, name):
            value = getattr(obj, name)
            return value() if callable(value) and not inspect.isclass(value) and name in ("describe",) else value
    return default


def catalog_of(cluster: Any) -> Any:
    faults = getattr(cluster, "faults", None)
    if faults is None:
        raise FaultsUnavailable("no fault catalog: the cluster was built without kconsole.faults")
    return faults


def fault_types(cluster: Any) -> list[FaultType]:
    faults = catalog_of(cluster)
    raw = _get(faults, "types", "catalog", default=None)
    if callable(raw):
        raw = raw()
    if isinstance(raw, dict):
        raw = list(raw.values())
    out = []
    for t in raw or ():
        target = _get(t, "target", "target_kind", "kind")
        out.append(FaultType(str(_get(t, "name", "type")), str(getattr(target, "value", target)),
                             str(_get(t, "description", "summary")), str(_get(t, "expect", "reaction", "expected"))))
    return out


def same_kind(a: str, b: str) -> bool:
    """``EtcdMember`` is ``etcd-member``: kinds compare without case and dashes."""
    return a.lower().replace("-", "") == b.lower().replace("-", "")


def types_for(cluster: Any, kind: str) -> list[FaultType]:
    """Fault types whose target kind is ``kind``."""
    return [t for t in fault_types(cluster) if same_kind(t.target, kind)]


def active_faults(cluster: Any) -> list[ActiveFault]:
    try:
        faults = catalog_of(cluster)
    except FaultsUnavailable:
        return []
    raw = _get(faults, "active", default=None)
    if callable(raw):
        raw = raw()
    if isinstance(raw, dict):
        raw = list(raw.values())
    expected = {t.name: t.expect for t in fault_types(cluster)} if raw else {}
    clock = getattr(cluster, "clock", None)
    out = []
    for f in raw or ():
        since = _get(f, "applied_at", "since", "applied", "time", default="")
        if isinstance(since, (int, float)) and clock is not None:
            since = f"{human_duration(clock.now() - since)} ago"
        ftype = str(_get(f, "type", "name", "fault"))
        out.append(ActiveFault(str(_get(f, "id")), ftype, str(_get(f, "target")), str(since),
                               str(_get(f, "expect", "expected", default="") or expected.get(ftype, ""))))
    return out


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


async def apply(cluster: Any, fault_type: str, target: str) -> str:
    """Apply a fault; returns its id (the catalog records the Event)."""
    result = await _maybe_await(catalog_of(cluster).apply(fault_type, target))
    return str(_get(result, "id", default=result))


async def heal(cluster: Any, fault_id: str) -> None:
    await _maybe_await(catalog_of(cluster).heal(fault_id))


async def heal_all(cluster: Any) -> int:
    faults = catalog_of(cluster)
    if hasattr(faults, "heal_all"):
        result = await _maybe_await(faults.heal_all())
        return len(result) if isinstance(result, (list, tuple, set)) else int(result or 0)
    active = active_faults(cluster)
    for f in active:
        await heal(cluster, f.id)
    return len(active)


def version(cluster: Any) -> Any:
    faults = getattr(cluster, "faults", None)
    if faults is None:
        return None
    v = getattr(faults, "version", None)
    if v is not None:
        return v
    clock = getattr(cluster, "clock", None)
    return (tuple(f.id for f in active_faults(cluster)), int(clock.now()) if clock is not None else 0)
