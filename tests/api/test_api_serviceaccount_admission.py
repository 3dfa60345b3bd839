"""ServiceAccount admission: a Pod naming an account its namespace does not have is refused with
upstream's Forbidden; one created right after its account is admitted."""

from __future__ import annotations

import re
from typing import Any

from api_helpers import Client

from kconsole.api.server import APIServer


def _pod(name: str = "", account: str | None = None, generate: str = "", annotations: dict[str, str] | None = None,
         ) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name} if name else {"generateName": generate}
    if annotations:
        meta["annotations"] = annotations
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "nginx"}]}
    if account is not None:
        spec["serviceAccountName"] = account
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


async def test_a_pod_naming_a_missing_account_is_forbidden_with_upstreams_message(admin: Client) -> None:
    resp = await admin.do("create", "pods", namespace="default", body=_pod("web", "robot"))
    assert resp.code == 403
    assert resp.body["message"] == ('pods "web" is forbidden: error looking up service account default/robot: '
                                    'serviceaccount "robot" not found')
    generated = await admin.do("create", "pods", namespace="default", body=_pod(account="robot", generate="web-"))
    assert generated.code == 403 and generated.body["message"].startswith('pods "web-" is forbidden: ')
    assert (await admin.do("get", "pods", namespace="default", name="web")).code == 404


async def test_the_account_created_just_before_is_found_and_default_is_not_required(admin: Client) -> None:
    await admin.ok("create", "serviceaccounts", namespace="default",
                   body={"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot"}})
    pod = await admin.ok("create", "pods", namespace="default", body=_pod("web", "robot"))
    assert pod["spec"]["serviceAccountName"] == pod["spec"]["serviceAccount"] == "robot"
    # No controller-manager here, so no "default" account: kconsole does not require it.
    bare = await admin.ok("create", "pods", namespace="default", body=_pod("bare"))
    assert bare["spec"]["serviceAccountName"] == "default"
    other = await admin.do("create", "pods", namespace="kube-public", body=_pod("web", "robot"))
    assert other.code == 403 and "kube-public/robot" in other.body["message"]


async def test_mirror_pods_are_not_checked(admin: Client) -> None:
    mirror = _pod("etcd-node-1", "ghost", annotations={"kubernetes.io/config.mirror": "abc"})
    await admin.ok("create", "pods", namespace="kube-system", body=mirror)


MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"


async def test_pods_mount_their_accounts_token_unless_they_opt_out(api: APIServer, admin: Client) -> None:
    """With a root CA (the cluster's TLS front), upstream's kube-api-access-* projected volume."""
    api.token_volumes = True
    for name, automount in (("default", None), ("quiet", False)):
        account: dict[str, Any] = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}}
        if automount is not None:
            account["automountServiceAccountToken"] = automount
        await admin.ok("create", "serviceaccounts", namespace="default", body=account)
    with_init = _pod("web")
    with_init["spec"]["initContainers"] = [{"name": "setup", "image": "busybox"}]
    with_init["spec"]["containers"].append({"name": "own", "image": "nginx", "volumeMounts": [
        {"name": "mine", "mountPath": MOUNT_PATH}]})
    with_init["spec"]["volumes"] = [{"name": "mine", "emptyDir": {}}]
    web = await admin.ok("create", "pods", namespace="default", body=with_init)
    volume = web["spec"]["volumes"][-1]
    assert re.fullmatch(r"kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}", volume["name"])
    assert volume["projected"] == {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1",
                                                                       "fieldPath": "metadata.namespace"}}]}}]}
    token_mount = {"name": volume["name"], "readOnly": True, "mountPath": MOUNT_PATH}
    mounts = {c["name"]: c.get("volumeMounts") for c in web["spec"]["initContainers"] + web["spec"]["containers"]}
    assert mounts == {"setup": [token_mount], "c": [token_mount],
                      "own": [{"name": "mine", "mountPath": MOUNT_PATH}]}, "a mount of its own at the path wins"
    other = await admin.ok("create", "pods", namespace="default", body=_pod("other"))
    assert other["spec"]["volumes"][0]["name"] != volume["name"], "each pod its own name"
    owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "controller": True,
             "uid": "7d3c2b1a-0000-4000-8000-000000000001"}
    replicas = []
    for name in ("rs-a", "rs-b"):
        replica = _pod(name)
        replica["metadata"]["ownerReferences"] = [owner]
        replicas.append(await admin.ok("create", "pods", namespace="default", body=replica))
    assert replicas[0]["spec"] == replicas[1]["spec"], "one template, one spec: the API server's caches hold"

    quiet = await admin.ok("create", "pods", namespace="default", body=_pod("q", "quiet"))
    opted_out = _pod("o")
    opted_out["spec"]["automountServiceAccountToken"] = False
    declined = await admin.ok("create", "pods", namespace="default", body=opted_out)
    opted_in = _pod("i", "quiet")
    opted_in["spec"]["automountServiceAccountToken"] = True
    overridden = await admin.ok("create", "pods", namespace="default", body=opted_in)
    assert "volumes" not in quiet["spec"] and "volumes" not in declined["spec"]
    assert overridden["spec"]["volumes"][0]["name"].startswith("kube-api-access-"), "the pod's choice wins"

    api.token_volumes = False
    plain = await admin.ok("create", "pods", namespace="default", body=_pod("plain"))
    assert "volumes" not in plain["spec"], "no CA, no kube-root-ca.crt to mount"
