"""The console's ``d`` prints what the real kubectl 1.32 prints for ``kubectl describe``, line for line,
for the kinds it has kubectl's describers for and for a custom resource (kubectl's generic describer)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from http_env import Cluster

from kconsole.objects.describe import describe

pytestmark = [pytest.mark.kubectl, pytest.mark.asyncio(loop_scope="module")]

NODE = {"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "node-1", "labels": {"kubernetes.io/hostname": "node-1", "node-role.kubernetes.io/worker": ""}},
        "spec": {"podCIDR": "10.244.1.0/24", "podCIDRs": ["10.244.1.0/24"], "providerID": "kconsole://node-1",
                 "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}}
NODE_STATUS = {
    "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"}, "allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"},
    "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status",
                    "lastHeartbeatTime": "2026-01-01T00:00:00Z", "lastTransitionTime": "2026-01-01T00:00:00Z"}],
    "addresses": [{"type": "InternalIP", "address": "10.0.0.2"}, {"type": "Hostname", "address": "node-1"}],
    "nodeInfo": {"machineID": "m", "systemUUID": "s", "bootID": "b", "kernelVersion": "6.1", "osImage": "Debian",
                 "operatingSystem": "linux", "architecture": "amd64", "containerRuntimeVersion": "containerd://1.7",
                 "kubeletVersion": "v1.32.0", "kubeProxyVersion": "v1.32.0"}}
POD = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web", "tier": "front"},
                    "annotations": {"note": "hi"}},
       "spec": {"nodeName": "node-1", "nodeSelector": {"disk": "ssd"},
                "containers": [
                    {"name": "c", "image": "nginx:1.27", "ports": [{"containerPort": 80}, {"containerPort": 53, "protocol": "UDP", "hostPort": 5353}],
                     "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "200m"}},
                     "env": [{"name": "A", "value": "1"}], "args": ["-g", "daemon off;"],
                     "readinessProbe": {"httpGet": {"path": "/", "port": 80}},
                     "volumeMounts": [{"name": "data", "mountPath": "/data"}]},
                    {"name": "side", "image": "busybox", "command": ["sh", "-c", "sleep 1"]}],
                "volumes": [{"name": "data", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "cfg"}}]}}
POD_STATUS = {
    "phase": "Running", "hostIP": "10.0.0.2", "podIP": "10.244.1.5", "podIPs": [{"ip": "10.244.1.5"}],
    "startTime": "2026-01-01T00:00:00Z", "qosClass": "Burstable",
    "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"},
                   {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}],
    "containerStatuses": [
        {"name": "c", "ready": True, "restartCount": 2, "image": "nginx:1.27", "imageID": "docker.io/library/nginx@sha256:abc",
         "containerID": "containerd://123", "started": True, "state": {"running": {"startedAt": "2026-01-01T00:00:05Z"}},
         "lastState": {"terminated": {"exitCode": 137, "reason": "Error", "startedAt": "2026-01-01T00:00:01Z",
                                      "finishedAt": "2026-01-01T00:00:04Z"}}},
        {"name": "side", "ready": False, "restartCount": 0, "image": "busybox", "imageID": "", "started": False,
         "state": {"waiting": {"reason": "ContainerCreating"}}}]}
TEMPLATE = {"metadata": {"labels": {"app": "web"}, "annotations": {"a": "b"}},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}], "tolerations": [{"operator": "Exists"}]}}
WIDGETS = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "widgets.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}


async def _with_status(cluster: Cluster, resource: str, body: dict[str, Any], status: dict[str, Any],
                       namespace: str | None = None) -> dict[str, Any]:
    obj = await cluster.admin("create", resource, namespace=namespace, body=body)
    obj["status"] = status
    return await cluster.admin("update", resource, namespace=namespace, name=obj["metadata"]["name"],
                               subresource="status", body=obj)


def _event(obj: dict[str, Any], name: str, reason: str, kind: str, count: int, first: str, last: str) -> dict[str, Any]:
    meta = obj["metadata"]
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "namespace": meta.get("namespace", "default")},
            "involvedObject": {"kind": obj["kind"], "namespace": meta.get("namespace", ""), "name": meta["name"],
                               "uid": meta["uid"], "apiVersion": obj["apiVersion"]},
            "reason": reason, "message": f"{reason} happened", "type": kind, "count": count,
            "source": {"component": "kubelet", "host": "node-1"}, "firstTimestamp": first, "lastTimestamp": last}


async def test_describe_prints_what_kubectl_describe_prints(cluster: Cluster) -> None:
    await cluster.admin("create", "customresourcedefinitions", body=WIDGETS)
    widget = None
    for _ in range(500):  # the CRD's kind is served once it is Established
        if cluster.api.registry.get("example.com", "widgets") is not None:
            widget = await cluster.admin("create", "widgets", namespace="default", body={
                "apiVersion": "example.com/v1", "kind": "Widget",
                "metadata": {"name": "w1", "namespace": "default", "labels": {"x": "y"}},
                "spec": {"sizeGb": 3, "enabled": True, "ports": [{"name": "a", "port": 1}], "tags": ["a", "b"]}})
            break
        await cluster.clock.advance(0.01)
        await asyncio.sleep(0.001)  # the store's commit runs off the loop
    crd = await cluster.admin("get", "customresourcedefinitions", name="widgets.example.com")
    assert widget is not None, f"widgets.example.com was never served: {crd}"

    node = await _with_status(cluster, "nodes", NODE, NODE_STATUS)
    lease = await cluster.admin("create", "leases", namespace="kube-node-lease", body={
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "node-1", "namespace": "kube-node-lease"},
        "spec": {"holderIdentity": "node-1", "renewTime": "2026-01-01T00:00:00.000000Z", "leaseDurationSeconds": 40}})
    pod = await _with_status(cluster, "pods", POD, POD_STATUS, "default")
    events = [_event(pod, "web.1", "BackOff", "Warning", 4, "2026-01-01T00:00:00Z", "2026-01-01T00:05:00Z"),
              _event(pod, "web.2", "Scheduled", "Normal", 1, "2025-12-31T23:00:00Z", "2025-12-31T23:00:00Z")]
    for ev in events:
        await cluster.admin("create", "events", namespace="default", body=ev)
    deployment = await cluster.admin("create", "deployments", namespace="default", body={
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE}})
    replicaset = await cluster.admin("create", "replicasets", namespace="default", body={
        "apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web-1", "namespace": "default", "labels": {"app": "web"}},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE}})
    service = await cluster.admin("create", "services", namespace="default", body={
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]}})
    namespace = await cluster.admin("get", "namespaces", name="default")
    cases = [
        (["node", "node-1"], node, [], {"pods": [pod], "lease": lease}),
        (["pod", "web"], pod, events, {}),
        (["deployment", "web"], deployment, [], {}),
        (["replicaset", "web-1"], replicaset, [], {"pods": []}),
        (["service", "web"], service, [], {}),
        (["namespace", "default"], namespace, [], {}),
        (["widget", "w1"], widget, [], {}),
    ]
    for args, obj, evs, related in cases:
        before = time.time()
        printed = (await cluster.kubectl("describe", *args)).out
        # Ages are kubectl's wall-clock ages: one of the two instants around its run gives the same text.
        ours = {describe(obj, evs, now, related) for now in (before, time.time())}
        assert printed in ours, f"kubectl describe {' '.join(args)}:\n{printed}\nours:\n{ours.pop()}"
    text = describe(pod, events, time.time())
    assert "managedFields" not in text and "Managed Fields" not in describe(widget, [], 0.0)
    assert text.rstrip().splitlines()[-1].startswith("  Warning  BackOff")
