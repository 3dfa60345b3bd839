"""Admission webhooks called over real HTTPS: a server on loopback with a certificate generated here
answers AdmissionReview v1 (mutating with JSON patches, validating), with failure policies, a
timeout, selectors, matchConditions and reinvocation, driven by the real kubectl."""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import ipaddress
import json
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from http_env import Cluster

pytestmark = pytest.mark.asyncio(loop_scope="module")
#: The name a webhook reached through ``clientConfig.service`` {name: hooks, namespace: webhooks} is verified as.
SERVICE_NAME = "hooks.webhooks.svc"


def _certificates(folder: Path) -> tuple[str, ssl.SSLContext]:
    """(the CA bundle, base64, for caBundle; the server's TLS context for 127.0.0.1)."""
    now = dt.datetime.now(dt.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "webhook-ca")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(1).not_valid_before(now - dt.timedelta(hours=1)).not_valid_after(now + dt.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "webhook")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(2)
            .not_valid_before(now - dt.timedelta(hours=1)).not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                                                        x509.DNSName(SERVICE_NAME)]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    (folder / "tls.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (folder / "tls.key").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                       serialization.NoEncryption()))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(folder / "tls.crt", folder / "tls.key")
    return base64.b64encode(ca.public_bytes(serialization.Encoding.PEM)).decode(), context


class Webhook:
    """The user's webhook server: what it was asked, and its answers by path."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.hosts: list[str] = []
        #: A write to make while answering the next /race call (a conflicting write mid-admission).
        self.race: Callable[[], Awaitable[Any]] | None = None
        self.url = ""
        self.port = 0
        self.ca = ""

    def _answer(self, request: dict[str, Any], allowed: bool = True, patch: list[Any] | None = None,
                status: dict[str, Any] | None = None, warnings: list[str] | None = None) -> web.Response:
        response: dict[str, Any] = {"uid": request["uid"], "allowed": allowed}
        if patch is not None:
            response["patchType"] = "JSONPatch"
            response["patch"] = base64.b64encode(json.dumps(patch).encode()).decode()
        if status is not None:
            response["status"] = status
        if warnings:
            response["warnings"] = warnings
        return web.json_response({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                                  "response": response})

    async def handle(self, http: web.Request) -> web.Response:
        review = await http.json()
        request = review["request"]
        self.calls.append((http.path, request))
        self.hosts.append(http.host)
        if http.path == "/patch-anything":  # a patch whatever the operation (DELETE included)
            return self._answer(request, patch=[{"op": "add", "path": "/metadata/annotations", "value": {}}])
        if http.path == "/race":
            race, self.race = self.race, None
            if race is not None:
                await race()
            return self._answer(request)
        if http.path == "/allow":
            return self._answer(request, warnings=[f"seen {request['operation']}"])
        obj = request["object"] or {}
        labels = (obj.get("metadata") or {}).get("labels") or {}
        if http.path == "/mutate":
            ops: list[Any] = [] if "labels" in obj["metadata"] else [
                {"op": "add", "path": "/metadata/labels", "value": {}}]
            ops.append({"op": "add", "path": "/metadata/labels/mutated", "value": "yes"})
            return self._answer(request, patch=ops, warnings=["mutated by the test webhook"])
        if http.path == "/count":  # IfNeeded: reinvoked once the later webhook changed the object
            seen = str(len(labels))
            ops = [] if "labels" in obj["metadata"] else [{"op": "add", "path": "/metadata/labels", "value": {}}]
            ops.append({"op": "add", "path": "/metadata/labels/counted", "value": seen})
            return self._answer(request, patch=ops)
        if http.path == "/validate":
            if labels.get("deny") == "true":
                return self._answer(request, allowed=False, status={"code": 403, "message": "no deny labels"})
            return self._answer(request)
        if http.path == "/guard":  # DELETE: object is null, oldObject the object going away
            old = request["oldObject"] or {}
            if request["object"] is None and ((old.get("metadata") or {}).get("labels") or {}).get("guard") == "on":
                return self._answer(request, allowed=False, status={"message": "guarded", "reason": "Forbidden"})
            return self._answer(request)
        if http.path == "/slow":
            await asyncio.sleep(3)
            return self._answer(request)
        return web.Response(status=404)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def webhook(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Webhook]:
    hook = Webhook()
    hook.ca, context = _certificates(tmp_path_factory.mktemp("webhook"))
    app = web.Application()
    app.router.add_post("/{path}", hook.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
    await site.start()
    port = hook.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    hook.url = f"https://127.0.0.1:{port}"
    yield hook
    await runner.cleanup()


def _config(kind: str, name: str, url: str, ca: str, resources: str = "[configmaps]", extra: str = "") -> str:
    return (f"apiVersion: admissionregistration.k8s.io/v1\nkind: {kind}\nmetadata: {{name: {name}}}\nwebhooks:\n"
            f"- name: {name}\n  clientConfig: {{url: \"{url}\", caBundle: {ca}}}\n"
            f"  rules: [{{apiGroups: [\"\"], apiVersions: [v1], operations: [CREATE, UPDATE], resources: {resources}}}]\n"
            f"  sideEffects: None\n  admissionReviewVersions: [v1]\n{extra}")


async def _settle(cluster: Cluster) -> None:
    await cluster.clock.advance(0.5)


async def test_mutating_then_validating_webhooks(cluster: Cluster, webhook: Webhook) -> None:
    await cluster.kubectl("create", "namespace", "hooked")
    await cluster.kubectl("label", "namespace", "hooked", "webhooks=on")
    selector = "  namespaceSelector: {matchLabels: {webhooks: \"on\"}}\n"
    await cluster.kubectl("apply", "-f", "-", stdin=_config(
        "MutatingWebhookConfiguration", "mutate.example.com", f"{webhook.url}/mutate", webhook.ca, extra=selector))
    await cluster.kubectl("apply", "-f", "-", stdin=_config(
        "ValidatingWebhookConfiguration", "validate.example.com", f"{webhook.url}/validate", webhook.ca,
        extra=selector))
    await _settle(cluster)
    created = await cluster.kubectl("create", "configmap", "one", "-n", "hooked", "--from-literal=a=1")
    assert "Warning: mutated by the test webhook" in created.err
    stored = (await cluster.kubectl("get", "configmap", "one", "-n", "hooked", "-o", "json")).json()
    assert stored["metadata"]["labels"] == {"mutated": "yes"}
    paths = [p for p, _ in webhook.calls]
    assert paths[-2:] == ["/mutate", "/validate"]
    validated = webhook.calls[-1][1]
    assert validated["object"]["metadata"]["labels"] == {"mutated": "yes"}  # validating sees the mutation
    assert validated["operation"] == "CREATE" and validated["userInfo"]["username"] == "admin"
    assert validated["kind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}

    refused = await cluster.kubectl("create", "configmap", "two", "-n", "hooked", "--from-literal=a=1", "-o",
                                    "name", "--dry-run=server", check=False)
    assert refused.code == 0  # sideEffects None: called on a dry run too
    await cluster.kubectl("label", "configmap", "one", "-n", "hooked", "extra=1")
    denied = await cluster.kubectl("label", "configmap", "one", "-n", "hooked", "deny=true", check=False)
    assert ('admission webhook "validate.example.com" denied the request: no deny labels') in denied.err
    assert webhook.calls[-1][1]["operation"] == "UPDATE" and webhook.calls[-1][1]["oldObject"] is not None

    before = len(webhook.calls)
    await cluster.kubectl("create", "configmap", "elsewhere", "--from-literal=a=1")  # default: not selected
    assert len(webhook.calls) == before
    record = [r for r in cluster.api.audit.recent(50) if r.name == "one" and r.verb == "create"][-1]
    assert "mutating webhook mutate.example.com" in record.message and "validating webhook validate.example.com" \
        in record.message
    await cluster.kubectl("delete", "mutatingwebhookconfiguration", "mutate.example.com")
    await cluster.kubectl("delete", "validatingwebhookconfiguration", "validate.example.com")


async def test_a_validating_webhook_on_delete(cluster: Cluster, webhook: Webhook) -> None:
    config = _config("ValidatingWebhookConfiguration", "guard.example.com", f"{webhook.url}/guard", webhook.ca)
    await cluster.kubectl("apply", "-f", "-", stdin=config.replace("operations: [CREATE, UPDATE]",
                                                                   "operations: [DELETE]"))
    await cluster.kubectl("create", "configmap", "guarded")
    await cluster.kubectl("label", "configmap", "guarded", "guard=on")
    await _settle(cluster)
    refused = await cluster.kubectl("delete", "configmap", "guarded", check=False)
    assert 'admission webhook "guard.example.com" denied the request: guarded' in refused.err
    assert webhook.calls[-1][1]["operation"] == "DELETE" and webhook.calls[-1][1]["oldObject"]["metadata"][
        "name"] == "guarded"
    await cluster.kubectl("label", "configmap", "guarded", "guard-")
    await cluster.kubectl("delete", "configmap", "guarded")
    await cluster.kubectl("delete", "validatingwebhookconfiguration", "guard.example.com")


async def test_failure_policy_and_timeout(cluster: Cluster, webhook: Webhook) -> None:
    await cluster.kubectl("create", "namespace", "failing")
    await cluster.kubectl("label", "namespace", "failing", "webhooks=fail")
    selector = "  namespaceSelector: {matchLabels: {webhooks: fail}}\n"
    closed = "https://127.0.0.1:1/validate"
    await cluster.kubectl("apply", "-f", "-", stdin=_config(
        "ValidatingWebhookConfiguration", "down.example.com", closed, webhook.ca, extra=selector))
    await _settle(cluster)
    failed = await cluster.kubectl("create", "configmap", "x", "-n", "failing", check=False)
    assert ('Internal error occurred: failed calling webhook "down.example.com": failed to call webhook: Post '
            '"https://127.0.0.1:1/validate?timeout=10s": dial tcp 127.0.0.1:1: connect: connection refused') \
        in failed.err
    await cluster.kubectl("apply", "-f", "-", stdin=_config(
        "ValidatingWebhookConfiguration", "down.example.com", closed, webhook.ca,
        extra=selector + "  failurePolicy: Ignore\n"))
    await _settle(cluster)
    await cluster.kubectl("create", "configmap", "x", "-n", "failing")

    await cluster.kubectl("apply", "-f", "-", stdin=_config(
        "ValidatingWebhookConfiguration", "down.example.com", f"{webhook.url}/slow", webhook.ca,
        extra=selector + "  timeoutSeconds: 1\n"))
    await _settle(cluster)
    slow = await cluster.kubectl("create", "configmap", "y", "-n", "failing", check=False)
    assert (f'failed calling webhook "down.example.com": failed to call webhook: Post "{webhook.url}/slow?timeout=1s": '
            'context deadline exceeded') in slow.err
    await cluster.kubectl("delete", "validatingwebhookconfiguration", "down.example.com")


async def test_object_selector_match_conditions_and_reinvocation(cluster: Cluster, webhook: Webhook) -> None:
    await cluster.kubectl("create", "namespace", "reinvoked")
    conditions = ("  objectSelector: {matchLabels: {hook: me}}\n"
                  "  matchConditions:\n  - name: not-skipped\n    expression: \"!('skip' in object.data)\"\n")
    await cluster.kubectl("apply", "-f", "-", stdin=_config(
        "MutatingWebhookConfiguration", "a-count.example.com", f"{webhook.url}/count", webhook.ca,
        extra=conditions + "  reinvocationPolicy: IfNeeded\n"))
    await cluster.kubectl("apply", "-f", "-", stdin=_config(
        "MutatingWebhookConfiguration", "b-mutate.example.com", f"{webhook.url}/mutate", webhook.ca, extra=conditions))
    await _settle(cluster)
    manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: reinvoked\n  labels: {{hook: me}}\n" \
               "data: {{{data}}}\n"
    before = len(webhook.calls)
    await cluster.kubectl("create", "-f", "-", stdin=manifest.format(name="counted", data="a: '1'"))
    assert [p for p, _ in webhook.calls[before:]] == ["/count", "/mutate", "/count"]
    stored = (await cluster.kubectl("get", "configmap", "counted", "-n", "reinvoked", "-o", "json")).json()
    # counted once with {hook}, then again after b-mutate added "mutated": three labels seen
    assert stored["metadata"]["labels"] == {"hook": "me", "counted": "3", "mutated": "yes"}

    before = len(webhook.calls)
    await cluster.kubectl("create", "-f", "-", stdin=manifest.format(name="skipped", data="skip: '1'"))
    await cluster.kubectl("create", "configmap", "unlabelled", "-n", "reinvoked")
    assert len(webhook.calls) == before
    bad = _config("MutatingWebhookConfiguration", "bad", "http://127.0.0.1/x", webhook.ca,
                  extra="  timeoutSeconds: 31\n")
    refused = await cluster.kubectl("apply", "-f", "-", stdin=bad, check=False)
    assert "webhooks[0].name: Invalid value: \"bad\": should be a domain with at least three segments separated by " \
           "dots" in refused.err
    assert "webhooks[0].clientConfig.url: Invalid value: \"http://127.0.0.1/x\": 'https' is the only allowed URL " \
           "scheme" in refused.err
    assert "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds" \
        in refused.err


def _service_config(kind: str, name: str, service: str, path: str, ca: str, extra: str = "") -> str:
    return _config(kind, name, "", ca, extra=extra).replace(
        'clientConfig: {url: "", caBundle: ',
        f"clientConfig: {{service: {{namespace: webhooks, name: {service}, path: {path}}}, caBundle: ")


async def test_a_webhook_reached_through_its_service(cluster: Cluster, webhook: Webhook) -> None:
    """A selector-less Service whose EndpointSlice points at the server on 127.0.0.1 is dialled there,
    with TLS verified as hooks.webhooks.svc; a missing Service and one whose endpoints are simulated
    Pods fail with upstream's dial errors, and failurePolicy decides."""
    await cluster.kubectl("create", "namespace", "webhooks")
    await cluster.kubectl("create", "namespace", "served")
    await cluster.kubectl("label", "namespace", "served", "webhooks=service")
    await cluster.kubectl("apply", "-f", "-", stdin=(
        "apiVersion: v1\nkind: Service\nmetadata: {name: hooks, namespace: webhooks}\n"
        "spec: {ports: [{name: https, port: 443, targetPort: 8443}]}\n---\n"
        "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: hooks-1\n  namespace: webhooks\n"
        "  labels: {kubernetes.io/service-name: hooks}\naddressType: IPv4\n"
        f"ports: [{{name: https, port: {webhook.port}, protocol: TCP}}]\n"
        "endpoints: [{addresses: [127.0.0.1], conditions: {ready: true}}]\n"))
    selector = "  namespaceSelector: {matchLabels: {webhooks: service}}\n"
    await cluster.kubectl("apply", "-f", "-", stdin=_service_config(
        "MutatingWebhookConfiguration", "svc-mutate.example.com", "hooks", "/mutate", webhook.ca, extra=selector))
    await _settle(cluster)
    await cluster.kubectl("create", "configmap", "one", "-n", "served")
    stored = (await cluster.kubectl("get", "configmap", "one", "-n", "served", "-o", "json")).json()
    assert stored["metadata"]["labels"] == {"mutated": "yes"}
    assert webhook.calls[-1][0] == "/mutate" and webhook.hosts[-1] == f"{SERVICE_NAME}:443"

    await cluster.kubectl("apply", "-f", "-", stdin=_service_config(
        "ValidatingWebhookConfiguration", "svc-missing.example.com", "missing", "/validate", webhook.ca,
        extra=selector))
    await _settle(cluster)
    missing = await cluster.kubectl("create", "configmap", "two", "-n", "served", check=False)
    assert ('Internal error occurred: failed calling webhook "svc-missing.example.com": failed to call webhook: '
            'Post "https://missing.webhooks.svc:443/validate?timeout=10s": service "missing" not found') in missing.err
    await cluster.kubectl("delete", "validatingwebhookconfiguration", "svc-missing.example.com")

    await cluster.kubectl("apply", "-f", "-", stdin=(
        "apiVersion: v1\nkind: Node\nmetadata: {name: sim-node}\n"
        "spec: {podCIDR: 10.244.7.0/24, podCIDRs: [10.244.7.0/24]}\n"
        "---\napiVersion: v1\nkind: Service\nmetadata: {name: in-pods, namespace: webhooks}\n"
        "spec: {clusterIP: 10.96.200.7, ports: [{name: https, port: 443, targetPort: 8443}]}\n---\n"
        "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: in-pods-1\n  namespace: webhooks\n"
        "  labels: {kubernetes.io/service-name: in-pods}\naddressType: IPv4\n"
        "ports: [{name: https, port: 8443, protocol: TCP}]\n"
        "endpoints: [{addresses: [10.244.7.5], conditions: {ready: true}}]\n"))
    await cluster.kubectl("apply", "-f", "-", stdin=_service_config(
        "ValidatingWebhookConfiguration", "svc-pods.example.com", "in-pods", "/validate", webhook.ca, extra=selector))
    await _settle(cluster)
    unreachable = await cluster.kubectl("create", "configmap", "three", "-n", "served", check=False)
    assert ('Internal error occurred: failed calling webhook "svc-pods.example.com": failed to call webhook: '
            'Post "https://in-pods.webhooks.svc:443/validate?timeout=10s": dial tcp 10.96.200.7:443: connect: '
            'connection refused') in unreachable.err
    await cluster.kubectl("apply", "-f", "-", stdin=_service_config(
        "ValidatingWebhookConfiguration", "svc-pods.example.com", "in-pods", "/validate", webhook.ca,
        extra=selector + "  failurePolicy: Ignore\n"))
    await _settle(cluster)
    await cluster.kubectl("create", "configmap", "three", "-n", "served")
    bad = _service_config("ValidatingWebhookConfiguration", "svc-bad.example.com", "hooks", "/Validate", webhook.ca)
    refused = await cluster.kubectl("apply", "-f", "-", stdin=bad.replace("namespace: webhooks, ", "port: 0, "),
                                    check=False)
    assert "webhooks[0].clientConfig.service.namespace: Required value: service namespace is required" in refused.err
    assert ("webhooks[0].clientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and "
            "65535, inclusive") in refused.err
    assert ('webhooks[0].clientConfig.service.path: Invalid value: "/Validate": segment[0]: a lowercase RFC 1123 '
            "subdomain must consist of") in refused.err
    for kind, name in (("mutatingwebhookconfiguration", "svc-mutate.example.com"),
                       ("validatingwebhookconfiguration", "svc-pods.example.com")):
        await cluster.kubectl("delete", kind, name)


async def test_mutating_webhooks_on_delete(cluster: Cluster, webhook: Webhook) -> None:
    """On DELETE a mutating webhook is called with oldObject set and object null; its warnings reach
    kubectl, and a patch is upstream's 500."""
    rule = 'operations: [DELETE]'
    await cluster.kubectl("apply", "-f", "-", stdin=_config(
        "MutatingWebhookConfiguration", "observe.example.com", f"{webhook.url}/allow", webhook.ca,
        extra="  objectSelector: {matchLabels: {delete-hook: allow}}\n").replace("operations: [CREATE, UPDATE]", rule))
    await cluster.kubectl("apply", "-f", "-", stdin=_config(
        "MutatingWebhookConfiguration", "patcher.example.com", f"{webhook.url}/patch-anything", webhook.ca,
        extra="  objectSelector: {matchLabels: {delete-hook: patch}}\n").replace("operations: [CREATE, UPDATE]", rule))
    await _settle(cluster)
    await cluster.kubectl("create", "configmap", "watched")
    await cluster.kubectl("label", "configmap", "watched", "delete-hook=allow")
    before = len(webhook.calls)
    deleted = await cluster.kubectl("delete", "configmap", "watched")
    assert "Warning: seen DELETE" in deleted.err
    (path, request), = webhook.calls[before:]
    assert path == "/allow" and request["object"] is None and request["oldObject"]["metadata"]["name"] == "watched"
    assert request["options"]["kind"] == "DeleteOptions"

    await cluster.kubectl("create", "configmap", "patched")
    await cluster.kubectl("label", "configmap", "patched", "delete-hook=patch")
    refused = await cluster.kubectl("delete", "configmap", "patched", check=False)
    assert ('Internal error occurred: admission webhook "patcher.example.com" attempted to modify the object, '
            'which is not supported for this operation') in refused.err
    assert (await cluster.kubectl("get", "configmap", "patched", "-o", "name")).out.strip() == "configmap/patched"
    for name in ("observe.example.com", "patcher.example.com"):
        await cluster.kubectl("delete", "mutatingwebhookconfiguration", name)
    await cluster.kubectl("delete", "configmap", "patched")


async def test_a_retried_update_calls_its_webhooks_again(cluster: Cluster, webhook: Webhook) -> None:
    """As upstream runs admission inside GuaranteedUpdate's attempt: a write that lands while the
    webhook is answering makes the update retry on the new object, and the webhook is called again."""
    await cluster.kubectl("apply", "-f", "-", stdin=_config(
        "ValidatingWebhookConfiguration", "race.example.com", f"{webhook.url}/race", webhook.ca,
        extra="  objectSelector: {matchLabels: {race: \"on\"}}\n"))
    await _settle(cluster)
    await cluster.kubectl("create", "configmap", "raced")
    await cluster.kubectl("label", "configmap", "raced", "race=on")

    async def bump() -> None:
        await cluster.admin("patch", "configmaps", namespace="default", name="raced", patch_type="merge",
                            body={"data": {"bumped": "1"}})

    webhook.race = bump
    before = len(webhook.calls)
    await cluster.kubectl("label", "configmap", "raced", "second=1")
    seen = [request["object"] for path, request in webhook.calls[before:] if path == "/race"]
    # the label's first attempt (which met the racing patch), the racing patch, the label's retry
    assert len(seen) == 3
    assert seen[0]["metadata"]["labels"].get("second") == "1" and "bumped" not in (seen[0].get("data") or {})
    assert seen[2]["metadata"]["labels"].get("second") == "1" and seen[2]["data"]["bumped"] == "1"
    stored = (await cluster.kubectl("get", "configmap", "raced", "-o", "json")).json()
    assert stored["metadata"]["labels"]["second"] == "1" and stored["data"] == {"bumped": "1"}
    await cluster.kubectl("delete", "validatingwebhookconfiguration", "race.example.com")
