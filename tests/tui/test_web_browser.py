"""``kconsole web`` in a real headless Chromium (Debian's, driven by Playwright): the URL's token is
required, the dashboard's panels render in the page, and a key typed in the browser reaches the console.

The terminal is drawn on a canvas, so the test reads what the console sent: the page's websocket
frames, recorded by a script added before the page's own, with escape sequences removed.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"

#: Records every websocket frame the page receives, as text, in window.__kconsole.
RECORD_FRAMES = """
window.__kconsole = [];
const Native = window.WebSocket;
window.WebSocket = function (...args) {
  const ws = new Native(...args);
  ws.addEventListener("message", async (ev) => {
    let data = ev.data;
    if (data instanceof Blob) data = await data.text();
    else if (data instanceof ArrayBuffer) data = new TextDecoder().decode(data);
    window.__kconsole.push(String(data));
  });
  return ws;
};
window.WebSocket.prototype = Native.prototype;
Object.assign(window.WebSocket, {CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3});
"""
SCREEN_TEXT = r"""() => window.__kconsole.join("").replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "")"""


async def test_web_console_renders_in_chromium_and_answers_keys(tmp_path: Path) -> None:
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium (the browser test drives Debian's Chromium)")
    from playwright.async_api import async_playwright

    folder = tmp_path / "manifests"
    folder.mkdir()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "kconsole", "web", str(folder), "--web-port", "0", "--ephemeral", "--nodes", "1",
        "--control-planes", "1", "--port", "0", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        start_new_session=True)
    try:
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
        assert line.startswith("kconsole web: open http://127.0.0.1:") and "/?token=" in line, line
        url = line.split("open ", 1)[1].strip()
        base = url.split("/?token=")[0]
        for without in (f"{base}/", f"{base}/?token=wrong", f"{base}/static/js/textual.js", f"{base}/ws"):
            with pytest.raises(urllib.error.HTTPError) as refused:
                await asyncio.to_thread(urllib.request.urlopen, without, timeout=10)
            assert refused.value.code == 403, without

        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
            try:
                page = await browser.new_page(viewport={"width": 1600, "height": 1000})
                await page.add_init_script(RECORD_FRAMES)
                await page.goto(url, wait_until="domcontentloaded")
                # The dashboard: every panel's title, and the cluster's own pods once it is up.
                await page.wait_for_function(
                    f"(() => {{ const t = ({SCREEN_TEXT})(); return ['pods (all)', 'Events', 'Leases', 'etcd', "
                    "'Scheduling', 'Manifests', 'Faults', 'etcd-control-plane'].every(w => t.includes(w)); })",
                    timeout=120_000)
                await page.locator("#terminal").click()
                await page.keyboard.press("?")
                await page.wait_for_function(f"(() => ({SCREEN_TEXT})().includes('BINDING ID'))", timeout=30_000)
                text = await page.evaluate(SCREEN_TEXT)
                assert "resource.logs" in text and "namespace.favourite_1" in text
                await page.screenshot(path=str(tmp_path / "web.png"))
            finally:
                await browser.close()
    finally:
        if proc.returncode is None:
            os.killpg(proc.pid, signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 60)


def test_each_session_runs_kconsole_with_the_same_flags() -> None:
    import argparse
    import shlex

    from kconsole.web import add_arguments, console_command

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["lab", "--nodes", "5", "--readonly", "--theme", "solarized", "--web-port", "0"])
    argv = shlex.split(console_command(args, parser))
    assert argv[:3] == [sys.executable, "-m", "kconsole"] and argv[3] == "lab"
    assert argv[4:] == ["--nodes", "5", "--theme", "solarized", "--readonly"]
