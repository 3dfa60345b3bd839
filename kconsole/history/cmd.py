"""``kconsole history KIND/NAME [-n NS] [--diff] [--json]``: one object's story from a shell.

A running cluster (its data folder has ``admin.json``) is asked over HTTPS with the data folder's
admin kubeconfig (``POST /apis/history.kconsole.io/v1/historyqueries``). A stopped data folder is
read directly: the etcd member file with the newest revision, the Secrets' key, and the write log
(``history/writes.sqlite``), answered by the same code the API server runs.

Exit status: 0 printed; 1 no such object in the kept history, or the cluster refused; 2 bad usage.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from kconsole.api.types import StatusError
from kconsole.faultcmd import ADMIN_FILE
from kconsole.kubeconfig import KUBECONFIG
from kconsole.store.kv import StoreError

def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("object", metavar="KIND/NAME", help="the object, as kubectl names it: deployment/web, po/web-1")
    p.add_argument("-n", "--namespace", default="default", help="its namespace (default: default)")
    p.add_argument("--diff", action="store_true", help="print each revision's YAML diff (noise hidden)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--data-dir", default=None, help="the cluster's data folder (default DIR/.kconsole)")
    p.add_argument("--dir", default=".", help="manifest folder whose .kconsole to use (default: .)")


class HttpCreator:
    """``create`` and kind lookup over a running cluster's HTTPS front, through kconsole's HTTPS client."""

    def __init__(self, client: Any) -> None:
        self.client = client

    async def create(self, obj: dict[str, Any], **_: Any) -> dict[str, Any]:
        return await self.client.create(obj)  # type: ignore[no-any-return]

    async def resolve(self, kind: str) -> tuple[str, str, bool]:
        """(resource, group, namespaced) of what a user typed, from the server's discovery."""
        info = self.client.resource_info(kind)
        return info.resource, info.group, info.namespaced


class LocalCreator:
    """``create`` answered from a stopped data folder by the API server's own history code."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.server: Any = None

    async def open(self) -> None:
        from kconsole.api.registry import Registry
        from kconsole.api.storage import Storage
        from kconsole.api.writelog import WriteLog
        from kconsole.cluster import HISTORY_DIR, ClusterConfig
        from kconsole.clock import RealClock
        from kconsole.store.facade import MEMBERS_DIR
        from kconsole.store.revlog import RevisionLog

        clock = RealClock()
        files = sorted((self.data_dir / MEMBERS_DIR).glob("*/db.sqlite"))
        best: Any = None
        if not files:
            from kconsole.store.etcdreal import open_stopped_local

            best = await open_stopped_local(self.data_dir, clock, history_dir=self.data_dir / HISTORY_DIR)
        for file in files:
            log = await RevisionLog.open(file, clock=clock, synchronous="NORMAL")
            if best is None or log.revision > best.revision:
                if best is not None:
                    await best.close()
                best = log
            else:
                await log.close()
        registry = Registry()
        server = _Server()
        server.kv = best
        server.registry = registry
        server.storage = Storage(best, clock, registry, ClusterConfig().encryption_transformers(self.data_dir))
        writes = self.data_dir / HISTORY_DIR / "writes.sqlite"
        server.writelog = WriteLog(clock, writes if writes.exists() else None)
        server.writelog.load()
        self.server = server

    async def close(self) -> None:
        if self.server is not None:
            await self.server.writelog.close()
            await self.server.kv.close()

    async def create(self, obj: dict[str, Any], **_: Any) -> dict[str, Any]:
        from kconsole.api import history
        from kconsole.api.types import Request, UserInfo

        call = _Call(Request("create", history.RESOURCE, group=history.GROUP, body=obj), UserInfo("local"))
        response = await history.answer(self.server, call, self.server.registry.resolve(history.RESOURCE, history.GROUP))
        return response.body  # type: ignore[no-any-return]

    async def resolve(self, kind: str) -> tuple[str, str, bool]:
        spec = self.server.registry.resolve(kind)
        return spec.resource, spec.group, spec.namespaced


class _Server:
    """What :func:`kconsole.api.history.answer` reads of an API server; its owner reads every Secret."""

    kv: Any
    registry: Any
    storage: Any
    writelog: Any

    class authorizer:  # noqa: N801 - stands in for the API server's attribute of that name
        @staticmethod
        def authorize(_attrs: Any) -> tuple[bool, str]:
            return True, ""


class _Call:
    def __init__(self, req: Any, user: Any) -> None:
        self.req = req
        self.user = user


async def story_of(creator: Any, kind: str, name: str, namespace: str) -> Any:
    from kconsole.client.history import HistoryClient
    from kconsole.history.story import build

    resource, group, namespaced = await creator.resolve(kind)
    return await build(HistoryClient(creator), resource, name, group=group,
                       namespace=namespace if namespaced else None)


async def _fetch(args: argparse.Namespace, data_dir: Path) -> Any:
    kind, _, name = args.object.partition("/")
    if not kind or not name:
        raise ValueError(f"expected KIND/NAME such as deployment/web, not {args.object!r}")
    if (data_dir / ADMIN_FILE).exists():
        from kconsole.client.https import connect

        client = await connect(data_dir / KUBECONFIG, user_agent="kconsole-history")
        try:
            return await story_of(HttpCreator(client), kind, name, args.namespace)
        finally:
            await client.entry.close()
    local = LocalCreator(data_dir)
    await local.open()
    try:
        return await story_of(local, kind, name, args.namespace)
    finally:
        await local.close()


def run(args: argparse.Namespace) -> int:
    from kconsole.history.story import render_text

    data_dir = Path(args.data_dir) if args.data_dir else Path(args.dir) / ".kconsole"
    if not data_dir.is_dir():
        print(f"kconsole history: no data folder at {data_dir}", file=sys.stderr)
        return 2
    try:
        story = asyncio.run(_fetch(args, data_dir))
    except ValueError as err:
        print(f"kconsole history: {err}", file=sys.stderr)
        return 2
    except (StatusError, StoreError, OSError) as err:
        print(f"kconsole history: {err}", file=sys.stderr)
        return 1
    if not story.revisions:
        print(f"kconsole history: no {args.object} in the kept history (from revision {story.oldest})",
              file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(story.to_json()))
    else:
        sys.stdout.write(render_text(story, diff=args.diff))
    return 0

