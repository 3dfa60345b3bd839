"""An object's history (``v`` on any row): each kept revision with what changed, who wrote it, the
Events about it then and the writes to it the request pipeline refused (:mod:`kconsole.history.story`)."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.text import Text
from textual.widgets import Static

from kconsole.client import StatusError
from kconsole.client.history import HistoryClient
from kconsole.history.story import Story, build, stamp
from kconsole.tui.keymap import screen_bindings
from kconsole.tui.screens.base import TextScreen

Obj = dict[str, Any]


def object_ref(client: Any, obj: Obj) -> tuple[str, str, str, str | None, str]:
    """(kind, resource, group, namespace, name) of an object, from the client's discovery."""
    meta = obj.get("metadata") or {}
    kind = str(obj.get("kind") or "")
    info = client.resource_info(kind, obj.get("apiVersion")) if obj.get("apiVersion") else client.resource_info(kind)
    namespace = meta.get("namespace") if info.namespaced else None
    return kind, info.resource, info.group, namespace, str(meta.get("name") or "")


class HistoryScreen(TextScreen):
    """The story of one object, newest revision first; ``w`` toggles the diffs."""

    BINDINGS = [*TextScreen.BINDINGS, *screen_bindings("history.diffs")]

    def __init__(self, client: Any, obj: Obj) -> None:
        kind, resource, group, namespace, name = object_ref(client, obj)
        where = f"{namespace}/" if namespace else ""
        super().__init__(f"History · {kind} {where}{name}", Text("reading the history…", style="dim"))
        self.client = client
        self.ref = (kind, resource, group, namespace, name)
        self.story: Story | None = None
        self.error = ""
        self.diffs = True

    def on_mount(self) -> None:
        self.run_worker(self._load(), exclusive=True, group="history")

    async def _load(self) -> None:
        kind, resource, group, namespace, name = self.ref
        try:
            self.story = await build(HistoryClient(self.client), resource, name, kind=kind, group=group,
                                     namespace=namespace)
        except StatusError as err:
            self.error = str(err)
        self.render_body()

    def action_toggle_diffs(self) -> None:
        self.diffs = not self.diffs
        self.render_body()

    def render_body(self) -> None:
        if self.error:
            self.set_body(Text(f"no history: {self.error}", style="bold red"))
            return
        story = self.story
        if story is None:
            return
        head = Text(f"{len(story.revisions)} revision(s) kept · history from revision {story.oldest} · "
                    f"newest first · {'w hides' if self.diffs else 'w shows'} the diffs", style="dim")
        parts: list[Any] = [head]
        for rev in reversed(story.revisions):
            line = Text()
            line.append(f"rev {rev.revision}", style="bold")
            line.append(f"  {stamp(rev.time)}  ")
            line.append(rev.type, style={"ADDED": "green", "DELETED": "red"}.get(rev.type, "yellow"))
            if rev.user:
                line.append(f"  user {rev.user}")
            if rev.managers:
                line.append("  manager ")
                line.append(", ".join(rev.managers), style="bold cyan")
            parts.append(Text(""))
            parts.append(line)
            if self.diffs:
                for diff_line in rev.diff:
                    style = "green" if diff_line.startswith("+") else "red" if diff_line.startswith("-") else "dim"
                    parts.append(Text(f"  {diff_line}", style=style))
            for event in rev.events:
                style = "bold red" if event.get("type") == "Warning" else ""
                parts.append(Text(f"  event {event.get('type', '')} {event.get('reason', '')}: "
                                  f"{event.get('message', '')}", style=style))
            for write in rev.refused:
                parts.append(Text(f"  refused {write.verb} by {write.user} at {write.stage or '?'} ({write.code}): "
                                  f"{write.message}", style="bold red"))
        if self.is_mounted:
            self.query_one("#title", Static).update(self.title_text)
        self.set_body(Group(*parts))
