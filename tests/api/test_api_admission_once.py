"""Which admission plugins a write meets: NamespaceLifecycle judges it once per admission (as a mutating
plugin) and deletions (validating admission only) still face it; a plugin is asked only about its kinds."""

from __future__ import annotations

from typing import Any

from kconsole.api.admission.namespacelifecycle import NamespaceLifecycle
from kconsole.api.server import APIServer
from tests.api.api_helpers import Client, pod


class _Counting(NamespaceLifecycle):
    checks = 0

    def check(self, ctx: Any, obj: Any) -> None:
        type(self).checks += 1
        super().check(ctx, obj)


def _count_checks(api: APIServer) -> None:
    counting = _Counting()
    api.mutating = [counting if isinstance(p, NamespaceLifecycle) else p for p in api.mutating]
    api.validating = [counting if isinstance(p, NamespaceLifecycle) else p for p in api.validating]
    api._judged_early = {_Counting}
    _Counting.checks = 0


async def test_a_create_is_judged_once_and_a_delete_still_is(api: APIServer, admin: Client) -> None:
    _count_checks(api)
    await admin.ok("create", "pods", namespace="default", body=pod("a"))
    assert _Counting.checks == 1
    await admin.ok("update", "pods", namespace="default", name="a",
                   body={**(await admin.ok("get", "pods", namespace="default", name="a")),
                         "metadata": {**(await admin.ok("get", "pods", namespace="default", name="a"))["metadata"],
                                      "labels": {"x": "y"}}})
    assert _Counting.checks == 2
    refused = await admin.do("delete", "namespaces", name="default")
    assert refused.code == 403 and "this namespace may not be deleted" in refused.body["message"]
    assert _Counting.checks == 3
    assert api.audit.recent(1)[0].stage == "validating-admission"


async def test_creates_in_missing_or_terminating_namespaces_are_refused(api: APIServer, admin: Client) -> None:
    missing = await admin.do("create", "pods", namespace="nowhere", body=pod("a"))
    assert missing.code == 404 and missing.body["message"] == 'namespaces "nowhere" not found'
    assert api.audit.recent(1)[0].stage == "mutating-admission"
    await admin.ok("create", "namespaces", body={"metadata": {"name": "dying", "finalizers": ["x/y"]}})
    await admin.ok("create", "configmaps", namespace="dying", body={"metadata": {"name": "keep"}})
    await admin.ok("delete", "namespaces", name="dying")
    await admin.ok("list", "namespaces")  # the namespaces cache holds the deletion
    refused = await admin.do("create", "configmaps", namespace="dying", body={"metadata": {"name": "cm"}})
    assert refused.code == 403
    assert refused.body["message"] == ('configmaps "cm" is forbidden: unable to create new content in namespace '
                                       "dying because it is being terminated")


class _PodOnly:
    name = "PodOnly"
    kinds = frozenset({("", "Pod")})

    def __init__(self) -> None:
        self.seen: list[str] = []

    def admit(self, ctx: Any, obj: Any, old: Any) -> None:
        self.seen.append(ctx.info.kind)


class _Everything(_PodOnly):
    kinds = None  # type: ignore[assignment]


async def test_plugins_are_asked_only_about_their_kinds(api: APIServer, admin: Client) -> None:
    pod_only, everything = _PodOnly(), _Everything()
    api.mutating = [*api.mutating, pod_only, everything]
    await admin.ok("create", "pods", namespace="default", body=pod("a"))
    await admin.ok("create", "configmaps", namespace="default", body={"metadata": {"name": "c"}})
    svc = await admin.ok("create", "services", namespace="default",
                         body={"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}})
    assert pod_only.seen == ["Pod"]
    assert everything.seen == ["Pod", "ConfigMap", "Service"]
    assert svc["spec"]["clusterIP"].startswith("10.")
    created = await admin.ok("get", "pods", namespace="default", name="a")
    assert created["spec"]["serviceAccountName"] == "default" and created["spec"]["priority"] == 0
    assert any(t["key"] == "node.kubernetes.io/not-ready" for t in created["spec"]["tolerations"])


class _Seeing:
    """Records what one admission context holds."""

    name = "Seeing"

    def __init__(self, api: APIServer) -> None:
        self.api = api
        self.seen: list[tuple[Any, ...]] = []

    def admit(self, ctx: Any, obj: Any, old: Any) -> None:
        self.seen.append((ctx.operation, ctx.info.kind, ctx.user.name, ctx.namespace, ctx.name, ctx.subresource,
                          ctx.dry_run, ctx.now, ctx.rng is self.api.rng,
                          ctx.get_object("namespaces", None, "default") is not None,
                          ctx.list_objects("namespaces", None) != [], callable(ctx.allocate_cluster_ip)))


async def test_a_plugin_sees_the_request_in_its_admission_context(api: APIServer, admin: Client) -> None:
    seeing = _Seeing(api)
    api.mutating = [*api.mutating, seeing]
    await admin.ok("create", "pods", namespace="default", body=pod("ctx"), dry_run=True)
    user = api.tokens.authenticate(admin.creds).name
    assert seeing.seen == [("CREATE", "Pod", user, "default", "ctx", None, True, api.now(), True, True, True, True)]
