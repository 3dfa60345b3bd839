"""Helpers for the end-to-end tests: boot a composed cluster on the virtual clock, read what a user sees."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from kconsole.client import StatusError
from kconsole.cluster import Cluster, ClusterConfig
from kconsole.clock import VirtualClock

Obj = dict[str, Any]


async def boot(data_dir: Path, **kw: Any) -> Cluster:
    """A started cluster whose scheduler and controller-manager leaders are elected."""
    clock = VirtualClock()
    config = ClusterConfig(http=False, data_dir=data_dir, manifests=None, **kw)
    cluster = Cluster(config, clock=clock)
    task = asyncio.create_task(cluster.start())
    await clock.run_until(task.done, timeout=60, step=0.1)
    task.result()
    await clock.run_until(lambda: any(s.is_leader for s in cluster.schedulers)
                          and any(m.is_leader for m in cluster.controller_managers), timeout=30, step=0.5)
    return cluster


async def shutdown(cluster: Cluster) -> None:
    clock = vclock(cluster)
    task = asyncio.create_task(cluster.stop())
    await clock.run_until(task.done, timeout=60, step=0.1)


def vclock(cluster: Cluster) -> VirtualClock:
    assert isinstance(cluster.clock, VirtualClock)
    return cluster.clock


async def get_or_none(cluster: Cluster, resource: str, name: str, namespace: str | None = "default") -> Obj | None:
    try:
        return await cluster.api_client().get(resource, name, namespace)
    except StatusError as err:
        if err.code == 404:
            return None
        raise


def condition(obj: Obj | None, ctype: str) -> str:
    for c in ((obj or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return str(c.get("status"))
    return ""


def phase(pod: Obj) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


def owned_by(obj: Obj, uid: str) -> bool:
    return any(ref.get("uid") == uid for ref in obj["metadata"].get("ownerReferences") or [])


async def pods_of(cluster: Cluster, namespace: str, selector: str) -> list[Obj]:
    """Pods matching ``selector`` that are not being deleted."""
    pods = await cluster.api_client().list_all("pods", namespace, label_selector=selector)
    return [p for p in pods if not p["metadata"].get("deletionTimestamp")]


async def running(cluster: Cluster, namespace: str, selector: str) -> list[Obj]:
    return [p for p in await pods_of(cluster, namespace, selector) if phase(p) == "Running"]


async def events_for(cluster: Cluster, namespace: str, kind: str, name: str) -> list[Obj]:
    """Events about one object, oldest first by store revision."""
    events = await cluster.api_client().list_all("events", namespace)
    out = [e for e in events if e["involvedObject"].get("kind") == kind and e["involvedObject"].get("name") == name]
    return sorted(out, key=lambda e: int(e["metadata"]["resourceVersion"]))


def deployment(name: str, image: str, replicas: int, namespace: str = "default", **spec: Any) -> Obj:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": namespace},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": name, "image": image}]}}, **spec}}
