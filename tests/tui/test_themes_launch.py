"""Themes (load, bad files, live reload through watchfiles), config-file keymaps, and the launch
path: first frame before the cluster starts, time controls on the real clock, clean quit."""

from __future__ import annotations

import argparse
import asyncio
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from kconsole.cluster import Cluster, ClusterConfig, ConfigError
from kconsole.tui.app import ConsoleApp
from kconsole.tui.keymap import KeymapError
from kconsole.tui.launch import console_settings
from kconsole.tui.themes import THEMES_DIR, ThemeError, discover, load_theme_file, parse_theme

#: The async tests share the module's cluster, so they run on its loop.
on_module_loop = pytest.mark.asyncio(loop_scope="module")


def test_shipped_themes_load_with_state_slots() -> None:
    found, errors = discover([THEMES_DIR])
    assert errors == []
    names = {tf.theme.name for tf in found}
    assert {"kconsole-dark", "kconsole-light", "high-contrast"} <= names and len(names) >= 4
    assert any(not tf.theme.dark for tf in found)
    for tf in found:
        assert {f"state-{s}" for s in ("running", "pending", "failed", "added", "modified", "deleted",
                                       "warning")} <= set(tf.theme.variables)


@pytest.mark.parametrize("text, message", [
    ("name: x\npalette: {primary: '#fff', foreground: '#000'\n", "not valid YAML at line"),
    ("name: x\npalette: {primary: '#fff', foreground: '#000', background: blurple}\n",
     "palette.background = 'blurple' is not a colour"),
    ("name: x\npalette: {primary: '#fff', foreground: '#000'}\n", "palette.background is missing"),
    ("name: x\npalette: {primary: '#fff', foreground: '#000', background: '#000'}\nstates: {runing: red}\n",
     "unknown state 'runing'"),
    ("- a list\n", "expected a mapping"),
])
def test_bad_theme_files_name_the_problem(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ThemeError, match=message.replace("(", r"\(")) as err:
        parse_theme(tmp_path / "broken.yaml", text)
    assert "broken.yaml" in str(err.value)


@on_module_loop
async def test_broken_theme_leaves_console_running_and_live_reload(cluster: Any, tmp_path: Path) -> None:
    c, _clock = cluster
    themes = tmp_path / "themes"
    themes.mkdir()
    shutil.copy(THEMES_DIR / "kconsole-light.yaml", themes / "mine.yaml")
    (themes / "broken.yaml").write_text("name: broken\npalette: [not, a, mapping]\n")
    app = ConsoleApp(c, live=False, theme="broken", theme_dirs=[themes])
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.theme == "kconsole-light"  # the fallback when the default is not in the folder either
        assert any("broken.yaml" in e for e in app.theme_errors)
        assert any("unknown theme 'broken'" in e for e in app.theme_errors)
        # Break the active theme file on disk: the console keeps its theme and says why.
        (themes / "mine.yaml").write_text("name: kconsole-light\npalette: {primary: nope}\n")
        deadline = time.monotonic() + 10
        while not any("mine.yaml" in e for e in app.theme_errors) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)  # watchfiles' own debounce is wall time
        assert any("mine.yaml" in e and "keeping theme kconsole-light" in e for e in app.theme_errors)
        assert app.theme == "kconsole-light" and app.is_running
        # Fix it with a new primary colour: the live theme changes.
        fixed = (THEMES_DIR / "kconsole-light.yaml").read_text().replace('primary: "#1d4ed8"', 'primary: "#ff0000"')
        (themes / "mine.yaml").write_text(fixed)
        deadline = time.monotonic() + 10
        while app.current_theme.primary != "#ff0000" and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert app.current_theme.primary == "#ff0000"


@on_module_loop
async def test_theme_from_a_file_path(cluster: Any) -> None:
    c, _clock = cluster
    app = ConsoleApp(c, live=False, watch_themes=False, theme=str(THEMES_DIR / "high-contrast.yaml"))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.theme == "high-contrast"
        await pilot.press("T")
        assert app.theme != "high-contrast"


def test_console_settings_from_config_file(tmp_path: Path) -> None:
    path = tmp_path / "kconsole.yaml"
    path.write_text("console:\n  theme: solarized\n  keymap:\n    resource.describe: x\n")
    args = argparse.Namespace(config=str(path), dir=str(tmp_path), theme=None, readonly=True)
    settings = console_settings(ClusterConfig.from_args(args), args)
    assert settings["theme"] == "solarized" and settings["readonly"] is True
    assert settings["keymap_overrides"] == {"resource.describe": "x"}
    path.write_text("console:\n  keymap:\n    resource.describ: x\n")
    with pytest.raises(KeymapError, match="unknown binding id 'resource.describ'"):
        console_settings(ClusterConfig.from_args(args), args)
    path.write_text("console:\n  colour: red\n")
    with pytest.raises(ConfigError, match="unknown key"):
        console_settings(ClusterConfig.from_args(args), args)
    assert load_theme_file(THEMES_DIR / "solarized.yaml").name == "solarized"


@on_module_loop
async def test_first_frame_before_cluster_start_then_time_controls(tmp_path: Path) -> None:
    """Real clock: the console paints, boots the cluster itself, and pause/speed/step act on it."""
    config = ClusterConfig(nodes=0, control_planes=1, http=False, data_dir=tmp_path / "data")
    cluster = Cluster(config)
    app = ConsoleApp(cluster, live=False, watch_themes=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.first_paint_at is not None
        deadline = time.monotonic() + 30
        while not app.ready and time.monotonic() < deadline and not app.boot_error:
            await asyncio.sleep(0.05)
        assert app.ready and cluster.started
        clock = cluster.clock
        await pilot.press("space")
        assert clock.paused
        frozen = clock.now()
        await pilot.press("full_stop")
        assert clock.now() == pytest.approx(frozen + 1.0)
        await pilot.press("space")
        assert not clock.paused
        await pilot.press("plus")
        assert clock.speed == 2.0
        await pilot.press("minus")
        await pilot.press("minus")
        assert clock.speed == 0.5
        await pilot.press("q")
    assert not cluster.started  # quitting stopped the cluster the console started


@on_module_loop
async def test_quitting_while_the_cluster_starts_stops_it_and_leaves_no_threads(tmp_path: Path) -> None:
    """Real clock: 'q' right after the first frame, while three etcd members are being opened."""
    import threading

    before = set(threading.enumerate())
    config = ClusterConfig(nodes=0, control_planes=3, http=False, data_dir=tmp_path / "data")
    cluster = Cluster(config)
    app = ConsoleApp(cluster, live=False, watch_themes=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.first_paint_at is not None and not cluster.started
        await pilot.press("q")
    assert not cluster.started and cluster.etcd is None
    deadline = time.monotonic() + 10
    # The loop's own executor threads (asyncio_N) end with the loop; anything else would keep the
    # process from exiting (aiosqlite connections, members' WAL threads).
    while (left := [t.name for t in set(threading.enumerate()) - before
                    if t.is_alive() and not t.name.startswith("asyncio_")]) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert left == []
