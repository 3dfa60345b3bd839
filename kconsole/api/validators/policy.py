"""Validation of the namespace policy kinds: ResourceQuota, LimitRange and NetworkPolicy, as upstream's
ValidateResourceQuota, ValidateLimitRange and ValidateNetworkPolicy judge what a user sends."""

from __future__ import annotations

import ipaddress
from fractions import Fraction
from typing import Any

from kconsole.api.validators.field import Cause, invalid, not_supported, required
from kconsole.api.validators.pods import validate_label_selector
from kconsole.objects.quantity import QuantityError, parse_quantity

Obj = dict[str, Any]

LIMIT_TYPES = ("Container", "Pod", "PersistentVolumeClaim")
POLICY_TYPES = ("Ingress", "Egress")
PROTOCOLS = ("SCTP", "TCP", "UDP")
QUOTA_SCOPES = ("BestEffort", "CrossNamespacePodAffinity", "NotBestEffort", "NotTerminating", "PriorityClass",
                "Terminating")


def _quantities(values: Any, path: str) -> tuple[list[Cause], dict[str, Fraction]]:
    """Each entry of a resource list is a non-negative quantity."""
    causes: list[Cause] = []
    parsed: dict[str, Fraction] = {}
    if not isinstance(values, dict):
        return ([invalid(path, values, "must be a map of resource names to quantities")] if values is not None
                else []), parsed
    for name, value in values.items():
        key = f"{path}[{name}]"
        try:
            amount = parse_quantity(value)
        except (QuantityError, ValueError, TypeError):
            causes.append(invalid(key, value, "must be a quantity"))
            continue
        if amount < 0:
            causes.append(invalid(key, value, "must be greater than or equal to 0"))
        parsed[str(name)] = amount
    return causes, parsed


def validate_resourcequota(obj: Obj) -> list[Cause]:
    spec = obj.get("spec") or {}
    causes, _ = _quantities(spec.get("hard"), "spec.hard")
    for i, scope in enumerate(spec.get("scopes") or []):
        if scope not in QUOTA_SCOPES:
            causes.append(not_supported(f"spec.scopes[{i}]", scope, QUOTA_SCOPES))
    status = obj.get("status") or {}
    for field in ("hard", "used"):
        causes += _quantities(status.get(field), f"status.{field}")[0]
    return causes


def validate_limitrange(obj: Obj) -> list[Cause]:
    causes: list[Cause] = []
    for i, item in enumerate((obj.get("spec") or {}).get("limits") or []):
        path = f"spec.limits[{i}]"
        if not isinstance(item, dict):
            causes.append(invalid(path, item, "must be an object"))
            continue
        kind = item.get("type")
        if not kind:
            causes.append(required(f"{path}.type"))
        elif kind not in LIMIT_TYPES:
            causes.append(not_supported(f"{path}.type", kind, LIMIT_TYPES))
        lists: dict[str, dict[str, Fraction]] = {}
        for field in ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio"):
            found, lists[field] = _quantities(item.get(field), f"{path}.{field}")
            causes += found
        if kind == "Pod":
            for field in ("default", "defaultRequest"):
                if item.get(field):
                    causes.append(invalid(f"{path}.{field}", item[field], "may not be specified when `type` is 'Pod'"))
        for name, low in lists["min"].items():
            high = lists["max"].get(name)
            if high is not None and low > high:
                causes.append(invalid(f"{path}.min[{name}]", item["min"][name],
                                      f"min value {item['min'][name]} is greater than max value "
                                      f"{item['max'][name]}"))
        for field in ("default", "defaultRequest"):
            for name, amount in lists[field].items():
                low, high = lists["min"].get(name), lists["max"].get(name)
                if low is not None and amount < low:
                    causes.append(invalid(f"{path}.{field}[{name}]", item[field][name],
                                          f"min value {item['min'][name]} is greater than {field} value "
                                          f"{item[field][name]}"))
                if high is not None and amount > high:
                    causes.append(invalid(f"{path}.{field}[{name}]", item[field][name],
                                          f"{field} value {item[field][name]} is greater than max value "
                                          f"{item['max'][name]}"))
    return causes


def _port_causes(ports: Any, path: str) -> list[Cause]:
    causes: list[Cause] = []
    for j, port in enumerate(ports or []):
        ppath = f"{path}[{j}]"
        protocol = port.get("protocol")
        if protocol is not None and protocol not in PROTOCOLS:
            causes.append(not_supported(f"{ppath}.protocol", protocol, PROTOCOLS))
        number = port.get("port")
        if isinstance(number, int) and not 1 <= number <= 65535:
            causes.append(invalid(f"{ppath}.port", number, "must be between 1 and 65535, inclusive"))
        end = port.get("endPort")
        if end is not None:
            if not isinstance(number, int):
                causes.append(required(f"{ppath}.port", "must be specified when endPort is specified"))
            elif isinstance(end, int) and end < number:
                causes.append(invalid(f"{ppath}.endPort", end, "must be greater than or equal to `port`"))
    return causes


def _peer_causes(peers: Any, path: str) -> list[Cause]:
    causes: list[Cause] = []
    for j, peer in enumerate(peers or []):
        ppath = f"{path}[{j}]"
        given = [k for k in ("podSelector", "namespaceSelector", "ipBlock") if peer.get(k) is not None]
        if not given:
            causes.append(required(ppath, "must specify a peer"))
        if peer.get("ipBlock") is not None:
            if len(given) > 1:
                causes.append({"reason": "FieldValueForbidden", "field": ppath,
                               "message": "Forbidden: may not specify more than 1 peer type"})
            cidr = peer["ipBlock"].get("cidr")
            if not cidr:
                causes.append(required(f"{ppath}.ipBlock.cidr"))
                continue
            try:
                ipaddress.ip_network(cidr, strict=False)
            except ValueError:
                causes.append(invalid(f"{ppath}.ipBlock.cidr", cidr,
                                      "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"))
        for key in ("podSelector", "namespaceSelector"):
            causes += validate_label_selector(peer.get(key), f"{ppath}.{key}")
    return causes


def validate_networkpolicy(obj: Obj) -> list[Cause]:
    spec = obj.get("spec") or {}
    causes = validate_label_selector(spec.get("podSelector"), "spec.podSelector")
    for direction, peers in (("ingress", "from"), ("egress", "to")):
        for i, rule in enumerate(spec.get(direction) or []):
            causes += _port_causes(rule.get("ports"), f"spec.{direction}[{i}].ports")
            causes += _peer_causes(rule.get(peers), f"spec.{direction}[{i}].{peers}")
    types = spec.get("policyTypes") or []
    for i, kind in enumerate(types):
        if kind not in POLICY_TYPES:
            causes.append(not_supported(f"spec.policyTypes[{i}]", kind, POLICY_TYPES))
    if len(types) > len(POLICY_TYPES):
        causes.append(invalid("spec.policyTypes", types, "may not specify more than two policyTypes"))
    return causes
