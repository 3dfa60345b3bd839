"""Describe (``d``): the object's YAML highlighted, its events newest first, its owner chain.
YAML (``y``): the object exactly as stored, as ``kubectl get -o yaml`` prints it."""

from __future__ import annotations

from typing import Any

import yaml
from rich.console import Group
from rich.syntax import Syntax
from rich.text import Text

from kconsole.client import Client, StatusError
from kconsole.tui.screens.base import TextScreen

Obj = dict[str, Any]

#: Owner references followed at most this deep (Pod -> ReplicaSet -> Deployment is 2).
MAX_OWNER_DEPTH = 5


def to_yaml(obj: Obj) -> str:
    """As ``kubectl get -o yaml`` prints it: keys in alphabetical order at every level (kubectl goes
    through JSON to YAML with sorted keys), so the two can be compared line by line."""
    return yaml.safe_dump(obj, sort_keys=True, default_flow_style=False, allow_unicode=True)


def ref_of(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    ns = f"{meta['namespace']}/" if meta.get("namespace") else ""
    return f"{obj.get('kind', '?')} {ns}{meta.get('name', '?')}"


async def owner_chain(client: Client, obj: Obj) -> list[str]:
    """Controlling owners upward: ``ReplicaSet default/web-7d4 (rv 1234)`` lines."""
    chain: list[str] = []
    current = obj
    for _ in range(MAX_OWNER_DEPTH):
        meta = current.get("metadata") or {}
        ref = next((r for r in meta.get("ownerReferences") or () if r.get("controller")), None)
        if ref is None:
            break
        try:
            info = client.resource_info(ref["kind"], ref.get("apiVersion"))
            owner = await client.get(info.resource, ref["name"], meta.get("namespace") if info.namespaced else None)
        except StatusError as err:
            chain.append(f"{ref.get('kind')} {ref.get('name')}: {err}")
            break
        chain.append(f"{ref_of(owner)} (rv {(owner.get('metadata') or {}).get('resourceVersion')})")
        current = owner
    return chain


class YamlScreen(TextScreen):
    def __init__(self, obj: Obj, theme: str = "ansi_dark") -> None:
        super().__init__(f"YAML · {ref_of(obj)}", Syntax(to_yaml(obj), "yaml", theme=theme, background_color="default"))


class DescribeScreen(TextScreen):
    def __init__(self, obj: Obj, events: list[Obj], client: Client, now: float, theme: str = "ansi_dark") -> None:
        super().__init__(f"Describe · {ref_of(obj)}")
        self.obj = obj
        self.events = events
        self.client = client
        self.now = now
        self.theme_name = theme
        self.chain: list[str] | None = None

    def on_mount(self) -> None:
        self.render_body()
        self.run_worker(self._load_chain(), exclusive=True, group="describe")

    async def _load_chain(self) -> None:
        self.chain = await owner_chain(self.client, self.obj)
        self.render_body()

    def render_body(self) -> None:
        from kconsole.tui.panels.events import event_cells

        parts: list[Any] = [Text("Owner chain", style="bold")]
        if self.chain is None:
            parts.append(Text("  resolving…", style="dim"))
        elif not self.chain:
            parts.append(Text("  <none> (no controlling owner)"))
        else:
            for depth, line in enumerate(self.chain):
                parts.append(Text("  " + "  " * depth + "↑ " + line))
        parts.append(Text(""))
        parts.append(Text(f"Events ({len(self.events)})", style="bold"))
        if not self.events:
            parts.append(Text("  <none>"))
        for ev in self.events[:50]:
            cells = event_cells(ev, self.now)
            style = "bold red" if ev.get("type") == "Warning" else ""
            parts.append(Text(f"  {cells[0]:<18} {cells[1]:<8} {cells[2]:<22} {cells[4]:<24} {cells[5]}", style=style))
        parts.append(Text(""))
        parts.append(Text("Object", style="bold"))
        parts.append(Syntax(to_yaml(self.obj), "yaml", theme=self.theme_name, background_color="default"))
        self.set_body(Group(*parts))
