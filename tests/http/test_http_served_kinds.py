"""Resources and endpoints a 1.32 cluster serves beyond the workload kinds: pod templates, ingress and
CSI kinds, the bindings resource, TokenReview, LocalSubjectAccessReview, and the service account
issuer's OpenID discovery — checked with the real kubectl and the official Python client's view of
the same wire."""

from __future__ import annotations

import base64
import json

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from http_env import Cluster
from kconsole.api.types import UserInfo

pytestmark = [pytest.mark.kubectl, pytest.mark.asyncio(loop_scope="module")]


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


async def test_discovery_lists_the_new_resources_and_namespaces_lose_deletecollection(cluster: Cluster) -> None:
    table = (await cluster.kubectl("api-resources", "-o", "wide")).out
    rows = {line.split()[0]: line for line in table.splitlines()[1:]}
    for name in ("podtemplates", "bindings", "ingressclasses", "csidrivers", "csinodes", "csistoragecapacities",
                 "volumeattachments", "tokenreviews", "localsubjectaccessreviews"):
        assert name in rows, name
    assert rows["bindings"].split()[-1] == "create" and rows["tokenreviews"].split()[-1] == "create"
    assert "deletecollection" not in rows["namespaces"]
    refused = await cluster.kubectl("delete", "namespaces", "--all", "--dry-run=server", check=False)
    assert refused.code != 0


async def test_stored_kinds_round_trip(cluster: Cluster) -> None:
    manifest = """
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: nginx}
spec: {controller: k8s.io/ingress-nginx}
---
apiVersion: v1
kind: PodTemplate
metadata: {name: tpl, namespace: default}
template:
  metadata: {labels: {app: tpl}}
  spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: hostpath.csi.k8s.io}
spec: {attachRequired: false}
"""
    out = (await cluster.kubectl("apply", "-f", "-", stdin=manifest)).out
    assert "ingressclass.networking.k8s.io/nginx created" in out
    assert "podtemplate/tpl created" in out
    assert "csidriver.storage.k8s.io/hostpath.csi.k8s.io created" in out
    got = (await cluster.kubectl("get", "ingressclass", "nginx", "-o", "json")).json()
    assert got["spec"] == {"controller": "k8s.io/ingress-nginx"}
    assert (await cluster.kubectl("get", "podtemplates", "-o", "name")).out.split() == ["podtemplate/tpl"]


async def test_bindings_resource_binds_like_pods_binding(cluster: Cluster) -> None:
    await cluster.admin("create", "nodes", body={"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    await cluster.admin("create", "pods", namespace="default", body={
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bound"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
    binding = json.dumps({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "bound"},
                          "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"}})
    done = await cluster.kubectl("create", "--raw", "/api/v1/namespaces/default/bindings", "-f", "-", stdin=binding)
    assert json.loads(done.out)["status"] == "Success"
    pod = (await cluster.kubectl("get", "pod", "bound", "-o", "json")).json()
    assert pod["spec"]["nodeName"] == "n1"
    again = await cluster.kubectl("create", "--raw", "/api/v1/namespaces/default/bindings", "-f", "-",
                                  stdin=binding, check=False)
    assert again.code != 0 and 'is already assigned to node "n1"' in again.err


async def test_token_review_names_the_tokens_owner(cluster: Cluster) -> None:
    await cluster.kubectl("create", "serviceaccount", "default", "-n", "default", check=False)
    token = (await cluster.kubectl("create", "token", "default", "-n", "default")).out.strip()
    review = json.dumps({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}})
    out = json.loads((await cluster.kubectl("create", "--raw", "/apis/authentication.k8s.io/v1/tokenreviews",
                                            "-f", "-", stdin=review)).out)
    assert out["status"]["authenticated"] is True
    assert out["status"]["user"]["username"] == "system:serviceaccount:default:default"
    assert "system:serviceaccounts:default" in out["status"]["user"]["groups"]
    bogus = json.dumps({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": "nope"}})
    out = json.loads((await cluster.kubectl("create", "--raw", "/apis/authentication.k8s.io/v1/tokenreviews",
                                            "-f", "-", stdin=bogus)).out)
    assert out["status"] == {"user": {}}
    empty = await cluster.kubectl("create", "--raw", "/apis/authentication.k8s.io/v1/tokenreviews", "-f", "-",
                                  stdin=json.dumps({"kind": "TokenReview", "apiVersion": "authentication.k8s.io/v1",
                                                    "spec": {}}), check=False)
    assert empty.code != 0 and "token is required for TokenReview in authentication" in empty.err


async def test_local_subject_access_review_asks_about_its_namespace(cluster: Cluster) -> None:
    def review(namespace: str) -> str:
        return json.dumps({"apiVersion": "authorization.k8s.io/v1", "kind": "LocalSubjectAccessReview",
                           "spec": {"user": "jane", "resourceAttributes": {"verb": "get", "resource": "pods",
                                                                           "namespace": namespace}}})
    path = "/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews"
    out = json.loads((await cluster.kubectl("create", "--raw", path, "-f", "-", stdin=review("default"))).out)
    assert out["status"]["allowed"] is False and out["metadata"]["namespace"] == "default"
    for namespace in ("", "kube-system"):
        other = await cluster.kubectl("create", "--raw", path, "-f", "-", stdin=review(namespace), check=False)
        assert other.code != 0
        assert f'spec.resourceAttributes.namespace: Invalid value: "{namespace}": must match metadata.namespace' \
            in other.err


async def test_issuer_discovery_verifies_a_service_account_token(cluster: Cluster) -> None:
    """A relying party reads the discovery document and the keys, then checks a token's signature."""
    sa = cluster.kubeconfig_for(UserInfo("system:serviceaccount:default:default",
                                         ("system:serviceaccounts", "system:serviceaccounts:default")))
    config = json.loads((await cluster.kubectl("get", "--raw", "/.well-known/openid-configuration",
                                               kubeconfig=sa)).out)
    assert config["issuer"] == "https://kubernetes.default.svc.cluster.local"
    assert config["jwks_uri"] == f"{cluster.front.url}/openid/v1/jwks"
    assert config["id_token_signing_alg_values_supported"] == ["ES256"]
    [key] = json.loads((await cluster.kubectl("get", "--raw", "/openid/v1/jwks", kubeconfig=sa)).out)["keys"]
    token = (await cluster.kubectl("create", "token", "default", "-n", "default")).out.strip()
    header, payload, signature = token.split(".")
    assert json.loads(_unb64(header))["kid"] == key["kid"]
    public = ec.EllipticCurvePublicNumbers(int.from_bytes(_unb64(key["x"]), "big"),
                                           int.from_bytes(_unb64(key["y"]), "big"), ec.SECP256R1()).public_key()
    raw = _unb64(signature)
    public.verify(encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")),
                  f"{header}.{payload}".encode(), ec.ECDSA(hashes.SHA256()))
    jane = cluster.kubeconfig_for(UserInfo("jane", ("system:authenticated",)))
    refused = await cluster.kubectl("get", "--raw", "/openid/v1/jwks", kubeconfig=jane, check=False)
    assert refused.code != 0 and "forbidden" in refused.err.lower()
