"""ResourceQuota, LimitRange and NetworkPolicy are served: kubectl create quota (a protobuf body),
apply of all three, their columns, explain, server-side apply and upstream's validation errors."""

from __future__ import annotations

import pytest

from http_env import Cluster

pytestmark = [pytest.mark.kubectl, pytest.mark.asyncio(loop_scope="module")]

MANIFEST = """
apiVersion: v1
kind: LimitRange
metadata: {name: defaults}
spec:
  limits:
  - type: Container
    default: {cpu: 500m, memory: 256Mi}
    defaultRequest: {cpu: 100m}
    max: {cpu: "2"}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: db-only}
spec:
  podSelector: {matchLabels: {app: db}}
  policyTypes: [Ingress]
  ingress:
  - from: [{podSelector: {matchLabels: {role: api}}}]
    ports: [{protocol: TCP, port: 5432}]
"""


async def test_policy_kinds_are_served(cluster: Cluster) -> None:
    created = await cluster.kubectl("create", "quota", "q", "--hard=pods=10,requests.cpu=2")
    assert created.out.strip() == "resourcequota/q created"
    quota = await cluster.kubectl("get", "quota", "q", "-o", "yaml")
    assert "pods: \"10\"" in quota.out and "requests.cpu: \"2\"" in quota.out
    applied = await cluster.kubectl("apply", "--server-side", "-f", "-", stdin=MANIFEST)
    assert "limitrange/defaults serverside-applied" in applied.out
    assert "networkpolicy.networking.k8s.io/db-only serverside-applied" in applied.out
    netpol = [line.split() for line in (await cluster.kubectl("get", "netpol")).out.splitlines()]
    assert netpol[0] == ["NAME", "POD-SELECTOR", "AGE"] and netpol[1][:2] == ["db-only", "app=db"]
    limits = [line.split() for line in (await cluster.kubectl("get", "limits")).out.splitlines()]
    assert limits[0] == ["NAME", "CREATED", "AT"] and limits[1][0] == "defaults"
    quotas = [line.split() for line in (await cluster.kubectl("get", "quota")).out.splitlines()]
    assert quotas[0] == ["NAME", "AGE", "REQUEST", "LIMIT"]
    resources = (await cluster.kubectl("api-resources", "--no-headers")).out
    rows = {line.split()[0]: line.split() for line in resources.splitlines()}
    assert rows["resourcequotas"][1:] == ["quota", "v1", "true", "ResourceQuota"]
    assert rows["limitranges"][1:] == ["limits", "v1", "true", "LimitRange"]
    assert rows["networkpolicies"][1:] == ["netpol", "networking.k8s.io/v1", "true", "NetworkPolicy"]
    explain = await cluster.kubectl("explain", "networkpolicy.spec.ingress.from")
    assert "ipBlock" in explain.out and "namespaceSelector" in explain.out


async def test_policy_kinds_refuse_what_upstream_refuses(cluster: Cluster) -> None:
    bad_quota = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: neg}\nspec: {hard: {pods: '-1'}}\n"
    out = await cluster.kubectl("apply", "-f", "-", stdin=bad_quota, check=False)
    assert 'spec.hard[pods]: Invalid value: "-1": must be greater than or equal to 0' in out.err
    bad_limits = ("apiVersion: v1\nkind: LimitRange\nmetadata: {name: bad}\nspec:\n  limits:\n"
                  "  - {type: Node, max: {cpu: '1'}, min: {cpu: '2'}}\n")
    out = await cluster.kubectl("apply", "-f", "-", stdin=bad_limits, check=False)
    assert 'spec.limits[0].type: Unsupported value: "Node": supported values: "Container", "Pod", ' \
           '"PersistentVolumeClaim"' in out.err
    assert "spec.limits[0].min[cpu]" in out.err
    bad_netpol = ("apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: bad}\nspec:\n"
                  "  podSelector: {}\n  policyTypes: [Inbound]\n  ingress:\n"
                  "  - ports: [{protocol: ICMP, port: 70000}]\n    from: [{ipBlock: {cidr: 10.0.0.0/33}}]\n")
    out = await cluster.kubectl("apply", "-f", "-", stdin=bad_netpol, check=False)
    assert out.code == 1 and 'The NetworkPolicy "bad" is invalid' in out.err
    for text in ('spec.policyTypes[0]: Unsupported value: "Inbound"', 'spec.ingress[0].ports[0].protocol',
                 "spec.ingress[0].ports[0].port: Invalid value: 70000", "spec.ingress[0].from[0].ipBlock.cidr"):
        assert text in out.err


LIMITED = """
apiVersion: v1
kind: Namespace
metadata: {name: limited}
---
apiVersion: v1
kind: LimitRange
metadata: {name: bounds, namespace: limited}
spec:
  limits:
  - type: Container
    max: {cpu: "2"}
    default: {memory: 256Mi}
    defaultRequest: {cpu: 100m}
"""


async def test_limit_ranger_defaults_and_bounds_pods(cluster: Cluster) -> None:
    await cluster.kubectl("apply", "-f", "-", stdin=LIMITED)
    stored = await cluster.admin("get", "limitranges", namespace="limited", name="bounds")
    item = stored["spec"]["limits"][0]
    assert item["default"] == {"memory": "256Mi", "cpu": "2"} and item["defaultRequest"] == {
        "cpu": "100m", "memory": "256Mi"}
    await cluster.kubectl("run", "plain", "-n", "limited", "--image=nginx")
    pod = (await cluster.kubectl("get", "pod", "plain", "-n", "limited", "-o", "json")).json()
    resources = pod["spec"]["containers"][0]["resources"]
    assert resources == {"limits": {"cpu": "2", "memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "256Mi"}}
    assert pod["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == \
        "LimitRanger plugin set: cpu, memory request for container plain; cpu, memory limit for container plain"
    big = await cluster.kubectl("run", "big", "-n", "limited", "--image=nginx", "--overrides",
                                '{"spec": {"containers": [{"name": "big", "image": "nginx", '
                                '"resources": {"limits": {"cpu": "3"}}}]}}', check=False)
    assert big.code == 1
    assert big.err.strip() == 'Error from server (Forbidden): pods "big" is forbidden: maximum cpu usage per ' \
                              'Container is 2, but limit is 3'


async def test_limit_ranger_bounds_claims(cluster: Cluster) -> None:
    bounds = ("apiVersion: v1\nkind: LimitRange\nmetadata: {name: storage, namespace: claims}\nspec:\n  limits:\n"
              "  - {type: PersistentVolumeClaim, min: {storage: 1Gi}, max: {storage: 10Gi}}\n")
    await cluster.kubectl("create", "namespace", "claims")
    await cluster.kubectl("apply", "-f", "-", stdin=bounds)
    claim = ("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: {name}, namespace: claims}}\nspec:\n"
             "  accessModes: [ReadWriteOnce]\n  resources: {{requests: {{storage: {size}}}}}\n")
    small = await cluster.kubectl("apply", "-f", "-", stdin=claim.format(name="small", size="500Mi"), check=False)
    assert 'persistentvolumeclaims "small" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, ' \
           "but request is 500Mi" in small.err
    big = await cluster.kubectl("apply", "-f", "-", stdin=claim.format(name="big", size="20Gi"), check=False)
    assert "maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi" in big.err
    await cluster.kubectl("apply", "-f", "-", stdin=claim.format(name="fits", size="5Gi"))
