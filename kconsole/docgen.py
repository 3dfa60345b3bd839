"""The parts of the docs that the code already knows, written from the code so they cannot drift.

A generated block in a Markdown file sits between two comment lines::

    <!-- generated: keys -->
    ...written by python -m kconsole.docgen...
    <!-- end generated: keys -->

``python -m kconsole.docgen`` rewrites every such block in README.md and docs/*.md; ``--check``
only reports the blocks that differ (the docs test runs it); ``--screenshots`` also renders every
console view into docs/img/ with ``kconsole screenshot``.
"""

from __future__ import annotations

import argparse
import importlib
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

#: The repository root (README.md, docs/): the package's parent folder.
ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"(<!-- generated: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- end generated: (?P=name) -->)",
                   re.DOTALL)


def _cell(text: str) -> str:
    """Text that stays inside one Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def keys() -> str:
    """Every key the console answers: the app's keymap, the tables' keys and each screen's own."""
    from textual.binding import Binding

    from kconsole.tui import keymap, screens
    from kconsole.tui.widgets.vtable import VirtualTable

    lines = ["| keys | action | binding id | note |", "|---|---|---|---|"]
    for spec in keymap.APP_KEYS:
        note = "dangerous: off with `--readonly`" if spec.dangerous else ""
        if spec.action in keymap.DRILL_ACTIONS:
            note = "only in `kconsole drill NAME`"
        lines.append(f"| {_code(keymap.display_key(spec.key))} | {_cell(spec.description)} | `{spec.id}` | {note} |")
    seen = {spec.id for spec in keymap.APP_KEYS}
    for binding in VirtualTable.BINDINGS:
        if isinstance(binding, Binding) and binding.id and binding.id not in seen:
            seen.add(binding.id)
            lines.append(f"| {_code(keymap.display_key(binding.key))} | {_cell(binding.description)} "
                         f"| `{binding.id}` | in every table |")
    # A screen's own keys, each listed once with the views that answer it.
    found: dict[str, tuple[Binding, list[str]]] = {}
    for name in sorted(screens.__all__):
        cls = getattr(screens, name)
        for binding in (b for k in cls.__mro__ for b in vars(k).get("BINDINGS", ())):
            if isinstance(binding, Binding) and binding.id and binding.id not in seen:
                where = found.setdefault(binding.id, (binding, []))[1]
                if name.removesuffix("Screen") not in where:
                    where.append(name.removesuffix("Screen"))
    for binding, where in found.values():
        lines.append(f"| {_code(keymap.display_key(binding.key))} | {_cell(binding.description)} "
                     f"| `{binding.id}` | in the {', '.join(where)} view{'s' if len(where) > 1 else ''} |")
    return "\n".join(lines) + "\n"


def views() -> str:
    """The views ``kconsole screenshot --view`` renders."""
    from kconsole.screenshot import VIEWS

    lines = ["| view | shows |", "|---|---|"]
    lines += [f"| `{name}` | {_cell(view.description)} |" for name, view in VIEWS.items()]
    return "\n".join(lines) + "\n"


def faults() -> str:
    """The fault catalog: what each fault does and the reaction to expect."""
    from kconsole.faults import CATALOG

    lines = ["| fault | target | what it does | expect |", "|---|---|---|---|"]
    for f in CATALOG.values():
        params = " ".join(f"`{p.name}={p.default}`" for p in f.params)
        lines.append(f"| `{f.name}` | {f.target_kind} | {_cell(f.description)}{' ' + params if params else ''} "
                     f"| {_cell(f.expected)} |")
    return "\n".join(lines) + "\n"


def _module_file(obj: Any) -> str:
    """The repository path of the module defining ``obj``'s class (or ``obj`` itself when a class)."""
    cls = obj if isinstance(obj, type) else type(obj)
    return f"`{cls.__module__.replace('.', '/')}.py`"


def resources() -> str:
    """The kinds the API server serves, from its resource table."""
    from kconsole.api.registry import TABLE

    lines = ["| group/version | resource | kind | short names | subresources | verbs |", "|---|---|---|---|---|---|"]
    for spec in TABLE:
        info = spec.info
        verbs = "all" if set(info.verbs) >= {"create", "get", "list", "watch", "update", "patch", "delete"} \
            else ", ".join(info.verbs)
        scope = "" if info.namespaced else " (cluster)"
        lines.append(f"| `{info.api_version}` | {info.resource}{scope} | {info.kind} | {', '.join(info.short_names)} "
                     f"| {', '.join(info.subresources)} | {verbs}{'' if spec.stored else ', not stored'} |")
    return "\n".join(lines) + "\n"


def admission() -> str:
    """The admission plugins, in the order the API server runs them."""
    from kconsole.api.admission import mutating_plugins, validating_plugins

    lines = ["| order | plugin | phase | module |", "|---|---|---|---|"]
    chain = [(p, "mutating") for p in mutating_plugins()] + [(p, "validating") for p in validating_plugins()]
    lines += [f"| {i} | {p.name} | {phase} | {_module_file(p)} |" for i, (p, phase) in enumerate(chain, 1)]
    return "\n".join(lines) + "\n"


def controllers() -> str:
    """kube-controller-manager's controllers, in start order, by upstream's names."""
    from kconsole.controllers.manager import CONTROLLER_PATHS

    lines = ["| controller | module |", "|---|---|"]
    for name, path in CONTROLLER_PATHS.items():
        lines.append(f"| `{name}` | `{path.partition(':')[0].replace('.', '/')}.py` |")
    return "\n".join(lines) + "\n"


