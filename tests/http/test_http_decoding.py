"""Bodies are decoded as upstream decodes them into typed structs: unknown fields dropped (with a
``Warning`` under the default ``fieldValidation=Warn``, silently under ``Ignore``, refused under
``Strict``), wrong JSON types refused with Go's decoder errors, for every built-in kind, through the
real kubectl and the official Python client."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from kubernetes import client, config

from http_env import Cluster
from kconsole.api.fieldschema import KINDS

pytestmark = pytest.mark.asyncio(loop_scope="module")


def _api(cluster: Cluster) -> client.ApiClient:
    cfg = client.Configuration()
    config.load_kube_config(config_file=str(cluster.kubeconfig), client_configuration=cfg)
    return client.ApiClient(cfg)


async def _post(cluster: Cluster, path: str, body: Any, query: str = "") -> tuple[int, dict[str, Any], str]:
    """POST ``body`` with the Python client's transport: (status, JSON answer, Warning header)."""
    api = _api(cluster)

    def send() -> tuple[int, dict[str, Any], str]:
        resp = api.rest_client.request("POST", api.configuration.host + path + query, body=body,
                                       headers={"Content-Type": "application/json", "Accept": "application/json"})
        return resp.status, json.loads(resp.read()), resp.headers.get("Warning", "")

    return await asyncio.to_thread(send)


DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: %s}
spec:
  replicas: %s
  selector: {matchLabels: {app: %s}}
  template:
    metadata: {labels: {app: %s}}
    spec:
      containers:
      - name: web
        image: nginx
        ports:
        - containerPort: 80
          protocl: TCP
