"""The sync tests' environment: an API server, two clients and a manifest folder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kconsole.api.server import APIServer
from kconsole.client import Client
from kconsole.clock import VirtualClock
from kconsole.sync import ManifestSync


@dataclass
class Env:
    clock: VirtualClock
    api: APIServer
    admin: Client
    sync_client: Client
    folder: Path
    data_dir: Path

    def write(self, rel: str, text: str) -> Path:
        path = self.folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def new_sync(self, watch: bool = False) -> ManifestSync:
        return ManifestSync(self.sync_client, self.folder, data_dir=self.data_dir, clock=self.clock, watch=watch)
