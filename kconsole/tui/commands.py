"""Command palette entries (ctrl+p): switch kind, apply or heal faults, time controls, views, drills.

Fault entries go through the same confirm dialog as the keys, and disappear with ``--readonly``.
Theme switching is Textual's own palette entry over the registered kconsole themes.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider

from kconsole.tui import faultview

if TYPE_CHECKING:
    from kconsole.tui.app import ConsoleApp


class ConsoleCommands(Provider):
    def commands(self) -> list[tuple[str, Callable[[], object], str]]:
        app: ConsoleApp = self.app  # type: ignore[assignment]
        out: list[tuple[str, Callable[[], object], str]] = []
        for kind in app.kinds():
            out.append((f"Kind: {kind}", partial(app.switch_kind_safely, kind), "show this kind in Resources"))
        out += [
            ("Time: pause / resume", app.action_toggle_pause, "freeze or resume simulated time"),
            ("Time: faster", app.action_speed_up, "raise the simulated speed"),
            ("Time: slower", app.action_slow_down, "lower the simulated speed"),
            ("Time: step one second", app.action_step, "advance simulated time while paused"),
            ("View: API request log", app.action_api_log, "who asked what, codes, latency, rejecting stage"),
            ("View: kube-proxy rules", app.action_proxy_rules, "the nat table of the selected node"),
            ("View: keys", app.action_help, "every binding and its id"),
            ("Referee: start / stop and report", app.action_referee_toggle,
             "watch the cluster with the referee's checkers; again: stop and show the violations (R)"),
            ("Screenshot to…", app.action_screenshot_to, "save the screen as SVG in a folder or file you name"),
        ]
        out += drill_commands(app)
        if app.readonly:
            return out
        target = app.selected_target()
        try:
            types = faultview.fault_types(app.cluster)
        except faultview.FaultsUnavailable:
            return out
        for t in types:
            if target is not None and faultview.same_kind(t.target, target[0]):
                out.append((f"Fault: {t.name} {target[1]}", partial(app.confirm_fault, t.name, target[1]),
                            t.description))
            elif faultview.same_kind(t.target, "apiserver"):
                out.append((f"Fault: {t.name}", partial(app.confirm_fault, t.name, "apiserver"), t.description))
        out.append(("Fault: heal all", app.action_heal_all, "heal every active fault"))
        return out

    async def discover(self) -> Hits:
        for name, callback, help_text in self.commands():
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, callback, help_text in self.commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)


def drill_commands(app: ConsoleApp) -> list[tuple[str, Callable[[], object], str]]:
    """In a drill: its keys. Otherwise: every built-in drill, opened on a cluster of its own."""
    if app.drill is not None:
        return [("Drill: let the drill do this step", app.action_drill_go, "the drill does the step waiting for you (x)"),
                ("Drill: hint", app.action_drill_hint, "the current step's hint (i)")]
    if app.is_web:  # the browser's console cannot be handed over to another cluster
        return []
    return [(f"Drill: {name}", partial(app.open_drill, name), f"{title} (quits this cluster, opens the drill)")
            for name, title in builtin_titles().items()]


@cache
def builtin_titles() -> dict[str, str]:
    """Built-in drill name -> title (read once: the palette asks on every keystroke)."""
    from kconsole.drills.spec import DrillError, builtin_paths, load

    out: dict[str, str] = {}
    for name, path in builtin_paths().items():
        try:
            out[name] = load(path).title
        except DrillError:
            continue
    return out
