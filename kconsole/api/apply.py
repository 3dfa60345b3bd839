"""Server-side apply: field managers, ``managedFields`` (FieldsV1) and conflicts.

Each manager owns the set of fields it last applied. Applying a configuration as manager M:

1. the configuration's field set F is computed (maps by key, associative lists by their keys
   ``k:{"name":"web"}``, set-like lists by value ``v:"x"``, atomic lists whole);
2. a field of F owned by another manager whose live value differs from the applied one is a
   conflict: 409 with one ``FieldManagerConflict`` cause per field, unless ``force`` moves ownership;
3. fields M owned before but no longer applies are removed, unless another manager owns them too;
4. the configuration merges into the live object and M's ``Apply`` entry in ``managedFields``
   becomes F. Creating the object when absent is the caller's job (it passes ``live=None``).

:func:`track_update` records what a non-apply write (create, update, patch) changed, as an
``Update`` entry taking those fields over, so later appliers conflict with it as upstream does.
"""

from __future__ import annotations

import json
import marshal
from typing import Any

from kconsole.api import marshalled
from kconsole.api.strategicpatch import KIND_TYPES, Field, fields_of
from kconsole.api.types import StatusError, status_body

Path = tuple[str, ...]
_NO_FIELD: Field = ("", None, None)
#: Marshalled FieldsV1 trees of top-level sections by (kind, key, marshalled section); bounded.
_SECTION_TREES: dict[tuple[str, str, bytes], bytes] = {}
_SECTION_TREES_SIZE = 2048
#: The shadowed list-item paths of an unchanged section by (its field table, type, path, key, its
#: marshalled value): the spec a status update leaves alone repeats across the pods of a template.
#: Bounded; cleared when full. The table itself is kept to tell a reused id apart.
_SHADOWED: dict[tuple[int, str | None, Path, str, bytes], tuple[dict[str, Field], frozenset[Path]]] = {}
_SHADOWED_SIZE = 2048
#: Other managers' FieldsV1 trees as a write that changes no owned field re-emits them (see _normalized).
_NORMALIZED: dict[bytes, bytes] = {}
_NORMALIZED_SIZE = 2048
#: Marshalled FieldsV1 trees of whole objects by (kind, marshalled owned fields): the creates of one
#: template own the same tree (names and uids are not owned); bounded.
_TREES: dict[tuple[Any, ...], bytes] = {}
_TREES_SIZE = 2048
#: The managedFields of a create, marshalled and as the read-only list its answers share, by
#: (manager, operation, apiVersion, time, marshalled tree).
_ENTRIES: dict[tuple[str, str, str, str, bytes], tuple[bytes, list[dict[str, Any]]]] = {}
_ENTRIES_SIZE = 256
#: json.dumps with separators builds an encoder per call; item keys are made on every write.
_compact = json.JSONEncoder(separators=(",", ":")).encode
_quote: Any = getattr(json.encoder, "c_encode_basestring_ascii", None) or json.encoder.py_encode_basestring_ascii

#: Associative lists keyed by more than their strategic merge key (upstream's listMapKeys).
_MULTI_KEYS = {"ports": ("containerPort", "protocol")}
_SERVICE_PORT_KEYS = ("port", "protocol")
#: metadata fields that identify or are owned by the system, never by a manager.
_SYSTEM_META = ("name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp", "managedFields",
                "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds")


def _list_kind(field: Field, name: str, parent: str | None) -> tuple[str, tuple[str, ...]]:
    strategy, merge_key, _ = field
    if "merge" not in strategy.split(","):
        return "atomic", ()
    if merge_key is None:
        return "set", ()
    if name == "ports":
        return "assoc", _SERVICE_PORT_KEYS if parent == "ServiceSpec" else _MULTI_KEYS["ports"]
    return "assoc", (merge_key,)


