"""The API groups a 1.32 cluster serves besides the workload ones: events.k8s.io/v1 (the same Events
as core), node.k8s.io/v1 RuntimeClasses and their admission, certificates.k8s.io/v1 requests with
approval and denial, flowcontrol.apiserver.k8s.io/v1 defaults; through the real kubectl and the
official Python client."""

from __future__ import annotations

import asyncio
import base64

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from kubernetes import client, config

from http_env import Cluster
from kconsole.api.types import Credentials, Request, Response, UserInfo

pytestmark = pytest.mark.asyncio(loop_scope="module")


def _api(cluster: Cluster) -> client.ApiClient:
    cfg = client.Configuration()
    config.load_kube_config(config_file=str(cluster.kubeconfig), client_configuration=cfg)
    return client.ApiClient(cfg)


async def test_discovery_lists_the_groups(cluster: Cluster) -> None:
    out = (await cluster.kubectl("api-resources", "--no-headers")).out
    for line in ("events.k8s.io/v1", "node.k8s.io/v1", "certificates.k8s.io/v1", "flowcontrol.apiserver.k8s.io/v1"):
        assert line in out, line
    wide = (await cluster.kubectl("api-resources", "--no-headers", "-o", "wide")).out
    namespaces = next(line for line in wide.splitlines() if line.startswith("namespaces "))
    assert " create,delete,get,list,patch,update,watch " in namespaces  # upstream offers no deletecollection
    versions = (await cluster.kubectl("get", "apiservices", "-o", "name")).out.split()
    assert {"apiservice.apiregistration.k8s.io/v1.events.k8s.io", "apiservice.apiregistration.k8s.io/v1.node.k8s.io",
            "apiservice.apiregistration.k8s.io/v1.certificates.k8s.io",
            "apiservice.apiregistration.k8s.io/v1.flowcontrol.apiserver.k8s.io"} <= set(versions)


async def test_events_are_served_in_both_groups(cluster: Cluster) -> None:
    await cluster.admin("create", "events", namespace="default", body={
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": "web.1", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "web", "apiVersion": "v1"},
        "reason": "Pulled", "message": "Pulled the image", "type": "Normal", "count": 2,
        "source": {"component": "kubelet", "host": "node-1"},
        "firstTimestamp": "2024-01-01T00:00:00Z", "lastTimestamp": "2024-01-01T00:00:05Z"})
    v1 = (await cluster.kubectl("get", "events.v1.events.k8s.io", "web.1", "-o", "json")).json()
    assert v1["apiVersion"] == "events.k8s.io/v1"
    assert v1["regarding"]["name"] == "web" and v1["note"] == "Pulled the image"
    assert v1["deprecatedCount"] == 2 and v1["deprecatedSource"] == {"component": "kubelet", "host": "node-1"}
    assert "involvedObject" not in v1 and "message" not in v1

    listed = (await cluster.kubectl("get", "--raw", "/apis/events.k8s.io/v1/namespaces/default/events"
                                    "?fieldSelector=regarding.name%3Dweb")).json()
    assert listed["kind"] == "EventList" and listed["apiVersion"] == "events.k8s.io/v1"
    assert [e["metadata"]["name"] for e in listed["items"]] == ["web.1"]
    assert listed["items"][0]["eventTime"] is None  # an Event written through core has none, as upstream
    events = client.EventsV1Api(_api(cluster))
    created = await asyncio.to_thread(events.create_namespaced_event, "default", client.EventsV1Event(
        metadata=client.V1ObjectMeta(name="web.2"), event_time="2024-01-01T00:00:06.000000Z",
        regarding=client.V1ObjectReference(api_version="v1", kind="Pod", name="web", namespace="default"),
        reason="Started", note="Started container", type="Normal", action="Start",
        reporting_controller="example.com/agent", reporting_instance="agent-1"))
    assert created.note == "Started container"
    core = await cluster.admin("get", "events", namespace="default", name="web.2")
    assert core["message"] == "Started container" and core["involvedObject"]["name"] == "web"
    assert core["reportingComponent"] == "example.com/agent"
    out = (await cluster.kubectl("events", "--for", "pod/web")).out
    assert "Started container" in out and "Pulled the image" in out


RUNTIME_CLASS = """apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: gvisor}
handler: runsc
overhead: {podFixed: {cpu: 250m, memory: 120Mi}}
scheduling:
  nodeSelector: {sandbox: "true"}
  tolerations: [{key: sandbox, operator: Exists, effect: NoSchedule}]
"""


