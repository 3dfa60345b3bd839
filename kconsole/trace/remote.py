"""History reads from a running cluster, over its HTTP front with the data folder's kubeconfig (the
admin's credentials), for ``kconsole trace export`` and ``kconsole fork`` while the console or
``serve`` holds the folder. Each read is one ``HistoryQuery`` created through kconsole's HTTPS
client, as the in-process client sends it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kconsole.api.types import StatusError
from kconsole.trace.fileformat import TraceError


class RemoteClient:
    """The two calls the history reads and the export need (``create``, ``resources``), over HTTPS."""

    def __init__(self, client: Any) -> None:
        self.client = client

    @classmethod
    async def open(cls, kubeconfig: Path) -> RemoteClient:
        from kconsole.client.https import KubeconfigError, connect

        try:
            return cls(await connect(kubeconfig, user_agent="kconsole-trace"))
        except (OSError, KubeconfigError) as err:
            raise TraceError(f"{kubeconfig}: cannot read the running cluster's kubeconfig ({err})") from None
        except StatusError as err:
            raise TraceError(f"the running cluster does not answer: {err.message}") from None

    async def close(self) -> None:
        await self.client.entry.close()

    def resources(self) -> list[Any]:
        """The built-in kinds (what every cluster serves); custom resources' objects still come as changes."""
        from kconsole.api.registry import Registry

        return Registry().resources()

    async def create(self, obj: dict[str, Any], **_: Any) -> dict[str, Any]:
        try:
            return await self.client.create(obj)  # type: ignore[no-any-return]
        except StatusError as err:
            if err.code == 503 and err.message.startswith(self.client.entry.config.server):
                raise TraceError(f"the running cluster does not answer: {err.message}") from None
            raise
