"""The real kubectl where kconsole once differed from a kubeadm cluster: impersonation (--as), errors
for kinds kconsole does not serve, JSON patch failures, rollout undo."""

from __future__ import annotations

import base64
import json
import re

import pytest

from http_env import Cluster

from kconsole.api.types import Credentials, Request, Response, UserInfo
from kconsole.nodes.logs import LogBuffer

pytestmark = [pytest.mark.kubectl, pytest.mark.asyncio(loop_scope="module")]


async def test_as_user_runs_the_request_as_that_user(cluster: Cluster) -> None:
    await cluster.kubectl("create", "namespace", "imp")
    await cluster.kubectl("create", "role", "pod-reader", "-n", "imp", "--verb=get,list", "--resource=pods")
    await cluster.kubectl("create", "rolebinding", "carol-reads", "-n", "imp", "--role=pod-reader", "--user=carol")
    await cluster.kubectl("create", "serviceaccount", "bot", "-n", "imp")
    await cluster.kubectl("create", "rolebinding", "bot-reads", "-n", "imp", "--role=pod-reader",
                          "--serviceaccount=imp:bot")

    assert (await cluster.kubectl("auth", "can-i", "list", "pods", "-n", "imp", "--as=carol")).out.strip() == "yes"
    denied = await cluster.kubectl("auth", "can-i", "delete", "pods", "-n", "imp", "--as=carol", check=False)
    assert (denied.code, denied.out.strip()) == (1, "no")
    forbidden = await cluster.kubectl("create", "configmap", "x", "-n", "imp", "--as=carol", check=False)
    assert forbidden.code == 1
    assert 'configmaps is forbidden: User "carol" cannot create resource "configmaps" in API group "" in the ' \
           'namespace "imp"' in forbidden.err

    sa = "--as=system:serviceaccount:imp:bot"
    assert (await cluster.kubectl("get", "pods", "-n", "imp", sa, check=False)).code == 0
    sa_denied = await cluster.kubectl("get", "secrets", "-n", "imp", sa, check=False)
    assert 'User "system:serviceaccount:imp:bot" cannot list resource "secrets"' in sa_denied.err
    # A group given with --as-group grants what the group is bound to.
    await cluster.kubectl("create", "rolebinding", "ops-reads", "-n", "imp", "--role=pod-reader", "--group=ops")
    assert (await cluster.kubectl("auth", "can-i", "list", "pods", "-n", "imp", "--as=dave",
                                  "--as-group=ops")).out.strip() == "yes"
    assert (await cluster.kubectl("auth", "can-i", "list", "pods", "-n", "imp", "--as=dave",
                                  check=False)).out.strip() == "no"


async def test_a_node_identity_reads_no_secret_of_pods_elsewhere(cluster: Cluster) -> None:
    """Node,RBAC authorization: a kubelet's identity reads a Secret only for a pod bound to it."""
    await cluster.kubectl("create", "namespace", "sec")
    await cluster.kubectl("create", "secret", "generic", "topsecret", "-n", "sec", "--from-literal=k=v")
    node = ("--as=system:node:worker-1", "--as-group=system:nodes")
    denied = await cluster.kubectl("-n", "sec", "get", "secret", "topsecret", *node, check=False)
    assert denied.code == 1 and "topsecret" not in denied.out
    assert ('secrets "topsecret" is forbidden: User "system:node:worker-1" cannot get resource "secrets" in API '
            "group \"\" in the namespace \"sec\": no relationship found between node 'worker-1' and this object"
            in denied.err)
    listed = await cluster.kubectl("-n", "sec", "get", "secrets", *node, check=False)
    assert listed.code == 1 and 'cannot list resource "secrets"' in listed.err
    await cluster.admin("create", "pods", namespace="sec", body={
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "uses-it"},
        "spec": {"nodeName": "worker-1", "containers": [{"name": "c", "image": "nginx"}],
                 "volumes": [{"name": "s", "secret": {"secretName": "topsecret"}}]}})
    allowed = await cluster.kubectl("-n", "sec", "get", "secret", "topsecret", "-o", "name", *node)
    assert allowed.out.strip() == "secret/topsecret"


async def test_impersonation_needs_the_impersonate_verb(cluster: Cluster) -> None:
    erin = cluster.kubeconfig_for(UserInfo("erin"))
    refused = await cluster.kubectl("get", "pods", "--as=admin", check=False, kubeconfig=erin)
    assert refused.code == 1
    assert 'users "admin" is forbidden: User "erin" cannot impersonate resource "users" in API group "" at the ' \
           'cluster scope' in refused.err
    group = await cluster.kubectl("get", "pods", "--as=erin", "--as-group=system:masters", check=False,
                                  kubeconfig=erin)
    assert 'cannot impersonate resource "users"' in group.err
    await cluster.kubectl("create", "clusterrole", "impersonate-frank", "--verb=impersonate", "--resource=users",
                          "--resource-name=frank")
    await cluster.kubectl("create", "clusterrolebinding", "erin-as-frank", "--clusterrole=impersonate-frank",
                          "--user=erin")
    await cluster.kubectl("create", "clusterrolebinding", "frank-views", "--clusterrole=view", "--user=frank")
    assert (await cluster.kubectl("get", "pods", "--as=frank", kubeconfig=erin)).code == 0
    masters = await cluster.kubectl("get", "pods", "--as=frank", "--as-group=system:masters", check=False,
                                    kubeconfig=erin)
    assert 'groups "system:masters" is forbidden: User "erin" cannot impersonate resource "groups"' in masters.err


