"""The console: a dashboard of live panels over one cluster, keys that inject faults, themes.

The first frame is drawn before the cluster starts (the cluster boots in a worker after the first
paint). Panels render from the model's informer caches, only when their inputs moved: a change
arms one short timer (``batch_delay``) that refreshes for every change that arrives meanwhile, and
a slower interval (``refresh_interval``) moves what only time changes (ages, clock, marks running
out). Nothing renders per event; control-plane work never runs per frame. Widgets are touched only on the app's
own loop; background work (cluster start, etcd sampling, faults, theme watching) runs in workers
and reports back by updating the model or posting notifications.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any

from rich.markup import escape
from textual import events
from textual.app import App, ComposeResult
from textual.containers import Grid, Vertical
from textual.widgets import Footer

from kconsole.api.types import UserInfo
from kconsole.client import StatusError
from kconsole.tui import faultview, keymap
from kconsole.tui.etcdsamples import EtcdSamples
from kconsole.tui.model import ClusterModel
from kconsole.tui.objectkeys import ObjectKeys
from kconsole.tui.panels import (
    DrillPanel,
    EtcdPanel,
    EventsPanel,
    FaultsPanel,
    FilterError,
    HeaderPanel,
    LeasesPanel,
    ManifestsPanel,
    Panel,
    ResourcesPanel,
    SchedulingPanel,
)
from kconsole.tui.panels.status import StatusLine
from kconsole.tui.refereeview import ConsoleReferee
from kconsole.tui.themes import DEFAULT_THEME, THEMES_DIR, ThemeError, discover, load_theme_file, state_colours
from kconsole.tui.widgets import VirtualTable
from kconsole.tui.widgets.timeline import TimelineStrip

log = logging.getLogger(__name__)

#: Wall seconds quitting waits for a cluster still starting before it cancels the start.
START_WAIT_ON_QUIT = 3.0

#: The console acts as its own user (read everything; delete pods, patch nodes, write events).
CONSOLE_USER = UserInfo("system:kconsole-console")
#: Simulated-time speeds the +/- keys step through.
SPEEDS = (0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0)
#: Under churn a panel without focus is redrawn at most this often (wall seconds): painting every
#: panel on every batch took the loop from keys and from the watch path during write bursts.
BACKGROUND_INTERVAL = 0.5
#: Lease names in kube-system -> the fault target kind they stand for.
LEADER_LEASES = {"kube-scheduler": "scheduler", "kube-controller-manager": "controller-manager"}

#: Wall seconds between two readings of the history for the timeline strip while live, and while
#: its buckets are still filling in (each reading reads at most TIMELINE_LOOKUPS bucket edges live).
TIMELINE_INTERVAL = 30.0
TIMELINE_FILL_INTERVAL = 5.0
TIMELINE_LOOKUPS = 8

#: Below this many columns or rows the console shows one panel at a time (k9s's one main table),
#: the others one key away; at or above it, the dashboard of every panel.
COMPACT_BELOW = (140, 40)

SHORT_KINDS = ("po", "deploy", "rs", "ds", "sts", "job", "cj", "svc", "ep", "no", "ns", "ev", "lease", "cm",
               "sec", "sa", "hpa", "pdb", "pc", "sd", "endpointslices", "roles", "rolebindings",
               "clusterroles", "clusterrolebindings")


def _commands_provider() -> type:
    from kconsole.tui.commands import ConsoleCommands

    return ConsoleCommands


class ConsoleApp(ObjectKeys, App[int]):
    """``ConsoleApp(cluster)``: ``cluster`` is a :class:`kconsole.cluster.Cluster` (started or not)."""

    TITLE = "kconsole"
    # The dashboard: Resources and Events side by side over Scheduling and Leases (each wide enough
    # for its key columns), and a column as wide as the etcd table's key columns for etcd,
    # Manifests and Faults. The compact layout stacks them and shows only the one in view.
    CSS = """
    Screen { layout: vertical; }
    #dashboard { grid-size: 3 2; grid-rows: 2fr 1fr; grid-columns: 1fr 1fr 40; height: 1fr; }
    #side { row-span: 2; height: 1fr; }
    .-compact #dashboard { layout: vertical; }
    .-compact #side { row-span: 1; }
    .-compact Panel { border-left: none; border-right: none; }
    .-compact HeaderPanel { height: 4; }
    .-drill #dashboard { grid-columns: 1fr 1fr 64; }
    EtcdPanel > .summary { height: auto; color: $text-muted; }
    EtcdPanel > .summary.lost { color: $error; text-style: bold; }
    """
    BINDINGS = keymap.bindings()
    COMMANDS = App.COMMANDS | {lambda: _commands_provider()}

    def __init__(self, cluster: Any, *, theme: str | None = None, readonly: bool = False,
                 keymap_overrides: Mapping[str, str] | None = None, theme_dirs: list[Path] | None = None,
                 refresh_interval: float = 0.25, batch_delay: float = 0.1, sample_interval: float = 1.0,
                 live: bool = True, watch_themes: bool = True, drill: Any = None) -> None:
        super().__init__()
        self.cluster = cluster
        self.readonly = readonly
        self.keymap_overrides = dict(keymap_overrides or {})
        self.requested_theme = theme
        self.theme_dirs = list(theme_dirs) if theme_dirs is not None else [THEMES_DIR]
        self.refresh_interval = refresh_interval
        self.batch_delay = batch_delay
        self._batch: asyncio.TimerHandle | None = None
        #: When each panel last redrew (wall), for :data:`BACKGROUND_INTERVAL`; ``wall`` is replaceable.
        self._synced_at: dict[Panel, float] = {}
        self.wall: Callable[[], float] = time.monotonic
        self.sample_interval = sample_interval
        self.live = live
        self.watch_themes = watch_themes
        self.model = ClusterModel(cluster)
        self.header = HeaderPanel(self.model)
        self.resources = ResourcesPanel(self.model)
        self.events_panel = EventsPanel(self.model)
        self.leases = LeasesPanel(self.model)
        self.etcd = EtcdPanel(self.model)
        self.scheduling = SchedulingPanel(self.model)
        self.manifests = ManifestsPanel(self.model)
        self.faults = FaultsPanel(self.model)
        #: In reading order: tab steps through them, the compact layout's switcher lists them.
        self.panels: list[Panel] = [self.resources, self.events_panel, self.scheduling, self.leases, self.etcd,
                                    self.manifests, self.faults]
        #: ``kconsole drill NAME``: a :class:`kconsole.tui.drillrun.DrillSession`, shown first.
        self.drill = drill
        self.drill_panel: Panel | None = None
        #: A built-in drill picked in the palette: the launcher opens it once this console quit.
        self.next_drill: str | None = None
        if drill is not None:
            self.drill_panel = DrillPanel(self.model, drill)
            self.panels.insert(0, self.drill_panel)
        self.side = Vertical(id="side")
        self.status_line = StatusLine()
        #: The strip under the header and the cursor over the history (set once the API is up).
        self.timeline = TimelineStrip()
        self.rewind: Any = None
        self.etcd_samples = EtcdSamples(self._samples_folder())
        self._timeline_at = float("-inf")
        self.model.on_view_changed = self._view_changed
        self.model.on_etcd_sample = self._record_etcd
        #: ``R``: the referee over this console's cluster (a drill's own referee aside).
        self.console_referee = ConsoleReferee(cluster)
        self.header.readonly = readonly
        #: One panel at a time (a small terminal) instead of the dashboard.
        self.compact = False
        #: The panel in view in the compact layout.
        self.shown: Panel = self.drill_panel or self.resources
        self.kconsole_themes: dict[str, Path] = {}
        self.theme_errors: list[str] = []
        self.boot_error = ""
        self.ready = False
        self.first_paint_at: float | None = None
        self._last_sample = time.monotonic()
        #: An app handed a stopped cluster starts it, and so stops it when it exits.
        self.owns_cluster = not getattr(cluster, "started", False)
        self._own_catalog = False
        #: The cluster's start while it runs: quitting meanwhile waits a while for it, then cancels it.
        self._starting: asyncio.Future[None] | None = None
        #: Told the exit code whenever the console is asked to exit (q, ctrl+c, a signal): the
        #: launcher arms its stop deadline there, before the cluster's stop begins.
        self.on_exit_requested: Callable[[int], None] | None = None

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        yield self.header
        yield self.timeline
        with Grid(id="dashboard"):
            yield self.resources
            yield self.events_panel
            with self.side:
                if self.drill_panel is not None:
                    yield self.drill_panel
                yield self.etcd
                yield self.manifests
                yield self.faults
            yield self.scheduling
            yield self.leases
        yield self.status_line
        yield Footer()

    # ------------------------------------------------------------------ adaptive layout

    def on_resize(self, event: events.Resize) -> None:
        self.set_compact(event.size.width < COMPACT_BELOW[0] or event.size.height < COMPACT_BELOW[1])

    def set_compact(self, compact: bool) -> None:
        """Switch between the dashboard and one panel at a time (the focused one stays in view)."""
        if compact == self.compact and self.header.switcher:
            return
        self.compact = compact
        self.set_class(compact, "-compact")
        self.timeline.display = not compact  # the header still says where in the history the panels are
        if compact:
            self.shown = self.focused_panel() or self.shown
        self._show_only(self.shown if compact else None)

    def _show_only(self, panel: Panel | None) -> None:
        """Display ``panel`` alone (compact) or every panel (``None``); the header's switcher follows."""
        for p in self.panels:
            p.display = panel is None or p is panel
        self.side.display = panel is None or panel.parent is self.side
        self.header.switcher = [(self._panel_label(p), p.id or "", p is panel) for p in self.panels] if panel else []
        self.header.text = ""
        self.header.sync()

    def _panel_label(self, panel: Panel) -> str:
        return panel.title if panel is not self.resources else self.resources.group_resource.split(".")[0]

    def show_panel(self, panel_id: str) -> None:
        """Bring a panel into view (compact) and give it the keys."""
        panel = next((p for p in self.panels if p.id == panel_id), None)
        if panel is None:
            return
        if self.compact:
            self.shown = panel
            self._show_only(panel)
        panel.table.focus()
        if self.ready:
            panel.sync(force=True)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        panel = self.focused_panel()
        if panel is not None and self.compact and panel is not self.shown and self.screen is self.screen_stack[0]:
            self.shown = panel
            self._show_only(panel)
        self.update_target()

    def on_virtual_table_cursor_moved(self, message: VirtualTable.CursorMoved) -> None:
        if message.table is self.focused:
            self.update_target()

    def update_target(self) -> None:
        """The status line names the focused panel and what its keys act on (the row under the
        cursor), so ``f`` never surprises: ``f fault on pod kube-system/coredns-…``."""
        panel = self.focused_panel()
        if panel is None:
            return
        label = self._panel_label(panel)
        target = self.selected_target()
        if target is None:
            what = "nothing selected" if not panel.table.rows else "no object under the cursor"
            self.status_line.show_target(f"[b]{escape(label)}[/] · {what} · ? keys")
            return
        kind, name = target[0].lower(), escape(target[1])
        act = "[dim]read-only[/]" if self.readonly else f"[b]f[/] fault on {kind} {name}"
        self.status_line.show_target(f"[b]{escape(label)}[/] ▸ {kind} {name} · {act} · [b]d[/] describe · ? keys")

    # ------------------------------------------------------------------ messages

    def notify(self, message: str, *, title: str = "", severity: Any = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        """Every message also goes to the status line, where a k9s user looks for it."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)
        if self.is_mounted(self.status_line):
            self.status_line.say(message, severity)

    def on_key(self, event: events.Key) -> None:
        """A key nothing on the main screen took: say why (read-only, or no such key here) instead
        of doing nothing."""
        from kconsole.tui.screens import PromptScreen

        if isinstance(self.screen, PromptScreen):
            # Typed in one burst with the key that opened the prompt (a paste of ":deploy⏎"):
            # these keys went to the table below before the prompt existed.
            self.screen.take_key(event, from_below=True)
            return
        if self.screen is not self.screen_stack[0]:
            return
        active = self.screen.active_bindings.get(event.key)
        if active is not None and active.enabled:
            return  # a binding took it
        spec = self._binding_for(event.key)
        if spec is not None and self.readonly and spec.dangerous:
            self.status_line.say(f"read-only: {spec.description.lower()} ({keymap.display_key(event.key)}) "
                                 "is disabled (--readonly)", "warning")
        elif spec is None and (event.is_printable or event.key.startswith("ctrl+")):
            label = self._panel_label(self.focused_panel() or self.resources)
            self.status_line.say(f"{keymap.display_key(event.key)}: no key here in {label} (? lists every key)",
                                 "warning")

    def on_paste(self, event: events.Paste) -> None:
        """A paste on the main screen acts as the same keys typed: ``:deploy⏎`` switches kind,
        ``/web⏎`` filters (the text after the first character goes into the prompt)."""
        from kconsole.tui.screens import PromptScreen

        if self.screen is not self.screen_stack[0] or not event.text:
            return
        opens = {":": self.action_prompt_kind, "/": self.action_prompt_filter}.get(event.text[0])
        if opens is None:
            self.status_line.say("paste: start with : (kind) or / (filter)", "warning")
            return
        opens()
        if isinstance(self.screen, PromptScreen):
            self.screen.feed(event.text[1:])

    # ------------------------------------------------------------------ screenshot

    def screenshot_folder(self) -> Path:
        """Where screenshots go by default: the cluster's data folder (else the working folder)."""
        data_dir = getattr(getattr(self.cluster, "config", None), "data_dir", None)
        return Path(data_dir) if data_dir else Path.cwd()

    def deliver_screenshot(self, filename: str | None = None, path: str | None = None,
                           time_format: str | None = None) -> str | None:
        """Save the screen as SVG in the data folder (or ``path``) and say where, or why not."""
        if self.is_web:
            return super().deliver_screenshot(filename, path, time_format)
        from textual._files import generate_datetime_filename

        folder = Path(path).expanduser() if path else self.screenshot_folder()
        target = folder / (filename or generate_datetime_filename(self.title, ".svg", time_format))
        try:
            folder.mkdir(parents=True, exist_ok=True)
            target.write_text(self.export_screenshot(), encoding="utf-8")
        except OSError as err:
            self.notify(f"screenshot not saved: {target}: {err.strerror or err}", severity="error", timeout=10)
            return None
        self.notify(f"screenshot saved to {target.resolve()}", timeout=10)
        return str(target)

    def action_screenshot_to(self) -> None:
        """Ask where to save a screenshot (a folder, or a file ending .svg)."""
        from kconsole.tui.screens import PromptScreen

        def done(value: str | None) -> None:
            if value is None:
                return
            where = Path(value.strip()).expanduser() if value.strip() else self.screenshot_folder()
            if where.suffix == ".svg":
                self.call_after_refresh(self.deliver_screenshot, where.name, str(where.parent))
            else:
                self.call_after_refresh(self.deliver_screenshot, None, str(where))

        self.push_screen(PromptScreen("screenshot: a folder, or a file ending .svg", str(self.screenshot_folder()),
                                      "empty: the data folder"), done)

    def _binding_for(self, key: str) -> keymap.KeySpec | None:
        """The app binding answering ``key`` after remapping, if any (screens' own keys aside)."""
        for spec, keys in keymap.effective_keys(self.keymap_overrides):
            if spec.id in keymap.SCREEN_KEY_IDS or (self.drill is None and spec.action in keymap.DRILL_ACTIONS):
                continue
            if key in {k.strip() for k in keys.split(",")}:
                return spec
        return None

    def action_focus_next(self) -> None:
        self._step_panel(1)

    def action_focus_previous(self) -> None:
        self._step_panel(-1)

    def _step_panel(self, step: int) -> None:
        """tab / shift+tab: the next panel (brought into view on a small terminal); in a dialog,
        the dialog's next field."""
        if self.screen is not self.screen_stack[0] or self.screen.maximized is not None:
            (self.screen.focus_next if step > 0 else self.screen.focus_previous)()
            return
        current = self.focused_panel() or (self.shown if self.compact else self.resources)
        i = self.panels.index(current) if current in self.panels else 0
        self.show_panel(self.panels[(i + step) % len(self.panels)].id or "")

    def get_theme_variable_defaults(self) -> dict[str, str]:
        from kconsole.tui.themes import STATE_DEFAULTS

        return {f"state-{k}": v for k, v in STATE_DEFAULTS.items()}

    def on_mount(self) -> None:
        self._load_themes()
        if self.keymap_overrides:
            self.set_keymap(self.keymap_overrides)
        self.theme_changed_signal.subscribe(self, lambda _theme: self.apply_table_styles())
        self.apply_table_styles()
        self.set_class(self.drill is not None, "-drill")
        (self.drill_panel or self.resources).table.focus()
        self.call_after_refresh(self._first_paint)

    def _first_paint(self) -> None:
        self.first_paint_at = time.monotonic()
        self.run_worker(self._boot(), group="boot", exclusive=True)
        if self.watch_themes:
            self.run_worker(self._watch_theme_files(), group="themes", exclusive=True)

    async def _boot(self) -> None:
        """Start the cluster (if not yet) after the first frame, then the caches and timers."""
        try:
            if not getattr(self.cluster, "started", False):
                self.header.status = "starting the cluster…"
                self.header.sync()
                self._starting = asyncio.ensure_future(self.cluster.start())
                await asyncio.shield(self._starting)
                self._starting = None
            await self.model.start(self.cluster.api_client(CONSOLE_USER))
            self._ensure_fault_catalog()
            self._start_rewind()
            self.resources.switch_kind(self.resources.resource)
        except Exception as err:  # noqa: BLE001 - the console stays up and says why
            log.exception("cluster start failed")
            self.boot_error = f"cluster failed to start: {err}"
            self.header.status = self.boot_error
            self.header.update(self.header.compose_text())
            self.notify(self.boot_error, severity="error", timeout=30)
            return
        self.header.status = ""
        self.ready = True
        if self.live:
            self.set_interval(self.refresh_interval, self.render_pending, name="refresh")
            self.model.on_change = self._changed
            self.set_interval(self.sample_interval, self._sample, name="sample")
        await self.model.sample_etcd()
        self.render_pending(force=True)
        if self.live:  # a console driven by hand (tests, pictures) reads the strip's figures in sample_now
            self.run_worker(self.refresh_timeline, group="timeline", exclusive=True)
        if self.drill is not None:
            self.drill.start(self)

    def _ensure_fault_catalog(self) -> None:
        """A cluster composed without a catalog still gets fault keys: the console makes one."""
        if getattr(self.cluster, "faults", None) is not None:
            return
        try:
            from kconsole.faults import FaultCatalog
        except ImportError:
            return
        self.cluster.faults = FaultCatalog(self.cluster)
        self._own_catalog = True

    # ------------------------------------------------------------------ refresh

    def render_pending(self, force: bool = False) -> int:
        """Redraw every panel whose inputs moved; returns how many were rebuilt."""
        if not self.ready or not self.screen_stack:
            return 0
        self.model.expire_marks()
        rebuilt = 0
        maximised = self.screen.maximized if self.screen is self.screen_stack[0] else None
        focused = self.focused_panel() or self.resources
        now = self.wall()
        for panel in self.panels:
            if maximised is not None and maximised is not panel:
                continue
            if self.live and not force and panel is not focused and \
                    now - self._synced_at.get(panel, 0.0) < BACKGROUND_INTERVAL:
                continue  # the refresh tick draws it once its interval has passed
            try:
                if panel.sync(force):
                    self._synced_at[panel] = now
                    rebuilt += 1
            except Exception:  # noqa: BLE001 - a panel bug must not take the console down
                log.exception("panel %s failed to refresh", panel.id)
        self.header.where = self.where_text()
        self.header.sync()
        return rebuilt

    def _changed(self) -> None:
        """The first change of a batch arms the refresh; the rest of the batch rides on it."""
        if self._batch is None:
            self._batch = asyncio.get_running_loop().call_later(self.batch_delay, self.call_next, self._refresh_batch)

    def _refresh_batch(self) -> None:
        self._batch = None
        self.render_pending()

    def _sample(self) -> None:
        now = time.monotonic()
        self.model.sample_rates(now - self._last_sample)
        self._last_sample = now
        self.run_worker(self.model.sample_etcd(), group="etcd", exclusive=True)
        data = self.timeline.data
        filling = data is None or None in data.writes
        if now - self._timeline_at >= (TIMELINE_FILL_INTERVAL if filling else TIMELINE_INTERVAL):
            self._timeline_at = now
            self.run_worker(self.refresh_timeline, group="timeline", exclusive=True)
        elif self.rewind is not None and self.rewind.view is not None:
            self.run_worker(self._refresh_behind, group="behind", exclusive=True)

    async def sample_now(self, seconds: float = 1.0) -> None:
        """One sampling round (tests and the benchmark drive it explicitly), the strip's figures too."""
        self.model.sample_rates(seconds)
        await self.model.sample_etcd()
        self.workers.cancel_group(self, "timeline")
        await self.refresh_timeline()
        self.render_pending()

    # ------------------------------------------------------------------ themes

    def _load_themes(self) -> None:
        found, errors = discover(self.theme_dirs)
        for tf in found:
            self.register_theme(tf.theme)
            self.kconsole_themes[tf.theme.name] = tf.path
        self.theme_errors = list(errors)
        for message in errors:
            self.notify(f"theme skipped: {message}", severity="warning", timeout=10)
        wanted = self.requested_theme or DEFAULT_THEME
        if wanted.endswith((".yaml", ".yml")) or "/" in wanted:
            path = Path(wanted)
            try:
                theme = load_theme_file(path)
            except ThemeError as err:
                self.theme_errors.append(str(err))
                self.notify(f"{err}; using {DEFAULT_THEME}", severity="error", timeout=15)
                wanted = DEFAULT_THEME
            else:
                self.register_theme(theme)
                self.kconsole_themes[theme.name] = path
                if path.parent.resolve() not in [d.resolve() for d in self.theme_dirs]:
                    self.theme_dirs.append(path.parent)
                wanted = theme.name
        if self.get_theme(wanted) is None:
            fallback = DEFAULT_THEME if self.get_theme(DEFAULT_THEME) is not None else next(
                iter(sorted(self.kconsole_themes)), "textual-dark")
            message = f"unknown theme {wanted!r}; using {fallback} (known: {', '.join(sorted(self.kconsole_themes))})"
            self.theme_errors.append(message)
            self.notify(message, severity="error", timeout=15)
            wanted = fallback
        self.theme = wanted

    def reload_theme_file(self, path: Path) -> str | None:
        """Re-read one theme file; on error keep the current theme and say why. Returns the error."""
        try:
            theme = load_theme_file(path)
        except ThemeError as err:
            message = f"{err}; keeping theme {self.theme}"
            self.theme_errors.append(message)
            self.notify(message, severity="error", timeout=15)
            return message
        self.register_theme(theme)
        self.kconsole_themes[theme.name] = path
        if theme.name == self.theme:
            self.refresh_css()
            self.apply_table_styles()
            self.notify(f"theme {theme.name} reloaded", timeout=3)
        return None

    async def _watch_theme_files(self) -> None:
        import watchfiles

        dirs = [str(d) for d in self.theme_dirs if d.is_dir()]
        if not dirs:
            return
        async for changes in watchfiles.awatch(*dirs, debounce=150, step=50, recursive=False):
            for _change, name in changes:
                path = Path(name)
                if path.suffix in (".yaml", ".yml") and path.exists():
                    self.reload_theme_file(path)

    def table_styles(self) -> tuple[dict[str, str], str, str, str, str, str, str]:
        """State colours, header colour, cursor background and a readable text colour on it, and
        the rows' background, text and alternate-row background: all from the current theme."""
        from textual.color import Color

        theme = self.current_theme
        variables = self.theme_variables
        primary = theme.primary or "#0178D4"
        cursor_fg = Color.parse(primary).get_contrast_text(1.0).hex
        background = Color.parse(variables.get("background") or theme.background or "#000000")
        foreground = Color.parse(variables.get("foreground") or theme.foreground or "#ffffff")
        zebra = background.blend(foreground, 0.05)
        return (state_colours(theme), theme.accent or primary, primary, cursor_fg,
                background.hex, foreground.hex, zebra.hex)

    def apply_table_styles(self) -> None:
        styles = self.table_styles()
        for screen in self.screen_stack:
            for table in screen.query(VirtualTable):
                table.set_theme_styles(*styles)

    def action_next_theme(self) -> None:
        names = sorted(self.kconsole_themes)
        if names:
            i = names.index(self.theme) if self.theme in names else -1
            self.theme = names[(i + 1) % len(names)]
            self.notify(f"theme {self.theme}", timeout=2)

    # ------------------------------------------------------------------ readonly

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # None: shown dimmed in the footer; the key then reaches on_key, which says it is read-only.
        if self.readonly and action in keymap.DANGEROUS_ACTIONS:
            return None
        if action in keymap.DRILL_ACTIONS and self.drill is None:
            return False
        return True

    def action_drill_go(self) -> None:
        """``x``: the drill does the step that waits for the learner."""
        if self.drill is not None and not self.refuse_past():
            self.status_line.say(self.drill.act())

    def action_drill_hint(self) -> None:
        if self.drill is not None:
            self.status_line.say(self.drill.hint())

    def open_drill(self, name: str) -> None:
        """The palette's ``Drill: NAME``: after a yes, quit this cluster and open the drill on its own."""
        from kconsole.tui.screens import ConfirmScreen

        def answered(yes: bool | None) -> None:
            if yes:
                self.next_drill = name
                self.exit(0)

        self.push_screen(ConfirmScreen(f"Open drill {name}?", "this cluster stops (its data folder stays); "
                                                              "the drill runs on a cluster of its own"), answered)

    def refuse_readonly(self) -> bool:
        if self.refuse_past():
            return True
        if self.readonly:
            self.notify("read-only: faults and changes are disabled (--readonly)", severity="warning")
        return self.readonly

    # ------------------------------------------------------------------ selection helpers

    def focused_panel(self) -> Panel | None:
        widget = self.focused
        while widget is not None:
            if isinstance(widget, Panel):
                return widget
            widget = widget.parent  # type: ignore[assignment]
        return None

    def selected_object(self) -> dict[str, Any] | None:
        panel = self.focused_panel() or self.resources
        return panel.selected()

    def selected_target(self) -> tuple[str, str] | None:
        """(fault target kind, target) for the row under the cursor, as the fault catalog names them."""
        panel = self.focused_panel() or self.resources
        if panel is self.etcd:
            member = self.etcd.selected_member()
            return ("etcd-member", member) if member else None
        if panel is self.leases:
            lease = self.leases.selected()
            name = (lease or {}).get("metadata", {}).get("name", "")
            if name in LEADER_LEASES:
                return (LEADER_LEASES[name], "leader")
            if (lease or {}).get("metadata", {}).get("namespace") == "kube-node-lease":
                return ("node", name)
            return None
        obj = panel.selected()
        if obj is None:
            return None
        if panel is self.events_panel:
            # An event's target is what it is about: the involved object, as Resources would name it.
            inv = obj.get("involvedObject") or {}
            if not inv.get("kind") or not inv.get("name"):
                return None
            ns = inv.get("namespace")
            return (inv["kind"], f"{ns}/{inv['name']}" if ns else inv["name"])
        meta = obj.get("metadata") or {}
        kind = obj.get("kind") or ""
        if not kind and panel is self.resources:
            kind = self.resources.kind
        if kind == "SchedulingDecision":
            return ("pod", f"{meta.get('namespace')}/{(obj.get('spec') or {}).get('pod')}")
        ns = meta.get("namespace")
        return (kind, f"{ns}/{meta.get('name')}" if ns else meta.get("name", ""))

    # ------------------------------------------------------------------ resource actions

    def action_prompt_kind(self) -> None:
        from kconsole.tui.screens import PromptScreen

        def done(value: str | None) -> None:
            if value and self.switch_kind_safely(value):
                self.show_panel(self.resources.id or "")

        self.push_screen(PromptScreen(":kind (po, deploy, svc, no, ev, lease, …)", "",
                                      "kind by name or short name", self.kinds()), done)

    def kinds(self) -> list[str]:
        """The kinds offered to switch to: the built-in ones, then the custom resources served now."""
        return list(SHORT_KINDS) + self.model.custom_kinds()

    def action_prompt_filter(self) -> None:
        from kconsole.tui.screens import PromptScreen

        def done(value: str | None) -> None:
            if value is not None:
                try:
                    self.resources.set_filter(value)
                except FilterError as err:
                    self.notify(str(err), severity="error")

        self.push_screen(PromptScreen("/filter: text, regex (re:…), -l label selector; ! before any keeps the rest",
                                      self.resources.filter.text,
                                      "empty clears the filter"), done)

    def action_prompt_namespace(self) -> None:
        from kconsole.tui.screens import PromptScreen

        names: list[str] = []
        ns = self.model.watched.get("namespaces")
        if ns is not None:
            names = sorted(o["metadata"]["name"] for o in ns.informer.list())

        def done(value: str | None) -> None:
            if value is not None:
                self.resources.set_namespace(value.strip() or None)
                self.remember_namespace(value.strip())

        favourites = self.favourites().hint()
        self.push_screen(PromptScreen("namespace (empty: all namespaces)", self.resources.namespace or "",
                                      f"favourites: {favourites}" if favourites else ", ".join(names[:20]), names),
                         done)

    def switch_kind_safely(self, name: str) -> bool:
        """Switch Resources to another kind; say why not, or that the old kind's filter was cleared."""
        try:
            shown = self.resources.switch_kind(name)
        except FilterError as err:
            self.notify(str(err), severity="error")
            return False
        if self.resources.cleared_filter:
            self.notify(f"filter /{self.resources.cleared_filter} cleared: it was for the previous kind, "
                        f"not {shown}", severity="warning")
        return True

    def action_all_namespaces(self) -> None:
        self.resources.set_namespace(None)

    def action_sort_next(self) -> None:
        self.resources.sort_next()

    def action_sort_reverse(self) -> None:
        self.resources.toggle_reverse()

    def action_toggle_maximise(self) -> None:
        screen = self.screen
        if screen.maximized is not None:
            screen.minimize()
            return
        panel = self.focused_panel()
        if panel is not None:
            screen.maximize(panel, container=False)

    def action_close(self) -> None:
        if self.screen.maximized is not None:
            self.screen.minimize()
        elif self.events_panel.about is not None:
            self.events_panel.show_about(None)
        elif self.resources.filter.text:
            self.resources.set_filter("")
        else:
            self.status_line.say("escape: nothing to close (no zoom, filter or event focus)", "warning")

    def action_describe(self) -> None:
        from kconsole.tui.screens import DescribeScreen

        if self.focused_panel() is self.manifests:
            self._open_manifest()
            return
        if self.focused_panel() is self.etcd and self.etcd.selected_member():
            from kconsole.tui.screens.base import TextScreen

            detail = self.etcd.member_detail()
            if detail is not None:
                self.push_screen(TextScreen(*detail))
                return
        obj = self.selected_object()
        if obj is None:
            self.notify("nothing selected", severity="warning")
            return
        self.push_screen(DescribeScreen(obj, self.model.events_for(obj), self.model.client, self.model.now(),
                                        theme=self._syntax_theme()))

    def action_yaml(self) -> None:
        from kconsole.tui.screens import YamlScreen

        obj = self.selected_object()
        if obj is None:
            self.notify("nothing selected", severity="warning")
            return
        self.push_screen(YamlScreen(obj, theme=self._syntax_theme()))

    def action_object_history(self) -> None:
        from kconsole.tui.screens import HistoryScreen

        obj = self.selected_object()
        if obj is None or not obj.get("kind") or not (obj.get("metadata") or {}).get("name"):
            self.notify("select an object to see its history", severity="warning")
            return
        try:
            self.push_screen(HistoryScreen(self.model.client, obj))
        except StatusError as err:
            self.notify(f"no history for it: {err}", severity="warning")

    def _syntax_theme(self) -> str:
        return "ansi_dark" if self.current_theme.dark else "ansi_light"

    def action_events_for_selection(self) -> None:
        if self.events_panel.about is not None:
            self.events_panel.show_about(None)
            return
        obj = self.selected_object()
        if obj is not None and obj.get("kind") == "Event" and obj.get("involvedObject"):
            # On an event row: the events of the object it is about (an event has none of its own).
            inv = obj["involvedObject"]
            obj = {"kind": inv.get("kind"), "apiVersion": inv.get("apiVersion"),
                   "metadata": {k: inv[k] for k in ("name", "namespace", "uid") if inv.get(k)}}
        if obj is None:
            self.notify("select an object to list its events", severity="warning")
            return
        self.events_panel.show_about(obj)

    def action_open_selection(self) -> None:
        panel = self.focused_panel()
        if panel is self.scheduling:
            obj = self.scheduling.selected()
            if obj is not None and obj.get("kind") == "SchedulingDecision":
                from kconsole.tui.screens import MatrixScreen

                self.push_screen(MatrixScreen(obj))
                return
        if panel is self.faults:
            self.status_line.say("enter: a fault has nothing to open (h heals the selected one)", "warning")
            return
        self.action_describe()

    def _open_manifest(self) -> None:
        screen = self.manifests.open_selected()
        if screen is None:
            self.notify("no manifest file selected", severity="warning")
            return
        self.push_screen(screen)

    def action_chain(self) -> None:
        self.run_worker(self._open_chain(self.selected_object()), group="chain", exclusive=True)

    async def _open_chain(self, obj: dict[str, Any] | None) -> None:
        from kconsole.tui.screens import ChainScreen

        found = await self._deployment_of(obj)
        if found is None:
            self.notify("select a Deployment, or a ReplicaSet or Pod it owns", severity="warning")
            return
        self.push_screen(ChainScreen(self.model, *found))

    async def _deployment_of(self, obj: dict[str, Any] | None) -> tuple[str, str] | None:
        """The Deployment controlling ``obj`` (itself, its ReplicaSet's owner, or its Pod's)."""
        if obj is None or self.model.client is None:
            return None
        meta = obj.get("metadata") or {}
        ns = meta.get("namespace") or "default"
        kind = obj.get("kind") or self.resources.kind
        if kind == "Deployment":
            return ns, meta["name"]
        for _ in range(2):
            ref = next((r for r in meta.get("ownerReferences") or () if r.get("controller")), None)
            if ref is None:
                return None
            if ref.get("kind") == "Deployment":
                return ns, ref["name"]
            if ref.get("kind") != "ReplicaSet":
                return None
            try:
                rs = await self.model.client.get("replicasets", ref["name"], ns)
            except StatusError:
                return None
            meta = rs.get("metadata") or {}
        return None

    def action_api_log(self) -> None:
        from kconsole.tui.screens import ApiLogScreen

        if self.model.client is None:
            self.notify("the API server is not up yet", severity="warning")
            return
        self.push_screen(ApiLogScreen(self.model.client))

    def action_proxy_rules(self) -> None:
        from kconsole.tui.screens import ProxyScreen

        obj = self.selected_object() or {}
        node = ""
        if obj.get("kind") == "Node" or (not obj.get("kind") and self.resources.kind == "Node"):
            node = (obj.get("metadata") or {}).get("name", "")
        elif (obj.get("spec") or {}).get("nodeName"):
            node = obj["spec"]["nodeName"]
        proxies = getattr(self.cluster, "proxies", None) or {}
        if not node:
            node = next(iter(sorted(proxies)), "")
        if not node:
            self.notify("no kube-proxy is running", severity="warning")
            return
        self.push_screen(ProxyScreen(self.cluster, node))

    def action_referee_toggle(self) -> None:
        """``R``: start the referee over the cluster; again: stop it and show its report. In a drill:
        the drill's referee's report so far."""
        from kconsole.tui.refereeview import drill_text
        from kconsole.tui.screens import RefereeScreen

        drill_referee = self.drill.runner.referee if self.drill is not None else None
        if drill_referee is not None:
            self.push_screen(RefereeScreen("referee · this drill", drill_text(drill_referee)))
            return
        ref = self.console_referee
        if ref.busy:
            self.status_line.say("the referee is busy (starting, or judging its recording)", "warning")
        elif why := ref.available():
            self.status_line.say(why, "warning")
        elif not self.ready:
            self.status_line.say("the cluster is not up yet", "warning")
        elif ref.watching:
            self.status_line.say("referee: catching up and judging...")
            self.run_worker(self._referee_stop(), group="referee", exclusive=True)
        else:
            self.run_worker(self._referee_start(), group="referee", exclusive=True)

    async def _referee_start(self) -> None:
        try:
            said = await self.console_referee.start()
        except Exception as err:  # noqa: BLE001 - the console stays up and says why
            log.exception("the referee could not start")
            self.status_line.say(f"the referee could not start: {err}", "error")
            return
        self.status_line.say(said)

    async def _referee_stop(self) -> None:
        from kconsole.tui.refereeview import report_text
        from kconsole.tui.screens import RefereeScreen

        try:
            report = await self.console_referee.stop()
        except Exception as err:  # noqa: BLE001 - the console stays up and says why
            log.exception("the referee could not judge")
            self.status_line.say(f"the referee could not judge its recording: {err}", "error")
            return
        self.status_line.say(report.summary(), "information" if report.passed else "error")
        self.push_screen(RefereeScreen("referee · report", report_text(report)))

    def action_help(self) -> None:
        from kconsole.tui.screens import HelpScreen

        self.push_screen(HelpScreen(self.keymap_overrides, self.readonly))

    # ------------------------------------------------------------------ faults

    def action_fault_menu(self) -> None:
        from kconsole.tui.screens import ChoiceScreen

        if self.refuse_readonly():
            return
        target = self.selected_target()
        try:
            types = faultview.types_for(self.cluster, target[0]) if target else []
            global_types = faultview.types_for(self.cluster, "apiserver")
        except faultview.FaultsUnavailable as err:
            self.notify(str(err), severity="error")
            return
        choices = [(f"{t.name}\t{target[1]}", f"{t.name:<32} {target[1]}: {t.description}")
                   for t in types] if target else []
        choices += [(f"{t.name}\tapiserver", f"{t.name:<32} {t.description}") for t in global_types]
        if not choices:
            self.notify(f"no faults apply to {target[0] if target else 'this row'}", severity="warning")
            return

        def chosen(value: str | None) -> None:
            if value:
                name, _, where = value.partition("\t")
                self.confirm_fault(name, where)

        self.push_screen(ChoiceScreen(f"Inject a fault{f' into {target[0]} {target[1]}' if target else ''}", choices),
                         chosen)

    def confirm_fault(self, fault_type: str, target: str) -> None:
        from kconsole.tui.screens import ConfirmScreen

        if self.refuse_readonly():
            return
        expect = next((t.expect for t in faultview.fault_types(self.cluster) if t.name == fault_type), "")

        def answered(yes: bool | None) -> None:
            if yes:
                self.run_worker(self._apply_fault(fault_type, target), group="faults")

        self.push_screen(ConfirmScreen(f"Apply {fault_type} to {target or 'the cluster'}?",
                                       f"expect: {expect}" if expect else ""), answered)

    async def _apply_fault(self, fault_type: str, target: str) -> None:
        try:
            fault_id = await faultview.apply(self.cluster, fault_type, target)
        except Exception as err:  # noqa: BLE001 - the catalog's error is the user's answer
            self.notify(f"{fault_type} on {target}: {err}", severity="error")
            return
        self.notify(f"applied {fault_type} to {target or 'the cluster'} (fault {fault_id}); h heals it")
        self.render_pending()

    def _quick_fault(self, kind: str, fault_names: tuple[str, ...], verb: str) -> None:
        if self.refuse_readonly():
            return
        target = self.selected_target()
        if target is None or not faultview.same_kind(target[0], kind):
            self.notify(f"select a {kind} to {verb}", severity="warning")
            return
        try:
            names = {t.name for t in faultview.types_for(self.cluster, kind)}
        except faultview.FaultsUnavailable as err:
            self.notify(str(err), severity="error")
            return
        name = next((n for n in fault_names if n in names), None)
        if name is None:
            self.notify(f"the fault catalog has no {'/'.join(fault_names)}", severity="error")
            return
        self.confirm_fault(name, target[1])

    def action_kill_selected(self) -> None:
        self._quick_fault("pod", ("pod-kill",), "kill")

    def action_cordon_selected(self) -> None:
        obj = self.selected_object() or {}
        cordoned = bool((obj.get("spec") or {}).get("unschedulable"))
        self._quick_fault("node", ("uncordon",) if cordoned else ("cordon",), "cordon")

    def action_heal_selected(self) -> None:
        if self.refuse_readonly():
            return
        fault_id = self.faults.selected_fault() if self.focused_panel() is self.faults else None
        if fault_id is None:
            active = faultview.active_faults(self.cluster)
            if len(active) == 1:
                fault_id = active[0].id
        if fault_id is None:
            self.notify("select a fault in the Faults panel (or H heals all)", severity="warning")
            return
        self.run_worker(self._heal(fault_id), group="faults")

    async def _heal(self, fault_id: str) -> None:
        try:
            await faultview.heal(self.cluster, fault_id)
        except Exception as err:  # noqa: BLE001
            self.notify(f"heal {fault_id}: {err}", severity="error")
            return
        self.notify(f"healed fault {fault_id}")
        self.render_pending()

    def action_heal_all(self) -> None:
        if self.refuse_readonly():
            return
        self.run_worker(self._heal_all(), group="faults")

    async def _heal_all(self) -> None:
        try:
            n = await faultview.heal_all(self.cluster)
        except Exception as err:  # noqa: BLE001
            self.notify(f"heal all: {err}", severity="error")
            return
        self.notify(f"healed {n} fault(s)")
        self.render_pending()

    # ------------------------------------------------------------------ time

    def _time_control(self, name: str) -> Callable[..., Any] | None:
        fn = getattr(self.model.clock, name, None)
        if fn is None:
            self.notify("this clock cannot be controlled (virtual clock)", severity="warning")
        return fn

    def action_toggle_pause(self) -> None:
        clock = self.model.clock
        fn = self._time_control("resume" if clock.paused else "pause")
        if fn is not None:
            fn()
            self.notify("time paused (. steps one second)" if clock.paused else "time resumed", timeout=2)
            self.header.sync()

    def _set_speed(self, direction: int) -> None:
        fn = self._time_control("set_speed")
        if fn is None:
            return
        speed = self.model.clock.speed
        if direction > 0:
            new = next((s for s in SPEEDS if s > speed), SPEEDS[-1])
        else:
            new = next((s for s in reversed(SPEEDS) if s < speed), SPEEDS[0])
        fn(new)
        self.notify(f"speed ×{new:g}", timeout=2)
        self.header.sync()

    def action_speed_up(self) -> None:
        self._set_speed(1)

    def action_slow_down(self) -> None:
        self._set_speed(-1)

    def action_step(self) -> None:
        fn = self._time_control("step")
        if fn is not None:
            fn(1.0)
            self.header.sync()

    # ------------------------------------------------------------------ rewind

    def _samples_folder(self) -> Path | None:
        """Where recorded etcd member state is kept: the data folder, unless the cluster is ephemeral."""
        config = getattr(self.cluster, "config", None)
        data_dir = getattr(config, "data_dir", None)
        return None if data_dir is None or getattr(config, "ephemeral", False) else Path(data_dir)

    def _start_rewind(self) -> None:
        """The cursor over the history, when the API server serves history reads."""
        try:
            from kconsole.client.history import HistoryClient
        except ImportError:
            return
        from kconsole.tui.rewind import Rewind

        self.rewind = Rewind(self.model, HistoryClient(self.model.client), self.etcd_samples)
        self.rewind.on_loaded = lambda: self.resources.sync(force=True)

    def _record_etcd(self) -> None:
        live = self.model.live
        if live.etcd_members:
            self.etcd_samples.record(live.etcd_members, live.quorum, live.kv_status, self.model.clock.now())

    def live_key(self) -> str:
        keys = self.keymap_overrides.get("rewind.live", keymap.SPECS["rewind.live"].key)
        return keymap.display_key(keys.split(",")[0])

    def refuse_past(self) -> bool:
        """True (and says why) while the panels show the past: nothing there can be changed."""
        revision = self.rewind.revision if self.rewind is not None else None
        if revision is None:
            return False
        self.notify(f"read-only at rev {revision}: press {self.live_key()} to return live", severity="warning")
        return True

    def where_text(self) -> str:
        """``LIVE``, or ``at rev N · <simulated time> · <n> behind`` (the header's and strip's cursor)."""
        rewind = self.rewind
        if rewind is None or rewind.view is None:
            return "LIVE"
        view = rewind.view
        when = datetime.fromtimestamp(view.time or 0.0, timezone.utc).strftime("%H:%M:%S")
        return f"at rev {view.revision} · {when} · {rewind.behind()} behind"

    def _view_changed(self) -> None:
        """Live <-> past: the panels holding a cache take the new view's, and everything redraws."""
        self.resources.watched = self.model.watch(self.resources.group_resource)
        self.header.where = self.where_text()
        self.render_pending(force=True)
        self._show_cursor()
        data = self.timeline.data
        if self.model.past and (data is None or None in data.writes):
            self.run_worker(self.refresh_timeline, group="timeline", exclusive=True)

    def _show_cursor(self) -> None:
        view = self.rewind.view if self.rewind is not None else None
        self.timeline.show(None, view.time if view is not None else None,
                           f"rev {view.revision}" if view is not None else "LIVE")

    async def refresh_timeline(self) -> None:
        """Read the history's figures for the strip (a worker: one read per bucket edge)."""
        if self.rewind is None or not self.is_mounted(self.timeline):
            return
        lookups = None if self.rewind.view is not None else TIMELINE_LOOKUPS  # rewinding: all at once
        try:
            data = await self.rewind.timeline(self.timeline.buckets(), lookups)
        except Exception as err:  # noqa: BLE001 - the strip says why, the console stays up
            log.debug("timeline not read: %s", err)
            return
        view = self.rewind.view
        self.timeline.show(data, view.time if view is not None else None,
                           f"rev {view.revision}" if view is not None else "LIVE")
        self.header.where = self.where_text()
        self.header.sync()

    async def _refresh_behind(self) -> None:
        """In the past: how far behind live the panels are moves as the live cluster writes."""
        try:
            await self.rewind.refresh()
        except Exception as err:  # noqa: BLE001 - the figure waits for the next sample
            log.debug("history bounds not read: %s", err)
            return
        self.header.where = self.where_text()
        self.header.sync()

    def action_rewind(self, what: str, step: int) -> None:
        """``[`` ``]`` a revision, ``{`` ``}`` an Event, ``<`` ``>`` a warning or fault, back or forth."""
        if self.rewind is None:
            self.status_line.say("rewind: the history is not available (the cluster is not up, "
                                 "or its API server serves no history reads)", "warning")
            return
        self.run_worker(partial(self._rewind_step, what, step), group="rewind")

    async def _rewind_step(self, what: str, step: int) -> None:
        try:
            moved = await self.rewind.step(what, step)
        except Exception as err:  # noqa: BLE001 - the history's answer (410, no such revision) is the user's
            self.status_line.say(f"rewind: {getattr(err, 'message', None) or err}", "error")
            return
        if moved is None and step > 0 and self.rewind.view is None:
            self.status_line.say("already live: the newest revision is shown")
            return
        if moved is None:
            label = {"revision": "revision", "event": "event", "warning": "warning or fault"}[what]
            self.status_line.say(f"rewind: no {label} {'before' if step < 0 else 'after'} this one "
                                 f"in the kept history", "warning")
            return
        self._after_move()

    def _after_move(self) -> None:
        rewind = self.rewind
        if rewind.view is None:
            self.status_line.say("live")
            return
        # Not forced: the panels redraw the rows the step changed (the focused one now, the others
        # on their interval), as they do for a batch of live changes.
        self.render_pending()
        self._show_cursor()
        self.status_line.say(f"{self.where_text()} · [ ] revision · {{ }} event · < > warning/fault · "
                             f"t jump · {self.live_key()} live")

    def action_rewind_jump(self) -> None:
        from kconsole.tui.screens import PromptScreen

        if self.rewind is None:
            self.action_rewind("revision", 0)
            return

        def done(value: str | None) -> None:
            if value:
                self.run_worker(partial(self._rewind_jump, value), group="rewind")

        self.push_screen(PromptScreen("jump to: r1234 (revision), -5m / +30s (from the cursor), 12:03:10 (time)",
                                      "", "enter a revision or a time; L returns live"), done)

    async def _rewind_jump(self, text: str) -> None:
        from kconsole.tui.rewind import TargetError, parse_target

        try:
            target = parse_target(text, self.model.now())
            if target.revision is not None:
                await self.rewind.goto(target.revision)
            else:
                await self.rewind.goto_time(target.time)
        except TargetError as err:
            self.status_line.say(f"jump: {err}", "error")
            return
        except Exception as err:  # noqa: BLE001 - the history's answer is the user's
            self.status_line.say(f"jump: {getattr(err, 'message', None) or err}", "error")
            return
        self._after_move()

    def action_rewind_live(self) -> None:
        if self.rewind is None or self.rewind.view is None:
            self.status_line.say("already live")
            return
        self.rewind.go_live()
        self.status_line.say("live")

    # ------------------------------------------------------------------ shutdown

    async def shutdown(self, stop_cluster: bool = True) -> None:
        """Stop the caches, then the cluster (what quitting means)."""
        self.model.on_change = None
        await self.console_referee.close()
        if self._batch is not None:
            self._batch.cancel()
            self._batch = None
        await self.model.stop()
        if self._own_catalog and getattr(self.cluster, "faults", None) is not None:
            await self.cluster.faults.close()
            self.cluster.faults = None
            self._own_catalog = False
        starting, self._starting = self._starting, None
        if starting is not None:
            # Quit while the cluster was starting: let the start finish (or fail) if it does so soon,
            # else cancel it (a start that waits for something that never comes must not hold the
            # exit); the stop below then closes what it got to.
            await asyncio.wait({starting}, timeout=START_WAIT_ON_QUIT)
            if not starting.done():
                starting.cancel()
            await asyncio.gather(starting, return_exceptions=True)
        if stop_cluster and (getattr(self.cluster, "started", False) or starting is not None):
            await self.cluster.stop()

    async def on_unmount(self) -> None:
        await self.shutdown(stop_cluster=self.owns_cluster)

    def action_quit(self) -> None:  # type: ignore[override]
        self.exit(0)

    def exit(self, result: Any = None, return_code: int = 0, message: Any = None) -> None:
        if self.on_exit_requested is not None:
            self.on_exit_requested(int(result or 0) if isinstance(result, int) else 0)
        super().exit(result, return_code, message)
