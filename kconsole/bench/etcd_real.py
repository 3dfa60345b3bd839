"""``kconsole bench store --against-etcd URL``: the store benchmark's writers against a real etcd.

For comparison with kconsole's own members: the same CAS transactions (create = "mod == 0 then put
else get", update = "mod == rv then put else get") and phases, sent to etcd's v3 JSON gateway
(``POST /v3/kv/txn``, etcd 3.4 as Debian's ``etcd-server`` ships it) over one pooled HTTP/1.1
client. The figures include the client's HTTP and JSON cost, which kconsole's in-process writers
do not pay; ``members`` and ``synchronous`` describe kconsole's run, so they are reported as
``null`` here.
"""

from __future__ import annotations

import argparse
import base64
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp

from kconsole.store.kv import TxnResult


def _b64(data: bytes | str) -> str:
    return base64.b64encode(data.encode() if isinstance(data, str) else data).decode()


class EtcdGateway:
    """The two calls the writers make, answered as :class:`TxnResult` like the revision log's."""

    def __init__(self, url: str, session: aiohttp.ClientSession) -> None:
        self.url = url.rstrip("/") + "/v3/kv/txn"
        self.session = session

    async def create(self, key: str, value: bytes) -> TxnResult:
        return await self._cas(key, value, 0)

    async def update(self, key: str, value: bytes, mod_revision: int) -> TxnResult:
        return await self._cas(key, value, mod_revision)

    async def _cas(self, key: str, value: bytes, mod_revision: int) -> TxnResult:
        k = _b64(key)
        body = {
            "compare": [{"key": k, "target": "MOD", "result": "EQUAL", "mod_revision": str(mod_revision)}],
            "success": [{"request_put": {"key": k, "value": _b64(value)}}],
            "failure": [{"request_range": {"key": k}}],
        }
        async with self.session.post(self.url, json=body) as resp:
            doc = await resp.json(content_type=None)
        if resp.status != 200 or "header" not in doc:
            raise SystemExit(f"kconsole bench store: etcd at {self.url} answered {resp.status}: {doc}")
        return TxnResult(bool(doc.get("succeeded")), int(doc["header"]["revision"]), [])


async def run(args: argparse.Namespace, phase: Callable[..., Awaitable[tuple[float, list[float]]]],
              figures: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    value = b"x" * args.value_size
    connector = aiohttp.TCPConnector(limit=args.concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        gateway = EtcdGateway(args.against_etcd, session)
        try:
            elapsed, lat = await phase(gateway, args.concurrency, args.writes, value, "c")
            single_elapsed, single_lat = await phase(gateway, 1, args.single_writes, value, "s")
        except aiohttp.ClientError as err:
            raise SystemExit(f"kconsole bench store: cannot reach etcd at {args.against_etcd}: {err}") from None
    out = figures(args, elapsed, lat, single_elapsed, single_lat)
    return {**out, "store": "real etcd (its own members and syncs)", "members": None, "durability": None,
            "against_etcd": args.against_etcd}