async def test_whoami_names_the_caller_and_the_impersonated_user(cluster: Cluster) -> None:
    me = await cluster.kubectl("auth", "whoami", "-o", "json")
    assert me.json()["status"]["userInfo"]["username"] == "admin"
    other = await cluster.kubectl("auth", "whoami", "--as=gina", "--as-group=devs")
    rows = [line.split(None, 1) for line in other.out.splitlines()]
    assert ["Username", "gina"] in rows and ["Groups", "[devs system:authenticated]"] in rows


async def test_unknown_subresources_get_upstreams_error(cluster: Cluster) -> None:
    role = await cluster.kubectl("create", "rolebinding", "x", "--role=nope", "--user=x", "--dry-run=client",
                                 "-o", "json")
    subresource = await cluster.kubectl("create", "--raw", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/"
                                        "rolebindings/x/approval", "-f", "-", stdin=role.out, check=False)
    assert "could not find the requested resource (rolebindings.rbac.authorization.k8s.io/approval)" in \
        subresource.err


async def test_a_json_patch_that_cannot_apply_is_refused_as_upstream(cluster: Cluster) -> None:
    """Upstream's 422 says nothing of why (NewGenericServerResponse); kconsole leaked the Python
    library's text (``0 (<class 'int'>) is not equal to tested value 5``)."""
    await cluster.kubectl("create", "configmap", "jp", "--from-literal=a=1")
    for patch in ('[{"op":"remove","path":"/data/missing"}]', '[{"op":"test","path":"/data/a","value":"5"}]'):
        failed = await cluster.kubectl("patch", "configmap", "jp", "--type=json", "-p", patch, check=False)
        assert failed.code == 1
        assert failed.err.strip() == ("The request is invalid: the server rejected our request due to an error in "
                                      "our request")


async def test_rollout_undo_restores_the_old_replicasets_template(cluster: Cluster) -> None:
    """kubectl sends the old template with Go's ``creationTimestamp: null``; stored as such it no longer
    equalled the old ReplicaSet's template, and the controller made a new ReplicaSet, not the old one."""
    await cluster.kubectl("create", "deployment", "undo", "--image=nginx:1.25")
    deploy = (await cluster.kubectl("get", "deployment", "undo", "-o", "json")).json()
    old_template = json.loads(json.dumps(deploy["spec"]["template"]))
    old_template["metadata"]["labels"]["pod-template-hash"] = "old"
    await cluster.admin("create", "replicasets", namespace="default", body={
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": "undo-old", "labels": old_template["metadata"]["labels"],
                     "annotations": {"deployment.kubernetes.io/revision": "1"},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "undo",
                                          "uid": deploy["metadata"]["uid"], "controller": True}]},
        "spec": {"replicas": 0, "selector": {"matchLabels": old_template["metadata"]["labels"]},
                 "template": old_template}})
    await cluster.kubectl("set", "image", "deployment/undo", "nginx=nginx:1.26")
    await cluster.kubectl("annotate", "deployment", "undo", "deployment.kubernetes.io/revision=2", "--overwrite")
    await cluster.kubectl("rollout", "undo", "deployment/undo", "--to-revision=1")
    restored = (await cluster.kubectl("get", "deployment", "undo", "-o", "json")).json()["spec"]["template"]
    del old_template["metadata"]["labels"]["pod-template-hash"]
    assert restored == old_template


UNKNOWN_FIELDS = """apiVersion: v1
kind: ConfigMap
metadata: {name: typos, lables: {a: b}}
data: {a: "1"}
dta: {b: "2"}
"""

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: strict}
spec:
  %s: 2
  selector: {matchLabels: {app: strict}}
  template:
    metadata: {labels: {app: strict}}
    spec:
      containers:
      - name: c
        image: nginx
        %s: {requests: {cpu: 100m}}
