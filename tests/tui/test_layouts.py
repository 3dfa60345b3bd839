"""The console at the sizes people use (80x24, 120x40, 200x55): every panel shows the columns that
carry its meaning uncut, the layout adapts (one panel at a time below 140x40, the dashboard above),
focus and the status line say what a key acts on, every shipped theme colours every table row,
readonly says so, a kind switch clears the old kind's filter and says so, and screenshots land
where the console says."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tui_helpers import until

from kconsole.cluster import ADMIN, SYNC
from kconsole.tui.app import ConsoleApp
from kconsole.tui.themes import THEMES_DIR
from kconsole.tui.widgets import VirtualTable
from kconsole.tui.widgets.fit import Fit, fit_widths

pytestmark = pytest.mark.asyncio(loop_scope="module")

SIZES = [(80, 24), (120, 40), (200, 55)]

#: Per panel: the columns that must show whole, and the free-text column whose start must show.
KEY_COLUMNS: dict[str, tuple[tuple[str, ...], str | None]] = {
    "leases": (("Holder",), None),
    "etcd": (("Is Leader", "Health"), None),
    "scheduling": (("Result",), "Reason"),
    "manifests": (("Status",), "Detail"),
    "events": (("Reason", "Object"), "Message"),
}


def screen_lines(app: ConsoleApp) -> list[str]:
    return ["".join(seg.text for seg in strip) for strip in app.screen._compositor.render_strips()]


async def settle(app: ConsoleApp, pilot: Any) -> None:
    await pilot.pause()
    app.render_pending(force=True)
    await pilot.pause()


@pytest.fixture(scope="module")
def prepared(cluster: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The module's cluster with something in every panel: an unschedulable pod (a scheduling
    REASON), and a manifests folder with a broken file (a DETAIL)."""
    return cluster, tmp_path_factory.mktemp("manifests")


async def _with_content(cluster: Any, folder: Path) -> Any:
    from kconsole.sync import ManifestSync

    c, clock = cluster
    if getattr(c, "sync", None) is None:
        admin = c.api_client(ADMIN)
        await admin.create({"apiVersion": "v1", "kind": "Pod",
                            "metadata": {"name": "huge", "namespace": "default"},
                            "spec": {"containers": [{"name": "c", "image": "nginx:1.27",
                                                     "resources": {"requests": {"cpu": "64"}}}]}})
        (folder / "broken.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: broken\n"
                                            "spec:\n  containers: []\n")
        sync = ManifestSync(c.api_client(SYNC), folder, data_dir=folder.parent / "sync-data", clock=clock,
                            watch=False)
        await sync.start()
        c.sync = sync
    return c, clock


async def ready(app: ConsoleApp, clock: Any, pilot: Any) -> None:
    await until(clock, lambda: app.ready, pilot)
    await until(clock, lambda: any(r.cells[2] == "Unschedulable" for r in app.scheduling.table.rows)
                and app.manifests.table.rows and len(app.etcd.table.rows) == 3
                and len(app.leases.table.rows) >= 2 and len(app.events_panel.table.rows) >= 5, pilot)
    await app.sample_now()


