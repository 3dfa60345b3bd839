"""The Job controller: run pods until ``completions`` of them succeed, or give up.

upstream's pkg/controller/job for NonIndexed and Indexed jobs:

* at most ``parallelism`` pods run, never more than the completions still missing;
* pods carry the ``batch.kubernetes.io/job-tracking`` finalizer: a finished pod is first recorded
  in ``status.uncountedTerminatedPods``, then its finalizer is removed, then it moves to
  ``succeeded``/``failed`` — so each pod is counted exactly once even if it is deleted or the
  controller restarts in between;
* after a failure, new pods wait 10 s, 20 s, 40 s, ... (at most 360 s) since the last failure;
* more failures than ``backoffLimit`` -> Failed/BackoffLimitExceeded; running longer than
  ``activeDeadlineSeconds`` -> Failed/DeadlineExceeded; active pods are deleted first
  (FailureTarget), the terminal condition follows once none is left;
* enough successes -> SuccessCriteriaMet, then Complete (reason CompletionsReached) with
  ``completionTime``; event ``Completed`` "Job completed";
* ``suspend`` deletes active pods and sets the Suspended condition; resuming restarts the clock;
* ``podFailurePolicy``: the first rule matching a failed pod (a container's non-zero exit code In /
  NotIn ``onExitCodes``, or a pod condition in ``onPodConditions``) decides: FailJob fails the Job
  (reason PodFailurePolicy), Ignore neither counts the failure nor backs off, Count counts it as usual;
* ``backoffLimitPerIndex`` (Indexed): each index retries on its own back-off; a pod carries its
  index's failures so far (``batch.kubernetes.io/job-index-failure-count``), and an index failing
  more often than the limit joins ``status.failedIndexes`` and is not retried. More failed indexes
  than ``maxFailedIndexes`` fails the Job at once (MaxFailedIndexesExceeded); otherwise it fails
  (FailedIndexes) once every index has succeeded or failed;
* ``successPolicy`` (Indexed): the first rule met (``succeededIndexes`` all succeeded, or
  ``succeededCount`` of them) makes the Job SuccessCriteriaMet, reason SuccessPolicy, "Matched rules
  at index N"; its remaining pods are deleted, then it is Complete with the same reason.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from kconsole.client import StatusError, is_not_found
from kconsole.controllers.base import Controller, ControllerContext
from kconsole.controllers.expectations import ExpectationHandlers, Expectations
from kconsole.controllers.podcontrol import (
    CLAIM_INDEXERS,
    CONTROLLER_UID_INDEX,
    claim,
    create_pod,
    delete_pod,
    owned_and_orphans,
    owner_key_of,
    pod_from_template,
    rank_for_deletion,
    selector_of,
    slow_start_batch,
    with_kind,
)
from kconsole.objects.meta import (
    annotations,
    controller_of,
    deep_copy,
    format_time,
    is_being_deleted,
    name,
    namespace,
    object_key,
    parse_time,
    uid,
)
from kconsole.objects.pod import is_pod_ready
from kconsole.objects.selectors import SelectorError

log = logging.getLogger(__name__)

Obj = dict[str, Any]

TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
INDEX_FAILURE_COUNT = "batch.kubernetes.io/job-index-failure-count"
#: upstream DefaultJobPodFailureBackOff, MaxJobPodFailureBackOff, MaxPodCreateDeletePerSync.
BACKOFF_BASE = 10.0
BACKOFF_MAX = 360.0
MAX_PER_SYNC = 500
MAX_UNCOUNTED = 500


def job_finished(job: Obj) -> bool:
    return any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
               for c in (job.get("status") or {}).get("conditions") or ())


def _cond(job_status: Obj, cond_type: str) -> Obj | None:
    for c in job_status.get("conditions") or ():
        if c.get("type") == cond_type:
            return c
    return None


def _ensure_cond(status: Obj, cond_type: str, cond_status: str, reason: str, message: str, now: float) -> bool:
    """ensureJobConditionStatus: add or update; True when something changed."""
    stamp = format_time(now)
    current = _cond(status, cond_type)
    if current is None:
        if cond_status == "False" and cond_type == "Suspended":
            return False
        status.setdefault("conditions", []).append({
            "type": cond_type, "status": cond_status, "lastProbeTime": stamp, "lastTransitionTime": stamp,
            "reason": reason, "message": message})
        return True
    if current.get("status") == cond_status and current.get("reason") == reason and current.get("message") == message:
        return False
    if current.get("status") != cond_status:
        current["lastTransitionTime"] = stamp
    current.update({"status": cond_status, "reason": reason, "message": message, "lastProbeTime": stamp})
    return True


def _finish_time(pod: Obj, now: float) -> float:
    """When a pod finished: its containers' finishedAt, else its deletion, else now."""
    latest = None
    for cs in (pod.get("status") or {}).get("containerStatuses") or ():
        finished = ((cs.get("state") or {}).get("terminated") or {}).get("finishedAt")
        if finished:
            t = parse_time(finished)
            latest = t if latest is None else max(latest, t)
    if latest is not None:
        return latest
    deleted = pod["metadata"].get("deletionTimestamp")
    return parse_time(deleted) if deleted else now


