"""PodSecurity: namespaces labelled pod-security.kubernetes.io/enforce refuse pods above their level.

Checks and messages are upstream's Pod Security Standards (pod-security-admission): the baseline
checks in ID order, then the restricted ones, each failing check adding ``reason (detail)``:

    pods "x" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true),
    privileged (container "c" must not set securityContext.privileged=true)

An unparseable level or version enforces restricted:latest, as upstream does. Only new pods are
judged: updates cannot change what these checks read (the pod spec is immutable but for images).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from kconsole.api.stages import AdmissionContext
from kconsole.api.types import StatusError

Obj = dict[str, Any]
Check = Callable[[Obj], "tuple[str, str] | None"]

ENFORCE_LABEL = "pod-security.kubernetes.io/enforce"
ENFORCE_VERSION_LABEL = "pod-security.kubernetes.io/enforce-version"
LEVELS = ("privileged", "baseline", "restricted")
VERSION_RE = re.compile(r"^(latest|v1\.(0|[1-9][0-9]*))$")

BASELINE_CAPABILITIES = frozenset((
    "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE",
    "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"))
RESTRICTED_VOLUME_TYPES = frozenset((
    "configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"))
SAFE_SYSCTLS = frozenset((
    "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes"))


def join_quote(items: list[str] | set[str]) -> str:
    return ", ".join(f'"{i}"' for i in items)


def pluralize(singular: str, plural: str, n: int) -> str:
    return singular if n == 1 else plural


def containers(spec: Obj) -> Iterator[Obj]:
    """Init, regular and ephemeral containers, in upstream's visiting order."""
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for c in spec.get(key) or ():
            if isinstance(c, dict):
                yield c


def _sc(c: Obj) -> Obj:
    return c.get("securityContext") or {}


def _pod_sc(spec: Obj) -> Obj:
    return spec.get("securityContext") or {}


# --------------------------------------------------------------------------- baseline


def check_capabilities_baseline(spec: Obj) -> tuple[str, str] | None:
    bad: list[str] = []
    caps: set[str] = set()
    for c in containers(spec):
        added = [a for a in (_sc(c).get("capabilities") or {}).get("add") or () if a not in BASELINE_CAPABILITIES]
        if added:
            bad.append(c.get("name", ""))
            caps.update(added)
    if not bad:
        return None
    return "non-default capabilities", (f"{pluralize('container', 'containers', len(bad))} {join_quote(bad)} "
                                        f"must not include {join_quote(sorted(caps))} in securityContext.capabilities.add")


def check_host_namespaces(spec: Obj) -> tuple[str, str] | None:
    found = [f"{key}=true" for key in ("hostNetwork", "hostPID", "hostIPC") if spec.get(key)]
    return ("host namespaces", ", ".join(found)) if found else None


def check_host_path_volumes(spec: Obj) -> tuple[str, str] | None:
    bad = [v.get("name", "") for v in spec.get("volumes") or () if isinstance(v, dict) and v.get("hostPath") is not None]
    if not bad:
        return None
    return "hostPath volumes", f"{pluralize('volume', 'volumes', len(bad))} {join_quote(bad)}"


def check_host_ports(spec: Obj) -> tuple[str, str] | None:
    bad: list[str] = []
    ports: set[str] = set()
    for c in containers(spec):
        used = [str(p["hostPort"]) for p in c.get("ports") or () if isinstance(p, dict) and p.get("hostPort")]
        if used:
            bad.append(c.get("name", ""))
            ports.update(used)
    if not bad:
        return None
    n = len(bad)
    return "hostPort", (f"{pluralize('container', 'containers', n)} {join_quote(bad)} {pluralize('uses', 'use', n)} "
                        f"{pluralize('hostPort', 'hostPorts', len(ports))} {', '.join(sorted(ports))}")


def check_privileged(spec: Obj) -> tuple[str, str] | None:
    bad = [c.get("name", "") for c in containers(spec) if _sc(c).get("privileged") is True]
    if not bad:
        return None
    return "privileged", (f"{pluralize('container', 'containers', len(bad))} {join_quote(bad)} "
                          "must not set securityContext.privileged=true")


def check_proc_mount(spec: Obj) -> tuple[str, str] | None:
    bad: list[str] = []
    values: set[str] = set()
    for c in containers(spec):
        mount = _sc(c).get("procMount")
        if mount not in (None, "", "Default"):
            bad.append(c.get("name", ""))
            values.add(str(mount))
    if not bad:
        return None
    return "procMount", (f"{pluralize('container', 'containers', len(bad))} {join_quote(bad)} "
                         f"must not set securityContext.procMount to {join_quote(sorted(values))}")


def _seccomp_type(sc: Obj) -> str | None:
    profile = sc.get("seccompProfile")
    return profile.get("type", "") if isinstance(profile, dict) else None


