"""The real kubectl 1.32 against the embedded API server over HTTPS: what a user types, what they see."""

from __future__ import annotations

import asyncio
import json
import shutil
from typing import Any

import pytest

from http_env import Cluster

from kconsole.api.types import Credentials, Request, Response, UserInfo

pytestmark = [pytest.mark.kubectl, pytest.mark.asyncio(loop_scope="module")]


def _subset(expected: Any, actual: Any, path: str = "") -> list[str]:
    """Where ``expected`` (kubectl's own client-side rendering) is not contained in ``actual``."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{path}: expected an object, got {actual!r}"]
        out = []
        for k, v in expected.items():
            if v is None or v == {} and k in ("status", "resources", "strategy", "spec"):
                continue
            if k not in actual:
                out.append(f"{path}.{k}: missing (want {v!r})")
            else:
                out += _subset(v, actual[k], f"{path}.{k}")
        return out
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{path}: want {expected!r}, got {actual!r}"]
        return [d for i, (e, a) in enumerate(zip(expected, actual)) for d in _subset(e, a, f"{path}[{i}]")]
    return [] if expected == actual else [f"{path}: want {expected!r}, got {actual!r}"]


TYPED_CREATES = [
    (["create", "namespace", "team-a"], "namespaces", None),
    (["create", "configmap", "cfg", "--from-literal=a=1", "--from-literal=b=two"], "configmaps", "default"),
    (["create", "secret", "generic", "creds", "--from-literal=user=admin"], "secrets", "default"),
    (["create", "deployment", "web", "--image=nginx:1.25", "--replicas=3", "--port=80"], "deployments", "default"),
    (["create", "deployment", "idle", "--image=nginx", "--replicas=0"], "deployments", "default"),
    (["create", "service", "clusterip", "front", "--tcp=80:8080"], "services", "default"),
    (["create", "service", "nodeport", "edge", "--tcp=80:8080", "--node-port=30080"], "services", "default"),
    (["create", "job", "once", "--image=busybox", "--", "echo", "hi"], "jobs", "default"),
    (["create", "cronjob", "tick", "--image=busybox", "--schedule=*/5 * * * *", "--", "date"], "cronjobs", "default"),
    (["run", "solo", "--image=nginx", "--labels=app=solo", "--env=MODE=test", "--port=8080", "--restart=Never"],
     "pods", "default"),
    (["create", "serviceaccount", "robot"], "serviceaccounts", "default"),
    (["create", "role", "reader", "--verb=get,list", "--resource=pods"], "roles", "default"),
    (["create", "clusterrole", "node-reader", "--verb=get", "--resource=nodes"], "clusterroles", None),
    (["create", "rolebinding", "read-it", "--role=reader", "--user=bob", "--serviceaccount=default:robot"],
     "rolebindings", "default"),
    (["create", "clusterrolebinding", "read-nodes", "--clusterrole=node-reader", "--group=devs"],
     "clusterrolebindings", None),
    (["create", "priorityclass", "high", "--value=1000", "--description=urgent"], "priorityclasses", None),
    (["create", "pdb", "web-pdb", "--selector=app=web", "--min-available=50%"], "poddisruptionbudgets", "default"),
    (["expose", "deployment", "web", "--port=80", "--target-port=8080"], "services", "default"),
    (["create", "job", "manual", "--from=cronjob/tick"], "jobs", "default"),
    (["create", "ingress", "front", "--class=nginx", "--rule=foo.com/bar*=front:80,tls=cert",
      "--default-backend=front:http"], "ingresses", "default"),
]


async def test_typed_creates_store_what_kubectl_built(cluster: Cluster) -> None:
    """kubectl sends these as protobuf; the stored object holds everything its own JSON rendering has."""
    for args, resource, namespace in TYPED_CREATES:
        expected = (await cluster.kubectl(*args[:2], "--dry-run=client", "-o", "json", *args[2:])).json()
        await cluster.kubectl(*args)
        stored = await cluster.admin("get", resource, namespace=namespace, name=expected["metadata"]["name"])
        problems = _subset(expected, stored)
        assert not problems, f"kubectl {' '.join(args)}: " + "; ".join(problems)
    secret = await cluster.admin("get", "secrets", namespace="default", name="creds")
    assert secret["data"] == {"user": "YWRtaW4="}
    idle = await cluster.admin("get", "deployments", namespace="default", name="idle")
    assert idle["spec"]["replicas"] == 0


async def test_get_prints_upstream_columns(cluster: Cluster) -> None:
    empty = await cluster.kubectl("get", "pods", "-n", "kube-public")
    assert "No resources found in kube-public namespace." in empty.err
    await cluster.kubectl("run", "table-pod", "--image=nginx", "--labels=tier=web")
    wide = await cluster.kubectl("get", "pods", "table-pod", "-o", "wide")
    header, row = wide.out.splitlines()
    assert header.split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED", "NODE",
                              "READINESS", "GATES"]
    assert row.split()[:4] == ["table-pod", "0/1", "Pending", "0"]
    assert row.split()[5:] == ["<none>"] * 4
    deploys = await cluster.kubectl("get", "deploy", "web")
    assert deploys.out.split()[:6] == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "web"]
    assert deploys.out.splitlines()[1].split()[1:4] == ["0/3", "0", "0"]
    svc = (await cluster.kubectl("get", "svc", "edge")).out.splitlines()[1].split()
    assert svc[1] == "NodePort" and svc[2].startswith("10.") and svc[4] == "80:30080/TCP"
    every = await cluster.kubectl("get", "pods", "-A", "-l", "tier=web")
    assert every.out.split()[:2] == ["NAMESPACE", "NAME"] and "table-pod" in every.out and "solo" not in every.out
    await cluster.kubectl("run", "a-first", "--image=nginx", "--labels=tier=web")
    ordered = await cluster.kubectl("get", "pods", "-l", "tier=web", "--sort-by=.metadata.name", "-o", "name")
    assert ordered.out.split() == ["pod/a-first", "pod/table-pod"]
    sorted_table = await cluster.kubectl("get", "pods", "-l", "tier=web", "--sort-by=.metadata.name")
    assert [line.split()[0] for line in sorted_table.out.splitlines()[1:]] == ["a-first", "table-pod"]
    as_yaml = await cluster.kubectl("get", "pod", "table-pod", "-o", "yaml")
    assert "kind: Pod" in as_yaml.out and "tier: web" in as_yaml.out
    listed = (await cluster.kubectl("get", "configmaps", "-o", "json")).json()
    assert listed["kind"] == "List" and "cfg" in [i["metadata"]["name"] for i in listed["items"]]
    both = await cluster.kubectl("get", "all")
    assert "deployment.apps/web" in both.out and "service/front" in both.out and "pod/solo" in both.out


async def test_nodes_show_status_and_cordon(cluster: Cluster) -> None:
    await cluster.admin("create", "nodes", body={
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "node-1", "labels": {"node-role.kubernetes.io/worker": ""}},
        "status": {"conditions": [{"type": "Ready", "status": "True"}],
                   "nodeInfo": {"kubeletVersion": "v1.32.0"}}})
    await cluster.admin("update", "nodes", name="node-1", subresource="status", body={
        **(await cluster.admin("get", "nodes", name="node-1")),
        "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                   "message": "ready"}], "nodeInfo": {"kubeletVersion": "v1.32.0"}}})
    await cluster.kubectl("cordon", "node-1")
    node = await cluster.admin("get", "nodes", name="node-1")
    assert node["spec"]["unschedulable"] is True
    row = (await cluster.kubectl("get", "nodes")).out.splitlines()[1].split()
    assert row[:3] == ["node-1", "Ready,SchedulingDisabled", "worker"] and row[4] == "v1.32.0"
    await cluster.kubectl("uncordon", "node-1")
    assert not (await cluster.admin("get", "nodes", name="node-1"))["spec"].get("unschedulable")


async def test_drain_cordons_and_evicts(cluster: Cluster) -> None:
    await cluster.admin("create", "nodes", body={"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-2"}})
    await cluster.admin("create", "pods", namespace="default", body={
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "on-node-2"},
        "spec": {"nodeName": "node-2", "containers": [{"name": "c", "image": "busybox"}]}})
    drained = await cluster.kubectl("drain", "node-2", "--force", "--grace-period=0", "--timeout=20s")
    assert drained.out.splitlines() == ["node/node-2 cordoned", "evicting pod default/on-node-2",
                                        "pod/on-node-2 evicted", "node/node-2 drained"]
    assert (await cluster.admin("get", "nodes", name="node-2"))["spec"]["unschedulable"] is True
    pods = await cluster.admin("list", "pods", namespace="default", field_selector="spec.nodeName=node-2")
    assert pods["items"] == []


async def test_client_side_apply_then_reapply_after_edits(cluster: Cluster) -> None:
    manifest = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: shop, labels: {app: shop}}
spec:
  replicas: 2
  selector: {matchLabels: {app: shop}}
  template:
    metadata: {labels: {app: shop}}
    spec:
      containers:
      - {name: web, image: "nginx:1.25", ports: [{containerPort: 80}], env: [{name: A, value: "1"}]}
      - {name: sidecar, image: busybox}
"""
    out = await cluster.kubectl("apply", "-f", "-", stdin=manifest)
    assert out.out.strip() == "deployment.apps/shop created"
    first = await cluster.admin("get", "deployments", namespace="default", name="shop")
    assert "kubectl.kubernetes.io/last-applied-configuration" in first["metadata"]["annotations"]
    edited = (manifest.replace("nginx:1.25", "nginx:1.26").replace('{name: A, value: "1"}', '{name: B, value: "2"}')
              .replace("      - {name: sidecar, image: busybox}\n", ""))
    out = await cluster.kubectl("apply", "-f", "-", stdin=edited)
    assert out.out.strip() == "deployment.apps/shop configured"
    after = await cluster.admin("get", "deployments", namespace="default", name="shop")
    containers = after["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["web"]
    assert containers[0]["image"] == "nginx:1.26" and containers[0]["env"] == [{"name": "B", "value": "2"}]
    assert after["metadata"]["generation"] == first["metadata"]["generation"] + 1
    again = await cluster.kubectl("apply", "-f", "-", stdin=edited)
    assert again.out.strip() == "deployment.apps/shop unchanged"
    invalid = await cluster.kubectl("apply", "-f", "-", check=False,
                                    stdin=manifest.replace("replicas: 2", "replicas: -1"))
    assert invalid.code != 0 and "spec.replicas" in invalid.err


async def test_server_side_apply_conflicts_and_force(cluster: Cluster) -> None:
    doc = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": {"owner": "alice"}}
    out = await cluster.kubectl("apply", "--server-side", "--field-manager=alice", "-f", "-", stdin=json.dumps(doc))
    assert "serverside-applied" in out.out
    stored = await cluster.admin("get", "configmaps", namespace="default", name="ssa")
    assert [m["manager"] for m in stored["metadata"]["managedFields"]] == ["alice"]
    doc["data"]["owner"] = "bob"
    clash = await cluster.kubectl("apply", "--server-side", "--field-manager=bob", "-f", "-", check=False,
                                  stdin=json.dumps(doc))
    assert clash.code != 0
    assert 'conflict with "alice"' in clash.err and ".data.owner" in clash.err
    await cluster.kubectl("apply", "--server-side", "--field-manager=bob", "--force-conflicts", "-f", "-",
                          stdin=json.dumps(doc))
    stored = await cluster.admin("get", "configmaps", namespace="default", name="ssa")
    assert stored["data"] == {"owner": "bob"}
    assert [m["manager"] for m in stored["metadata"]["managedFields"]] == ["bob"]


async def test_scale_rollout_history_and_cascading_delete(cluster: Cluster) -> None:
    await cluster.kubectl("create", "deployment", "scaled", "--image=nginx", "--replicas=1")
    out = await cluster.kubectl("scale", "deployment/scaled", "--replicas=4")
    assert out.out.strip() == "deployment.apps/scaled scaled"
    assert (await cluster.admin("get", "deployments", namespace="default", name="scaled"))["spec"]["replicas"] == 4
    history = await cluster.kubectl("rollout", "history", "deployment/scaled")
    assert history.out.startswith("deployment.apps/scaled")
    deleted = await cluster.kubectl("delete", "deployment", "scaled", "--cascade=foreground", "--wait=false")
    assert deleted.out.strip() == 'deployment.apps "scaled" deleted'
    resp = await cluster.api.handle(Request("get", "deployments", namespace="default", name="scaled",
                                            credentials=Credentials(token=cluster.front.admin_token)))
    assert isinstance(resp, Response)
    if resp.ok:  # no garbage collector yet: the foreground finalizer holds the object
        assert "foregroundDeletion" in resp.body["metadata"]["finalizers"]
        assert resp.body["metadata"].get("deletionTimestamp")
    else:
        assert resp.code == 404
    await cluster.kubectl("create", "configmap", "short-lived")
    await cluster.kubectl("delete", "configmap", "short-lived")
    gone = await cluster.kubectl("get", "configmap", "short-lived", check=False)
    assert gone.code == 1 and 'configmaps "short-lived" not found' in gone.err


async def test_watch_streams_changes(cluster: Cluster) -> None:
    binary = shutil.which("kubectl")
    assert binary is not None, "kubectl is not on PATH"
    env = {"HOME": str(cluster.dir), "KUBECONFIG": str(cluster.kubeconfig),
           "KUBECACHEDIR": str(cluster.dir / "kube-cache")}
    proc = await asyncio.create_subprocess_exec(binary, "get", "configmaps", "-w", "--output-watch-events",
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                                                env=env)
    assert proc.stdout is not None
    try:
        header = await asyncio.wait_for(proc.stdout.readline(), 20)
        assert header.split() == [b"EVENT", b"NAME", b"DATA", b"AGE"]
        await cluster.admin("create", "configmaps", namespace="default",
                            body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "watched"},
                                  "data": {"k": "v"}})
        await cluster.admin("delete", "configmaps", namespace="default", name="watched")
        seen: list[list[str]] = []
        while not any(line[:2] == ["DELETED", "watched"] for line in seen):
            line = await asyncio.wait_for(proc.stdout.readline(), 20)
            seen.append(line.decode().split())
        assert ["ADDED", "watched", "1"] in [s[:3] for s in seen]
    finally:
        proc.terminate()
        await proc.wait()


