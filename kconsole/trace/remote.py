"""History reads from a running cluster, over its HTTP front with the data folder's kubeconfig (the
admin's token), for ``kconsole trace export`` and ``kconsole fork`` while the console or ``serve``
holds the folder. Each read is one ``HistoryQuery`` POSTed to ``/apis/history.kconsole.io/v1``, as
the in-process client sends it."""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import yaml

from kconsole.api.types import StatusError, status_body
from kconsole.trace.fileformat import TraceError

PATH = "/apis/history.kconsole.io/v1/historyqueries"
#: Wall seconds one history read may take over HTTP.
TIMEOUT = 120.0


class RemoteClient:
    """The two calls the history reads and the export need (``create``, ``resources``), over HTTP."""

    def __init__(self, kubeconfig: Path) -> None:
        try:
            doc = yaml.safe_load(kubeconfig.read_text(encoding="utf-8")) or {}
            cluster = doc["clusters"][0]["cluster"]
            user = doc["users"][0]["user"]
            self.server = str(cluster["server"]).rstrip("/")
            self.token = str(user["token"])
        except (OSError, yaml.YAMLError, KeyError, IndexError, TypeError) as err:
            raise TraceError(f"{kubeconfig}: cannot read the running cluster's kubeconfig ({err})") from None
        self.context: ssl.SSLContext | None = None
        if self.server.startswith("https:"):
            self.context = ssl.create_default_context()
            ca = cluster.get("certificate-authority-data")
            if ca:
                self.context.load_verify_locations(cadata=base64.b64decode(ca).decode())

    def resources(self) -> list[Any]:
        """The built-in kinds (what every cluster serves); custom resources' objects still come as changes."""
        from kconsole.api.registry import Registry

        return Registry().resources()

    async def create(self, obj: dict[str, Any], **_: Any) -> dict[str, Any]:
        return await asyncio.to_thread(self._post, obj)

    def _post(self, obj: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(self.server + PATH, data=json.dumps(obj).encode(), method="POST",
                                         headers={"Authorization": f"Bearer {self.token}",
                                                  "Content-Type": "application/json",
                                                  "Accept": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT, context=self.context) as answer:
                return json.loads(answer.read())
        except urllib.error.HTTPError as err:
            try:
                body = json.loads(err.read())
            except ValueError:
                body = status_body(err.code, "Unknown", f"{err.code} {err.reason}")
            raise StatusError(body) from None
        except (urllib.error.URLError, OSError) as err:
            raise TraceError(f"the running cluster at {self.server} does not answer: "
                             f"{getattr(err, 'reason', err)}") from None