def _phase(pod: Obj) -> str:
    return (pod.get("status") or {}).get("phase") or "Pending"


def _is_finished(pod: Obj) -> bool:
    """Terminal, or being deleted (a deleted pod that did not succeed counts as failed)."""
    return _phase(pod) in ("Succeeded", "Failed") or is_being_deleted(pod)


def _succeeded(pod: Obj) -> bool:
    return _phase(pod) == "Succeeded"


def _exit_code_matches(policy_rule: Obj, pod: Obj) -> Obj | None:
    """matchOnExitCodes: a terminated container (regular, then init) with a non-zero exit code the
    requirement's operator accepts."""
    req = policy_rule.get("onExitCodes") or {}
    values = set(req.get("values") or ())
    wanted = req.get("containerName")
    status = pod.get("status") or {}
    for statuses in (status.get("containerStatuses") or (), status.get("initContainerStatuses") or ()):
        for cs in statuses:
            code = ((cs.get("state") or {}).get("terminated") or {}).get("exitCode")
            if code is None or code == 0 or (wanted is not None and cs.get("name") != wanted):
                continue
            if (code in values) == (req.get("operator") == "In"):
                return cs
    return None


def _condition_matches(policy_rule: Obj, pod: Obj) -> Obj | None:
    """matchOnPodConditions: a pod condition of a listed type and status (status defaults to True)."""
    for cond in (pod.get("status") or {}).get("conditions") or ():
        for pattern in policy_rule.get("onPodConditions") or ():
            if cond.get("type") == pattern.get("type") and cond.get("status") == pattern.get("status", "True"):
                return cond
    return None


def match_pod_failure_policy(policy: Obj | None, pod: Obj) -> tuple[str | None, bool]:
    """matchPodFailurePolicy for a failed pod: (the FailJob message or None, whether the failure
    counts against backoffLimit). The first matching rule wins; no match counts as usual."""
    for index, rule in enumerate((policy or {}).get("rules") or ()):
        action = rule.get("action")
        if rule.get("onExitCodes") is not None:
            cs = _exit_code_matches(rule, pod)
            if cs is None:
                continue
            what = (f"Container {cs.get('name')} for pod {namespace(pod)}/{name(pod)} failed with exit code "
                    f"{cs['state']['terminated']['exitCode']}")
        elif rule.get("onPodConditions") is not None:
            cond = _condition_matches(rule, pod)
            if cond is None:
                continue
            what = f"Pod {namespace(pod)}/{name(pod)} has condition {cond.get('type')}"
        else:
            continue
        if action == "Ignore":
            return None, False
        if action == "FailJob":
            return f"{what} matching FailJob rule at index {index}", True
        if action in ("Count", "FailIndex"):
            return None, True
    return None, True


def _backoff_delay(failures: int) -> float:
    """10 s doubling per failure after the first, at most 360 s."""
    delay = BACKOFF_BASE
    for _ in range(1, failures):
        delay *= 2
        if delay >= BACKOFF_MAX:
            return BACKOFF_MAX
    return delay


def _index_of(pod: Obj) -> int | None:
    idx = annotations(pod).get(COMPLETION_INDEX)
    return int(idx) if idx is not None and idx.isdigit() else None


