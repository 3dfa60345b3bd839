"""The cluster addons a kubeadm cluster installs through the API: kube-proxy, CoreDNS, and the
default StorageClass that kind and cloud clusters ship.

Each addon is a table entry: the objects kubeadm 1.32 (``kubeadm init phase addon``) or the
addon manager creates, in creation order. At every start each object missing from the store is
created, as the addon manager's ``EnsureExists`` mode does: a deleted CoreDNS Deployment comes back
on restart, while an edited or scaled one is left as the user left it. They are ordinary objects:
the DaemonSet controller gives every node its ``kube-proxy-*`` pod, the Deployment controller makes
``coredns-*`` pods, the scheduler places them and the kubelets run them, so ``kubectl get pods -A``
reads as on a kubeadm cluster.

With this addon a node's simulated kube-proxy (:mod:`kconsole.nodes.proxy`) is its ``kube-proxy-*``
pod: its rules follow Services only while that pod's container runs. Pods run no processes, so
CoreDNS resolves nothing; its Service, endpoints and pods are what a learner inspects.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kconsole.client.errors import is_already_exists, is_not_found
from kconsole.objects.meta import deep_copy
from kconsole.objects.pod import CLUSTER_DNS_IP

if TYPE_CHECKING:
    from kconsole.client import Client

log = logging.getLogger(__name__)

Obj = dict[str, Any]

KUBE_SYSTEM = "kube-system"
RBAC = "rbac.authorization.k8s.io"
#: The repository is the one kconsole.nodes.proxy recognises as a node's kube-proxy.
KUBE_PROXY_IMAGE = "registry.k8s.io/kube-proxy:v1.32.0"
COREDNS_IMAGE = "registry.k8s.io/coredns/coredns:v1.11.3"
#: kubeadm's DNS Service address, the one every kubelet's clusterDNS names.
DNS_SERVICE_IP = CLUSTER_DNS_IP
#: The Pod network kconsole's nodes take their podCIDRs from (nodes/config.py).
CLUSTER_CIDR = "10.244.0.0/16"

COREFILE = """\
.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    forward . /etc/resolv.conf {
       max_concurrent 1000
    }
    cache 30 {
       disable success cluster.local
       disable denial cluster.local
    }
    loop
    reload
    loadbalance
}
"""

KUBE_PROXY_CONFIG = f"""\
apiVersion: kubeproxy.config.k8s.io/v1alpha1
bindAddress: 0.0.0.0
clientConnection:
  kubeconfig: /var/lib/kube-proxy/kubeconfig.conf
clusterCIDR: {CLUSTER_CIDR}
kind: KubeProxyConfiguration
metricsBindAddress: ""
mode: ""
"""

#: kubeadm points kube-proxy at the control-plane endpoint: here the first control plane's InternalIP.
KUBE_PROXY_KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters:
- cluster:
    certificate-authority: /var/run/secrets/kubernetes.io/serviceaccount/ca.crt
    server: https://172.18.0.2:6443
  name: default
contexts:
- context:
    cluster: default
    namespace: default
    user: default
  name: default
current-context: default
users:
- name: default
  user:
    tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token
"""


def _meta(name: str, labels: dict[str, str] | None = None, namespace: str | None = KUBE_SYSTEM) -> Obj:
    meta: Obj = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = dict(labels)
    return meta


def _account(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(name)}


def _config_map(name: str, data: dict[str, str], labels: dict[str, str] | None = None) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(name, labels), "data": dict(data)}


def _binding(kind: str, name: str, role_kind: str, role: str, subject: Obj, namespace: str | None = None) -> Obj:
    return {"apiVersion": f"{RBAC}/v1", "kind": kind, "metadata": _meta(name, namespace=namespace),
            "roleRef": {"apiGroup": RBAC, "kind": role_kind, "name": role}, "subjects": [subject]}


def _account_subject(name: str) -> Obj:
    return {"kind": "ServiceAccount", "name": name, "namespace": KUBE_SYSTEM}


