"""Run-to-completion and lifecycle through the whole cluster: Job, CronJob, crash loops, deletion."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from e2e_env import Obj, boot, deployment, events_for, get_or_none, phase, shutdown, vclock

from kconsole.cluster import Cluster

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Cluster]:
    c = await boot(tmp_path_factory.mktemp("lifecycle") / "data", nodes=3, control_planes=1)
    try:
        yield c
    finally:
        await shutdown(c)


def job_spec(command: list[str], **spec: Any) -> Obj:
    return {"template": {"spec": {"restartPolicy": "Never",
                                  "containers": [{"name": "work", "image": "busybox:1.36", "command": command}]}},
            **spec}


def job_condition(job: Obj | None, ctype: str) -> bool:
    return any(c.get("type") == ctype and c.get("status") == "True"
               for c in ((job or {}).get("status") or {}).get("conditions") or [])


async def test_job_with_completions_three_and_parallelism_two_completes(cluster: Cluster) -> None:
    clock = vclock(cluster)
    admin = cluster.api_client()
    await admin.create({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "batch", "namespace": "default"},
                        "spec": job_spec(["sleep", "5"], completions=3, parallelism=2)})
    most_active = 0

    async def complete() -> bool:
        nonlocal most_active
        pods = await admin.list_all("pods", "default", label_selector="job-name=batch")
        most_active = max(most_active, sum(phase(p) in ("Pending", "Running") for p in pods))
        return job_condition(await admin.get("jobs", "batch", "default"), "Complete")

    took = await clock.run_until(complete, timeout=180, step=0.5)
    job = await admin.get("jobs", "batch", "default")
    assert job["status"]["succeeded"] == 3 and not job["status"].get("failed")
    assert job["status"].get("completionTime")
    assert most_active == 2, f"parallelism 2, but {most_active} pods were active at once"
    assert took >= 10, f"two waves of 5 s containers cannot finish in {took:.1f} simulated s"
    pods = await admin.list_all("pods", "default", label_selector="job-name=batch")
    assert len(pods) == 3 and all(phase(p) == "Succeeded" for p in pods)
    events = await events_for(cluster, "default", "Job", "batch")
    assert [e["reason"] for e in events if e["reason"] == "SuccessfulCreate"] and events[-1]["reason"] == "Completed"
    assert {e["source"]["component"] for e in events} == {"job-controller"}


async def test_cronjob_fires_on_schedule(cluster: Cluster) -> None:
    clock = vclock(cluster)
    admin = cluster.api_client()
    await admin.create({"apiVersion": "batch/v1", "kind": "CronJob",
                        "metadata": {"name": "tick", "namespace": "default"},
                        "spec": {"schedule": "*/2 * * * *", "jobTemplate": {"spec": job_spec(["sleep", "1"])}}})
    created = clock.now()

    async def jobs_of_tick() -> list[Obj]:
        return [j for j in await admin.list_all("jobs", "default")
                if any(r.get("name") == "tick" for r in j["metadata"].get("ownerReferences") or [])]

    async def two_fired() -> bool:
        return len(await jobs_of_tick()) >= 2

    await clock.run_until(two_fired, timeout=300, step=1)
    jobs = sorted(await jobs_of_tick(), key=lambda j: j["metadata"]["name"])
    expected_first = (int(created) // 120 + 1) * 120
    stamps = [int(j["metadata"]["name"].rsplit("-", 1)[1]) * 60 for j in jobs]
    assert stamps[:2] == [expected_first, expected_first + 120], "jobs are named for their scheduled minute"
    assert clock.now() - expected_first - 120 < 15, "the second run started close to its scheduled time"
    cj = await admin.get("cronjobs", "tick", "default")
    assert cj["status"]["lastScheduleTime"] == clock.rfc3339(expected_first + 120)
    creates = [e["message"] for e in await events_for(cluster, "default", "CronJob", "tick")
               if e["reason"] == "SuccessfulCreate"]
    assert creates[:2] == [f"Created job {j['metadata']['name']}" for j in jobs[:2]]
    await admin.delete("cronjobs", "tick", "default", propagation_policy="Background")


async def test_crash_looping_container_backs_off_with_growing_delays(cluster: Cluster) -> None:
    clock = vclock(cluster)
    admin = cluster.api_client()
    await admin.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "crasher", "namespace": "default"},
                        "spec": {"restartPolicy": "Always", "containers": [
                            {"name": "boom", "image": "busybox:1.36", "command": ["sh", "-c", "exit 3"]}]}})
    restarts_at: dict[int, float] = {}
    waiting: list[str] = []

    async def restarted_four_times() -> bool:
        pod = await admin.get("pods", "crasher", "default")
        statuses = (pod.get("status") or {}).get("containerStatuses") or []
        if not statuses:
            return False
        st = statuses[0]
        restarts_at.setdefault(st["restartCount"], clock.now())
        w = (st.get("state") or {}).get("waiting") or {}
        if w.get("reason") == "CrashLoopBackOff" and (not waiting or waiting[-1] != w.get("message")):
            waiting.append(w["message"])
        last = (st.get("lastState") or {}).get("terminated") or {}
        assert not last or last["exitCode"] == 3
        return st["restartCount"] >= 4

    await clock.run_until(restarted_four_times, timeout=240, step=0.5)
    times = [restarts_at[i] for i in range(1, 5)]
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert all(later > earlier * 1.5 for earlier, later in zip(gaps, gaps[1:])), f"gaps between restarts: {gaps}"
    assert 8 <= gaps[0] <= 13, gaps
    delays = [m.split()[1] for m in waiting]
    assert delays[:3] == ["10s", "20s", "40s"], waiting
    backoffs = [e for e in await events_for(cluster, "default", "Pod", "crasher") if e["reason"] == "BackOff"]
    assert backoffs and backoffs[0]["type"] == "Warning" and backoffs[0]["source"]["component"] == "kubelet"
    assert backoffs[0]["message"].startswith("Back-off restarting failed container boom in pod crasher_default(")
    assert sum(e.get("count", 1) for e in backoffs) >= 3
    await admin.delete("pods", "crasher", "default", grace_period_seconds=0)


async def test_deleting_a_namespace_removes_everything_in_it(cluster: Cluster) -> None:
    clock = vclock(cluster)
    admin = cluster.api_client()
    await admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "doomed"}})
    await admin.create(deployment("site", "nginx:1.25", 2, namespace="doomed"))
    await admin.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "doomed"},
                        "data": {"a": "1"}})
    await admin.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "site", "namespace": "doomed"},
                        "spec": {"selector": {"app": "site"}, "ports": [{"port": 80}]}})

    async def site_running() -> bool:
        pods = await admin.list_all("pods", "doomed")
        return len(pods) == 2 and all(phase(p) == "Running" for p in pods)

    await clock.run_until(site_running, timeout=120, step=0.5)
    await admin.delete("namespaces", "doomed")
    ns = await admin.get("namespaces", "doomed")
    assert ns["status"]["phase"] == "Terminating"

    async def gone() -> bool:
        return await get_or_none(cluster, "namespaces", "doomed", None) is None

    took = await clock.run_until(gone, timeout=180, step=1)
    assert took <= 60, f"namespace took {took:.0f} simulated s to go"
    for resource in ("pods", "deployments", "replicasets", "services", "configmaps", "endpointslices",
                     "serviceaccounts", "events"):
        left = await admin.list_all(resource, "doomed")
        assert left == [], f"{resource} left in a deleted namespace: {[o['metadata']['name'] for o in left]}"


async def test_foreground_deletion_removes_dependents_before_the_owner(cluster: Cluster) -> None:
    clock = vclock(cluster)
    admin = cluster.api_client()
    await admin.create(deployment("fg", "nginx:1.25", 2))

    async def fg_running() -> bool:
        pods = await admin.list_all("pods", "default", label_selector="app=fg")
        return len(pods) == 2 and all(phase(p) == "Running" for p in pods)

    await clock.run_until(fg_running, timeout=120, step=0.5)
    starts = {r: (await admin.list(r, "default"))["metadata"]["resourceVersion"]
              for r in ("pods", "replicasets", "deployments")}
    deleted_at: dict[tuple[str, str], int] = {}

    async def record(resource: str, ready: asyncio.Event) -> None:
        async with admin.watch(resource, "default", resource_version=starts[resource]) as stream:
            ready.set()
            async for ev in stream:
                if ev["type"] == "DELETED":
                    meta = ev["object"]["metadata"]
                    deleted_at[(resource, meta["name"])] = int(meta["resourceVersion"])

    flags = [asyncio.Event() for _ in starts]
    watchers = [asyncio.create_task(record(r, f)) for r, f in zip(starts, flags)]
    await clock.run_until(lambda: all(f.is_set() for f in flags), timeout=5, step=0.1)
    try:
        owner = await admin.delete("deployments", "fg", "default", propagation_policy="Foreground")
        assert "foregroundDeletion" in owner["metadata"].get("finalizers", [])
        assert owner["metadata"].get("deletionTimestamp")

        async def owner_gone() -> bool:
            return await get_or_none(cluster, "deployments", "fg") is None

        await clock.run_until(owner_gone, timeout=180, step=0.5)
        await clock.advance(1)
    finally:
        for w in watchers:
            w.cancel()
        await asyncio.gather(*watchers, return_exceptions=True)
    owner_rv = deleted_at[("deployments", "fg")]
    dependents = {k: v for k, v in deleted_at.items() if k[1].startswith("fg-")}
    assert sum(k[0] == "replicasets" for k in dependents) == 1, dependents
    assert sum(k[0] == "pods" for k in dependents) == 2, dependents
    assert all(rv < owner_rv for rv in dependents.values()), f"owner deleted at {owner_rv}, dependents {dependents}"
    rs_rv = [v for k, v in dependents.items() if k[0] == "replicasets"][0]
    assert all(rv < rs_rv for k, rv in dependents.items() if k[0] == "pods"), "pods go before their ReplicaSet"


async def test_failing_job_retries_with_back_off_then_fails(cluster: Cluster) -> None:
    clock = vclock(cluster)
    admin = cluster.api_client()
    await admin.create({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "doomed", "namespace": "default"},
                        "spec": job_spec(["sh", "-c", "exit 3"], backoffLimit=2)})
    created_at: dict[str, float] = {}

    async def failed() -> bool:
        for p in await admin.list_all("pods", "default", label_selector="job-name=doomed"):
            created_at.setdefault(p["metadata"]["name"], clock.now())
        return job_condition(await get_or_none(cluster, "jobs", "doomed"), "Failed")

    await clock.run_until(failed, timeout=300, step=0.5)
    job = await admin.get("jobs", "doomed", "default")
    cond = next(c for c in job["status"]["conditions"] if c["type"] == "Failed")
    assert (cond["reason"], cond["message"]) == ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
    assert job["status"]["failed"] == 3 and len(created_at) == 3
    starts = sorted(created_at.values())
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    assert gaps[0] >= 9 and gaps[1] >= 1.5 * gaps[0], f"retries should back off 10 s then 20 s: {gaps}"
    pods = await admin.list_all("pods", "default", label_selector="job-name=doomed")
    terminated = [p["status"]["containerStatuses"][0]["state"]["terminated"] for p in pods]
    assert all(t["exitCode"] == 3 and t["reason"] == "Error" for t in terminated)
    reasons = [e["reason"] for e in await events_for(cluster, "default", "Job", "doomed")]
    assert "BackoffLimitExceeded" in reasons


async def test_a_pruned_namespace_sends_the_files_inside_it_back_to_apply(cluster: Cluster, tmp_path: Any) -> None:
    from kconsole.cluster import SYNC
    from kconsole.sync import ManifestSync

    clock = vclock(cluster)
    admin = cluster.api_client()
    folder = tmp_path / "manifests"
    folder.mkdir()
    namespace = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: synced\n"
    (folder / "ns.yaml").write_text(namespace)
    (folder / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  namespace: synced\n")
    sync = ManifestSync(cluster.api_client(SYNC), folder, data_dir=tmp_path / "data", clock=clock, watch=False)
    await sync.start()
    try:
        assert {p: st.status for p, st in sync.files.items()} == {"cm.yaml": "applied", "ns.yaml": "applied"}
        # Removing the Namespace's file deletes the Namespace and, with it, the ConfigMap of cm.yaml:
        # cm.yaml must not go on saying 'applied'.
        (folder / "ns.yaml").unlink()
        await sync.sync_now({"ns.yaml"})

        def cm_error(words: str) -> bool:
            err = sync.files["cm.yaml"].error
            return err is not None and words in err.message

        # While the Namespace terminates the apply is refused at its namespace line; once it is gone,
        # as NotFound. How long it terminates depends on the file reads' real time, so either may come first.
        await clock.run_until(lambda: cm_error("Namespace synced is being deleted")
                              or cm_error('namespaces "synced" not found'), timeout=10, step=0.1)
        assert sync.files["cm.yaml"].status == "error"
        if cm_error("is being deleted"):
            assert sync.files["cm.yaml"].error.line == 5
        await clock.run_until(lambda: cm_error('namespaces "synced" not found'), timeout=180, step=1)
        assert await get_or_none(cluster, "configmaps", "cfg", "synced") is None
        # The Namespace's file back: both files apply again, the ConfigMap is there once more.
        (folder / "ns.yaml").write_text(namespace)
        await sync.sync_now({"ns.yaml"})
        assert {p: st.status for p, st in sync.files.items()} == {"cm.yaml": "applied", "ns.yaml": "applied"}
        assert await get_or_none(cluster, "configmaps", "cfg", "synced") is not None
    finally:
        await sync.stop()
