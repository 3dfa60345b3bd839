"""What a process started in a container sees, as the kubelet sets it up: the environment and files
of :class:`~kconsole.nodes.shell.Machine`.

The environment is the kubelet's makeEnvironmentVariables: ``envFrom`` (with its prefix), then
``env`` (values with ``$(VAR)`` references expanded; ``valueFrom`` configMapKeyRef, secretKeyRef,
fieldRef and resourceFieldRef resolved), then the Service variables kubelets inject for each
Service of the pod's namespace (``enableServiceLinks``) and the ``kubernetes`` Service, that existed
when the container started (``<SVC>_SERVICE_HOST``, ``_SERVICE_PORT``, ``_PORT_<n>_TCP...``), with
PATH, HOSTNAME and HOME from the image and runtime. ConfigMaps and Secrets are read through the API
with the node's own credentials, so the Node authorizer decides, as upstream.

The files are the pod's volumes at their mount paths (ConfigMap and Secret keys or items, projected
sources including the service account token requested for the pod, downward API files), and the
kubelet-managed ``/etc/hosts``, ``/etc/resolv.conf`` and ``/etc/hostname``.
"""

from __future__ import annotations

import base64
import math
import re
from typing import Any

from kconsole.client import Client, StatusError
from kconsole.nodes.images import repository
from kconsole.objects.meta import parse_time
from kconsole.objects.pod import CLUSTER_DNS_IP
from kconsole.objects.quantity import QuantityError, parse_quantity

Obj = dict[str, Any]
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
#: Commands an image family does not ship (the rest of the shell's table it has).
MISSING_COMMANDS: dict[str, frozenset[str]] = {
    "busybox": frozenset(("curl", "bash")),
    "alpine": frozenset(("curl", "bash")),
    "nginx": frozenset(("wget", "nslookup", "ps", "ash")),
    "httpd": frozenset(("wget", "nslookup", "ps", "ash", "curl")),
    "debian": frozenset(("wget", "nslookup", "ps", "curl", "ash")),
    "ubuntu": frozenset(("wget", "nslookup", "ps", "curl", "ash")),
    "redis": frozenset(("wget", "nslookup", "ps", "curl", "ash")),
}
#: Images with no shell or tools at all (distroless, scratch): only their own program.
NO_SHELL = frozenset(("pause", "coredns", "kube-proxy", "etcd", "kube-apiserver", "kube-scheduler",
                      "kube-controller-manager", "metrics-server"))


def base_name(image: str) -> str:
    return repository(image).rsplit("/", 1)[-1]


def missing_commands(image: str) -> frozenset[str] | None:
    """What the image lacks of the shell's table; None for an image with no shell at all."""
    base = base_name(image)
    if base in NO_SHELL:
        return None
    return MISSING_COMMANDS.get(base, frozenset())


def env_name(name: str) -> str:
    """A Service name as an environment variable prefix (upstream's makeEnvVariableName)."""
    return name.upper().replace("-", "_")


def service_env(services: list[Obj]) -> dict[str, str]:
    """Upstream's FromServices: host, port and docker-link variables of each Service with a ClusterIP."""
    out: dict[str, str] = {}
    for svc in services:
        spec = svc.get("spec") or {}
        ip = spec.get("clusterIP")
        if not ip or ip == "None":
            continue
        ports = [p for p in spec.get("ports") or () if isinstance(p, dict)]
        if not ports:
            continue
        prefix = env_name(svc["metadata"]["name"])
        out[f"{prefix}_SERVICE_HOST"] = ip
        out[f"{prefix}_SERVICE_PORT"] = str(ports[0].get("port"))
        for port in ports:
            if port.get("name"):
                out[f"{prefix}_SERVICE_PORT_{env_name(port['name'])}"] = str(port.get("port"))
        first = ports[0]
        out[f"{prefix}_PORT"] = f"{str(first.get('protocol') or 'TCP').lower()}://{ip}:{first.get('port')}"
        for port in ports:
            proto = str(port.get("protocol") or "TCP")
            key = f"{prefix}_PORT_{port.get('port')}_{proto.upper()}"
            out[key] = f"{proto.lower()}://{ip}:{port.get('port')}"
            out[f"{key}_PROTO"] = proto.lower()
            out[f"{key}_PORT"] = str(port.get("port"))
            out[f"{key}_ADDR"] = ip
    return out


