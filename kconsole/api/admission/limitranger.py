"""LimitRanger admission: a namespace's LimitRanges default and bound what its Pods ask for.

As upstream's plugin: a new LimitRange of type Container gets its defaults filled (default from max,
defaultRequest from default, then from min) so ``kubectl get limits -o yaml`` shows what is enforced.
A new Pod's containers without a limit or request get the Container items' ``default`` and
``defaultRequest`` (noted in the ``kubernetes.io/limit-ranger`` annotation); then every container (and
for type Pod, the pod's sums) is held to min, max and maxLimitRequestRatio, refused with upstream's 403
'maximum cpu usage per Container is 2, but limit is 3'; a new claim's storage request to the
PersistentVolumeClaim items' min and max.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from kconsole.api.stages import AdmissionContext
from kconsole.api.types import StatusError
from kconsole.objects.quantity import QuantityError, format_quantity, parse_quantity

Obj = dict[str, Any]
ANNOTATION = "kubernetes.io/limit-ranger"


def _amount(value: Any) -> Fraction | None:
    try:
        return parse_quantity(value)
    except (QuantityError, ValueError, TypeError):
        return None


def _text(value: Any) -> str:
    try:
        return format_quantity(value)
    except (QuantityError, ValueError, TypeError):
        return str(value)


def default_limit_range(obj: Obj) -> None:
    """upstream SetDefaults_LimitRangeItem for type Container."""
    for item in (obj.get("spec") or {}).get("limits") or []:
        if not isinstance(item, dict) or item.get("type") != "Container":
            continue
        default = item.setdefault("default", {})
        request = item.setdefault("defaultRequest", {})
        for source, target in ((item.get("max") or {}, default), (default, request), (item.get("min") or {}, request)):
            for key, value in source.items():
                target.setdefault(key, value)
        for field in ("default", "defaultRequest"):
            if not item[field]:
                del item[field]


def _containers(spec: Obj) -> list[Obj]:
    return [c for field in ("initContainers", "containers") for c in spec.get(field) or [] if isinstance(c, dict)]


def _labelled(spec: Obj) -> list[tuple[str, Obj]]:
    """Containers with the word upstream's annotation names them by, containers first."""
    return [(label, c) for label, field in (("container", "containers"), ("init container", "initContainers"))
            for c in spec.get(field) or [] if isinstance(c, dict)]


def _apply_defaults(pod: Obj, items: list[Obj]) -> None:
    """mergePodResourceRequirements: fill what each container leaves unset, and say what was set."""
    notes: list[str] = []
    for label, c in _labelled(pod.get("spec") or {}):
        resources = c.setdefault("resources", {})
        set_requests: list[str] = []
        set_limits: list[str] = []
        for item in items:
            for key, value in (item.get("default") or {}).items():
                limits = resources.setdefault("limits", {})
                if key not in limits:
                    limits[key] = value
                    set_limits.append(key)
            for key, value in (item.get("defaultRequest") or {}).items():
                requests = resources.setdefault("requests", {})
                if key not in requests:
                    requests[key] = value
                    set_requests.append(key)
        for field in ("limits", "requests"):
            if field in resources and not resources[field]:
                del resources[field]
        if set_requests:
            notes.append(f"{', '.join(sorted(set_requests))} request for {label} {c.get('name', '')}")
        if set_limits:
            notes.append(f"{', '.join(sorted(set_limits))} limit for {label} {c.get('name', '')}")
    if notes:
        meta = pod.setdefault("metadata", {})
        annotations = meta.get("annotations") or {}
        annotations[ANNOTATION] = "LimitRanger plugin set: " + "; ".join(notes)
        meta["annotations"] = annotations


