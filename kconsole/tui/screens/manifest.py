"""One file of the watched folder (``enter`` or ``d`` on a Manifests row): every error in full, with
the lines around it and a caret under the column, and the objects the file applied. The panel's row
cuts a long API message at the column width; this is where it can be read whole. The view follows
the file: fix and save it, and the error here gives way to what was applied."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Group
from rich.text import Text

from kconsole.tui.screens.base import TextScreen

#: Lines shown before and after the line an error points at.
CONTEXT = 2
#: Files bigger than this are not read for context (the error line alone still names the place).
MAX_CONTEXT_BYTES = 4 * 1024 * 1024
#: Characters of one source line shown around the error's column.
MAX_LINE = 200


def source_excerpt(path: Path, line: int, column: int) -> list[Text]:
    """The lines around ``line`` (1-based), numbered, with a caret under ``column``; [] when the file
    cannot be read as text."""
    try:
        if path.stat().st_size > MAX_CONTEXT_BYTES:
            return []
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    if not 1 <= line <= len(lines):
        return []
    first, last = max(1, line - CONTEXT), min(len(lines), line + CONTEXT)
    width = len(str(last))
    # A minified JSON file is one huge line: show a window of it around the column, not all of it.
    start = max(0, column - 1 - MAX_LINE // 2) if len(lines[line - 1]) > MAX_LINE else 0
    out: list[Text] = []
    for n in range(first, last + 1):
        text = lines[n - 1]
        if len(text) > MAX_LINE or start:
            text = ("…" if start else "") + text[start:start + MAX_LINE] + ("…" if len(text) > start + MAX_LINE else "")
        out.append(Text(f"  {n:>{width}} │ {text}", style="bold" if n == line else "dim"))
        if n == line:
            caret = column - 1 - start + (1 if start else 0)
            out.append(Text(f"  {'':>{width}} │ {' ' * max(0, caret)}^", style="bold red"))
    return out


def manifest_body(state: Any, folder: Path | None) -> Group:
    """What the screen shows for one file's sync state (a ``kconsole.sync.FileState``)."""
    status = getattr(state, "status", "pending")
    parts: list[Any] = [Text(f"Status: {status}", style="bold red" if status == "error" else "bold")]
    errors = list(getattr(state, "errors", ()) or ())
    objects = list(getattr(state, "objects", ()) or ())
    if errors:
        parts.append(Text(""))
        parts.append(Text(f"Errors ({len(errors)})", style="bold"))
        for err in errors:
            where = f" [{err.reason}{f' {err.code}' if err.code else ''}]" if err.reason else ""
            parts.append(Text(f"  {err}{where}", style="red"))
            if folder is not None:
                parts.extend(source_excerpt(folder / err.path, err.line, err.column))
        if objects:
            parts.append(Text(""))
            parts.append(Text("Nothing from this file was changed: what it applied before stays as it was.",
                              style="italic"))
    warnings = list(getattr(state, "warnings", ()) or ())
    if warnings:
        parts.append(Text(""))
        parts.append(Text(f"Warnings ({len(warnings)}): the server dropped these fields", style="bold"))
        parts.extend(Text(f"  Warning: {w}", style="yellow") for w in warnings)
    parts.append(Text(""))
    parts.append(Text(f"Objects ({len(objects)})", style="bold"))
    if not objects:
        parts.append(Text("  <none>"))
    for o in objects:
        owned = "" if getattr(o, "created", True) else "  (adopted: existed before, not pruned)"
        parts.append(Text(f"  {o.ref}  uid {o.uid or '?'}  resourceVersion {o.resource_version}{owned}"))
    return Group(*parts)


class ManifestScreen(TextScreen):
    """``report`` is the folder sync (``files``, ``version``); ``path`` the file's relative path."""

    def __init__(self, report: Any, path: str, folder: Path | None) -> None:
        super().__init__(f"Manifest · {path}")
        self.report = report
        self.path = path
        self.folder = folder
        self._version: int | None = None

    def on_mount(self) -> None:
        self.refresh_body()
        self.set_interval(0.5, self.refresh_body)

    def refresh_body(self) -> None:
        version = getattr(self.report, "version", 0)
        if version == self._version:
            return
        self._version = version
        state = self.report.files.get(self.path)
        if state is None:
            self.set_body(Text(f"{self.path} is no longer in the watched folder; the objects it created "
                               "were pruned."))
            return
        self.set_body(manifest_body(state, self.folder))