def success_policy_match(policy: Obj | None, completions: int, succeeded: set[int]) -> str | None:
    """matchSuccessPolicy: the message for the first rule the succeeded indexes meet, or None."""
    if not policy or not succeeded:
        return None
    for index, rule in enumerate(policy.get("rules") or ()):
        wanted = rule.get("succeededIndexes")
        required = ({i for i in _parse_indexes(wanted) if i < completions} if wanted is not None
                    else set(range(completions)))
        if not required:
            continue
        matched = len(required & succeeded)
        count = rule.get("succeededCount")
        if (count is None and matched == len(required)) or (count is not None and matched >= int(count)):
            return f"Matched rules at index {index}"
    return None


def _per_index_limit(job: Obj) -> int | None:
    spec = job["spec"]
    if spec.get("completionMode") != "Indexed" or spec.get("backoffLimitPerIndex") is None:
        return None
    return int(spec["backoffLimitPerIndex"])


def index_failures(pods: list[Obj], policy: Obj | None, now: float) -> dict[int, tuple[int, float]]:
    """Per index: (failures counted so far, when the latest of them ended), from the failed pods."""
    out: dict[int, tuple[int, float]] = {}
    for pod in pods:
        idx = _index_of(pod)
        if idx is None or _phase(pod) != "Failed" or not match_pod_failure_policy(policy, pod)[1]:
            continue
        try:
            count = int(annotations(pod).get(INDEX_FAILURE_COUNT) or 0) + 1
        except ValueError:
            count = 1
        seen = out.get(idx)
        ended = _finish_time(pod, now)
        if seen is None or count > seen[0]:
            out[idx] = (count, ended if seen is None else max(ended, seen[1]))
    return out


@dataclass
class _Backoff:
    failures_after_success: int = 0
    last_failure: float | None = None

    def remaining(self, now: float) -> float:
        if self.failures_after_success == 0 or self.last_failure is None:
            return 0.0
        delay = _backoff_delay(self.failures_after_success)
        elapsed = now - self.last_failure
        return 0.0 if delay < elapsed else delay - elapsed


