"""``?``: every binding, its id (for remapping in the config file), its keys, and whether
``--readonly`` disabled it."""

from __future__ import annotations

from collections.abc import Mapping

from rich.table import Table

from kconsole.tui.keymap import SCREEN_KEYS, display_key, effective_keys
from kconsole.tui.screens.base import TextScreen
from kconsole.tui.widgets.vtable import VirtualTable


#: The screens with keys of their own (``logs.follow`` acts in the logs screen only).
SCREENS = frozenset(spec.id.split(".")[0] for spec in SCREEN_KEYS)


def help_table(keymap: Mapping[str, str], readonly: bool) -> Table:
    table = Table(box=None, header_style="bold", pad_edge=False)
    table.add_column("KEYS")
    table.add_column("ACTION")
    table.add_column("BINDING ID")
    table.add_column("")
    for spec, keys in effective_keys(keymap):
        note = "disabled (--readonly)" if readonly and spec.dangerous else ("dangerous" if spec.dangerous else "")
        where = "" if spec.id.split(".")[0] not in SCREENS else f" ({spec.id.split('.')[0]})"
        table.add_row(display_key(keys), spec.description + where, spec.id, note,
                      style="dim" if readonly and spec.dangerous else None)
    for binding in VirtualTable.BINDINGS:
        keys = keymap.get(binding.id or "", binding.key)
        table.add_row(display_key(keys), f"{binding.description} (tables)", binding.id or "", "")
    table.add_row("ctrl+p", "Command palette: kinds, faults, themes, time", "app.palette", "")
    return table


class HelpScreen(TextScreen):
    def __init__(self, keymap: Mapping[str, str], readonly: bool) -> None:
        title = "Keys" + (" · read-only: dangerous keys are disabled" if readonly else "")
        super().__init__(title, help_table(keymap, readonly))