def scheduler_plugins() -> str:
    """The scheduler's plugins: extension points and weight in the default profile."""
    import kconsole.scheduler.plugins  # noqa: F401 - importing the package registers every plugin
    from kconsole.scheduler import framework
    from kconsole.scheduler.config import DEFAULT_PLUGINS, POINTS, extends

    weights = dict(DEFAULT_PLUGINS)
    lines = ["| plugin | extension points | default profile (score weight) | module |", "|---|---|---|---|"]
    for name in [n for n, _ in DEFAULT_PLUGINS] + sorted(set(framework.REGISTRY) - set(weights)):
        cls = framework.REGISTRY[name]
        points = ", ".join(p for p in POINTS if extends(cls, p))
        default = (f"yes ({weights[name]})" if weights[name] else "yes") if name in weights else "no"
        lines.append(f"| {name} | {points} | {default} | {_module_file(cls)} |")
    return "\n".join(lines) + "\n"


def _parsers() -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """(command line, parser) for ``kconsole`` and every command and sub-command."""
    from kconsole.cli import COMMANDS, console_parser

    yield "kconsole [DIR]", console_parser()
    for name, (module_name, help_text) in COMMANDS.items():
        parser = argparse.ArgumentParser(prog=f"kconsole {name}", description=help_text)
        importlib.import_module(module_name).add_arguments(parser)
        yield from _walk(f"kconsole {name}", parser)


def _walk(line: str, parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    children = [child for sub in subs for child in sub.choices.values()]
    shared = set.intersection(*({flag_names(a) for a in _options(c)} for c in children)) if children else set()
    if any(flag_names(a) not in shared for a in _options(parser)):  # flags every sub-command repeats: listed there
        yield line, parser
    for sub in subs:
        for name, child in sub.choices.items():
            yield from _walk(f"{line} {name}", child)


def _options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if a.option_strings and not isinstance(a, argparse._HelpAction)]


def _metavar(action: argparse.Action) -> str:
    """What the flag takes: its metavar, else N for a count, X for a number, else its name."""
    if action.metavar:
        return str(action.metavar)
    return {int: "N", float: "X"}.get(action.type, action.dest.upper().replace("_", "-"))  # type: ignore[arg-type]


def flag_names(action: argparse.Action) -> str:
    return ", ".join(action.option_strings)


def flags() -> str:
    """Every command's flags, from its own argparse parser (help text as the command prints it)."""
    out: list[str] = []
    for line, parser in _parsers():
        options = _options(parser)
        if not options:
            continue
        out += [f"#### `{line}`", "", "| flag | what it does |", "|---|---|"]
        for action in options:
            metavar = "" if action.nargs == 0 else f" {_metavar(action)}"
            choices = f" (one of {', '.join(map(str, action.choices))})" if action.choices else ""
            out.append(f"| `{flag_names(action)}{metavar}` | {_cell(((action.help or '') + choices).strip())} |")
        out.append("")
    return "\n".join(out)


#: Block name -> generator. A block of another name is an error, so a typo cannot hide a block.
def fidelity_scenarios() -> str:
    """The fidelity suite's scenarios: what each checks, its steps and its declared differences."""
    from kconsole.fidelity.runner import load, scenario_paths

    lines = ["| scenario | checks | steps | known differences |", "|---|---|---|---|"]
    for path in scenario_paths():
        data = load(path)
        known = sum(1 for step in data["steps"] if step.get("known_difference"))
        lines.append(f"| `{path.stem}` | {_cell(data.get('about', ''))} | {len(data['steps'])} | {known or ''} |")
    return "\n".join(lines) + "\n"


GENERATORS: dict[str, Callable[[], str]] = {
    "keys": keys, "views": views, "faults": faults, "flags": flags, "resources": resources,
    "admission": admission, "controllers": controllers, "scheduler-plugins": scheduler_plugins,
    "fidelity-scenarios": fidelity_scenarios,
}


def doc_files(root: Path = ROOT) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def regenerate(text: str, where: str = "") -> str:
    """``text`` with every generated block rewritten."""
    def replace(match: re.Match[str]) -> str:
        name = match.group("name")
        if name not in GENERATORS:
            raise ValueError(f"{where}: unknown generated block {name!r} (known: {', '.join(GENERATORS)})")
        return match.group(1) + GENERATORS[name]() + match.group(4)

    return BLOCK.sub(replace, text)


def stale(root: Path = ROOT) -> list[str]:
    """The files whose generated blocks differ from what the code generates now."""
    out = []
    for path in doc_files(root):
        text = path.read_text(encoding="utf-8") if path.exists() else None
        if text is not None and regenerate(text, str(path)) != text:
            out.append(str(path.relative_to(root)))
    return out


def screenshots(root: Path = ROOT) -> int:
    """Render every view into docs/img/VIEW.svg, one fresh cluster each."""
    from kconsole.screenshot import VIEWS

    for name, view in VIEWS.items():
        size = "x".join(map(str, view.size))
        done = subprocess.run([sys.executable, "-m", "kconsole", "screenshot", "--view", name, "--size", size,
                               str(Path("docs") / "img" / f"{name}.svg")], cwd=root, check=False)
        if done.returncode:
            return done.returncode
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m kconsole.docgen", description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="only list the files whose generated blocks are stale")
    p.add_argument("--screenshots", action="store_true", help="also render every console view into docs/img/")
    args = p.parse_args(argv)
    if args.check:
        files = stale()
        for name in files:
            print(f"{name}: generated blocks are stale; run python -m kconsole.docgen", file=sys.stderr)
        return 1 if files else 0
    for path in doc_files():
        if path.exists():
            text = path.read_text(encoding="utf-8")
            new = regenerate(text, str(path))
            if new != text:
                path.write_text(new, encoding="utf-8")
                print(f"{path.relative_to(ROOT)}: regenerated")
    return screenshots() if args.screenshots else 0


if __name__ == "__main__":
    raise SystemExit(main())
