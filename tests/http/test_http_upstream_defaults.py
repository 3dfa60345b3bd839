"""Defaults, quota and patch behaviour a real 1.32 API server shows, through the real kubectl:
NetworkPolicy policyTypes and port protocol, a Job's labels from its template, the DaemonSet's
template generation annotation, quota that requires requests and limits, strategic-merge order of
new list items, and a no-op patch that writes nothing."""

from __future__ import annotations

import pytest

from http_env import Cluster

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_networkpolicy_defaults(cluster: Cluster) -> None:
    policy = ("apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: db}\nspec:\n"
              "  podSelector: {matchLabels: {app: db}}\n  ingress:\n  - ports: [{port: 5432}]\n")
    await cluster.kubectl("apply", "-f", "-", stdin=policy)
    spec = (await cluster.kubectl("get", "networkpolicy", "db", "-o", "json")).json()["spec"]
    assert spec["policyTypes"] == ["Ingress"]
    assert spec["ingress"][0]["ports"] == [{"port": 5432, "protocol": "TCP"}]
    described = (await cluster.kubectl("describe", "networkpolicy", "db")).out
    assert "Not affecting ingress traffic" not in described and "Not affecting egress traffic" in described
    egress = policy.replace("name: db", "name: out") + "  egress:\n  - ports: [{port: 53, protocol: UDP}]\n"
    await cluster.kubectl("apply", "-f", "-", stdin=egress)
    spec = (await cluster.kubectl("get", "networkpolicy", "out", "-o", "json")).json()["spec"]
    assert spec["policyTypes"] == ["Ingress", "Egress"] and spec["egress"][0]["ports"][0]["protocol"] == "UDP"


async def test_job_labels_come_from_its_template(cluster: Cluster) -> None:
    await cluster.kubectl("create", "job", "once", "--image=busybox")
    job = (await cluster.kubectl("get", "job", "once", "-o", "json")).json()
    labels = job["metadata"]["labels"]
    assert labels["batch.kubernetes.io/job-name"] == "once" and labels["job-name"] == "once"
    assert labels["batch.kubernetes.io/controller-uid"] == job["metadata"]["uid"]


async def test_daemonset_template_generation(cluster: Cluster) -> None:
    ds = ("apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent}\nspec:\n"
          "  selector: {matchLabels: {app: agent}}\n  template:\n    metadata: {labels: {app: agent}}\n"
          "    spec:\n      containers: [{name: a, image: %s}]\n")
    await cluster.kubectl("apply", "-f", "-", stdin=ds % "agent:1")
    key = "deprecated.daemonset.template.generation"
    got = (await cluster.kubectl("get", "ds", "agent", "-o", "json")).json()
    assert got["metadata"]["annotations"][key] == "1"
    await cluster.kubectl("apply", "-f", "-", stdin=ds % "agent:2")
    got = (await cluster.kubectl("get", "ds", "agent", "-o", "json")).json()
    assert got["metadata"]["annotations"][key] == "2"
    await cluster.kubectl("label", "ds", "agent", "tier=node")
    got = (await cluster.kubectl("get", "ds", "agent", "-o", "json")).json()
    assert got["metadata"]["annotations"][key] == "2"


async def test_quota_requires_requests_and_limits(cluster: Cluster) -> None:
    await cluster.kubectl("create", "namespace", "quoted")
    await cluster.kubectl("create", "quota", "compute", "-n", "quoted", "--hard=requests.cpu=2,limits.memory=1Gi")
    await cluster.clock.advance(0.5)
    refused = await cluster.kubectl("run", "app", "-n", "quoted", "--image=nginx", check=False)
    assert ('pods "app" is forbidden: failed quota: compute: must specify limits.memory for: app; '
            'requests.cpu for: app') in refused.err
    partial = await cluster.kubectl("run", "app", "-n", "quoted", "--image=nginx", "--overrides",
                                    '{"spec": {"containers": [{"name": "app", "image": "nginx", '
                                    '"resources": {"requests": {"cpu": "100m"}}}]}}', check=False)
    assert "failed quota: compute: must specify limits.memory for: app" in partial.err
    await cluster.kubectl("run", "app", "-n", "quoted", "--image=nginx", "--overrides",
                          '{"spec": {"containers": [{"name": "app", "image": "nginx", "resources": '
                          '{"requests": {"cpu": "100m"}, "limits": {"memory": "64Mi"}}}]}}')