def field_value(pod: Obj, path: str) -> str:
    """A downward API fieldRef's value (upstream's ExtractFieldPathAsString and the kubelet's status fields)."""
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    m = re.fullmatch(r"metadata\.(labels|annotations)\['(.+)'\]", path)
    if m:
        return str((meta.get(m.group(1)) or {}).get(m.group(2), ""))
    if path in ("metadata.labels", "metadata.annotations"):
        return "\n".join(f'{k}="{v}"' for k, v in sorted((meta.get(path.split(".")[1]) or {}).items()))
    simple = {"metadata.name": meta.get("name"), "metadata.namespace": meta.get("namespace"),
              "metadata.uid": meta.get("uid"), "spec.nodeName": spec.get("nodeName"),
              "spec.serviceAccountName": spec.get("serviceAccountName"), "status.hostIP": status.get("hostIP"),
              "status.podIP": status.get("podIP"),
              "status.hostIPs": ",".join(i.get("ip", "") for i in status.get("hostIPs") or ()),
              "status.podIPs": ",".join(i.get("ip", "") for i in status.get("podIPs") or ())}
    return str(simple.get(path) or "")


def resource_value(container: Obj, ref: Obj, allocatable: dict[str, str]) -> str:
    """A resourceFieldRef's value: the limit (or request), the node's allocatable when no limit is
    set, divided by the divisor and rounded up, as upstream's ExtractContainerResourceValue."""
    resource = str(ref.get("resource") or "")
    kind, _, name = resource.partition(".")
    resources = container.get("resources") or {}
    value = (resources.get(kind) or {}).get(name)
    if value is None:
        value = (resources.get("limits") or {}).get(name) if kind == "requests" else None
    if value is None:
        value = allocatable.get(name, "0")
    try:
        amount = parse_quantity(str(value))
        divisor = parse_quantity(str(ref.get("divisor") or "1")) or 1
    except QuantityError:
        return ""
    return str(math.ceil(amount / divisor))


def _expand(value: str, env: dict[str, str]) -> str:
    """``$(VAR)`` references to variables defined before; ``$$`` escapes (upstream's expansion)."""
    def sub(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        name = m.group(1)
        return env[name] if name in env else m.group(0)
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)", sub, value)


def _data(obj: Obj, secret: bool) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for key, value in (obj.get("data") or {}).items():
        if secret:
            try:
                out[key] = base64.b64decode(str(value))
            except ValueError:
                out[key] = b""
        else:
            out[key] = str(value).encode()
    for key, value in (obj.get("binaryData") or {}).items():
        try:
            out[key] = base64.b64decode(str(value))
        except ValueError:
            out[key] = b""
    return out


