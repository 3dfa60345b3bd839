"""The TTL-after-finished controller: delete a finished Job ``ttlSecondsAfterFinished`` after it ended.

upstream's ttlafterfinished controller: a Job with the field set that is Complete or Failed expires
at its terminal condition's ``lastTransitionTime`` plus the TTL; before that the key is requeued for
the remaining time. At expiry the Job is read fresh from the API (the TTL may have changed since the
cache saw it) and deleted with Foreground propagation, so its pods go first, and a UID precondition,
so a Job re-created under the same name is not deleted for its predecessor. It records no events.
"""

from __future__ import annotations

import logging
from typing import Any

from kconsole.client import StatusError, is_not_found
from kconsole.controllers.base import Controller, ControllerContext
from kconsole.objects.meta import is_being_deleted, name, namespace, parse_time, uid

log = logging.getLogger(__name__)

Obj = dict[str, Any]


def finish_time(job: Obj) -> float | None:
    """When the Job became Complete or Failed, or None while it runs (or has no timestamp yet)."""
    for c in (job.get("status") or {}).get("conditions") or ():
        if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
            stamp = c.get("lastTransitionTime")
            return parse_time(stamp) if stamp else None
    return None


def expires_at(job: Obj) -> float | None:
    """The time the Job is due for deletion, or None if it never is (no TTL, not finished, deleting)."""
    ttl = (job.get("spec") or {}).get("ttlSecondsAfterFinished")
    if ttl is None or is_being_deleted(job):
        return None
    finished = finish_time(job)
    return None if finished is None else finished + int(ttl)


class TTLAfterFinishedController(Controller):
    name = "ttl-after-finished"
    component = ""  # upstream records no events here

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.jobs = self.informer("jobs")
        self.jobs.add_event_handler(on_add=self._job_changed, on_update=lambda old, new: self._job_changed(new))

    def _job_changed(self, job: Obj) -> None:
        if expires_at(job) is not None:
            self.enqueue(job)

    async def sync(self, key: str) -> float | None:
        cached = self.jobs.get(key)
        if cached is None:
            return None
        due = expires_at(cached)
        if due is None:
            return None
        remaining = due - self.clock.now()
        if remaining > 0:
            return remaining
        try:
            fresh = await self.client.get("jobs", name(cached), namespace(cached))
        except StatusError as err:
            if is_not_found(err):
                return None
            raise
        due = expires_at(fresh)
        if due is None or uid(fresh) != uid(cached):
            return None
        remaining = due - self.clock.now()
        if remaining > 0:
            return remaining
        try:
            await self.client.delete("jobs", name(fresh), namespace(fresh), propagation_policy="Foreground",
                                     preconditions={"uid": uid(fresh)})
        except StatusError as err:
            if not is_not_found(err):
                raise
        log.info("ttl-after-finished: deleted job %s/%s", namespace(fresh), name(fresh))
        return None