def _key_values(item: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k in keys:
        v = item.get(k)
        if v is None and k == "protocol":
            v = "TCP"
        if v is not None:
            out[k] = v
    return out


def _item_key(item: dict[str, Any], keys: tuple[str, ...]) -> str:
    if len(keys) == 1:
        value = item.get(keys[0])
        if type(value) is str:  # the common case (a name): no encoder round trip
            return f'k:{{"{keys[0]}":{_quote(value)}}}'
    return "k:" + _compact(_key_values(item, keys))


def _fields_table(kind: str) -> dict[str, Field]:
    return KIND_TYPES.get(kind, {"metadata": ("", None, "ObjectMeta")})


def _type_name(field: Field) -> str | None:
    return field[2]


def field_set(obj: dict[str, Any], kind: str) -> set[Path]:
    """The fields ``obj`` sets, as FieldsV1 paths (leaves, and ``.`` for owned list items)."""
    out: set[Path] = set()
    _collect(_top_fields(obj), _fields_table(kind), None, (), out)
    return out


#: Top-level fields no manager owns.
_UNOWNED_TOP = ("apiVersion", "kind", "status")


def _top_fields(obj: dict[str, Any]) -> dict[str, Any]:
    top = {k: v for k, v in obj.items() if k not in _UNOWNED_TOP}
    meta = top.get("metadata")
    if isinstance(meta, dict):
        meta = {k: v for k, v in meta.items() if k not in _SYSTEM_META}
        if meta:
            top["metadata"] = meta
        else:
            top.pop("metadata")
    return top


def fields_tree(obj: dict[str, Any], kind: str) -> dict[str, Any]:
    """``to_fieldsv1(field_set(obj, kind))`` in one walk, without the path tuples: what a create owns.

    The tree of a top-level section other than metadata (a Pod's spec, a ConfigMap's data) depends on
    that section alone, and the objects of one template repeat it: it is remembered by its marshalled
    bytes and handed out as a private copy; so is the tree of the whole object."""
    known = _tree_bytes(obj, kind)
    return _fields_tree(_top_fields(obj), kind) if known is None else marshal.loads(known)


def _tree_bytes(obj: dict[str, Any], kind: str) -> bytes | None:
    """The marshalled :func:`fields_tree` of ``obj``, remembered; None when ``obj`` is not plain data.
    A spec whose bytes validation handed over (see :mod:`kconsole.api.marshalled`) is not marshalled
    again: the key is then the spec's position and bytes beside the rest of the owned fields."""
    spec = obj.get("spec")
    spec_bytes = marshalled.peek(spec) if spec is not None else None
    try:
        if spec_bytes is None:
            key: tuple[Any, ...] = (kind, marshal.dumps(_top_fields(obj)))
        else:
            # The owned fields less the spec, and the spec's place among them: the spec is not
            # marshalled again.
            rest = _top_fields(obj)
            place = list(rest).index("spec")
            del rest["spec"]
            key = (kind, place, spec_bytes, marshal.dumps(rest))
    except ValueError:
        return None
    known = _TREES.get(key)
    if known is None:
        known = marshal.dumps(_fields_tree(_top_fields(obj), kind))
        if len(_TREES) >= _TREES_SIZE:
            _TREES.clear()
        _TREES[key] = known
    return known


def _fields_tree(top: dict[str, Any], kind: str) -> dict[str, Any]:
    fields = _fields_table(kind)
    sections: dict[str, Any] = {}
    rest: dict[str, Any] = {}
    for key, value in top.items():
        if key == "metadata" or type(value) is not dict or not value:
            rest[key] = value
            continue
        try:
            cache_key = (kind, key, marshal.dumps(value))
        except ValueError:
            rest[key] = value
            continue
        known = _SECTION_TREES.get(cache_key)
        if known is None:
            tree = _tree({key: value}, fields, None, False)
            known = marshal.dumps(tree)
            if len(_SECTION_TREES) >= _SECTION_TREES_SIZE:
                _SECTION_TREES.clear()
            _SECTION_TREES[cache_key] = known
        sections.update(marshal.loads(known))
    if not sections:
        return _tree(rest, fields, None, False)
    sections.update(_tree(rest, fields, None, False))
    return dict(sorted(sections.items()))


def _tree(value: dict[str, Any], fields: dict[str, Field], type_name: str | None, item: bool) -> dict[str, Any]:
    """The FieldsV1 tree of one map, keys sorted as sorted paths would put them; ``item``: an
    associative list item, which also owns itself (``.``)."""
    node: dict[str, Any] = {".": {}} if item else {}
    merged = False
    for key, v in value.items():
        name = "f:" + key
        t = type(v)
        if t is dict:
            if not v:
                node.setdefault(name, {})
                continue
            field = fields.get(key, _NO_FIELD)
            child = _tree(v, fields_of(field[2]), field[2], False)
        elif t is list:
            field = fields.get(key, _NO_FIELD)
            kind, keys = _list_kind(field, key, type_name)
            if kind == "assoc":
                child = {}
                item_fields = fields_of(field[2])
                for entry in v:
                    if type(entry) is dict:
                        sub = _tree(entry, item_fields, field[2], True)
                        item_key = _item_key(entry, keys)
                        if item_key in child:
                            _merge_tree(child[item_key], sub)
                            merged = True
                        else:
                            child[item_key] = sub
                child = dict(sorted(child.items()))
            elif kind == "set":
                child = {"v:" + _compact(entry): {} for entry in v}
                child = dict(sorted(child.items()))
            else:
                node.setdefault(name, {})
                continue
        elif v is not None:
            node.setdefault(name, {})
            continue
        else:
            continue
        if not child:
            continue
        if name in node:
            _merge_tree(node[name], child)
            merged = True
        else:
            node[name] = child
    return _sorted_tree(node) if merged else dict(sorted(node.items()))


def _merge_tree(have: dict[str, Any], child: dict[str, Any]) -> None:
    for key, sub in child.items():
        if key in have:
            _merge_tree(have[key], sub)
        else:
            have[key] = sub


def _sorted_tree(node: dict[str, Any]) -> dict[str, Any]:
    """Keys in FieldsV1 order (what sorting the paths gives)."""
    return {k: _sorted_tree(v) if v else v for k, v in sorted(node.items())}


def _collect(value: dict[str, Any], fields: dict[str, Field], type_name: str | None, prefix: Path,
             out: set[Path]) -> None:
    for key, v in value.items():
        path = prefix + (f"f:{key}",)
        field = fields.get(key, ("", None, None))
        if isinstance(v, dict):
            if v:
                _collect(v, fields_of(_type_name(field)), _type_name(field), path, out)
            else:
                out.add(path)
        elif isinstance(v, list):
            kind, keys = _list_kind(field, key, type_name)
            if kind == "assoc":
                for item in v:
                    if isinstance(item, dict):
                        item_path = path + (_item_key(item, keys),)
                        out.add(item_path + (".",))
                        _collect(item, fields_of(_type_name(field)), _type_name(field), item_path, out)
            elif kind == "set":
                for item in v:
                    out.add(path + ("v:" + _compact(item),))
            else:
                out.add(path)
        elif v is not None:
            out.add(path)


def _changed_candidates(new: dict[str, Any], old: dict[str, Any], kind: str, status: bool = False) -> set[Path]:
    """``field_set(new, kind)`` without the field paths under a map key whose value equals old's there:
    each looks up the same in both objects, so the diff would drop it anyway, and the lookups were most
    of an update's cost (a status update leaves the spec alone; a binding changes one field of it).
    ``status``: a write through the status subresource, whose manager owns the status fields it sets."""
    out: set[Path] = set()
    top = _top_fields(new)
    if status and "status" in new:
        top["status"] = new["status"]
    _collect_changed(top, old, _fields_table(kind), None, (), out)
    return out


def _collect_changed(value: dict[str, Any], old: Any, fields: dict[str, Field], type_name: str | None,
                     prefix: Path, out: set[Path]) -> None:
    """:func:`_collect` of ``value`` pruned against ``old``, the map :func:`lookup` reaches at ``prefix``."""
    old_map = old if isinstance(old, dict) else None
    for key, v in value.items():
        if old_map is not None and key in old_map and old_map[key] == v:
            if isinstance(v, (dict, list)):
                out |= _shadowed_of(key, v, fields, type_name, prefix)
            continue
        if isinstance(v, dict) and v:
            field = fields.get(key, ("", None, None))
            _collect_changed(v, old_map.get(key) if old_map is not None else None, fields_of(_type_name(field)),
                             _type_name(field), prefix + (f"f:{key}",), out)
        else:
            _collect({key: v}, fields, type_name, prefix, out)


def _normalized(tree: dict[str, Any]) -> dict[str, Any]:
    """``to_fieldsv1(from_fieldsv1(tree))``, a private copy, remembered by the tree's marshalled bytes:
    a write that changes no owned field (a status update) keeps every other entry as it was."""
    try:
        key = marshal.dumps(tree)
    except ValueError:
        return to_fieldsv1(from_fieldsv1(tree))
    known = _NORMALIZED.get(key)
    if known is None:
        known = marshal.dumps(to_fieldsv1(from_fieldsv1(tree)))
        if len(_NORMALIZED) >= _NORMALIZED_SIZE:
            _NORMALIZED.clear()
        _NORMALIZED[key] = known
    return marshal.loads(known)


def _shadowed_of(key: str, value: Any, fields: dict[str, Field], type_name: str | None,
                 prefix: Path) -> frozenset[Path]:
    """:func:`_shadowed_items` of ``{key: value}``, remembered for values seen before."""
    try:
        memo_key = (id(fields), type_name, prefix, key, marshal.dumps(value))
    except ValueError:
        memo_key = None
    if memo_key is not None:
        known = _SHADOWED.get(memo_key)
        if known is not None and known[0] is fields:
            return known[1]
    found: set[Path] = set()
    _shadowed_items({key: value}, fields, type_name, prefix, False, found)
    paths = frozenset(found)
    if memo_key is not None:
        if len(_SHADOWED) >= _SHADOWED_SIZE:
            _SHADOWED.clear()
        _SHADOWED[memo_key] = (fields, paths)
    return paths


def _shadowed_items(value: dict[str, Any], fields: dict[str, Field], type_name: str | None, prefix: Path,
                    shadowed: bool, out: set[Path]) -> None:
    """The list-item paths (``.``) of ``value`` that :func:`lookup` may not find even in an equal object:
    items whose key repeats in their list, and everything under such an item (lookup takes the first
    match). The diff judges those; every other item is found, so it drops them."""
    for key, v in value.items():
        if isinstance(v, dict):
            if v:
                field = fields.get(key, ("", None, None))
                _shadowed_items(v, fields_of(_type_name(field)), _type_name(field), prefix + (f"f:{key}",),
                                shadowed, out)
        elif isinstance(v, list):
            field = fields.get(key, ("", None, None))
            kind, keys = _list_kind(field, key, type_name)
            if kind != "assoc":
                continue
            path = prefix + (f"f:{key}",)
            items = [(item, _item_key(item, keys)) for item in v if isinstance(item, dict)]
            repeated = len({k for _, k in items}) < len(items)
            for item, item_key in items:
                item_path = path + (item_key,)
                if shadowed or repeated:
                    out.add(item_path + (".",))
                _shadowed_items(item, fields_of(_type_name(field)), _type_name(field), item_path,
                                shadowed or repeated, out)


def to_fieldsv1(paths: set[Path]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for path in sorted(paths):
        node = tree
        for el in path:
            node = node.setdefault(el, {})
    return tree


def from_fieldsv1(tree: dict[str, Any], prefix: Path = ()) -> set[Path]:
    out: set[Path] = set()
    for key, child in tree.items():
        path = prefix + (key,)
        if key == ".":
            out.add(path)
        elif isinstance(child, dict) and child:
            out |= from_fieldsv1(child, path)
        else:
            out.add(path)
    return out


def _match(item: Any, key_json: str) -> bool:
    if not isinstance(item, dict):
        return False
    want = json.loads(key_json)
    return all(_key_values(item, (k,)).get(k) == v for k, v in want.items())


def _step(cur: Any, el: str) -> tuple[bool, Any]:
    """One ``f:``/``k:`` element of :func:`lookup`: (found, the value there)."""
    if el.startswith("f:"):
        if not isinstance(cur, dict) or el[2:] not in cur:
            return False, None
        return True, cur[el[2:]]
    if el.startswith("k:"):
        if not isinstance(cur, list):
            return False, None
        want = None
        for item in cur:
            if isinstance(item, dict):
                if want is None:
                    want = json.loads(el[2:])
                if all(_key_values(item, (k,)).get(k) == v for k, v in want.items()):
                    return True, item
    return False, None


def present_paths(obj: Any, tree: dict[str, Any], prefix: Path = ()) -> set[Path]:
    """The paths of ``from_fieldsv1(tree, prefix)`` that :func:`lookup` finds in ``obj`` (the value at
    ``prefix``), in one walk of the tree: paths that share a prefix step through it once, and a list
    item's key is parsed once, not once per field under it (a manager's own entry on every update)."""
    out: set[Path] = set()
    _present(obj, tree, prefix, out)
    return out


def _present(obj: Any, tree: dict[str, Any], prefix: Path, out: set[Path]) -> None:
    for key, child in tree.items():
        if key == ".":
            out.add(prefix + (key,))
            continue
        kind = key[:2]
        if kind == "f:":
            name = key[2:]
            if not isinstance(obj, dict) or name not in obj:
                continue
            value = obj[name]
        elif kind == "v:":
            listed = json.loads(key[2:])
            if isinstance(obj, list) and listed in obj:
                path = prefix + (key,)
                out |= from_fieldsv1(child, path) if isinstance(child, dict) and child else {path}
            continue
        else:
            found, value = _step(obj, key)
            if not found:
                continue
        if isinstance(child, dict) and child:
            _present(value, child, prefix + (key,), out)
        else:
            out.add(prefix + (key,))


def lookup(obj: Any, path: Path) -> tuple[bool, Any]:
    cur = obj
    for el in path:
        if el == ".":
            return True, cur
        if el.startswith("f:"):
            if not isinstance(cur, dict) or el[2:] not in cur:
                return False, None
            cur = cur[el[2:]]
        elif el.startswith("k:"):
            if not isinstance(cur, list):
                return False, None
            found = next((i for i in cur if _match(i, el[2:])), None)
            if found is None:
                return False, None
            cur = found
        elif el.startswith("v:"):
            value = json.loads(el[2:])
            return (isinstance(cur, list) and value in cur), value
        else:
            return False, None
    return True, cur


def render_path(path: Path) -> str:
    """``.spec.template.spec.containers[name="web"].image``, as upstream prints conflicting fields."""
    out = ""
    for el in path:
        if el == ".":
            continue
        if el.startswith("f:"):
            out += "." + el[2:]
        elif el.startswith("k:"):
            keys = json.loads(el[2:])
            out += "[" + ",".join(f"{k}={json.dumps(v)}" for k, v in keys.items()) + "]"
        elif el.startswith("v:"):
            out += f"[{el[2:]}]"
    return out


def _remove(obj: Any, path: Path) -> None:
    """Remove the field at ``path``, then any map or list that removal left empty."""
    parent_path, last = path[:-1], path[-1]
    if last == ".":
        if len(parent_path) < 2:
            return
        parent_path, last = parent_path[:-1], parent_path[-1]
    found, parent = lookup(obj, parent_path)
    if not found:
        return
    if last.startswith("f:") and isinstance(parent, dict):
        parent.pop(last[2:], None)
    elif last.startswith("k:") and isinstance(parent, list):
        parent[:] = [i for i in parent if not _match(i, last[2:])]
    elif last.startswith("v:") and isinstance(parent, list):
        value = json.loads(last[2:])
        parent[:] = [v for v in parent if v != value]
    if not parent and parent_path and parent_path[-1].startswith("f:"):
        _remove(obj, parent_path)


def _merge(live: Any, applied: Any, fields: dict[str, Field], type_name: str | None) -> Any:
    if not isinstance(applied, dict) or not isinstance(live, dict):
        return applied
    result = dict(live)
    for key, value in applied.items():
        field = fields.get(key, ("", None, None))
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict):
            result[key] = _merge(result.get(key, {}), value, fields_of(_type_name(field)), _type_name(field))
        elif isinstance(value, list):
            kind, keys = _list_kind(field, key, type_name)
            current = result.get(key) if isinstance(result.get(key), list) else []
            if kind == "assoc":
                merged = list(current)
                sub = fields_of(_type_name(field))
                for item in value:
                    if not isinstance(item, dict):
                        continue
                    k = _item_key(item, keys)[2:]
                    idx = next((i for i, cur in enumerate(merged) if _match(cur, k)), None)
                    if idx is None:
                        merged.append(_merge({}, item, sub, _type_name(field)))
                    else:
                        merged[idx] = _merge(merged[idx], item, sub, _type_name(field))
                result[key] = merged
            elif kind == "set":
                result[key] = list(current) + [v for v in value if v not in current]
            else:
                result[key] = value
        else:
            result[key] = value
    return result


def _entries(obj: dict[str, Any] | None) -> list[dict[str, Any]]:
    if obj is None:
        return []
    return list((obj.get("metadata") or {}).get("managedFields") or [])


def _entry(manager: str, operation: str, api_version: str, now: str, paths: set[Path]) -> dict[str, Any]:
    return {"manager": manager, "operation": operation, "apiVersion": api_version, "time": now,
            "fieldsType": "FieldsV1", "fieldsV1": to_fieldsv1(paths)}


def _owned(entry: dict[str, Any]) -> set[Path]:
    return from_fieldsv1(entry.get("fieldsV1") or {}) if entry.get("fieldsType", "FieldsV1") == "FieldsV1" else set()


def _manager_label(entry: dict[str, Any]) -> str:
    """How upstream names a conflicting manager: '"kubectl" with subresource "scale" using apps/v1'
    (an Update names its API version, an Apply does not)."""
    label = f'"{entry.get("manager", "")}"'
    if entry.get("subresource"):
        label += f' with subresource "{entry["subresource"]}"'
    if entry.get("operation") == "Update":
        label += f' using {entry.get("apiVersion", "")}'
    return label


def _conflict_error(conflicts: dict[str, list[Path]], kind: str, name: str) -> StatusError:
    """``conflicts``: manager label -> the paths it owns that the apply would change."""
    causes = []
    lines = []
    total = sum(len(v) for v in conflicts.values())
    for label, paths in conflicts.items():
        for p in sorted(paths):
            causes.append({"reason": "FieldManagerConflict", "message": f"conflict with {label}",
                           "field": render_path(p)})
        if len(paths) == 1 and total == 1:
            lines.append(f"conflict with {label}: {render_path(paths[0])}")
        else:
            lines.append(f"conflicts with {label}:\n" + "\n".join(f"- {render_path(p)}" for p in sorted(paths)))
    message = f"Apply failed with {total} conflict{'s' if total != 1 else ''}: " + "\n".join(lines)
    return StatusError(status_body(409, "Conflict", message, name=name, kind=kind, causes=causes))


def server_side_apply(live: dict[str, Any] | None, applied: dict[str, Any], manager: str, force: bool, now: str,
                      kind: str, subresource: str = "") -> dict[str, Any]:
    """The object after ``manager`` applies ``applied`` to ``live`` (None: create). 409 on conflicts.
    Through the ``status`` subresource only the configuration's status applies, and the manager's
    Apply entry for status is its own (upstream's status reset fields: spec and metadata)."""
    if not isinstance(applied, dict):
        raise StatusError.bad_request("an apply configuration must be an object")
    if not manager:
        raise StatusError.bad_request("fieldManager is required for apply requests")
    meta = applied.get("metadata") if isinstance(applied.get("metadata"), dict) else {}
    name = str(meta.get("name", "") or (live or {}).get("metadata", {}).get("name", ""))
    api_version = str(applied.get("apiVersion") or (live or {}).get("apiVersion", ""))
    status_only = subresource == "status"
    if status_only:
        new_fields = set()
        if isinstance(applied.get("status"), dict) and applied["status"]:
            _collect({"status": applied["status"]}, _fields_table(kind), None, (), new_fields)
    else:
        new_fields = field_set(applied, kind)
    entries = _entries(live)
    mine_before: set[Path] = set()
    others: list[tuple[dict[str, Any], set[Path]]] = []
    for entry in entries:
        if entry.get("manager") == manager and entry.get("operation") == "Apply" \
                and entry.get("subresource", "") == subresource:
            mine_before = _owned(entry)
        else:
            others.append((entry, _owned(entry)))
    conflicts: dict[str, list[Path]] = {}
    if live is not None:
        for entry, owned in others:
            for path in new_fields & owned:
                if path[-1] == ".":
                    continue
                found_live, live_value = lookup(live, path)
                _, applied_value = lookup(applied, path)
                if found_live and live_value != applied_value:
                    conflicts.setdefault(_manager_label(entry), []).append(path)
    if conflicts and not force:
        raise _conflict_error(conflicts, kind, name)
    if conflicts:
        lost = {p for paths in conflicts.values() for p in paths}
        others = [(entry, owned - lost) for entry, owned in others]
    owned_by_others: set[Path] = set().union(*(owned for _, owned in others)) if others else set()
    base: dict[str, Any] = json.loads(json.dumps(live)) if live is not None else {}
    stale = mine_before - new_fields - owned_by_others
    for path in sorted(stale, key=lambda p: (p[-1] != ".", -len(p))):
        if path[-1] == "." and any(p[:len(path) - 1] == path[:-1] and p != path for p in owned_by_others):
            continue
        _remove(base, path)
    if status_only:
        config = {"status": applied["status"]} if isinstance(applied.get("status"), dict) else {}
    else:
        config = {k: v for k, v in applied.items() if k != "status"}
    config_meta = config.get("metadata")
    if isinstance(config_meta, dict):
        config["metadata"] = {k: v for k, v in config_meta.items()
                              if k not in ("managedFields", "resourceVersion", "uid", "creationTimestamp",
                                           "generation")}
    result = _merge(base, config, _fields_table(kind), None)
    new_entries = [_entry(manager, "Apply", api_version, now, new_fields)] if new_fields else []
    if new_entries and subresource:
        new_entries[0]["subresource"] = subresource
    for entry, owned in others:
        if owned:
            kept = dict(entry)
            kept["fieldsV1"] = to_fieldsv1(owned)
            new_entries.append(kept)
    result.setdefault("metadata", {})["managedFields"] = _in_upstream_order(new_entries)
    return result


def _in_upstream_order(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """managedFields as the field manager encodes them (sortEncodedManagedFields): by operation
    (Apply before Update), then time, manager, apiVersion and subresource."""
    if len(entries) < 2:
        return entries
    return sorted(entries, key=lambda e: (e.get("operation") or "", e.get("time") or "", e.get("manager") or "",
                                          e.get("apiVersion") or "", e.get("subresource") or ""))


def _create_entry(manager: str, operation: str, api_version: str, now: str, tree: dict[str, Any]) -> dict[str, Any]:
    return {"manager": manager, "operation": operation, "apiVersion": api_version, "time": now,
            "fieldsType": "FieldsV1", "fieldsV1": tree}


def _remembered_entries(manager: str, operation: str, api_version: str, now: str, tree: bytes) -> list[dict[str, Any]]:
    """A create's managedFields, remembered with their marshalled bytes (handed to the stored
    encoding) by what the entry holds (manager, operation, apiVersion, time, marshalled tree): the
    creates of one template within one second share them. They are handed out read-only, shared by
    the answers of those creates, as the watch cache shares its objects: nothing changes managedFields
    entries in place (every write builds its own list), and a fresh copy of the ~25 dicts of a Pod's
    FieldsV1 tree per create cost more than any other single step of its bookkeeping."""
    key = (manager, operation, api_version, now, tree)
    known = _ENTRIES.get(key)
    if known is None:
        loaded = marshal.loads(tree)  # a fresh tree: the entries own it
        fresh = [_create_entry(manager, operation, api_version, now, loaded)] if loaded else []
        if len(_ENTRIES) >= _ENTRIES_SIZE:
            _ENTRIES.clear()
        known = _ENTRIES[key] = (marshal.dumps(fresh), fresh)
    data, entries = known
    if entries:
        marshalled.remember(entries, data)
    return entries


def _status_fields(new: dict[str, Any], old: dict[str, Any] | None) -> set[Path]:
    """What a status write's manager owns: each top-level status field it changed, whole. Coarser than
    upstream (which owns each leaf, and list items by key), because the field-by-field walk cost a
    fifth of the CPU of a 10,000-pod rollout, where the kubelets' status writes dominate."""
    now = new.get("status")
    if not isinstance(now, dict):
        return set()
    before = (old or {}).get("status")
    before = before if isinstance(before, dict) else {}
    return {("f:status", f"f:{key}") for key, value in now.items() if before.get(key) != value}


def track_update(old: dict[str, Any] | None, new: dict[str, Any], manager: str, now: str, kind: str,
                 operation: str = "Update", subresource: str = "") -> dict[str, Any]:
    """``new`` with ``manager`` owning the fields this write changed (upstream's Update entries); a
    write through ``subresource`` (``scale``) has its own entry, as upstream records it."""
    if old is None and not _entries(new):
        # A plain create owns everything it sets: no diff needed.
        known = _tree_bytes(new, kind)
        api_version = str(new.get("apiVersion", ""))
        if known is None:
            tree = _fields_tree(_top_fields(new), kind)
            entries = [_create_entry(manager, operation, api_version, now, tree)] if tree else []
        else:
            entries = _remembered_entries(manager, operation, api_version, now, known)
        new.setdefault("metadata", {})["managedFields"] = entries
        return new
    candidates = field_set(new, kind) if old is None else \
        _changed_candidates(new, old, kind)
    changed = {p for p in candidates
               if p[-1] == "." or old is None or lookup(old, p) != lookup(new, p)}
    if old is not None:
        changed = {p for p in changed if p[-1] != "." or not lookup(old, p)[0]}
    if subresource == "status":
        changed |= _status_fields(new, old)
    entries = []
    mine: set[Path] = set()
    for entry in _entries(new):
        if entry.get("manager") == manager and entry.get("operation") == operation \
                and entry.get("subresource", "") == subresource:
            # What this manager owned and the object still has (each owned path looked up in new).
            mine = present_paths(new, entry.get("fieldsV1") or {}) \
                if entry.get("fieldsType", "FieldsV1") == "FieldsV1" else set()
            continue
        if not changed and entry.get("fieldsType", "FieldsV1") == "FieldsV1":
            tree = _normalized(entry.get("fieldsV1") or {})
            if tree:
                kept = dict(entry)
                kept["fieldsV1"] = tree
                entries.append(kept)
            continue
        owned = _owned(entry) - changed
        if owned:
            kept = dict(entry)
            kept["fieldsV1"] = to_fieldsv1(owned)
            entries.append(kept)
    mine |= changed
    if mine:
        entry = _entry(manager, operation, str(new.get("apiVersion", "")), now, mine)
        if subresource:
            entry["subresource"] = subresource
        entries.append(entry)
    new.setdefault("metadata", {})["managedFields"] = _in_upstream_order(entries)
    return new
