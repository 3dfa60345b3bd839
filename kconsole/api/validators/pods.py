"""Pod and pod-template validation (upstream ValidatePodSpec, ValidatePodUpdate and helpers).

Templates (Deployments, Jobs, ...) share :func:`validate_pod_spec`; what only Pods check (the
update rules, whitespace in images) is in :func:`validate_pod` / :func:`validate_pod_update`.
"""

from __future__ import annotations

import marshal
from fractions import Fraction
from functools import lru_cache
from typing import Any

from kconsole.api import marshalled
from kconsole.api.validators import gocmp
from kconsole.api.validators.field import (
    Cause, duplicate, forbidden, invalid, is_int, non_negative, not_found, not_supported, required)
from kconsole.api.validators.meta import (
    is_dns1123_label, is_dns1123_subdomain, is_label_value, is_qualified_name, validate_annotations,
    validate_labels)
from kconsole.objects.pod import is_mirror_pod
from kconsole.objects.quantity import QuantityError, format_quantity, parse_quantity

Obj = dict[str, Any]

RESTART_POLICIES = ("Always", "OnFailure", "Never")
DNS_POLICIES = ("ClusterFirst", "ClusterFirstWithHostNet", "Default", "None")
PULL_POLICIES = ("Always", "IfNotPresent", "Never")
TERMINATION_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")
PORT_PROTOCOLS = ("SCTP", "TCP", "UDP")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
TOLERATION_OPERATORS = ("Equal", "Exists")
NODE_SELECTOR_OPERATORS = ("DoesNotExist", "Exists", "Gt", "In", "Lt", "NotIn")
LABEL_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
UNSATISFIABLE_ACTIONS = ("DoNotSchedule", "ScheduleAnyway")
STANDARD_CONTAINER_RESOURCES = frozenset(("cpu", "memory", "ephemeral-storage"))
VOLUME_SOURCES = frozenset((
    "hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret", "nfs", "iscsi",
    "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder", "cephfs", "flocker", "downwardAPI", "fc",
    "azureFile", "configMap", "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk", "projected",
    "portworxVolume", "scaleIO", "storageos", "csi", "ephemeral", "image"))
MAX_INT32 = 2147483647
#: Fields a debug container may not set (upstream's allowedEphemeralContainerFields, inverted), in
#: the Go struct's order, which is the order of upstream's errors.
EPHEMERAL_DISALLOWED = ("ports", "resources", "resizePolicy", "restartPolicy", "livenessProbe", "readinessProbe",
                        "startupProbe", "lifecycle")
EPHEMERAL_FORBIDDEN = "cannot be set for an Ephemeral Container"

POD_UPDATE_FORBIDDEN = (
    "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,"
    "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),"
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)")


def port_number_causes(path: str, value: Any, allow_zero: bool = False) -> list[Cause]:
    if allow_zero and not value:
        return []
    if not is_int(value):
        return [invalid(path, value, "must be an integer")]
    if not 1 <= value <= 65535:
        return [invalid(path, value, "must be between 1 and 65535, inclusive")]
    return []


