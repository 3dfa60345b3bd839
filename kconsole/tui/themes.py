"""themes/*.yaml -> Textual themes.

A theme file names a base palette (Textual's colour-system slots) and the state colours kconsole
adds: ``running``, ``pending``, ``failed`` (row states), ``added``, ``modified``, ``deleted`` (change
marks) and ``warning`` (Warning events). State colours become theme variables ``state-<name>`` so
CSS and row styles read them the same way. A bad file never stops the console: the loader raises
:class:`ThemeError` naming the file and the problem, and the caller keeps the theme it had.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from textual.color import Color, ColorParseError
from textual.theme import Theme

#: The top-level themes/ folder of the source tree.
THEMES_DIR = Path(__file__).resolve().parent.parent.parent / "themes"
DEFAULT_THEME = "kconsole-dark"

PALETTE_SLOTS = ("primary", "secondary", "accent", "foreground", "background", "surface", "panel",
                 "success", "warning", "error")
REQUIRED_PALETTE = ("primary", "foreground", "background")
STATE_SLOTS = ("running", "pending", "failed", "added", "modified", "deleted", "warning")

#: Used for any state slot a theme leaves out, and by the app before themes load.
STATE_DEFAULTS = {
    "running": "#22c55e", "pending": "#eab308", "failed": "#ef4444", "added": "#38bdf8",
    "modified": "#a78bfa", "deleted": "#f43f5e", "warning": "#fb923c",
}


class ThemeError(ValueError):
    """A theme file that cannot be used; the message names the file and what is wrong."""


@dataclass(frozen=True)
class ThemeFile:
    path: Path
    theme: Theme


def _colour(path: Path, where: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ThemeError(f"{path.name}: {where} must be a colour string such as \"#ff8800\", got {value!r}")
    try:
        Color.parse(value)
    except ColorParseError:
        raise ThemeError(f"{path.name}: {where} = {value!r} is not a colour") from None
    return value


def parse_theme(path: Path, text: str) -> Theme:
    """Build a Theme from a theme file's text; raises :class:`ThemeError`."""
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err)
        raise ThemeError(f"{path.name}: not valid YAML{where}: {problem}") from None
    if not isinstance(raw, dict):
        raise ThemeError(f"{path.name}: expected a mapping with name, palette and states")
    unknown = set(raw) - {"name", "dark", "palette", "states"}
    if unknown:
        raise ThemeError(f"{path.name}: unknown key(s) {', '.join(sorted(map(str, unknown)))} "
                         "(known: name, dark, palette, states)")
    name = raw.get("name") or path.stem
    if not isinstance(name, str):
        raise ThemeError(f"{path.name}: name must be a string")
    dark = raw.get("dark", True)
    if not isinstance(dark, bool):
        raise ThemeError(f"{path.name}: dark must be true or false, got {dark!r}")
    palette = raw.get("palette")
    if not isinstance(palette, dict):
        raise ThemeError(f"{path.name}: palette must be a mapping of {', '.join(PALETTE_SLOTS)}")
    for slot in palette:
        if slot not in PALETTE_SLOTS:
            raise ThemeError(f"{path.name}: unknown palette slot {slot!r} (known: {', '.join(PALETTE_SLOTS)})")
    for slot in REQUIRED_PALETTE:
        if slot not in palette:
            raise ThemeError(f"{path.name}: palette.{slot} is missing")
    colours = {slot: _colour(path, f"palette.{slot}", v) for slot, v in palette.items()}
    states = raw.get("states") or {}
    if not isinstance(states, dict):
        raise ThemeError(f"{path.name}: states must be a mapping of {', '.join(STATE_SLOTS)}")
    for slot in states:
        if slot not in STATE_SLOTS:
            raise ThemeError(f"{path.name}: unknown state {slot!r} (known: {', '.join(STATE_SLOTS)})")
    variables = {f"state-{slot}": _colour(path, f"states.{slot}", states.get(slot, STATE_DEFAULTS[slot]))
                 for slot in STATE_SLOTS}
    return Theme(name=name, dark=dark, variables=variables, **colours)


def load_theme_file(path: Path) -> Theme:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ThemeError(f"{path}: cannot read: {err.strerror}") from None
    return parse_theme(path, text)


def discover(folders: list[Path]) -> tuple[list[ThemeFile], list[str]]:
    """Every loadable theme under ``folders`` and one error message per file that is not."""
    found: list[ThemeFile] = []
    errors: list[str] = []
    for folder in folders:
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.yaml")) + sorted(folder.glob("*.yml")):
            try:
                found.append(ThemeFile(path, load_theme_file(path)))
            except ThemeError as err:
                errors.append(str(err))
    return found, errors


def state_colours(theme: Theme) -> dict[str, str]:
    """State slot -> colour for a theme (defaults for themes not from a kconsole file)."""
    return {slot: theme.variables.get(f"state-{slot}", STATE_DEFAULTS[slot]) for slot in STATE_SLOTS}