def kube_proxy_objects() -> list[Obj]:
    """kubeadm's kube-proxy addon: its account bound to ``system:node-proxier``, its config, and a
    DaemonSet that tolerates every taint (so it runs on control-plane and unreachable nodes too)."""
    labels = {"k8s-app": "kube-proxy"}
    pod_spec: Obj = {
        "priorityClassName": "system-node-critical",
        "containers": [{
            "name": "kube-proxy", "image": KUBE_PROXY_IMAGE, "imagePullPolicy": "IfNotPresent",
            "command": ["/usr/local/bin/kube-proxy", "--config=/var/lib/kube-proxy/config.conf",
                        "--hostname-override=$(NODE_NAME)"],
            "securityContext": {"privileged": True},
            "volumeMounts": [{"mountPath": "/var/lib/kube-proxy", "name": "kube-proxy"},
                             {"mountPath": "/run/xtables.lock", "name": "xtables-lock"},
                             {"mountPath": "/lib/modules", "name": "lib-modules", "readOnly": True}],
            "env": [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1",
                                                                     "fieldPath": "spec.nodeName"}}}],
        }],
        "hostNetwork": True,
        "serviceAccountName": "kube-proxy",
        "volumes": [{"name": "kube-proxy", "configMap": {"name": "kube-proxy"}},
                    {"name": "xtables-lock", "hostPath": {"path": "/run/xtables.lock", "type": "FileOrCreate"}},
                    {"name": "lib-modules", "hostPath": {"path": "/lib/modules"}}],
        "tolerations": [{"operator": "Exists"}],
        "nodeSelector": {"kubernetes.io/os": "linux"},
    }
    return [
        _account("kube-proxy"),
        _binding("ClusterRoleBinding", "kubeadm:node-proxier", "ClusterRole", "system:node-proxier",
                 _account_subject("kube-proxy")),
        {"apiVersion": f"{RBAC}/v1", "kind": "Role", "metadata": _meta("kube-proxy"),
         "rules": [{"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["kube-proxy"],
                    "verbs": ["get"]}]},
        _binding("RoleBinding", "kube-proxy", "Role", "kube-proxy",
                 {"kind": "Group", "apiGroup": RBAC, "name": "system:bootstrappers:kubeadm:default-node-token"},
                 namespace=KUBE_SYSTEM),
        _config_map("kube-proxy", {"config.conf": KUBE_PROXY_CONFIG, "kubeconfig.conf": KUBE_PROXY_KUBECONFIG},
                    {"app": "kube-proxy"}),
        {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": _meta("kube-proxy", labels),
         "spec": {"selector": {"matchLabels": dict(labels)}, "updateStrategy": {"type": "RollingUpdate"},
                  "template": {"metadata": {"labels": dict(labels)}, "spec": pod_spec}}},
    ]