async def test_strategic_merge_puts_new_items_first_and_no_op_patches_write_nothing(cluster: Cluster) -> None:
    await cluster.kubectl("create", "service", "clusterip", "ports", "--tcp=80:80", "--tcp=443:443")
    await cluster.kubectl("patch", "service", "ports", "-p", '{"spec": {"ports": [{"name": "8080", "port": 8080}]}}')
    ports = (await cluster.kubectl("get", "service", "ports", "-o", "json")).json()["spec"]["ports"]
    assert [p["port"] for p in ports] == [8080, 80, 443]

    await cluster.kubectl("create", "configmap", "noop", "--from-literal=a=1")
    await cluster.kubectl("patch", "configmap", "noop", "--type=json", "-p",
                          '[{"op": "replace", "path": "/data/a", "value": "2"}]')
    before = (await cluster.kubectl("get", "configmap", "noop", "-o", "json")).json()["metadata"]["resourceVersion"]
    await cluster.clock.advance(5)  # a later second: managedFields times would move
    again = await cluster.kubectl("patch", "configmap", "noop", "--type=json", "-p",
                                  '[{"op": "replace", "path": "/data/a", "value": "2"}]')
    assert "configmap/noop patched (no change)" in again.out
    after = (await cluster.kubectl("get", "configmap", "noop", "-o", "json")).json()["metadata"]["resourceVersion"]
    assert after == before


async def test_hpa_behavior_given_in_part_is_filled_out(cluster: Cluster) -> None:
    hpa = ("apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web}\nspec:\n"
           "  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  maxReplicas: 5\n"
           "  behavior:\n    scaleDown: {stabilizationWindowSeconds: 60}\n")
    await cluster.kubectl("apply", "-f", "-", stdin=hpa)
    behavior = (await cluster.kubectl("get", "hpa", "web", "-o", "json")).json()["spec"]["behavior"]
    assert behavior["scaleDown"] == {"stabilizationWindowSeconds": 60, "selectPolicy": "Max",
                                     "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}
    assert behavior["scaleUp"] == {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
        {"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]}


async def test_resource_field_refs_get_the_zero_divisor(cluster: Cluster) -> None:
    pod = ("apiVersion: v1\nkind: Pod\nmetadata: {name: downward}\nspec:\n  containers:\n  - name: c\n"
           "    image: busybox\n    env:\n    - name: LIMIT\n      valueFrom:\n"
           "        resourceFieldRef: {resource: limits.memory}\n  volumes:\n  - name: info\n    downwardAPI:\n"
           "      items: [{path: cpu, resourceFieldRef: {containerName: c, resource: requests.cpu}}]\n")
    await cluster.kubectl("apply", "-f", "-", stdin=pod)
    spec = (await cluster.kubectl("get", "pod", "downward", "-o", "json")).json()["spec"]
    assert spec["containers"][0]["env"][0]["valueFrom"]["resourceFieldRef"] == {"resource": "limits.memory",
                                                                               "divisor": "0"}
    assert spec["volumes"][0]["downwardAPI"]["items"][0]["resourceFieldRef"]["divisor"] == "0"


@pytest.mark.parametrize(("schedule", "message"), [
    ("61 * * * *", "end of range (61) above maximum (59): 61"),
    ("0 0 0 * *", "beginning of range (0) below minimum (1): 0"),
    ("*/0 * * * *", "step of range should be a positive number: */0"),
    ("x * * * *", 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'),
])
async def test_cronjob_schedule_errors_are_upstreams(cluster: Cluster, schedule: str, message: str) -> None:
    refused = await cluster.kubectl("create", "cronjob", "tick", "--image=busybox", f"--schedule={schedule}",
                                    check=False)
    assert f'spec.schedule: Invalid value: "{schedule}": {message}' in refused.err