async def test_describe_events_and_logs(cluster: Cluster) -> None:
    await cluster.kubectl("run", "talker", "--image=busybox")
    pod = await cluster.admin("get", "pods", namespace="default", name="talker")
    await cluster.admin("create", "events", namespace="default", body={
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": "talker.1"},
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "talker", "uid": pod["metadata"]["uid"],
                           "apiVersion": "v1"},
        "reason": "Scheduled", "message": "Successfully assigned default/talker to node-1", "type": "Normal",
        "source": {"component": "default-scheduler"}, "count": 1,
        "firstTimestamp": cluster.clock.rfc3339(), "lastTimestamp": cluster.clock.rfc3339()})
    described = await cluster.kubectl("describe", "pod", "talker")
    assert "Name:             talker" in described.out
    assert "Successfully assigned default/talker to node-1" in described.out
    events = await cluster.kubectl("get", "events", "--field-selector", "involvedObject.name=talker")
    assert events.out.split()[:5] == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT"]
    assert "pod/talker" in events.out and "Scheduled" in events.out
    recent = await cluster.kubectl("events", "--for", "pod/talker")
    assert "Scheduled" in recent.out
    no_logs = await cluster.kubectl("logs", "talker", check=False)
    assert no_logs.code != 0 and "talker" in no_logs.err
    cluster.api.set_log_source(lambda ns, name, container, options: f"hello from {ns}/{name}\nline two\n")
    try:
        logs = await cluster.kubectl("logs", "talker")
        assert logs.out == "hello from default/talker\nline two\n"
    finally:
        cluster.api.set_log_source(None)
    refused = await cluster.kubectl("exec", "talker", "--", "ls", check=False, timeout=20)
    assert refused.err == "Error from server (BadRequest): pod talker does not have a host assigned\n"


