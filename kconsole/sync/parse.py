"""Manifest files into documents, keeping where each document and field sits in its file.

A file is YAML (multi-document, ``---``) or JSON; a ``kind: List`` (or ``*List``) document
contributes its ``items``. Every document remembers the node tree it came from so an error the API
server reports for a field (``spec.replicas``, ``.spec.template.spec.containers[name="web"].image``)
can point at that field's ``line:column``. Lines and columns are 1-based, as editors show them.

Parsing never raises for bad content: a file yields documents and errors, and one error anywhere
means the caller applies nothing from that file.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kconsole.objects import yamlload
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")

#: libyaml's loader (its syntax messages are the ones kubectl prints: go-yaml is a port of libyaml).
_Loader: Any = yamlload.Loader
#: Deeper documents are refused (the limit every door YAML comes in by applies).
MAX_DEPTH = yamlload.MAX_DEPTH


@dataclass(frozen=True, slots=True)
class Position:
    line: int  # 1-based
    column: int  # 1-based


@dataclass(frozen=True, slots=True)
class SyncError:
    """What went wrong, where: ``path:line:column: message``."""

    path: str
    line: int
    column: int
    message: str
    reason: str = ""  # YAMLSyntax, JSONSyntax, Manifest, or the API Status reason (Invalid, Conflict, ...)
    code: int = 0  # HTTP code of an API answer; 0 for local problems

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}: {self.message}"


@dataclass(frozen=True, slots=True)
class ObjectKey:
    """Which object a document names. ``namespace`` is "" for cluster-scoped objects and for
    namespaced documents without one (the sync fills "default" once it knows the kind's scope)."""

    api_version: str
    kind: str
    namespace: str
    name: str

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    def __str__(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {where}{self.name}"


@dataclass(slots=True)
class Document:
    """One object to apply, with its place in the file."""

    path: str
    index: int  # position among the file's objects (List items count one each)
    obj: dict[str, Any]
    position: Position
    node: Any = field(default=None, repr=False)  # the yaml node, or None for JSON

    @property
    def key(self) -> ObjectKey:
        meta = self.obj.get("metadata") or {}
        return ObjectKey(str(self.obj.get("apiVersion", "")), str(self.obj.get("kind", "")),
                         str(meta.get("namespace") or ""), str(meta.get("name", "")))

    def locate(self, field_path: str) -> Position:
        """Where ``field_path`` (an API error's field) sits; the closest existing ancestor, or the
        document's start when the path is unknown or the file was JSON."""
        if self.node is None or not field_path:
            return self.position
        node = self.node
        best = self.position
        for step in _path_steps(field_path):
            child = _child(node, step)
            if child is None:
                break
            key_node, node = child
            best = _pos(key_node)
        return best


@dataclass(slots=True)
class ParsedFile:
    path: str
    documents: list[Document]
    errors: list[SyncError]


def is_manifest_name(name: str) -> bool:
    return name.lower().endswith(MANIFEST_SUFFIXES)


def parse_file(path: str | Path, display: str | None = None, max_bytes: int | None = None) -> ParsedFile:
    """Read and parse one file; ``display`` is the path shown in errors (relative to the folder).
    A file longer than ``max_bytes`` is refused after reading no more than that."""
    shown = display or str(path)
    try:
        with open(path, "rb") as f:
            raw = f.read() if max_bytes is None else f.read(max_bytes + 1)
    except OSError as err:
        return ParsedFile(shown, [], [SyncError(shown, 1, 1, f"cannot read file: {err.strerror}", "Read")])
    if max_bytes is not None and len(raw) > max_bytes:
        return ParsedFile(shown, [], [SyncError(shown, 1, 1, f"file is larger than {max_bytes:,} bytes; not read",
                                                "TooLarge")])
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        column = err.start - (raw.rfind(b"\n", 0, err.start) + 1) + 1
        return ParsedFile(shown, [], [SyncError(shown, line, column, "file is not valid UTF-8", "Encoding")])
    return parse_text(text, shown)


def parse_text(text: str, path: str) -> ParsedFile:
    if path.lower().endswith(".json"):
        return _parse_json(text, path)
    return _parse_yaml(text, path)


# --------------------------------------------------------------------------- YAML


def _pos(node: Any) -> Position:
    mark = node.start_mark
    return Position(mark.line + 1, mark.column + 1)


def _parse_yaml(text: str, path: str) -> ParsedFile:
    docs: list[Document] = []
    errors: list[SyncError] = []
    roots: list[Any] = []
    try:
        # Aliases, depth and self-reference are judged on the parse events, before anything composes.
        yamlload.check(text)
    except yaml.MarkedYAMLError as err:
        return ParsedFile(path, [], [_yaml_error(path, err)])
    except yaml.YAMLError as err:
        return ParsedFile(path, [], [SyncError(path, 1, 1, f"YAML error: {err}", "YAMLSyntax")])
    loader = _Loader(text)
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            problem = _structure_problem(node)
            if problem is not None:
                message, where = problem
                return ParsedFile(path, [], [SyncError(path, where.line, where.column, f"YAML error: {message}",
                                                       "YAMLSyntax")])
            roots.append((node, loader.construct_document(node)))
    except yaml.MarkedYAMLError as err:
        return ParsedFile(path, [], [_yaml_error(path, err)])
    except yaml.YAMLError as err:
        return ParsedFile(path, [], [SyncError(path, 1, 1, f"YAML error: {err}", "YAMLSyntax")])
    finally:
        loader.dispose()
    for node, value in roots:
        _add_document(path, value, node, docs, errors)
    return ParsedFile(path, docs, errors)


def _yaml_error(path: str, err: yaml.MarkedYAMLError) -> SyncError:
    mark = err.problem_mark or err.context_mark
    line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    problem = err.problem or err.context or "invalid YAML"
    if isinstance(err, yamlload.LimitError):
        return SyncError(path, line, column, f"YAML error: {problem}", "YAMLSyntax")
    return SyncError(path, line, column, f"YAML syntax error: {problem}", "YAMLSyntax")


class _Unusable(Exception):
    def __init__(self, message: str, node: Any = None) -> None:
        super().__init__(message)
        self.node = node


def _structure_problem(root: Any) -> tuple[str, Position] | None:
    """Why a document's shape makes it unusable, and where, before anything copies it: a key
    given twice in one mapping (YAML loaders keep the last silently, so an edit of the first does
    nothing; kubectl refuses the file). Aliases, depth and self-reference were judged before
    composing (:func:`kconsole.objects.yamlload.check`). Each distinct node is visited once."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            lines: dict[str, int] = {}
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode) and key.value != "<<":
                    if key.value in lines:
                        return f'mapping key "{key.value}" already defined at line {lines[key.value]}', _pos(key)
                    lines[key.value] = key.start_mark.line + 1
                stack.append(key)
                stack.append(value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return None


def _add_document(path: str, value: Any, node: Any, docs: list[Document], errors: list[SyncError]) -> None:
    pos = _pos(node) if node is not None else Position(1, 1)
    if value is None:
        return  # an empty document (a trailing ---, a comment-only file)
    if not isinstance(value, dict):
        errors.append(SyncError(path, pos.line, pos.column,
                                f"expected an object (a mapping with apiVersion and kind), got {_what(value)}",
                                "Manifest"))
        return
    kind = value.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and "items" in value:
        items = value.get("items")
        items_node = _child(node, "items")[1] if node is not None and _child(node, "items") else None
        if not isinstance(items, list):
            where = _pos(items_node) if items_node is not None else pos
            errors.append(SyncError(path, where.line, where.column, f"{kind}: items must be a list", "Manifest"))
            return
        item_nodes = list(items_node.value) if items_node is not None else [None] * len(items)
        for item, item_node in zip(items, item_nodes):
            _add_document(path, item, item_node if item_node is not None else node, docs, errors)
        return
    problem = _shape_problem(value)
    if problem is not None:
        field_name, message = problem
        where = pos
        if node is not None and field_name:
            doc = Document(path, 0, value, pos, node)
            where = doc.locate(field_name)
        errors.append(SyncError(path, where.line, where.column, message, "Manifest"))
        return
    docs.append(Document(path, len(docs), value, pos, node))


def _shape_problem(obj: dict[str, Any]) -> tuple[str, str] | None:
    """What the sync needs before it can even send a document (the server judges the rest)."""
    for key in ("apiVersion", "kind"):
        if key not in obj:
            return "", f"document has no {key}"
        if not isinstance(obj[key], str) or not obj[key]:
            return key, f"{key} must be a non-empty string"
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return ("metadata" if "metadata" in obj else ""), f"{obj['kind']}: metadata must be an object with a name"
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        if meta.get("generateName"):
            return "metadata.generateName", (f"{obj['kind']}: generateName cannot be applied declaratively; "
                                             "give the object a metadata.name")
        return "metadata", f"{obj['kind']}: metadata.name is required"
    ns = meta.get("namespace")
    if ns is not None and not isinstance(ns, str):
        return "metadata.namespace", f"{obj['kind']} {name}: metadata.namespace must be a string"
    return None


def _what(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    return type(value).__name__


# --------------------------------------------------------------------------- JSON


def _parse_json(text: str, path: str) -> ParsedFile:
    try:
        value = json.loads(text) if text.strip() else None
    except json.JSONDecodeError as err:
        return ParsedFile(path, [], [SyncError(path, err.lineno, err.colno, f"JSON syntax error: {err.msg}",
                                               "JSONSyntax")])
    except RecursionError:
        return ParsedFile(path, [], [SyncError(path, 1, 1, f"JSON error: document nests deeper than {MAX_DEPTH} levels",
                                               "JSONSyntax")])
    docs: list[Document] = []
    errors: list[SyncError] = []
    # JSON is also YAML: compose it again for field positions (cheap, and JSON already parsed).
    try:
        if value is not None:
            yamlload.check(text)
        node = yaml.compose(text, Loader=_Loader) if value is not None else None
    except yamlload.LimitError as err:
        error = _yaml_error(path, err)
        return ParsedFile(path, [], [SyncError(path, error.line, error.column,
                                               error.message.replace("YAML", "JSON", 1), "JSONSyntax")])
    except yaml.YAMLError:
        node = None
    problem = _structure_problem(node) if node is not None else None
    if problem is not None:
        message, where = problem
        return ParsedFile(path, [], [SyncError(path, where.line, where.column, f"JSON error: {message}", "JSONSyntax")])
    _add_document(path, value, node, docs, errors)
    if node is None:
        for doc in docs:
            doc.node = None
    return ParsedFile(path, docs, errors)


# --------------------------------------------------------------------------- field paths

_STEP = re.compile(r'\.?([^.\[\]]+)|\[(\d+)\]|\[([^=\]]+)="?([^"\]]*)"?\]')


def _path_steps(field_path: str) -> list[str | int | tuple[str, str]]:
    """``spec.containers[0].image`` / ``.spec.containers[name="web"].image`` into steps."""
    steps: list[str | int | tuple[str, str]] = []
    for m in _STEP.finditer(field_path):
        if m.group(1) is not None:
            steps.append(m.group(1))
        elif m.group(2) is not None:
            steps.append(int(m.group(2)))
        else:
            steps.append((m.group(3), m.group(4)))
    return steps


def _child(node: Any, step: str | int | tuple[str, str]) -> tuple[Any, Any] | None:
    """(node to point at, node to descend into) for one step, or None."""
    if isinstance(node, yaml.MappingNode) and isinstance(step, str):
        for key_node, value_node in node.value:
            if getattr(key_node, "value", None) == step:
                return key_node, value_node
        return None
    if isinstance(node, yaml.SequenceNode):
        if isinstance(step, int):
            return (node.value[step], node.value[step]) if 0 <= step < len(node.value) else None
        if isinstance(step, tuple):
            key, want = step
            for item in node.value:
                if isinstance(item, yaml.MappingNode):
                    for key_node, value_node in item.value:
                        if key_node.value == key and getattr(value_node, "value", None) == want:
                            return item, item
    return None
