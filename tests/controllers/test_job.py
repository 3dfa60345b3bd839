"""Job controller against the real API server; the PodRunner runs each pod's command."""

from __future__ import annotations

from typing import Any

from workload_env import Env, WatchLog, pod_template, wl  # noqa: F401 - wl is the fixture

from kconsole.controllers.job import TRACKING_FINALIZER, JobController
from kconsole.objects.meta import parse_time

Obj = dict[str, Any]


def job(name: str, command: list[str], **spec: Any) -> Obj:
    template = pod_template({}, image="busybox:1.36", command=command, restartPolicy="Never")
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "default"},
            "spec": {"template": template, **spec}}


def conditions(obj: Obj) -> dict[str, Obj]:
    return {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or ()}


async def has_condition(wl: Env, name: str, cond_type: str) -> bool:
    return conditions(await wl.get("jobs", name)).get(cond_type, {}).get("status") == "True"


async def test_completions_three_parallelism_two_completes(wl: Env) -> None:
    await wl.start(JobController)
    await wl.runner(ready_after=1)
    log = WatchLog(wl.admin, ("pods",))
    await log.start()
    await wl.admin.create(job("pi", ["sh", "-c", "sleep 5"], completions=3, parallelism=2))
    took = await wl.wait(lambda: has_condition(wl, "pi", "Complete"), timeout=120)
    await log.stop()
    assert 10 <= took <= 20
    j = await wl.get("jobs", "pi")
    assert j["status"]["succeeded"] == 3
    assert "active" not in j["status"] and "failed" not in j["status"]
    assert j["status"]["completionTime"] and j["status"]["startTime"]
    assert j["status"]["uncountedTerminatedPods"] == {}
    conds = conditions(j)
    assert conds["Complete"]["reason"] == "CompletionsReached"
    assert conds["SuccessCriteriaMet"]["status"] == "True"
    pods = await wl.pods()
    assert len(pods) == 3
    assert all(p["metadata"]["name"].startswith("pi-") and p["status"]["phase"] == "Succeeded" for p in pods)
    assert all(TRACKING_FINALIZER not in (p["metadata"].get("finalizers") or []) for p in pods)
    running: dict[str, Obj] = {}
    most = 0
    for _, typ, pod in log.history():
        if typ == "DELETED" or pod["status"].get("phase") in ("Succeeded", "Failed"):
            running.pop(pod["metadata"]["name"], None)
        else:
            running[pod["metadata"]["name"]] = pod
        most = max(most, len(running))
    assert most == 2
    assert len(await wl.events("SuccessfulCreate")) == 3
    completed = await wl.events("Completed")
    assert [(e["message"], e["source"]["component"]) for e in completed] == [("Job completed", "job-controller")]


async def test_failures_back_off_then_backoff_limit_exceeded(wl: Env) -> None:
    await wl.start(JobController)
    await wl.runner(ready_after=1)
    await wl.admin.create(job("fail", ["sh", "-c", "exit 3"], backoffLimit=2))
    await wl.wait(lambda: has_condition(wl, "fail", "Failed"), timeout=200)
    j = await wl.get("jobs", "fail")
    assert j["status"]["failed"] == 3
    failed = conditions(j)["Failed"]
    assert (failed["reason"], failed["message"]) == ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
    pods = sorted(await wl.pods(), key=lambda p: p["metadata"]["creationTimestamp"])
    created = [parse_time(p["metadata"]["creationTimestamp"]) for p in pods]
    assert len(created) == 3
    # Each pod fails 1 s after creation; the next waits 10 s, then 20 s, after that failure.
    assert 10 <= created[1] - (created[0] + 1) <= 12
    assert 20 <= created[2] - (created[1] + 1) <= 22
    warnings = await wl.events("BackoffLimitExceeded")
    assert warnings and warnings[0]["type"] == "Warning"


async def test_active_deadline_fails_job_and_deletes_its_pods(wl: Env) -> None:
    await wl.start(JobController)
    await wl.runner(ready_after=1)
    await wl.admin.create(job("slow", ["sh", "-c", "sleep 1000"], parallelism=2, completions=4,
                              activeDeadlineSeconds=30))
    took = await wl.wait(lambda: has_condition(wl, "slow", "Failed"), timeout=100)
    assert 30 <= took <= 32
    j = await wl.get("jobs", "slow")
    assert conditions(j)["Failed"]["reason"] == "DeadlineExceeded"
    assert j["status"]["failed"] == 2 and "active" not in j["status"]
    assert await wl.pods() == []


