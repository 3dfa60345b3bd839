"""Per-file sync state, as the console's Manifests panel shows it.

A file is ``applied`` (every document accepted: which objects, at which resourceVersion),
``error`` (the first problem as ``path:line:column: message``, with the objects it applied before
still listed and untouched), or ``pending`` (seen, not yet processed). Removed files disappear
from the report once their objects are pruned.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from kconsole.sync.parse import SyncError

FileStatus = Literal["pending", "applied", "error"]


@dataclass(frozen=True, slots=True)
class AppliedObject:
    api_version: str
    kind: str
    namespace: str  # "" for cluster-scoped objects
    name: str
    uid: str
    resource_version: str
    created: bool = True  # False: it existed before its document appeared, so pruning leaves it

    @property
    def ref(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {where}{self.name}"


@dataclass(slots=True)
class FileState:
    path: str  # relative to the watched folder, with / separators
    status: FileStatus = "pending"
    objects: list[AppliedObject] = field(default_factory=list)
    errors: list[SyncError] = field(default_factory=list)
    #: The server's warnings when the file was last applied (``Deployment default/web: unknown field
    #: "spec.replica"``): what it dropped, as kubectl would print them.
    warnings: list[str] = field(default_factory=list)
    updated: float = 0.0  # simulated time of the last change of state
    attempts: int = 0  # applies tried since the last success (drives the retry back-off)

    @property
    def error(self) -> SyncError | None:
        return self.errors[0] if self.errors else None

    def summary(self) -> str:
        """One line for a status bar or a log."""
        if self.status == "applied":
            refs = ", ".join(f"{o.ref}@{o.resource_version}" for o in self.objects) or "no objects"
            return f"{self.path}: applied {refs}"
        if self.status == "error" and self.error is not None:
            more = f" (+{len(self.errors) - 1} more)" if len(self.errors) > 1 else ""
            return f"{self.error}{more}"
        return f"{self.path}: {self.status}"


Listener = Callable[[], None]


class Report:
    """The file table plus change notification: listeners run after every batch, and
    :attr:`version` grows so pollers can tell whether to redraw."""

    def __init__(self) -> None:
        self.files: dict[str, FileState] = {}
        self.version = 0
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener()`` after each change; returns the function that unsubscribes."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def changed(self) -> None:
        self.version += 1
        for listener in list(self._listeners):
            listener()

    def errors(self) -> list[SyncError]:
        return [e for st in self.files.values() for e in st.errors]



class ChangeLines:
    """One line per file whose state changed since the last :meth:`take`, as ``(status, line)``
    with status ``applied``, ``error`` or ``removed``: what ``kconsole serve`` prints and the
    console's log keeps. A retry that fails the same way is not news."""

    def __init__(self, report: Report) -> None:
        self.report = report
        self._last: dict[str, str] = {}

    def take(self) -> list[tuple[str, str]]:
        lines: list[tuple[str, str]] = []
        current: dict[str, str] = {}
        for path, state in sorted(self.report.files.items()):
            if state.status == "pending":
                if path in self._last:
                    current[path] = self._last[path]
                continue
            line = state.summary()
            current[path] = line
            if self._last.get(path) != line:
                lines.append((state.status, line))
        lines.extend(("removed", f"{path}: removed; the objects it created were deleted")
                     for path in sorted(self._last.keys() - self.report.files.keys()))
        self._last = current
        return lines
