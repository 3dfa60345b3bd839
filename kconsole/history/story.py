"""Every object's story: each revision of one object with what changed, who wrote it, the Events
about it then, and the writes to it the request pipeline refused.

Read through :class:`~kconsole.client.history.HistoryClient` only (the console's history view and
``kconsole history`` share it). What changed is a YAML diff with the noise hidden
(``metadata.managedFields``, ``metadata.resourceVersion``). Who wrote it: the field manager is the
one whose ``managedFields`` entry the write moved; the user is the one the API server recorded for
that revision (its write log, see :mod:`kconsole.api.writelog`). An Event belongs to the revision
that was current when it was written; so does a refused write.
"""

from __future__ import annotations

import bisect
import difflib
import functools
import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from kconsole.client.history import Change, HistoryClient, Write

Obj = dict[str, Any]

#: Metadata fields hidden from the diffs: they move on every write and say nothing of it.
NOISE = ("managedFields", "resourceVersion")


@dataclass(slots=True)
class Revision:
    """One revision of the object, and what surrounds it."""

    revision: int
    time: float
    type: str  # ADDED, MODIFIED, DELETED
    diff: list[str]  # unified diff lines of the YAML, noise hidden
    managers: list[str]  # field managers whose entries this write moved
    user: str  # the user the API server recorded for this revision ("" when not recorded)
    object: Obj | None
    events: list[Obj] = field(default_factory=list)
    refused: list[Write] = field(default_factory=list)

    def to_json(self) -> Obj:
        return {"revision": self.revision, "time": self.time, "type": self.type, "user": self.user,
                "fieldManagers": self.managers, "diff": self.diff,
                "events": [{"type": e.get("type"), "reason": e.get("reason"), "message": e.get("message"),
                            "count": e.get("count")} for e in self.events],
                "refused": [{"time": w.time, "user": w.user, "verb": w.verb, "code": w.code, "stage": w.stage,
                             "message": w.message} for w in self.refused]}


@dataclass(slots=True)
class Story:
    kind: str
    resource: str
    group: str
    namespace: str | None
    name: str
    oldest: int  # the history starts here: an object older than that shows from its state then
    revisions: list[Revision]

    def to_json(self) -> Obj:
        return {"kind": self.kind, "resource": self.resource, "group": self.group, "namespace": self.namespace,
                "name": self.name, "oldest": self.oldest, "revisions": [r.to_json() for r in self.revisions]}


def quiet(obj: Obj | None) -> Obj | None:
    """The object without the fields every write moves."""
    if obj is None:
        return None
    out = dict(obj)
    meta = dict(out.get("metadata") or {})
    for key in NOISE:
        meta.pop(key, None)
    out["metadata"] = meta
    return out


#: Plain strings YAML 1.1 would read as something else (PyYAML's resolver), so they are quoted.
_OTHER = re.compile(r"(?i:yes|no|true|false|on|off|null|~)|[-+]?(?:\.inf|\.nan)|\d{4}-\d\d?-\d\d?.*|[-+]?[\d_.,:]*\d[\d_.,:eE+-]*")
_INDICATORS = ",[]{}#&*!|>'\"%@`"


def _plain(text: str) -> bool:
    """Whether PyYAML writes the string without quotes (close enough for a diff)."""
    if not text or text != text.strip() or _OTHER.fullmatch(text):
        return False
    if text[0] in _INDICATORS or (text[0] in "-?:" and (len(text) == 1 or text[1] == " ")):
        return False
    return ": " not in text and " #" not in text and not text.endswith(":") and text.isprintable()


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return _string(str(value))


@functools.lru_cache(maxsize=65536)
def _string(text: str) -> str:
    """A string scalar as written (the same strings recur in every revision of an object)."""
    if _plain(text):
        return text
    if not text.isprintable():
        return json.dumps(text, ensure_ascii=False)
    return "'" + text.replace("'", "''") + "'"


