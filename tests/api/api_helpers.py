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


async def open_store(kind: str, request: pytest.FixtureRequest, tmp_path: Path, clock: Any) -> Any:
    """The store a storage test runs on: kconsole's revision log, or an emptied real etcd."""
    if kind == "embedded":
        from kconsole.store.revlog import RevisionLog

        return await RevisionLog.open(tmp_path / "store.db", clock=clock, synchronous="NORMAL")
    from kconsole.store.etcdgw import TLSFiles
    from kconsole.store.etcdreal import RealEtcdCluster
    from kconsole.store.kv import Delete

    local = request.getfixturevalue("real_etcd")
    etcd = RealEtcdCluster(local.servers, tls=TLSFiles(*local.tls_files()), clock=clock)
    await etcd.start()
    await etcd.txn([], [Delete("\0", "\0")])
    return etcd
