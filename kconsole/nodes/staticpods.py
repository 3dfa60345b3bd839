"""Control-plane components as static pods, seen through their mirror pods in kube-system.

A kubeadm control-plane node runs etcd, kube-apiserver, kube-scheduler and kube-controller-manager
from manifests in /etc/kubernetes/manifests; its kubelet posts a *mirror pod* for each
(``<component>-<node>``, annotated ``kubernetes.io/config.mirror``, owned by the Node) so the API
shows them. kconsole's components run in-process; the composition root tells each control-plane
kubelet which of them run (``static_pod_status()``), and the mirror pod's container is running
and ready, or exited, accordingly.
"""

from __future__ import annotations

import hashlib
from typing import Any

from kconsole.nodes.images import image_id
from kconsole.objects.meta import format_time
from kconsole.objects.pod import MIRROR_ANNOTATION

COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")
HASH_ANNOTATION = "kubernetes.io/config.hash"
SOURCE_ANNOTATION = "kubernetes.io/config.source"
SEEN_ANNOTATION = "kubernetes.io/config.seen"
KUBE_VERSION = "v1.32.0"
ETCD_VERSION = "3.5.16-0"

_COMMANDS: dict[str, list[str]] = {
    "etcd": ["etcd", "--data-dir=/var/lib/etcd", "--listen-client-urls=https://127.0.0.1:2379"],
    "kube-apiserver": ["kube-apiserver", "--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction"],
    "kube-controller-manager": ["kube-controller-manager", "--leader-elect=true", "--cluster-cidr=10.244.0.0/16"],
    "kube-scheduler": ["kube-scheduler", "--leader-elect=true"],
}
_REQUESTS = {"etcd": ("100m", "100Mi"), "kube-apiserver": ("250m", None), "kube-controller-manager": ("200m", None),
             "kube-scheduler": ("100m", None)}


def image_for(component: str) -> str:
    if component == "etcd":
        return f"registry.k8s.io/etcd:{ETCD_VERSION}"
    return f"registry.k8s.io/{component}:{KUBE_VERSION}"


def mirror_pod_name(component: str, node: str) -> str:
    return f"{component}-{node}"


def config_hash(component: str, node: str) -> str:
    return hashlib.sha256(f"{component}/{node}".encode()).hexdigest()[:32]


def mirror_pod(component: str, node: str, node_uid: str, seen: str) -> dict[str, Any]:
    """The mirror pod a control-plane kubelet creates for one of its static pods."""
    if component not in COMPONENTS:
        raise ValueError(f"static pods: unknown component {component!r} (known: {', '.join(COMPONENTS)})")
    digest = config_hash(component, node)
    cpu, memory = _REQUESTS[component]
    requests = {"cpu": cpu, **({"memory": memory} if memory else {})}
    meta: dict[str, Any] = {
        "name": mirror_pod_name(component, node),
        "namespace": "kube-system",
        "labels": {"component": component, "tier": "control-plane"},
        "annotations": {HASH_ANNOTATION: digest, MIRROR_ANNOTATION: digest, SEEN_ANNOTATION: seen,
                        SOURCE_ANNOTATION: "file"},
    }
    if node_uid:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Node", "name": node, "uid": node_uid,
                                    "controller": True}]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {
            "nodeName": node,
            "hostNetwork": True,
            "priorityClassName": "system-node-critical",
            "priority": 2000001000,
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "tolerations": [{"operator": "Exists", "effect": "NoExecute"}],
            "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [{
                "name": component,
                "image": image_for(component),
                "imagePullPolicy": "IfNotPresent",
                "command": _COMMANDS[component],
                "resources": {"requests": requests},
            }],
        },
    }


