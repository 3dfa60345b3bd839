"""Request helpers shared by the API tests (a module name of its own: ``conftest`` clashes across test folders)."""

from __future__ import annotations

from typing import Any

from kconsole.api.server import APIServer
from kconsole.api.types import Credentials, Request, Response


class Client:
    """Thin request builder over APIServer.handle with one user's credentials."""

    def __init__(self, api: APIServer, token: str) -> None:
        self.api = api
        self.creds = Credentials(token=token)

    async def do(self, verb: str, resource: str, **kw: Any) -> Any:
        return await self.api.handle(Request(verb, resource, credentials=self.creds, **kw))

    async def ok(self, verb: str, resource: str, **kw: Any) -> Any:
        resp = await self.do(verb, resource, **kw)
        assert isinstance(resp, Response), resp
        assert resp.ok, resp.body
        return resp.body


def pod(name: str, labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                            "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}
    if labels:
        body["metadata"]["labels"] = labels
    return body