def is_valid_port_name(name: str) -> list[str]:
    """upstream IsValidPortName (an IANA_SVC_NAME)."""
    errs = []
    if len(name) > 15:
        errs.append("must be no more than 15 characters")
    if not all(c.islower() and c.isascii() or c.isdigit() or c == "-" for c in name):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if "--" in name:
        errs.append("must not contain consecutive hyphens")
    if name and not any("a" <= c <= "z" for c in name):
        errs.append("must contain at least one letter (a-z)")
    if name.startswith("-") or name.endswith("-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def validate_ports(ports: Any, path: str, host_network: bool) -> list[Cause]:
    causes: list[Cause] = []
    names: set[str] = set()
    for i, port in enumerate(ports or ()):
        p = f"{path}[{i}]"
        if not isinstance(port, dict):
            causes.append(invalid(p, port, "must be an object"))
            continue
        name = port.get("name")
        if name:
            for msg in is_valid_port_name(str(name)):
                causes.append(invalid(f"{p}.name", name, msg))
            if name in names:
                causes.append(duplicate(f"{p}.name", name))
            names.add(name)
        container_port = port.get("containerPort")
        if not container_port:
            causes.append(required(f"{p}.containerPort"))
        else:
            causes += port_number_causes(f"{p}.containerPort", container_port)
        causes += port_number_causes(f"{p}.hostPort", port.get("hostPort"), allow_zero=True)
        protocol = port.get("protocol")
        if not protocol:
            causes.append(required(f"{p}.protocol"))
        elif protocol not in PORT_PROTOCOLS:
            causes.append(not_supported(f"{p}.protocol", protocol, PORT_PROTOCOLS))
        if host_network and port.get("hostPort") and port.get("hostPort") != container_port:
            causes.append(invalid(f"{p}.hostPort", port["hostPort"],
                                  "must match `containerPort` when `hostNetwork` is true"))
    return causes


def _resource_name_causes(name: str, path: str) -> list[Cause]:
    if name in STANDARD_CONTAINER_RESOURCES or name.startswith("hugepages-"):
        return []
    if "/" in name and not name.startswith("kubernetes.io/") and not is_qualified_name(name):
        return []
    return [invalid(path, name, "must be a standard resource for containers")]


@lru_cache(maxsize=4096)
def _parse_str(value: str) -> Fraction:
    return parse_quantity(value)


def _parse(value: Any) -> Fraction:
    """Quantities repeat across pods ("100m", "64Mi"): string parses are cached (errors are not)."""
    return _parse_str(value) if isinstance(value, str) else parse_quantity(value)


def validate_resources(resources: Any, path: str) -> list[Cause]:
    if resources is None:
        return []
    if not isinstance(resources, dict):
        return [invalid(path, resources, "must be an object")]
    causes: list[Cause] = []
    parsed: dict[str, dict[str, Fraction]] = {"limits": {}, "requests": {}}
    for section in ("limits", "requests"):
        amounts = resources.get(section)
        if amounts is None:
            continue
        if not isinstance(amounts, dict):
            causes.append(invalid(f"{path}.{section}", amounts, "must be a map of resource names to quantities"))
            continue
        for name, value in amounts.items():
            key_path = f"{path}.{section}[{name}]"
            bad_name = _resource_name_causes(str(name), key_path)
            if bad_name:
                causes += bad_name
                continue
            try:
                q = _parse(value)
            except QuantityError as err:
                causes.append(invalid(key_path, value, err.reason))
                continue
            except (TypeError, ValueError):
                causes.append(invalid(key_path, value, "must be a quantity"))
                continue
            if q < 0:
                causes.append(invalid(key_path, str(value), "must be greater than or equal to 0"))
                continue
            parsed[section][name] = q
    for name, req in parsed["requests"].items():
        lim = parsed["limits"].get(name)
        if lim is not None and req > lim:
            causes.append(invalid(f"{path}.requests", format_quantity(resources["requests"][name]),
                                  f"must be less than or equal to {name} limit of "
                                  f"{format_quantity(resources['limits'][name])}"))
    return causes


def validate_env(env: Any, path: str) -> list[Cause]:
    causes: list[Cause] = []
    for i, var in enumerate(env or ()):
        p = f"{path}[{i}]"
        if not isinstance(var, dict):
            causes.append(invalid(p, var, "must be an object"))
            continue
        name = var.get("name")
        if not name:
            causes.append(required(f"{p}.name"))
        elif "=" in name or not all(" " <= c <= "~" for c in name):
            causes.append(invalid(f"{p}.name", name, "a valid environment variable name must consist only of "
                                                    "printable ASCII characters other than '='"))
        if var.get("value") and var.get("valueFrom"):
            causes.append(invalid(f"{p}.valueFrom", "", "may not be specified when `value` is not empty"))
    return causes


def validate_volume_mounts(mounts: Any, path: str, volumes: set[str]) -> list[Cause]:
    causes: list[Cause] = []
    paths: set[str] = set()
    for i, mount in enumerate(mounts or ()):
        p = f"{path}[{i}]"
        if not isinstance(mount, dict):
            causes.append(invalid(p, mount, "must be an object"))
            continue
        name = mount.get("name")
        if not name:
            causes.append(required(f"{p}.name"))
        elif name not in volumes:
            causes.append(not_found(f"{p}.name", name))
        mount_path = mount.get("mountPath")
        if not mount_path:
            causes.append(required(f"{p}.mountPath"))
        elif mount_path in paths:
            causes.append(invalid(f"{p}.mountPath", mount_path, "must be unique"))
        else:
            paths.add(mount_path)
    return causes


def validate_container(c: Any, path: str, volumes: set[str], host_network: bool) -> list[Cause]:
    if not isinstance(c, dict):
        return [invalid(path, c, "must be an object")]
    causes: list[Cause] = []
    name = c.get("name")
    if not name:
        causes.append(required(f"{path}.name"))
    else:
        for msg in is_dns1123_label(str(name)):
            causes.append(invalid(f"{path}.name", name, msg))
    image = c.get("image")
    if not image:
        causes.append(required(f"{path}.image"))
    policy = c.get("imagePullPolicy")
    if not policy:
        causes.append(required(f"{path}.imagePullPolicy"))
    elif policy not in PULL_POLICIES:
        causes.append(not_supported(f"{path}.imagePullPolicy", policy, PULL_POLICIES))
    tmp = c.get("terminationMessagePolicy")
    if tmp and tmp not in TERMINATION_MESSAGE_POLICIES:
        causes.append(not_supported(f"{path}.terminationMessagePolicy", tmp, TERMINATION_MESSAGE_POLICIES))
    causes += validate_ports(c.get("ports"), f"{path}.ports", host_network)
    causes += validate_env(c.get("env"), f"{path}.env")
    causes += validate_resources(c.get("resources"), f"{path}.resources")
    causes += validate_volume_mounts(c.get("volumeMounts"), f"{path}.volumeMounts", volumes)
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        pr = c.get(probe)
        if isinstance(pr, dict):
            for key in ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold",
                        "failureThreshold"):
                causes += non_negative(f"{path}.{probe}.{key}", pr.get(key))
            if probe != "readinessProbe" and pr.get("successThreshold") not in (None, 1):
                causes.append(invalid(f"{path}.{probe}.successThreshold", pr["successThreshold"], "must be 1"))
    return causes


