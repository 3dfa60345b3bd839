"""On a whole cluster: an approved CertificateSigningRequest is signed by the cluster CA, as
kube-controller-manager's signer does, and the certificate is a kubeconfig identity the real kubectl
uses; a RuntimeClass's overhead counts when the scheduler fits the Pod."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kconsole.cluster import Cluster, ClusterConfig
from kconsole.clock import VirtualClock


async def kubectl(cluster: Cluster, home: Path, *args: str, kubeconfig: Path | None = None,
                  stdin: str | None = None) -> str:
    binary = shutil.which("kubectl")
    if binary is None:
        pytest.fail("kubectl is not on PATH: these tests drive the real kubectl 1.32")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home),
           "KUBECONFIG": str(kubeconfig or cluster.kubeconfig_path), "KUBECACHEDIR": str(home / "kube-cache")}
    proc = await asyncio.create_subprocess_exec(
        binary, *args, stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env)
    out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin is not None else None), 30)
    assert proc.returncode == 0, err.decode()
    return out.decode()


@contextlib.asynccontextmanager
async def booted(tmp_path: Path) -> AsyncIterator[tuple[Cluster, VirtualClock]]:
    clock = VirtualClock()
    cluster = Cluster(ClusterConfig(data_dir=tmp_path / "data", manifests=None, nodes=1, control_planes=1, port=0),
                      clock=clock)
    task = asyncio.create_task(cluster.start())
    await clock.run_until(task.done, timeout=60, step=0.1)
    task.result()
    try:
        await clock.run_until(lambda: any(m.is_leader for m in cluster.controller_managers)
                              and any(s.is_leader for s in cluster.schedulers), timeout=30, step=0.5)
        yield cluster, clock
    finally:
        task = asyncio.create_task(cluster.stop())
        await clock.run_until(task.done, timeout=60, step=0.1)


async def test_an_approved_request_is_signed_and_works_as_a_kubeconfig_identity(tmp_path: Path) -> None:
    async with booted(tmp_path) as (cluster, clock):
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "jane"),
                             x509.NameAttribute(NameOID.ORGANIZATION_NAME, "dev")])
        request = x509.CertificateSigningRequestBuilder().subject_name(subject).sign(key, hashes.SHA256())
        encoded = base64.b64encode(request.public_bytes(serialization.Encoding.PEM)).decode()
        manifest = (f"apiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\nmetadata: {{name: jane}}\n"
                    f"spec:\n  request: {encoded}\n  signerName: kubernetes.io/kube-apiserver-client\n"
                    f"  usages: [client auth]\n")
        await kubectl(cluster, tmp_path, "create", "-f", "-", stdin=manifest)
        await kubectl(cluster, tmp_path, "certificate", "approve", "jane")
        admin = cluster.api_client()

        async def issued() -> bool:
            csr = await admin.get("certificatesigningrequests.certificates.k8s.io", "jane")
            return bool((csr.get("status") or {}).get("certificate"))

        await clock.run_until(issued, timeout=30, step=0.5)
        row = (await kubectl(cluster, tmp_path, "get", "csr", "jane", "--no-headers")).split()
        assert row[-1] == "Approved,Issued"
        pem = base64.b64decode((await admin.get("certificatesigningrequests.certificates.k8s.io",
                                                "jane"))["status"]["certificate"])
        cert = x509.load_pem_x509_certificate(pem)
        ca = x509.load_pem_x509_certificate((cluster.data_dir / "ca.crt").read_bytes())
        assert cert.issuer == ca.subject and cert.subject == subject

        config = yaml.safe_load(cluster.kubeconfig_path.read_text())
        config["users"] = [{"name": "jane", "user": {
            "client-certificate-data": base64.b64encode(pem).decode(),
            "client-key-data": base64.b64encode(key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption())).decode()}}]
        for context in config["contexts"]:
            context["context"]["user"] = "jane"
        jane = tmp_path / "jane.kubeconfig"
        jane.write_text(yaml.safe_dump(config))
        whoami = await kubectl(cluster, tmp_path, "auth", "whoami", kubeconfig=jane)
        assert "jane" in whoami and "dev" in whoami


async def test_runtimeclass_overhead_counts_when_scheduling(tmp_path: Path) -> None:
    async with booted(tmp_path) as (cluster, clock):
        admin = cluster.api_client()
        await admin.create({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "heavy"},
                            "handler": "runsc", "overhead": {"podFixed": {"cpu": "500"}}})
        await clock.run_until(lambda: cluster.api.get_object("runtimeclasses.node.k8s.io", None, "heavy") is not None,
                              timeout=10, step=0.1)  # admission reads the cache, as upstream's lister
        await admin.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "boxed", "namespace": "default"},
                            "spec": {"runtimeClassName": "heavy",
                                     "containers": [{"name": "c", "image": "nginx",
                                                     "resources": {"requests": {"cpu": "10m"}}}]}})

        async def refused() -> bool:
            events = await admin.list_all("events", "default")
            return any(e.get("reason") == "FailedScheduling" and "Insufficient cpu" in e.get("message", "")
                       for e in events)

        await clock.run_until(refused, timeout=60, step=0.5)
        pod = await admin.get("pods", "boxed", "default")
        assert pod["spec"]["overhead"] == {"cpu": "500"} and not pod["spec"].get("nodeName")
