"""ControllerRevisions: the pod-template history StatefulSets and DaemonSets keep (upstream's
pkg/controller/history and the DaemonSet controller's constructHistory/snapshot).

A revision is named ``<owner>-<hash>``, carries the template's labels plus ``controller-revision-hash``
= the hash, the owner's annotations (so ``kubernetes.io/change-cause`` reaches ``kubectl rollout history``),
a controlling ownerReference, a ``revision`` number, and as ``data`` the strategic merge patch that
puts the template back: ``{"spec": {"template": {..., "$patch": "replace"}}}``. ``kubectl rollout undo``
sends that very patch; the controller then finds the equal old revision and bumps its number instead
of writing a new one.
"""

from __future__ import annotations

from typing import Any

from kconsole.client import Client, StatusError, is_already_exists, is_not_found
from kconsole.objects.meta import annotations, controller_of, deep_copy, name, namespace, owner_ref, uid
from kconsole.objects.names import pod_template_hash, without_null_timestamp

Obj = dict[str, Any]

HASH_LABEL = "controller-revision-hash"
DEFAULT_HISTORY_LIMIT = 10
#: upstream's ControllerRevisionName keeps the prefix within 223 characters.
MAX_PREFIX = 223


class HashCollision(Exception):
    """A revision of the computed name exists with other data: the owner's collisionCount must grow."""


def revision_data(owner: Obj) -> Obj:
    """getPatch: the owner's template as a patch that replaces ``spec.template`` whole."""
    template = deep_copy((owner.get("spec") or {}).get("template") or {})
    template["$patch"] = "replace"
    return {"spec": {"template": template}}


def revision_template(revision: Obj) -> Obj:
    """The pod template a revision holds (its data without the patch directive)."""
    template = dict(without_null_timestamp(((revision.get("data") or {}).get("spec") or {}).get("template") or {}))
    template.pop("$patch", None)
    return template


def revision_number(revision: Obj) -> int:
    return int(revision.get("revision") or 0)


def sort_revisions(revisions: list[Obj]) -> list[Obj]:
    """Oldest first: by revision number, then creation, then name (SortControllerRevisions)."""
    return sorted(revisions, key=lambda r: (revision_number(r), r["metadata"].get("creationTimestamp") or "", name(r)))


def next_revision(revisions: list[Obj]) -> int:
    return max((revision_number(r) for r in revisions), default=0) + 1


def collision_count(owner: Obj) -> int | None:
    count = (owner.get("status") or {}).get("collisionCount")
    return None if count is None else int(count)


def collided(owner: Obj) -> Obj:
    """The owner's status with collisionCount one higher: the next sync hashes its template anew."""
    status = deep_copy(owner.get("status") or {})
    status["collisionCount"] = (collision_count(owner) or 0) + 1
    return status


def template_hash(owner: Obj) -> str:
    """The hash of the owner's template and collisionCount (the ``controller-revision-hash`` value)."""
    return pod_template_hash((owner.get("spec") or {}).get("template") or {}, collision_count(owner))


def new_revision(owner: Obj, number: int) -> Obj:
    """NewControllerRevision for the owner's current template."""
    hash_ = template_hash(owner)
    template_labels = (((owner.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels") or {}
    meta: Obj = {"name": f"{name(owner)[:MAX_PREFIX]}-{hash_}", "namespace": namespace(owner),
                 "labels": {**template_labels, HASH_LABEL: hash_}, "ownerReferences": [owner_ref(owner)]}
    if annotations(owner):
        meta["annotations"] = dict(annotations(owner))
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": meta,
            "data": revision_data(owner), "revision": number}


def same_data(a: Obj, b: Obj) -> bool:
    """Revision data holding the same template; Go's zero ``creationTimestamp`` (``null``) equals
    absent, so revisions written before templates carried it still match."""
    if a == b:
        return True
    return revision_template({"data": a}) == revision_template({"data": b}) and \
        {k: v for k, v in a.items() if k != "spec"} == {k: v for k, v in b.items() if k != "spec"}


def equal_revision(a: Obj, b: Obj) -> bool:
    """Same template: the patches are equal (the hash label is only a shortcut upstream)."""
    return same_data(a.get("data") or {}, b.get("data") or {})


def is_owned_by(revision: Obj, owner: Obj) -> bool:
    ref = controller_of(revision)
    return ref is not None and ref.get("uid") == uid(owner)


async def create_revision(client: Client, owner: Obj, revision: Obj) -> Obj:
    """CreateControllerRevision: an existing equal revision of the same owner is as good as created;
    one that differs is a hash collision (:class:`HashCollision`)."""
    try:
        return await client.create(revision)
    except StatusError as err:
        if not is_already_exists(err):
            raise
    existing = await client.get("controllerrevisions", name(revision), namespace(revision))
    if is_owned_by(existing, owner) and equal_revision(existing, revision):
        return existing
    raise HashCollision(name(revision))


async def renumber_revision(client: Client, revision: Obj, number: int) -> Obj:
    """UpdateControllerRevision: give an old revision a new number (a rollback to it); a conflict is
    retried against the stored object."""
    current = revision
    for attempt in range(5):
        if revision_number(current) == number:
            return current
        new = deep_copy(current)
        new["revision"] = number
        try:
            return await client.update(new)
        except StatusError as err:
            if err.code != 409 or attempt == 4:
                raise
        current = await client.get("controllerrevisions", name(revision), namespace(revision))
    return current


async def delete_revision(client: Client, revision: Obj) -> None:
    try:
        await client.delete("controllerrevisions", name(revision), namespace(revision),
                            preconditions={"uid": uid(revision)})
    except StatusError as err:
        if not (is_not_found(err) or err.code == 409):
            raise


def history_limit(owner: Obj) -> int:
    limit = (owner.get("spec") or {}).get("revisionHistoryLimit")
    return DEFAULT_HISTORY_LIMIT if limit is None else max(int(limit), 0)
