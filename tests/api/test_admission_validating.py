"""Validating admission: NamespaceLifecycle, PodSecurity and NodeRestriction denials."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kconsole.api.admission import mutating_plugins, validating_plugins
from kconsole.api.admission.podsecurity import enforced_policy
from kconsole.api.registry import Registry
from kconsole.api.stages import AdmissionContext
from kconsole.api.types import StatusError, UserInfo

REGISTRY = Registry()


def namespace(name: str, phase: str = "Active", **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels}, "status": {"phase": phase}}


NAMESPACES = {
    "default": namespace("default"),
    "kube-system": namespace("kube-system"),
    "dying": namespace("dying", "Terminating"),
    "base": namespace("base", **{"pod-security.kubernetes.io/enforce": "baseline"}),
    "strict": namespace("strict", **{"pod-security.kubernetes.io/enforce": "restricted"}),
    "pinned": namespace("pinned", **{"pod-security.kubernetes.io/enforce": "baseline",
                                     "pod-security.kubernetes.io/enforce-version": "v1.30"}),
    "typo": namespace("typo", **{"pod-security.kubernetes.io/enforce": "basline"}),
}
PODS = {("default", "mine"): {"metadata": {"name": "mine", "uid": "uid-mine"}, "spec": {"nodeName": "n1"}},
        ("default", "theirs"): {"metadata": {"name": "theirs"}, "spec": {"nodeName": "n2"}}}


def get_object(resource: str, ns: str | None, name: str) -> dict[str, Any] | None:
    if resource == "namespaces":
        return NAMESPACES.get(name)
    if resource == "pods":
        return PODS.get((ns or "", name))
    if resource == "nodes" and name == "n1":
        return {"metadata": {"name": "n1", "uid": "uid-n1"}}
    return None


def run(obj: dict[str, Any] | None, resource: str, *, group: str = "", op: str = "CREATE", ns: str | None = "default",
        name: str | None = None, old: dict[str, Any] | None = None, user: UserInfo = UserInfo("alice"),
        subresource: str | None = None) -> dict[str, Any] | None:
    spec = REGISTRY.get(group, resource)
    assert spec is not None
    ctx = AdmissionContext(operation=op, info=spec.info, user=user, namespace=ns if spec.info.namespaced else None,
                           name=name or ((obj or {}).get("metadata") or {}).get("name"), subresource=subresource,
                           now="2026-01-01T00:00:00Z", rng=random.Random(1), get_object=get_object,
                           allocate_cluster_ip=lambda: "10.96.0.2")
    if obj is not None and op in ("CREATE", "UPDATE"):
        for plugin in mutating_plugins():
            plugin.admit(ctx, obj, old)
    for vplugin in validating_plugins():
        vplugin.validate(ctx, obj, old)
    return obj


def pod(name: str = "p", **spec: Any) -> dict[str, Any]:
    containers = spec.pop("containers", [{"name": "c", "image": "nginx"}])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": containers, **spec}}


def denial(fn: Any, *args: Any, **kwargs: Any) -> StatusError:
    with pytest.raises(StatusError) as err:
        fn(*args, **kwargs)
    return err.value


# --------------------------------------------------------------------------- NamespaceLifecycle


def test_create_in_missing_namespace_is_404() -> None:
    err = denial(run, pod(), "pods", ns="nowhere")
    assert err.code == 404 and err.message == 'namespaces "nowhere" not found'


def test_create_in_terminating_namespace_is_403() -> None:
    err = denial(run, {"kind": "ConfigMap", "metadata": {"name": "cm"}}, "configmaps", ns="dying")
    assert err.code == 403
    assert err.message == ('configmaps "cm" is forbidden: unable to create new content in namespace dying because '
                           "it is being terminated")
    err = denial(run, {"kind": "Deployment", "metadata": {"name": "d"}, "spec": {}}, "deployments", group="apps",
                 ns="dying")
    assert err.message.startswith('deployments.apps "d" is forbidden: unable to create new content')


def test_updates_and_deletes_in_terminating_namespace_pass() -> None:
    cm = {"kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "dying"}}
    run(cm, "configmaps", ns="dying", op="UPDATE", old=dict(cm))
    run(None, "configmaps", ns="dying", op="DELETE", name="cm", old=cm)


@pytest.mark.parametrize("name", ["default", "kube-system", "kube-public", "kube-node-lease"])
def test_system_namespaces_cannot_be_deleted(name: str) -> None:
    err = denial(run, None, "namespaces", op="DELETE", ns=None, name=name, old=namespace(name))
    assert err.code == 403
    assert err.message == f'namespaces "{name}" is forbidden: this namespace may not be deleted'


def test_other_namespaces_can_be_deleted() -> None:
    run(None, "namespaces", op="DELETE", ns=None, name="base", old=NAMESPACES["base"])


# --------------------------------------------------------------------------- PodSecurity


def test_privileged_namespace_allows_anything() -> None:
    run(pod(hostNetwork=True, containers=[{"name": "c", "image": "x", "securityContext": {"privileged": True}}]),
        "pods")


def test_baseline_denial_message() -> None:
    bad = pod("x", hostNetwork=True, hostPID=True,
              containers=[{"name": "c", "image": "x", "securityContext": {"privileged": True}}])
    err = denial(run, bad, "pods", ns="base")
    assert err.code == 403
    assert err.message == (
        'pods "x" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true, '
        'hostPID=true), privileged (container "c" must not set securityContext.privileged=true)')


def test_baseline_hostpath_hostports_capabilities() -> None:
    bad = pod("x", volumes=[{"name": "root", "hostPath": {"path": "/"}}],
              containers=[{"name": "a", "image": "x", "ports": [{"containerPort": 80, "hostPort": 8080}],
                           "securityContext": {"capabilities": {"add": ["NET_ADMIN", "CHOWN"]}}},
                          {"name": "b", "image": "x", "ports": [{"containerPort": 81, "hostPort": 8081}]}])
    err = denial(run, bad, "pods", ns="pinned")
    assert err.message == (
        'pods "x" is forbidden: violates PodSecurity "baseline:v1.30": non-default capabilities (container "a" must '
        'not include "NET_ADMIN" in securityContext.capabilities.add), hostPath volumes (volume "root"), hostPort '
        '(containers "a", "b" use hostPorts 8080, 8081)')


def test_baseline_allows_ordinary_pods() -> None:
    run(pod(), "pods", ns="base")


def test_restricted_lists_every_missing_setting() -> None:
    err = denial(run, pod("nginx", containers=[{"name": "nginx", "image": "nginx"}]), "pods", ns="strict")
    assert err.message == (
        'pods "nginx" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false '
        '(container "nginx" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities '
        '(container "nginx" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or '
        'container "nginx" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "nginx" '
        'must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")')


def test_restricted_accepts_a_hardened_pod() -> None:
    good = pod("ok", securityContext={"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
               containers=[{"name": "c", "image": "x", "securityContext": {
                   "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}}}],
               volumes=[{"name": "cfg", "configMap": {"name": "cfg"}}])
    run(good, "pods", ns="strict")


def test_restricted_explicit_bad_values() -> None:
    bad = pod("x", securityContext={"runAsNonRoot": False, "runAsUser": 0, "seccompProfile": {"type": "Unconfined"}},
              containers=[{"name": "c", "image": "x", "securityContext": {
                  "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}}])
    err = denial(run, bad, "pods", ns="strict")
    assert "runAsNonRoot != true (pod must not set securityContext.runAsNonRoot=false)" in err.message
    assert "runAsUser=0 (pod must not set runAsUser=0)" in err.message
    assert 'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")' in err.message
    assert "non-default capabilities" not in err.message


def test_invalid_level_label_enforces_restricted() -> None:
    assert enforced_policy(NAMESPACES["typo"]) == ("restricted", "latest")
    assert "restricted:latest" in denial(run, pod(), "pods", ns="typo").message


def test_pod_security_ignores_updates_and_other_kinds() -> None:
    dep = {"kind": "Deployment", "metadata": {"name": "d"},
           "spec": {"template": {"spec": {"hostNetwork": True, "containers": [{"name": "c", "image": "x"}]}}}}
    run(dep, "deployments", group="apps", ns="base")


def test_a_debug_container_is_judged_with_its_pod() -> None:
    """kubectl debug into a restricted namespace: the pod passed, its root shell does not."""
    hardened = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
    good = pod("ok", securityContext={"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
               containers=[{"name": "c", "image": "x", "securityContext": hardened}])
    run(good, "pods", ns="strict")
    debugged = {**good, "spec": {**good["spec"], "ephemeralContainers": [{"name": "dbg", "image": "busybox"}]}}
    err = denial(run, debugged, "pods", op="UPDATE", ns="strict", old=good, subresource="ephemeralcontainers")
    assert err.message.startswith('pods "ok" is forbidden: violates PodSecurity "restricted:latest": '
                                  'allowPrivilegeEscalation != false (container "dbg" must set')
    debugged["spec"]["ephemeralContainers"][0]["securityContext"] = hardened
    run(debugged, "pods", op="UPDATE", ns="strict", old=good, subresource="ephemeralcontainers")


# --------------------------------------------------------------------------- NodeRestriction

NODE1 = UserInfo("system:node:n1", ("system:nodes", "system:authenticated"))


def test_node_may_update_only_its_own_node() -> None:
    n1 = {"kind": "Node", "metadata": {"name": "n1"}}
    run(n1, "nodes", op="UPDATE", ns=None, old=dict(n1), user=NODE1, subresource="status")
    n2 = {"kind": "Node", "metadata": {"name": "n2"}}
    err = denial(run, n2, "nodes", op="UPDATE", ns=None, old=dict(n2), user=NODE1, subresource="status")
    assert err.code == 403
    assert err.message == 'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"'


def test_node_may_touch_only_pods_bound_to_it() -> None:
    run({"kind": "Pod", "metadata": {"name": "mine"}, "spec": {"nodeName": "n1"}}, "pods", op="UPDATE",
        old=PODS[("default", "mine")], user=NODE1, subresource="status")
    err = denial(run, {"kind": "Pod", "metadata": {"name": "theirs"}, "spec": {"nodeName": "n2"}}, "pods",
                 op="UPDATE", old=PODS[("default", "theirs")], user=NODE1, subresource="status")
    assert "can only update pod status for pods with spec.nodeName set to itself" in err.message
    err = denial(run, None, "pods", op="DELETE", name="theirs", user=NODE1)
    assert err.message == 'pods "theirs" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself'
    run(None, "pods", op="DELETE", name="mine", user=NODE1)


def test_node_lease_must_be_its_own() -> None:
    lease = {"kind": "Lease", "metadata": {"name": "n2"}, "spec": {}}
    err = denial(run, lease, "leases", group="coordination.k8s.io", ns="kube-node-lease", op="UPDATE",
                 old=dict(lease), user=NODE1)
    assert "can only access node lease with the same name as the requesting node" in err.message


def mirror(**spec: Any) -> dict[str, Any]:
    body = pod("kube-apiserver-n1", **{"nodeName": "n1", **spec})
    body["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "abc"}
    body["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Node", "name": "n1", "uid": "uid-n1",
                                            "controller": True}]
    return body


def test_node_creates_only_mirror_pods_of_its_own() -> None:
    run(mirror(), "pods", ns="kube-system", user=NODE1)
    plain = pod("p", nodeName="n1")
    assert denial(run, plain, "pods", user=NODE1).message == (
        'pods "p" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only '
        "create mirror pods")
    elsewhere = mirror(nodeName="n2")
    assert 'node "n1" can only create pods with spec.nodeName set to itself' in denial(
        run, elsewhere, "pods", ns="kube-system", user=NODE1).message
    orphan = mirror()
    del orphan["metadata"]["ownerReferences"]
    assert 'node "n1" can only create pods with an owner reference set to itself' in denial(
        run, orphan, "pods", ns="kube-system", user=NODE1).message
    wrong_uid = mirror()
    wrong_uid["metadata"]["ownerReferences"][0]["uid"] = "forged"
    assert "node n1 UID mismatch: expected uid-n1 got forged" in denial(
        run, wrong_uid, "pods", ns="kube-system", user=NODE1).message
    for spec, what in (({"serviceAccountName": "builder"}, "a service account"),
                       ({"volumes": [{"name": "v", "secret": {"secretName": "s"}}]}, "secrets"),
                       ({"imagePullSecrets": [{"name": "s"}]}, "secrets"),
                       ({"volumes": [{"name": "v", "configMap": {"name": "c"}}]}, "configmaps"),
                       ({"volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "c"}}]},
                        "persistentvolumeclaims")):
        err = denial(run, mirror(**spec), "pods", ns="kube-system", user=NODE1)
        assert err.message.endswith(f'node "n1" can not create pods that reference {what}'), err.message


def test_node_may_not_relabel_or_untaint_itself() -> None:
    old = {"kind": "Node", "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
           "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]}}
    ok = {"kind": "Node", "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1", "team": "a",
                                                                "node.kubernetes.io/instance-type": "big"}},
          "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]}}
    run(ok, "nodes", op="UPDATE", ns=None, old=old, user=NODE1)
    untainted = {"kind": "Node", "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}}, "spec": {}}
    assert denial(run, untainted, "nodes", op="UPDATE", ns=None, old=old, user=NODE1).message == \
        'nodes "n1" is forbidden: node "n1" is not allowed to modify taints'
    promoted = {"kind": "Node", "metadata": {"name": "n1", "labels": {
        "kubernetes.io/hostname": "n1", "node-role.kubernetes.io/control-plane": "",
        "node-restriction.kubernetes.io/pci": "yes"}}, "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]}}
    assert denial(run, promoted, "nodes", op="UPDATE", ns=None, old=old, user=NODE1).message == (
        'nodes "n1" is forbidden: is not allowed to modify labels: node-restriction.kubernetes.io/pci, '
        "node-role.kubernetes.io/control-plane")


def test_node_pod_status_keeps_labels_and_claims_only_their_status() -> None:
    old = {"kind": "Pod", "metadata": {"name": "mine", "labels": {"app": "a"}}, "spec": {"nodeName": "n1"}}
    new = {"kind": "Pod", "metadata": {"name": "mine", "labels": {"app": "b"}}, "spec": {"nodeName": "n1"}}
    assert denial(run, new, "pods", op="UPDATE", old=old, user=NODE1, subresource="status").message.endswith(
        'node "n1" cannot update labels through pod status')
    claim = {"kind": "PersistentVolumeClaim", "metadata": {"name": "c", "resourceVersion": "1"},
             "spec": {"resources": {}}, "status": {"phase": "Bound"}}
    grown = {**claim, "metadata": {"name": "c", "resourceVersion": "2"},
             "status": {"phase": "Bound", "capacity": {"storage": "2Gi"}}}
    run(grown, "persistentvolumeclaims", op="UPDATE", old=claim, user=NODE1, subresource="status")
    relabelled = {**grown, "metadata": {"name": "c", "labels": {"x": "y"}}}
    assert "is not allowed to update fields other than status.capacity and status.conditions" in denial(
        run, relabelled, "persistentvolumeclaims", op="UPDATE", old=claim, user=NODE1, subresource="status").message
    assert denial(run, relabelled, "persistentvolumeclaims", op="UPDATE", old=claim,
                  user=NODE1).message.endswith("may only update PVC status")


def test_node_evicts_and_asks_tokens_only_for_its_pods() -> None:
    eviction = {"kind": "Eviction", "metadata": {"name": "theirs"}}
    err = denial(run, eviction, "pods", name="theirs", user=NODE1, subresource="eviction")
    assert err.message == 'pods "theirs" is forbidden: node n1 can only evict pods with spec.nodeName set to itself'
    run({"kind": "Eviction", "metadata": {"name": "mine"}}, "pods", name="mine", user=NODE1, subresource="eviction")

    def token(ref: dict[str, Any] | None) -> dict[str, Any]:
        return {"kind": "TokenRequest", "spec": {"boundObjectRef": ref}}

    sa = dict(name="default", user=NODE1, subresource="token")
    run(token({"apiVersion": "v1", "kind": "Pod", "name": "mine", "uid": "uid-mine"}), "serviceaccounts", **sa)
    for ref, why in ((None, "node requested token not bound to a pod"),
                     ({"apiVersion": "v1", "kind": "Pod", "name": "mine"},
                      "node requested token with a pod binding without a uid"),
                     ({"apiVersion": "v1", "kind": "Pod", "name": "theirs", "uid": "u"},
                      "the UID in the bound object reference (u) does not match the UID in record. The object might "
                      "have been deleted and then recreated")):
        assert denial(run, token(ref), "serviceaccounts", **sa).message.endswith(why)


def test_a_node_without_a_name_is_refused() -> None:
    nameless = UserInfo("system:node:", ("system:nodes",))
    n1 = {"kind": "Node", "metadata": {"name": "n1"}}
    assert denial(run, n1, "nodes", op="UPDATE", ns=None, old=dict(n1), user=nameless).message.endswith(
        'could not determine node from user "system:node:"')


def test_other_users_are_not_restricted() -> None:
    n2 = {"kind": "Node", "metadata": {"name": "n2"}}
    run(n2, "nodes", op="UPDATE", ns=None, old=dict(n2), user=UserInfo("system:kube-controller-manager"))


def test_a_changed_namespace_is_a_new_object_and_judged_again() -> None:
    ns = {"metadata": {"name": "n", "labels": {"pod-security.kubernetes.io/enforce": "baseline"}}}
    assert enforced_policy(ns) == ("baseline", "latest")
    assert enforced_policy(ns) == ("baseline", "latest")
    changed = {"metadata": {"name": "n", "labels": {"pod-security.kubernetes.io/enforce": "restricted",
                                                    "pod-security.kubernetes.io/enforce-version": "v1.30"}}}
    assert enforced_policy(changed) == ("restricted", "v1.30")
    assert enforced_policy({"metadata": {"name": "n"}}) == ("privileged", "latest")


# --------------------------------------------------------------------------- Priority


def test_only_one_priorityclass_is_the_global_default() -> None:
    stored = [{"metadata": {"name": "first"}, "value": 10, "globalDefault": True},
              {"metadata": {"name": "other"}, "value": 5}]

    def judge(op: str, name: str, default: bool) -> None:
        spec = REGISTRY.get("scheduling.k8s.io", "priorityclasses")
        assert spec is not None
        ctx = AdmissionContext(operation=op, info=spec.info, user=UserInfo("alice"), namespace=None, name=name,
                               now="2026-01-01T00:00:00Z", rng=random.Random(1), get_object=get_object,
                               allocate_cluster_ip=lambda: "10.96.0.2", list_objects=lambda r, ns: stored)
        obj = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
               "value": 20, "globalDefault": default}
        for vplugin in validating_plugins():
            vplugin.validate(ctx, obj, None)

    for op in ("CREATE", "UPDATE"):
        err = denial(judge, op, "other", True)
        assert err.code == 403
        assert err.message == ('priorityclasses.scheduling.k8s.io "other" is forbidden: PriorityClass first is '
                               "already marked as default. Only one default can exist")
    judge("UPDATE", "first", True)
    judge("CREATE", "second", False)