"""


async def test_unknown_fields_are_dropped_and_warned_by_default(cluster: Cluster) -> None:
    """kconsole stored ``protocl`` (shown as applied, a new ReplicaSet); upstream drops it with a Warning."""
    warned = await cluster.kubectl("apply", "--validate=warn", "-f", "-", stdin=DEPLOYMENT % (("warned", 1) + ("warned",) * 2))
    assert 'Warning: unknown field "spec.template.spec.containers[0].ports[0].protocl"' in warned.err
    stored = (await cluster.kubectl("get", "deployment", "warned", "-o", "json")).json()
    assert stored["spec"]["template"]["spec"]["containers"][0]["ports"][0] == {"containerPort": 80, "protocol": "TCP"}

    ignored = await cluster.kubectl("apply", "--validate=false", "-f", "-",
                                    stdin=DEPLOYMENT % (("ignored", 1) + ("ignored",) * 2))
    assert "Warning" not in ignored.err
    stored = (await cluster.kubectl("get", "deployment", "ignored", "-o", "json")).json()
    assert "protocl" not in stored["spec"]["template"]["spec"]["containers"][0]["ports"][0]

    strict = await cluster.kubectl("apply", "-f", "-", stdin=DEPLOYMENT % (("strict", 1) + ("strict",) * 2),
                                   check=False)
    assert strict.code == 1 and ('strict decoding error: unknown field '
                                 '"spec.template.spec.containers[0].ports[0].protocl"') in strict.err

    # No directive at all (the Python client sends none): upstream's default is Warn.
    code, body, warning = await _post(cluster, "/api/v1/namespaces/default/configmaps",
                                      {"metadata": {"name": "nodirective", "lables": {"a": "b"}}, "dta": {}})
    assert code == 201 and "dta" not in body and "lables" not in body["metadata"]
    assert warning == '299 - "unknown field \\"metadata.lables\\"", 299 - "unknown field \\"dta\\""'


#: (kind, body fragment, upstream's decoding error).
WRONG_TYPES = [
    ("Pod", {"spec": {"containers": [{"name": "c", "image": 5}]}},
     "json: cannot unmarshal number into Go struct field Container.spec.containers.image of type string"),
    ("Pod", {"spec": {"affinity": [1], "containers": [{"name": "c", "image": "i"}]}},
     "json: cannot unmarshal array into Go struct field PodSpec.spec.affinity of type v1.Affinity"),
    ("Pod", {"spec": {"containers": [{"name": "c", "image": "i", "resources": 5}]}},
     "json: cannot unmarshal number into Go struct field Container.spec.containers.resources of type "
     "v1.ResourceRequirements"),
    ("Pod", {"spec": {"tolerations": "x", "containers": [{"name": "c", "image": "i"}]}},
     "json: cannot unmarshal string into Go struct field PodSpec.spec.tolerations of type []v1.Toleration"),
    ("Pod", {"spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"cpu": "2x"}}}]}},
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ("ConfigMap", {"metadata": {"finalizers": [1]}},
     "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.finalizers of type string"),
    ("ConfigMap", {"data": {"enabled": True}},
     "json: cannot unmarshal bool into Go struct field ConfigMap.data of type string"),
    ("Secret", {"data": {"k": "not-base64"}}, "illegal base64 data at input byte 3"),
    ("Deployment", {"spec": {"replicas": "three"}},
     "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"),
    ("Service", {"spec": {"ports": [{"port": 80, "targetPort": True}]}},
     "json: cannot unmarshal bool into Go value of type int32"),
    ("HorizontalPodAutoscaler", {"spec": {"scaleTargetRef": {"kind": "Deployment", "name": 5}}},
     "json: cannot unmarshal number into Go struct field CrossVersionObjectReference.spec.scaleTargetRef.name "
     "of type string"),
    ("ResourceQuota", {"spec": {"hard": "lots"}},
     "json: cannot unmarshal string into Go struct field ResourceQuotaSpec.spec.hard of type v1.ResourceList"),
]

_PATHS = {"Pod": "/api/v1/namespaces/default/pods", "ConfigMap": "/api/v1/namespaces/default/configmaps",
          "Secret": "/api/v1/namespaces/default/secrets", "Service": "/api/v1/namespaces/default/services",
          "Deployment": "/apis/apps/v1/namespaces/default/deployments",
          "HorizontalPodAutoscaler": "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers",
          "ResourceQuota": "/api/v1/namespaces/default/resourcequotas"}


@pytest.mark.parametrize(("kind", "fragment", "message"), WRONG_TYPES, ids=[m[:40] for _, _, m in WRONG_TYPES])
async def test_wrong_types_are_upstreams_decoding_errors(cluster: Cluster, kind: str, fragment: dict[str, Any],
                                                         message: str) -> None:
    version = "v1" if kind != "HorizontalPodAutoscaler" else "v2"
    body = {**fragment, "metadata": {"name": "typed", **fragment.get("metadata", {})}}
    code, status, _ = await _post(cluster, _PATHS[kind], body)
    assert (code, status["reason"]) == (400, "BadRequest")
    assert status["message"] == f'{kind} in version "{version}" cannot be handled as a {kind}: {message}'


async def test_kubectl_shows_the_decoding_error(cluster: Cluster) -> None:
    refused = await cluster.kubectl("create", "-f", "-", check=False,
                                    stdin=DEPLOYMENT % ("three", '"three"', "three", "three"))
    assert refused.code == 1
    assert ('Error from server (BadRequest): error when creating "STDIN": Deployment in version "v1" cannot be '
            'handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.'
            'replicas of type int32') in refused.err
    secret = "apiVersion: v1\nkind: Secret\nmetadata: {name: bad}\ndata: {k: 'abc!'}\n"
    refused = await cluster.kubectl("create", "-f", "-", stdin=secret, check=False)
    assert ('Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 3'
            in refused.err)


async def test_a_bool_in_a_string_map_is_400_without_python_values(cluster: Cluster) -> None:
    """kconsole answered 422 with its own wording and Python's ``True``."""
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "flags", "labels": {"on": True}}}
    code, status, _ = await _post(cluster, "/api/v1/namespaces/default/configmaps", body)
    assert code == 400 and status["reason"] == "BadRequest"
    assert status["message"] == ('ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot '
                                 'unmarshal bool into Go struct field ObjectMeta.metadata.labels of type string')
    assert "True" not in status["message"]


@pytest.mark.parametrize("kind", sorted(KINDS))
async def test_every_kind_decodes_its_metadata_and_drops_unknown_fields(cluster: Cluster, kind: str) -> None:
    """The same table judges every built-in kind: a wrong-typed label and an unknown field."""
    resources = {s.info.kind: s.info for s in cluster.api.registry if s.info.custom is None and s.stored}
    info = resources.get(kind)
    if info is None or "create" not in info.verbs:
        pytest.skip(f"{kind} is not created by clients")
    prefix = f"/apis/{info.group}/{info.version}" if info.group else "/api/v1"
    path = f"{prefix}/namespaces/default/{info.resource}" if info.namespaced else f"{prefix}/{info.resource}"
    code, status, _ = await _post(cluster, path, {"metadata": {"name": "x", "labels": {"n": 1}}})
    assert code == 400, status
    assert status["message"].endswith("json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels"
                                      " of type string")
    code, status, _ = await _post(cluster, path, {"metadata": {"name": "x"}, "bogus": 1}, "?fieldValidation=Strict")
    assert code == 400 and status["message"].endswith('strict decoding error: unknown field "bogus"'), status
