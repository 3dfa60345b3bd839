"""Every key the console answers, by binding id.

Ids are stable names (``resource.describe``) so the config file can remap keys without knowing
Textual's action names::

    console:
      keymap:
        resource.describe: "enter,d"
        time.pause: "p"

Defaults follow k9s where k9s has the same verb (``:`` kind, ``/`` filter, ``d`` describe, ``y``
YAML, ``l`` logs, ``e`` edit, ``ctrl+d`` delete, ``0`` all namespaces, ``1``-``9`` namespace
favourites, ``ctrl+k`` kill, ``?`` help). ``--readonly`` disables every binding marked dangerous:
they stay listed in ``?`` (marked); those marked ``refuses`` run and say ``read-only: ...``.
Screens that have keys of their own (logs, YAML) list them in :data:`SCREEN_KEYS`, remappable too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from textual.binding import Binding


@dataclass(frozen=True, slots=True)
class KeySpec:
    id: str
    key: str
    action: str
    description: str
    dangerous: bool = False
    show: bool = True
    #: A dangerous action that refuses by itself in read-only mode, saying so in the status line.
    refuses: bool = False


#: The app-wide bindings. Panels add none of their own, so ``?`` lists everything.
APP_KEYS: tuple[KeySpec, ...] = (
    KeySpec("app.quit", "q,ctrl+c", "quit", "Quit"),
    KeySpec("app.help", "question_mark", "help", "Keys"),
    KeySpec("app.palette", "ctrl+p", "command_palette", "Palette", show=False),
    KeySpec("view.maximise", "z", "toggle_maximise", "Zoom"),
    KeySpec("view.next_panel", "tab", "focus_next", "Next panel", show=False),
    KeySpec("view.prev_panel", "shift+tab", "focus_previous", "Prev panel", show=False),
    KeySpec("view.close", "escape", "close", "Back", show=False),
    KeySpec("view.theme", "T", "next_theme", "Theme", show=False),
    KeySpec("resource.kind", "colon", "prompt_kind", "Kind"),
    KeySpec("resource.filter", "slash", "prompt_filter", "Filter"),
    KeySpec("resource.namespace", "n", "prompt_namespace", "Namespace", show=False),
    KeySpec("resource.all_namespaces", "0", "all_namespaces", "All ns", show=False),
    *(KeySpec(f"namespace.favourite_{n}", str(n), f"namespace_favourite({n})", f"Namespace favourite {n}",
              show=False) for n in range(1, 10)),
    KeySpec("resource.sort", "s", "sort_next", "Sort", show=False),
    KeySpec("resource.sort_reverse", "S", "sort_reverse", "Reverse", show=False),
    KeySpec("resource.describe", "d", "describe", "Describe"),
    KeySpec("resource.yaml", "y", "yaml", "YAML"),
    KeySpec("resource.logs", "l", "logs", "Logs", show=False),
    KeySpec("resource.edit", "e", "edit", "Edit", dangerous=True, show=False, refuses=True),
    KeySpec("resource.delete", "ctrl+d", "delete", "Delete", dangerous=True, show=False, refuses=True),
    KeySpec("resource.chain", "c", "chain", "Chain", show=False),
    KeySpec("resource.events", "E", "events_for_selection", "Events of", show=False),
    KeySpec("scheduling.matrix", "enter", "open_selection", "Open", show=False),
    KeySpec("view.apilog", "a", "api_log", "API log", show=False),
    KeySpec("view.proxy", "p", "proxy_rules", "kube-proxy", show=False),
    KeySpec("fault.menu", "f", "fault_menu", "Fault", dangerous=True),
    KeySpec("fault.kill", "ctrl+k", "kill_selected", "Kill", dangerous=True, show=False),
    KeySpec("fault.cordon", "C", "cordon_selected", "Cordon", dangerous=True, show=False),
    KeySpec("fault.heal", "h", "heal_selected", "Heal", dangerous=True, show=False),
    KeySpec("fault.heal_all", "H", "heal_all", "Heal all", dangerous=True, show=False),
    KeySpec("time.pause", "space", "toggle_pause", "Pause"),
    KeySpec("time.faster", "plus,equals_sign", "speed_up", "Faster", show=False),
    KeySpec("time.slower", "minus", "slow_down", "Slower", show=False),
    KeySpec("time.step", "full_stop", "step", "Step", show=False),
    KeySpec("referee.toggle", "R", "referee_toggle", "Referee", show=False),
    KeySpec("drill.go", "x", "drill_go", "Drill does it"),
    KeySpec("drill.hint", "i", "drill_hint", "Hint"),
    KeySpec("rewind.revision_back", "left_square_bracket", "rewind('revision', -1)", "Rev back", show=False),
    KeySpec("rewind.revision_forward", "right_square_bracket", "rewind('revision', 1)", "Rev fwd", show=False),
    KeySpec("rewind.event_back", "left_curly_bracket", "rewind('event', -1)", "Event back", show=False),
    KeySpec("rewind.event_forward", "right_curly_bracket", "rewind('event', 1)", "Event fwd", show=False),
    KeySpec("rewind.warning_back", "less_than_sign", "rewind('warning', -1)", "Warning/fault back", show=False),
    KeySpec("rewind.warning_forward", "greater_than_sign", "rewind('warning', 1)", "Warning/fault fwd",
            show=False),
    KeySpec("rewind.jump", "t", "rewind_jump", "Jump to", show=False),
    KeySpec("rewind.live", "L", "rewind_live", "Live", show=False),
    KeySpec("resource.history", "v", "object_history", "History", show=False),
)

#: Keys of the screens pushed over the dashboard (they bind them themselves, by these ids).
SCREEN_KEYS: tuple[KeySpec, ...] = (
    KeySpec("logs.follow", "f", "toggle_follow", "Follow"),
    KeySpec("logs.container", "c", "next_container", "Container"),
    KeySpec("logs.previous", "p", "toggle_previous", "Previous"),
    KeySpec("logs.wrap", "w", "toggle_wrap", "Wrap"),
    KeySpec("yaml.managed_fields", "m", "toggle_managed_fields", "managedFields"),
    KeySpec("history.diffs", "w", "toggle_diffs", "Diffs"),
)

SPECS: dict[str, KeySpec] = {spec.id: spec for spec in APP_KEYS + SCREEN_KEYS}
SCREEN_KEY_IDS: frozenset[str] = frozenset(spec.id for spec in SCREEN_KEYS)
#: Actions a read-only console does not run at all (the ``refuses`` ones run and say why not).
DANGEROUS_ACTIONS: frozenset[str] = frozenset(s.action for s in APP_KEYS if s.dangerous and not s.refuses)
#: Actions only a console running a drill (``kconsole drill NAME``) has.
DRILL_ACTIONS: frozenset[str] = frozenset(s.action for s in APP_KEYS if s.id.startswith("drill."))


class KeymapError(ValueError):
    """A keymap override that cannot be used; the message names the binding id."""


def bindings() -> list[Binding]:
    return [Binding(s.key, s.action, s.description, show=s.show, id=s.id) for s in APP_KEYS]


def validate_keymap(raw: Any) -> dict[str, str]:
    """Check a config ``keymap`` mapping (binding id -> keys); unknown ids are errors."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise KeymapError("console.keymap must be a mapping of binding id to keys")
    keymap: dict[str, str] = {}
    for binding_id, keys in raw.items():
        if binding_id not in SPECS:
            raise KeymapError(f"console.keymap: unknown binding id {binding_id!r} "
                              f"(known: {', '.join(sorted(SPECS))})")
        if not isinstance(keys, str) or not keys.strip():
            raise KeymapError(f"console.keymap: {binding_id} needs a key string such as \"ctrl+x\" or \"a,b\"")
        keymap[binding_id] = keys.strip()
    return keymap


def effective_keys(keymap: Mapping[str, str]) -> list[tuple[KeySpec, str]]:
    """Each spec with the keys it answers to after remapping (for the help screen)."""
    return [(s, keymap.get(s.id, s.key)) for s in APP_KEYS + SCREEN_KEYS]


def screen_bindings(*ids: str) -> list[Binding]:
    """The :data:`SCREEN_KEYS` bindings with these ids, for a screen's ``BINDINGS``."""
    return [Binding(SPECS[i].key, SPECS[i].action, SPECS[i].description, id=i) for i in ids]


def display_key(keys: str) -> str:
    names = {"question_mark": "?", "colon": ":", "slash": "/", "full_stop": ".", "equals_sign": "=",
             "plus": "+", "minus": "-", "space": "space", "left_square_bracket": "[", "right_square_bracket": "]",
             "left_curly_bracket": "{", "right_curly_bracket": "}", "less_than_sign": "<", "greater_than_sign": ">"}
    return " ".join(names.get(k.strip(), k.strip()) for k in keys.split(","))