async def test_runtimeclass_admission_sets_overhead_and_scheduling(cluster: Cluster) -> None:
    await cluster.kubectl("apply", "-f", "-", stdin=RUNTIME_CLASS)
    assert "gvisor   runsc" in (await cluster.kubectl("get", "runtimeclass")).out
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "sandboxed"},
           "spec": {"runtimeClassName": "gvisor", "containers": [{"name": "c", "image": "nginx"}]}}
    created = await cluster.admin("create", "pods", namespace="default", body=pod)
    assert created["spec"]["overhead"] == {"cpu": "250m", "memory": "120Mi"}
    assert created["spec"]["nodeSelector"] == {"sandbox": "true"}
    assert {"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"} in created["spec"]["tolerations"]

    missing = await cluster.kubectl("run", "nope", "--image=nginx", "--overrides",
                                    '{"spec": {"runtimeClassName": "kata"}}', check=False)
    assert 'pods "nope" is forbidden: pod rejected: RuntimeClass "kata" not found' in missing.err
    mismatch = await cluster.kubectl("run", "heavy", "--image=nginx", "--overrides",
                                     '{"spec": {"runtimeClassName": "gvisor", "overhead": {"cpu": "1"}}}',
                                     check=False)
    assert ("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead") in mismatch.err
    conflict = await cluster.kubectl("run", "elsewhere", "--image=nginx", "--overrides",
                                     '{"spec": {"runtimeClassName": "gvisor", "nodeSelector": {"sandbox": "no"}}}',
                                     check=False)
    assert ("conflict: runtimeClass.scheduling.nodeSelector[sandbox] = true; pod.spec.nodeSelector[sandbox] = no"
            in conflict.err)


def _csr_pem(user: str, groups: tuple[str, ...] = ()) -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, user)]
                        + [x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in groups])
    csr = x509.CertificateSigningRequestBuilder().subject_name(subject).sign(key, hashes.SHA256())
    return base64.b64encode(csr.public_bytes(serialization.Encoding.PEM)).decode()


def _csr_manifest(name: str, request: str, usages: str = "[client auth]") -> str:
    return (f"apiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\nmetadata: {{name: {name}}}\n"
            f"spec:\n  request: {request}\n  signerName: kubernetes.io/kube-apiserver-client\n"
            f"  expirationSeconds: 86400\n  usages: {usages}\n")


async def test_csr_approve_deny_and_validation(cluster: Cluster) -> None:
    await cluster.kubectl("create", "-f", "-", stdin=_csr_manifest("jane", _csr_pem("jane", ("dev",))))
    listed = (await cluster.kubectl("get", "csr", "jane")).out.splitlines()
    assert listed[0].split() == ["NAME", "AGE", "SIGNERNAME", "REQUESTOR", "REQUESTEDDURATION", "CONDITION"]
    assert listed[1].split()[2:] == ["kubernetes.io/kube-apiserver-client", "admin", "24h", "Pending"]
    approved = await cluster.kubectl("certificate", "approve", "jane")
    assert "certificatesigningrequest.certificates.k8s.io/jane approved" in approved.out
    csr = (await cluster.kubectl("get", "csr", "jane", "-o", "json")).json()
    [cond] = csr["status"]["conditions"]
    assert (cond["type"], cond["status"], cond["reason"]) == ("Approved", "True", "KubectlApprove")
    assert cond["lastUpdateTime"] and csr["spec"]["username"] == "admin"
    both = {**csr, "status": {"conditions": [cond, {"type": "Denied", "status": "True", "reason": "Late"}]}}
    token = cluster.api.tokens.issue(UserInfo("admin", ("system:masters",)))
    denied = await cluster.api.handle(Request("update", "certificatesigningrequests", group="certificates.k8s.io",
                                              name="jane", subresource="approval", body=both,
                                              credentials=Credentials(token=token)))
    assert isinstance(denied, Response) and denied.code == 422
    assert denied.body["message"] == ('CertificateSigningRequest.certificates.k8s.io "jane" is invalid: '
                                      'status.conditions[1].type: Invalid value: "Denied": Approved and Denied '
                                      'conditions are mutually exclusive')

    await cluster.kubectl("create", "-f", "-", stdin=_csr_manifest("joe", _csr_pem("joe")))
    await cluster.kubectl("certificate", "deny", "joe")
    assert (await cluster.kubectl("get", "csr", "joe", "--no-headers")).out.split()[-1] == "Denied"

    bad = await cluster.kubectl("create", "-f", "-", stdin=_csr_manifest("bad", "aGVsbG8=", "[]"), check=False)
    assert 'The CertificateSigningRequest "bad" is invalid' in bad.err
    assert "spec.request: Invalid value: []byte{0x68, 0x65, 0x6c, 0x6c, 0x6f}: PEM block type must be " \
           "CERTIFICATE REQUEST" in bad.err
    assert "spec.usages: Required value: usages must be provided" in bad.err


async def test_flowcontrol_defaults_are_served(cluster: Cluster) -> None:
    out = (await cluster.kubectl("get", "flowschemas")).out.splitlines()
    assert out[0].split() == ["NAME", "PRIORITYLEVEL", "MATCHINGPRECEDENCE", "DISTINGUISHERMETHOD", "AGE",
                              "MISSINGPL"]
    rows = {line.split()[0]: line.split() for line in out[1:]}
    assert rows["exempt"][1:4] == ["exempt", "1", "<none>"] and rows["exempt"][-1] == "False"
    assert rows["catch-all"][1:4] == ["catch-all", "10000", "ByUser"]
    levels = (await cluster.kubectl("get", "prioritylevelconfigurations")).out.splitlines()
    level_rows = {line.split()[0]: line.split() for line in levels[1:]}
    assert level_rows["workload-low"][1:6] == ["Limited", "100", "128", "6", "50"]
    assert level_rows["exempt"][1:6] == ["Exempt", "0", "<none>", "<none>", "<none>"]
    flow = client.FlowcontrolApiserverV1Api(_api(cluster))
    schemas = await asyncio.to_thread(flow.list_flow_schema)
    assert len(schemas.items) == 13
