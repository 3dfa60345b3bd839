"""Strategic merge patch, as client-side ``kubectl apply`` and ``kubectl patch`` send it.

A JSON merge patch that knows the built-in types: lists with ``patchStrategy=merge`` merge element
by element on their ``patchMergeKey`` (containers by ``name``, ports by ``containerPort``, env by
``name``, volumes by ``name``, conditions by ``type``, ...), lists of primitives with that strategy
union (``finalizers``), and every other list is replaced. Directives kubectl sends are honoured:
``$patch: replace|delete|merge``, ``$retainKeys``, ``$setElementOrder/<list>`` and
``$deleteFromPrimitiveList/<list>``. Kinds this table does not know merge like a JSON merge patch
(lists replaced), which is what upstream does for objects without patch metadata.

The type table (:data:`TYPES`, :data:`KIND_TYPES`) is shared with server-side apply (``apply.py``),
which needs the same associative-list keys.
"""

from __future__ import annotations

import copy
from typing import Any

from kconsole.api.types import StatusError, status_body

#: A field's patch metadata: (strategy, merge key, type of its value or of its list items).
Field = tuple[str, str | None, str | None]

TYPES: dict[str, dict[str, Field]] = {
    "ObjectMeta": {"finalizers": ("merge", None, None), "ownerReferences": ("merge", "uid", None)},
    "PodTemplateSpec": {"metadata": ("", None, "ObjectMeta"), "spec": ("", None, "PodSpec")},
    "PodSpec": {
        "volumes": ("merge,retainKeys", "name", "Volume"),
        "initContainers": ("merge", "name", "Container"),
        "containers": ("merge", "name", "Container"),
        "ephemeralContainers": ("merge", "name", "Container"),
        "imagePullSecrets": ("merge", "name", None),
        "hostAliases": ("merge", "ip", None),
        "topologySpreadConstraints": ("merge", "topologyKey", None),
        "resourceClaims": ("merge,retainKeys", "name", None),
        "schedulingGates": ("merge", "name", None),
    },
    "Volume": {},
    "Container": {
        "ports": ("merge", "containerPort", None),
        "env": ("merge", "name", None),
        "volumeMounts": ("merge", "mountPath", None),
        "volumeDevices": ("merge", "devicePath", None),
    },
    "PodStatus": {
        "conditions": ("merge", "type", None),
        "podIPs": ("merge", "ip", None),
        "hostIPs": ("merge", "ip", None),
    },
    "Conditions": {"conditions": ("merge", "type", None)},
    "NodeSpec": {"podCIDRs": ("merge", None, None)},
    "NodeStatus": {"conditions": ("merge", "type", None), "addresses": ("merge", "type", None)},
    "ServiceSpec": {"ports": ("merge", "port", None)},
    "DeploymentSpec": {"template": ("", None, "PodTemplateSpec"), "strategy": ("retainKeys", None, None)},
    "TemplateSpec": {"template": ("", None, "PodTemplateSpec")},
    "JobSpec": {"template": ("", None, "PodTemplateSpec")},
    "CronJobSpec": {"jobTemplate": ("", None, "JobTemplate")},
    "JobTemplate": {"metadata": ("", None, "ObjectMeta"), "spec": ("", None, "JobSpec")},
    "ServiceAccount": {"secrets": ("merge", "name", None)},
}

_META: Field = ("", None, "ObjectMeta")
_STATUS: Field = ("", None, "Conditions")