def check_panel(app: ConsoleApp, panel_id: str, size: tuple[int, int]) -> None:
    panel = next(p for p in app.panels if p.id == panel_id)
    table = panel.table
    whole, free = KEY_COLUMNS[panel_id]
    text = "\n".join(screen_lines(app))
    rows = table.rows[:max(1, table.size.height - 1)]
    assert rows, panel_id
    for name in whole:
        i = table.columns.index(name)
        assert table.shown_widths[i] == table.widths[i], (size, panel_id, name, table.shown_widths, table.widths)
        for row in rows:
            assert row.cells[i] in text, (size, panel_id, name, row.cells[i])
    if free is not None:
        i = table.columns.index(free)
        assert table.shown_widths[i] >= min(table.widths[i], 12), (size, panel_id, free, table.shown_widths)
        for row in rows:
            assert row.cells[i][:table.shown_widths[i] - 1] in text, (size, panel_id, free, row.cells[i])


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
async def test_key_columns_uncut_at_every_size(prepared: Any, size: tuple[int, int]) -> None:
    cluster, folder = prepared
    c, clock = await _with_content(cluster, folder)
    app = ConsoleApp(c, live=False, watch_themes=False)
    async with app.run_test(size=size) as pilot:
        await ready(app, clock, pilot)
        await settle(app, pilot)
        compact = size[0] < 140 or size[1] < 40
        assert app.compact is compact
        for panel_id in KEY_COLUMNS:
            if compact:
                app.show_panel(panel_id)
                await settle(app, pilot)
                # One panel fills the screen; the switcher in the header names the one shown.
                shown = [p.id for p in app.panels if p.display]
                assert shown == [panel_id], shown
                assert any(s for _, pid, s in app.header.switcher if pid == panel_id)
            check_panel(app, panel_id, size)
        # The unschedulable pod's reason is there to read, whole when the panel is wide enough.
        sched = app.scheduling.table
        reason = next(r.cells[6] for r in sched.rows if r.cells[2] == "Unschedulable")
        assert reason.startswith("0/5 nodes are available")


async def test_tab_brings_each_panel_into_view_and_the_status_line_names_the_target(prepared: Any) -> None:
    cluster, folder = prepared
    c, clock = await _with_content(cluster, folder)
    app = ConsoleApp(c, live=False, watch_themes=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, clock, pilot)
        seen = []
        for _ in app.panels:
            seen.append(next(p.id for p in app.panels if p.display))
            assert app.focused_panel() is app.shown
            await pilot.press("tab")
            await settle(app, pilot)
        assert seen == [p.id for p in app.panels]
        assert app.shown is app.resources
        await pilot.press("shift+tab")
        assert app.shown is app.faults
        # A click on a name in the switcher brings that panel up.
        app.show_panel("resources")
        await settle(app, pilot)
        row = app.resources.table.cursor_row
        assert row is not None
        ns, name = row.cells[0], row.cells[1]
        # The status line says what f acts on: the pod under the cursor, by name.
        assert f"f fault on pod {ns}/{name}" in app.status_line.text
        app.show_panel("etcd")
        await settle(app, pilot)
        assert "f fault on etcd-member etcd-" in app.status_line.text
        # Growing the terminal brings the dashboard back, with every panel shown.
        await pilot.resize_terminal(200, 55)
        await settle(app, pilot)
        assert not app.compact and all(p.display for p in app.panels)
        assert app.focused_panel() is app.etcd


async def test_a_key_that_does_not_apply_says_so(prepared: Any) -> None:
    cluster, folder = prepared
    c, clock = await _with_content(cluster, folder)
    app = ConsoleApp(c, live=False, watch_themes=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, clock, pilot)
        await pilot.press("x")
        assert app.status_line.text == "x: no key here in pods (? lists every key)"
        app.show_panel("faults")
        await settle(app, pilot)
        await pilot.press("C")  # cordon: on the Faults panel there is no node
        assert "select a node to cordon" in app.status_line.text


async def test_kind_switch_clears_the_filter_and_says_so(prepared: Any) -> None:
    from kconsole.tui.screens import PromptScreen

    cluster, folder = prepared
    c, clock = await _with_content(cluster, folder)
    app = ConsoleApp(c, live=False, watch_themes=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, clock, pilot)
        app.resources.set_filter("coredns")
        assert app.resources.table.rows and app.resources.filter.text == "coredns"
        await pilot.press("colon")
        assert isinstance(app.screen, PromptScreen)
        app.screen.feed("no\n")
        await settle(app, pilot)
        assert app.resources.group_resource == "nodes"
        assert app.resources.filter.text == "" and len(app.resources.table.rows) == 5
        assert "/coredns" not in app.resources.border_title
        assert app.status_line.text == "filter /coredns cleared: it was for the previous kind, not nodes"


