"""Shapes a real 1.32 API server writes, byte for byte where kubectl shows them: list items of
built-in kinds without kind and apiVersion (a CRD's and watch events' objects keep theirs),
``creationTimestamp: null`` in pod templates, and the Pod-spec immutability message with its diff."""

from __future__ import annotations

import asyncio
import json

import aiohttp
import pytest

from http_env import Cluster

pytestmark = pytest.mark.asyncio(loop_scope="module")

GADGETS = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "gadgets.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}


async def test_builtin_list_items_carry_no_kind_but_custom_ones_do(cluster: Cluster) -> None:
    await cluster.kubectl("create", "configmap", "shape", "--from-literal=a=1")
    raw = (await cluster.kubectl("get", "--raw", "/api/v1/namespaces/default/configmaps")).out
    assert raw.startswith('{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"')
    assert '"items":[{"metadata":{"name":"shape","namespace":"default",' in raw
    listed = json.loads(raw)
    assert all("kind" not in i and "apiVersion" not in i for i in listed["items"])
    one = json.loads((await cluster.kubectl("get", "--raw", "/api/v1/namespaces/default/configmaps/shape")).out)
    assert (one["kind"], one["apiVersion"]) == ("ConfigMap", "v1")
    # kubectl's own decoding restores them, as client-go's does
    assert (await cluster.kubectl("get", "configmaps", "-o", "json")).json()["items"][0]["kind"] == "ConfigMap"

    await cluster.admin("create", "customresourcedefinitions", body=GADGETS)
    for _ in range(500):  # served once Established
        if cluster.api.registry.get("example.com", "gadgets") is not None:
            break
        await cluster.clock.advance(0.01)
        await asyncio.sleep(0.001)
    await cluster.admin("create", "gadgets", namespace="default", body={
        "apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g1", "namespace": "default"}})
    custom = json.loads((await cluster.kubectl("get", "--raw", "/apis/example.com/v1/namespaces/default/gadgets")).out)
    assert [(i["apiVersion"], i["kind"]) for i in custom["items"]] == [("example.com/v1", "Gadget")]




async def test_watch_events_keep_kind_and_api_version(cluster: Cluster) -> None:
    await cluster.kubectl("create", "configmap", "watched", "--from-literal=a=1")
    headers = {"Authorization": f"Bearer {cluster.front.admin_token}"}
    async with aiohttp.ClientSession(cluster.front.url, headers=headers,
                                     connector=aiohttp.TCPConnector(ssl=False)) as http:
        params = {"watch": "1", "fieldSelector": "metadata.name=watched", "resourceVersion": "0"}
        async with http.get("/api/v1/namespaces/default/configmaps", params=params) as r:
            event = json.loads(await asyncio.wait_for(r.content.readline(), 10))
    assert event["type"] == "ADDED"
    assert (event["object"]["kind"], event["object"]["apiVersion"]) == ("ConfigMap", "v1")

async def test_templates_carry_a_null_creation_timestamp(cluster: Cluster) -> None:
    """Go writes an embedded ObjectMeta's zero creationTimestamp as null (1.32's encoder never omits it)."""
    await cluster.kubectl("create", "deployment", "tmpl", "--image=nginx")
    raw = (await cluster.kubectl("get", "--raw", "/apis/apps/v1/namespaces/default/deployments/tmpl")).out
    assert '"template":{"metadata":{"creationTimestamp":null,"labels":{"app":"tmpl"}},"spec":{' in raw
    await cluster.kubectl("create", "cronjob", "tick", "--image=busybox", "--schedule=*/5 * * * *")
    cj = json.loads((await cluster.kubectl("get", "--raw", "/apis/batch/v1/namespaces/default/cronjobs/tick")).out)
    assert cj["spec"]["jobTemplate"]["metadata"] == {"creationTimestamp": None, "name": "tick"}
    assert cj["spec"]["jobTemplate"]["spec"]["template"]["metadata"] == {"creationTimestamp": None}
    sts = ("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n  serviceName: db\n"
           "  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: db}}\n"
           "    spec: {containers: [{name: db, image: postgres}]}\n  volumeClaimTemplates:\n"
           "  - metadata: {name: data}\n"
           "    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n")
    await cluster.kubectl("create", "-f", "-", stdin=sts)
    got = (await cluster.kubectl("get", "sts", "db", "-o", "json")).json()["spec"]
    assert got["template"]["metadata"] == {"creationTimestamp": None, "labels": {"app": "db"}}
    [claim] = got["volumeClaimTemplates"]
    assert claim["metadata"] == {"creationTimestamp": None, "name": "data"}
    assert claim["spec"]["volumeMode"] == "Filesystem" and claim["status"] == {"phase": "Pending"}


