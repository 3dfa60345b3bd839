"""Faults: what is applied now (from the catalog), with the reaction to expect; heal with a key."""

from __future__ import annotations

from typing import Any

from kconsole.tui.model import ClusterModel
from kconsole.tui.panels.base import Panel
from kconsole.tui.widgets import Fit, Row

COLUMNS = ("ID", "Fault", "Target", "Since", "Expect")
FITS = {"ID": Fit(keep=0), "FAULT": Fit(keep=0), "TARGET": Fit(keep=0, shrink_to=16), "SINCE": Fit(keep=2),
        "EXPECT": Fit(keep=1, shrink_to=16, grow=True)}


class FaultsPanel(Panel):
    title = "Faults"
    fits = FITS

    def __init__(self, model: ClusterModel, *, id: str | None = "faults") -> None:
        super().__init__(model, id=id)

    def inputs(self) -> Any:
        return self.model.faults_version()

    def rebuild(self) -> None:
        rows = [Row(f.id, (f.id, f.type, f.target, f.since, f.expect), "failed")
                for f in self.model.active_faults()]
        has_catalog = getattr(self.model.cluster, "faults", None) is not None
        self.table.empty_text = "no active faults" if has_catalog else "no fault catalog"
        self.set_title(f"Faults [{len(rows)}]" if rows else "Faults")
        self.set_rows(COLUMNS, rows)

    def selected_fault(self) -> str | None:
        return self.table.cursor_key