class MirrorPodWorker:
    """Reports a static pod through its mirror pod: running and ready while the component runs."""

    mirror = True

    def __init__(self, kubelet: Any, pod: dict[str, Any]) -> None:
        self.k = kubelet
        self.pod = pod
        meta = pod["metadata"]
        self.uid: str = meta.get("uid") or ""
        self.namespace: str = meta.get("namespace") or "kube-system"
        self.name: str = meta["name"]
        self.component: str = (meta.get("labels") or {}).get("component") or self.name.rsplit("-" + kubelet.name, 1)[0]
        container = ((pod.get("spec") or {}).get("containers") or [{}])[0]
        self.container_name: str = container.get("name") or self.component
        self.image: str = container.get("image") or image_for(self.component)
        self.ip = kubelet.node_ip
        self.start_time: float = kubelet.clock.now()
        self.up: bool | None = None
        self.since: float = self.start_time
        self.restart_count = 0
        self.last_state: dict[str, Any] | None = None
        self.down_at: float | None = None
        self.removed = False
        self.deleting = False
        self.terminating = False
        self.containers: list[Any] = []
        #: What the kubelet's usage loop reads and writes, as for any pod (kconsole.nodes.usage).
        self.usage_model: Any = None
        self.published_usage: tuple[int, int] | None = None
        self.cpu_load: float | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def consuming(self) -> bool:
        """Its component runs: it uses CPU and memory (the kubelet's usage loop publishes it)."""
        return bool(self.up)

    def update(self, pod: dict[str, Any]) -> None:
        self.pod = pod
        if (pod.get("metadata") or {}).get("deletionTimestamp") and not self.deleting:
            # Deleting a mirror pod does not stop the static pod: the kubelet deletes the object
            # at once and posts it again.
            self.deleting = True
            self.k.request_delete(self)

    def removed_from_api(self) -> None:
        self.removed = True

    def suspend(self) -> None:
        """Nothing to stop: the component keeps running without the kubelet."""

    def resume(self) -> None:
        self.sync()
        self.k.mark_dirty(self)

    def sync(self) -> None:
        up = bool(self.k.static_status().get(self.component, False))
        if up == self.up:
            return
        now = self.k.clock.now()
        if self.up is not None:
            if up:
                self.restart_count += 1
                self.last_state = self._terminated(self.since, self.down_at or now)
                self.since = now
            else:
                self.down_at = now
        self.up = up
        self.k.mark_dirty(self)

    def _container_id(self) -> str:
        return "containerd://" + hashlib.sha256(f"{self.uid}/{self.restart_count}".encode()).hexdigest()

    def _terminated(self, started: float, finished: float) -> dict[str, Any]:
        return {"exitCode": 137, "reason": "Error", "startedAt": format_time(started),
                "finishedAt": format_time(finished), "containerID": self._container_id()}

    def phase(self) -> str:
        return "Running"

    def build_status(self) -> dict[str, Any]:
        now = self.k.clock.now()
        current = self.pod.get("status") or {}
        found = {c.get("type"): c for c in current.get("conditions") or ()}
        up = bool(self.up)
        stamp = format_time(now)

        def cond(ctype: str, ok: bool) -> dict[str, Any]:
            value = "True" if ok else "False"
            old = found.get(ctype)
            out: dict[str, Any] = {"type": ctype, "status": value, "lastProbeTime": None,
                                   "lastTransitionTime": old.get("lastTransitionTime")
                                   if old and old.get("status") == value else stamp}
            if not ok:
                out["reason"] = "ContainersNotReady"
                out["message"] = f"containers with unready status: [{self.container_name}]"
            return out

        if up:
            state: dict[str, Any] = {"running": {"startedAt": format_time(self.since)}}
        else:
            state = {"terminated": self._terminated(self.since, self.down_at or now)}
        owned = [cond("PodReadyToStartContainers", True), cond("Initialized", True), cond("Ready", up),
                 cond("ContainersReady", up)]
        others = [c for c in current.get("conditions") or ()
                  if c.get("type") not in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady")]
        if "PodScheduled" not in found:
            others.insert(0, {"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                              "lastTransitionTime": format_time(self.start_time)})
        return {
            **{k: v for k, v in current.items() if k not in ("reason", "message")},
            "phase": "Running",
            "conditions": owned + others,
            "hostIP": self.k.node_ip, "hostIPs": [{"ip": self.k.node_ip}],
            "podIP": self.k.node_ip, "podIPs": [{"ip": self.k.node_ip}],
            "startTime": format_time(self.start_time),
            "containerStatuses": [{
                "name": self.container_name, "state": state,
                "lastState": {"terminated": self.last_state} if self.last_state else {},
                "ready": up, "restartCount": self.restart_count, "image": self.image,
                "imageID": image_id(self.image), "containerID": self._container_id(), "started": up,
            }],
        }
