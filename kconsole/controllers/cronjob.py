"""The CronJob controller: create Jobs on a 5-field cron schedule read against the cluster clock.

upstream's cronjob_controllerv2: each sync finds the most recent unmet schedule time since
``status.lastScheduleTime`` (or creation), honouring ``startingDeadlineSeconds`` (too late ->
``MissSchedule``; more than 100 missed -> ``TooManyMissedTimes``), applies the concurrency policy
(Allow, Forbid -> ``JobAlreadyActive``, Replace deletes the running Job), and creates the Job
named ``<cronjob>-<scheduled time in minutes>`` so a restart can never create it twice. It tracks
``status.active`` / ``lastScheduleTime`` / ``lastSuccessfulTime`` (``SawCompletedJob``), deletes
finished Jobs beyond the history limits (``SuccessfulDelete``), and requeues itself for the next
schedule time.
"""

from __future__ import annotations

import logging
import math
from datetime import datetime, timezone
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter

from kconsole.client import StatusError, is_already_exists, is_not_found
from kconsole.client.informer import index_by_owner_uid
from kconsole.controllers.base import Controller, ControllerContext
from kconsole.controllers.podcontrol import CONTROLLER_UID_INDEX, with_kind
from kconsole.objects import cronspec
from kconsole.objects.cronspec import every_seconds
from kconsole.objects.meta import (
    controller_of,
    creation_timestamp,
    deep_copy,
    format_time,
    is_being_deleted,
    name,
    namespace,
    owner_ref,
    parse_time,
    uid,
)

log = logging.getLogger(__name__)

Obj = dict[str, Any]

SCHEDULED_TIMESTAMP = "batch.kubernetes.io/cronjob-scheduled-timestamp"
#: upstream nextScheduleDelta: come back just after the schedule time.
NEXT_SCHEDULE_DELTA = 0.1
TOO_MANY_MISSED = 100


class ScheduleError(ValueError):
    """The schedule is not a standard 5-field cron expression."""


def go_duration(text: str) -> float:
    """Go's time.ParseDuration for ``@every``; a ScheduleError with Go's words."""
    try:
        return every_seconds(text)
    except ValueError as err:
        raise ScheduleError(str(err)) from None


class Schedule:
    """A parsed schedule in a time zone; times are epoch seconds. Besides 5-field expressions and the
    @hourly-style macros, robfig/cron's ``@every <duration>`` (a constant delay, at least 1 s, in
    whole seconds), which upstream's ParseStandard accepts too."""

    def __init__(self, expr: str, tz: str | None = None) -> None:
        self.every: float | None = None
        if expr.strip().startswith("@every "):
            self.every = float(max(math.floor(go_duration(expr.strip()[len("@every "):].strip())), 1))
            self.expr = expr.strip()
            self.tz = timezone.utc
            return
        why = cronspec.check(expr.strip())
        if why is not None:
            raise ScheduleError(why)
        text = cronspec.DESCRIPTORS.get(expr.strip(), expr.strip())
        if not croniter.is_valid(text):
            raise ScheduleError(f"invalid cron expression: {expr}")
        self.expr = text
        try:
            self.tz = ZoneInfo(tz) if tz else timezone.utc
        except (ZoneInfoNotFoundError, ValueError):
            raise ScheduleError(f"unknown time zone {tz}") from None

    def next(self, after: float) -> float:
        """The first schedule time strictly after ``after``."""
        if self.every is not None:
            return math.floor(after) + self.every  # ConstantDelaySchedule.Next drops the fraction
        start = datetime.fromtimestamp(after, tz=self.tz)
        return float(croniter(self.expr, start).get_next(float))

    def prev_or_at(self, t: float) -> float:
        """The latest schedule time at or before ``t``."""
        start = datetime.fromtimestamp(t + 1e-6, tz=self.tz)
        return float(croniter(self.expr, start).get_prev(float))


def job_condition(job: Obj) -> str | None:
    """``Complete`` or ``Failed`` when the Job finished."""
    for c in (job.get("status") or {}).get("conditions") or ():
        if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
            return c["type"]
    return None


def job_name(cj: Obj, scheduled: float) -> str:
    return f"{name(cj)}-{int(scheduled // 60)}"