def check_seccomp_baseline(spec: Obj) -> tuple[str, str] | None:
    setters: list[str] = []
    if _seccomp_type(_pod_sc(spec)) == "Unconfined":
        setters.append("pod")
    bad = [c.get("name", "") for c in containers(spec) if _seccomp_type(_sc(c)) == "Unconfined"]
    if bad:
        setters.append(f"{pluralize('container', 'containers', len(bad))} {join_quote(bad)}")
    if not setters:
        return None
    return "seccompProfile", f'{" and ".join(setters)} must not set securityContext.seccompProfile.type to "Unconfined"'


def check_sysctls(spec: Obj) -> tuple[str, str] | None:
    bad = [s.get("name", "") for s in _pod_sc(spec).get("sysctls") or ()
           if isinstance(s, dict) and s.get("name") not in SAFE_SYSCTLS]
    return ("forbidden sysctls", ", ".join(bad)) if bad else None


# --------------------------------------------------------------------------- restricted


def check_allow_privilege_escalation(spec: Obj) -> tuple[str, str] | None:
    bad = [c.get("name", "") for c in containers(spec) if _sc(c).get("allowPrivilegeEscalation") is not False]
    if not bad:
        return None
    return "allowPrivilegeEscalation != false", (f"{pluralize('container', 'containers', len(bad))} {join_quote(bad)} "
                                                 "must set securityContext.allowPrivilegeEscalation=false")


def check_capabilities_restricted(spec: Obj) -> tuple[str, str] | None:
    missing_drop: list[str] = []
    adding: list[str] = []
    caps: set[str] = set()
    for c in containers(spec):
        capabilities = _sc(c).get("capabilities")
        if not isinstance(capabilities, dict):
            missing_drop.append(c.get("name", ""))
            continue
        if "ALL" not in (capabilities.get("drop") or ()):
            missing_drop.append(c.get("name", ""))
        added = [a for a in capabilities.get("add") or () if a != "NET_BIND_SERVICE"]
        if added:
            adding.append(c.get("name", ""))
            caps.update(added)
    details: list[str] = []
    if missing_drop:
        details.append(f"{pluralize('container', 'containers', len(missing_drop))} {join_quote(missing_drop)} "
                       'must set securityContext.capabilities.drop=["ALL"]')
    if adding:
        details.append(f"{pluralize('container', 'containers', len(adding))} {join_quote(adding)} "
                       f"must not include {join_quote(sorted(caps))} in securityContext.capabilities.add")
    return ("unrestricted capabilities", "; ".join(details)) if details else None


def check_restricted_volumes(spec: Obj) -> tuple[str, str] | None:
    bad: list[str] = []
    types: set[str] = set()
    for v in spec.get("volumes") or ():
        if not isinstance(v, dict):
            continue
        used = [k for k in v if k != "name" and k not in RESTRICTED_VOLUME_TYPES]
        if used:
            bad.append(v.get("name", ""))
            types.update(used)
    if not bad:
        return None
    n = len(bad)
    return "restricted volume types", (
        f"{pluralize('volume', 'volumes', n)} {join_quote(bad)} {pluralize('uses', 'use', n)} "
        f"{pluralize('restricted volume type', 'restricted volume types', len(types))} {join_quote(sorted(types))}")


def check_run_as_non_root(spec: Obj) -> tuple[str, str] | None:
    setters: list[str] = []
    pod_value = _pod_sc(spec).get("runAsNonRoot")
    if pod_value is False:
        setters.append("pod")
    explicit: list[str] = []
    implicit: list[str] = []
    for c in containers(spec):
        value = _sc(c).get("runAsNonRoot")
        if value is not None:
            if value is False:
                explicit.append(c.get("name", ""))
        elif pod_value is not True:
            implicit.append(c.get("name", ""))
    if explicit:
        setters.append(f"{pluralize('container', 'containers', len(explicit))} {join_quote(explicit)}")
    if setters:
        return "runAsNonRoot != true", f"{' and '.join(setters)} must not set securityContext.runAsNonRoot=false"
    if implicit:
        return "runAsNonRoot != true", (f"pod or {pluralize('container', 'containers', len(implicit))} "
                                        f"{join_quote(implicit)} must set securityContext.runAsNonRoot=true")
    return None


def check_run_as_user(spec: Obj) -> tuple[str, str] | None:
    setters: list[str] = []
    if _pod_sc(spec).get("runAsUser") == 0:
        setters.append("pod")
    bad = [c.get("name", "") for c in containers(spec) if _sc(c).get("runAsUser") == 0]
    if bad:
        setters.append(f"{pluralize('container', 'containers', len(bad))} {join_quote(bad)}")
    return ("runAsUser=0", f"{' and '.join(setters)} must not set runAsUser=0") if setters else None


