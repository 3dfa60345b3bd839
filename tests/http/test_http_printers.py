"""kubectl get's columns for the kinds whose printers upstream registers beyond the workloads: what
``kubectl get ingress|pv|pvc|rc|controllerrevisions|leases`` prints against a real cluster."""

from __future__ import annotations

import pytest

from http_env import Cluster

pytestmark = [pytest.mark.kubectl, pytest.mark.asyncio(loop_scope="module")]

STORAGE = """
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-data}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteMany, ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: slow
  hostPath: {path: /data}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: claim}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 500Mi}}
  storageClassName: slow
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web}
spec:
  ingressClassName: nginx
  tls: [{hosts: [a.example.com]}]
  rules:
  - host: a.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
  - host: b.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
---
apiVersion: v1
kind: ReplicationController
metadata: {name: old}
spec:
  replicas: 2
  selector: {app: old}
  template:
    metadata: {labels: {app: old}}
    spec: {containers: [{name: c, image: nginx:1.27}]}
"""


def _table(out: str) -> list[list[str]]:
    return [line.split() for line in out.splitlines()]


async def test_storage_ingress_and_rc_columns(cluster: Cluster) -> None:
    await cluster.kubectl("apply", "-f", "-", stdin=STORAGE)
    pv = _table((await cluster.kubectl("get", "pv")).out)
    assert pv[0] == ["NAME", "CAPACITY", "ACCESS", "MODES", "RECLAIM", "POLICY", "STATUS", "CLAIM", "STORAGECLASS",
                     "VOLUMEATTRIBUTESCLASS", "REASON", "AGE"]
    assert pv[1][:4] == ["pv-data", "1Gi", "RWO,RWX", "Retain"] and pv[1][4:7] == ["Pending", "slow", "<unset>"]
    wide = _table((await cluster.kubectl("get", "pv", "-o", "wide")).out)
    assert wide[0][-1] == "VOLUMEMODE" and wide[1][-1] == "Filesystem"
    pvc = _table((await cluster.kubectl("get", "pvc")).out)
    assert pvc[0] == ["NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS", "MODES", "STORAGECLASS",
                      "VOLUMEATTRIBUTESCLASS", "AGE"]
    assert pvc[1][:4] == ["claim", "Pending", "slow", "<unset>"]
    claim = await cluster.admin("get", "persistentvolumeclaims", namespace="default", name="claim")
    claim["spec"]["volumeName"] = "pv-data"
    await cluster.admin("update", "persistentvolumeclaims", namespace="default", name="claim", body=claim)
    claim = await cluster.admin("get", "persistentvolumeclaims", namespace="default", name="claim")
    claim["status"] = {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}}
    await cluster.admin("update", "persistentvolumeclaims", namespace="default", name="claim",
                        subresource="status", body=claim)
    bound = _table((await cluster.kubectl("get", "pvc", "claim", "--no-headers")).out)
    assert bound[0][:6] == ["claim", "Bound", "pv-data", "1Gi", "RWO", "slow"]
    ing = _table((await cluster.kubectl("get", "ingress")).out)
    assert ing[0] == ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"]
    assert ing[1][:5] == ["web", "nginx", "a.example.com,b.example.com", "80,", "443"]
    rc = _table((await cluster.kubectl("get", "rc", "-o", "wide")).out)
    assert rc[0] == ["NAME", "DESIRED", "CURRENT", "READY", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"]
    assert rc[1][:4] == ["old", "2", "0", "0"] and rc[1][-3:] == ["c", "nginx:1.27", "app=old"]


async def test_controller_revisions_name_their_controller(cluster: Cluster) -> None:
    await cluster.admin("create", "controllerrevisions", namespace="default", body={
        "apiVersion": "apps/v1", "kind": "ControllerRevision", "revision": 3, "data": {},
        "metadata": {"name": "web-5d8f", "ownerReferences": [{
            "apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": "u-1", "controller": True}]}})
    out = _table((await cluster.kubectl("get", "controllerrevisions")).out)
    assert out[0] == ["NAME", "CONTROLLER", "REVISION", "AGE"]
    assert out[1][:3] == ["web-5d8f", "statefulset.apps/web", "3"]
    await cluster.admin("create", "leases", namespace="default", body={
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "free"}, "spec": {}})
    lease = _table((await cluster.kubectl("get", "lease", "free")).out)
    assert lease[1][:2] == ["free", "<unknown>"]
