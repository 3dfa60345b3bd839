"""``kubectl debug``: a debug container joins a running pod through pods/ephemeralcontainers, the
kubelet runs it beside the pod's own containers without touching its readiness, never restarts it,
and the API refuses anything but adding one."""

from __future__ import annotations

from typing import Any

import pytest
from node_env import NodeEnv, pod

from kconsole.client import StatusError

Obj = dict[str, Any]


def debugger(name: str, **fields: Any) -> Obj:
    return {"name": name, "image": "busybox", **fields}


async def add(env: NodeEnv, pod_name: str, *containers: Obj) -> Obj:
    """What kubectl debug sends: a strategic merge patch of the subresource."""
    return await env.admin.patch("pods", pod_name, {"spec": {"ephemeralContainers": list(containers)}}, "default",
                                 patch_type="strategic", subresource="ephemeralcontainers")


def statuses(p: Obj) -> dict[str, Obj]:
    return {s["name"]: s for s in p["status"].get("ephemeralContainerStatuses") or ()}


async def test_a_debug_container_runs_beside_the_pod_and_is_never_restarted(env: NodeEnv) -> None:
    await env.fleet(workers=1)
    await env.admin.create(pod("web"))
    await env.clock.advance(10)
    before = await env.pod("web")
    assert before["status"]["phase"] == "Running"

    shell = debugger("debugger-a", stdin=True, tty=True, targetContainerName="web")
    added = await add(env, "web", shell)
    stored = added["spec"]["ephemeralContainers"][0]
    assert stored["imagePullPolicy"] == "Always" and stored["terminationMessagePolicy"] == "File", "defaulted"
    await env.clock.advance(10)
    p = await env.pod("web")
    shell_status = statuses(p)["debugger-a"]
    assert "running" in shell_status["state"] and shell_status["ready"] is False
    assert [s["ready"] for s in p["status"]["containerStatuses"]] == [True], "the pod's own container untouched"
    ready = next(c for c in p["status"]["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "True"
    started = [e for e in await env.events("web") if e["reason"] == "Started"]
    assert started[-1]["involvedObject"]["fieldPath"] == "spec.ephemeralContainers{debugger-a}"

    script = debugger("debugger-b", command=["sh", "-c", "echo looking around; exit 3"])
    await add(env, "web", shell, script)
    await env.clock.advance(120)
    p = await env.pod("web")
    done = statuses(p)["debugger-b"]
    assert done["state"]["terminated"]["exitCode"] == 3 and done["restartCount"] == 0, \
        "restartPolicy Always does not apply to a debug container"
    assert p["status"]["phase"] == "Running"
    assert (await env.admin.logs("default", "web", container="debugger-b")).startswith("looking around\n")


async def test_only_adding_a_debug_container_is_allowed(env: NodeEnv) -> None:
    await env.fleet(workers=1)
    with_debug = pod("made")
    with_debug["spec"]["ephemeralContainers"] = [debugger("dbg")]
    with pytest.raises(StatusError) as err:
        await env.admin.create(with_debug)
    assert "spec.ephemeralContainers: Forbidden: cannot be set on create" in err.value.message

    await env.admin.create(pod("web"))
    await add(env, "web", debugger("dbg"))

    refused = {
        "spec.ephemeralContainers: Forbidden: existing ephemeral containers \"dbg\" may not be removed":
            [debugger("other")],
        "spec.ephemeralContainers[dbg]: Forbidden: existing ephemeral containers \"dbg\" may not be changed":
            [debugger("dbg", image="alpine")],
        "spec.ephemeralContainers[1].name: Duplicate value: \"web\"": [debugger("dbg"), debugger("web")],
        "spec.ephemeralContainers[1].targetContainerName: Not found: \"app\"":
            [debugger("dbg"), debugger("x", targetContainerName="app")],
        "spec.ephemeralContainers[1].ports: Forbidden: cannot be set for an Ephemeral Container":
            [debugger("dbg"), debugger("x", ports=[{"containerPort": 80}])],
    }
    for message, containers in refused.items():
        with pytest.raises(StatusError) as err:
            await env.admin.update({**(await env.pod("web")), "spec": {
                **(await env.pod("web"))["spec"], "ephemeralContainers": containers}},
                subresource="ephemeralcontainers")
        assert message in err.value.message, (message, err.value.message)

    # Through the subresource nothing but the debug containers changes; through the pod, not them.
    current = await env.pod("web")
    sneaky = {**current, "spec": {**current["spec"], "activeDeadlineSeconds": 5,
                                  "ephemeralContainers": current["spec"]["ephemeralContainers"] + [debugger("more")]}}
    result = await env.admin.update(sneaky, subresource="ephemeralcontainers")
    assert "activeDeadlineSeconds" not in result["spec"]
    assert [c["name"] for c in result["spec"]["ephemeralContainers"]] == ["dbg", "more"]
    with pytest.raises(StatusError) as err:
        await env.admin.update({**result, "spec": {**result["spec"], "ephemeralContainers": []}})
    assert "pod updates may not change fields other than" in err.value.message


async def test_deleting_the_pod_stops_its_debug_container(env: NodeEnv) -> None:
    await env.fleet(workers=1)
    await env.admin.create(pod("web", grace=5))
    await env.clock.advance(10)
    await add(env, "web", debugger("dbg", stdin=True))
    await env.clock.advance(10)
    assert "running" in statuses(await env.pod("web"))["dbg"]["state"]
    await env.admin.delete("pods", "web", "default")

    async def gone() -> bool:
        try:
            await env.pod("web")
        except StatusError:
            return True
        return False

    assert await env.wait(gone, timeout=30) <= 6, "within the grace period: the shell exits on SIGTERM"