class CronJobController(Controller):
    name = "cronjob"
    component = "cronjob-controller"
    workers = 5

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.cj_informer = self.informer("cronjobs")
        self.job_informer = self.informer("jobs", indexers={CONTROLLER_UID_INDEX: index_by_owner_uid})
        self.cj_informer.add_event_handler(**self.handlers())
        self.job_informer.add_event_handler(on_add=self._job_changed, on_update=lambda o, n: self._job_changed(n),
                                            on_delete=self._job_changed)

    def _job_changed(self, job: Obj) -> None:
        self.enqueue_owner(job, "CronJob")

    # ------------------------------------------------------------------ sync

    async def sync(self, key: str) -> float | None:
        cached = self.cj_informer.get(key)
        if cached is None:
            return None
        cj = deep_copy(with_kind(cached, "batch/v1", "CronJob"))
        jobs = [with_kind(j, "batch/v1", "Job")
                for j in self.job_informer.list_by_index(CONTROLLER_UID_INDEX, uid(cj))]
        status = cj.setdefault("status", {})
        before = deep_copy(status)
        requeue = await self._sync(cj, status, jobs)
        await self._delete_finished(cj, status, jobs)
        if status != before:
            await self._write_status(cj, status)
        return requeue

    async def _sync(self, cj: Obj, status: Obj, jobs: list[Obj]) -> float | None:
        now = self.clock.now()
        children = {uid(j) for j in jobs}
        for job in jobs:
            active = _in_active(status, uid(job))
            finished = job_condition(job)
            if not active and finished is None:
                fresh = await self._fresh_status(cj)
                if _in_active(fresh, uid(job)):
                    status["active"] = deep_copy(fresh.get("active") or [])
                    continue
                self._event(cj, "Warning", "UnexpectedJob",
                            f"Saw a job that the controller did not create or forgot: {name(job)}")
            elif active and finished is not None:
                _remove_active(status, uid(job))
                self._event(cj, "Normal", "SawCompletedJob", f"Saw completed job: {name(job)}, condition: {finished}")
            if finished == "Complete":
                done = (job.get("status") or {}).get("completionTime")
                last = status.get("lastSuccessfulTime")
                if done and (not last or parse_time(done) > parse_time(last)):
                    status["lastSuccessfulTime"] = done
        for ref in list(status.get("active") or []):
            if ref.get("uid") in children:
                continue
            try:
                await self.client.get("jobs", ref.get("name", ""), ref.get("namespace") or namespace(cj))
            except StatusError as err:
                if not is_not_found(err):
                    raise
                self._event(cj, "Normal", "MissingJob", f"Active job went missing: {ref.get('name')}")
                _remove_active(status, ref.get("uid", ""))
        if is_being_deleted(cj):
            return None
        spec = cj.get("spec") or {}
        if spec.get("suspend"):
            return None
        try:
            sched = Schedule(str(spec.get("schedule", "")), spec.get("timeZone"))
        except ScheduleError as err:
            if "time zone" in str(err):
                self._event(cj, "Warning", "UnknownTimeZone", f"invalid timeZone: {spec.get('timeZone')!r}: {err}")
            else:
                self._event(cj, "Warning", "UnparseableSchedule", f"unparseable schedule: {spec.get('schedule')!r} : {err}")
            return None
        scheduled, missed = self._most_recent(cj, status, now, sched, with_deadline=True)
        if missed > TOO_MANY_MISSED:
            self._event(cj, "Warning", "TooManyMissedTimes",
                        f"too many missed start times: {missed}. Set or decrease .spec.startingDeadlineSeconds "
                        "or check clock skew")
        if scheduled is None:
            return self._next_in(cj, status, now, sched)
        deadline = spec.get("startingDeadlineSeconds")
        if deadline is not None and scheduled + int(deadline) < now:
            stamp = datetime.fromtimestamp(scheduled, tz=timezone.utc).strftime("%a, %d %b %Y %H:%M:%S +0000")
            self._event(cj, "Warning", "MissSchedule", f"Missed scheduled time to start a job: {stamp}")
            return self._next_in(cj, status, now, sched)
        wanted = job_name(cj, scheduled)
        if (any(ref.get("name") == wanted for ref in status.get("active") or [])
                or (status.get("lastScheduleTime") and parse_time(status["lastScheduleTime"]) == scheduled)):
            return self._next_in(cj, status, now, sched)
        policy = spec.get("concurrencyPolicy") or "Allow"
        if policy == "Forbid" and status.get("active"):
            self._event(cj, "Normal", "JobAlreadyActive",
                        "Not starting job because prior execution is running and concurrency policy is Forbid")
            return self._next_in(cj, status, now, sched)
        if policy == "Replace":
            for ref in list(status.get("active") or []):
                try:
                    job = await self.client.get("jobs", ref["name"], ref.get("namespace") or namespace(cj))
                except StatusError as err:
                    self._event(cj, "Warning", "FailedGet", f"Get job: {err.message}")
                    raise
                await self._delete_job(cj, status, job)
        created = await self._create_job(cj, status, scheduled)
        if created is None:
            return None
        status.setdefault("active", []).append(_reference(created))
        status["lastScheduleTime"] = format_time(scheduled)
        return self._next_in(cj, status, now, sched)

    async def _fresh_status(self, cj: Obj) -> Obj:
        try:
            return (await self.client.get("cronjobs", name(cj), namespace(cj))).get("status") or {}
        except StatusError:
            return {}

    def _most_recent(self, cj: Obj, status: Obj, now: float, sched: Schedule,
                     with_deadline: bool) -> tuple[float | None, int]:
        """(the most recent unmet schedule time or None, how many were missed)."""
        earliest = creation_timestamp(cj) or now
        if status.get("lastScheduleTime"):
            earliest = parse_time(status["lastScheduleTime"])
        deadline = (cj.get("spec") or {}).get("startingDeadlineSeconds")
        if with_deadline and deadline is not None:
            earliest = max(earliest, now - int(deadline))
        t1 = sched.next(earliest)
        if now < t1:
            return None, 0
        t2 = sched.next(t1)
        if now < t2:
            return t1, 1
        between = round(t2 - t1)
        if between < 1:
            return None, 0
        missed = int((now - t1) // between) + 1
        if sched.every is not None:  # no calendar to look back on: upstream's t1 + (missed - 1) steps
            return t1 + (missed - 1) * between, missed
        return sched.prev_or_at(now), missed

    def _next_in(self, cj: Obj, status: Obj, now: float, sched: Schedule) -> float:
        """Seconds until the next schedule time after the most recent one (nextScheduleTimeDuration)."""
        recent, _ = self._most_recent(cj, status, now, sched, with_deadline=False)
        base = recent if recent is not None else (
            parse_time(status["lastScheduleTime"]) if status.get("lastScheduleTime") else (creation_timestamp(cj) or now))
        nxt = sched.next(base)
        return max(nxt - now, 0.0) + NEXT_SCHEDULE_DELTA

    async def _create_job(self, cj: Obj, status: Obj, scheduled: float) -> Obj | None:
        template = (cj.get("spec") or {}).get("jobTemplate") or {}
        tmeta = template.get("metadata") or {}
        annotations = dict(tmeta.get("annotations") or {})
        tz = (cj.get("spec") or {}).get("timeZone")
        when = datetime.fromtimestamp(scheduled, tz=ZoneInfo(tz) if tz else timezone.utc)
        annotations[SCHEDULED_TIMESTAMP] = when.isoformat().replace("+00:00", "Z")
        meta: Obj = {"name": job_name(cj, scheduled), "namespace": namespace(cj), "annotations": annotations,
                     "ownerReferences": [owner_ref(cj)]}
        if tmeta.get("labels"):
            meta["labels"] = dict(tmeta["labels"])
        job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": deep_copy(template.get("spec") or {})}
        try:
            created = await self.client.create(job)
        except StatusError as err:
            if err.code == 403 and "being terminated" in (err.message or ""):
                return None
            if not is_already_exists(err):
                self._event(cj, "Warning", "FailedCreate", f"Error creating job: {err.message}")
                raise
            existing = await self.client.get("jobs", meta["name"], namespace(cj))
            ref = controller_of(existing)
            if ref is None or ref.get("uid") != uid(cj) or _in_active(status, uid(existing)):
                return None
            return existing
        self._event(cj, "Normal", "SuccessfulCreate", f"Created job {name(created)}")
        return created

    async def _delete_job(self, cj: Obj, status: Obj, job: Obj) -> bool:
        try:
            await self.client.delete("jobs", name(job), namespace(job), propagation_policy="Background")
        except StatusError as err:
            if not is_not_found(err):
                self._event(cj, "Warning", "FailedDelete", f"Deleted job: {err.message}")
                return False
        _remove_active(status, uid(job))
        self._event(cj, "Normal", "SuccessfulDelete", f"Deleted job {name(job)}")
        return True

    # ------------------------------------------------------------------ history

    async def _delete_finished(self, cj: Obj, status: Obj, jobs: list[Obj]) -> None:
        spec = cj.get("spec") or {}
        for cond, limit in (("Complete", spec.get("successfulJobsHistoryLimit")),
                            ("Failed", spec.get("failedJobsHistoryLimit"))):
            if limit is None:
                continue
            finished = [j for j in jobs if job_condition(j) == cond and not is_being_deleted(j)]
            extra = len(finished) - int(limit)
            if extra <= 0:
                continue
            finished.sort(key=_start_time_key)
            for job in finished[:extra]:
                await self._delete_job(cj, status, job)

    async def _write_status(self, cj: Obj, status: Obj) -> None:
        new = deep_copy(cj)
        if not status.get("active"):
            status.pop("active", None)
        new["status"] = status
        try:
            await self.client.update_status(new)
        except StatusError as err:
            if not is_not_found(err):
                raise


def _start_time_key(job: Obj) -> tuple[int, float, str]:
    """byJobStartTime: jobs that never started go last; then by start time and name."""
    started = (job.get("status") or {}).get("startTime")
    return (1, 0.0, name(job)) if not started else (0, parse_time(started), name(job))


def _in_active(status: Obj, job_uid: str) -> bool:
    return any(ref.get("uid") == job_uid for ref in status.get("active") or ())


def _remove_active(status: Obj, job_uid: str) -> None:
    status["active"] = [ref for ref in status.get("active") or () if ref.get("uid") != job_uid]


def _reference(job: Obj) -> Obj:
    return {"kind": "Job", "namespace": namespace(job), "name": name(job), "uid": uid(job),
            "apiVersion": "batch/v1", "resourceVersion": job["metadata"].get("resourceVersion", "")}

