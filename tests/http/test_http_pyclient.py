"""The official ``kubernetes`` Python client lists, watches, creates and patches over HTTPS."""

from __future__ import annotations

import asyncio
import threading

import pytest
from kubernetes import client, config, watch

from http_env import Cluster

pytestmark = pytest.mark.asyncio(loop_scope="module")


def _core(cluster: Cluster) -> client.CoreV1Api:
    cfg = client.Configuration()
    config.load_kube_config(config_file=str(cluster.kubeconfig), client_configuration=cfg)
    return client.CoreV1Api(client.ApiClient(cfg))


def _apps(cluster: Cluster) -> client.AppsV1Api:
    cfg = client.Configuration()
    config.load_kube_config(config_file=str(cluster.kubeconfig), client_configuration=cfg)
    return client.AppsV1Api(client.ApiClient(cfg))


async def test_create_list_patch(cluster: Cluster) -> None:
    core = _core(cluster)
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py-cm", labels={"from": "python"}),
                              data={"a": "1"})
    created = await asyncio.to_thread(core.create_namespaced_config_map, "default", body)
    assert created.metadata.uid and created.data == {"a": "1"}
    listed = await asyncio.to_thread(core.list_namespaced_config_map, "default", label_selector="from=python")
    assert [c.metadata.name for c in listed.items] == ["py-cm"]
    patched = await asyncio.to_thread(core.patch_namespaced_config_map, "py-cm", "default", {"data": {"b": "2"}})
    assert patched.data == {"a": "1", "b": "2"}
    namespaces = await asyncio.to_thread(core.list_namespace)
    assert {"default", "kube-system"} <= {n.metadata.name for n in namespaces.items}
    apps = _apps(cluster)
    deployment = client.V1Deployment(
        metadata=client.V1ObjectMeta(name="py-web"),
        spec=client.V1DeploymentSpec(
            replicas=1, selector=client.V1LabelSelector(match_labels={"app": "py-web"}),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels={"app": "py-web"}),
                spec=client.V1PodSpec(containers=[client.V1Container(name="web", image="nginx:1.25")]))))
    await asyncio.to_thread(apps.create_namespaced_deployment, "default", deployment)
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.26"}]}}}}
    result = await asyncio.to_thread(apps.patch_namespaced_deployment, "py-web", "default", patch)
    assert [c.image for c in result.spec.template.spec.containers] == ["nginx:1.26"]
    scale = await asyncio.to_thread(apps.patch_namespaced_deployment_scale, "py-web", "default",
                                    {"spec": {"replicas": 3}})
    assert scale.spec.replicas == 3
    missing = await asyncio.to_thread(_status_of, lambda: core.read_namespaced_pod("nope", "default"))
    assert missing == 404


def _status_of(call: object) -> int:
    try:
        call()  # type: ignore[operator]
    except client.ApiException as err:
        return int(err.status)
    return 200


async def test_watch_sees_added_modified_deleted(cluster: Cluster) -> None:
    core = _core(cluster)
    listed = await asyncio.to_thread(core.list_namespaced_config_map, "default")
    rv = listed.metadata.resource_version
    seen: list[tuple[str, str]] = []
    done = threading.Event()
    w = watch.Watch()

    def consume() -> None:
        for event in w.stream(core.list_namespaced_config_map, "default", resource_version=rv,
                              timeout_seconds=30):
            seen.append((event["type"], event["object"].metadata.name))
            if event["type"] == "DELETED" and event["object"].metadata.name == "watched-py":
                w.stop()
        done.set()

    reader = asyncio.get_running_loop().run_in_executor(None, consume)
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="watched-py"), data={"k": "v"})
    await asyncio.to_thread(core.create_namespaced_config_map, "default", body)
    await asyncio.to_thread(core.patch_namespaced_config_map, "watched-py", "default", {"data": {"k": "w"}})
    await asyncio.to_thread(core.delete_namespaced_config_map, "watched-py", "default")
    await asyncio.wait_for(reader, 30)
    assert [e for e in seen if e[1] == "watched-py"] == [("ADDED", "watched-py"), ("MODIFIED", "watched-py"),
                                                          ("DELETED", "watched-py")]


async def test_apiregistration_v1_lists_apiservices(cluster: Cluster) -> None:
    """The client's ApiregistrationV1Api decodes the APIServices (it got 404 before they were served)."""
    cfg = client.Configuration()
    config.load_kube_config(config_file=str(cluster.kubeconfig), client_configuration=cfg)
    api = client.ApiregistrationV1Api(client.ApiClient(cfg))
    listed = await asyncio.to_thread(api.list_api_service)
    by_name = {a.metadata.name: a for a in listed.items}
    assert by_name["v1."].spec.service is None and by_name["v1."].status.conditions[0].reason == "Local"
    metrics = by_name["v1beta1.metrics.k8s.io"]
    assert metrics.spec.service.name == "metrics-server" and metrics.status.conditions[0].status == "True"
