"""``/openapi/v2`` and ``kubectl explain`` as upstream 1.32 serves and prints them: definitions named and
described from upstream's data, paths with upstream's operation ids and actions, a cached document
with an ETag."""

from __future__ import annotations

import json
import ssl

import aiohttp
import pytest

from http_env import Cluster
from kconsole.api.types import UserInfo

pytestmark = [pytest.mark.kubectl, pytest.mark.asyncio(loop_scope="module")]


async def _get(cluster: Cluster, path: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str],
                                                                                            bytes]:
    token = cluster.api.tokens.issue(UserInfo("admin", groups=("system:masters",)))
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    async with aiohttp.ClientSession(cluster.front.url) as http:
        async with http.get(path, ssl=context, headers={"Authorization": f"Bearer {token}", **(headers or {})}) as r:
            return r.status, dict(r.headers), await r.read()


async def test_openapi_v2_is_the_swagger_document_of_every_served_kind(cluster: Cluster) -> None:
    doc = json.loads((await cluster.kubectl("get", "--raw", "/openapi/v2")).out)
    assert doc["swagger"] == "2.0"
    version = json.loads((await cluster.kubectl("get", "--raw", "/version")).out)["gitVersion"]
    assert doc["info"] == {"title": "Kubernetes", "version": version}
    pods = doc["paths"]["/api/v1/namespaces/{namespace}/pods"]
    assert pods["get"]["operationId"] == "listCoreV1NamespacedPod"
    assert pods["get"]["x-kubernetes-action"] == "list"
    assert pods["get"]["x-kubernetes-group-version-kind"] == {"group": "", "kind": "Pod", "version": "v1"}
    assert pods["get"]["responses"]["200"]["schema"] == {"$ref": "#/definitions/io.k8s.api.core.v1.PodList"}
    assert pods["post"]["operationId"] == "createCoreV1NamespacedPod"
    assert pods["delete"]["operationId"] == "deleteCoreV1CollectionNamespacedPod"
    item = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]
    assert (item["patch"]["operationId"], item["patch"]["tags"]) == ("patchAppsV1NamespacedDeployment", ["apps_v1"])
    assert {p["name"] for p in item["patch"]["parameters"]} >= {"body", "dryRun", "fieldManager",
                                                                  "fieldValidation", "force"}
    assert doc["paths"]["/apis/apps/v1/deployments"]["get"]["operationId"] == "listAppsV1DeploymentForAllNamespaces"
    roles = doc["paths"]["/apis/rbac.authorization.k8s.io/v1/clusterroles"]
    assert roles["get"]["operationId"] == "listRbacAuthorizationV1ClusterRole"
    assert "delete" not in doc["paths"]["/api/v1/namespaces"], "namespaces have no deletecollection upstream"

    defs = doc["definitions"]
    pod = defs["io.k8s.api.core.v1.Pod"]
    assert pod["x-kubernetes-group-version-kind"] == [{"group": "", "kind": "Pod", "version": "v1"}]
    assert pod["description"].startswith("Pod is a collection of containers that can run on a host.")
    assert pod["properties"]["spec"]["$ref"] == "#/definitions/io.k8s.api.core.v1.PodSpec"
    ports = defs["io.k8s.api.core.v1.Container"]["properties"]["ports"]
    assert ports["items"] == {"$ref": "#/definitions/io.k8s.api.core.v1.ContainerPort"}
    assert (ports["x-kubernetes-patch-strategy"], ports["x-kubernetes-patch-merge-key"]) == ("merge", "containerPort")
    assert ports["x-kubernetes-list-type"] == "map"
    assert ports["x-kubernetes-list-map-keys"] == ["containerPort", "protocol"]
    assert defs["io.k8s.api.core.v1.ContainerPort"]["required"] == ["containerPort"]
    meta = defs["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]
    assert meta["properties"]["creationTimestamp"]["$ref"] == "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Time"
    assert "restartPolicyRules" not in defs["io.k8s.api.core.v1.Container"]["properties"], "not a 1.32 field"
    dangling = {ref.rsplit("/", 1)[1] for ref in _refs(doc)} - set(defs)
    assert not dangling


def _refs(node: object) -> list[str]:
    if isinstance(node, dict):
        # JSONSchemaProps has a property named "$ref": only string values are references
        return [v for k, v in node.items() if k == "$ref" and isinstance(v, str)] + [
            r for v in node.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


async def test_openapi_v2_is_built_once_and_answers_304_to_its_etag(cluster: Cluster) -> None:
    status, headers, body = await _get(cluster, "/openapi/v2", {"Accept": "application/json"})
    assert status == 200 and headers["Content-Type"] == "application/json"
    etag = headers["Etag"]
    assert etag.startswith('"') and etag.endswith('"')
    again = await _get(cluster, "/openapi/v2", {"If-None-Match": etag})
    assert again[0] == 304 and again[2] == b""
    assert (await _get(cluster, "/openapi/v2"))[2] is not body and (await _get(cluster, "/openapi/v2"))[2] == body
    proto = await _get(cluster, "/openapi/v2", {"Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"})
    assert proto[0] == 200 and proto[1]["Content-Type"] == "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    assert proto[1]["Etag"] != etag and proto[2].startswith(b"\n\x032.0")


async def test_explain_reads_the_v2_document_in_protobuf(cluster: Cluster) -> None:
    """kubectl's v2 explain asks for gnostic's protobuf; an empty document said 'couldn't find resource'."""
    out = (await cluster.kubectl("explain", "deployment.spec.strategy", "--output=plaintext-openapiv2",
                                 "--recursive")).out
    assert "RESOURCE: strategy <Object>" in out
    assert "DeploymentStrategy describes how to replace existing pods with new ones." in out
    assert ("   rollingUpdate\t<Object>\n      maxSurge\t<string>\n      maxUnavailable\t<string>\n"
            "   type\t<string>") in out
    policy = (await cluster.kubectl("explain", "pod.spec.restartPolicy", "--output=plaintext-openapiv2")).out
    assert "FIELD:    restartPolicy <string>" in policy and "Restart policy for all containers" in policy


async def test_explain_prints_upstream_descriptions_of_nested_types(cluster: Cluster) -> None:
    ports = (await cluster.kubectl("explain", "pod.spec.containers.ports")).out
    assert "FIELD: ports <[]ContainerPort>" in ports
    assert "ContainerPort represents a network port in a single container." in ports
    assert "containerPort\t<integer> -required-" in ports
    assert "<no description>" not in ports
    strategy = (await cluster.kubectl("explain", "deployment.spec.strategy")).out
    assert "DeploymentStrategy describes how to replace existing pods with new ones." in strategy
    assert "rollingUpdate\t<RollingUpdateDeployment>" in strategy
    recursive = (await cluster.kubectl("explain", "deployment.spec.strategy", "--recursive")).out
    assert "    maxSurge\t<IntOrString>" in recursive and "    maxUnavailable\t<IntOrString>" in recursive
    svc = (await cluster.kubectl("explain", "svc.spec.type")).out
    assert "type determines how the Service is exposed. Defaults to ClusterIP." in svc
    meta = " ".join((await cluster.kubectl("explain", "cm.metadata.ownerReferences")).out.split())
    assert "OwnerReference contains enough information to let you identify an owning object." in meta
    assert "apiVersion <string> -required- API version of the referent." in meta


async def test_a_kind_served_in_two_versions_has_each_versions_definition(cluster: Cluster) -> None:
    """autoscaling/v1 HorizontalPodAutoscaler is served over the stored v2: each version is its own
    upstream definition (helm validates a v1 manifest against v1's fields)."""
    doc = json.loads((await cluster.kubectl("get", "--raw", "/openapi/v2")).out)
    v1 = doc["definitions"]["io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler"]
    v2 = doc["definitions"]["io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler"]
    assert v1["x-kubernetes-group-version-kind"] == [{"group": "autoscaling", "kind": "HorizontalPodAutoscaler",
                                                      "version": "v1"}]
    assert v2["x-kubernetes-group-version-kind"][0]["version"] == "v2"
    spec = doc["definitions"]["io.k8s.api.autoscaling.v1.HorizontalPodAutoscalerSpec"]["properties"]
    assert "targetCPUUtilizationPercentage" in spec and "metrics" not in spec
    out = (await cluster.kubectl("explain", "hpa.spec", "--api-version=autoscaling/v1")).out
    assert "targetCPUUtilizationPercentage\t<integer>" in out and "metrics" not in out
    out = (await cluster.kubectl("explain", "hpa.spec")).out
    assert "metrics\t<[]MetricSpec>" in out
