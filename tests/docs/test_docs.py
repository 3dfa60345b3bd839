"""The README and docs/ against the code: generated tables current, config tables complete, every
runnable command runs, every link and named path resolves, and no development diary.

Generated blocks are rewritten by ``python -m kconsole.docgen``; the other tables are hand-written
and compared here with the code that defines what they describe."""

from __future__ import annotations

import ast
import os
import re
import shlex
import subprocess
import sys
from dataclasses import fields
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from kconsole import docgen
from kconsole.cli import COMMANDS
from kconsole.cluster import ClusterConfig, ConfigError
from kconsole.controllers.manager import CONTROLLER_PATHS
from kconsole.scheduler.config import TOP_LEVEL
from kconsole.screenshot import VIEWS
from kconsole.tui.keymap import APP_KEYS, display_key
from kconsole.tui.launch import console_settings

ROOT = Path(__file__).resolve().parents[2]
DOCS = [*docgen.doc_files(ROOT), ROOT / "examples" / "README.md"]
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
RUNNABLE = re.compile(r"<!-- runnable -->\n```sh\n(.*?)```", re.DOTALL)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def prose(text: str) -> str:
    """``text`` without its fenced code blocks (a link or heading inside one is not one)."""
    return FENCE.sub("", text)


def section(text: str, heading: str) -> str:
    """The lines under ``heading`` up to the next heading of the same or a higher level."""
    level = heading.split(" ")[0]
    start = text.index(f"\n{heading}\n") + len(heading) + 2
    stop = re.compile(rf"^#{{1,{len(level)}}} ", re.MULTILINE).search(text, start)
    return text[start:stop.start() if stop else len(text)]


def first_column(text: str) -> list[str]:
    """The backticked first cells of the Markdown table rows in ``text``."""
    return re.findall(r"^\| `([^`]+)` \|", text, re.MULTILINE)


# ---------------------------------------------------------------- generated blocks


def test_generated_blocks_match_the_code() -> None:
    assert docgen.stale(ROOT) == [], "run: python -m kconsole.docgen"


def test_every_key_of_the_keymap_is_in_the_tour() -> None:
    tour = read(ROOT / "docs" / "tour.md")
    block = tour[tour.index("<!-- generated: keys -->"):tour.index("<!-- end generated: keys -->")]
    for spec in APP_KEYS:
        assert f"| `{spec.id}` |" in block, spec.id


#: Keys the hand-written prose of README.md, docs/tour.md and docs/course.md names, with the binding
#: the prose says they are. A key moved in the keymap fails here until the prose follows it.
PROSE_KEYS = {
    ":": "resource.kind", "/": "resource.filter", "n": "resource.namespace", "0": "resource.all_namespaces",
    "s": "resource.sort", "S": "resource.sort_reverse", "d": "resource.describe", "y": "resource.yaml",
    "c": "resource.chain", "E": "resource.events", "e": "resource.edit", "l": "resource.logs", "enter": "scheduling.matrix", "a": "view.apilog",
    "p": "view.proxy", "z": "view.maximise", "tab": "view.next_panel", "T": "view.theme", "?": "app.help",
    "ctrl+p": "app.palette", "f": "fault.menu", "ctrl+k": "fault.kill", "C": "fault.cordon", "h": "fault.heal",
    "H": "fault.heal_all", "R": "referee.toggle", "space": "time.pause", "+": "time.faster", "-": "time.slower", ".": "time.step",
}


def test_keys_named_in_prose_do_what_the_prose_says() -> None:
    bound = {key: spec.id for spec in APP_KEYS for key in display_key(spec.key).split(" ")}
    wrong = {key: (wanted, bound.get(key)) for key, wanted in PROSE_KEYS.items() if bound.get(key) != wanted}
    assert not wrong, f"the docs name these keys for another binding (key: (docs, keymap)): {wrong}"


def test_a_stale_block_is_rewritten_and_an_unknown_one_refused() -> None:
    stale = "intro\n<!-- generated: keys -->\n| old |\n<!-- end generated: keys -->\nrest\n"
    fresh = f"intro\n<!-- generated: keys -->\n{docgen.keys()}<!-- end generated: keys -->\nrest\n"
    assert docgen.regenerate(stale) == fresh
    with pytest.raises(ValueError, match="unknown generated block 'nope'"):
        docgen.regenerate("<!-- generated: nope -->\n<!-- end generated: nope -->", "x.md")