def _emit(value: Any, indent: str, out: list[str], lead: str) -> None:
    """Block YAML as PyYAML's safe_dump writes it (sorted keys, sequences at their key's indent);
    ``lead`` is what the first line starts with (a key, or ``- `` of a sequence item)."""
    if isinstance(value, dict) and value:
        first = True
        for key in sorted(value, key=str):
            item = value[key]
            head = (lead if first else indent) + _scalar(key) + ":"
            first = False
            if isinstance(item, dict) and item:
                out.append(head)
                _emit(item, indent + "  ", out, indent + "  ")
            elif isinstance(item, list) and item:
                out.append(head)
                _emit(item, indent, out, indent)
            else:
                out.append(head + " " + _flow(item))
    elif isinstance(value, list) and value:
        for i, item in enumerate(value):
            start = (lead if i == 0 else indent) + "- "
            if (isinstance(item, (dict, list))) and item:
                _emit(item, indent + "  ", out, start)
            else:
                out.append(start + _flow(item))
    else:
        out.append(lead + _flow(value))


def _flow(value: Any) -> str:
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    return _scalar(value)


def yaml_lines(obj: Obj | None) -> list[str]:
    """The object's YAML lines (sorted keys, block style, as kubectl prints it), noise hidden. Its
    own emitter: PyYAML's representer takes about 2.5 ms a Pod even over libyaml, and a story
    of 50 revisions dumps 50 of them."""
    if obj is None:
        return []
    out: list[str] = []
    _emit(quiet(obj), "", out, "")
    return out


def yaml_diff(before: Obj | None, after: Obj | None, *, texts: dict[str, list[str]] | None = None) -> list[str]:
    """Unified diff lines of the two objects' YAML (as kubectl prints it), noise hidden. ``texts``
    memoises each version's lines (by resourceVersion) across the diffs of one story: a revision's
    object is the next one's previous."""
    def text(obj: Obj | None) -> list[str]:
        rv = ((obj or {}).get("metadata") or {}).get("resourceVersion")
        if texts is None or obj is None or not rv:
            return yaml_lines(obj)
        lines = texts.get(rv)
        if lines is None:
            lines = texts[rv] = yaml_lines(obj)
        return lines

    lines = difflib.unified_diff(text(before), text(after), "before", "after", n=2, lineterm="")
    return [line for line in lines if not line.startswith(("---", "+++"))]


def managers_moved(before: Obj | None, after: Obj | None) -> list[str]:
    """The field managers whose managedFields entry the write added or changed."""
    def entries(obj: Obj | None) -> dict[tuple[str, str, str], Any]:
        out: dict[tuple[str, str, str], Any] = {}
        for entry in ((obj or {}).get("metadata") or {}).get("managedFields") or ():
            if isinstance(entry, dict):
                key = (str(entry.get("manager", "")), str(entry.get("operation", "")),
                       str(entry.get("subresource", "")))
                out[key] = (entry.get("time"), entry.get("fieldsV1"))
        return out

    old, new = entries(before), entries(after)
    # The writer's entry takes the write's time; an entry whose fields another manager took by force
    # changes too, but keeps its time.
    moved = [key for key, value in new.items() if key not in old or old[key][0] != value[0]]
    if not moved:
        moved = [key for key, value in new.items() if old.get(key) != value]
    return sorted({manager + (f" ({sub})" if sub else "") for manager, _, sub in moved})