async def test_keys_typed_in_one_burst_reach_the_prompt(prepared: Any) -> None:
    """``:deploy⏎`` arriving at once (a paste in tmux, a fast typist): the keys after ``:`` come
    before the prompt's field has focus; they are typed into it, not dropped or taken as commands."""
    cluster, folder = prepared
    c, clock = await _with_content(cluster, folder)
    app = ConsoleApp(c, live=False, watch_themes=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, clock, pilot)
        from textual import events

        # Posted at once, as a terminal delivers a burst: no pause between keys.
        for key, char in (("colon", ":"), *((c, c) for c in "deploy"), ("enter", "\r")):
            app.post_message(events.Key(key, char))
        await settle(app, pilot)
        await settle(app, pilot)
        assert app.screen is app.screen_stack[0]
        assert app.resources.group_resource == "deployments.apps"
        # A bracketed paste does the same.
        app.post_message(events.Paste(":no\n"))
        await settle(app, pilot)
        await settle(app, pilot)
        assert app.resources.group_resource == "nodes"


async def test_readonly_badge_and_messages_at_every_size(prepared: Any) -> None:
    cluster, folder = prepared
    c, clock = await _with_content(cluster, folder)
    app = ConsoleApp(c, live=False, watch_themes=False, readonly=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, clock, pilot)
        assert "READ-ONLY" in screen_lines(app)[0]
        await pilot.press("f")
        assert app.status_line.text == "read-only: fault (f) is disabled (--readonly)"
        assert app.status_line.text in "\n".join(screen_lines(app))
        await pilot.resize_terminal(200, 55)
        await settle(app, pilot)
        assert "READ-ONLY" in screen_lines(app)[0]


async def test_screenshot_goes_to_the_data_folder_or_a_given_path_and_says_where(prepared: Any,
                                                                                tmp_path: Path) -> None:
    cluster, folder = prepared
    c, clock = await _with_content(cluster, folder)
    app = ConsoleApp(c, live=False, watch_themes=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, clock, pilot)
        saved = app.deliver_screenshot("shot.svg")
        assert saved is not None and Path(saved) == Path(c.config.data_dir) / "shot.svg"
        assert Path(saved).read_text().startswith("<svg")
        assert app.status_line.text == f"screenshot saved to {Path(saved).resolve()}"
        elsewhere = tmp_path / "new" / "folder"
        saved = app.deliver_screenshot("b.svg", str(elsewhere))
        assert saved == str(elsewhere / "b.svg") and (elsewhere / "b.svg").is_file()
        blocker = tmp_path / "a-file"
        blocker.write_text("")
        assert app.deliver_screenshot("c.svg", str(blocker)) is None
        assert app.status_line.text.startswith(f"screenshot not saved: {blocker / 'c.svg'}: ")


@pytest.mark.parametrize("theme", sorted(p.stem for p in THEMES_DIR.glob("*.yaml")))
async def test_every_shipped_theme_colours_every_table_cell(prepared: Any, theme: str) -> None:
    """No table row (blank or not) keeps the terminal's own background (ESC[49m): every segment
    of every table line has the theme's background."""
    cluster, folder = prepared
    c, clock = await _with_content(cluster, folder)
    app = ConsoleApp(c, live=False, watch_themes=False, theme=theme)
    async with app.run_test(size=(200, 55)) as pilot:
        await ready(app, clock, pilot)
        await settle(app, pilot)
        assert app.theme == theme
        strips = app.screen._compositor.render_strips()
        for table in app.screen.query(VirtualTable):
            region = table.region
            assert region.height > 1
            for y in range(region.y, region.y + region.height):
                line = strips[y].crop(region.x, region.x + region.width)
                bare = [seg.text for seg in line if seg.style is None or seg.style.bgcolor is None]
                assert not bare, (theme, table.id, y, bare)
        # Alternate rows are a shade apart, both from the theme.
        rows = {seg.style.bgcolor.triplet for y in (1, 2)
                for seg in app.resources.table.render_line(y) if seg.style and seg.style.bgcolor}
        assert len(rows) == 2


