"""A container's filesystem as a process in it sees it: the image's directories, the pod's mounts and
the kubelet's files below, the container's writable layer on top.

The writable layer (:class:`Layer`) is kept by the kubelet with the container instance and starts
empty each time the container starts, as a real container's layer does. It holds the files and
directories processes created or changed, the paths they removed from what lies below (whiteouts),
and counts the bytes it holds (each entry's name and content) against a cap: a write past it fails
with ``No space left on device``, as a full disk does, so no exec can make a kubelet hold more.
Read-only mounts (ConfigMap, Secret, projected, downward API, or a ``readOnly`` volume) refuse every
change with ``Read-only file system``; the kubelet's bind-mounted ``/etc/hosts``,
``/etc/resolv.conf`` and ``/etc/hostname`` can be written but not removed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

#: Bytes a container's writable layer may hold.
LAYER_LIMIT = 32 * 1024 * 1024
#: The directories every image has (a Linux root filesystem's skeleton).
IMAGE_DIRS = frozenset(("/", "/bin", "/dev", "/etc", "/home", "/lib", "/mnt", "/opt", "/proc", "/root", "/run",
                        "/sbin", "/srv", "/sys", "/tmp", "/usr", "/usr/bin", "/usr/local", "/usr/local/bin",
                        "/usr/sbin", "/usr/share", "/var", "/var/log", "/var/run", "/var/tmp"))
#: Files the kubelet bind-mounts into every container: writable, never removable.
KUBELET_FILES = frozenset(("/etc/hosts", "/etc/resolv.conf", "/etc/hostname"))


class FsError(Exception):
    """A failed filesystem call; the text is strerror's (``No such file or directory``, ...)."""


@dataclass(slots=True)
class Layer:
    """The writable layer of one container instance (see the module docstring)."""

    files: dict[str, bytes] = field(default_factory=dict)
    dirs: set[str] = field(default_factory=set)
    #: Paths below that were removed; a path under one of them is gone unless the layer holds it.
    removed: set[str] = field(default_factory=set)
    mtimes: dict[str, float] = field(default_factory=dict)
    limit: int = LAYER_LIMIT
    used: int = 0


def cost(path: str, content: bytes | None) -> int:
    """What an entry takes of the layer's cap: its name and its content (a directory has none)."""
    return len(path) + (len(content) if content is not None else 0)


def parent_of(path: str) -> str:
    return path.rsplit("/", 1)[0] or "/"


def _ancestry(path: str) -> list[str]:
    """``path`` and every directory above it, ``/`` last."""
    out = [path]
    while path != "/":
        path = parent_of(path)
        out.append(path)
    return out


class Filesystem:
    """The merged view: what ``cat``, ``ls``, redirections and ``tar`` read and change. Paths are
    absolute and normalised."""

    def __init__(self, files: dict[str, bytes], read_only: tuple[str, ...], layer: Layer,
                 now: Callable[[], float], started: float) -> None:
        self.files = files
        self.read_only = tuple(r.rstrip("/") or "/" for r in read_only)
        self.layer = layer
        self.now = now
        self.started = started
        dirs = set(IMAGE_DIRS)
        for path in files:
            dirs.update(_ancestry(path)[1:])
        self._base_dirs = dirs

    # ------------------------------------------------------------------ reading

    def _below_visible(self, path: str) -> bool:
        return not any(p in self.layer.removed for p in _ancestry(path))

    def read(self, path: str) -> bytes | None:
        """A file's content; None for a directory or nothing."""
        layer = self.layer
        if path in layer.files:
            return layer.files[path]
        if path in layer.dirs:
            return None
        content = self.files.get(path)
        return content if content is not None and self._below_visible(path) else None

    def is_dir(self, path: str) -> bool:
        if path in self.layer.dirs:
            return True
        if path in self.layer.files:
            return False
        return path in self._base_dirs and self._below_visible(path)

    def exists(self, path: str) -> bool:
        return self.read(path) is not None or self.is_dir(path)

    def children(self, path: str) -> list[str]:
        """Names in a directory, sorted."""
        prefix = "/" if path == "/" else path + "/"
        names: set[str] = set()
        for candidate in (*self.files, *self._base_dirs):
            if candidate.startswith(prefix) and candidate != path:
                name = candidate[len(prefix):].split("/", 1)[0]
                if name and self._below_visible(prefix + name):
                    names.add(name)
        for candidate in (*self.layer.files, *self.layer.dirs):
            if candidate.startswith(prefix) and candidate != path:
                names.add(candidate[len(prefix):].split("/", 1)[0])
        return sorted(n for n in names if n)

    def mtime(self, path: str) -> float:
        return self.layer.mtimes.get(path, self.started)

    def walk(self, path: str) -> list[str]:
        """``path`` and, for a directory, everything under it, parents before children (no recursion:
        an archive may nest directories deeper than Python's stack)."""
        out: list[str] = []
        stack = [path]
        while stack:
            current = stack.pop()
            out.append(current)
            if self.is_dir(current):
                prefix = "" if current == "/" else current
                stack.extend(f"{prefix}/{name}" for name in reversed(self.children(current)))
        return out

    def free(self) -> int:
        """Bytes the layer can still take."""
        return max(0, self.layer.limit - self.layer.used)

    # ------------------------------------------------------------------ changing

    def read_only_at(self, path: str) -> bool:
        return any(path == ro or path.startswith(ro + "/") for ro in self.read_only)

    def _writable_parent(self, path: str) -> None:
        if self.read_only_at(path):
            raise FsError("Read-only file system")
        parent = parent_of(path)
        if not self.is_dir(parent):
            raise FsError("No such file or directory" if not self.exists(parent) else "Not a directory")

    def write(self, path: str, data: bytes, append: bool = False) -> None:
        """Create or replace (or append to) a file; the layer's cap applies to what it then holds."""
        self._writable_parent(path)
        if self.is_dir(path):
            raise FsError("Is a directory")
        layer = self.layer
        content = (self.read(path) or b"") + data if append else data
        held = cost(path, layer.files[path]) if path in layer.files else 0
        if layer.used - held + cost(path, content) > layer.limit:
            raise FsError("No space left on device")
        layer.files[path] = content
        layer.used += cost(path, content) - held
        layer.mtimes[path] = self.now()

    def touch(self, path: str) -> None:
        if self.exists(path):
            if self.read_only_at(path):
                raise FsError("Read-only file system")
            self.layer.mtimes[path] = self.now()
            return
        self.write(path, b"")

    def mkdir(self, path: str) -> None:
        if self.exists(path):
            raise FsError("File exists")
        self._writable_parent(path)
        if self.layer.used + cost(path, None) > self.layer.limit:
            raise FsError("No space left on device")
        self.layer.dirs.add(path)
        self.layer.used += cost(path, None)
        self.layer.mtimes[path] = self.now()

    def remove(self, path: str) -> None:
        """Remove a file or an empty directory."""
        if not self.exists(path):
            raise FsError("No such file or directory")
        if self.read_only_at(path):
            raise FsError("Read-only file system")
        if path == "/" or path in KUBELET_FILES:
            raise FsError("Device or resource busy")
        if self.is_dir(path) and self.children(path):
            raise FsError("Directory not empty")
        layer = self.layer
        if path in layer.files:
            layer.used -= cost(path, layer.files.pop(path))
        elif path in layer.dirs:
            layer.dirs.discard(path)
            layer.used -= cost(path, None)
        layer.mtimes.pop(path, None)
        if path in self.files or path in self._base_dirs:
            layer.removed.add(path)
