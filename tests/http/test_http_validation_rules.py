"""Validation kubectl users meet, with upstream's messages: finalizers on a deleting object,
PriorityClass defaults, TLS Secrets, volume claims and Ingress rules."""

from __future__ import annotations

import pytest

from http_env import Cluster

pytestmark = [pytest.mark.kubectl, pytest.mark.asyncio(loop_scope="module")]


async def test_no_finalizer_is_added_to_a_deleting_object(cluster: Cluster) -> None:
    await cluster.kubectl("create", "configmap", "held")
    await cluster.kubectl("patch", "configmap", "held", "--type=merge",
                          "-p", '{"metadata":{"finalizers":["example.com/hold"]}}')
    await cluster.kubectl("delete", "configmap", "held", "--wait=false")
    out = await cluster.kubectl("patch", "configmap", "held", "--type=json",
                                "-p", '[{"op":"add","path":"/metadata/finalizers/-","value":"x"}]', check=False)
    assert out.code == 1
    assert out.err.strip() == ('The ConfigMap "held" is invalid: metadata.finalizers: Forbidden: no new finalizers '
                               'can be added if the object is being deleted, found new finalizers []string{"x"}')
    await cluster.kubectl("patch", "configmap", "held", "--type=merge", "-p", '{"metadata":{"finalizers":null}}')


async def test_a_second_global_default_priorityclass_is_refused(cluster: Cluster) -> None:
    await cluster.kubectl("create", "priorityclass", "first", "--value=10", "--global-default")
    out = await cluster.kubectl("create", "priorityclass", "second", "--value=20", "--global-default", check=False)
    assert out.code == 1
    assert out.err.strip() == ('error: failed to create priorityclass: priorityclasses.scheduling.k8s.io "second" is '
                               "forbidden: PriorityClass first is already marked as default. Only one default can "
                               "exist")
    await cluster.kubectl("delete", "priorityclass", "first")


async def test_a_tls_secret_without_a_key_is_refused(cluster: Cluster) -> None:
    manifest = ("apiVersion: v1\nkind: Secret\nmetadata: {name: half}\ntype: kubernetes.io/tls\n"
                "data: {tls.crt: Y2VydA==}\n")
    out = await cluster.kubectl("apply", "-f", "-", stdin=manifest, check=False)
    assert out.code == 1
    assert 'The Secret "half" is invalid: data[tls.key]: Required value' in out.err


async def test_volumes_and_claims_are_validated(cluster: Cluster) -> None:
    volume = ("apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: nocap}\n"
              "spec: {accessModes: [ReadWriteOnce], hostPath: {path: /data}}\n")
    out = await cluster.kubectl("apply", "-f", "-", stdin=volume, check=False)
    assert out.code == 1 and 'The PersistentVolume "nocap" is invalid: spec.capacity: Required value' in out.err
    claim = ("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: nosize}\n"
             "spec: {accessModes: [ReadWriteOnce], storageClassName: '', resources: {}}\n")
    out = await cluster.kubectl("apply", "-f", "-", stdin=claim, check=False)
    assert out.code == 1
    assert 'The PersistentVolumeClaim "nosize" is invalid: spec.resources[storage]: Required value' in out.err
    await cluster.kubectl("apply", "-f", "-", stdin=claim.replace("resources: {}",
                                                                      "resources: {requests: {storage: 1Gi}}"))
    out = await cluster.kubectl("patch", "pvc", "nosize", "-p", '{"spec":{"resources":{"requests":{"storage":"1Mi"}}}}',
                                check=False)
    assert out.code == 1
    assert "spec: Forbidden: spec is immutable after creation except resources.requests" in out.err
    assert "spec.resources.requests.storage: Forbidden: field can not be less than previous value" in out.err
    await cluster.kubectl("delete", "pvc", "nosize", "--wait=false")


async def test_ingress_rules_are_refused_as_upstream_does(cluster: Cluster) -> None:
    manifest = ("apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: loose}\nspec:\n  rules:\n"
                "  - host: '*.*.example.com'\n    http: {paths: [{path: api, pathType: Prefix,"
                " backend: {service: {name: web, port: {number: 80}}}}]}\n"
                "  - http: {paths: [{path: /, backend: {service: {name: web, port: {number: 80}}}}]}\n")
    out = await cluster.kubectl("apply", "-f", "-", stdin=manifest, check=False)
    assert out.code == 1 and 'The Ingress "loose" is invalid:' in out.err
    for text in ('spec.rules[0].host: Invalid value: "*.*.example.com": a wildcard DNS-1123 subdomain must start '
                 "with '*.'", 'spec.rules[0].http.paths[0].path: Invalid value: "api": must be an absolute path',
                 "spec.rules[1].http.paths[0].pathType: Required value: pathType must be specified"):
        assert text in out.err
    created = await cluster.kubectl("create", "ingress", "ok", "--rule=*.example.com/api*=web:80")
    assert created.out.strip() == "ingress.networking.k8s.io/ok created"
