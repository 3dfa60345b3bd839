"""Helpers for the fault tests: the catalog's events, a running pod, conditions."""

from __future__ import annotations

from typing import Any

from kconsole.client import StatusError
from kconsole.cluster import Cluster
from kconsole.clock import VirtualClock


def vclock(cluster: Cluster) -> VirtualClock:
    assert isinstance(cluster.clock, VirtualClock)
    return cluster.clock


async def fault_events(cluster: Cluster, reason: str | None = None) -> list[dict[str, Any]]:
    """Events written by the catalog, oldest first."""
    faults = cluster.faults
    assert faults is not None
    await vclock(cluster).run_until(lambda: faults.pending_events == 0, timeout=120, step=1)
    events = await cluster.api_client().list_all("events")
    out = [e for e in events if (e.get("source") or {}).get("component") == "kconsole-faults"
           and (reason is None or e["reason"] == reason)]
    return sorted(out, key=lambda e: e["metadata"]["name"])


async def running_pod(cluster: Cluster, name: str, node: str = "worker-1", **container: Any) -> dict[str, Any]:
    """A pod placed on ``node`` (no scheduler involved), once its kubelet reports it Running."""
    admin = cluster.api_client()
    spec_container = {"name": "app", "image": "nginx:1.25", **container}
    await admin.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                        "spec": {"nodeName": node, "containers": [spec_container]}})
    await vclock(cluster).run_until(lambda: phase_is(cluster, name, "Running"), timeout=60, step=0.5)
    return await admin.get("pods", name, "default")


async def phase_is(cluster: Cluster, name: str, want: str) -> bool:
    p = await pod(cluster, name)
    return p is not None and (p.get("status") or {}).get("phase") == want


async def pod(cluster: Cluster, name: str) -> dict[str, Any] | None:
    try:
        return await cluster.api_client().get("pods", name, "default")
    except StatusError as err:
        if err.code == 404:
            return None
        raise


def condition(obj: dict[str, Any] | None, ctype: str) -> str:
    for c in ((obj or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return str(c.get("status"))
    return ""