async def test_auth_discovery_and_raw(cluster: Cluster) -> None:
    assert (await cluster.kubectl("auth", "can-i", "create", "pods")).out.strip() == "yes"
    listing = await cluster.kubectl("auth", "can-i", "--list")
    assert listing.out.split()[:4] == ["Resources", "Non-Resource", "URLs", "Resource"]
    bob = cluster.kubeconfig_for(UserInfo("bob"))
    denied = await cluster.kubectl("auth", "can-i", "delete", "nodes", check=False, kubeconfig=bob)
    assert denied.code == 1 and denied.out.strip() == "no"
    forbidden = await cluster.kubectl("get", "secrets", check=False, kubeconfig=bob)
    assert 'User "bob" cannot list resource "secrets"' in forbidden.err
    resources = await cluster.kubectl("api-resources")
    assert ["deployments", "deploy", "apps/v1", "true", "Deployment"] in [ln.split() for ln in
                                                                          resources.out.splitlines()]
    info = await cluster.kubectl("cluster-info")
    assert f"Kubernetes control plane is running at {cluster.front.url}" in info.out
    ready = await cluster.kubectl("get", "--raw", "/readyz?verbose")
    assert "[+]etcd ok" in ready.out and ready.out.strip().endswith("readyz check passed")
    raw = json.loads((await cluster.kubectl("get", "--raw", "/api/v1/namespaces/default/configmaps")).out)
    assert raw["kind"] == "ConfigMapList"
    version = await cluster.kubectl("version", "-o", "json")
    assert version.json()["serverVersion"]["minor"] == "32"