"""


async def test_apply_refuses_fields_the_kind_does_not_have(cluster: Cluster) -> None:
    """kubectl 1.32 leaves field validation to a server whose OpenAPI takes fieldValidation; kconsole
    advertised it and stored the typos (``lables``, ``dta``) as fields."""
    for args in (["apply", "-f", "-"], ["create", "-f", "-"]):
        refused = await cluster.kubectl(*args, stdin=UNKNOWN_FIELDS, check=False)
        assert refused.code == 1
        assert 'error when creating "STDIN": ConfigMap in version "v1" cannot be handled as a ConfigMap: strict ' \
               'decoding error: unknown field "dta", unknown field "metadata.lables"' in refused.err
    assert (await cluster.kubectl("get", "configmap", "typos", check=False)).code == 1
    ssa = await cluster.kubectl("apply", "--server-side", "-f", "-", stdin=UNKNOWN_FIELDS, check=False)
    assert ssa.code == 1 and 'unknown field "metadata.lables"' in ssa.err

    nested = await cluster.kubectl("apply", "-f", "-", stdin=DEPLOYMENT % ("replicas", "resource"), check=False)
    assert 'unknown field "spec.template.spec.containers[0].resource"' in nested.err
    await cluster.kubectl("apply", "-f", "-", stdin=DEPLOYMENT % ("replicas", "resources"))
    patched = await cluster.kubectl("apply", "-f", "-", stdin=DEPLOYMENT % ("replica", "resources"), check=False)
    assert patched.code == 1 and 'strict decoding error: unknown field "spec.replica"' in patched.err
    live = (await cluster.kubectl("get", "deployment", "strict", "-o", "json")).json()
    assert "replica" not in live["spec"] and live["spec"]["replicas"] == 2


async def test_validate_warn_drops_unknown_fields_and_says_which(cluster: Cluster) -> None:
    warned = await cluster.kubectl("apply", "--validate=warn", "-f", "-", stdin=UNKNOWN_FIELDS)
    assert "configmap/typos created" in warned.out
    assert 'Warning: unknown field "metadata.lables"' in warned.err and 'Warning: unknown field "dta"' in warned.err
    stored = (await cluster.kubectl("get", "configmap", "typos", "-o", "json")).json()
    assert "dta" not in stored and "lables" not in stored["metadata"] and stored["data"] == {"a": "1"}
    await cluster.kubectl("delete", "configmap", "typos")
    ignored = await cluster.kubectl("apply", "--validate=false", "-f", "-", stdin=UNKNOWN_FIELDS)
    assert "configmap/typos created" in ignored.out and "Warning" not in ignored.err


async def test_health_checks_list_in_upstreams_order(cluster: Cluster) -> None:
    for page, last in (("/livez?verbose", "livez check passed"), ("/readyz?verbose", "readyz check passed")):
        lines = (await cluster.kubectl("get", "--raw", page)).out.splitlines()
        assert lines[:3] == ["[+]ping ok", "[+]log ok", "[+]etcd ok"] and lines[-1] == last


async def test_get_componentstatuses_prints_upstreams_table_and_deprecation_warning(cluster: Cluster) -> None:
    cluster.api.set_component_probe(lambda: {"scheduler": False, "controller-manager": True})
    try:
        got = await cluster.kubectl("get", "cs")
        assert got.err.strip() == "Warning: v1 ComponentStatus is deprecated in v1.19+"
        rows = [re.split(r"\s{2,}", line.strip()) for line in got.out.splitlines()]  # MESSAGE may be empty
        assert rows == [["NAME", "STATUS", "MESSAGE", "ERROR"], ["controller-manager", "Healthy", "ok"],
                        ["scheduler", "Unhealthy", 'Get "https://127.0.0.1:10259/healthz": dial tcp '
                                                   "127.0.0.1:10259: connect: connection refused"],
                        ["etcd-0", "Healthy", "ok"]]
        one = json.loads((await cluster.kubectl("get", "componentstatus", "etcd-0", "-o", "json")).out)
        assert one["conditions"] == [{"type": "Healthy", "status": "True", "message": "ok"}]
        missing = await cluster.kubectl("get", "cs", "kube-proxy", check=False)
        assert 'componentstatuses "kube-proxy" not found' in missing.err
        refused = await cluster.kubectl("delete", "cs", "scheduler", check=False)
        assert refused.code == 1 and "(MethodNotAllowed)" in refused.err
        explained = (await cluster.kubectl("explain", "cs.conditions.status")).out
        assert 'Valid values for "Healthy": "True",' in explained
    finally:
        cluster.api.set_component_probe(None)
    assert [c.split()[0] for c in (await cluster.kubectl("get", "cs")).out.splitlines()[1:]] == ["etcd-0"]


async def test_get_raw_metrics_counts_kubectls_own_requests_for_whom_rbac_lets_read_it(cluster: Cluster) -> None:
    """``kubectl get --raw /metrics``: upstream's apiserver_* lines, kubectl's list counted in them; a user
    without a grant on the path is refused, the system:monitoring group is not."""
    await cluster.kubectl("get", "namespaces")
    text = (await cluster.kubectl("get", "--raw", "/metrics")).out
    lists = re.search(r'^apiserver_request_total\{code="200",component="apiserver",dry_run="",group="",'
                      r'resource="namespaces",scope="cluster",subresource="",verb="LIST",version="v1"\} (\d+)$',
                      text, re.M)
    assert lists and int(lists[1]) >= 1
    assert "# TYPE apiserver_request_duration_seconds histogram" in text
    assert re.search(r'^apiserver_storage_objects\{resource="namespaces"\} [1-9]', text, re.M)
    denied = await cluster.kubectl("get", "--raw", "/metrics", "--as=jane", check=False)
    assert (denied.code, denied.err.strip()) == (
        1, 'Error from server (Forbidden): forbidden: User "jane" cannot get path "/metrics"')
    monitored = await cluster.kubectl("get", "--raw", "/metrics", "--as=prom", "--as-group=system:monitoring")
    assert 'code="403",component="apiserver",dry_run="",group="",resource="",scope="",subresource="/metrics",' \
           'verb="GET",version=""} 1' in monitored.out
    assert (await cluster.kubectl("auth", "can-i", "get", "/metrics", "--as=prom",
                                  "--as-group=system:monitoring")).out.strip() == "yes"


PRUNED = """apiVersion: v1
kind: ConfigMap
metadata: {name: keep, labels: {set: prune}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, labels: {set: prune}}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
"""


async def test_apply_prune_with_kubectls_default_allowlist(cluster: Cluster) -> None:
    """kubectl's default prune allowlist names PersistentVolumeClaims, ReplicationControllers, Ingresses
    and PersistentVolumes; without them every ``apply --prune`` failed with 'no matches for kind'."""
    extra = "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: gone, labels: {set: prune}}\n"
    first = await cluster.kubectl("apply", "--prune", "-l", "set=prune", "-f", "-", stdin=PRUNED + extra)
    assert "configmap/gone created" in first.out and "persistentvolumeclaim/data created" in first.out
    claim = (await cluster.kubectl("get", "pvc", "data", "-o", "json")).json()
    assert claim["status"] == {"phase": "Pending"} and claim["spec"]["volumeMode"] == "Filesystem"
    second = await cluster.kubectl("apply", "--prune", "-l", "set=prune", "-f", "-", stdin=PRUNED)
    assert "configmap/gone pruned" in second.out
    assert (await cluster.kubectl("get", "configmap", "gone", check=False)).code == 1
    assert (await cluster.kubectl("get", "configmap", "keep")).code == 0


async def test_logs_flags_read_the_stored_lines_as_the_kubelet_does(cluster: Cluster) -> None:
    """--previous, --timestamps, --since, --since-time, --tail and --limit-bytes were ignored."""
    await cluster.kubectl("run", "once", "--image=busybox")
    clock = cluster.clock
    previous, current = LogBuffer(clock.now), LogBuffer(clock.now)
    previous.write("first run")
    await clock.advance(100 - clock.now() % 1)
    start = clock.now()
    current.write("early")
    await clock.advance(0.25)
    current.write("middle")
    await clock.advance(3600)
    current.write("late")
    cluster.api.set_log_source(lambda ns, name, container, options:
                               (previous if options.previous else current).text(options))
    try:
        refused = await cluster.kubectl("logs", "once", "--previous", check=False)
        assert refused.code == 1
        assert refused.err.strip() == 'Error from server (BadRequest): previous terminated container "once" in ' \
                                      'pod "once" not found'
        pod = await cluster.admin("get", "pods", namespace="default", name="once")
        pod["status"]["containerStatuses"] = [{
            "name": "once", "image": "busybox", "imageID": "", "ready": False, "restartCount": 1,
            "state": {"running": {"startedAt": "2026-01-01T00:00:10Z"}},
            "lastState": {"terminated": {"exitCode": 1, "reason": "Error", "startedAt": "2026-01-01T00:00:00Z",
                                         "finishedAt": "2026-01-01T00:00:05Z"}}}]
        await cluster.admin("update", "pods", namespace="default", name="once", subresource="status", body=pod)
        assert (await cluster.kubectl("logs", "once", "--previous")).out == "first run\n"
        assert (await cluster.kubectl("logs", "once")).out == "early\nmiddle\nlate\n"
        stamped = (await cluster.kubectl("logs", "once", "--timestamps", "--tail=2")).out
        assert stamped == f"{clock.rfc3339(start + 0.25)[:-1]}.25Z middle\n{clock.rfc3339(clock.now())[:-1]}.25Z late\n"
        assert (await cluster.kubectl("logs", "once", "--since=1h")).out == "middle\nlate\n"
        assert (await cluster.kubectl("logs", "once", "--since=10m")).out == "late\n"
        assert (await cluster.kubectl("logs", "once", f"--since-time={clock.rfc3339(start)}")).out == \
            "early\nmiddle\nlate\n"
        assert (await cluster.kubectl("logs", "once", "--tail=2", "--since=10m")).out == "late\n"
        assert (await cluster.kubectl("logs", "once", "--limit-bytes=8")).out == "early\nmi"
        assert (await cluster.kubectl("logs", "once", "--limit-bytes=7")).out == "early\nm"
    finally:
        cluster.api.set_log_source(None)


async def test_debug_adds_an_ephemeral_container_to_the_pod(cluster: Cluster) -> None:
    """kubectl debug patches pods/ephemeralcontainers (strategic merge); before it existed kubectl said
    "ephemeral containers are disabled for this cluster"."""
    await cluster.kubectl("run", "debuggee", "--image=nginx")
    debug = await cluster.kubectl("debug", "debuggee", "--image=busybox", "--profile=general",
                                  "--container=dbg", "--target=debuggee", "--", "sh")
    assert debug.code == 0 and "Targeting container \"debuggee\"" in debug.out
    got = json.loads((await cluster.kubectl("get", "pod", "debuggee", "-o", "json")).out)
    assert [(c["name"], c["image"], c.get("targetContainerName")) for c in got["spec"]["ephemeralContainers"]] == [
        ("dbg", "busybox", "debuggee")]
    wrong = await cluster.kubectl("debug", "debuggee", "--image=busybox", "--profile=general", "--target=app",
                                  check=False)
    assert wrong.code == 1
    assert 'spec.ephemeralContainers[1].targetContainerName: Not found: "app"' in wrong.err


async def test_create_token_authenticates_as_the_service_account(cluster: Cluster) -> None:
    await cluster.kubectl("create", "namespace", "tokens")
    await cluster.kubectl("create", "serviceaccount", "robot", "-n", "tokens")
    await cluster.kubectl("create", "role", "pod-reader", "-n", "tokens", "--verb=list", "--resource=pods")
    await cluster.kubectl("create", "rolebinding", "robot-reads", "-n", "tokens", "--role=pod-reader",
                          "--serviceaccount=tokens:robot")
    token = (await cluster.kubectl("create", "token", "robot", "-n", "tokens")).out.strip()
    assert token
    nobody = cluster.kubeconfig_for(UserInfo("nobody"))
    who = (await cluster.kubectl("auth", "whoami", "-o", "json", f"--token={token}", kubeconfig=nobody)).json()
    assert who["status"]["userInfo"]["username"] == "system:serviceaccount:tokens:robot"
    assert "system:serviceaccounts:tokens" in who["status"]["userInfo"]["groups"]
    assert (await cluster.kubectl("get", "pods", "-n", "tokens", f"--token={token}", kubeconfig=nobody)).code == 0
    denied = await cluster.kubectl("get", "secrets", "-n", "tokens", f"--token={token}", check=False,
                                   kubeconfig=nobody)
    assert 'User "system:serviceaccount:tokens:robot" cannot list resource "secrets"' in denied.err
    short = await cluster.kubectl("create", "token", "robot", "-n", "tokens", "--duration=1m", check=False)
    assert "spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes" in short.err
    missing = await cluster.kubectl("create", "token", "ghost", "-n", "tokens", check=False)
    assert 'serviceaccounts "ghost" not found' in missing.err
    brief = (await cluster.kubectl("create", "token", "robot", "-n", "tokens", "--duration=10m")).out.strip()
    await cluster.clock.advance(599)
    assert (await cluster.kubectl("get", "pods", "-n", "tokens", f"--token={brief}", kubeconfig=nobody)).code == 0
    await cluster.clock.advance(2)
    expired = await cluster.kubectl("get", "pods", "-n", "tokens", f"--token={brief}", check=False,
                                    kubeconfig=nobody)
    assert expired.code == 1 and "error: You must be logged in to the server (Unauthorized)" in expired.err


def claims_of(token: str) -> dict:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


async def test_service_account_tokens_are_jwts_bound_to_what_they_name(cluster: Cluster) -> None:
    """A token decodes as upstream's does, and stops working when its account or bound Pod goes."""
    await cluster.kubectl("create", "namespace", "jwt")
    await cluster.kubectl("create", "serviceaccount", "robot", "-n", "jwt")
    await cluster.kubectl("create", "serviceaccount", "default", "-n", "jwt")  # no controller-manager here
    await cluster.kubectl("create", "clusterrolebinding", "robot-views", "--clusterrole=view",
                          "--serviceaccount=jwt:robot")
    await cluster.kubectl("run", "worker", "-n", "jwt", "--image=nginx", "--overrides",
                          '{"spec": {"serviceAccountName": "robot"}}')
    nobody = cluster.kubeconfig_for(UserInfo("nobody"))

    async def works(token: str) -> bool:
        return (await cluster.kubectl("get", "pods", "-n", "jwt", f"--token={token}", kubeconfig=nobody,
                                      check=False)).code == 0

    plain = (await cluster.kubectl("create", "token", "robot", "-n", "jwt")).out.strip()
    header = json.loads(base64.urlsafe_b64decode(plain.split(".")[0] + "=="))
    assert header["alg"] == "ES256" and header["kid"]
    claims = claims_of(plain)
    assert claims["iss"] == claims["aud"][0] == "https://kubernetes.default.svc.cluster.local"
    assert claims["sub"] == "system:serviceaccount:jwt:robot" and claims["exp"] - claims["iat"] == 3600
    assert claims["kubernetes.io"]["serviceaccount"]["name"] == "robot"

    pod_uid = json.loads((await cluster.kubectl("get", "pod", "worker", "-n", "jwt", "-o", "json")).out)[
        "metadata"]["uid"]
    bound = (await cluster.kubectl("create", "token", "robot", "-n", "jwt", "--bound-object-kind=Pod",
                                   "--bound-object-name=worker")).out.strip()
    assert claims_of(bound)["kubernetes.io"]["pod"] == {"name": "worker", "uid": pod_uid}
    elsewhere = (await cluster.kubectl("create", "token", "robot", "-n", "jwt", "--audience=vault")).out.strip()
    assert await works(plain) and await works(bound)
    assert not await works(elsewhere), "a token for another audience does not log in to the API server"
    wrong = await cluster.kubectl("create", "token", "default", "-n", "jwt", "--bound-object-kind=Pod",
                                  "--bound-object-name=worker", check=False)
    assert 'cannot bind token for serviceaccount "default" to pod running with different serviceaccount' in wrong.err

    await cluster.kubectl("delete", "pod", "worker", "-n", "jwt", "--grace-period=0", "--force")
    assert not await works(bound) and await works(plain), "only the Pod-bound token went with the Pod"
    await cluster.kubectl("delete", "serviceaccount", "robot", "-n", "jwt")
    await cluster.kubectl("create", "serviceaccount", "robot", "-n", "jwt")
    assert not await works(plain), "a recreated account (new uid) does not revive old tokens"


