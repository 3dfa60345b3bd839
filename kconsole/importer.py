"""``kconsole import``: copy a cluster into a new folder, so ``kconsole DIR`` opens a simulated twin.

Read through the kubeconfig's HTTPS client, written as plain files:

* the nodes (capacity, allocatable, labels, taints, zone and region) as the data folder's
  ``nodes.yaml`` (a ``node-list``): the twin's simulated kubelets register exactly these nodes;
* the objects as manifests in ``DIR`` (one file of cluster-scoped objects, one per namespace, and
  with ``--with-secrets`` one mode-0600 file of Secrets per namespace), which the twin's folder sync
  applies at start: Namespaces, workloads (Deployments, StatefulSets, DaemonSets, CronJobs, Jobs and
  ReplicaSets no controller owns), Services, ConfigMaps, ServiceAccounts, PriorityClasses,
  PodDisruptionBudgets, ResourceQuotas, LimitRanges and RBAC.

Pods a controller owns are not copied: the twin's controllers create them again. Bare pods are
copied (unbound: the twin's scheduler places them). What the source server or its controllers
filled in (uids, resourceVersions, status, cluster IPs, node ports, the service account token
volume, a Job's generated selector) is left out so the twin's own fill it in again; what upstream
bootstraps by itself (``system:`` RBAC, ``system-`` PriorityClasses, ``default`` ServiceAccounts,
``kube-root-ca.crt``) is not copied.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kconsole.client import Client, StatusError
from kconsole.objects.meta import deep_copy

Obj = dict[str, Any]

#: Namespaces copied when ``--namespaces`` names none: all but the system ones the twin has itself.
SYSTEM_NAMESPACES = frozenset({"kube-system", "kube-public", "kube-node-lease"})
#: (resource, kind) copied per namespace, in the order a reader expects them in a file.
NAMESPACED = (
    ("serviceaccounts", "ServiceAccount"), ("configmaps", "ConfigMap"), ("resourcequotas", "ResourceQuota"),
    ("limitranges", "LimitRange"), ("roles.rbac.authorization.k8s.io", "Role"),
    ("rolebindings.rbac.authorization.k8s.io", "RoleBinding"),
    ("poddisruptionbudgets.policy", "PodDisruptionBudget"), ("services", "Service"),
    ("deployments.apps", "Deployment"), ("statefulsets.apps", "StatefulSet"), ("daemonsets.apps", "DaemonSet"),
    ("replicasets.apps", "ReplicaSet"), ("cronjobs.batch", "CronJob"), ("jobs.batch", "Job"), ("pods", "Pod"),
)
CLUSTER_SCOPED = (
    ("priorityclasses.scheduling.k8s.io", "PriorityClass"), ("clusterroles.rbac.authorization.k8s.io", "ClusterRole"),
    ("clusterrolebindings.rbac.authorization.k8s.io", "ClusterRoleBinding"),
)
#: Labels a simulated kubelet sets itself (hostname, os, arch) or from the zone and region fields.
KUBELET_LABELS = frozenset({"kubernetes.io/hostname", "kubernetes.io/os", "kubernetes.io/arch",
                            "beta.kubernetes.io/os", "beta.kubernetes.io/arch", "topology.kubernetes.io/zone",
                            "topology.kubernetes.io/region"})
BASE_CAPACITY = {"cpu": "cpu", "memory": "memory", "pods": "pods", "ephemeral-storage": "ephemeral_storage"}
_DROP_META = ("uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink",
              "ownerReferences", "deletionTimestamp", "deletionGracePeriodSeconds", "finalizers")
_DROP_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration", "deployment.kubernetes.io/revision",
                     "deployment.kubernetes.io/desired-replicas", "deployment.kubernetes.io/max-replicas")
_JOB_LABELS = ("controller-uid", "batch.kubernetes.io/controller-uid", "job-name", "batch.kubernetes.io/job-name")


class ImportFailed(Exception):
    """An import that cannot go on, with the reason in words."""


@dataclass
class Imported:
    """What an import wrote, for its report."""

    nodes: list[str] = field(default_factory=list)
    objects: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)

    def count(self, kind: str, into: str = "objects") -> None:
        bucket = getattr(self, into)
        bucket[kind] = bucket.get(kind, 0) + 1


# --------------------------------------------------------------------------- nodes


def node_entry(node: Obj) -> Obj:
    """A ``node-list`` entry with what the scheduler sees of ``node``."""
    meta, spec, status = node["metadata"], node.get("spec") or {}, node.get("status") or {}
    capacity = {str(k): str(v) for k, v in (status.get("capacity") or {}).items()}
    allocatable = {str(k): str(v) for k, v in (status.get("allocatable") or {}).items()}
    labels = dict(meta.get("labels") or {})
    entry: Obj = {"name": meta["name"]}
    for key, name in BASE_CAPACITY.items():
        if key in capacity:
            entry[name] = int(capacity[key]) if key == "pods" else capacity[key]
    extended = {k: v for k, v in capacity.items() if k not in BASE_CAPACITY and not k.startswith("hugepages-")}
    if extended:
        entry["extended"] = extended
    reserved = {k: v for k, v in allocatable.items() if k in capacity and v != capacity[k]
                and not k.startswith("hugepages-")}
    if reserved:
        entry["allocatable"] = reserved
    entry["zone"] = labels.get("topology.kubernetes.io/zone", "")
    entry["region"] = labels.get("topology.kubernetes.io/region", "")
    own = {k: v for k, v in labels.items() if k not in KUBELET_LABELS}
    if own:
        entry["labels"] = own
    # Taints the node lifecycle controller manages come back by themselves in the twin.
    taints = [{k: v for k, v in t.items() if k != "timeAdded"} for t in spec.get("taints") or ()
              if not str(t.get("key", "")).startswith("node.kubernetes.io/")]
    if taints:
        entry["taints"] = taints
    return entry


# --------------------------------------------------------------------------- objects


def _controlled(obj: Obj) -> bool:
    return any(ref.get("controller") for ref in obj["metadata"].get("ownerReferences") or ())


def keep(kind: str, obj: Obj, with_secrets: bool) -> bool:
    """Whether ``obj`` is copied: not controller-owned, not what upstream bootstraps by itself."""
    meta = obj["metadata"]
    name = meta.get("name", "")
    if _controlled(obj) or meta.get("deletionTimestamp"):
        return False
    if kind == "Pod":
        annotations = meta.get("annotations") or {}
        return "kubernetes.io/config.mirror" not in annotations and (obj.get("status") or {}).get("phase") not in (
            "Succeeded", "Failed")
    if kind == "ServiceAccount":
        return name != "default"
    if kind == "ConfigMap":
        return name != "kube-root-ca.crt"
    if kind == "Secret":
        return with_secrets and obj.get("type") != "kubernetes.io/service-account-token"
    if kind == "Service":
        return not (meta.get("namespace") == "default" and name == "kubernetes")
    if kind in ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"):
        labels = meta.get("labels") or {}
        return not name.startswith(("system:", "kubeadm:")) and labels.get(
            "kubernetes.io/bootstrapping") != "rbac-defaults"
    if kind == "PriorityClass":
        return not name.startswith("system-")
    return True


def _clean_pod_spec(spec: Obj) -> None:
    """What admission and the scheduler added: the token volume and its mounts, the node."""
    for key in ("nodeName", "ephemeralContainers"):
        spec.pop(key, None)
    volumes = spec.get("volumes") or []
    token = {v.get("name") for v in volumes if str(v.get("name", "")).startswith("kube-api-access-")}
    if token:
        spec["volumes"] = [v for v in volumes if v.get("name") not in token] or None
        if spec["volumes"] is None:
            del spec["volumes"]
        for container in (*(spec.get("containers") or ()), *(spec.get("initContainers") or ())):
            mounts = [m for m in container.get("volumeMounts") or () if m.get("name") not in token]
            if mounts:
                container["volumeMounts"] = mounts
            else:
                container.pop("volumeMounts", None)


def clean(kind: str, api_version: str, obj: Obj) -> Obj:
    """``obj`` as a manifest: what its source server and controllers filled in left out."""
    out = deep_copy(obj)
    out["apiVersion"], out["kind"] = api_version, kind
    out.pop("status", None)
    meta = out["metadata"]
    for key in _DROP_META:
        meta.pop(key, None)
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in _DROP_ANNOTATIONS}
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    spec = out.get("spec")
    if kind == "Namespace":
        out.pop("spec", None)
    elif kind == "Service" and isinstance(spec, dict):
        if spec.get("clusterIP") != "None":
            spec.pop("clusterIP", None)
            spec.pop("clusterIPs", None)
        spec.pop("healthCheckNodePort", None)
        for port in spec.get("ports") or ():
            port.pop("nodePort", None)
    elif kind == "Pod" and isinstance(spec, dict):
        _clean_pod_spec(spec)
    elif kind == "Job" and isinstance(spec, dict):
        if not spec.get("manualSelector"):
            spec.pop("selector", None)
            labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
            for key in _JOB_LABELS:
                labels.pop(key, None)
    elif kind == "ServiceAccount":
        out.pop("secrets", None)
    for template in _templates(kind, out):
        template.get("metadata", {}).pop("creationTimestamp", None)
    return out


def _templates(kind: str, obj: Obj) -> list[Obj]:
    spec = obj.get("spec") or {}
    if kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"):
        return [spec.get("template") or {}]
    if kind == "CronJob":
        return [((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or {}]
    return []


# --------------------------------------------------------------------------- the command


async def _list(client: Client, resource: str, namespace: str | None = None) -> list[Obj] | None:
    """Every object, or None when the server does not serve the resource or the user may not list it."""
    try:
        return await client.list_all(resource, namespace)
    except StatusError as err:
        if err.code in (403, 404):
            return None
        raise


def _dump(path: Path, docs: list[Obj], private: bool = False) -> None:
    text = yaml.safe_dump_all(docs, sort_keys=False, default_flow_style=False)
    if private:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        path.write_text(text, encoding="utf-8")


async def copy_cluster(client: Client, folder: Path, *, namespaces: list[str] | None = None,
                       with_secrets: bool = False) -> Imported:
    """Copy what ``client`` sees into ``folder`` (new or empty): manifests and ``.kconsole/nodes.yaml``."""
    from kconsole.cluster import NODE_LIST_FILE

    if folder.exists() and any(folder.iterdir()):
        raise ImportFailed(f"{folder} is not empty: import into a new folder")
    report = Imported()
    nodes = await _list(client, "nodes")
    if nodes is None:
        raise ImportFailed("this user may not list nodes: the twin needs them")
    entries = [node_entry(n) for n in sorted(nodes, key=lambda n: n["metadata"]["name"])]
    report.nodes = [e["name"] for e in entries]
    all_ns = [n["metadata"]["name"] for n in await _list(client, "namespaces") or ()]
    if namespaces:
        missing = sorted(set(namespaces) - set(all_ns))
        if missing:
            raise ImportFailed(f"no such namespace(s): {', '.join(missing)}")
        chosen = list(dict.fromkeys(namespaces))
    else:
        chosen = [n for n in all_ns if n not in SYSTEM_NAMESPACES]
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / ".kconsole"
    data.mkdir(mode=0o700)
    (data / NODE_LIST_FILE).write_text(yaml.safe_dump(entries, sort_keys=False), encoding="utf-8")
    cluster_docs: list[Obj] = []
    for ns in chosen:
        if ns not in ("default", *SYSTEM_NAMESPACES):
            source = await client.get("namespaces", ns)
            cluster_docs.append(clean("Namespace", "v1", source))
            report.count("Namespace")
    for resource, kind in CLUSTER_SCOPED:
        info = client.resource_info(resource)
        for obj in sorted(await _list(client, resource) or (), key=lambda o: o["metadata"]["name"]):
            if keep(kind, obj, with_secrets):
                cluster_docs.append(clean(kind, info.api_version, obj))
                report.count(kind)
            else:
                report.count(kind, "skipped")
    if cluster_docs:
        path = folder / "cluster.yaml"
        _dump(path, cluster_docs)
        report.files.append(path)
    kinds = list(NAMESPACED) + ([("secrets", "Secret")] if with_secrets else [])
    for ns in chosen:
        docs: list[Obj] = []
        secrets: list[Obj] = []
        for resource, kind in kinds:
            info = client.resource_info(resource)
            for obj in sorted(await _list(client, resource, ns) or (), key=lambda o: o["metadata"]["name"]):
                if keep(kind, obj, with_secrets):
                    (secrets if kind == "Secret" else docs).append(clean(kind, info.api_version, obj))
                    report.count(kind)
                else:
                    report.count(kind, "skipped")
        if docs:
            path = folder / f"ns-{ns}.yaml"
            _dump(path, docs)
            report.files.append(path)
        if secrets:
            path = folder / f"ns-{ns}-secrets.yaml"
            _dump(path, secrets, private=True)
            report.files.append(path)
    return report


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", help="new folder to write the twin into (manifests, and .kconsole/nodes.yaml)")
    p.add_argument("--kubeconfig", default=None, help="kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
    p.add_argument("--context", default=None, help="kubeconfig context (default: its current-context)")
    p.add_argument("--namespaces", nargs="+", default=None, metavar="NS",
                   help="namespaces to copy (default: all but kube-system, kube-public, kube-node-lease)")
    p.add_argument("--with-secrets", action="store_true", help="copy Secrets too (files written with mode 0600)")


async def _run(args: argparse.Namespace) -> int:
    from kconsole.client.https import connect
    from kconsole.client.kubeconfig import KubeconfigError

    try:
        client = await connect(Path(args.kubeconfig) if args.kubeconfig else None, args.context,
                               user_agent="kconsole-import")
    except (KubeconfigError, StatusError) as err:
        print(f"kconsole import: {err}", file=sys.stderr)
        return 2
    try:
        namespaces = [n for arg in args.namespaces or () for n in arg.split(",") if n]
        report = await copy_cluster(client, Path(args.dir), namespaces=namespaces or None,
                                    with_secrets=args.with_secrets)
    except (ImportFailed, StatusError) as err:
        print(f"kconsole import: {err}", file=sys.stderr)
        return 1
    finally:
        await client.entry.close()
    context = getattr(client.entry.config, "context", "")
    print(f"kconsole import: copied context {context} into {args.dir}")
    print(f"  nodes ({len(report.nodes)}): {', '.join(report.nodes)}")
    copied = ", ".join(f"{n} {k}" for k, n in sorted(report.objects.items())) or "none"
    print(f"  objects: {copied}")
    if report.skipped:
        print("  left out (controller-owned or bootstrapped by the twin itself): "
              + ", ".join(f"{n} {k}" for k, n in sorted(report.skipped.items())))
    print(f"  open the twin: kconsole {args.dir}")
    return 0


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_run(args))
