"""Resource resolution and the table's upstream facts."""

from __future__ import annotations

import pytest

from kconsole.api.registry import Registry
from kconsole.api.types import StatusError


@pytest.mark.parametrize("typed,expected", [
    ("po", "pods"), ("pod", "pods"), ("Pod", "pods"), ("pods", "pods"), ("deploy", "deployments.apps"),
    ("deployments.apps", "deployments.apps"), ("rs", "replicasets.apps"), ("hpa", "horizontalpodautoscalers.autoscaling"),
    ("pdb", "poddisruptionbudgets.policy"), ("pc", "priorityclasses.scheduling.k8s.io"), ("ev", "events"),
    ("sd", "schedulingdecisions.kconsole.dev"), ("cj", "cronjobs.batch"), ("leases", "leases.coordination.k8s.io"),
    ("ClusterRoleBinding", "clusterrolebindings.rbac.authorization.k8s.io"), ("ns", "namespaces"),
])
def test_resolve_names_like_kubectl(typed: str, expected: str) -> None:
    assert Registry().resolve(typed).group_resource == expected


def test_group_and_version_constrain_resolution() -> None:
    reg = Registry()
    assert reg.resolve("deployments", "apps", "v1").kind == "Deployment"
    with pytest.raises(StatusError) as err:
        reg.resolve("deployments", "apps", "v1beta1")
    assert err.value.code == 404
    with pytest.raises(StatusError):
        reg.resolve("deployments", "")
    with pytest.raises(StatusError) as err:
        reg.resolve("widgets")
    assert 'doesn\'t have a resource type "widgets"' in err.value.message
    with pytest.raises(StatusError) as err:
        reg.resolve("widgets", "apps")  # a group and no version: no "apps/None"
    assert err.value.message == 'the server doesn\'t have a resource type "widgets" in apps'
    with pytest.raises(StatusError) as err:
        reg.resolve("widgets", "apps", "v1")
    assert err.value.message == 'the server doesn\'t have a resource type "widgets" in apps/v1'


def test_table_facts() -> None:
    reg = Registry()
    assert {s.resource for s in reg.categories("all")} == {
        "pods", "services", "deployments", "replicasets", "daemonsets", "statefulsets", "jobs", "cronjobs",
        "horizontalpodautoscalers", "replicationcontrollers"}
    pods = reg.resolve("pods")
    assert pods.info.subresources == ("status", "binding", "eviction", "log", "ephemeralcontainers", "exec",
                                      "attach", "portforward", "proxy")
    assert pods.graceful_delete
    deploy = reg.resolve("deploy")
    assert deploy.scale is not None and deploy.bump_generation and deploy.has_status
    assert reg.resolve("nodes").namespaced is False and "spec.unschedulable" in reg.resolve("nodes").field_selectors
    assert reg.resolve("selfsubjectaccessreviews").info.verbs == ("create",)
    sd = reg.resolve("schedulingdecisions")
    assert sd.info.categories == ("kconsole",) and sd.namespaced
