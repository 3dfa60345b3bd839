"""A fresh cluster holds what a kubeadm cluster's API shows, read with the real kubectl: the
kubernetes Service's endpoints at each control plane's API server, their identity Leases, and
kube-root-ca.crt in every namespace, whose CA verifies the API server's certificate; and, as kind
and cloud clusters ship one, a default StorageClass whose claims get volumes."""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path
from urllib.parse import urlsplit

from test_cluster_identities import booted, kubectl

from kconsole.cluster import Cluster


def _handshake(url: str, ca_pem: str) -> str:
    """Connect to the API server trusting only ``ca_pem``; the verified peer's subject CN."""
    import socket

    parts = urlsplit(url)
    ctx = ssl.create_default_context(cadata=ca_pem)
    ctx.check_hostname = False  # the loopback address, not kubernetes.default.svc: the chain is what counts
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as raw, \
            ctx.wrap_socket(raw) as tls:
        subject = dict(item[0] for item in tls.getpeercert()["subject"])
    return str(subject.get("commonName", ""))


CLAIM = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "cache", "namespace": "default"},
         "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "2Gi"}}}}


async def _bound(cluster: Cluster, tmp_path: Path) -> bool:
    return await kubectl(cluster, tmp_path, "get", "pvc", "cache", "-o", "jsonpath={.status.phase}") == "Bound"


async def test_endpoints_identity_leases_and_the_root_ca_are_there_and_the_ca_verifies_the_server(
        tmp_path: Path) -> None:
    async with booted(tmp_path, nodes=0, control_planes=3) as (cluster, clock):
        await clock.run_until(lambda: any(m.is_leader for m in cluster.controller_managers), timeout=30, step=0.5)
        await clock.advance(2)
        endpoints = await kubectl(cluster, tmp_path, "get", "endpoints", "kubernetes", "-o",
                                  "jsonpath={.subsets[0].addresses[*].ip} {.subsets[0].ports[0].port}")
        assert endpoints == "172.18.0.2 172.18.0.3 172.18.0.4 6443"
        described = await kubectl(cluster, tmp_path, "describe", "service", "kubernetes")
        assert "172.18.0.2:6443,172.18.0.3:6443,172.18.0.4:6443" in described
        hosts = await kubectl(cluster, tmp_path, "get", "leases", "-n", "kube-system", "-l",
                              "apiserver.kubernetes.io/identity=kube-apiserver", "-o",
                              "jsonpath={.items[*].metadata.labels.kubernetes\\.io/hostname}")
        assert sorted(hosts.split()) == ["control-plane-0", "control-plane-1", "control-plane-2"]

        namespaces = (await kubectl(cluster, tmp_path, "get", "configmaps", "-A", "--field-selector",
                                    "metadata.name=kube-root-ca.crt", "-o",
                                    "jsonpath={.items[*].metadata.namespace}")).split()
        assert sorted(namespaces) == ["default", "kube-node-lease", "kube-public", "kube-system"]
        published = await kubectl(cluster, tmp_path, "get", "configmap", "kube-root-ca.crt", "-n", "kube-public",
                                  "-o", "jsonpath={.data.ca\\.crt}")
        assert published.startswith("-----BEGIN CERTIFICATE-----")
        assert cluster.server_url is not None
        common_name = await asyncio.to_thread(_handshake, cluster.server_url, published)
        assert common_name == "kube-apiserver"

        classes = await kubectl(cluster, tmp_path, "get", "storageclass")
        assert classes.splitlines()[1].split()[:5] == ["standard", "(default)", "disk.csi.kconsole.dev", "Delete",
                                                       "Immediate"]
        await cluster.api_client().create(CLAIM)
        await clock.run_until(lambda: _bound(cluster, tmp_path), timeout=20, step=0.5)
        pvs = await kubectl(cluster, tmp_path, "get", "pv", "--no-headers")
        assert pvs.split()[1:6] == ["2Gi", "RWO", "Delete", "Bound", "default/cache"]