#: kind -> fields of the top-level object.
KIND_TYPES: dict[str, dict[str, Field]] = {
    "Pod": {"metadata": _META, "spec": ("", None, "PodSpec"), "status": ("", None, "PodStatus")},
    "PodTemplate": {"metadata": _META, "template": ("", None, "PodTemplateSpec")},
    "Deployment": {"metadata": _META, "spec": ("", None, "DeploymentSpec"), "status": _STATUS},
    "ReplicaSet": {"metadata": _META, "spec": ("", None, "TemplateSpec"), "status": _STATUS},
    "DaemonSet": {"metadata": _META, "spec": ("", None, "TemplateSpec"), "status": _STATUS},
    "StatefulSet": {"metadata": _META, "spec": ("", None, "TemplateSpec"), "status": _STATUS},
    "ReplicationController": {"metadata": _META, "spec": ("", None, "TemplateSpec"), "status": _STATUS},
    "Job": {"metadata": _META, "spec": ("", None, "JobSpec"), "status": _STATUS},
    "CronJob": {"metadata": _META, "spec": ("", None, "CronJobSpec")},
    "Node": {"metadata": _META, "spec": ("", None, "NodeSpec"), "status": ("", None, "NodeStatus")},
    "Service": {"metadata": _META, "spec": ("", None, "ServiceSpec"), "status": _STATUS},
    "Namespace": {"metadata": _META, "status": _STATUS},
    "ServiceAccount": {"metadata": _META, "secrets": ("merge", "name", None)},
    "PodDisruptionBudget": {"metadata": _META, "status": _STATUS},
    "HorizontalPodAutoscaler": {"metadata": _META, "status": _STATUS},
    "ValidatingWebhookConfiguration": {"metadata": _META, "webhooks": ("merge", "name", None)},
    "MutatingWebhookConfiguration": {"metadata": _META, "webhooks": ("merge", "name", None)},
}
for _kind in ("ConfigMap", "Secret", "Endpoints", "EndpointSlice", "Event", "Lease", "PriorityClass", "Role",
              "ClusterRole", "RoleBinding", "ClusterRoleBinding", "LimitRange", "ResourceQuota"):
    KIND_TYPES.setdefault(_kind, {"metadata": _META})

ORDER_PREFIX = "$setElementOrder/"
DELETE_PREFIX = "$deleteFromPrimitiveList/"
_DELETED = object()


def fields_of(type_name: str | None) -> dict[str, Field]:
    return TYPES.get(type_name or "", {})


def _bad(message: str) -> StatusError:
    return StatusError(status_body(400, "BadRequest", f"invalid strategic merge patch: {message}"))


def strip_directives(value: Any) -> Any:
    """A patch fragment without its ``$`` directives, for values added or replaced whole."""
    if isinstance(value, dict):
        return {k: strip_directives(v) for k, v in value.items() if not k.startswith("$")}
    if isinstance(value, list):
        return [strip_directives(v) for v in value if not (isinstance(v, dict) and v.get("$patch") == "delete")]
    return value


def _merge_map(original: dict[str, Any], patch: dict[str, Any], fields: dict[str, Field]) -> Any:
    directive = patch.get("$patch")
    if directive == "replace":
        return strip_directives({k: v for k, v in patch.items() if k != "$patch"})
    if directive == "delete":
        return _DELETED
    if directive not in (None, "merge"):
        raise _bad(f"unknown $patch directive {directive!r}")
    result = dict(original)
    retain = patch.get("$retainKeys")
    if retain is not None:
        if not isinstance(retain, list):
            raise _bad("$retainKeys must be a list of field names")
        keep = set(retain)
        result = {k: v for k, v in result.items() if k in keep}
    orders: dict[str, list[Any]] = {}
    for key, value in patch.items():
        if key in ("$patch", "$retainKeys"):
            continue
        if key.startswith(ORDER_PREFIX):
            if not isinstance(value, list):
                raise _bad(f"{key} must be a list")
            orders[key[len(ORDER_PREFIX):]] = value
            continue
        if key.startswith(DELETE_PREFIX):
            field = key[len(DELETE_PREFIX):]
            if not isinstance(value, list):
                raise _bad(f"{key} must be a list")
            current = result.get(field)
            if isinstance(current, list):
                kept = [v for v in current if v not in value]
                if kept:
                    result[field] = kept
                else:
                    result.pop(field, None)
            continue
        if key.startswith("$"):
            raise _bad(f"unknown directive {key!r}")
        strategy, merge_key, sub = fields.get(key, ("", None, None))
        if value is None:
            result.pop(key, None)
            continue
        current = result.get(key)
        if isinstance(value, dict):
            merged = _merge_map(current if isinstance(current, dict) else {}, value, fields_of(sub))
            if merged is _DELETED:
                result.pop(key, None)
            else:
                result[key] = merged
        elif isinstance(value, list):
            result[key] = _merge_list(current if isinstance(current, list) else [], value, strategy, merge_key,
                                      sub, orders.get(key))
        else:
            result[key] = value
    for key, order in orders.items():
        if key not in patch and isinstance(result.get(key), list):
            strategy, merge_key, _ = fields.get(key, ("", None, None))
            result[key] = _ordered(result[key], order, merge_key)
    return result


def _key_of(item: Any, merge_key: str | None) -> Any:
    if merge_key is None:
        return item
    return item.get(merge_key) if isinstance(item, dict) else None


