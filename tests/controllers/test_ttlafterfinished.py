"""TTL-after-finished controller with the Job controller and the garbage collector, on the real API server."""

from __future__ import annotations

from typing import Any

from workload_env import Env, pod_template, wl  # noqa: F401 - wl is the fixture

from kconsole.client import StatusError, is_not_found
from kconsole.controllers.garbagecollector import GarbageCollector
from kconsole.controllers.job import JobController
from kconsole.controllers.ttlafterfinished import TTLAfterFinishedController
from kconsole.objects.meta import parse_time

Obj = dict[str, Any]


def job(name: str, command: list[str], **spec: Any) -> Obj:
    template = pod_template({}, image="busybox:1.36", command=command, restartPolicy="Never")
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "default"},
            "spec": {"template": template, **spec}}


async def exists(wl: Env, name: str) -> bool:
    try:
        await wl.get("jobs", name)
    except StatusError as err:
        if is_not_found(err):
            return False
        raise
    return True


async def not_exists(wl: Env, name: str) -> bool:
    return not await exists(wl, name)


async def finished_at(wl: Env, name: str) -> float | None:
    for c in (await wl.get("jobs", name)).get("status", {}).get("conditions") or ():
        if c["type"] in ("Complete", "Failed") and c["status"] == "True":
            return parse_time(c["lastTransitionTime"])
    return None


async def test_finished_jobs_are_deleted_with_their_pods_once_their_ttl_runs_out(wl: Env) -> None:
    await wl.start(JobController, TTLAfterFinishedController, GarbageCollector)
    await wl.runner(ready_after=1)
    await wl.admin.create(job("done", ["sh", "-c", "sleep 5"], ttlSecondsAfterFinished=60))
    await wl.admin.create(job("failed", ["sh", "-c", "exit 1"], backoffLimit=0, ttlSecondsAfterFinished=30))
    await wl.admin.create(job("kept", ["sh", "-c", "sleep 5"]))
    await wl.wait(lambda: finished_at(wl, "done"))
    await wl.wait(lambda: finished_at(wl, "failed"))
    await wl.wait(lambda: finished_at(wl, "kept"))
    done_at = await finished_at(wl, "done")
    assert done_at is not None
    await wl.clock.advance(done_at + 55 - wl.clock.now())
    assert await exists(wl, "done")
    assert len(await wl.pods(selector="batch.kubernetes.io/job-name=done")) == 1
    assert not await exists(wl, "failed")
    await wl.wait(lambda: not_exists(wl, "done"), timeout=10)
    assert wl.clock.now() <= done_at + 62
    assert await wl.pods(selector="batch.kubernetes.io/job-name=done") == []
    await wl.clock.advance(300)
    assert await exists(wl, "kept")
