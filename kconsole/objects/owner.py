"""Owner-reference graph helpers: adoption, release and dependents lookup.

Controllers adopt orphans and release what no longer matches (upstream's ControllerRefManager),
and the garbage collector walks owners to dependents; both need the same rules about which
reference is the controller and when an object may be adopted. Objects are edited in place and
each editing function returns whether it changed anything, so callers write only when needed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kconsole.objects.meta import controller_of, owner_ref, owner_references, uid

Obj = dict[str, Any]


class AlreadyControlledError(ValueError):
    """Adopting an object another controller already owns (upstream refuses, too)."""


def owner_uids(o: Mapping[str, Any]) -> list[str]:
    return [ref.get("uid") or "" for ref in owner_references(o)]  # type: ignore[arg-type]


def has_owner(o: Mapping[str, Any], owner_uid: str) -> bool:
    return any(ref.get("uid") == owner_uid for ref in owner_references(o))  # type: ignore[arg-type]


def is_orphan(o: Mapping[str, Any]) -> bool:
    """No controller reference: free for a matching controller to adopt."""
    return controller_of(o) is None  # type: ignore[arg-type]


def set_controller_ref(o: Obj, owner: Obj) -> bool:
    """Makes ``owner`` the controller of ``o``; True if added, False if it already was.

    Raises :class:`AlreadyControlledError` when a different controller owns ``o``, with
    upstream's wording.
    """
    current = controller_of(o)
    if current is not None:
        if current.get("uid") == uid(owner):
            return False
        raise AlreadyControlledError(
            f"Object {(o.get('metadata') or {}).get('name', '')} is already owned by another "
            f"{current.get('kind')} controller {current.get('name')}"
        )
    refs = o.setdefault("metadata", {}).setdefault("ownerReferences", [])
    refs[:] = [r for r in refs if r.get("uid") != uid(owner)]
    refs.append(owner_ref(owner))
    return True


def remove_owner_ref(o: Obj, owner_uid: str) -> bool:
    """Drops every reference to ``owner_uid`` (release / orphaning); removes the empty list."""
    meta = o.get("metadata") or {}
    refs = meta.get("ownerReferences")
    if not refs:
        return False
    kept = [r for r in refs if r.get("uid") != owner_uid]
    if len(kept) == len(refs):
        return False
    if kept:
        meta["ownerReferences"] = kept
    else:
        del meta["ownerReferences"]
    return True


def dependents_index(objects: Iterable[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    """owner uid -> objects referencing it (any reference, controller or not)."""
    index: dict[str, list[Mapping[str, Any]]] = {}
    for o in objects:
        for ref in owner_references(o):  # type: ignore[arg-type]
            ref_uid = ref.get("uid")
            if ref_uid:
                index.setdefault(ref_uid, []).append(o)
    return index


def controlled_by(objects: Iterable[Mapping[str, Any]], owner: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The objects whose controller reference points at ``owner``."""
    owner_uid = uid(owner)  # type: ignore[arg-type]
    out = []
    for o in objects:
        ref = controller_of(o)  # type: ignore[arg-type]
        if ref is not None and ref.get("uid") == owner_uid:
            out.append(o)
    return out
