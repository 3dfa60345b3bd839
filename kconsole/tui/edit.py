"""``e``: the ``kubectl edit`` round trip. The object (managedFields left out, as kubectl edit does)
goes to ``$KUBE_EDITOR`` / ``$EDITOR`` (``vi`` when neither is set) under kubectl's header comment;
what comes back is parsed and sent as a merge patch holding the original ``resourceVersion``, so a
change made meanwhile is a conflict, not a silent overwrite. When the API refuses it, the edit is
kept with the API's errors as comments on top, as kubectl reopens it, for the next ``e`` to retry.
"""

from __future__ import annotations

import asyncio
import os
import shlex
from dataclasses import dataclass
from typing import Any

import yaml

from kconsole.objects.patch import create_merge_patch

Obj = dict[str, Any]

HEADER = ("# Please edit the object below. Lines beginning with a '#' will be ignored,\n"
          "# and an empty file will abort the edit. If an error occurs while saving this file will be\n"
          "# reopened with the relevant failures.\n#\n")


class EditError(ValueError):
    """The edited text cannot be sent (not YAML, not one object)."""


@dataclass
class KeptEdit:
    """An edit the API refused: the object as it was opened and the user's text (with the errors)."""

    original: Obj
    text: str


def editor_command() -> list[str]:
    """kubectl's choice of editor: KUBE_EDITOR, then EDITOR, then vi; split as a shell would."""
    raw = os.environ.get("KUBE_EDITOR") or os.environ.get("EDITOR") or "vi"
    return shlex.split(raw)


def editable(obj: Obj) -> Obj:
    """The object without ``metadata.managedFields``."""
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "managedFields"}
    return {**obj, "metadata": meta}


def edit_text(obj: Obj, errors: list[str] | None = None) -> str:
    """What the editor opens: the header, the API's errors if any, then the YAML."""
    body = yaml.safe_dump(editable(obj), sort_keys=True, default_flow_style=False, allow_unicode=True)
    return HEADER + "".join(f"# {line}\n" for line in errors or ()) + ("#\n" if errors else "") + body


def strip_comments(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


def parse_edit(text: str) -> Obj | None:
    """The edited object, None when the file was emptied (kubectl: edit cancelled)."""
    body = strip_comments(text)
    if not body.strip():
        return None
    try:
        obj = yaml.safe_load(body)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise EditError(f"the edited file is not valid YAML{where}: {getattr(err, 'problem', err)}") from None
    if not isinstance(obj, dict):
        raise EditError("the edited file must hold one object (a mapping)")
    return obj


def edit_patch(original: Obj, edited: Obj) -> Obj:
    """A merge patch from ``original`` to ``edited`` (empty: nothing changed), carrying the
    original's resourceVersion as a precondition."""
    patch = create_merge_patch(editable(original), edited)
    if not patch:
        return {}
    rv = (original.get("metadata") or {}).get("resourceVersion")
    if rv:
        patch.setdefault("metadata", {})
        if isinstance(patch["metadata"], dict):
            patch["metadata"]["resourceVersion"] = rv
    return patch


def error_lines(what: str, message: str, causes: list[dict[str, str]]) -> list[str]:
    """kubectl's comment block for a refused edit: ``<what> was not valid:`` and one ``* cause`` a line."""
    if not causes:
        return [f"{what} was not valid:", f"* {message}"]
    lines = [f"{what} was not valid:"]
    for cause in causes:
        field, text = cause.get("field", ""), cause.get("message", "")
        lines.append(f"* {field}: {text}" if field else f"* {text}")
    return lines


async def run_editor(path: str) -> int:
    """Run the editor on ``path`` without blocking the loop (the cluster keeps running meanwhile)."""
    command = editor_command()
    proc = await asyncio.create_subprocess_exec(*command, path)
    return await proc.wait()