def test_every_view_has_its_picture_in_the_tour() -> None:
    tour = read(ROOT / "docs" / "tour.md")
    for name in VIEWS:
        picture = ROOT / "docs" / "img" / f"{name}.svg"
        assert picture.is_file(), f"{name}: run python -m kconsole.docgen --screenshots"
        assert f"(img/{name}.svg)" in tour, name


# ---------------------------------------------------------------- runnable commands


def runnable_blocks() -> list[tuple[str, str]]:
    return [(f"{path.relative_to(ROOT)}#{i}", block) for path in DOCS
            for i, block in enumerate(RUNNABLE.findall(read(path)), 1)]


def test_there_are_runnable_blocks() -> None:
    assert len(runnable_blocks()) >= 3


@pytest.mark.parametrize(("where", "block"), runnable_blocks(), ids=[w for w, _ in runnable_blocks()])
def test_runnable_block_runs(tmp_path: Path, where: str, block: str) -> None:
    """Run in an empty folder holding the examples, with ``kconsole`` and ``python`` meaning this
    interpreter and this tree's code."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, command in (("kconsole", "-m kconsole "), ("python", "")):
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} {command}"$@"\n', encoding="utf-8")
        shim.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    (work / "examples").symlink_to(ROOT / "examples")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=work, env=env, capture_output=True,
                          text=True, timeout=170)
    assert done.returncode == 0, f"{where}:\n{block}\n{done.stdout}\n{done.stderr}"


# ---------------------------------------------------------------- links and paths


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    for heading in re.findall(r"^#+ (.+)$", prose(read(path)), re.MULTILINE):
        base = slug(heading)
        name, n = base, 1
        while name in found:
            name, n = f"{base}-{n}", n + 1
        found.add(name)
    return found


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(ROOT)) for d in DOCS])
def test_relative_links_resolve(doc: Path) -> None:
    for link in LINK.findall(prose(read(doc))):
        if re.match(r"[a-z]+:", link):
            continue
        target, _, anchor = link.partition("#")
        path = (doc.parent / target).resolve() if target else doc
        assert path.exists(), f"{doc.name}: {link} does not exist"
        assert ROOT in path.parents or path == ROOT, f"{doc.name}: {link} leaves the repository"
        if anchor and path.suffix == ".md":
            assert anchor in anchors(path), f"{doc.name}: {link}: no heading #{anchor} in {path.name}"


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(ROOT)) for d in DOCS])
def test_named_paths_exist(doc: Path) -> None:
    """Every repository path written in backticks (`kconsole/store/journal.py`) exists; a data
    folder (`examples/quickstart/.kconsole/`) is made by running, not kept in the repository."""
    for path in re.findall(r"`((?:kconsole|examples|themes|docs|tests|\.ci)/[\w./-]*)`", read(doc)):
        if "/.kconsole" in path:
            continue
        assert (ROOT / path).exists(), f"{doc.name}: {path} does not exist"


def test_docs_folder_has_every_page() -> None:
    names = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert {"tour.md", "course.md", "architecture.md", "fidelity.md", "benchmarks.md", "config.md"} <= names


# ---------------------------------------------------------------- README


def test_readme_is_a_front_page() -> None:
    readme = read(ROOT / "README.md")
    assert len(readme.splitlines()) <= 200
    assert "](docs/img/dashboard.svg)" in readme
    for name in COMMANDS:
        assert f"`kconsole {name}" in readme, f"command {name} missing from the README's table"


def test_quickstart_commands_are_the_ci_command() -> None:
    quickstart = section(read(ROOT / "README.md"), "## Quickstart")
    blocks = re.findall(r"```sh\n(.*?)\n```", quickstart, re.DOTALL)
    assert blocks[:2] == ["pip install -e . && kconsole examples/quickstart",
                          "pip install -e '.[test]' && python -m pytest -q -p no:cacheprovider -n auto --dist loadfile"]
    assert blocks[1] in read(ROOT / ".ci" / "run").splitlines()


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(ROOT)) for d in DOCS])
def test_no_development_diary(doc: Path) -> None:
    text = read(doc)
    for phrase in (r"\bsessions?\b", r"\bVM clock\b", r"\bissue notes\b", r"\bthis session\b"):
        assert not re.search(phrase, text, re.IGNORECASE), f"{doc.name}: {phrase}"


# ---------------------------------------------------------------- config.md against the code


def config_doc() -> str:
    return read(ROOT / "docs" / "config.md")


def test_config_keys_are_the_cluster_configs_fields() -> None:
    documented = first_column(section(config_doc(), "## Config file").split("### ")[0])
    assert sorted(documented) == sorted(f.name.replace("_", "-") for f in fields(ClusterConfig))


def test_config_defaults_are_the_codes() -> None:
    rows = re.findall(r"^\| `([\w-]+)` \| [^|]+ \| ([^|]+) \|", section(config_doc(), "## Config file"), re.MULTILINE)
    defaults = ClusterConfig()
    for key, cell in rows:
        value = getattr(defaults, key.replace("-", "_"), None)
        if isinstance(value, (int, float, str)) and not isinstance(value, bool):
            assert cell.strip() == str(value), f"{key}: documented {cell.strip()!r}, code {value!r}"
        elif isinstance(value, bool):
            assert cell.strip() == str(value).lower(), key
        elif isinstance(value, tuple):
            assert cell.strip() == ", ".join(value), key


def test_console_keys_are_the_consoles() -> None:
    with pytest.raises(ConfigError) as err:
        console_settings(ClusterConfig(console={"no-such-key": 1}), SimpleNamespace())
    known = re.search(r"\(known: ([^)]*)\)", str(err.value))
    assert known is not None
    assert sorted(first_column(section(config_doc(), "### console"))) == known.group(1).split(", ")


def test_scheduler_keys_are_the_schedulers() -> None:
    assert sorted(first_column(section(config_doc(), "### scheduler"))) == sorted(TOP_LEVEL)


def settings_read_by(path: str) -> set[str]:
    """The keys a controller class (``module:Class``) reads from its settings (``cfg.get("x"``,
    ``settings().get("x"``), in its own body and its bases' in the same module."""
    module, _, class_name = path.partition(":")
    source = read(ROOT / (module.replace(".", "/") + ".py"))
    classes = {node.name: node for node in ast.parse(source).body if isinstance(node, ast.ClassDef)}
    keys: set[str] = set()
    todo = [class_name]
    while todo:
        node = classes.get(todo.pop())
        if node is None:
            continue
        body = ast.get_source_segment(source, node) or ""
        keys |= set(re.findall(r"(?:cfg|self\.settings\(\))\.get\(\"([\w-]+)\"", body))
        todo += [ast.unparse(base) for base in node.bases]
    return keys


def test_controller_settings_are_the_controllers() -> None:
    rows = re.findall(r"^\| `([\w-]+)` \| `([\w-]+)` \|", section(config_doc(), "### controllers"), re.MULTILINE)
    documented = {(c, s) for c, s in rows}
    for controller, _ in documented:
        assert controller in CONTROLLER_PATHS, controller
    read_by_code = {(name, key) for name, path in CONTROLLER_PATHS.items()
                    for key in settings_read_by(path)}
    assert documented == read_by_code


def environment_reads() -> set[str]:
    """Names of the environment variables the package reads (os.environ[...], .get, os.getenv)."""
    names: set[str] = set()
    for path in (ROOT / "kconsole").rglob("*.py"):
        for node in ast.walk(ast.parse(read(path))):
            if isinstance(node, ast.Subscript) and ast.unparse(node.value) == "os.environ":
                names.add(ast.unparse(node.slice).strip("'\""))
            elif isinstance(node, ast.Call) and ast.unparse(node.func) in ("os.environ.get", "os.getenv") and node.args:
                names.add(ast.unparse(node.args[0]).strip("'\""))
    return names


def test_environment_variables_are_documented() -> None:
    assert sorted(first_column(section(config_doc(), "## Environment variables"))) == sorted(environment_reads())


def test_config_example_loads(tmp_path: Path) -> None:
    example = re.search(r"<!-- config-example -->\n```yaml\n(.*?)```", config_doc(), re.DOTALL)
    assert example is not None
    path = tmp_path / "cluster.yaml"
    path.write_text(example.group(1), encoding="utf-8")
    config = ClusterConfig.from_file(path)
    assert config.nodes == yaml.safe_load(example.group(1))["nodes"]
    settings = console_settings(config, SimpleNamespace())
    assert settings["keymap_overrides"] == {"time.pause": "p"}