async def test_pod_failure_policy_fails_the_job_on_a_fatal_exit_code_and_ignores_listed_ones(wl: Env) -> None:
    await wl.start(JobController)
    await wl.runner(ready_after=1)
    fatal = {"rules": [{"action": "FailJob", "onExitCodes": {"containerName": "app", "operator": "In", "values": [42]}}]}
    await wl.admin.create(job("fatal", ["sh", "-c", "exit 42"], backoffLimit=6, podFailurePolicy=fatal,
                              podReplacementPolicy="Failed"))
    benign = {"rules": [{"action": "Ignore", "onExitCodes": {"operator": "In", "values": [3]}},
                        {"action": "Count", "onExitCodes": {"operator": "NotIn", "values": [0]}}]}
    await wl.admin.create(job("benign", ["sh", "-c", "exit 3"], backoffLimit=0, podFailurePolicy=benign,
                              podReplacementPolicy="Failed"))
    await wl.wait(lambda: has_condition(wl, "fatal", "Failed"), timeout=30)
    j = await wl.get("jobs", "fatal")
    pods = await wl.pods(selector="batch.kubernetes.io/job-name=fatal")
    assert len(pods) == 1 and j["status"]["failed"] == 1
    failed = conditions(j)["Failed"]
    assert failed["reason"] == "PodFailurePolicy"
    assert failed["message"] == (f"Container app for pod default/{pods[0]['metadata']['name']} failed with exit code 42 "
                                 "matching FailJob rule at index 0")
    assert [e["message"] for e in await wl.events("PodFailurePolicy")] == [failed["message"]]
    await wl.wait(lambda: ignored_three_times(wl), timeout=30)
    b = await wl.get("jobs", "benign")
    assert not job_done(b) and "failed" not in b["status"]


async def ignored_three_times(wl: Env) -> bool:
    return len(await wl.pods(selector="batch.kubernetes.io/job-name=benign")) >= 3


def job_done(obj: Obj) -> bool:
    return any(c["type"] in ("Complete", "Failed", "FailureTarget") for c in (obj["status"].get("conditions") or ()))


async def test_backoff_limit_per_index_fails_indexes_then_the_job(wl: Env) -> None:
    await wl.start(JobController)
    await wl.runner(ready_after=1)
    indexed = {"completionMode": "Indexed", "completions": 2, "parallelism": 2}
    await wl.admin.create(job("perindex", ["sh", "-c", "exit 1"], backoffLimitPerIndex=1, backoffLimit=2147483647,
                              **indexed))
    await wl.admin.create(job("maxfailed", ["sh", "-c", "exit 1"], backoffLimitPerIndex=0, maxFailedIndexes=0,
                              backoffLimit=2147483647, **{**indexed, "parallelism": 1}))
    took = await wl.wait(lambda: has_condition(wl, "perindex", "Failed"), timeout=120)
    assert took < 60
    j = await wl.get("jobs", "perindex")
    assert (j["status"]["failed"], j["status"]["failedIndexes"]) == (4, "0,1")
    failed = conditions(j)["Failed"]
    assert (failed["reason"], failed["message"]) == ("FailedIndexes", "Job has failed indexes")
    pods = await wl.admin.list_all("pods", "default", label_selector="batch.kubernetes.io/job-name=perindex")
    per_index: dict[str, list[tuple[float, str]]] = {}
    for p in pods:
        ann = p["metadata"]["annotations"]
        per_index.setdefault(ann["batch.kubernetes.io/job-completion-index"], []).append(
            (parse_time(p["metadata"]["creationTimestamp"]), ann["batch.kubernetes.io/job-index-failure-count"]))
    assert {i: [c for _, c in sorted(v)] for i, v in per_index.items()} == {"0": ["0", "1"], "1": ["0", "1"]}
    assert all(10 <= sorted(v)[1][0] - sorted(v)[0][0] <= 13 for v in per_index.values())
    await wl.wait(lambda: has_condition(wl, "maxfailed", "Failed"), timeout=30)
    m = await wl.get("jobs", "maxfailed")
    assert conditions(m)["Failed"]["reason"] == "MaxFailedIndexesExceeded"
    assert (m["status"]["failed"], m["status"]["failedIndexes"]) == (1, "0")


async def test_success_policy_completes_the_job_when_its_leader_index_succeeds(wl: Env) -> None:
    await wl.start(JobController)
    await wl.runner(ready_after=1, only=lambda p: p["metadata"]["annotations"].get(
        "batch.kubernetes.io/job-completion-index") == "0")
    await wl.admin.create(job("leader", ["sh", "-c", "sleep 5"], completionMode="Indexed", completions=3,
                              parallelism=3, successPolicy={"rules": [{"succeededIndexes": "0"}]}))
    took = await wl.wait(lambda: has_condition(wl, "leader", "Complete"), timeout=60)
    assert took < 15
    j = await wl.get("jobs", "leader")
    conds = conditions(j)
    assert [(conds[t]["reason"], conds[t]["message"]) for t in ("SuccessCriteriaMet", "Complete")] == [
        ("SuccessPolicy", "Matched rules at index 0")] * 2
    assert (j["status"]["succeeded"], j["status"]["completedIndexes"]) == (1, "0")
    assert [p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] for p in await wl.pods(
        selector="batch.kubernetes.io/job-name=leader")] == ["0"]