class Builder:
    """Builds one container's view; the API reads go out as the node (``client``)."""

    def __init__(self, client: Client, pod: Obj, container: Obj, allocatable: dict[str, str],
                 services: list[Obj], started_at: float | None) -> None:
        self.client = client
        self.pod = pod
        self.container = container
        self.allocatable = allocatable
        self.services = services
        self.started_at = started_at
        self.namespace = pod["metadata"].get("namespace") or "default"
        self._objects: dict[tuple[str, str], Obj | None] = {}

    async def _get(self, resource: str, name: str) -> Obj | None:
        key = (resource, name)
        if key not in self._objects:
            try:
                self._objects[key] = await self.client.get(resource, name, self.namespace)
            except StatusError:
                self._objects[key] = None
        return self._objects[key]

    async def environment(self, hostname: str) -> dict[str, str]:
        env: dict[str, str] = {"PATH": PATH, "HOSTNAME": hostname}
        own: dict[str, str] = {}
        for source in self.container.get("envFrom") or ():
            prefix = str(source.get("prefix") or "")
            for kind, resource in (("configMapRef", "configmaps"), ("secretRef", "secrets")):
                ref = source.get(kind)
                if ref is None:
                    continue
                obj = await self._get(resource, str(ref.get("name") or ""))
                for key, value in _data(obj or {}, resource == "secrets").items():
                    own[prefix + key] = value.decode(errors="replace")
        for var in self.container.get("env") or ():
            name = str(var.get("name") or "")
            if "value" in var or "valueFrom" not in var:
                own[name] = _expand(str(var.get("value") or ""), {**self._services(), **own})
                continue
            value_from = var.get("valueFrom") or {}
            value: str | None = None
            for kind, resource in (("configMapKeyRef", "configmaps"), ("secretKeyRef", "secrets")):
                ref = value_from.get(kind)
                if ref is not None:
                    obj = await self._get(resource, str(ref.get("name") or ""))
                    raw = _data(obj or {}, resource == "secrets").get(str(ref.get("key") or ""))
                    value = raw.decode(errors="replace") if raw is not None else None
            if "fieldRef" in value_from:
                value = field_value(self.pod, str((value_from["fieldRef"] or {}).get("fieldPath") or ""))
            if "resourceFieldRef" in value_from:
                value = resource_value(self.container, value_from["resourceFieldRef"] or {}, self.allocatable)
            if value is not None:
                own[name] = value
        env.update(own)
        for key, value in self._services().items():
            env.setdefault(key, value)
        env.setdefault("HOME", "/root")
        return env

    def _services(self) -> dict[str, str]:
        """The Service variables (what existed when the container started)."""
        chosen = []
        links = (self.pod.get("spec") or {}).get("enableServiceLinks") is not False
        for svc in self.services:
            meta = svc["metadata"]
            is_master = meta.get("namespace") == "default" and meta.get("name") == "kubernetes"
            if not is_master and not (links and meta.get("namespace") == self.namespace):
                continue
            created = meta.get("creationTimestamp")
            if created and self.started_at is not None and parse_time(created) > self.started_at:
                continue
            chosen.append(svc)
        chosen.sort(key=lambda s: (s["metadata"].get("namespace") != "default" or s["metadata"]["name"] != "kubernetes",
                                   s["metadata"]["name"]))
        return service_env(chosen)

    async def files(self, hostname: str, fqdn_hostname: str | None, pod_ip: str) -> tuple[dict[str, bytes],
                                                                                           tuple[str, ...]]:
        """(path -> content, read-only mount paths)."""
        spec = self.pod.get("spec") or {}
        files: dict[str, bytes] = {"/etc/hostname": f"{hostname}\n".encode(),
                                   "/etc/hosts": self._hosts(hostname, fqdn_hostname, pod_ip).encode(),
                                   "/etc/resolv.conf": self._resolv().encode(),
                                   "/etc/os-release": b'NAME="kconsole simulated container"\nID=kconsole\n'}
        read_only: list[str] = []
        volumes = {v.get("name"): v for v in spec.get("volumes") or () if isinstance(v, dict)}
        for mount in self.container.get("volumeMounts") or ():
            volume = volumes.get(mount.get("name"))
            if volume is None:
                continue
            path = str(mount.get("mountPath") or "").rstrip("/") or "/"
            content = await self._volume(volume)
            sub = mount.get("subPath")
            if sub:
                if sub in content:
                    files[path] = content[sub]
                continue
            for rel, data in content.items():
                files[f"{path}/{rel}"] = data
            if content:
                files.setdefault(f"{path}/..data", b"")
            if mount.get("readOnly") or any(k in volume for k in ("configMap", "secret", "projected", "downwardAPI")):
                read_only.append(path)
        return files, tuple(read_only)

    async def _volume(self, volume: Obj) -> dict[str, bytes]:
        if "configMap" in volume:
            return await self._keys("configmaps", volume["configMap"], str(volume["configMap"].get("name") or ""))
        if "secret" in volume:
            return await self._keys("secrets", volume["secret"], str(volume["secret"].get("secretName") or ""))
        if "downwardAPI" in volume:
            return self._downward(volume["downwardAPI"].get("items") or ())
        if "projected" in volume:
            out: dict[str, bytes] = {}
            for source in (volume["projected"] or {}).get("sources") or ():
                if "configMap" in source:
                    out.update(await self._keys("configmaps", source["configMap"],
                                                str(source["configMap"].get("name") or "")))
                elif "secret" in source:
                    out.update(await self._keys("secrets", source["secret"], str(source["secret"].get("name") or "")))
                elif "downwardAPI" in source:
                    out.update(self._downward(source["downwardAPI"].get("items") or ()))
                elif "serviceAccountToken" in source:
                    token_source = source["serviceAccountToken"] or {}
                    out[str(token_source.get("path") or "token")] = (await self._token(token_source)).encode()
            return out
        return {}

    async def _keys(self, resource: str, source: Obj, name: str) -> dict[str, bytes]:
        obj = await self._get(resource, name)
        data = _data(obj or {}, resource == "secrets")
        items = source.get("items")
        if not items:
            return data
        return {str(item.get("path") or item.get("key")): data[str(item.get("key"))] for item in items
                if str(item.get("key")) in data}

    def _downward(self, items: Any) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        for item in items:
            if "fieldRef" in item:
                value = field_value(self.pod, str((item["fieldRef"] or {}).get("fieldPath") or ""))
            elif "resourceFieldRef" in item:
                value = resource_value(self.container, item["resourceFieldRef"] or {}, self.allocatable)
            else:
                continue
            out[str(item.get("path") or "")] = value.encode()
        return out

    async def _token(self, source: Obj) -> str:
        """A TokenRequest for the pod's service account bound to the pod, as the kubelet's token manager makes it."""
        meta = self.pod["metadata"]
        account = (self.pod.get("spec") or {}).get("serviceAccountName") or "default"
        spec: Obj = {"expirationSeconds": int(source.get("expirationSeconds") or 3607),
                     "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": meta["name"], "uid": meta.get("uid")}}
        if source.get("audience"):
            spec["audiences"] = [source["audience"]]
        try:
            answer = await self.client.create_subresource(
                "serviceaccounts", account, self.namespace, "token",
                {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec})
        except StatusError:
            return ""
        return str((answer.get("status") or {}).get("token") or "")

    def _hosts(self, hostname: str, fqdn: str | None, pod_ip: str) -> str:
        lines = ["# Kubernetes-managed hosts file.", "127.0.0.1\tlocalhost", "::1\tlocalhost ip6-localhost ip6-loopback",
                 "fe00::0\tip6-localnet", "fe00::0\tip6-mcastprefix", "fe00::1\tip6-allnodes", "fe00::2\tip6-allrouters"]
        if pod_ip:
            lines.append(f"{pod_ip}\t{fqdn}\t{hostname}" if fqdn else f"{pod_ip}\t{hostname}")
        aliases = (self.pod.get("spec") or {}).get("hostAliases") or ()
        if aliases:
            lines.append("")
            lines.append("# Entries added by HostAliases.")
            for alias in aliases:
                lines.append(f"{alias.get('ip')}\t" + "\t".join(alias.get("hostnames") or ()))
        return "\n".join(lines) + "\n"

    def _resolv(self) -> str:
        spec = self.pod.get("spec") or {}
        policy = spec.get("dnsPolicy") or "ClusterFirst"
        config = spec.get("dnsConfig") or {}
        if policy == "None":
            servers, search, options = list(config.get("nameservers") or ()), list(config.get("searches") or ()), []
        else:
            servers = [CLUSTER_DNS_IP]
            search = [f"{self.namespace}.svc.cluster.local", "svc.cluster.local", "cluster.local",
                      *(config.get("searches") or ())]
            options = ["ndots:5"]
        for option in config.get("options") or ():
            text = str(option.get("name"))
            if option.get("value") is not None:
                text += f":{option['value']}"
            options = [o for o in options if o.split(":")[0] != text.split(":")[0]] + [text]
        lines = []
        if search:
            lines.append("search " + " ".join(search))
        lines += [f"nameserver {s}" for s in servers]
        if options:
            lines.append("options " + " ".join(options))
        return "\n".join(lines) + "\n"


def hostnames(pod: Obj) -> tuple[str, str | None]:
    """(hostname, fully qualified name or None), from spec.hostname/subdomain or the pod's name."""
    spec, meta = pod.get("spec") or {}, pod.get("metadata") or {}
    hostname = str(spec.get("hostname") or meta.get("name") or "")[:63].rstrip("-.")
    subdomain = spec.get("subdomain")
    fqdn = f"{hostname}.{subdomain}.{meta.get('namespace') or 'default'}.svc.cluster.local" if subdomain else None
    return hostname, fqdn
