"""What each object counts for in a ResourceQuota, as upstream's quota evaluators compute it.

One function, :func:`usage`, gives the quota resources an object uses (``pods``, ``count/pods``,
``requests.cpu``, ``services.nodeports``, ``requests.storage``, ...); the quota admission plugin adds a
new object's usage to the namespace's, and the quota controller sums it into ``status.used``.
Stdlib only.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from kconsole.objects.quantity import QuantityError, format_quantity, parse_quantity

Obj = dict[str, Any]

#: Core resources whose bare name is also a quota resource (upstream's legacy object counts).
LEGACY_COUNTS = ("pods", "services", "replicationcontrollers", "resourcequotas", "secrets", "configmaps",
                 "persistentvolumeclaims")
#: (resource, group) whose objects the controller watches: each is counted by object
#: (``count/deployments.apps``), and pods, services and claims by more.
TRACKED = tuple((r, "") for r in LEGACY_COUNTS) + (
    ("deployments", "apps"), ("replicasets", "apps"), ("statefulsets", "apps"), ("daemonsets", "apps"),
    ("jobs", "batch"), ("cronjobs", "batch"))
_COMPUTE = ("cpu", "memory", "ephemeral-storage")


def _add(total: dict[str, Fraction], values: Any) -> None:
    for key, value in (values or {}).items():
        try:
            total[key] = total.get(key, Fraction(0)) + parse_quantity(value)
        except (QuantityError, ValueError, TypeError):
            continue


def _max(total: dict[str, Fraction], values: Any) -> None:
    for key, value in (values or {}).items():
        try:
            amount = parse_quantity(value)
        except (QuantityError, ValueError, TypeError):
            continue
        if amount > total.get(key, Fraction(0)):
            total[key] = amount


def is_terminal(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _pod_usage(pod: Obj) -> dict[str, Fraction]:
    """PodUsageFunc: count/pods always; pods and compute resources until the pod has finished."""
    result = {"count/pods": Fraction(1)}
    if is_terminal(pod):
        return result
    spec = pod.get("spec") or {}
    requests: dict[str, Fraction] = {}
    limits: dict[str, Fraction] = {}
    for c in spec.get("containers") or []:
        resources = c.get("resources") or {}
        _add(requests, resources.get("requests"))
        _add(limits, resources.get("limits"))
    for c in spec.get("initContainers") or []:
        resources = c.get("resources") or {}
        _max(requests, resources.get("requests"))
        _max(limits, resources.get("limits"))
    _add(requests, spec.get("overhead"))
    _add(limits, spec.get("overhead"))
    result["pods"] = Fraction(1)
    for name in _COMPUTE:
        if name in requests:
            result[name] = result[f"requests.{name}"] = requests[name]
        if name in limits:
            result[f"limits.{name}"] = limits[name]
    return result


def _service_usage(svc: Obj) -> dict[str, Fraction]:
    spec = svc.get("spec") or {}
    kind = spec.get("type", "ClusterIP")
    result = {"count/services": Fraction(1), "services": Fraction(1)}
    if kind in ("NodePort", "LoadBalancer"):
        result["services.nodeports"] = Fraction(len(spec.get("ports") or []))
    if kind == "LoadBalancer":
        result["services.loadbalancers"] = Fraction(1)
    return result


def usage(resource: str, group: str, obj: Obj) -> dict[str, Fraction]:
    """The quota resources ``obj`` (of ``resource`` in ``group``) uses."""
    if group == "" and resource == "pods":
        return _pod_usage(obj)
    if group == "" and resource == "services":
        return _service_usage(obj)
    result = {f"count/{resource}" + (f".{group}" if group else ""): Fraction(1)}
    if group == "" and resource in LEGACY_COUNTS:
        result[resource] = Fraction(1)
    if group == "" and resource == "persistentvolumeclaims":
        storage: dict[str, Fraction] = {}
        _add(storage, (((obj.get("spec") or {}).get("resources") or {}).get("requests")))
        if "storage" in storage:
            result["requests.storage"] = storage["storage"]
    return result


def resources_of(hard: dict[str, Any]) -> set[tuple[str, str]]:
    """The (resource, group) pairs whose objects a quota with these ``hard`` names counts."""
    found: set[tuple[str, str]] = set()
    for name in hard:
        if name.startswith("count/"):
            plural, _, group = name.removeprefix("count/").partition(".")
            found.add((plural, group))
        elif name in LEGACY_COUNTS:
            found.add((name, ""))
        elif name.startswith("services."):
            found.add(("services", ""))
        elif name == "requests.storage":
            found.add(("persistentvolumeclaims", ""))
        elif name in _COMPUTE or name.split(".", 1)[-1] in _COMPUTE:
            found.add(("pods", ""))
    return found


def format_amount(value: Fraction) -> str:
    """An amount as the quota status shows it: counts and whole numbers plain, the rest as quantities."""
    if value.denominator == 1 and value.numerator % 1024:
        return str(value.numerator)
    return format_quantity(value)


def pretty(values: dict[str, str]) -> str:
    """upstream prettyPrint: sorted ``name=value`` joined by commas."""
    return ",".join(f"{k}={values[k]}" for k in sorted(values))


def _best_effort(pod: Obj) -> bool:
    spec = pod.get("spec") or {}
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        resources = c.get("resources") or {}
        if resources.get("requests") or resources.get("limits"):
            return False
    return True


def _scope_matches(scope: str, operator: str, values: list[str], pod: Obj) -> bool:
    spec = pod.get("spec") or {}
    if scope == "Terminating":
        return spec.get("activeDeadlineSeconds") is not None
    if scope == "NotTerminating":
        return spec.get("activeDeadlineSeconds") is None
    if scope == "BestEffort":
        return _best_effort(pod)
    if scope == "NotBestEffort":
        return not _best_effort(pod)
    if scope == "PriorityClass":
        name = spec.get("priorityClassName") or ""
        if operator == "Exists":
            return bool(name)
        if operator == "DoesNotExist":
            return not name
        if operator == "NotIn":
            return bool(name) and name not in values
        return name in values
    return True


def in_scope(quota: Obj, resource: str, group: str, obj: Obj) -> bool:
    """Whether a quota's scopes and scopeSelector select ``obj``; scopes concern pods only, so a
    scoped quota counts no other kind (as upstream's evaluators match scopes)."""
    spec = quota.get("spec") or {}
    terms = [(s, "Exists", []) for s in spec.get("scopes") or []]
    for expr in (spec.get("scopeSelector") or {}).get("matchExpressions") or []:
        terms.append((expr.get("scopeName", ""), expr.get("operator", "In"), list(expr.get("values") or [])))
    if not terms:
        return True
    if (resource, group) != ("pods", ""):
        return False
    return all(_scope_matches(scope, operator, values, obj) for scope, operator, values in terms)
