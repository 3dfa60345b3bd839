"""ResourceQuota admission: a create that would take a namespace past a quota's hard limits is
refused with upstream's 403 'exceeded quota: NAME, requested: ..., used: ..., limited: ...'.

Usage is summed from the API server's cache of the namespace at admission time (what the quota
controller also writes into status.used), so a burst of creates (a ReplicaSet scaling up) is judged
against the objects already stored rather than a status the controller has yet to refresh. Objects
this plugin admitted that the cache does not show yet count too (upstream charges the quota's
status in admission for the same reason), until the cache has them or PENDING_SECONDS pass. Like
upstream, a quota constrains only the resources the new object uses.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from kconsole.api.stages import AdmissionContext
from kconsole.api.types import StatusError
from kconsole.objects.meta import parse_time
from kconsole.objects.quantity import QuantityError, parse_quantity
from kconsole.objects.resourcequota import format_amount, in_scope, pretty, usage

Obj = dict[str, Any]
#: Kinds whose updates can use more (upstream's service and claim evaluators handle UPDATE; pods' do not).
UPDATES_CHARGED = frozenset({("services", ""), ("persistentvolumeclaims", "")})
#: How long an admitted create counts before the cache shows it (one that failed to store is dropped then).
PENDING_SECONDS = 10.0


#: The compute resources a quota makes every container state (upstream's pod evaluator).
COMPUTE = frozenset(("cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"))


def missing_compute(pod: Obj, hard: dict[str, Any]) -> str:
    """upstream's pod Constraints: with a quota on cpu/memory requests or limits, every container
    must state them; ``must specify limits.memory for: app; requests.cpu for: app`` otherwise."""
    required = COMPUTE.intersection(hard)
    if not required:
        return ""
    spec = pod.get("spec") if isinstance(pod.get("spec"), dict) else {}
    missing: dict[str, set[str]] = {}
    for container in [*(spec.get("containers") or ()), *(spec.get("initContainers") or ())]:
        if not isinstance(container, dict):
            continue
        resources = container.get("resources") or {}
        stated: set[str] = set()
        for key in (resources.get("requests") or {}):
            if key in ("cpu", "memory"):
                stated |= {key, f"requests.{key}"}
        for key in (resources.get("limits") or {}):
            if key in ("cpu", "memory"):
                stated.add(f"limits.{key}")
        for resource in required - stated:
            missing.setdefault(resource, set()).add(str(container.get("name") or ""))
    if not missing:
        return ""
    return "must specify " + "; ".join(f"{r} for: {','.join(sorted(missing[r]))}" for r in sorted(missing))


class ResourceQuota:
    name = "ResourceQuota"

    def __init__(self) -> None:
        #: (namespace, resource, group) -> name -> (usage, admitted at): admitted, not yet in the cache.
        self._pending: dict[tuple[str, str, str], dict[str, tuple[Obj, dict[str, Fraction], float]]] = {}

    def _used(self, ctx: AdmissionContext, quota: Obj, now: float) -> dict[str, Fraction]:
        info = ctx.info
        used: dict[str, Fraction] = {}
        seen: set[str] = set()
        for other in ctx.list_objects(info.resource, ctx.namespace or ""):
            seen.add((other.get("metadata") or {}).get("name", ""))
            if in_scope(quota, info.resource, info.group, other):
                for key, amount in usage(info.resource, info.group, other).items():
                    used[key] = used.get(key, Fraction(0)) + amount
        pending = self._pending.get((ctx.namespace or "", info.resource, info.group), {})
        for name, (obj, amounts, at) in list(pending.items()):
            if name in seen or now - at > PENDING_SECONDS:
                del pending[name]
                continue
            if in_scope(quota, info.resource, info.group, obj):
                for key, amount in amounts.items():
                    used[key] = used.get(key, Fraction(0)) + amount
        return used

    def validate(self, ctx: AdmissionContext, obj: Obj, old: Obj | None) -> None:
        if ctx.subresource or not ctx.namespace:
            return
        info = ctx.info
        updating = ctx.operation == "UPDATE" and old is not None and (info.resource, info.group) in UPDATES_CHARGED
        if ctx.operation != "CREATE" and not updating:
            return
        quotas = list(ctx.list_objects("resourcequotas", ctx.namespace))
        if not quotas:
            return
        requested = usage(info.resource, info.group, obj)
        if updating:  # only what the update adds: a Service turned NodePort, a claim grown
            before = usage(info.resource, info.group, old or {})
            requested = {k: v - before.get(k, Fraction(0)) for k, v in requested.items()
                         if v > before.get(k, Fraction(0))}
            if not requested:
                return
        now = parse_time(ctx.now) if ctx.now else 0.0
        charged = False
        for quota in sorted(quotas, key=lambda q: (q.get("metadata") or {}).get("name", "")):
            hard = (quota.get("spec") or {}).get("hard") or {}
            if (info.resource, info.group) == ("pods", "") and not updating and in_scope(quota, "pods", "", obj):
                missing = missing_compute(obj, hard)
                if missing:
                    qname = (quota.get("metadata") or {}).get("name", "")
                    raise StatusError.forbidden(info.group_resource, (obj.get("metadata") or {}).get("name") or None,
                                                f"failed quota: {qname}: {missing}")
            relevant = [k for k in hard if k in requested]
            if not relevant or not in_scope(quota, info.resource, info.group, obj):
                continue
            charged = True
            used = self._used(ctx, quota, now)
            exceeded = []
            for key in relevant:
                try:
                    limit = parse_quantity(hard[key])
                except (QuantityError, ValueError, TypeError):
                    continue
                if used.get(key, Fraction(0)) + requested[key] > limit:
                    exceeded.append(key)
            if exceeded:
                qname = (quota.get("metadata") or {}).get("name", "")
                message = (f"exceeded quota: {qname}, "
                           f"requested: {pretty({k: format_amount(requested[k]) for k in exceeded})}, "
                           f"used: {pretty({k: format_amount(used.get(k, Fraction(0))) for k in exceeded})}, "
                           f"limited: {pretty({k: str(hard[k]) for k in exceeded})}")
                name = (obj.get("metadata") or {}).get("name") or None
                raise StatusError.forbidden(info.group_resource, name, message)
        name = (obj.get("metadata") or {}).get("name")
        if charged and name and not ctx.dry_run and not updating:
            self._pending.setdefault((ctx.namespace, info.resource, info.group), {})[name] = (obj, requested, now)