def validate_volumes(vols: Any, path: str) -> tuple[list[Cause], set[str]]:
    causes: list[Cause] = []
    names: set[str] = set()
    for i, vol in enumerate(vols or ()):
        p = f"{path}[{i}]"
        if not isinstance(vol, dict):
            causes.append(invalid(p, vol, "must be an object"))
            continue
        name = vol.get("name")
        if not name:
            causes.append(required(f"{p}.name"))
        else:
            for msg in is_dns1123_label(str(name)):
                causes.append(invalid(f"{p}.name", name, msg))
            if name in names:
                causes.append(duplicate(f"{p}.name", name))
            names.add(name)
        sources = [k for k in vol if k in VOLUME_SOURCES]
        if not sources:
            causes.append(required(p, "must specify a volume type"))
        for extra in sources[1:]:
            causes.append(forbidden(f"{p}.{extra}", "may not specify more than 1 volume type"))
        host_path = vol.get("hostPath")
        if isinstance(host_path, dict) and not host_path.get("path"):
            causes.append(required(f"{p}.hostPath.path"))
    return causes, names


def validate_tolerations(tolerations: Any, path: str) -> list[Cause]:
    causes: list[Cause] = []
    for i, t in enumerate(tolerations or ()):
        p = f"{path}[{i}]"
        if not isinstance(t, dict):
            causes.append(invalid(p, t, "must be an object"))
            continue
        key, op, value, effect = t.get("key") or "", t.get("operator") or "", t.get("value") or "", t.get("effect") or ""
        if key:
            causes += [invalid(f"{p}.key", key, msg) for msg in is_qualified_name(key)]
        if not key and op != "Exists":
            causes.append(invalid(f"{p}.operator", op, 'operator must be Exists when `key` is empty, which means '
                                                       '"match all values and all keys"'))
        if t.get("tolerationSeconds") is not None and effect != "NoExecute":
            causes.append(invalid(f"{p}.effect", effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        if op in ("Equal", ""):
            errs = is_label_value(str(value))
            if errs:
                causes.append(invalid(f"{p}.operator", value, ";".join(errs)))
        elif op == "Exists":
            if value:
                causes.append(invalid(f"{p}.operator", value, "value must be empty when `operator` is 'Exists'"))
        else:
            causes.append(not_supported(f"{p}.operator", op, TOLERATION_OPERATORS))
        if effect and effect not in TAINT_EFFECTS:
            causes.append(not_supported(f"{p}.effect", effect, TAINT_EFFECTS))
    return causes


def _set_operator_causes(causes: list[Cause], p: str, op: Any, values: list[Any]) -> bool:
    """The In/NotIn/Exists/DoesNotExist rules label and node selectors share; False for other operators."""
    if op in ("In", "NotIn"):
        if not values:
            causes.append(required(f"{p}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
        return True
    if op in ("Exists", "DoesNotExist"):
        if values:
            causes.append(forbidden(f"{p}.values", "may not be specified when `operator` is 'Exists' or "
                                                   "'DoesNotExist'"))
        return True
    return False


def validate_node_selector_requirements(reqs: Any, path: str) -> list[Cause]:
    causes: list[Cause] = []
    for i, req in enumerate(reqs or ()):
        p = f"{path}[{i}]"
        if not isinstance(req, dict):
            causes.append(invalid(p, req, "must be an object"))
            continue
        op, values = req.get("operator"), req.get("values") or []
        if op in ("Gt", "Lt"):
            if len(values) != 1:
                causes.append(required(f"{p}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'"))
        elif not _set_operator_causes(causes, p, op, values):
            causes.append(not_supported(f"{p}.operator", op, NODE_SELECTOR_OPERATORS))
        causes += [invalid(f"{p}.key", req.get("key", ""), msg) for msg in is_qualified_name(str(req.get("key", "")))]
    return causes


def validate_label_selector(selector: Any, path: str) -> list[Cause]:
    """upstream ValidateLabelSelector."""
    if selector is None:
        return []
    if not isinstance(selector, dict):
        return [invalid(path, selector, "must be an object")]
    causes: list[Cause] = []
    for i, expr in enumerate(selector.get("matchExpressions") or ()):
        p = f"{path}.matchExpressions[{i}]"
        if not isinstance(expr, dict):
            causes.append(invalid(p, expr, "must be an object"))
            continue
        op, values = expr.get("operator"), expr.get("values") or []
        if not _set_operator_causes(causes, p, op, values):
            causes.append(invalid(f"{p}.operator", op, "not a valid selector operator"))
        causes += [invalid(f"{p}.key", expr.get("key", ""), msg) for msg in is_qualified_name(str(expr.get("key", "")))]
    causes += validate_labels(selector.get("matchLabels"), f"{path}.matchLabels")
    return causes


def _pod_affinity_terms(terms: Any, path: str, weighted: bool) -> list[Cause]:
    causes: list[Cause] = []
    for i, term in enumerate(terms or ()):
        p = f"{path}[{i}]"
        if not isinstance(term, dict):
            causes.append(invalid(p, term, "must be an object"))
            continue
        if weighted:
            weight = term.get("weight")
            if not is_int(weight) or not 1 <= weight <= 100:
                causes.append(invalid(f"{p}.weight", weight, "must be in the range 1-100"))
            term, p = term.get("podAffinityTerm") or {}, f"{p}.podAffinityTerm"
        if not term.get("topologyKey"):
            causes.append(required(f"{p}.topologyKey", "can not be empty"))
        else:
            causes += [invalid(f"{p}.topologyKey", term["topologyKey"], m) for m in is_qualified_name(term["topologyKey"])]
        causes += validate_label_selector(term.get("labelSelector"), f"{p}.labelSelector")
    return causes


def validate_affinity(affinity: Any, path: str) -> list[Cause]:
    if not isinstance(affinity, dict):
        return []
    causes: list[Cause] = []
    node = affinity.get("nodeAffinity") or {}
    req = node.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(req, dict):
        rp = f"{path}.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        terms = req.get("nodeSelectorTerms") or []
        if not terms:
            causes.append(required(f"{rp}.nodeSelectorTerms", "must have at least one node selector term"))
        for i, term in enumerate(terms):
            causes += validate_node_selector_requirements((term or {}).get("matchExpressions"),
                                                          f"{rp}.nodeSelectorTerms[{i}].matchExpressions")
    for i, pref in enumerate(node.get("preferredDuringSchedulingIgnoredDuringExecution") or ()):
        pp = f"{path}.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
        weight = (pref or {}).get("weight")
        if not is_int(weight) or not 1 <= weight <= 100:
            causes.append(invalid(f"{pp}.weight", weight, "must be in the range 1-100"))
        causes += validate_node_selector_requirements(((pref or {}).get("preference") or {}).get("matchExpressions"),
                                                      f"{pp}.preference.matchExpressions")
    for kind in ("podAffinity", "podAntiAffinity"):
        section = affinity.get(kind) or {}
        causes += _pod_affinity_terms(section.get("requiredDuringSchedulingIgnoredDuringExecution"),
                                      f"{path}.{kind}.requiredDuringSchedulingIgnoredDuringExecution", False)
        causes += _pod_affinity_terms(section.get("preferredDuringSchedulingIgnoredDuringExecution"),
                                      f"{path}.{kind}.preferredDuringSchedulingIgnoredDuringExecution", True)
    return causes


def validate_topology_spread(constraints: Any, path: str) -> list[Cause]:
    causes: list[Cause] = []
    seen: set[tuple[str, str]] = set()
    for i, c in enumerate(constraints or ()):
        p = f"{path}[{i}]"
        if not isinstance(c, dict):
            causes.append(invalid(p, c, "must be an object"))
            continue
        skew = c.get("maxSkew")
        if not is_int(skew) or skew <= 0:
            causes.append(invalid(f"{p}.maxSkew", skew, "must be greater than zero"))
        key = c.get("topologyKey") or ""
        if not key:
            causes.append(required(f"{p}.topologyKey", "can not be empty"))
        action = c.get("whenUnsatisfiable") or ""
        if action not in UNSATISFIABLE_ACTIONS:
            causes.append(not_supported(f"{p}.whenUnsatisfiable", action, UNSATISFIABLE_ACTIONS))
        if (key, action) in seen:
            causes.append(duplicate(p, f"{{{key}, {action}}}"))
        seen.add((key, action))
        min_domains = c.get("minDomains")
        if min_domains is not None:
            if not is_int(min_domains) or min_domains <= 0:
                causes.append(invalid(f"{p}.minDomains", min_domains, "must be greater than zero"))
            elif action != "DoNotSchedule":
                causes.append(invalid(f"{p}.minDomains", min_domains,
                                      "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway"))
        causes += validate_label_selector(c.get("labelSelector"), f"{p}.labelSelector")
    return causes


#: Causes by (path, marshalled spec): the pods of one template carry identical specs, and the rules
#: read nothing but the spec, so an identical spec is not judged again. Bounded; cleared when full.
_SPEC_VERDICTS: dict[tuple[str, bytes], list[Cause]] = {}
_SPEC_VERDICTS_SIZE = 2048


def validate_pod_spec(spec: Any, path: str) -> list[Cause]:
    """The spec's causes, remembered for specs seen before (equal bytes mean an equal spec)."""
    if type(spec) is not dict:
        return _validate_pod_spec(spec, path)
    try:
        data = marshal.dumps(spec)
    except ValueError:  # not plain JSON data: judge it afresh
        return _validate_pod_spec(spec, path)
    if path == "spec":
        marshalled.remember(spec, data)  # the Pod's own spec: its stored encoding needs the same bytes
    key = (path, data)
    known = _SPEC_VERDICTS.get(key)
    if known is None:
        known = _validate_pod_spec(spec, path)
        if len(_SPEC_VERDICTS) >= _SPEC_VERDICTS_SIZE:
            _SPEC_VERDICTS.clear()
        _SPEC_VERDICTS[key] = [dict(c) for c in known]
        return known
    return [dict(c) for c in known]


def _validate_pod_spec(spec: Any, path: str) -> list[Cause]:
    if not isinstance(spec, dict):
        return [required(path)] if spec is None else [invalid(path, spec, "must be an object")]
    causes, volumes = validate_volumes(spec.get("volumes"), f"{path}.volumes")
    host_network = bool(spec.get("hostNetwork"))
    names: set[str] = set()
    containers = spec.get("containers")
    for key in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(key) or ()):
            p = f"{path}.{key}[{i}]"
            causes += validate_container(c, p, volumes, host_network)
            name = c.get("name") if isinstance(c, dict) else None
            if name:
                if name in names:
                    causes.append(duplicate(f"{p}.name", name))
                names.add(name)
    if not containers:
        causes.insert(0, required(f"{path}.containers"))
    causes += _validate_ephemeral(spec.get("ephemeralContainers"), f"{path}.ephemeralContainers", volumes, names,
                                  host_network)
    restart = spec.get("restartPolicy")
    if not restart:
        causes.append(required(f"{path}.restartPolicy"))
    elif restart not in RESTART_POLICIES:
        causes.append(not_supported(f"{path}.restartPolicy", restart, RESTART_POLICIES))
    dns = spec.get("dnsPolicy")
    if not dns:
        causes.append(required(f"{path}.dnsPolicy"))
    elif dns not in DNS_POLICIES:
        causes.append(not_supported(f"{path}.dnsPolicy", dns, DNS_POLICIES))
    causes += validate_labels(spec.get("nodeSelector"), f"{path}.nodeSelector")
    for key in ("serviceAccountName", "nodeName", "priorityClassName"):
        value = spec.get(key)
        if value:
            causes += [invalid(f"{path}.{key}", value, msg) for msg in is_dns1123_subdomain(str(value))]
    for key in ("hostname", "subdomain"):
        value = spec.get(key)
        if value:
            causes += [invalid(f"{path}.{key}", value, msg) for msg in is_dns1123_label(str(value))]
    deadline = spec.get("activeDeadlineSeconds")
    if deadline is not None and (not is_int(deadline) or not 1 <= deadline <= MAX_INT32):
        causes.append(invalid(f"{path}.activeDeadlineSeconds", deadline, f"must be between 1 and {MAX_INT32}, inclusive"))
    grace = spec.get("terminationGracePeriodSeconds")
    if grace is not None and not is_int(grace):
        causes.append(invalid(f"{path}.terminationGracePeriodSeconds", grace, "must be an integer"))
    causes += validate_tolerations(spec.get("tolerations"), f"{path}.tolerations")
    causes += validate_affinity(spec.get("affinity"), f"{path}.affinity")
    causes += validate_topology_spread(spec.get("topologySpreadConstraints"), f"{path}.topologySpreadConstraints")
    return causes


def _validate_ephemeral(ecs: Any, path: str, volumes: set[str], names: set[str], host_network: bool) -> list[Cause]:
    """upstream validateEphemeralContainers: a container's checks, a name no other container has, a
    target that is one of the pod's containers, and nothing a workload would rely on."""
    causes: list[Cause] = []
    others = frozenset(names)
    for i, c in enumerate(ecs or ()):
        p = f"{path}[{i}]"
        causes += validate_container(c, p, volumes, host_network)
        if not isinstance(c, dict):
            continue
        name = c.get("name")
        if name:
            if name in names:
                causes.append(duplicate(f"{p}.name", name))
            names.add(name)
        target = c.get("targetContainerName")
        if target and target not in others:
            causes.append(not_found(f"{p}.targetContainerName", target))
        causes += [forbidden(f"{p}.{key}", EPHEMERAL_FORBIDDEN) for key in EPHEMERAL_DISALLOWED if c.get(key)]
        for j, mount in enumerate(c.get("volumeMounts") or ()):
            for key in ("subPath", "subPathExpr"):
                if isinstance(mount, dict) and mount.get(key):
                    causes.append(forbidden(f"{p}.volumeMounts[{j}].{key}", EPHEMERAL_FORBIDDEN))
    return causes


def validate_new_pod(obj: Obj) -> list[Cause]:
    """What only a create is refused for: debug containers come through pods/ephemeralcontainers."""
    spec = obj.get("spec")
    if isinstance(spec, dict) and spec.get("ephemeralContainers"):
        return [forbidden("spec.ephemeralContainers", "cannot be set on create")]
    return []


def validate_ephemeral_update(obj: Obj, old: Obj) -> list[Cause]:
    """upstream ValidatePodEphemeralContainersUpdate: debug containers are only ever added."""
    if is_mirror_pod(old):
        return [forbidden("", "static pods do not support ephemeral containers")]
    causes = validate_pod(obj)
    new_list = (obj.get("spec") or {}).get("ephemeralContainers") or []
    wanted = {c.get("name"): c for c in new_list if isinstance(c, dict)}
    for before in (old.get("spec") or {}).get("ephemeralContainers") or ():
        name = before.get("name")
        if name not in wanted:
            causes.append(forbidden("spec.ephemeralContainers",
                                    f'existing ephemeral containers "{name}" may not be removed'))
        elif wanted[name] != before:
            causes.append(forbidden(f"spec.ephemeralContainers[{name}]",
                                    f'existing ephemeral containers "{name}" may not be changed'))
    return causes


def validate_pod_template(template: Any, path: str) -> list[Cause]:
    """A workload's spec.template: labels and annotations, then the pod spec."""
    if not isinstance(template, dict):
        return [required(path)] if template is None else [invalid(path, template, "must be an object")]
    meta = template.get("metadata") or {}
    causes = validate_labels(meta.get("labels"), f"{path}.metadata.labels")
    causes += validate_annotations(meta.get("annotations"), f"{path}.metadata.annotations")
    causes += validate_pod_spec(template.get("spec"), f"{path}.spec")
    if isinstance(template.get("spec"), dict) and template["spec"].get("ephemeralContainers"):
        causes.append(forbidden(f"{path}.spec.ephemeralContainers", "ephemeral containers not allowed in pod template"))
    return causes


def validate_pod(obj: Obj) -> list[Cause]:
    spec = obj.get("spec")
    causes = validate_pod_spec(spec, "spec")
    if isinstance(spec, dict):
        for key in ("initContainers", "containers"):
            for i, c in enumerate(spec.get(key) or ()):
                image = c.get("image") if isinstance(c, dict) else None
                if isinstance(image, str) and image and image != image.strip():
                    causes.append(invalid(f"spec.{key}[{i}].image", image,
                                          "must not have leading or trailing whitespace"))
    return causes


def _toleration_key(t: Any) -> tuple[Any, ...]:
    t = t if isinstance(t, dict) else {}
    return (t.get("key") or "", t.get("operator") or "Equal", t.get("value") or "", t.get("effect") or "")


def validate_pod_update(obj: Obj, old: Obj) -> list[Cause]:
    """Only images, activeDeadlineSeconds, added tolerations (and a few upstream exceptions) may change."""
    spec = obj.get("spec")
    old_spec = old.get("spec")
    if not isinstance(spec, dict) or not isinstance(old_spec, dict):
        return []
    causes: list[Cause] = []
    masked = dict(spec)
    for key in ("containers", "initContainers"):
        new_list, old_list = spec.get(key), old_spec.get(key)
        if isinstance(new_list, list) and isinstance(old_list, list) and len(new_list) == len(old_list):
            masked[key] = [dict(n, image=o.get("image")) if isinstance(n, dict) and isinstance(o, dict) else n
                           for n, o in zip(new_list, old_list)]
    _carry(masked, old_spec, "activeDeadlineSeconds")
    if old_spec.get("terminationGracePeriodSeconds", 0) < 0 and spec.get("terminationGracePeriodSeconds") == 1:
        _carry(masked, old_spec, "terminationGracePeriodSeconds")
    new_tols = spec.get("tolerations") or []
    old_tols = old_spec.get("tolerations") or []
    new_keys = {_toleration_key(t) for t in new_tols}
    if all(_toleration_key(t) in new_keys for t in old_tols):
        _carry(masked, old_spec, "tolerations")
    else:
        causes.append(forbidden("spec.tolerations", "existing toleration can not be modified except its "
                                                    "tolerationSeconds"))
        _carry(masked, old_spec, "tolerations")
    old_gates = old_spec.get("schedulingGates") or []
    if all(g in old_gates for g in spec.get("schedulingGates") or []):
        _carry(masked, old_spec, "schedulingGates")
    if masked != old_spec:
        # upstream: cmp.Diff(oldPod.Spec, mungedPodSpec) of the internal structs
        spec_diff = gocmp.diff("PodSpec", gocmp.internal_pod_spec(old_spec), gocmp.internal_pod_spec(masked))
        causes.append(forbidden("spec", POD_UPDATE_FORBIDDEN + ("\n" + spec_diff if spec_diff else "")))
    return causes


def _carry(masked: Obj, old_spec: Obj, key: str) -> None:
    if key in old_spec:
        masked[key] = old_spec[key]
    else:
        masked.pop(key, None)
