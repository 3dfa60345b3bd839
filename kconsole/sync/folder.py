"""Which files of the watched folder are manifests, and telling the sync when they change.

Watched: ``*.yaml``, ``*.yml``, ``*.json`` anywhere under the folder. Ignored: anything under a
dot-folder or named with a leading dot (``.git``, ``.kconsole``, ``.#web.yaml``), editor swap and
backup files (``*.swp``, ``*~``, ``#x#``, vim's ``4913`` probe, JetBrains' ``___jb_`` files) and the
data folder wherever it is.

Changes come from watchfiles (inotify on Linux). ``step`` 50 ms: a burst of writes is reported once
the folder has been quiet for 50 ms; ``debounce`` 300 ms caps the wait while writes keep coming
(e.g. an unrelated busy file), so a save reaches the sync well within 500 ms.

A manifest-named entry that is not a regular file (a dangling or looping symbolic link, a FIFO, a
folder named ``x.yaml``) is not read; :func:`entry_problem` says why, for the report. A file larger
than :data:`MAX_FILE_BYTES` is not read either, and a file is read only once :class:`Looks` has seen
its size and modification time unchanged across two looks :data:`STABLE_SECONDS` apart (an editor or
a copy still writing it would otherwise be applied half-written).
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import re
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import watchfiles

from kconsole.sync.parse import is_manifest_name

log = logging.getLogger(__name__)

DEBOUNCE_MS = 300
STEP_MS = 50
#: Manifests larger than this are refused unread (the API takes 3 MiB per object; a file may hold many).
MAX_FILE_BYTES = 8 * 1024 * 1024
#: Real seconds between the two looks that must agree before a changed file is read.
STABLE_SECONDS = 0.2

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
            # Every manifest-named entry, readable or not: the sync reports those it cannot read.
            for name in filenames + dirnames:
                rel = prefix + name
                if self.is_manifest(rel):
                    found.append(rel)
        yield from sorted(found)

    def watchfiles_filter(self, change: watchfiles.Change, path: str) -> bool:
        """Keep manifests, and directories (a folder moved in or out carries its files with it)."""
        rel = self.relative(path)
        if rel is None or rel == "." or self.ignored(rel):
            return False
        return is_manifest_name(rel) or os.path.isdir(path) or not os.path.exists(path)


def entry_problem(path: Path) -> str | None:
    """Why the manifest-named entry at ``path`` is not read, or None for a regular file (also one
    reached through a symbolic link). The entry must exist (``os.path.lexists``)."""
    try:
        info = path.stat()
    except OSError as err:
        if path.is_symlink():
            target = os.readlink(path)
            if err.errno == errno.ELOOP:
                return f"skipped: symbolic link loop (links to {target}, which never reaches a file)"
            if err.errno == errno.ENOENT:
                return f"skipped: dangling symbolic link (its target {target} does not exist)"
        return f"skipped: cannot read it: {err.strerror}"
    mode = info.st_mode
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "skipped: a folder named like a manifest (the manifests inside it are synced one by one)"
    what = ("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file")
    return f"skipped: {what}, not a regular file"


def size_problem(size: int) -> str | None:
    if size > MAX_FILE_BYTES:
        return (f"file is {size:,} bytes; manifests larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB are not "
                "read (split it into several files)")
    return None


Signature = tuple[int, int]  # (size, modification time in ns)


def signature(path: Path) -> Signature | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns


class Looks:
    """Which files have kept the same size and modification time across two looks taken at least
    ``stable_seconds`` apart (real time: it is the writer's pace that matters, not the cluster's)."""

    def __init__(self, stable_seconds: float = STABLE_SECONDS) -> None:
        self.stable_seconds = stable_seconds
        self._seen: dict[Path, tuple[Signature, float]] = {}

    def forget(self, path: Path) -> None:
        self._seen.pop(path, None)

    async def stable(self, paths: list[Path]) -> tuple[list[Path], list[Path]]:
        """(stable, still changing): one look now; files not seen the same long enough are looked at
        again after the rest of ``stable_seconds`` (one wait for all of them)."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        settled: list[Path] = []
        waiting: list[tuple[Path, Signature | None]] = []
        for path in paths:
            sig = signature(path)
            seen = self._seen.get(path)
            if sig is not None and seen is not None and seen[0] == sig and now - seen[1] >= self.stable_seconds:
                settled.append(path)
                continue
            if seen is None or seen[0] != sig:
                self._seen[path] = (sig, now) if sig is not None else ((-1, -1), now)
            waiting.append((path, sig))
        if not waiting:
            return settled, []
        latest = max(self._seen[path][1] for path, _ in waiting)
        await asyncio.sleep(max(0.0, latest + self.stable_seconds - loop.time()))
        changing: list[Path] = []
        for path, sig in waiting:
            again = signature(path)
            if again is not None and again == sig:
                settled.append(path)
            else:
                self._seen[path] = (again if again is not None else (-1, -1), loop.time())
                changing.append(path)
        return settled, changing


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