def coredns_objects() -> list[Obj]:
    """kubeadm's CoreDNS addon: two replicas spread over nodes, allowed onto control-plane nodes,
    behind the ``kube-dns`` Service that ``kubectl cluster-info`` lists."""
    labels = {"k8s-app": "kube-dns"}
    container: Obj = {
        "name": "coredns", "image": COREDNS_IMAGE, "imagePullPolicy": "IfNotPresent",
        "resources": {"limits": {"memory": "170Mi"}, "requests": {"cpu": "100m", "memory": "70Mi"}},
        "args": ["-conf", "/etc/coredns/Corefile"],
        "volumeMounts": [{"name": "config-volume", "mountPath": "/etc/coredns", "readOnly": True}],
        "ports": [{"containerPort": 53, "name": "dns", "protocol": "UDP"},
                  {"containerPort": 53, "name": "dns-tcp", "protocol": "TCP"},
                  {"containerPort": 9153, "name": "metrics", "protocol": "TCP"}],
        "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                            "capabilities": {"add": ["NET_BIND_SERVICE"], "drop": ["ALL"]}},
        "livenessProbe": {"httpGet": {"path": "/health", "port": 8080, "scheme": "HTTP"}, "initialDelaySeconds": 60,
                          "timeoutSeconds": 5, "successThreshold": 1, "failureThreshold": 5},
        "readinessProbe": {"httpGet": {"path": "/ready", "port": 8181, "scheme": "HTTP"}},
    }
    pod_spec: Obj = {
        "priorityClassName": "system-cluster-critical",
        "serviceAccountName": "coredns",
        "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
            "weight": 100,
            "podAffinityTerm": {"labelSelector": {"matchExpressions": [
                {"key": "k8s-app", "operator": "In", "values": ["kube-dns"]}]},
                "topologyKey": "kubernetes.io/hostname"}}]}},
        "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"},
                        {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}],
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "containers": [container],
        "dnsPolicy": "Default",
        "volumes": [{"name": "config-volume",
                     "configMap": {"name": "coredns", "items": [{"key": "Corefile", "path": "Corefile"}]}}],
    }
    return [
        _account("coredns"),
        {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRole", "metadata": _meta("system:coredns", namespace=None),
         "rules": [{"apiGroups": [""], "resources": ["endpoints", "services", "pods", "namespaces"],
                    "verbs": ["list", "watch"]},
                   {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["list", "watch"]}]},
        _binding("ClusterRoleBinding", "system:coredns", "ClusterRole", "system:coredns",
                 _account_subject("coredns")),
        _config_map("coredns", {"Corefile": COREFILE}),
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta("coredns", labels),
         "spec": {"replicas": 2, "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
                  "selector": {"matchLabels": dict(labels)},
                  "template": {"metadata": {"labels": dict(labels)}, "spec": pod_spec}}},
        {"apiVersion": "v1", "kind": "Service",
         "metadata": {**_meta("kube-dns", {**labels, "kubernetes.io/cluster-service": "true",
                                          "kubernetes.io/name": "CoreDNS"}),
                      "annotations": {"prometheus.io/port": "9153", "prometheus.io/scrape": "true"}},
         "spec": {"selector": dict(labels), "clusterIP": DNS_SERVICE_IP,
                  "ports": [{"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53},
                            {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53},
                            {"name": "metrics", "port": 9153, "protocol": "TCP", "targetPort": 9153}]}},
    ]


@dataclass(frozen=True)
class Addon:
    name: str
    objects: Callable[[], list[Obj]]
    #: A resource whose having any object at all means the addon is there (a cluster may have its
    #: own default StorageClass under another name).
    present_if_any: str | None = None


def _default_class() -> list[Obj]:
    from kconsole.controllers.volumeprovisioner import DEFAULT_CLASS  # the provisioner's driver names it

    return [deep_copy(DEFAULT_CLASS)]


ADDONS: dict[str, Addon] = {a.name: a for a in (
    Addon("kube-proxy", kube_proxy_objects),
    Addon("coredns", coredns_objects),
    Addon("default-storageclass", _default_class, present_if_any="storageclasses"),
)}
DEFAULT_ADDONS: tuple[str, ...] = tuple(ADDONS)


async def ensure_addons(client: Client, names: tuple[str, ...]) -> list[str]:
    """Create what is missing of each named addon; returns what it could not create, one line
    each (the cluster runs on without it: a Service address taken, say)."""
    problems: list[str] = []
    for name in names:
        addon = ADDONS[name]
        if addon.present_if_any and (await client.list(addon.present_if_any, limit=1))["items"]:
            continue
        for obj in addon.objects():
            meta = obj["metadata"]
            info = client.resource_info(obj["kind"], obj["apiVersion"])
            resource = f"{info.resource}.{info.group}" if info.group else info.resource
            try:
                await client.get(resource, meta["name"], meta.get("namespace"))
                continue
            except Exception as err:  # noqa: BLE001 - anything but 404 is reported below
                if not is_not_found(err):
                    problems.append(f"addon {name}: {obj['kind']} {meta['name']}: {err}")
                    continue
            try:
                await client.create(obj)
            except Exception as err:  # noqa: BLE001 - one object refused does not stop the others
                if not is_already_exists(err):
                    problems.append(f"addon {name}: {obj['kind']} {meta['name']}: {err}")
    for line in problems:
        log.warning("%s", line)
    return problems
