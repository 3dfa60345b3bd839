"""CronJob controller (with the Job controller) on the virtual cluster clock."""

from __future__ import annotations

from typing import Any

from workload_env import Env, pod_template, wl  # noqa: F401 - wl is the fixture

from kconsole.controllers.cronjob import CronJobController, Schedule, ScheduleError
from kconsole.controllers.job import JobController
from kconsole.objects.meta import parse_time

Obj = dict[str, Any]


def cronjob(name: str, schedule: str, command: list[str], **spec: Any) -> Obj:
    template = pod_template({}, image="busybox:1.36", command=command, restartPolicy="Never")
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedule": schedule, "jobTemplate": {"spec": {"template": template}}, **spec}}


async def jobs(wl: Env) -> dict[str, Obj]:
    return {j["metadata"]["name"]: j for j in await wl.admin.list_all("jobs", "default")}


def test_schedule_rejects_what_upstream_rejects() -> None:
    for bad in ("* * * *", "61 * * * *", "* * * * * *", "every minute"):
        try:
            Schedule(bad)
        except ScheduleError:
            continue
        raise AssertionError(f"{bad!r} was accepted")
    assert Schedule("@hourly").next(0) == 3600


async def test_fires_on_schedule_records_completion_and_keeps_history_limit(wl: Env) -> None:
    await wl.start(CronJobController, JobController)
    await wl.runner(ready_after=1)
    created = await wl.admin.create(cronjob("hello", "*/1 * * * *", ["sh", "-c", "sleep 5"],
                                            successfulJobsHistoryLimit=2))
    start = parse_time(created["metadata"]["creationTimestamp"])
    await wl.clock.advance(59)
    assert await jobs(wl) == {}
    await wl.clock.advance(2)
    first = await jobs(wl)
    assert list(first) == [f"hello-{int((start + 60) // 60)}"]
    job = next(iter(first.values()))
    assert job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"] == "2026-01-01T00:01:00Z"
    assert job["metadata"]["ownerReferences"][0]["kind"] == "CronJob"
    assert parse_time(job["metadata"]["creationTimestamp"]) - (start + 60) < 1
    cj = await wl.get("cronjobs", "hello")
    assert [r["name"] for r in cj["status"]["active"]] == list(first)
    assert cj["status"]["lastScheduleTime"] == "2026-01-01T00:01:00Z"
    await wl.clock.advance(180)
    names = sorted(await jobs(wl))
    # Minutes 1 and 2 ... 4 ran; 4 is still running, of the finished ones the newest two are kept.
    assert names == [f"hello-{int((start + 60 * k) // 60)}" for k in (2, 3, 4)]
    cj = await wl.get("cronjobs", "hello")
    # Started 00:03:00.1, running 1 s later for 5 s.
    assert cj["status"]["lastSuccessfulTime"] == "2026-01-01T00:03:06Z"
    assert [r["name"] for r in cj["status"]["active"]] == [names[-1]]
    reasons = [(e["reason"], e["message"]) for e in await wl.events() if e["involvedObject"]["kind"] == "CronJob"]
    assert ("SuccessfulCreate", f"Created job hello-{int((start + 60) // 60)}") in reasons
    assert ("SawCompletedJob", f"Saw completed job: hello-{int((start + 60) // 60)}, condition: Complete") in reasons
    assert ("SuccessfulDelete", f"Deleted job hello-{int((start + 60) // 60)}") in reasons


async def test_forbid_skips_while_running_and_replace_replaces(wl: Env) -> None:
    await wl.start(CronJobController, JobController)
    await wl.runner(ready_after=1)
    await wl.admin.create(cronjob("forbid", "*/1 * * * *", ["sh", "-c", "sleep 1000"], concurrencyPolicy="Forbid"))
    await wl.admin.create(cronjob("replace", "*/1 * * * *", ["sh", "-c", "sleep 1000"], concurrencyPolicy="Replace"))
    await wl.clock.advance(61)
    assert sorted(n.split("-")[0] for n in await jobs(wl)) == ["forbid", "replace"]
    first_replace = next(n for n in await jobs(wl) if n.startswith("replace"))
    await wl.clock.advance(60)
    names = sorted(await jobs(wl))
    assert len([n for n in names if n.startswith("forbid")]) == 1
    assert [n for n in names if n.startswith("replace")] != [first_replace]
    assert len([n for n in names if n.startswith("replace")]) == 1
    already = await wl.events("JobAlreadyActive")
    assert already and already[0]["involvedObject"]["name"] == "forbid"


async def test_too_many_missed_start_times_warns_and_runs_the_latest_once(wl: Env) -> None:
    await wl.start(CronJobController)
    await wl.admin.create(cronjob("late", "*/1 * * * *", ["sh", "-c", "sleep 5"], suspend=True))
    await wl.clock.advance(110 * 60 + 30)
    assert await jobs(wl) == {}
    await wl.admin.patch("cronjobs", "late", {"spec": {"suspend": False}}, "default")
    await wl.clock.advance(1)
    created = list(await jobs(wl))
    now_minute = int(wl.clock.now() // 60)
    assert created == [f"late-{now_minute}"]
    warnings = await wl.events("TooManyMissedTimes")
    assert warnings[0]["message"].startswith("too many missed start times: 110.")


async def test_starting_deadline_missed_schedule(wl: Env) -> None:
    await wl.start(CronJobController)
    await wl.admin.create(cronjob("strict", "0 * * * *", ["sh", "-c", "sleep 5"], suspend=True,
                                  startingDeadlineSeconds=10))
    await wl.clock.advance(3600 + 20)
    await wl.admin.patch("cronjobs", "strict", {"spec": {"suspend": False}}, "default")
    await wl.clock.advance(1)
    assert await jobs(wl) == {}
    await wl.clock.advance(3600)
    assert list(await jobs(wl)) == [f"strict-{int((wl.clock.now() - 21) // 60)}"]


async def test_every_schedules_run_at_a_constant_delay_from_creation(wl: Env) -> None:
    """robfig/cron's '@every <duration>', which upstream accepts: 90 s after creation, then every 90 s."""
    await wl.start(CronJobController, JobController)
    await wl.runner(ready_after=1)
    await wl.clock.advance(17)  # creation off the minute grid, to see the delay is counted from it
    created = await wl.admin.create(cronjob("pulse", "@every 1m30s", ["sh", "-c", "sleep 5"]))
    start = parse_time(created["metadata"]["creationTimestamp"])
    await wl.clock.advance(89)
    assert await jobs(wl) == {}
    await wl.clock.advance(2)
    await wl.clock.advance(90)
    stamps = sorted(j["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"]
                    for j in (await jobs(wl)).values())
    assert [parse_time(s) - start for s in stamps] == [90, 180]
    assert [e for e in await wl.events("UnparseableSchedule")] == []
    try:
        Schedule("@every 1x")
    except ScheduleError as err:
        assert str(err) == 'failed to parse duration @every 1x: time: invalid duration "1x"'
    else:
        raise AssertionError("a bad duration was accepted")
