"""Ingresses (upstream ValidateIngressSpec's rules): each rule's host is a DNS name, with ``*`` only
as its whole first label, and each HTTP path states its pathType and, for Exact and Prefix, an
absolute path without dot segments."""

from __future__ import annotations

import ipaddress
from typing import Any

from kconsole.api.validators.field import Cause, invalid, not_supported, required
from kconsole.objects.names import is_dns1123_subdomain, is_wildcard_dns1123_subdomain

Obj = dict[str, Any]

PATH_TYPES = ("Exact", "ImplementationSpecific", "Prefix")
INVALID_PATH_SEQUENCES = ("//", "/./", "/../", "%2f", "%2F")
INVALID_PATH_SUFFIXES = ("/..", "/.")


def _host_causes(host: str, path: str) -> list[Cause]:
    causes: list[Cause] = []
    try:
        ipaddress.ip_address(host)
        causes.append(invalid(path, host, "must be a DNS name, not an IP address"))
    except ValueError:
        pass
    check = is_wildcard_dns1123_subdomain if "*" in host else is_dns1123_subdomain
    return causes + [invalid(path, host, msg) for msg in check(host)]


def _path_causes(http_path: Any, p: str) -> list[Cause]:
    if not isinstance(http_path, dict):
        return [invalid(p, http_path, "must be an object")]
    path_type = http_path.get("pathType")
    if path_type is None:
        return [required(f"{p}.pathType", "pathType must be specified")]
    path = http_path.get("path") or ""
    causes: list[Cause] = []
    if path_type in ("Exact", "Prefix"):
        if not path.startswith("/"):
            causes.append(invalid(f"{p}.path", path, "must be an absolute path"))
        causes += [invalid(f"{p}.path", path, f"must not contain '{seq}'") for seq in INVALID_PATH_SEQUENCES
                   if seq in path]
        causes += [invalid(f"{p}.path", path, f"cannot end with '{suffix}'") for suffix in INVALID_PATH_SUFFIXES
                   if path.endswith(suffix)]
    elif path_type == "ImplementationSpecific":
        if path and not path.startswith("/"):
            causes.append(invalid(f"{p}.path", path, "must be an absolute path"))
    else:
        causes.append(not_supported(f"{p}.pathType", path_type, PATH_TYPES))
    return causes


def validate_ingress(obj: Obj) -> list[Cause]:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return []
    causes: list[Cause] = []
    for i, rule in enumerate(spec.get("rules") or ()):
        p = f"spec.rules[{i}]"
        if not isinstance(rule, dict):
            causes.append(invalid(p, rule, "must be an object"))
            continue
        host = rule.get("host") or ""
        if host:
            causes += _host_causes(str(host), f"{p}.host")
        http = rule.get("http")
        if not isinstance(http, dict):
            continue
        paths = http.get("paths") or []
        if not paths:
            causes.append(required(f"{p}.http.paths"))
        for j, http_path in enumerate(paths):
            causes += _path_causes(http_path, f"{p}.http.paths[{j}]")
    return causes
