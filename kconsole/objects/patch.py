"""JSON merge patch (RFC 7386) and JSON-aware equality.

Merge patches are what ``kubectl scale`` and ``kubectl patch --type merge`` send and what
controllers compute to change only what they own. Neither function mutates its inputs: the
result shares no mutable parts with them, so a cached object is never edited by accident.
"""

from __future__ import annotations

from typing import Any

from kconsole.objects.meta import deep_copy


def apply_merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 MergePatch: objects merge key by key, ``null`` deletes, anything else replaces."""
    if type(patch) is not dict:
        return deep_copy(patch)
    result = {k: v for k, v in target.items()} if type(target) is dict else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        elif type(value) is dict:
            result[key] = apply_merge_patch(result.get(key), value)
        else:
            result[key] = deep_copy(value)
    for key, value in result.items():
        if type(value) in (dict, list) and key not in patch:
            result[key] = deep_copy(value)
    return result


def create_merge_patch(original: Any, modified: Any) -> Any:
    """The smallest merge patch turning ``original`` into ``modified``.

    Removed keys become ``null``; lists are replaced whole (merge patches cannot address list
    items). ``apply_merge_patch(a, create_merge_patch(a, b)) == b`` holds whenever ``b``
    contains no ``null`` values, which a merge patch cannot express.
    """
    if type(original) is not dict or type(modified) is not dict:
        return deep_copy(modified)
    patch: dict[str, Any] = {}
    for key in original:
        if key not in modified:
            patch[key] = None
    for key, new in modified.items():
        if key not in original:
            patch[key] = deep_copy(new)
            continue
        old = original[key]
        if type(old) is dict and type(new) is dict:
            sub = create_merge_patch(old, new)
            if sub:
                patch[key] = sub
        elif not deep_equal(old, new):
            patch[key] = deep_copy(new)
    return patch


def deep_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values: like ``==`` but ``true`` is not ``1`` and ``false`` is not ``0``."""
    ta, tb = type(a), type(b)
    if ta is dict:
        if tb is not dict or len(a) != len(b):
            return False
        for k, v in a.items():
            if k not in b or not deep_equal(v, b[k]):
                return False
        return True
    if ta is list:
        if tb is not list or len(a) != len(b):
            return False
        return all(deep_equal(x, y) for x, y in zip(a, b))
    if (ta is bool) != (tb is bool):
        return False
    return a == b


def is_noop_merge_patch(target: Any, patch: Any) -> bool:
    """Whether applying ``patch`` would leave ``target`` unchanged (skip a pointless write)."""
    return deep_equal(apply_merge_patch(target, patch), target)
