"""Which files of the watched folder are manifests, and telling the sync when they change.

Watched: ``*.yaml``, ``*.yml``, ``*.json`` anywhere under the folder. Ignored: anything under a
dot-folder or named with a leading dot (``.git``, ``.kconsole``, ``.#web.yaml``), editor swap and
backup files (``*.swp``, ``*~``, ``#x#``, vim's ``4913`` probe, JetBrains' ``___jb_`` files) and the
data folder wherever it is.

Changes come from watchfiles (inotify on Linux). ``step`` 50 ms: a burst of writes is reported once
the folder has been quiet for 50 ms; ``debounce`` 300 ms caps the wait while writes keep coming
(e.g. an unrelated busy file), so a save reaches the sync well within 500 ms.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import watchfiles

from kconsole.sync.parse import is_manifest_name

log = logging.getLogger(__name__)

DEBOUNCE_MS = 300
STEP_MS = 50

_EDITOR_JUNK = re.compile(r"(\.sw[a-p]$|\.swx$|~$|^#.*#$|^4913$|___jb_\w+___$|\.tmp$|\.bak$|\.orig$)")


class FolderFilter:
    """The rules above, for one folder."""

    def __init__(self, root: Path, exclude: list[Path] | None = None) -> None:
        self.root = root.resolve()
        self.exclude = [p.resolve() for p in (exclude or [])]

    def relative(self, path: str | Path) -> str | None:
        """The path relative to the folder (``/``-separated), or None when outside it. A symlinked
        manifest keeps its own name (the scan at start lists it under that name too), wherever
        it points; only the folders above it are resolved, for a folder reached through a link."""
        p = Path(path)
        if not p.is_absolute():
            p = self.root / p
        for candidate in (Path(os.path.normpath(p)), p.parent.resolve() / p.name):
            try:
                rel = candidate.relative_to(self.root).as_posix()
            except ValueError:
                continue
            return rel
        return None

    def ignored(self, rel: str) -> bool:
        parts = rel.split("/")
        if any(part.startswith(".") for part in parts):
            return True
        if _EDITOR_JUNK.search(parts[-1]):
            return True
        absolute = self.root / rel
        return any(absolute == ex or ex in absolute.parents for ex in self.exclude)

    def is_manifest(self, rel: str) -> bool:
        return is_manifest_name(rel) and not self.ignored(rel)

    def scan(self) -> Iterator[str]:
        """Every manifest under the folder, sorted (deterministic apply order)."""
        found: list[str] = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            rel_dir = Path(dirpath).relative_to(self.root).as_posix()
            prefix = "" if rel_dir == "." else rel_dir + "/"
            dirnames[:] = sorted(d for d in dirnames if not self.ignored(prefix + d))
            for name in filenames:
                rel = prefix + name
                if self.is_manifest(rel) and os.path.isfile(os.path.join(dirpath, name)):
                    found.append(rel)
        yield from sorted(found)

    def watchfiles_filter(self, change: watchfiles.Change, path: str) -> bool:
        """Keep manifests, and directories (a folder moved in or out carries its files with it)."""
        rel = self.relative(path)
        if rel is None or rel == "." or self.ignored(rel):
            return False
        return is_manifest_name(rel) or os.path.isdir(path) or not os.path.exists(path)


class FolderWatcher:
    """Runs watchfiles over the folder and hands each batch of relative paths to ``on_change``."""

    def __init__(self, folder_filter: FolderFilter, on_change: Callable[[set[str]], None], *,
                 debounce_ms: int = DEBOUNCE_MS, step_ms: int = STEP_MS) -> None:
        self.filter = folder_filter
        self.on_change = on_change
        self.debounce_ms = debounce_ms
        self.step_ms = step_ms
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.ready = asyncio.Event()

    async def start(self) -> None:
        self._stop = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._run(), name="manifest-watcher")

    async def stop(self) -> None:
        self._stop.set()
        task, self._task = self._task, None
        if task is not None:
            try:
                await asyncio.wait_for(task, timeout=5)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                task.cancel()

    async def _run(self) -> None:
        while not self._stop.is_set():
            try:
                watcher = watchfiles.awatch(self.filter.root, watch_filter=self.filter.watchfiles_filter,
                                            debounce=self.debounce_ms, step=self.step_ms, stop_event=self._stop,
                                            yield_on_timeout=True, rust_timeout=200)
                async for changes in watcher:
                    self.ready.set()
                    rels = {rel for _, path in changes if (rel := self.filter.relative(path)) is not None}
                    if rels:
                        self.on_change(rels)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - a vanished folder or a watcher hiccup: retry, never crash
                log.exception("manifest watcher on %s failed; restarting in 1 s", self.filter.root)
                try:
                    await asyncio.wait_for(self._stop.wait(), timeout=1.0)
                except asyncio.TimeoutError:
                    pass