def _ordered(items: list[Any], order: list[Any], merge_key: str | None) -> list[Any]:
    """Items named in ``order`` in that order; the rest keep their place after them (upstream's rule)."""
    wanted = [_key_of(o, merge_key) for o in order]
    rank = {repr(k): i for i, k in enumerate(wanted)}
    indexed = list(enumerate(items))
    indexed.sort(key=lambda pair: (rank.get(repr(_key_of(pair[1], merge_key)), len(rank) + pair[0])))
    return [item for _, item in indexed]


def _merge_list(original: list[Any], patch: list[Any], strategy: str, merge_key: str | None, sub: str | None,
                order: list[Any] | None) -> list[Any]:
    if "merge" not in strategy.split(","):
        return strip_directives(patch)
    if merge_key is None:
        result = list(original)
        for item in patch:
            if isinstance(item, dict) and "$patch" in item:
                if item["$patch"] == "replace":
                    return [strip_directives(i) for i in patch if not (isinstance(i, dict) and "$patch" in i)]
                raise _bad(f"unsupported $patch {item['$patch']!r} in a list of primitives")
            if item not in result:
                result.append(item)
        return _ordered(result, order, None) if order is not None else result
    if any(isinstance(i, dict) and i.get("$patch") == "replace" for i in patch):
        return [strip_directives(i) for i in patch if not (isinstance(i, dict) and "$patch" in i)]
    result = [copy.deepcopy(i) for i in original]
    fields = fields_of(sub)
    for item in patch:
        if not isinstance(item, dict):
            raise _bad(f"list items merged on {merge_key!r} must be objects, got {item!r}")
        if merge_key not in item:
            raise _bad(f"list item {item!r} has no merge key {merge_key!r}")
        key = item[merge_key]
        index = next((i for i, cur in enumerate(result) if isinstance(cur, dict) and cur.get(merge_key) == key), None)
        if item.get("$patch") == "delete":
            if index is not None:
                del result[index]
            continue
        if index is None:
            merged = _merge_map({}, item, fields)
            if merged is not _DELETED:
                result.append(merged)
        else:
            merged = _merge_map(result[index], item, fields)
            if merged is _DELETED:
                del result[index]
            else:
                result[index] = merged
    if order is not None:
        return _ordered(result, order, merge_key)
    return _normalized(result, patch, original, merge_key)


def _normalized(merged: list[Any], patch: list[Any], original: list[Any], merge_key: str) -> list[Any]:
    """upstream's normalizeElementOrder: the items the patch names in its order, the others in the
    original's, merged so that one the original did not have comes before the original's items
    (kubectl patch adding port 8080 to [80, 443] gives [8080, 80, 443]; an added container is
    ``containers[0]``)."""
    patch_keys = [i.get(merge_key) for i in patch if isinstance(i, dict) and i.get("$patch") != "delete"]
    server_keys = [i.get(merge_key) for i in original if isinstance(i, dict)]

    def index(keys: list[Any], item: Any) -> int:
        key = item.get(merge_key) if isinstance(item, dict) else None
        return next((n for n, k in enumerate(keys) if k == key), -1)

    from_patch = sorted((i for i in merged if index(patch_keys, i) >= 0), key=lambda i: index(patch_keys, i))
    server_only = [i for i in merged if index(patch_keys, i) < 0]
    out: list[Any] = []
    left, right = 0, 0
    while left < len(server_only) or right < len(from_patch):
        if right >= len(from_patch):
            out.append(server_only[left])
            left += 1
        elif left >= len(server_only):
            out.append(from_patch[right])
            right += 1
        else:
            li, ri = index(server_keys, server_only[left]), index(server_keys, from_patch[right])
            if li >= 0 and ri >= 0 and li < ri:
                out.append(server_only[left])
                left += 1
            else:
                out.append(from_patch[right])
                right += 1
    return out


def apply_strategic_patch(original: dict[str, Any], patch: dict[str, Any], kind: str) -> dict[str, Any]:
    """``original`` with ``patch`` applied; ``original`` is not modified. 400 on a malformed patch."""
    if not isinstance(patch, dict):
        raise _bad("the patch must be a JSON object")
    result = _merge_map(original, patch, KIND_TYPES.get(kind, {"metadata": _META}))
    if result is _DELETED:
        raise _bad("$patch: delete at the top level would delete the whole object")
    return result
