"""ObjectMeta on create: what upstream's rest.BeforeCreate fills in before anything else looks.

A uid (uuid4-shaped, from the seeded rng so a seed replays the same uids), creationTimestamp,
generation 1 for kinds whose generation tracks spec changes, a name from generateName, the
request's namespace for namespaced kinds (and none for cluster-scoped ones). Updates keep their
system metadata through the storage strategy, so this plugin only acts on CREATE.
"""

from __future__ import annotations

import random
from typing import Any

from kconsole.api.registry import TABLE
from kconsole.api.stages import AdmissionContext
from kconsole.objects.names import generate_name

#: (group, resource) whose metadata.generation starts at 1 and moves with spec changes.
GENERATION_TRACKED = frozenset((s.info.group, s.info.resource) for s in TABLE if s.bump_generation)

#: The bits uuid.UUID(int=..., version=4) clears and sets: RFC 4122 variant and version 4.
_UUID4_CLEAR = ~((0xc000 << 48) | (0xf000 << 64))
_UUID4_SET = (0x8000 << 48) | (4 << 76)


def new_uid(rng: random.Random) -> str:
    """``str(uuid.UUID(int=rng.getrandbits(128), version=4))`` without building the UUID object
    (a third of the cost; every create makes one)."""
    h = "%032x" % ((rng.getrandbits(128) & _UUID4_CLEAR) | _UUID4_SET)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


class ObjectMetaDefaults:
    """uid, creationTimestamp, generation, generateName and namespace for new objects."""

    name = "ObjectMetaDefaults"
    #: ``admit`` never changes an object's spec (see APIServer._plugins).
    spec_untouched = True

    def admit(self, ctx: AdmissionContext, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        if ctx.operation != "CREATE" or ctx.subresource:
            return
        meta = obj.get("metadata")
        if not isinstance(meta, dict):
            meta = obj["metadata"] = {}
        if ctx.info.namespaced:
            if not meta.get("namespace") and ctx.namespace:
                meta["namespace"] = ctx.namespace
        else:
            meta.pop("namespace", None)
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = generate_name(meta["generateName"], ctx.rng)
        meta["uid"] = new_uid(ctx.rng)
        meta["creationTimestamp"] = ctx.now
        meta.pop("deletionTimestamp", None)
        meta.pop("deletionGracePeriodSeconds", None)
        if (ctx.info.group, ctx.info.resource) in GENERATION_TRACKED or ctx.info.custom is not None:
            meta["generation"] = 1
        else:
            meta.pop("generation", None)