async def test_explain_prints_field_descriptions(cluster: Cluster) -> None:
    spec = (await cluster.kubectl("explain", "pod.spec")).out
    assert "FIELD: spec <PodSpec>" in spec
    assert "containers\t<[]Container> -required-" in spec and "List of containers belonging to the pod." in spec
    ports = (await cluster.kubectl("explain", "deployment.spec.template.spec.containers.ports")).out
    assert "containerPort\t<integer>" in ports and "Number of port to expose on the pod's IP address." in ports
    replicas = (await cluster.kubectl("explain", "deploy.spec.replicas")).out
    assert "FIELD: replicas <integer>" in replicas and "Number of desired pods." in replicas
    missing = await cluster.kubectl("explain", "pod.spec.nonsense", check=False)
    assert missing.code != 0 and 'field "nonsense" does not exist' in missing.err


async def test_get_apiservices_lists_the_local_ones_and_metrics(cluster: Cluster) -> None:
    """As on a 1.32 cluster with metrics-server: one Local APIService per built-in group/version."""
    table = await cluster.kubectl("get", "apiservices")
    rows = {line.split()[0]: line.split()[1:3] for line in table.out.splitlines()[1:]}
    assert table.out.split()[:4] == ["NAME", "SERVICE", "AVAILABLE", "AGE"]
    for local in ("v1.", "v1.apps", "v2.autoscaling", "v1.autoscaling", "v1.apiregistration.k8s.io"):
        assert rows[local] == ["Local", "True"], local
    assert rows["v1beta1.metrics.k8s.io"] == ["kube-system/metrics-server", "True"]
    apps = (await cluster.kubectl("get", "apiservice", "v1.apps", "-o", "json")).json()
    assert apps["spec"] == {"group": "apps", "version": "v1", "groupPriorityMinimum": 17800, "versionPriority": 15}
    [cond] = apps["status"]["conditions"]
    assert (cond["type"], cond["status"], cond["reason"]) == ("Available", "True", "Local")