async def test_explain_knows_every_field_of_every_served_kind(cluster: Cluster) -> None:
    """Only Pod, Deployment, Service and ConfigMap had field schemas: explain of a Job's container
    image or an Ingress rule said 'field "image" does not exist'."""
    image = (await cluster.kubectl("explain", "job.spec.template.spec.containers.image")).out
    assert "FIELD: image <string>" in image and "Container image name." in image
    paths = (await cluster.kubectl("explain", "ingress.spec.rules.http.paths")).out
    assert "FIELD: paths <[]HTTPIngressPath>" in paths and "pathType\t<string>" in paths
    lease = (await cluster.kubectl("explain", "lease.spec.renewTime")).out
    assert "FIELD: renewTime <string>" in lease
    typo = await cluster.kubectl("explain", "job.spec.template.spec.containers.imagee", check=False)
    assert typo.code == 1 and 'field "imagee" does not exist' in typo.err


async def test_kubectl_autoscale_creates_an_autoscaling_v1_hpa(cluster: Cluster) -> None:
    """kubectl autoscale posts autoscaling/v1; only v2 was served, so it failed with 'the server doesn't
    have a resource type "horizontalpodautoscalers" in autoscaling/v1'."""
    await cluster.kubectl("create", "deployment", "scaled", "--image=nginx")
    made = await cluster.kubectl("autoscale", "deployment", "scaled", "--min=2", "--max=5", "--cpu-percent=60")
    assert "horizontalpodautoscaler.autoscaling/scaled autoscaled" in made.out
    stored = (await cluster.kubectl("get", "hpa", "scaled", "-o", "json")).json()
    assert stored["apiVersion"] == "autoscaling/v2" and stored["spec"]["minReplicas"] == 2
    assert stored["spec"]["metrics"] == [{"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}]

    v1 = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers"
    seen = json.loads((await cluster.kubectl("get", "--raw", f"{v1}/scaled")).out)
    assert seen["apiVersion"] == "autoscaling/v1" and seen["spec"]["targetCPUUtilizationPercentage"] == 60
    assert seen["status"] == {"currentReplicas": 0, "desiredReplicas": 0}
    listed = json.loads((await cluster.kubectl("get", "--raw", v1)).out)
    assert listed["apiVersion"] == "autoscaling/v1" and listed["items"][0]["spec"]["maxReplicas"] == 5

    # v2-only fields survive a v1 client's read-modify-write, through annotations as upstream.
    await cluster.kubectl("patch", "hpa", "scaled", "--type=merge", "-p",
                          '{"spec":{"behavior":{"scaleDown":{"stabilizationWindowSeconds":30}}}}')
    seen = json.loads((await cluster.kubectl("get", "--raw", f"{v1}/scaled")).out)
    seen["spec"]["targetCPUUtilizationPercentage"] = 75
    await cluster.kubectl("replace", "-f", "-", stdin=json.dumps(seen))
    after = (await cluster.kubectl("get", "hpa", "scaled", "-o", "json")).json()
    assert after["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 75
    assert after["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"] == 30
    assert "autoscaling.alpha.kubernetes.io/behavior" not in after["metadata"].get("annotations", {})

    token = cluster.api.tokens.issue(UserInfo("admin", ("system:masters",)))
    stream = await cluster.api.handle(Request("watch", "horizontalpodautoscalers", group="autoscaling",
                                              version="v1", namespace="default",
                                              credentials=Credentials(token=token)))
    assert not isinstance(stream, Response)
    try:
        event = await anext(aiter(stream))
        assert event["object"]["apiVersion"] == "autoscaling/v1"
        assert event["object"]["spec"]["targetCPUUtilizationPercentage"] == 75
    finally:
        await stream.close()


async def test_a_node_port_another_service_holds_is_refused(cluster: Cluster) -> None:
    await cluster.kubectl("create", "service", "nodeport", "first", "--tcp=80:80", "--node-port=30111")
    second = await cluster.kubectl("create", "service", "nodeport", "second", "--tcp=80:80", "--node-port=30111",
                                   check=False)
    assert second.code == 1
    assert second.err.strip() == 'error: failed to create NodePort service: Service "second" is invalid: ' \
                                 'spec.ports[0].nodePort: Invalid value: 30111: provided port is already allocated'
    # The holder itself keeps it across an update.
    await cluster.kubectl("label", "service", "first", "tier=edge")
    await cluster.kubectl("delete", "service", "first")
    await cluster.kubectl("create", "service", "nodeport", "second", "--tcp=80:80", "--node-port=30111")


async def test_kubectl_top_reads_the_usage_the_kubelets_publish(cluster: Cluster) -> None:
    """kubectl top said 'Metrics API not available'; metrics.k8s.io is now served from the usage the
    simulated kubelets publish on running pods, and the steady idle use of pods requesting nothing
    (`kubectl create deployment` pods had no metrics at all)."""
    ready = {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status"}
    await cluster.admin("create", "nodes", body={
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "top-node", "annotations": {"kconsole.dev/system-cpu-usage": "100m",
                                                         "kconsole.dev/system-memory-usage": "512Mi"}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi"}, "capacity": {"cpu": "4", "memory": "8Gi"},
                   "conditions": [ready]}})
    await cluster.kubectl("create", "namespace", "top")
    requesting = '{"spec": {"containers": [{"name": "new", "image": "nginx", "resources": {"requests": {"cpu": "1"}}}]}}'
    for name, cpu, memory in (("busy", "750m", "256Mi"), ("idle", "250m", "64Mi"), ("new", None, None),
                              ("quiet", None, None)):
        await cluster.kubectl("run", name, "-n", "top", "--image=nginx", "--labels=app=top",
                              *(["--overrides", requesting] if name == "new" else []))
        await cluster.admin("create", "pods", namespace="top", name=name, subresource="binding", body={
            "apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
            "target": {"kind": "Node", "name": "top-node"}})
        pod = await cluster.admin("get", "pods", namespace="top", name=name)
        if cpu is not None:
            pod["metadata"].setdefault("annotations", {}).update(
                {"kconsole.dev/cpu-usage": cpu, "kconsole.dev/memory-usage": memory})
            pod = await cluster.admin("update", "pods", namespace="top", name=name, body=pod)
        pod["status"]["phase"] = "Running"
        await cluster.admin("update", "pods", namespace="top", name=name, subresource="status", body=pod)
    pods = (await cluster.kubectl("top", "pods", "-n", "top", "--sum")).out.splitlines()
    assert pods[0].split() == ["NAME", "CPU(cores)", "MEMORY(bytes)"]
    assert pods[1].split() == ["busy", "750m", "256Mi"] and pods[2].split() == ["idle", "250m", "64Mi"]
    name, quiet_cpu, quiet_memory = pods[3].split()
    assert name == "quiet" and 1 <= int(quiet_cpu.rstrip("m")) <= 3 and 3 <= int(quiet_memory.rstrip("Mi")) <= 15
    cpu_sum, memory_sum = 1000 + int(quiet_cpu.rstrip("m")), 320 + int(quiet_memory.rstrip("Mi"))
    assert pods[-1].split() == [f"{cpu_sum}m", f"{memory_sum}Mi"]
    node = (await cluster.kubectl("top", "node", "top-node")).out.splitlines()
    assert node[1].split()[:2] == ["top-node", f"{cpu_sum + 100}m"], "its pods and what runs outside them"
    assert node[1].split()[3] == f"{memory_sum + 512}Mi"
    pending = await cluster.kubectl("top", "pod", "new", "-n", "top", check=False)
    assert pending.err.strip() == 'Error from server (NotFound): podmetrics.metrics.k8s.io "top/new" not found'
    listed = await cluster.kubectl("top", "pod", "-n", "top", "--field-selector=metadata.name=new", check=False)
    assert listed.code == 1 and "Metrics not available for pod top/new" in listed.err

    # Its kubelet stops posting: metrics-server could not scrape it, nor its pods.
    node_obj = await cluster.admin("get", "nodes", name="top-node")
    node_obj["status"]["conditions"] = [{**ready, "status": "Unknown", "reason": "NodeStatusUnknown"}]
    await cluster.admin("update", "nodes", name="top-node", subresource="status", body=node_obj)
    unknown = await cluster.kubectl("top", "node", "top-node", check=False)
    assert unknown.err.strip() == 'Error from server (NotFound): nodemetrics.metrics.k8s.io "top-node" not found'
    gone = await cluster.kubectl("top", "pods", "-n", "top", check=False)
    assert gone.code == 1 and gone.err.startswith("error: Metrics not available for pod top/busy, age: ")


async def test_statefulset_history_reads_controller_revisions(cluster: Cluster) -> None:
    """kubectl rollout history sts/x failed with 'the server doesn't have a resource type
    "controllerrevisions"'; the resource is served for the controllers' revision history."""
    await cluster.admin("create", "statefulsets", group="apps", namespace="default", body={
        "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "hist"},
        "spec": {"serviceName": "hist", "selector": {"matchLabels": {"app": "hist"}},
                 "template": {"metadata": {"labels": {"app": "hist"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
    sts = await cluster.admin("get", "statefulsets", group="apps", namespace="default", name="hist")
    await cluster.admin("create", "controllerrevisions", group="apps", namespace="default", body={
        "apiVersion": "apps/v1", "kind": "ControllerRevision",
        "metadata": {"name": "hist-7d4b8c6f5", "labels": {"app": "hist"},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "hist",
                                          "uid": sts["metadata"]["uid"], "controller": True}]},
        "revision": 1, "data": {"spec": {"template": sts["spec"]["template"]}}})
    history = await cluster.kubectl("rollout", "history", "statefulset/hist")
    assert history.out.split()[:5] == ["statefulset.apps/hist", "REVISION", "CHANGE-CAUSE", "1", "<none>"]
    listed = await cluster.kubectl("get", "controllerrevisions")
    assert "hist-7d4b8c6f5" in listed.out


async def test_a_gated_pod_shows_scheduling_gated(cluster: Cluster) -> None:
    gated = ("apiVersion: v1\nkind: Pod\nmetadata: {name: gated}\n"
             "spec: {schedulingGates: [{name: example.com/quota}], containers: [{name: c, image: nginx}]}\n")
    await cluster.kubectl("apply", "-f", "-", stdin=gated)
    row = (await cluster.kubectl("get", "pod", "gated", "--no-headers")).out.split()
    assert row[:3] == ["gated", "0/1", "SchedulingGated"]
    pod = (await cluster.kubectl("get", "pod", "gated", "-o", "json")).json()
    assert pod["status"]["conditions"][0]["reason"] == "SchedulingGated"
    await cluster.kubectl("run", "ungated", "--image=nginx")
    assert "conditions" not in (await cluster.admin("get", "pods", namespace="default", name="ungated"))["status"]


async def test_server_side_apply_of_an_autoscaling_v1_hpa(cluster: Cluster) -> None:
    manifest = """apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata: {name: ssa-v1}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: ssa-v1}
  maxReplicas: 4
  targetCPUUtilizationPercentage: %d
"""
    created = await cluster.kubectl("apply", "--server-side", "-f", "-", stdin=manifest % 40)
    assert "horizontalpodautoscaler.autoscaling/ssa-v1 serverside-applied" in created.out
    await cluster.kubectl("apply", "--server-side", "-f", "-", stdin=manifest % 65)
    stored = (await cluster.kubectl("get", "hpa", "ssa-v1", "-o", "json", "--show-managed-fields")).json()
    assert stored["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 65
    assert stored["spec"]["maxReplicas"] == 4
    assert [m["manager"] for m in stored["metadata"]["managedFields"]] == ["kubectl"]


async def test_a_stored_unknown_field_does_not_block_later_applies(cluster: Cluster) -> None:
    """Objects stored before fieldValidation was honoured may hold a typo'd field; a later client-side
    apply patches them and must fail only for fields its own patch brings."""
    await cluster.admin("create", "configmaps", namespace="default", body={
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "legacy"}, "dta": {"old": "typo"}})
    manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: legacy}\ndata: {a: '%s'}\n"
    await cluster.kubectl("apply", "-f", "-", stdin=manifest % "1")
    await cluster.kubectl("apply", "-f", "-", stdin=manifest % "2")
    assert (await cluster.admin("get", "configmaps", namespace="default", name="legacy"))["data"] == {"a": "2"}
    typo = await cluster.kubectl("apply", "-f", "-", stdin=manifest % "3" + "extra: 1\n", check=False)
    assert typo.code == 1 and 'strict decoding error: unknown field "extra"' in typo.err
    assert 'unknown field "dta"' not in typo.err
