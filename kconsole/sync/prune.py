"""Which objects each manifest file created, and deleting exactly those when their document goes.

The inventory is a JSON file in the data folder (``sync-inventory.json``), not a ConfigMap: it
lives and dies with the cluster's own data (the same folder holds the etcd members), it can be
read and written while etcd has no quorum, and a crash mid-write cannot leave half a file (it is
replaced atomically). Each entry records the object's uid: a prune deletes with a uid
precondition, so an object re-created by hand under the same name is never touched. Objects that
existed before their document appeared (``created: false``) are adopted, not owned: removing the
document leaves them in place.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path

from kconsole.client import Client, StatusError, is_conflict, is_not_found
from kconsole.sync.report import AppliedObject

log = logging.getLogger(__name__)

INVENTORY_FILE = "sync-inventory.json"
FORMAT_VERSION = 1

#: Deletion order: dependents before what they live in (the reverse of the apply order).
_LAST = ("Namespace", "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding", "PriorityClass")


class InventoryError(Exception):
    """The inventory file exists but cannot be used; the message says how to recover."""


class Inventory:
    """path -> objects applied from that file, persisted after every change."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.files: dict[str, list[AppliedObject]] = {}

    @classmethod
    def load(cls, path: Path | None) -> Inventory:
        inv = cls(path)
        if path is None or not path.exists():
            return inv
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            if raw.get("version") != FORMAT_VERSION:
                raise ValueError(f"unknown format version {raw.get('version')!r}")
            for file, objects in (raw.get("files") or {}).items():
                inv.files[str(file)] = [AppliedObject(**o) for o in objects]
        except (OSError, ValueError, TypeError, AttributeError) as err:
            raise InventoryError(f"cannot read the sync inventory {path}: {err}; move it aside to start "
                                 "over (objects applied before will then not be pruned)") from err
        return inv

    def save(self) -> None:
        if self.path is None:
            return
        body = {"version": FORMAT_VERSION,
                "files": {f: [asdict(o) for o in objs] for f, objs in sorted(self.files.items())}}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".inventory-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(body, fh, indent=1, sort_keys=True)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def claimed(self) -> set[tuple[str, str, str, str]]:
        return {identity(o) for objects in self.files.values() for o in objects}


def identity(o: AppliedObject) -> tuple[str, str, str, str]:
    """Group (not version), kind, namespace, name: the same object whatever version a file names."""
    return (o.api_version.rpartition("/")[0], o.kind, o.namespace, o.name)


def deletion_order(objects: Iterable[AppliedObject]) -> list[AppliedObject]:
    def rank(o: AppliedObject) -> tuple[int, str]:
        return (_LAST.index(o.kind) + 1 if o.kind in _LAST else 0, o.ref)

    return sorted(objects, key=rank)


async def delete_objects(client: Client, objects: Iterable[AppliedObject]) -> list[tuple[AppliedObject, str]]:
    """Delete each object (Background propagation, uid precondition). Returns the ones that could
    not be deleted, with why; gone or replaced objects count as done."""
    failed: list[tuple[AppliedObject, str]] = []
    for o in deletion_order(objects):
        if not o.created:
            continue
        try:
            info = client.resource_info(o.kind, o.api_version)
            await client.delete(info.resource if not info.group else f"{info.resource}.{info.group}", o.name,
                                o.namespace or None, propagation_policy="Background",
                                preconditions={"uid": o.uid} if o.uid else None)
        except StatusError as err:
            if is_not_found(err):
                continue
            if is_conflict(err):
                log.info("sync: %s was replaced since it was applied (uid changed); leaving it", o.ref)
                continue
            failed.append((o, err.message))
    return failed
