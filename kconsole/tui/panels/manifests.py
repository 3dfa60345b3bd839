"""Manifests: each file of the watched folder, applied (which objects, at which revision) or the
error with file:line:column and the API server's message — read from the folder sync's report.
The title counts files and errors, so a broken file shows even when the panel is only a few lines
tall (an 80x24 terminal); ``enter`` or ``d`` on a row opens the whole error."""

from __future__ import annotations

from typing import Any

from kconsole.tui.model import ClusterModel
from kconsole.tui.panels.base import Panel
from kconsole.tui.widgets import Fit, Row

COLUMNS = ("File", "Status", "Objects", "Detail")
#: FILE and STATUS whole, the start of DETAIL (the error) after them.
FITS = {"FILE": Fit(keep=0, shrink_to=16), "OBJECTS": Fit(keep=2)}


def sync_report(cluster: Any) -> Any:
    """The folder sync's file table (``files``, ``version``): the sync itself or its ``report``."""
    sync = getattr(cluster, "sync", None)
    if sync is None:
        return None
    return sync if hasattr(sync, "files") else getattr(sync, "report", None)


class ManifestsPanel(Panel):
    title = "Manifests"
    fits = FITS

    def __init__(self, model: ClusterModel, *, id: str | None = "manifests") -> None:
        super().__init__(model, id=id)

    def inputs(self) -> Any:
        report = sync_report(self.model.cluster)
        return (id(report), getattr(report, "version", -1))

    def rebuild(self) -> None:
        report = sync_report(self.model.cluster)
        rows: list[Row] = []
        broken = 0
        if report is None:
            self.table.empty_text = "folder sync is not running"
            self.set_rows(COLUMNS, rows)
            return
        for path, st in sorted(report.files.items()):
            objects = list(getattr(st, "objects", ()) or ())
            status = getattr(st, "status", "pending")
            if status == "error":
                errors = list(getattr(st, "errors", ()) or ())
                first = errors[0] if errors else None
                # The FILE column names the file: the detail starts at line:column, where the width goes furthest.
                detail = ("error" if first is None else f"{first.line}:{first.column}: {first.message}"
                          if getattr(first, "path", path) == path else str(first))
                if len(errors) > 1:
                    detail += f" (+{len(errors) - 1} more)"
                if objects:
                    detail += "; still applied: " + ", ".join(o.ref for o in objects)
                state = "failed"
                broken += 1
            elif status == "applied":
                detail = ", ".join(f"{o.ref}@{o.resource_version}" for o in objects) or "no objects"
                state = "running"
                warnings = list(getattr(st, "warnings", ()) or ())
                if warnings:
                    more = f" (+{len(warnings) - 1} more)" if len(warnings) > 1 else ""
                    detail = f"Warning: {warnings[0]}{more}; {detail}"
            else:
                detail, state = "waiting", "pending"
            rows.append(Row(path, (path, status, str(len(objects)), detail), state, None,
                            str(getattr(st, "updated", ""))))
        self.table.empty_text = "no manifests in the folder"
        title = f"{self.title} [{len(rows)}]" if rows else self.title
        if broken:
            title += f" · {broken} error{'s' if broken > 1 else ''}"
        self.set_title(title)
        self.set_rows(COLUMNS, rows)

    def selected_file(self) -> str | None:
        return self.table.cursor_key

    def open_selected(self) -> Any:
        """The screen for the file under the cursor, or None when there is none."""
        from kconsole.tui.screens import ManifestScreen

        report = sync_report(self.model.cluster)
        path = self.selected_file()
        if report is None or path is None or path not in report.files:
            return None
        folder = getattr(getattr(self.model.cluster, "sync", None), "folder", None)
        return ManifestScreen(report, path, folder)