def _bounds(item: Obj, scope: str, requests: dict[str, Any], limits: dict[str, Any]) -> list[str]:
    errors: list[str] = []
    for key, enforced in (item.get("min") or {}).items():
        want, req, lim = _amount(enforced), requests.get(key), limits.get(key)
        if want is None:
            continue
        if req is None:
            errors.append(f"minimum {key} usage per {scope} is {_text(enforced)}.  No request is specified")
        elif (_amount(req) or 0) < want:
            errors.append(f"minimum {key} usage per {scope} is {_text(enforced)}, but request is {_text(req)}")
        elif lim is not None and (_amount(lim) or 0) < want:
            errors.append(f"minimum {key} usage per {scope} is {_text(enforced)}, but limit is {_text(lim)}")
    for key, enforced in (item.get("max") or {}).items():
        want, req, lim = _amount(enforced), requests.get(key), limits.get(key)
        if want is None:
            continue
        if lim is None:
            errors.append(f"maximum {key} usage per {scope} is {_text(enforced)}.  No limit is specified")
        elif (_amount(lim) or 0) > want:
            errors.append(f"maximum {key} usage per {scope} is {_text(enforced)}, but limit is {_text(lim)}")
        elif req is not None and (_amount(req) or 0) > want:
            errors.append(f"maximum {key} usage per {scope} is {_text(enforced)}, but request is {_text(req)}")
    for key, enforced in (item.get("maxLimitRequestRatio") or {}).items():
        req, lim = _amount(requests.get(key)), _amount(limits.get(key))
        ratio = _amount(enforced)
        if ratio is None:
            continue
        if lim is None or req is None or req == 0:
            if lim is None:
                errors.append(f"{key} max limit to request ratio per {scope} is {_text(enforced)}, but no limit "
                              "is specified")
            continue
        observed = lim / req
        if observed > ratio:
            errors.append(f"{key} max limit to request ratio per {scope} is {_text(enforced)}, but provided ratio "
                          f"is {float(observed):f}")
    return errors


def _pod_errors(pod: Obj, items: list[Obj]) -> list[str]:
    errors: list[str] = []
    containers = (pod.get("spec") or {}).get("containers") or []
    for item in items:
        kind = item.get("type")
        if kind == "Container":
            for c in _containers(pod.get("spec") or {}):
                res = c.get("resources") or {}
                errors += _bounds(item, "Container", res.get("requests") or {}, res.get("limits") or {})
        elif kind == "Pod":
            sums: dict[str, dict[str, Fraction]] = {"requests": {}, "limits": {}}
            for c in containers:
                res = c.get("resources") or {}
                for field in sums:
                    for key, value in (res.get(field) or {}).items():
                        sums[field][key] = sums[field].get(key, Fraction(0)) + (_amount(value) or 0)
            errors += _bounds(item, "Pod", dict(sums["requests"]), dict(sums["limits"]))
    return errors


def _claim_errors(claim: Obj, items: list[Obj]) -> list[str]:
    """PersistentVolumeClaimValidateLimitFunc: min and max against the storage the claim requests."""
    requests = (((claim.get("spec") or {}).get("resources") or {}).get("requests")) or {}
    errors: list[str] = []
    for item in items:
        if item.get("type") != "PersistentVolumeClaim":
            continue
        errors += _bounds({"min": item.get("min") or {}}, "PersistentVolumeClaim", requests, {})
        for key, enforced in (item.get("max") or {}).items():
            req = requests.get(key)
            if req is None:
                errors.append(f"maximum {key} usage per PersistentVolumeClaim is {_text(enforced)}.  No request is "
                              "specified")
            elif (_amount(req) or 0) > (_amount(enforced) or 0):
                errors.append(f"maximum {key} usage per PersistentVolumeClaim is {_text(enforced)}, but request is "
                              f"{_text(req)}")
    return errors


class LimitRanger:
    name = "LimitRanger"
    kinds = frozenset({("", "Pod"), ("", "LimitRange"), ("", "PersistentVolumeClaim")})

    def _items(self, ctx: AdmissionContext) -> list[Obj]:
        items: list[Obj] = []
        for lr in ctx.list_objects("limitranges", ctx.namespace):
            items += [i for i in (lr.get("spec") or {}).get("limits") or [] if isinstance(i, dict)]
        return items

    def admit(self, ctx: AdmissionContext, obj: Obj, old: Obj | None) -> None:
        if ctx.subresource or ctx.operation not in ("CREATE", "UPDATE"):
            return
        if ctx.info.kind == "LimitRange":
            default_limit_range(obj)
            return
        if ctx.operation != "CREATE" or ctx.info.kind != "Pod":
            return
        items = self._items(ctx)
        if items:
            _apply_defaults(obj, [i for i in items if i.get("type") == "Container"])

    def validate(self, ctx: AdmissionContext, obj: Obj, old: Obj | None) -> None:
        if ctx.subresource or ctx.operation != "CREATE" or ctx.info.kind not in ("Pod", "PersistentVolumeClaim"):
            return
        items = self._items(ctx)
        if not items:
            return
        errors = _pod_errors(obj, items) if ctx.info.kind == "Pod" else _claim_errors(obj, items)
        if errors:
            name = (obj.get("metadata") or {}).get("name") or None
            raise StatusError.forbidden(ctx.info.resource, name,
                                        errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]")