class JobController(ExpectationHandlers, Controller):
    name = "job"
    component = "job-controller"
    workers = 5

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.expectations = Expectations(ctx.clock)
        self.backoffs: dict[str, _Backoff] = {}
        self.job_informer = self.informer("jobs")
        self.pod_informer = self.informer("pods", indexers=CLAIM_INDEXERS)
        self.job_informer.add_event_handler(on_add=self.enqueue, on_update=lambda old, new: self.enqueue(new),
                                            on_delete=self._job_deleted)
        self.pod_informer.add_event_handler(on_add=self._pod_added, on_update=self._pod_updated,
                                            on_delete=self._pod_deleted)

    # ------------------------------------------------------------------ handlers

    def _job_deleted(self, job: Obj) -> None:
        key = object_key(job)
        self.expectations.forget(key)
        self.backoffs.pop(key, None)
        self.queue.add(key)

    def _owner_key(self, pod: Obj) -> str | None:
        return owner_key_of(pod, "Job")

    def _pod_added(self, pod: Obj) -> None:
        key = self._owner_key(pod)
        if key is None:
            return
        self._owned_pod_seen(key, pod)

    def _pod_updated(self, old: Obj, cur: Obj) -> None:
        if old["metadata"].get("resourceVersion") == cur["metadata"].get("resourceVersion"):
            return
        key = self._owner_key(cur)
        old_key = self._owner_key(old)
        if old_key is not None and old_key != key:
            self.queue.add(old_key)
        if key is None:
            return
        if is_being_deleted(cur) and not is_being_deleted(old):
            self.expectations.deletion_observed(key, object_key(cur))
        self.queue.add(key)

    # ------------------------------------------------------------------ sync

    async def sync(self, key: str) -> float | None:
        cached = self.job_informer.get(key)
        if cached is None:
            await self._release_orphaned_pods(key)
            return None
        job = deep_copy(with_kind(cached, "batch/v1", "Job"))
        try:
            selector = selector_of(job)
        except SelectorError as err:
            log.error("job %s: invalid selector: %s", key, err)
            return None
        pods = await claim(self.client, job, self._candidates(job), selector, "pods")
        if job_finished(job):
            await self._remove_finalizers([p for p in pods if TRACKING_FINALIZER in (p["metadata"].get("finalizers") or [])])
            return None
        now = self.clock.now()
        spec = job["spec"]
        status: Obj = deep_copy(job.get("status") or {})
        suspended = bool(spec.get("suspend"))
        if not status.get("startTime") and not suspended:
            status["startTime"] = format_time(now)

        uncounted = status.get("uncountedTerminatedPods") or {}
        counted_ids = set(uncounted.get("succeeded") or []) | set(uncounted.get("failed") or [])
        newly_finished = [p for p in pods if _is_finished(p) and TRACKING_FINALIZER in (p["metadata"].get("finalizers") or [])
                          and uid(p) not in counted_ids]
        active_pods = [p for p in pods if not _is_finished(p)]
        terminating = sum(1 for p in pods if is_being_deleted(p) and _phase(p) not in ("Succeeded", "Failed"))
        new_succeeded = [p for p in newly_finished if _succeeded(p)][:MAX_UNCOUNTED]
        new_failed = [p for p in newly_finished if not _succeeded(p)][:MAX_UNCOUNTED]
        policy = spec.get("podFailurePolicy")
        ignored = [p for p in new_failed if policy and not match_pod_failure_policy(policy, p)[1]]
        ignored_ids = {uid(p) for p in ignored}
        if ignored:
            new_failed = [p for p in new_failed if uid(p) not in ignored_ids]
        self._note_backoff(key, [p for p in newly_finished if uid(p) not in ignored_ids], now)
        succeeded = int(status.get("succeeded") or 0) + len(uncounted.get("succeeded") or []) + len(new_succeeded)
        failed = int(status.get("failed") or 0) + len(uncounted.get("failed") or []) + len(new_failed)
        per_index = _per_index_limit(job)
        fails: dict[int, tuple[int, float]] = {}
        failed_indexes: set[int] = set()
        if per_index is not None:
            fails = index_failures(pods, policy, now)
            failed_indexes = _parse_indexes(status.get("failedIndexes") or "") | {
                i for i, (count, _) in fails.items() if count > per_index}
            status["failedIndexes"] = _format_indexes(failed_indexes)
        max_failed = spec.get("maxFailedIndexes")

        requeue: float | None = None
        finished: tuple[str, str, str] | None = None  # (type, reason, message)
        if _cond(status, "FailureTarget") is not None and _cond(status, "FailureTarget").get("status") == "True":
            ft = _cond(status, "FailureTarget")
            finished = ("Failed", ft.get("reason", ""), ft.get("message", ""))
        elif policy and (fail_job := self._fail_job_message(policy, pods)) is not None:
            finished = ("Failed", "PodFailurePolicy", fail_job)
        elif per_index is not None and max_failed is not None and len(failed_indexes) > int(max_failed):
            finished = ("Failed", "MaxFailedIndexesExceeded",
                        "Job has exceeded the specified maximal number of failed indexes")
        elif (met := _cond(status, "SuccessCriteriaMet")) is not None:
            finished = ("Complete", met.get("reason") or "CompletionsReached",
                        met.get("message") or "Reached expected number of succeeded pods")
        elif failed > int(spec.get("backoffLimit", 6)) or self._past_backoff_on_failure(job, pods):
            finished = ("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit")
        elif self._past_deadline(job, status, now):
            finished = ("Failed", "DeadlineExceeded", "Job was active longer than specified deadline")
        elif spec.get("completionMode") == "Indexed" and spec.get("successPolicy") and (
                matched := success_policy_match(spec["successPolicy"], int(spec.get("completions") or 0),
                                                self._completed_indexes(job))) is not None:
            finished = ("Complete", "SuccessPolicy", matched)
        elif spec.get("activeDeadlineSeconds") is not None and not suspended and status.get("startTime"):
            requeue = parse_time(status["startTime"]) + int(spec["activeDeadlineSeconds"]) - now

        active = len(active_pods)
        if finished is not None:
            if finished[0] == "Failed":
                _ensure_cond(status, "FailureTarget", "True", finished[1], finished[2], now)
            else:
                _ensure_cond(status, "SuccessCriteriaMet", "True", finished[1], finished[2], now)
            for pod in active_pods:
                if await delete_pod(self.client, self.recorder, job, pod):
                    terminating += 1
            active = 0
        else:
            manage_called = False
            if self.expectations.satisfied(key) and not is_being_deleted(job):
                active, wait = await self._manage(job, key, active_pods, succeeded, terminating,
                                                  fails, failed_indexes)
                manage_called = True
                if wait:
                    requeue = wait if requeue is None else min(requeue, wait)
            completions = spec.get("completions")
            complete = (succeeded > 0 and active == 0) if completions is None else (
                succeeded >= int(completions) and active == 0)
            if complete:
                finished = ("Complete", "CompletionsReached", "Reached expected number of succeeded pods")
                _ensure_cond(status, "SuccessCriteriaMet", "True", finished[1], finished[2], now)
            elif failed_indexes and active == 0 and len(
                    self._completed_indexes(job) | failed_indexes) >= int(completions or 0):
                finished = ("Failed", "FailedIndexes", "Job has failed indexes")
                _ensure_cond(status, "FailureTarget", "True", finished[1], finished[2], now)
            elif manage_called:
                if suspended:
                    if _ensure_cond(status, "Suspended", "True", "JobSuspended", "Job suspended", now):
                        self._event(job, "Normal", "Suspended", "Job suspended")
                elif _ensure_cond(status, "Suspended", "False", "JobResumed", "Job resumed", now):
                    self._event(job, "Normal", "Resumed", "Job resumed")
                    status["startTime"] = format_time(now)

        # Terminal condition once nothing is running or terminating any more.
        terminal = None
        if finished is not None and active == 0 and terminating == 0:
            terminal = finished
            _ensure_cond(status, terminal[0], "True", terminal[1], terminal[2], now)
            if terminal[0] == "Complete":
                status["completionTime"] = format_time(now)

        status["active"] = active
        status["ready"] = sum(1 for p in active_pods if is_pod_ready(p))
        status["terminating"] = terminating
        await self._remove_finalizers(ignored)
        job = await self._track(job, status, new_succeeded, new_failed)
        if terminal is not None:
            if terminal[0] == "Complete":
                self._event(job, "Normal", "Completed", "Job completed")
            else:
                self._event(job, "Warning", terminal[1], terminal[2])
        return requeue if requeue is not None and requeue > 0 else (0.001 if requeue is not None else None)

    @staticmethod
    def _fail_job_message(policy: Obj, pods: list[Obj]) -> str | None:
        """getFailJobMessage: the first failed pod a FailJob rule matches."""
        for pod in pods:
            if _phase(pod) == "Failed":
                message, _ = match_pod_failure_policy(policy, pod)
                if message is not None:
                    return message
        return None

    def _candidates(self, job: Obj) -> list[Obj]:
        return owned_and_orphans(self.pod_informer, job)

    def _note_backoff(self, key: str, finished: list[Obj], now: float) -> None:
        record = self.backoffs.setdefault(key, _Backoff())
        for pod in sorted(finished, key=lambda p: _finish_time(p, now)):
            if _succeeded(pod):
                record.failures_after_success = 0
                record.last_failure = None
            else:
                record.failures_after_success += 1
                record.last_failure = _finish_time(pod, now)

    @staticmethod
    def _past_deadline(job: Obj, status: Obj, now: float) -> bool:
        deadline = job["spec"].get("activeDeadlineSeconds")
        if deadline is None or not status.get("startTime") or job["spec"].get("suspend"):
            return False
        return now - parse_time(status["startTime"]) >= int(deadline)

    @staticmethod
    def _past_backoff_on_failure(job: Obj, pods: list[Obj]) -> bool:
        """restartPolicy OnFailure: container restarts count against backoffLimit."""
        template_spec = (job["spec"].get("template") or {}).get("spec") or {}
        if template_spec.get("restartPolicy") != "OnFailure":
            return False
        restarts = 0
        for pod in pods:
            if _phase(pod) in ("Running", "Pending"):
                for cs in (pod.get("status") or {}).get("containerStatuses") or ():
                    restarts += int(cs.get("restartCount") or 0)
        limit = int(job["spec"].get("backoffLimit", 6))
        return restarts > 0 and restarts >= limit if limit else restarts > 0

    async def _manage(self, job: Obj, key: str, active_pods: list[Obj], succeeded: int, terminating: int,
                      fails: dict[int, tuple[int, float]], failed_indexes: set[int]) -> tuple[int, float]:
        """manageJob: (active pods after this sync, seconds to wait for back-off)."""
        spec = job["spec"]
        active = len(active_pods)
        if spec.get("suspend"):
            removed = await self._delete(job, key, active_pods)
            return active - removed, 0.0
        parallelism = int(spec.get("parallelism", 1))
        completions = spec.get("completions")
        if completions is None:
            want = active if succeeded > 0 else parallelism
        else:
            want = max(0, min(int(completions) - succeeded - len(failed_indexes), parallelism))
        extra = active - want
        if extra > 0:
            victims = rank_for_deletion(active_pods, active_pods, self.clock.now())[:min(extra, MAX_PER_SYNC)]
            removed = await self._delete(job, key, victims)
            return active - removed, 0.0
        if spec.get("podReplacementPolicy") != "Failed":
            terminating = 0
        diff = want - terminating - active
        if diff <= 0:
            return active, 0.0
        now = self.clock.now()
        wait = 0.0
        if _per_index_limit(job) is None:
            wait = self.backoffs.get(key, _Backoff()).remaining(now)
            if wait > 0:
                return active, wait
        diff = min(diff, MAX_PER_SYNC)
        indexes = self._free_indexes(job, active_pods, succeeded, None if fails else diff, failed_indexes)
        if indexes is not None and fails:
            # Per-index back-off: an index waits 10 s, 20 s, ... after its own latest failure.
            due = {i: fails[i][1] + _backoff_delay(fails[i][0]) - now for i in indexes if i in fails}
            waiting = [d for d in due.values() if d > 0]
            wait = min(waiting) if waiting else 0.0
            indexes = [i for i in indexes if due.get(i, 0.0) <= 0][:diff]
        if indexes is not None:
            diff = len(indexes)
            if diff == 0:
                return active, wait
        self.expectations.expect_creations(key, diff)
        template = deep_copy(spec.get("template") or {})
        finalizers = template.setdefault("metadata", {}).setdefault("finalizers", [])
        if TRACKING_FINALIZER not in finalizers:
            finalizers.append(TRACKING_FINALIZER)

        async def create(i: int) -> None:
            if indexes is None:
                pod = pod_from_template(template, job, generate_name=f"{name(job)}-")
            else:
                idx = indexes[i]
                pod = pod_from_template(template, job, generate_name=f"{name(job)}-{idx}-")
                pod["metadata"].setdefault("annotations", {})[COMPLETION_INDEX] = str(idx)
                if _per_index_limit(job) is not None:
                    pod["metadata"]["annotations"][INDEX_FAILURE_COUNT] = str(fails.get(idx, (0, 0.0))[0])
                pod["metadata"].setdefault("labels", {})[COMPLETION_INDEX] = str(idx)
                pod["spec"]["hostname"] = f"{name(job)}-{idx}"
                for c in pod["spec"].get("containers") or []:
                    c.setdefault("env", []).append({"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
                        "fieldPath": f"metadata.annotations['{COMPLETION_INDEX}']"}}})
            await create_pod(self.client, self.recorder, job, pod)

        ok, err = await slow_start_batch(diff, create)
        if ok < diff:
            self.expectations.lower_creations(key, diff - ok)
        if err is not None:
            raise err
        return active + ok, wait

    def _completed_indexes(self, job: Obj) -> set[int]:
        done = _parse_indexes((job.get("status") or {}).get("completedIndexes") or "")
        for pod in self.pod_informer.list_by_index(CONTROLLER_UID_INDEX, uid(job)):
            if _succeeded(pod):
                idx = _index_of(pod)
                if idx is not None:
                    done.add(idx)
        return done

    def _free_indexes(self, job: Obj, active_pods: list[Obj], succeeded: int, n: int | None,
                      failed_indexes: set[int]) -> list[int] | None:
        """Indexed jobs: the lowest indexes neither succeeded, failed for good nor running (all of
        them when ``n`` is None)."""
        if job["spec"].get("completionMode") != "Indexed":
            return None
        done = self._completed_indexes(job) | failed_indexes
        busy = {int(annotations(p).get(COMPLETION_INDEX, "-1")) for p in active_pods}
        free = [i for i in range(int(job["spec"].get("completions") or 0)) if i not in done and i not in busy]
        return free if n is None else free[:n]

    async def _delete(self, job: Obj, key: str, pods: list[Obj]) -> int:
        self.expectations.expect_deletions(key, [object_key(p) for p in pods])
        removed = 0
        for pod in pods:
            try:
                gone = await delete_pod(self.client, self.recorder, job, pod)
            except StatusError:
                self.expectations.deletion_observed(key, object_key(pod))
                raise
            if not gone:
                self.expectations.deletion_observed(key, object_key(pod))
            removed += 1
        return removed

    # ------------------------------------------------------------------ exactly-once counting

    async def _track(self, job: Obj, status: Obj, new_succeeded: list[Obj], new_failed: list[Obj]) -> Obj:
        """Record new finishers as uncounted, drop their finalizers, then count them."""
        uncounted = status.setdefault("uncountedTerminatedPods", {})
        for field_name, pods in (("succeeded", new_succeeded), ("failed", new_failed)):
            if pods:
                uncounted[field_name] = list(uncounted.get(field_name) or []) + [uid(p) for p in pods]
        if new_succeeded or new_failed:
            job = await self._write_status(job, status)
            status = deep_copy(job["status"])
            uncounted = status.setdefault("uncountedTerminatedPods", {})
        pending = set(uncounted.get("succeeded") or []) | set(uncounted.get("failed") or [])
        if pending:
            by_uid = {uid(p): p for p in self.pod_informer.list_by_index(CONTROLLER_UID_INDEX, uid(job))}
            await self._remove_finalizers([by_uid[u] for u in pending if u in by_uid
                                           and TRACKING_FINALIZER in (by_uid[u]["metadata"].get("finalizers") or [])])
            status["succeeded"] = int(status.get("succeeded") or 0) + len(uncounted.get("succeeded") or [])
            status["failed"] = int(status.get("failed") or 0) + len(uncounted.get("failed") or [])
            if job["spec"].get("completionMode") == "Indexed":
                done = _parse_indexes(status.get("completedIndexes") or "")
                for u in uncounted.get("succeeded") or []:
                    idx = annotations(by_uid.get(u, {})).get(COMPLETION_INDEX)
                    if idx is not None and idx.isdigit():
                        done.add(int(idx))
                if done:
                    status["completedIndexes"] = _format_indexes(done)
            status["uncountedTerminatedPods"] = {}
        return await self._write_status(job, status)

    async def _remove_finalizers(self, pods: list[Obj]) -> None:
        for pod in pods:
            left = [f for f in pod["metadata"].get("finalizers") or [] if f != TRACKING_FINALIZER]
            patch = {"metadata": {"uid": uid(pod), "finalizers": left or None}}
            try:
                await self.client.patch("pods", name(pod), patch, namespace(pod))
            except StatusError as err:
                if not (is_not_found(err) or err.code == 422):
                    raise

    async def _release_orphaned_pods(self, key: str) -> None:
        """The Job is gone: its pods must not stay stuck on our finalizer."""
        ns, _, job_name = key.partition("/")
        stuck = []
        for pod in self.pod_informer.list_by_index("namespace", ns):
            ref = controller_of(pod)
            if (ref is not None and ref.get("kind") == "Job" and ref.get("name") == job_name
                    and TRACKING_FINALIZER in (pod["metadata"].get("finalizers") or [])):
                stuck.append(pod)
        await self._remove_finalizers(stuck)

    async def _write_status(self, job: Obj, status: Obj) -> Obj:
        status = {k: v for k, v in status.items() if not (k in ("active", "ready", "succeeded", "failed", "terminating")
                                                            and v == 0)}
        if (job.get("status") or {}) == status:
            return job
        new = deep_copy(job)
        new["status"] = status
        return with_kind(await self.client.update_status(new), "batch/v1", "Job")


def _parse_indexes(text: str) -> set[int]:
    out: set[int] = set()
    for part in text.split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        try:
            out.update(range(int(lo), int(hi or lo) + 1))
        except ValueError:
            continue
    return out


def _format_indexes(indexes: set[int]) -> str:
    """``0-2,5,7,8``: upstream's completedIndexes format (a run of two is written as two numbers)."""
    if not indexes:
        return ""
    parts: list[str] = []
    ordered = sorted(indexes)
    start = prev = ordered[0]
    for i in ordered[1:] + [None]:  # type: ignore[list-item]
        if i is not None and i == prev + 1:
            prev = i
            continue
        parts.append(str(start) if start == prev else f"{start},{prev}" if prev == start + 1 else f"{start}-{prev}")
        if i is not None:
            start = prev = i
    return ",".join(parts)
