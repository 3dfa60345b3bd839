"""ServiceAccount admission: a Pod naming an account its namespace does not have is refused with
upstream's Forbidden; one created right after its account is admitted."""

from __future__ import annotations

from typing import Any

from api_helpers import Client


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