POD = """apiVersion: v1
kind: Pod
metadata: {name: fixed}
spec:
  automountServiceAccountToken: false
  nodeSelector: {disk: ssd}
  containers:
  - name: app
    image: nginx
    resources: {limits: {cpu: 100m}}
"""
POD_FORBIDDEN = (
    'The Pod "fixed" is invalid: spec: Forbidden: pod updates may not change fields other than '
    "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` "
    "(only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it "
    "was previously negative)\n")


async def test_pod_spec_immutability_prints_go_cmp_diff(cluster: Cluster) -> None:
    """ValidatePodUpdate's message with cmp.Diff(oldPod.Spec, mungedPodSpec) of the internal structs."""
    await cluster.kubectl("create", "-f", "-", stdin=POD)
    scalar = await cluster.kubectl("patch", "pod", "fixed", "-p", '{"spec":{"restartPolicy":"Never"}}', check=False)
    assert scalar.code == 1
    assert scalar.err == POD_FORBIDDEN + (
        "  core.PodSpec{\n"
        "  \t... // 2 identical fields\n"
        '  \tContainers:                    {{Name: "app", Image: "nginx", Resources: {Limits: {s"cpu": {i: {...}, '
        's: "100m", Format: "DecimalSI"}}, Requests: {s"cpu": {i: {...}, s: "100m", Format: "DecimalSI"}}}, '
        'TerminationMessagePath: "/dev/termination-log", ...}},\n'
        "  \tEphemeralContainers:           nil,\n"
        '- \tRestartPolicy:                 "Always",\n'
        '+ \tRestartPolicy:                 "Never",\n'
        "  \tTerminationGracePeriodSeconds: &30,\n"
        "  \tActiveDeadlineSeconds:         nil,\n"
        "  \t... // 27 identical fields\n"
        "  }\n\n")  # kubectl's MultilineError adds a newline after the cause's own
    container = await cluster.kubectl("patch", "pod", "fixed", "-p",
                                      '{"spec":{"containers":[{"name":"app","workingDir":"/srv"}]}}', check=False)
    assert container.err == POD_FORBIDDEN + (
        "  core.PodSpec{\n"
        "  \tVolumes:        nil,\n"
        "  \tInitContainers: nil,\n"
        "  \tContainers: []core.Container{\n"
        "  \t\t{\n"
        "  \t\t\t... // 2 identical fields\n"
        "  \t\t\tCommand:    nil,\n"
        "  \t\t\tArgs:       nil,\n"
        '- \t\t\tWorkingDir: "",\n'
        '+ \t\t\tWorkingDir: "/srv",\n'
        "  \t\t\tPorts:      nil,\n"
        "  \t\t\tEnvFrom:    nil,\n"
        "  \t\t\t... // 17 identical fields\n"
        "  \t\t},\n"
        "  \t},\n"
        "  \tEphemeralContainers: nil,\n"
        '  \tRestartPolicy:       "Always",\n'
        "  \t... // 29 identical fields\n"
        "  }\n\n")
    entry = await cluster.kubectl("patch", "pod", "fixed", "-p", '{"spec":{"nodeSelector":{"zone":"a"}}}', check=False)
    assert entry.err == POD_FORBIDDEN + (
        "  core.PodSpec{\n"
        "  \t... // 6 identical fields\n"
        "  \tActiveDeadlineSeconds: nil,\n"
        '  \tDNSPolicy:             "ClusterFirst",\n'
        "  \tNodeSelector: map[string]string{\n"
        '  \t\t"disk": "ssd",\n'
        '+ \t\t"zone": "a",\n'
        "  \t},\n"
        '  \tServiceAccountName:           "default",\n'
        "  \tAutomountServiceAccountToken: &false,\n"
        "  \t... // 23 identical fields\n"
        "  }\n\n")