async def test_fit_hides_optional_columns_first_then_cuts_free_text() -> None:
    fits = [Fit(keep=0), Fit(keep=2), Fit(keep=0), Fit(keep=0, shrink_to=10, grow=True)]
    natural = [10, 8, 12, 60]
    assert fit_widths(natural, fits, 200) == [10, 8, 12, 60]  # room: every column whole
    assert fit_widths(natural, fits, 60) == [10, 8, 12, 24]  # free text takes what is left
    assert fit_widths(natural, fits, 40) == [10, 0, 12, 14]  # the optional column steps aside first
    assert fit_widths(natural, fits, 20) == [10, 0, 12, 10]  # never below its floor: scrolls instead


async def test_fault_menu_fits_a_small_terminal(prepared: Any) -> None:
    from kconsole.tui.screens import ChoiceScreen

    cluster, folder = prepared
    c, clock = await _with_content(cluster, folder)
    app = ConsoleApp(c, live=False, watch_themes=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, clock, pilot)
        await pilot.press("f")
        await settle(app, pilot)
        assert isinstance(app.screen, ChoiceScreen)
        for widget in app.screen.walk_children():
            region = widget.region
            if region.width and region.height:
                assert region.right <= 80 and region.bottom <= 24, (widget, region)
        await pilot.press("escape")


async def test_matrix_shows_node_total_and_winner_at_120_columns_with_node_frozen(prepared: Any) -> None:
    from kconsole.tui.screens import MatrixScreen

    cluster, folder = prepared
    c, clock = await _with_content(cluster, folder)
    app = ConsoleApp(c, live=False, watch_themes=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, clock, pilot)
        app.show_panel("scheduling")
        await settle(app, pilot)
        sched = app.scheduling.table
        # The attempt that scored the most nodes: the widest matrix.
        key = max((r for r in sched.rows if r.cells[2] == "Scheduled"), key=lambda r: int(r.cells[4].split("/")[0]))
        sched.select_key(key.key)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, MatrixScreen)
        table = app.screen.table
        lines = screen_lines(app)
        header = next(line for line in lines if line.startswith("NODE"))
        assert header.split()[:3] == ["NODE", "TOTAL", "WINNER"]
        winner = next(r for r in table.rows if r.cells[2] == "← winner")
        line = next(line for line in lines if line.startswith(winner.cells[0] + " "))
        assert winner.cells[1] in line and "← winner" in line
        # Every plugin column is there (none hidden), each a few cells wide.
        assert all(w for w in table.shown_widths)
        assert all(len(c) <= 5 for c in table.columns[3:-1])
        # Where the plugin columns do not fit, scrolling sideways keeps NODE in place.
        await pilot.resize_terminal(60, 24)
        await settle(app, pilot)
        await pilot.press("right", "right", "right")
        await settle(app, pilot)
        assert table.scroll_offset.x > 0
        lines = screen_lines(app)
        assert any(line.startswith("NODE ") for line in lines)
        assert any(line.startswith(winner.cells[0] + " ") for line in lines)


async def test_keys_with_nothing_to_act_on_say_so(prepared: Any) -> None:
    cluster, folder = prepared
    c, clock = await _with_content(cluster, folder)
    app = ConsoleApp(c, live=False, watch_themes=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, clock, pilot)
        await pilot.press("escape")
        assert app.status_line.text.startswith("escape: nothing to close")
        app.show_panel("faults")
        await settle(app, pilot)
        await pilot.press("enter")
        assert app.status_line.text.startswith("enter: a fault has nothing to open")
        await pilot.press("h")
        assert app.status_line.text.startswith("select a fault in the Faults panel")


async def test_prompt_keeps_keys_that_reached_it_before_its_field_had_focus() -> None:
    from textual import events
    from textual.app import App

    from kconsole.tui.screens import PromptScreen

    answers: list[str | None] = []
    app = App[None]()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = PromptScreen(":kind")
        app.push_screen(screen, answers.append)
        # Keys of a burst queued on the screen itself, handled only after the field took focus.
        for key, char in (("d", "d"), ("e", "e"), ("p", "p"), ("enter", "\r")):
            screen.post_message(events.Key(key, char))
        await pilot.pause()
        await pilot.pause()
        assert answers == ["dep"]
