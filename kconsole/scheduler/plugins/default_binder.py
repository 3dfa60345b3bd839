"""DefaultBinder: write the decision as a Binding through ``pods/binding``; nothing else touches the pod."""

from __future__ import annotations

from typing import Any

from kconsole.scheduler.framework import ERROR, Plugin, Status, register
from kconsole.scheduler.podinfo import PodInfo


@register
class DefaultBinder(Plugin):
    name = "DefaultBinder"

    async def bind(self, state: dict[str, Any], pod: PodInfo, node_name: str) -> Status | None:
        try:
            await self.handle.client.bind(pod.pod, node_name)
        except Exception as err:  # the API's StatusError, or a transport failure
            return Status(ERROR, f"binding rejected: {err}")
        return None
