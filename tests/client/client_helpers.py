"""Object builders and a cuttable link shared by the client tests.

:class:`Partition` sits between a client and the real server like a network link that can be cut:
while cut, open watch streams end and new requests get 503, exactly what a component sees when
it loses the API server.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from kconsole.api.types import (
    AuditRecord,
    LogStream,
    Request,
    ResourceInfo,
    Response,
    WatchStream,
    status_body,
)


class Partition:
    """An Entry forwarding to the real server unless the link is cut."""

    def __init__(self, entry: Any) -> None:
        self.entry = entry
        self.cut_off = False
        self._streams: list[WatchStream | LogStream] = []

    async def handle(self, request: Request) -> Response | WatchStream | LogStream:
        if self.cut_off:
            return Response(503, status_body(503, "ServiceUnavailable", "connection refused (partitioned)"))
        result = await self.entry.handle(request)
        if not isinstance(result, Response):
            if self.cut_off:  # cut while the answer was on its way (over HTTPS, headers come later)
                await result.close()
                return Response(503, status_body(503, "ServiceUnavailable", "connection reset (partitioned)"))
            self._streams.append(result)
        return result

    def resources(self) -> list[ResourceInfo]:
        return self.entry.resources()

    def audit_recent(self, n: int = 500) -> list[AuditRecord]:
        return self.entry.audit_recent(n)

    def audit_follow(self) -> AsyncIterator[AuditRecord]:
        return self.entry.audit_follow()

    async def cut(self) -> None:
        self.cut_off = True
        streams, self._streams = self._streams, []
        for stream in streams:
            await stream.close()

    def heal(self) -> None:
        self.cut_off = False


def configmap(name: str, namespace: str = "default", **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace},
            "data": dict(data)}


def pod(name: str, namespace: str = "default", **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace, "labels": labels},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}


def namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


async def make_namespace(env: Any, name: str) -> None:
    """Create a namespace and let the server's caches see it before objects go in."""
    await env.client.create(namespace(name))
    await env.clock.settle()


async def churn_past_watch_window(env: Any, namespace: str = "default") -> None:
    """Write enough, long enough, that the watch cache forgets older versions (> 75 s, > 100 events)."""
    await env.client.create(configmap("churn", namespace))
    for i in range(150):
        await env.client.patch("configmaps", "churn", {"data": {"i": str(i)}}, namespace)
        if i % 50 == 0:
            await env.clock.advance(40)
    await env.clock.advance(5)
