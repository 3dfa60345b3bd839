"""Describe (``d``): what ``kubectl describe`` prints (sections, events last), under the owner chain.
YAML (``y``): the object as ``kubectl get -o yaml`` prints it, managedFields hidden until ``m``."""

from __future__ import annotations

from typing import Any

import yaml
from rich.console import Group
from rich.syntax import Syntax
from rich.text import Text
from textual.widgets import Static

from kconsole.client import Client, StatusError
from kconsole.objects.describe import describe
from kconsole.tui.keymap import screen_bindings
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
    """The object as stored, without ``metadata.managedFields`` until ``m`` asks for them."""

    BINDINGS = [*TextScreen.BINDINGS, *screen_bindings("yaml.managed_fields")]

    def __init__(self, obj: Obj, theme: str = "ansi_dark", managed_fields: bool = False) -> None:
        super().__init__(f"YAML · {ref_of(obj)}")
        self.obj = obj
        self.theme_name = theme
        self.managed_fields = managed_fields
        self.render_body()

    def render_body(self) -> None:
        shown = self.obj if self.managed_fields else without_managed_fields(self.obj)
        hidden = bool((self.obj.get("metadata") or {}).get("managedFields")) and not self.managed_fields
        self.title_text = f"YAML · {ref_of(self.obj)}" + (" · managedFields hidden (m shows them)" if hidden else "")
        if self.is_mounted:
            self.query_one("#title", Static).update(self.title_text)
        self.set_body(Syntax(to_yaml(shown), "yaml", theme=self.theme_name, background_color="default"))

    def action_toggle_managed_fields(self) -> None:
        self.managed_fields = not self.managed_fields
        self.render_body()


class DescribeScreen(TextScreen):
    """``kubectl describe``'s text for the object (its related objects fetched through the API),
    with the controlling owner chain above it."""

    def __init__(self, obj: Obj, events: list[Obj], client: Client, now: float, theme: str = "ansi_dark") -> None:
        super().__init__(f"Describe · {ref_of(obj)}")
        self.obj = obj
        self.events = events
        self.client = client
        self.now = now
        self.theme_name = theme
        self.chain: list[str] | None = None
        self.related: dict[str, Any] = {}
        self.text = describe(obj, events, now)

    def on_mount(self) -> None:
        self.render_body()
        self.run_worker(self._load(), exclusive=True, group="describe")

    async def _load(self) -> None:
        self.related = await related_objects(self.client, self.obj)
        self.text = describe(self.obj, self.events, self.now, self.related)
        self.chain = await owner_chain(self.client, self.obj)
        self.render_body()

    def render_body(self) -> None:
        if self.chain is None:
            owners = Text("Owners: resolving…", style="dim")
        elif not self.chain:
            owners = Text("Owners: <none> (no controlling owner)", style="dim")
        else:
            owners = Text("Owners: " + "  ↑ ".join(self.chain), style="dim")
        body = Text(self.text)
        body.highlight_regex(r"(?m)^[A-Za-z][^:\n]*:", "bold")
        body.highlight_regex(r"(?m)^  Warning .*$", "bold red")
        self.set_body(Group(owners, Text(""), body))


async def related_objects(client: Client, obj: Obj) -> dict[str, Any]:
    """What kubectl describe lists beside the object: a node's pods and lease, a Deployment's
    ReplicaSets, a ReplicaSet's pods, a Service's endpoints. A read that fails leaves its part out."""
    meta = obj.get("metadata") or {}
    name, ns, uid = meta.get("name", ""), meta.get("namespace"), meta.get("uid")
    kind = obj.get("kind")
    related: dict[str, Any] = {}
    try:
        if kind == "Node":
            related["pods"] = await client.list_all("pods", field_selector=f"spec.nodeName={name}")
            related["lease"] = await client.get("leases", name, "kube-node-lease")
        elif kind in ("Deployment", "ReplicaSet"):
            owned = "replicasets" if kind == "Deployment" else "pods"
            items = await client.list_all(owned, ns)
            related[owned] = [o for o in items if any(r.get("uid") == uid and r.get("controller")
                                                      for r in (o.get("metadata") or {}).get("ownerReferences") or ())]
        elif kind == "Service":
            related["endpoints"] = await client.get("endpoints", name, ns)
    except StatusError:
        pass
    return related


def without_managed_fields(obj: Obj) -> Obj:
    meta = obj.get("metadata") or {}
    if "managedFields" not in meta:
        return obj
    return {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}
