"""``kconsole screenshot``: every view renders to a valid SVG of what the console shows, and bad
input is refused with a message naming it.

Each render boots a fresh cluster (three etcd members, controllers, kubelets) on a virtual clock, so
no test here waits on real time."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from kconsole.screenshot import VIEWS, ScreenshotError, render

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart"

#: Text each view must show: the panel titles of the dashboard, the title line of a pushed view.
EXPECTED = {
    "dashboard": ("Events", "Leases", "etcd", "Scheduling", "Manifests", "Faults", "pods (all)", "KUBECONFIG="),
    "resources": ("pods (all)", "web-"),
    "events": ("Events", "Started"),
    "leases": ("Leases", "kube-system/kube-scheduler", "node leases"),
    "etcd": ("etcd", "quorum ok"),
    "scheduling": ("Scheduling", "quickstart/web-"),
    "manifests": ("Manifests", "deployment.yaml", "applied"),
    "faults": ("Faults [1]", "kubelet-stop", "worker-3", "NodeNotReady"),
    "describe": ("Describe", "Pod quickstart/web-", "Owners: ReplicaSet quickstart/web-"),
    "yaml": ("YAML", "Pod quickstart/web-", "apiVersion", "managedFields"),
    "chain": ("Chain", "Deployment quickstart/web", "ReplicaSet web-"),
    "matrix": ("Scheduling decision", "NodeResourcesFit", "winner"),
    "manifest": ("Manifest", "deployment.yaml", "Deployment quickstart/web"),
    "proxy": ("kube-proxy rules", "KUBE-SERVICES", "default/kubernetes:https", "KUBE-SEP-"),
    "apilog": ("API requests", "system:kube-scheduler"),
    "keys": ("Keys", "resource.describe", "app.help"),
}


def svg_text(svg: str) -> str:
    """The characters on screen, one string (the SVG keeps one <text> per run of one style)."""
    root = ET.fromstring(svg)  # raises on a document that is not well-formed XML
    assert root.tag.endswith("svg")
    return html.unescape(" ".join("".join(t.itertext()) for t in root.iter() if t.tag.endswith("text")))


def test_every_view_has_expectations() -> None:
    assert set(EXPECTED) == set(VIEWS)


@pytest.mark.parametrize("view", sorted(VIEWS))
async def test_view_renders(view: str) -> None:
    svg = await render(view, (120, 40), "kconsole-dark", QUICKSTART)
    text = re.sub(r"\s+", " ", svg_text(svg).replace("\xa0", " "))
    for expected in EXPECTED[view]:
        assert expected in text, f"{view}: {expected!r} not on screen"
    assert "kconsole-screenshot-" not in svg  # the run's temporary folder is not in the picture


async def test_unknown_theme_is_refused() -> None:
    with pytest.raises(ScreenshotError, match="unknown theme 'no-such-theme'"):
        await render("dashboard", (100, 30), "no-such-theme", QUICKSTART)


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "kconsole", "screenshot", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=150)


def test_command_writes_the_file(tmp_path: Path) -> None:
    out = tmp_path / "pictures" / "shot.svg"
    done = run_cli("--size", "100x30", "--theme", "kconsole-light", "--dir", str(QUICKSTART), str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Manifests" in svg_text(out.read_text(encoding="utf-8"))
    assert f"{out}: dashboard, 100x30, theme kconsole-light" in done.stdout


@pytest.mark.parametrize(("args", "message"), [
    (("--size", "10x10", "x.svg"), "size must be between 80x24 and 400x200, got '10x10'"),
    (("--size", "wide", "x.svg"), "size must be COLUMNSxROWS such as 120x40, got 'wide'"),
    (("--view", "nope", "x.svg"), "invalid choice: 'nope'"),
    (("x.png",), "x.png must end in .svg"),
    (("--dir", "no/such/folder", "x.svg"), "no/such/folder is not a folder (--dir)"),
])
def test_bad_input_is_named(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    done = run_cli(*args, cwd=tmp_path)
    assert done.returncode == 2
    assert message in done.stderr
    assert not list(tmp_path.iterdir())


async def test_same_view_same_picture() -> None:
    """A regenerated picture differs only where the screen does (seed, virtual clock, fixed names)."""
    first = await render("etcd", (100, 24), "kconsole-dark", QUICKSTART)
    assert first == await render("etcd", (100, 24), "kconsole-dark", QUICKSTART)