async def build(history: HistoryClient, resource: str, name: str, *, kind: str = "", group: str = "",
                namespace: str | None = None) -> Story:
    """The story of one object, from the oldest kept revision to now."""
    bounds = await history.bounds()
    after = max(bounds.oldest - 1, 0)
    changes = await history.changes(after, bounds.current, resource=resource, group=group or None,
                                    namespace=namespace, name=name)
    writes = await history.writes(resource, name, group=group, namespace=namespace)
    by_revision = {w.revision: w for w in writes if w.revision}
    revisions: list[Revision] = []
    texts: dict[str, list[str]] = {}
    if changes and changes[0].previous is not None and changes[0].type != "ADDED":
        # The object is older than the history: start from its state at the oldest kept revision.
        first = changes[0].previous
        revisions.append(_revision(Change(
            int((first.get("metadata") or {}).get("resourceVersion") or bounds.oldest), bounds.oldest_time,
            "KEPT", resource, group, namespace, name, first, None), by_revision, texts))
    elif not changes:
        now = await history.list_at(resource, bounds.current, group=group, namespace=namespace)
        for obj in now:
            if (obj.get("metadata") or {}).get("name") == name:
                rv = int((obj.get("metadata") or {}).get("resourceVersion") or bounds.oldest)
                revisions.append(_revision(Change(rv, await history.time_of(rv), "KEPT", resource, group,
                                                  namespace, name, obj, None), by_revision, texts))
    revisions.extend(_revision(change, by_revision, texts) for change in changes)
    if revisions and not kind:
        kind = str((revisions[-1].object or revisions[0].object or {}).get("kind", ""))
    if resource != "events" and revisions:
        await _attach_events(history, revisions, after, bounds.current, kind, name, namespace)
    _attach_refused(revisions, [w for w in writes if w.code >= 400])
    return Story(kind or resource, resource, group, namespace, name, bounds.oldest, revisions)


def _revision(change: Change, by_revision: dict[int, Write], texts: dict[str, list[str]]) -> Revision:
    write = by_revision.get(change.revision)
    managers = managers_moved(change.previous, change.object)
    if not managers and write is not None and write.field_manager:
        managers = [write.field_manager]
    before = change.previous if change.type != "KEPT" else None
    diff = yaml_diff(before, change.object, texts=texts)
    return Revision(change.revision, change.time, change.type, diff, managers, write.user if write else "",
                    change.object if change.object is not None else change.previous)


async def _attach_events(history: HistoryClient, revisions: list[Revision], after: int, upto: int, kind: str,
                         name: str, namespace: str | None) -> None:
    """Each Event about the object (named ``<name>.<suffix>`` as upstream names them) goes to the
    revision current when the Event was last written."""
    changes = await history.changes(after, upto, resource="events", namespace=namespace, name_prefix=f"{name}.")
    latest: dict[str, tuple[int, Obj]] = {}
    for change in changes:
        if change.object is None:
            continue
        involved = change.object.get("involvedObject") or {}
        if involved.get("name") != name or (kind and involved.get("kind") not in (kind, None)):
            continue
        latest[change.name] = (change.revision, change.object)
    starts = [r.revision for r in revisions]
    for revision, event in sorted(latest.values(), key=lambda pair: pair[0]):
        revisions[_at(starts, revision)].events.append(event)


def _attach_refused(revisions: list[Revision], refused: list[Write]) -> None:
    if not revisions:
        return
    times = [r.time for r in revisions]
    for write in refused:
        revisions[_at(times, write.time)].refused.append(write)


def _at(starts: list[Any], value: Any) -> int:
    """Index of the last start at or before ``value`` (the first when none is)."""
    return max(bisect.bisect_right(starts, value) - 1, 0)


def stamp(t: float) -> str:
    """A revision's simulated time as Kubernetes prints times (seconds, UTC)."""
    return datetime.fromtimestamp(int(t), tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def render_text(story: Story, *, diff: bool = True) -> str:
    """The story as ``kconsole history`` prints it."""
    ns = f"{story.namespace}/" if story.namespace else ""
    lines = [f"{story.kind} {ns}{story.name}: {len(story.revisions)} revision(s) kept "
             f"(history from revision {story.oldest})"]
    for rev in story.revisions:
        who = ", ".join(filter(None, [rev.user and f"user {rev.user}",
                                      rev.managers and "manager " + ", ".join(rev.managers)]))
        lines.append(f"rev {rev.revision}  {stamp(rev.time)}  {rev.type}" + (f"  by {who}" if who else ""))
        if diff:
            lines.extend(f"    {line}" for line in rev.diff)
        for event in rev.events:
            count = f" (x{event['count']})" if (event.get("count") or 1) > 1 else ""
            lines.append(f"    event {event.get('type', '')} {event.get('reason', '')}: {event.get('message', '')}{count}")
        for write in rev.refused:
            lines.append(f"    refused {write.verb} by {write.user} at {write.stage or '?'} ({write.code}): {write.message}")
    return "\n".join(lines) + "\n"
