"""Custom resources in a whole cluster: the garbage collector follows ownerReferences to and from them,
and deleting a namespace deletes its custom objects, as for built-in kinds."""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path
from typing import Any

import yaml

from crd_env import FIXTURES

from kconsole.client import StatusError
from kconsole.cluster import Cluster, ClusterConfig
from kconsole.clock import VirtualClock

CRD: dict[str, Any] = yaml.safe_load((FIXTURES / "crd.yaml").read_text())


async def _boot(data_dir: Path) -> tuple[Cluster, VirtualClock]:
    clock = VirtualClock()
    cluster = Cluster(ClusterConfig(http=False, data_dir=data_dir, manifests=None), clock=clock)
    task = asyncio.create_task(cluster.start())
    await clock.run_until(task.done, timeout=60, step=0.1)
    task.result()
    await clock.run_until(lambda: any(m.is_leader for m in cluster.controller_managers), timeout=30, step=0.5)
    return cluster, clock


async def _gone(cluster: Cluster, resource: str, name: str, namespace: str) -> bool:
    try:
        await cluster.api_client().get(resource, name, namespace)
    except StatusError as err:
        return err.code == 404
    return False


async def _wait_gone(cluster: Cluster, clock: VirtualClock, resource: str, name: str, namespace: str) -> None:
    for _ in range(120):
        if await _gone(cluster, resource, name, namespace):
            return
        await clock.advance(0.5)
    raise AssertionError(f"{resource} {namespace}/{name} was not deleted")


def _owned(obj: dict[str, Any], owner: dict[str, Any]) -> dict[str, Any]:
    obj["metadata"]["ownerReferences"] = [{"apiVersion": owner["apiVersion"], "kind": owner["kind"],
                                           "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"]}]
    return obj


async def test_garbage_collection_and_namespace_deletion_reach_custom_objects(tmp_path: Path) -> None:
    cluster, clock = await _boot(tmp_path)
    client = cluster.api_client()
    try:
        await client.create(copy.deepcopy(CRD))
        for _ in range(100):
            if any(i.resource == "widgets" for i in cluster.api.resources()):
                break
            await clock.advance(0.1)

        def widget(name: str, namespace: str = "default") -> dict[str, Any]:
            return {"apiVersion": "example.com/v1", "kind": "Widget",
                    "metadata": {"name": name, "namespace": namespace}, "spec": {"size": 2}}

        owner = await client.create(widget("owner"))
        owned_cm = await client.create(_owned({"apiVersion": "v1", "kind": "ConfigMap",
                                               "metadata": {"name": "owned-by-widget", "namespace": "default"}}, owner))
        owned_widget = await client.create(_owned(widget("owned-by-cm"), owned_cm))
        await clock.advance(2)
        assert not await _gone(cluster, "configmaps", "owned-by-widget", "default")
        await client.delete("widgets.example.com", "owner", "default")
        await _wait_gone(cluster, clock, "configmaps", "owned-by-widget", "default")
        await _wait_gone(cluster, clock, "widgets.example.com", owned_widget["metadata"]["name"], "default")

        await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}})
        await client.create(widget("in-shop", "shop"))
        await client.delete("namespaces", "shop")
        await _wait_gone(cluster, clock, "widgets.example.com", "in-shop", "shop")
        await _wait_gone(cluster, clock, "namespaces", "shop", None)  # type: ignore[arg-type]
    finally:
        task = asyncio.create_task(cluster.stop())
        await clock.run_until(task.done, timeout=60, step=0.1)
