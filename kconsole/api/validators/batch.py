"""batch/v1: Jobs and CronJobs (upstream pkg/apis/batch/validation)."""

from __future__ import annotations

import zoneinfo
from typing import Any

from kconsole.api.validators.field import (
    Cause, GoLiteral, immutable, invalid, non_negative, not_supported, required)
from kconsole.api.validators.meta import validate_annotations, validate_labels
from kconsole.api.validators.pods import validate_pod_template
from kconsole.api.validators.workloads import go_label_selector, template_matches
from kconsole.objects import cronspec
from kconsole.objects.names import without_null_timestamp

Obj = dict[str, Any]

COMPLETION_MODES = ("NonIndexed", "Indexed")
CONCURRENCY_POLICIES = ("Allow", "Forbid", "Replace")
CONTROLLER_UID = "batch.kubernetes.io/controller-uid"
LEGACY_CONTROLLER_UID = "controller-uid"
JOB_NAME = "batch.kubernetes.io/job-name"
LEGACY_JOB_NAME = "job-name"
CRONJOB_NAME_MAX = 52
#: What a suspended Job that never started may still change in its template (mutable scheduling directives).
SCHEDULING_DIRECTIVES = ("nodeSelector", "tolerations", "affinity", "schedulingGates")


def _spec(obj: Obj) -> Obj:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def validate_job_spec(spec: Obj, path: str) -> list[Cause]:
    causes: list[Cause] = []
    for key in ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished"):
        causes += non_negative(f"{path}.{key}", spec.get(key))
    mode = spec.get("completionMode")
    if mode is not None:
        if mode not in COMPLETION_MODES:
            causes.append(not_supported(f"{path}.completionMode", mode, COMPLETION_MODES))
        elif mode == "Indexed" and spec.get("completions") is None:
            causes.append(required(f"{path}.completions", "when completion mode is Indexed"))
    template = spec.get("template")
    causes += validate_pod_template(template, f"{path}.template")
    tspec = (template or {}).get("spec") if isinstance(template, dict) else None
    if isinstance(tspec, dict):
        restart = tspec.get("restartPolicy") or ""
        if restart in ("Always", ""):
            causes.append(required(f"{path}.template.spec.restartPolicy", 'valid values: "OnFailure", "Never"'))
        elif restart not in ("OnFailure", "Never"):
            causes.append(not_supported(f"{path}.template.spec.restartPolicy", restart, ("OnFailure", "Never")))
    return causes


def _has_label(labels: dict[str, str], key: str, expected: str) -> list[Cause]:
    path = f"spec.template.metadata.labels[{key}]"
    if key not in labels:
        return [required(path, expected)]
    if labels[key] != expected:
        return [invalid(path, labels, f"must be '{expected}'")]
    return []


def validate_job(obj: Obj) -> list[Cause]:
    spec = _spec(obj)
    causes = validate_job_spec(spec, "spec")
    meta = obj.get("metadata") or {}
    selector = spec.get("selector")
    template = spec.get("template") if isinstance(spec.get("template"), dict) else {}
    labels = (template.get("metadata") or {}).get("labels") or {}
    if spec.get("manualSelector"):
        if selector is None:
            causes.append(required("spec.selector"))
        else:
            causes += template_matches(selector, template)
        return causes
    if selector is None:
        causes.append(required("spec.selector"))
        return causes
    uid = meta.get("uid") or ""
    if selector != {"matchLabels": {CONTROLLER_UID: uid}}:
        causes.append(invalid("spec.selector", go_label_selector(selector), "`selector` not auto-generated"))
    causes += _has_label(labels, LEGACY_CONTROLLER_UID, uid)
    causes += _has_label(labels, LEGACY_JOB_NAME, meta.get("name") or "")
    causes += _has_label(labels, CONTROLLER_UID, uid)
    causes += _has_label(labels, JOB_NAME, meta.get("name") or "")
    return causes


def _masked_template(template: Any) -> Any:
    if not isinstance(template, dict):
        return template
    out = dict(template)
    out["metadata"] = {}
    tspec = dict(template.get("spec") or {})
    for key in SCHEDULING_DIRECTIVES:
        tspec.pop(key, None)
    out["spec"] = tspec
    return out


def validate_job_update(obj: Obj, old: Obj) -> list[Cause]:
    spec, old_spec = _spec(obj), _spec(old)
    causes: list[Cause] = []
    if spec.get("selector") != old_spec.get("selector"):
        causes.append(immutable("spec.selector", go_label_selector(spec.get("selector"))))
    if spec.get("completionMode") != old_spec.get("completionMode"):
        causes.append(immutable("spec.completionMode", spec.get("completionMode") or ""))
    if spec.get("completions") != old_spec.get("completions") and spec.get("completionMode") != "Indexed":
        causes.append(immutable("spec.completions", spec.get("completions")))
    # Go's zero creationTimestamp (null) equals absent: a Job stored before templates carried it is unchanged
    template, old_template = (without_null_timestamp(t) if isinstance(t, dict) else t
                              for t in (spec.get("template"), old_spec.get("template")))
    if template != old_template:
        never_started = old_spec.get("suspend") and not (old.get("status") or {}).get("startTime")
        if not (never_started and _masked_template(template) == _masked_template(old_template)):
            causes.append(immutable("spec.template", GoLiteral("core.PodTemplateSpec{...}")))
    return causes


def schedule_causes(schedule: Any) -> list[Cause]:
    if not schedule:
        return [required("spec.schedule")]
    text = str(schedule)
    if text.startswith(("TZ=", "CRON_TZ=")):
        return [invalid("spec.schedule", text, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead")]
    why = cronspec.check(text)
    return [invalid("spec.schedule", text, why)] if why is not None else []


def validate_cronjob(obj: Obj) -> list[Cause]:
    spec = _spec(obj)
    name = (obj.get("metadata") or {}).get("name") or ""
    causes: list[Cause] = []
    if len(name) > CRONJOB_NAME_MAX:
        causes.append(invalid("metadata.name", name, f"must be no more than {CRONJOB_NAME_MAX} characters"))
    causes += schedule_causes(spec.get("schedule"))
    tz = spec.get("timeZone")
    if tz is not None:
        try:
            zoneinfo.ZoneInfo(str(tz))
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            causes.append(invalid("spec.timeZone", tz, f"unknown time zone {tz}"))
    policy = spec.get("concurrencyPolicy") or ""
    if policy not in CONCURRENCY_POLICIES:
        causes.append(not_supported("spec.concurrencyPolicy", policy, CONCURRENCY_POLICIES))
    for key in ("startingDeadlineSeconds", "successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        causes += non_negative(f"spec.{key}", spec.get(key))
    job_template = spec.get("jobTemplate")
    if not isinstance(job_template, dict):
        causes.append(required("spec.jobTemplate"))
        return causes
    jmeta = job_template.get("metadata") or {}
    causes += validate_labels(jmeta.get("labels"), "spec.jobTemplate.metadata.labels")
    causes += validate_annotations(jmeta.get("annotations"), "spec.jobTemplate.metadata.annotations")
    jspec = job_template.get("spec")
    if not isinstance(jspec, dict):
        causes.append(required("spec.jobTemplate.spec"))
    else:
        causes += validate_job_spec(jspec, "spec.jobTemplate.spec")
    return causes
