"""A k9s user's keys on the selected object: ``l`` logs, ``e`` edit, ``ctrl+d`` delete, and the
``1``-``9`` namespace favourites. Mixed into :class:`kconsole.tui.app.ConsoleApp`; every read and
write goes through the console's API client, as kubectl's would.

``e`` and ``ctrl+d`` write: a read-only console refuses them with a ``read-only:`` status message.
They act for the user as ``kubectl`` with the data folder's kubeconfig would, as the cluster admin
(``kubernetes-admin``, shown so in the API log); the console's own identity only reads, deletes
pods and cordons nodes.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kconsole.client import StatusError
from kconsole.tui import edit
from kconsole.tui.favourites import NamespaceFavourites

if TYPE_CHECKING:
    from kconsole.api.types import ResourceInfo

Obj = dict[str, Any]


class ObjectKeys:
    """Actions for :mod:`kconsole.tui.keymap`'s ``resource.logs``, ``resource.edit``,
    ``resource.delete`` and ``namespace.favourite_N`` bindings."""

    _favourites: NamespaceFavourites | None = None
    _kept: dict[str, edit.KeptEdit] | None = None
    _user_client: Any = None

    # ------------------------------------------------------------------ helpers

    def refuse_write(self, what: str) -> bool:
        """True (and says so) when the console is read-only, or shows the past."""
        if self.refuse_past():  # type: ignore[attr-defined]
            return True
        if self.readonly:  # type: ignore[attr-defined]
            self.notify(f"read-only: {what} is disabled (--readonly)", severity="warning")  # type: ignore[attr-defined]
        return bool(self.readonly)  # type: ignore[attr-defined]

    def selection(self) -> tuple[ResourceInfo, Obj] | None:
        """The selected object and its API resource, or None (and the status line says why)."""
        app: Any = self
        client = app.model.client
        if client is None:
            app.notify("the API server is not up yet", severity="warning")
            return None
        panel = app.focused_panel() or app.resources
        obj = panel.selected()
        if obj is None or not (obj.get("metadata") or {}).get("name"):
            app.notify("nothing selected", severity="warning")
            return None
        try:
            if panel is app.resources:
                info = client.resource_info(app.resources.group_resource)
            elif obj.get("kind") and obj.get("apiVersion"):
                info = client.resource_info(obj["kind"], obj["apiVersion"])
            else:
                app.notify(f"the {panel.title} panel's rows are not API objects", severity="warning")
                return None
        except StatusError as err:
            app.notify(str(err), severity="error")
            return None
        return info, obj

    def user_client(self) -> Any:
        """The client for the user's own writes (edit, delete): the cluster admin's."""
        if self._user_client is None:
            from kconsole.cluster import ADMIN

            self._user_client = self.cluster.api_client(ADMIN)  # type: ignore[attr-defined]
        return self._user_client

    @staticmethod
    def _where(info: ResourceInfo, obj: Obj) -> tuple[str, str | None, str]:
        meta = obj.get("metadata") or {}
        ns = meta.get("namespace") if info.namespaced else None
        return meta["name"], ns, f"{info.kind.lower()}/{meta['name']}"

    # ------------------------------------------------------------------ logs

    def action_logs(self) -> None:
        from kconsole.tui.screens.logs import LogsScreen

        app: Any = self
        found = self.selection()
        if found is None:
            return
        info, obj = found
        if info.group_resource != "pods":
            app.notify(f"l shows pod logs; {self._where(info, obj)[2]} is not a pod", severity="warning")
            return
        spec = obj.get("spec") or {}
        containers = [c["name"] for c in (spec.get("containers") or []) + (spec.get("initContainers") or [])]
        meta = obj["metadata"]
        app.push_screen(LogsScreen(app.model.client, meta.get("namespace") or "default", meta["name"], containers,
                                   sleep=app.model.clock.sleep))

    # ------------------------------------------------------------------ delete

    def action_delete(self) -> None:
        from kconsole.tui.screens import ConfirmScreen

        app: Any = self
        if self.refuse_write("delete (ctrl+d)"):
            return
        found = self.selection()
        if found is None:
            return
        info, obj = found
        if "delete" not in info.verbs:
            app.notify(f"{info.group_resource} cannot be deleted", severity="warning")
            return
        name, ns, ref = self._where(info, obj)

        def answered(yes: bool | None) -> None:
            if yes:
                app.run_worker(self._delete(info, name, ns, ref), group="delete")

        app.push_screen(ConfirmScreen(f"Delete {ref}{f' in namespace {ns}' if ns else ''}?",
                                      "as kubectl delete: graceful, dependents collected in the background"),
                        answered)

    async def _delete(self, info: ResourceInfo, name: str, ns: str | None, ref: str) -> None:
        app: Any = self
        try:
            await self.user_client().delete(info.resource, name, ns)
        except StatusError as err:
            app.notify(f"delete {ref}: {err.message}", severity="error")
            return
        app.notify(f'{info.group_resource} "{name}" deleted')

    # ------------------------------------------------------------------ edit

    def action_edit(self) -> None:
        app: Any = self
        if self.refuse_write("edit (e)"):
            return
        found = self.selection()
        if found is None:
            return
        info, obj = found
        if "patch" not in info.verbs:
            app.notify(f"{info.group_resource} cannot be edited", severity="warning")
            return
        if not app.is_headless and not getattr(app._driver, "can_suspend", False):
            app.notify("e needs a terminal to run your editor: use kubectl edit here", severity="warning")
            return
        app.run_worker(self._edit(info, obj), group="edit", exclusive=True)

    def kept_edits(self) -> dict[str, edit.KeptEdit]:
        """Edits the API refused, by ``group-resource/namespace/name``, waiting for the next ``e``."""
        if self._kept is None:
            self._kept = {}
        return self._kept

    async def _edit(self, info: ResourceInfo, obj: Obj) -> None:
        app: Any = self
        name, ns, ref = self._where(info, obj)
        key = f"{info.group_resource}/{ns or ''}/{name}"
        kept = self.kept_edits().pop(key, None)
        if kept is None:
            try:
                original = await self.user_client().get(info.resource, name, ns)
            except StatusError as err:
                app.notify(f"edit {ref}: {err.message}", severity="error")
                return
            text = edit.edit_text(original)
        else:
            original, text = kept.original, kept.text
        fd, path = tempfile.mkstemp(prefix="kconsole-edit-", suffix=".yaml")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        try:
            code = await self._run_editor(path)
            edited_text = Path(path).read_text(encoding="utf-8")
        except OSError as err:
            app.notify(f"edit {ref}: cannot run the editor {' '.join(edit.editor_command())}: {err}", severity="error")
            return
        finally:
            Path(path).unlink(missing_ok=True)
        if code != 0:
            app.notify(f"edit {ref}: the editor exited with {code}; nothing was sent", severity="error")
            return
        if kept is None and edit.strip_comments(edited_text) == edit.strip_comments(text):
            app.notify("Edit cancelled, no changes made.")
            return
        try:
            edited = edit.parse_edit(edited_text)
        except edit.EditError as err:
            self._keep(key, original, edited_text, [f"error: {err}"])
            app.notify(f"edit {ref}: {err}; e reopens your edit", severity="error", timeout=10)
            return
        if edited is None:
            app.notify("Edit cancelled, no changes made.")
            return
        patch = edit.edit_patch(original, edited)
        if not patch:
            app.notify("Edit cancelled, no changes made.")
            return
        try:
            await self.user_client().patch(info.resource, name, patch, ns, patch_type="merge")
        except StatusError as err:
            lines = edit.error_lines(f'{info.group_resource} "{name}"', err.message, err.causes)
            self._keep(key, original, edited_text, lines)
            app.notify(f"edit {ref}: {err.message}; e reopens your edit", severity="error", timeout=10)
            return
        app.notify(f"{ref} edited")

    def _keep(self, key: str, original: Obj, text: str, errors: list[str]) -> None:
        """Keep the user's text for the retry, with this attempt's errors (not the last ones) on top."""
        body = "\n".join(line for line in text.splitlines() if not line.startswith("#"))
        header = edit.HEADER + "".join(f"# {line}\n" for line in errors) + "#\n"
        self.kept_edits()[key] = edit.KeptEdit(original, header + body.lstrip("\n") + "\n")

    async def _run_editor(self, path: str) -> int:
        """In a terminal the console steps aside (App.suspend) while the editor runs; headless
        (tests) the editor runs as is."""
        app: Any = self
        if app.is_headless:
            return await edit.run_editor(path)
        with app.suspend():
            return await edit.run_editor(path)

    # ------------------------------------------------------------------ namespace favourites

    def favourites(self) -> NamespaceFavourites:
        if self._favourites is None:
            app: Any = self
            data_dir = getattr(app.cluster, "data_dir", None)
            config = getattr(app.cluster, "config", None)
            if getattr(config, "ephemeral", False):
                data_dir = None
            self._favourites = NamespaceFavourites(Path(data_dir) if data_dir else None)
        return self._favourites

    def remember_namespace(self, namespace: str | None) -> None:
        if namespace:
            self.favourites().add(namespace)

    def action_namespace_favourite(self, digit: int) -> None:
        app: Any = self
        name = self.favourites().at(digit)
        if name is None:
            app.notify(f"no namespace on {digit} yet: n picks a namespace and it joins 1-9", severity="warning")
            return
        if not app.resources.namespaced:
            app.notify(f"{app.resources.group_resource} are not namespaced", severity="warning")
            return
        app.resources.set_namespace(name)
        app.notify(f"namespace {name}", timeout=2)