def check_seccomp_restricted(spec: Obj) -> tuple[str, str] | None:
    valid = ("RuntimeDefault", "Localhost")
    setters: list[str] = []
    values: set[str] = set()
    pod_type = _seccomp_type(_pod_sc(spec))
    pod_set = False
    if pod_type is not None:
        if pod_type in valid:
            pod_set = True
        else:
            setters.append("pod")
            values.add(pod_type)
    explicit: list[str] = []
    implicit: list[str] = []
    for c in containers(spec):
        ctype = _seccomp_type(_sc(c))
        if ctype is not None:
            if ctype not in valid:
                explicit.append(c.get("name", ""))
                values.add(ctype)
        elif not pod_set:
            implicit.append(c.get("name", ""))
    if explicit:
        setters.append(f"{pluralize('container', 'containers', len(explicit))} {join_quote(explicit)}")
    if setters:
        return "seccompProfile", (f"{' and '.join(setters)} must not set securityContext.seccompProfile.type to "
                                  f"{join_quote(sorted(values))}")
    if implicit:
        return "seccompProfile", (f"pod or {pluralize('container', 'containers', len(implicit))} "
                                  f"{join_quote(implicit)} must set securityContext.seccompProfile.type to "
                                  '"RuntimeDefault" or "Localhost"')
    return None


#: (check ID, check), each level in ID order, as upstream evaluates them.
BASELINE_CHECKS: tuple[tuple[str, Check], ...] = (
    ("capabilities_baseline", check_capabilities_baseline),
    ("hostNamespaces", check_host_namespaces),
    ("hostPathVolumes", check_host_path_volumes),
    ("hostPorts", check_host_ports),
    ("privileged", check_privileged),
    ("procMount", check_proc_mount),
    ("seccompProfile_baseline", check_seccomp_baseline),
    ("sysctls", check_sysctls),
)
RESTRICTED_CHECKS: tuple[tuple[str, Check], ...] = (
    ("allowPrivilegeEscalation", check_allow_privilege_escalation),
    ("capabilities_restricted", check_capabilities_restricted),
    ("restrictedVolumes", check_restricted_volumes),
    ("runAsNonRoot", check_run_as_non_root),
    ("runAsUser", check_run_as_user),
    ("seccompProfile_restricted", check_seccomp_restricted),
)
#: Restricted checks that replace a baseline one.
OVERRIDES = frozenset(("capabilities_baseline", "seccompProfile_baseline"))


def checks_for(level: str) -> list[Check]:
    if level == "baseline":
        return [fn for _, fn in BASELINE_CHECKS]
    if level == "restricted":
        return [fn for cid, fn in BASELINE_CHECKS if cid not in OVERRIDES] + [fn for _, fn in RESTRICTED_CHECKS]
    return []


def enforced_policy(namespace: Obj) -> tuple[str, str]:
    """(level, version) the namespace enforces; an invalid label means restricted:latest."""
    labels = (namespace.get("metadata") or {}).get("labels") or {}
    level = labels.get(ENFORCE_LABEL, "privileged")
    version = labels.get(ENFORCE_VERSION_LABEL, "latest")
    if level not in LEVELS or (version != "latest" and not VERSION_RE.match(version)):
        return "restricted", "latest"
    return level, version


def violations(level: str, spec: Obj) -> list[str]:
    out: list[str] = []
    for check in checks_for(level):
        result = check(spec)
        if result is not None:
            reason, detail = result
            out.append(f"{reason} ({detail})" if detail else reason)
    return out


class PodSecurity:
    name = "PodSecurity"
    #: The (group, kind) pairs this plugin can act on: the server asks it about no other.
    kinds = frozenset({("", "Pod")})

    def validate(self, ctx: AdmissionContext, obj: dict[str, Any] | None, old: dict[str, Any] | None) -> None:
        # A debug container is judged with the pod it joins, as upstream checks pods/ephemeralcontainers.
        judged = ctx.operation == "CREATE" and not ctx.subresource or (
            ctx.operation == "UPDATE" and ctx.subresource == "ephemeralcontainers")
        if not judged or ctx.info.group != "" or ctx.info.kind != "Pod":
            return
        if obj is None or not ctx.namespace:
            return
        namespace = ctx.get_object("namespaces", None, ctx.namespace)
        if namespace is None:
            return
        level, version = enforced_policy(namespace)
        if level == "privileged":
            return
        found = violations(level, obj.get("spec") or {})
        if found:
            name = (obj.get("metadata") or {}).get("name") or None
            raise StatusError.forbidden("pods", name, f'violates PodSecurity "{level}:{version}": {", ".join(found)}')
