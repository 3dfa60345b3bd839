"""Core-group kinds besides Pods: Services, Namespaces, Nodes, ConfigMaps, Secrets, Events."""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from typing import Any

from kconsole.api.validators.field import (
    Cause, GoLiteral, duplicate, forbidden, immutable, invalid, is_int, not_supported, required, too_long)
from kconsole.api.validators.meta import (
    is_dns1123_label, is_dns1123_subdomain, is_label_value, is_qualified_name, regex_error, validate_labels)
from kconsole.api.validators.pods import TAINT_EFFECTS, port_number_causes, is_valid_port_name

Obj = dict[str, Any]

SERVICE_TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")
SESSION_AFFINITIES = ("ClientIP", "None")
SERVICE_PROTOCOLS = ("SCTP", "TCP", "UDP")
TRAFFIC_POLICIES = ("Cluster", "Local")
NODE_PORT_RANGE = (30000, 32767)
CONFIG_KEY_FMT = "[-._a-zA-Z0-9]+"
_CONFIG_KEY_RE = re.compile("^" + CONFIG_KEY_FMT + "$")
#: upstream's MaxSecretSize, which bounds ConfigMap data too.
MAX_DATA_BYTES = 1024 * 1024
#: The keys a Secret of a type must carry (upstream ValidateSecret), checked after stringData is merged.
SECRET_REQUIRED_KEYS = {"kubernetes.io/tls": ("tls.crt", "tls.key")}


def _ip_causes(path: str, value: str) -> list[Cause]:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return [invalid(path, value, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")]
    return []


def validate_service(obj: Obj) -> list[Cause]:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return [required("spec")]
    causes: list[Cause] = []
    svc_type = spec.get("type") or ""
    if svc_type not in SERVICE_TYPES:
        causes.append(not_supported("spec.type", svc_type, SERVICE_TYPES))
    affinity = spec.get("sessionAffinity") or ""
    if affinity not in SESSION_AFFINITIES:
        causes.append(not_supported("spec.sessionAffinity", affinity, SESSION_AFFINITIES))
    cluster_ip = spec.get("clusterIP") or ""
    headless = cluster_ip == "None"
    ports = spec.get("ports") or []
    if svc_type == "ExternalName":
        if not spec.get("externalName"):
            causes.append(required("spec.externalName"))
        else:
            causes += [invalid("spec.externalName", spec["externalName"], m)
                       for m in is_dns1123_subdomain(str(spec["externalName"]).rstrip("."))]
        if cluster_ip:
            causes.append(forbidden("spec.clusterIP", "may not be set for ExternalName services"))
    elif not ports and not headless:
        causes.append(required("spec.ports"))
    if cluster_ip and not headless and svc_type != "ExternalName":
        causes += _ip_causes("spec.clusterIPs[0]", cluster_ip)
    ips = spec.get("clusterIPs") or []
    if ips and cluster_ip and ips[0] != cluster_ip:
        causes.append(invalid("spec.clusterIPs", GoLiteral("[]string{" + ", ".join(f'"{i}"' for i in ips) + "}"),
                              "element [0] must match clusterIP"))
    names: set[str] = set()
    seen: set[tuple[Any, Any]] = set()
    node_ports: set[tuple[Any, Any]] = set()
    needs_names = len(ports) > 1
    for i, port in enumerate(ports):
        p = f"spec.ports[{i}]"
        if not isinstance(port, dict):
            causes.append(invalid(p, port, "must be an object"))
            continue
        name = port.get("name") or ""
        if needs_names and not name:
            causes.append(required(f"{p}.name"))
        elif name:
            causes += [invalid(f"{p}.name", name, m) for m in is_dns1123_label(name)]
            if name in names:
                causes.append(duplicate(f"{p}.name", name))
            names.add(name)
        number = port.get("port")
        causes += port_number_causes(f"{p}.port", number)
        protocol = port.get("protocol") or ""
        if protocol not in SERVICE_PROTOCOLS:
            causes.append(not_supported(f"{p}.protocol", protocol, SERVICE_PROTOCOLS))
        key = (number, protocol)
        if key in seen:
            causes.append(duplicate(p, GoLiteral(f"core.ServicePort{{Name:{name!r}, Protocol:{protocol!r}, "
                                                 f"Port:{number}}}".replace("'", '"'))))
        seen.add(key)
        target = port.get("targetPort")
        if isinstance(target, str):
            causes += [invalid(f"{p}.targetPort", target, m) for m in is_valid_port_name(target)]
        elif target is not None:
            causes += port_number_causes(f"{p}.targetPort", target)
        node_port = port.get("nodePort")
        if node_port:
            if svc_type not in ("NodePort", "LoadBalancer"):
                causes.append(forbidden(f"{p}.nodePort", f"may not be used when `type` is '{svc_type}'"))
            elif not is_int(node_port) or not NODE_PORT_RANGE[0] <= node_port <= NODE_PORT_RANGE[1]:
                causes.append(invalid(f"{p}.nodePort", node_port, "provided port is not in the valid range. "
                                                                  "The range of valid ports is 30000-32767"))
            elif (node_port, protocol) in node_ports:
                causes.append(duplicate(f"{p}.nodePort", node_port))
            node_ports.add((node_port, protocol))
    for key in ("internalTrafficPolicy", "externalTrafficPolicy"):
        value = spec.get(key)
        if value and value not in TRAFFIC_POLICIES:
            causes.append(not_supported(f"spec.{key}", value, TRAFFIC_POLICIES))
    selector = spec.get("selector")
    if selector is not None:
        causes += validate_labels(selector, "spec.selector")
    return causes


def validate_service_update(obj: Obj, old: Obj) -> list[Cause]:
    spec, old_spec = obj.get("spec") or {}, old.get("spec") or {}
    if "ExternalName" in (spec.get("type"), old_spec.get("type")):
        return []
    old_ip, new_ip = old_spec.get("clusterIP") or "", spec.get("clusterIP") or ""
    if old_ip and new_ip != old_ip:
        ips = spec.get("clusterIPs") or ([new_ip] if new_ip else [])
        return [invalid("spec.clusterIPs[0]", GoLiteral("[]string{" + ", ".join(f'"{i}"' for i in ips) + "}"),
                        "may not change once set")]
    return []


def validate_namespace(obj: Obj) -> list[Cause]:
    causes: list[Cause] = []
    for i, fin in enumerate((obj.get("spec") or {}).get("finalizers") or ()):
        if "/" not in fin and fin != "kubernetes":
            causes.append(invalid(f"spec.finalizers[{i}]", fin, "name is neither a standard finalizer name nor is "
                                                               "it fully qualified"))
        else:
            causes += [invalid(f"spec.finalizers[{i}]", fin, m) for m in is_qualified_name(fin)]
    return causes


def validate_node(obj: Obj) -> list[Cause]:
    spec = obj.get("spec") or {}
    causes: list[Cause] = []
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(spec.get("taints") or ()):
        p = f"spec.taints[{i}]"
        if not isinstance(taint, dict):
            causes.append(invalid(p, taint, "must be an object"))
            continue
        key = taint.get("key") or ""
        causes += [invalid(f"{p}.key", key, m) for m in is_qualified_name(key)]
        value = taint.get("value")
        if value:
            causes += [invalid(f"{p}.value", value, m) for m in is_label_value(str(value))]
        effect = taint.get("effect") or ""
        if not effect:
            causes.append(required(f"{p}.effect"))
        elif effect not in TAINT_EFFECTS:
            causes.append(not_supported(f"{p}.effect", effect, TAINT_EFFECTS))
        if (key, effect) in seen:
            causes.append(duplicate(f"{p}.effect", effect))
        seen.add((key, effect))
    return causes


def _validate_config_keys(data: Any, path: str, binary: bool) -> list[Cause]:
    if data is None:
        return []
    if not isinstance(data, dict):
        return [invalid(path, data, "must be a map of keys to values")]
    causes: list[Cause] = []
    for key, value in data.items():
        if len(key) > 253:
            causes.append(invalid(f"{path}[{key}]", key, "must be no more than 253 characters"))
        if not _CONFIG_KEY_RE.match(key):
            causes.append(invalid(f"{path}[{key}]", key, regex_error(
                "a valid config key must consist of alphanumeric characters, '-', '_' or '.'", CONFIG_KEY_FMT,
                "key.name", "KEY_NAME", "key-name")))
        if not isinstance(value, str):
            causes.append(invalid(f"{path}[{key}]", value, "must be a string"))
        elif binary:
            try:
                base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError):
                causes.append(invalid(f"{path}[{key}]", "<value omitted>", "illegal base64 data"))
    return causes


def validate_configmap(obj: Obj) -> list[Cause]:
    causes = _validate_config_keys(obj.get("data"), "data", binary=False)
    causes += _validate_config_keys(obj.get("binaryData"), "binaryData", binary=True)
    both = set(obj.get("data") or {}) & set(obj.get("binaryData") or {})
    causes += [invalid(f"data[{k}]", k, "duplicate of key present in binaryData") for k in sorted(both)]
    size = sum(len(v) for v in (obj.get("data") or {}).values() if isinstance(v, str))
    size += sum(len(v) * 3 // 4 for v in (obj.get("binaryData") or {}).values() if isinstance(v, str))
    if size > MAX_DATA_BYTES:
        causes.append(too_long("[]", MAX_DATA_BYTES))  # upstream's root path field.NewPath("") prints as "[]"
    return causes


def validate_secret(obj: Obj) -> list[Cause]:
    causes = _validate_config_keys(obj.get("data"), "data", binary=True)
    string_data = obj.get("stringData")
    if string_data is not None:
        causes += _validate_config_keys(string_data, "stringData", binary=False)
    size = sum(len(v) * 3 // 4 for v in (obj.get("data") or {}).values() if isinstance(v, str))
    if size > MAX_DATA_BYTES:
        causes.append(too_long("data", MAX_DATA_BYTES))
    data = obj.get("data") if isinstance(obj.get("data"), dict) else {}
    needed = SECRET_REQUIRED_KEYS.get(obj.get("type") or "", ())
    causes += [required(f"data[{key}]") for key in needed if key not in data]
    return causes


def validate_secret_update(obj: Obj, old: Obj) -> list[Cause]:
    causes: list[Cause] = []
    if (obj.get("type") or "Opaque") != (old.get("type") or "Opaque"):
        causes.append(immutable("type", obj.get("type") or ""))
    if old.get("immutable") and (obj.get("data") != old.get("data") or not obj.get("immutable")):
        causes.append(forbidden("data", "field is immutable when `immutable` is set"))
    return causes


def validate_configmap_update(obj: Obj, old: Obj) -> list[Cause]:
    if old.get("immutable") and (obj.get("data") != old.get("data") or obj.get("binaryData") != old.get("binaryData")
                                 or not obj.get("immutable")):
        return [forbidden("data", "field is immutable when `immutable` is set")]
    return []


def validate_event(obj: Obj) -> list[Cause]:
    involved = obj.get("involvedObject") or {}
    ns = (obj.get("metadata") or {}).get("namespace") or ""
    causes: list[Cause] = []
    inv_ns = involved.get("namespace") or ""
    if inv_ns and ns and inv_ns != ns:
        causes.append(invalid("involvedObject.namespace", inv_ns, "does not match event.namespace"))
    if obj.get("type") and obj["type"] not in ("Normal", "Warning"):
        causes.append(not_supported("type", obj["type"], ("Normal", "Warning")))
    return causes
