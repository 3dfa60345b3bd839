"""Pods on a simulated node: the event chain, completion, crash-loop back-off, readiness probes,
graceful deletion, logs, fault hooks, usage annotations."""

from __future__ import annotations

from kconsole.objects.meta import condition_status, parse_time

from node_env import NodeEnv, pod


def _state(p: dict, i: int = 0) -> dict:
    return p["status"]["containerStatuses"][i]["state"]


async def test_pod_runs_through_the_kubelet_event_chain(env: NodeEnv) -> None:
    await env.fleet(workers=1)
    await env.admin.create(pod("web"))
    await env.clock.advance(0.5)
    p = await env.pod("web")
    assert p["status"]["phase"] == "Pending"
    assert _state(p)["waiting"]["reason"] == "ContainerCreating"
    await env.wait(lambda: _phase(env, "web", "Running"), timeout=20)
    p = await env.pod("web")
    assert condition_status(p, "Ready") == "True" and condition_status(p, "PodScheduled") == "True"
    assert p["status"]["podIP"].startswith("10.244.") and p["status"]["hostIP"] == "172.18.0.2"
    assert p["status"]["containerStatuses"][0]["containerID"].startswith("containerd://")
    evs = await env.events("web")
    assert [e["reason"] for e in evs] == ["Pulling", "Pulled", "Created", "Started"]
    assert all(e["source"] == {"component": "kubelet", "host": "worker-1"} for e in evs)
    assert evs[0]["message"] == 'Pulling image "nginx:1.25"'
    assert evs[1]["message"].startswith('Successfully pulled image "nginx:1.25" in ')
    assert evs[2]["message"] == "Created container: web" and evs[3]["message"] == "Started container web"
    node = await env.admin.get("nodes", "worker-1")
    await env.clock.advance(11)
    node = await env.admin.get("nodes", "worker-1")
    assert any("docker.io/library/nginx:1.25" in img["names"] for img in node["status"]["images"])

    # The image is now on the node: a second pod skips the pull.
    await env.admin.create(pod("web2"))
    await env.wait(lambda: _phase(env, "web2", "Running"), timeout=20)
    reasons = [(e["reason"], e["message"]) for e in await env.events("web2")]
    assert reasons[0] == ("Pulled", 'Container image "nginx:1.25" already present on machine')
    assert env.fleets[0].kubelets["worker-1"].images == ["docker.io/library/nginx:1.25"]


async def _phase(env: NodeEnv, name: str, phase: str) -> bool:
    return (await env.pod(name)).get("status", {}).get("phase") == phase


async def test_sleep_30_succeeds_after_30_seconds(env: NodeEnv) -> None:
    await env.fleet(workers=1)
    await env.admin.create(pod("sleeper", image="busybox:1.36", command=["sleep", "30"], restart="Never"))
    await env.wait(lambda: _phase(env, "sleeper", "Running"), timeout=10)
    started = parse_time(_state(await env.pod("sleeper"))["running"]["startedAt"])
    took = await env.wait(lambda: _phase(env, "sleeper", "Succeeded"), timeout=40)
    assert took >= 25
    p = await env.pod("sleeper")
    term = _state(p)["terminated"]
    assert (term["exitCode"], term["reason"]) == (0, "Completed")
    assert parse_time(term["finishedAt"]) - started == 30
    assert condition_status(p, "Ready") == "False"


async def test_exit_3_with_restart_always_backs_off_10_20_40(env: NodeEnv) -> None:
    await env.fleet(workers=1)
    await env.admin.create(pod("crash", image="busybox:1.36", command=["sh", "-c", "exit 3"]))
    restarts: list[float] = []  # when restartCount went up
    last_count = 0
    for _ in range(400):
        await env.clock.advance(0.5)
        statuses = (await env.pod("crash")).get("status", {}).get("containerStatuses") or []
        if statuses and statuses[0]["restartCount"] != last_count:
            last_count = statuses[0]["restartCount"]
            restarts.append(env.clock.now())
        if len(restarts) >= 4:
            break
    gaps = [round(b - a) for a, b in zip(restarts, restarts[1:])]
    assert gaps == [10, 20, 40], gaps
    p = await env.pod("crash")
    assert p["status"]["phase"] == "Running"
    assert p["status"]["containerStatuses"][0]["lastState"]["terminated"]["exitCode"] == 3
    backoffs = [e for e in await env.events("crash") if e["reason"] == "BackOff"]
    assert backoffs and backoffs[0]["type"] == "Warning"
    assert backoffs[0]["message"].startswith("Back-off restarting failed container web in pod crash_default(")
    assert backoffs[0]["count"] >= 3


async def test_a_container_that_exits_at_once_is_never_ready(env: NodeEnv) -> None:
    """Upstream: a crash-looping container is not ready, so neither is its pod (Services and
    Deployments must not count it)."""
    await env.fleet(workers=1)
    await env.admin.create(pod("crash", image="busybox:1.36", command=["sh", "-c", "exit 2"]))
    seen: set[tuple[bool, str, str | None]] = set()
    for _ in range(80):
        await env.clock.advance(0.5)
        p = await env.pod("crash")
        statuses = p.get("status", {}).get("containerStatuses") or []
        if statuses:
            seen.add((statuses[0]["ready"], next(iter(statuses[0]["state"])), condition_status(p, "Ready")))
    assert any(state == "waiting" for _, state, _ in seen)
    assert {(ready, cond) for ready, _, cond in seen} == {(False, "False")}, seen


async def test_exit_3_with_restart_never_fails_the_pod(env: NodeEnv) -> None:
    await env.fleet(workers=1)
    await env.admin.create(pod("once", image="busybox:1.36", command=["sh", "-c", "echo bye; exit 3"],
                               restart="Never"))
    await env.wait(lambda: _phase(env, "once", "Failed"), timeout=20)
    term = _state(await env.pod("once"))["terminated"]
    assert (term["exitCode"], term["reason"]) == (3, "Error")
    assert (await env.admin.logs("default", "once")).startswith("bye\n")


async def test_readiness_probe_delays_ready_and_failing_it_unreadies(env: NodeEnv) -> None:
    fleet = await env.fleet(workers=1, delay_factor=0)
    probe = {"httpGet": {"path": "/healthz", "port": 80}, "initialDelaySeconds": 20, "periodSeconds": 5,
             "successThreshold": 2, "failureThreshold": 2}
    await env.admin.create(pod("probed", readinessProbe=probe))
    await env.clock.advance(1)
    p = await env.pod("probed")
    assert p["status"]["phase"] == "Running" and condition_status(p, "Ready") == "False"
    await env.clock.advance(20)
    assert condition_status(await env.pod("probed"), "Ready") == "False"  # one success of two
    await env.clock.advance(5)
    assert condition_status(await env.pod("probed"), "Ready") == "True"
    assert "GET /healthz HTTP/1.1" in await env.admin.logs("default", "probed")

    fleet.kubelets["worker-1"].fail_readiness("default", "probed")
    await env.clock.advance(5)
    assert condition_status(await env.pod("probed"), "Ready") == "True"  # one failure of two
    await env.clock.advance(5)
    p = await env.pod("probed")
    assert condition_status(p, "Ready") == "False"
    assert p["status"]["containerStatuses"][0]["ready"] is False
    unhealthy = [e for e in await env.events("probed") if e["reason"] == "Unhealthy"]
    assert unhealthy[0]["message"] == "Readiness probe failed: HTTP probe failed with statuscode: 503"


async def test_graceful_deletion_waits_for_the_grace_period(env: NodeEnv) -> None:
    await env.fleet(workers=1, delay_factor=0)
    await env.admin.create(pod("slow", image="busybox:1.36", command=["sleep", "3600"], grace=20))
    await env.admin.create(pod("fast", grace=20))
    await env.clock.advance(1)
    await env.admin.delete("pods", "slow", "default")
    await env.admin.delete("pods", "fast", "default")
    await env.clock.advance(1)
    assert not await _exists(env, "fast")  # nginx stops on SIGTERM
    await env.clock.advance(17)
    assert await _exists(env, "slow")  # a shell ignores SIGTERM: killed at the end of the grace period
    slow = await env.pod("slow")  # and, still running, it stays ready until then: 1/1 Terminating
    assert slow["status"]["containerStatuses"][0]["ready"] is True
    assert condition_status(slow, "Ready") == "True"
    await env.clock.advance(3)
    assert not await _exists(env, "slow")
    killing = [e["message"] for e in await env.events("slow") if e["reason"] == "Killing"]
    assert killing == ["Stopping container web"]


async def _exists(env: NodeEnv, name: str) -> bool:
    return any(p["metadata"]["name"] == name for p in await env.admin.list_all("pods", "default"))


async def test_logs_follow_and_tail(env: NodeEnv) -> None:
    await env.fleet(workers=1, delay_factor=0)
    await env.admin.create(pod("talker", image="busybox:1.36",
                               command=["sh", "-c", "echo one; echo two; sleep 10; echo three; sleep 5"]))
    await env.clock.advance(1)
    assert await env.admin.logs("default", "talker") == "one\ntwo\n"
    assert await env.admin.logs("default", "talker", tail_lines=1) == "two\n"
    stream = await env.admin.logs("default", "talker", follow=True)
    assert not isinstance(stream, str)
    lines: list[str] = []

    async def read() -> None:
        async for line in stream:
            lines.append(line)

    import asyncio

    reader = asyncio.create_task(read())
    await env.clock.advance(20)
    await asyncio.wait_for(reader, 5)
    assert lines == ["one", "two", "three"], "the stream ends when the program exits; only its output is logged"


async def test_kill_container_restarts_it_and_crash_loop_hook(env: NodeEnv) -> None:
    fleet = await env.fleet(workers=1, delay_factor=0)
    kubelet = fleet.kubelets["worker-1"]
    await env.admin.create(pod("victim"))
    await env.clock.advance(1)
    kubelet.kill_container("default", "victim")
    await env.clock.advance(1)
    cs = (await env.pod("victim"))["status"]["containerStatuses"][0]
    assert cs["restartCount"] == 1 and "running" in cs["state"]
    assert cs["lastState"]["terminated"]["exitCode"] == 137

    kubelet.crash_loop("default", "victim")
    await env.clock.advance(3)
    cs = (await env.pod("victim"))["status"]["containerStatuses"][0]
    assert cs["state"].get("waiting", {}).get("reason") == "CrashLoopBackOff"
    kubelet.crash_loop("default", "victim", on=False)
    await env.clock.advance(30)
    assert "running" in (await env.pod("victim"))["status"]["containerStatuses"][0]["state"]
    try:
        kubelet.kill_container("default", "nope")
    except LookupError as err:
        assert "default/nope" in str(err)
    else:
        raise AssertionError("expected a LookupError")


async def test_usage_annotations_for_pods_with_requests(env: NodeEnv) -> None:
    await env.fleet(workers=1, delay_factor=0)
    await env.admin.create(pod("busy", resources={"requests": {"cpu": "500m", "memory": "256Mi"}}))
    await env.clock.advance(16)
    ann = (await env.pod("busy"))["metadata"].get("annotations") or {}
    cpu = int(ann["kconsole.dev/cpu-usage"].rstrip("m"))
    assert 1 <= cpu <= 3, "idle, a pod uses its idle CPU whatever it requests (the HPA scales it back in)"
    assert ann["kconsole.dev/memory-usage"].endswith("Mi")
    env.fleets[0].kubelets["worker-1"].set_load("default", "busy", 1.5)
    await env.clock.advance(15)
    ann = (await env.pod("busy"))["metadata"]["annotations"]
    assert int(ann["kconsole.dev/cpu-usage"].rstrip("m")) >= 700


async def test_pods_without_requests_show_idle_usage_without_a_write(env: NodeEnv) -> None:
    """`kubectl top pods` listed nothing for a pod without requests ("metrics not available yet"
    for ever); metrics-server reports every running pod. Idle use is steady and the metrics API
    derives it, so the kubelet writes nothing for an idle pod until a load fault moves it."""
    await env.fleet(workers=1, delay_factor=0)
    await env.admin.create(pod("idle"))
    await env.admin.create(pod("half", resources={"requests": {"cpu": "1"}}))
    await env.clock.advance(16)
    idle = await env.pod("idle")
    assert "kconsole.dev/cpu-usage" not in (idle["metadata"].get("annotations") or {})
    shown = {m["metadata"]["name"]: m["containers"][0]["usage"]
             for m in await env.admin.list_all("pods.metrics.k8s.io", "default")}
    cpu_m = int(shown["idle"]["cpu"].rstrip("n")) // 1_000_000
    assert 1 <= cpu_m <= 3 and 3 * 1024 <= int(shown["idle"]["memory"].rstrip("Ki")) <= 15 * 1024
    half = (await env.pod("half"))["metadata"]["annotations"]
    assert 1 <= int(half["kconsole.dev/cpu-usage"].rstrip("m")) <= 3
    assert 3 <= int(half["kconsole.dev/memory-usage"].rstrip("Mi")) <= 15, "memory not requested: idle use"
    await env.clock.advance(60)
    assert (await env.pod("idle"))["metadata"]["resourceVersion"] == idle["metadata"]["resourceVersion"]
    kubelet = env.fleets[0].kubelets["worker-1"]
    kubelet.set_load("default", "idle", 10)
    await env.clock.advance(15)
    loaded = (await env.pod("idle"))["metadata"]["annotations"]["kconsole.dev/cpu-usage"]
    assert int(loaded.rstrip("m")) == 10 * cpu_m, "the load fault multiplies idle use"
    kubelet.set_load("default", "idle", None)
    await env.clock.advance(15)
    assert (await env.pod("idle"))["metadata"]["annotations"]["kconsole.dev/cpu-usage"] == f"{cpu_m}m"


async def test_a_kubelet_may_patch_only_usage_annotations_of_its_own_pods(env: NodeEnv) -> None:
    from kconsole.client import StatusError

    await env.fleet(workers=2, delay_factor=0)
    await env.admin.create(pod("mine"))
    await env.clock.advance(1)
    node1 = env.client_for("system:node:worker-1")
    node2 = env.client_for("system:node:worker-2")
    await node1.patch("pods", "mine", {"metadata": {"annotations": {"kconsole.dev/cpu-usage": "5m"}}}, "default")
    for client, body in ((node1, {"metadata": {"labels": {"x": "y"}}}),
                         (node2, {"metadata": {"annotations": {"kconsole.dev/cpu-usage": "9m"}}})):
        try:
            await client.patch("pods", "mine", body, "default")
        except StatusError as err:
            assert err.code == 403
        else:
            raise AssertionError(f"patch {body} should be forbidden")


async def test_active_deadline_seconds_fails_the_pod_and_stops_its_containers(env: NodeEnv) -> None:
    await env.fleet(workers=1)
    capped = pod("capped", image="busybox:1.36", command=["sleep", "3600"], grace=5)
    capped["spec"]["activeDeadlineSeconds"] = 20
    await env.admin.create(capped)
    await env.wait(lambda: _phase(env, "capped", "Running"), timeout=20)
    started = parse_time((await env.pod("capped"))["status"]["startTime"])
    await env.wait(lambda: _phase(env, "capped", "Failed"), timeout=40)
    assert 20 <= env.clock.now() - started <= 22
    p = await env.pod("capped")
    assert (p["status"]["reason"], p["status"]["message"]) == (
        "DeadlineExceeded", "Pod was active on the node longer than the specified deadline")
    await env.clock.advance(10)  # the grace period runs out: a shell ignoring SIGTERM is killed, not restarted
    p = await env.pod("capped")
    assert p["status"]["phase"] == "Failed" and "terminated" in _state(p)
    assert p["status"]["containerStatuses"][0]["restartCount"] == 0
    assert [e["message"] for e in await env.events("capped") if e["reason"] == "DeadlineExceeded"] == [
        "Pod was active on the node longer than the specified deadline"]


async def test_native_sidecars_start_in_init_order_run_beside_the_app_and_stop_when_it_is_done(env: NodeEnv) -> None:
    await env.fleet(workers=1)
    web = pod("meshed")
    web["spec"]["initContainers"] = [{"name": "proxy", "image": "envoyproxy/envoy:v1.31", "restartPolicy": "Always"},
                                     {"name": "setup", "image": "busybox:1.36", "command": ["sh", "-c", "sleep 2"]}]
    await env.admin.create(web)
    await env.wait(lambda: _phase(env, "meshed", "Running"), timeout=30)
    await env.wait(lambda: _ready(env, "meshed"), timeout=30)
    p = await env.pod("meshed")
    init = {s["name"]: s for s in p["status"]["initContainerStatuses"]}
    assert "running" in init["proxy"]["state"] and init["proxy"]["ready"] is True
    assert init["setup"]["state"]["terminated"]["exitCode"] == 0
    assert condition_status(p, "Initialized") == "True"

    job = pod("batch", image="busybox:1.36", command=["sh", "-c", "sleep 5"], restart="Never")
    job["spec"]["initContainers"] = [{"name": "proxy", "image": "envoyproxy/envoy:v1.31", "restartPolicy": "Always"}]
    await env.admin.create(job)
    await env.wait(lambda: _phase(env, "batch", "Succeeded"), timeout=40)
    await env.clock.advance(5)
    proxy = (await env.pod("batch"))["status"]["initContainerStatuses"][0]
    assert "terminated" in proxy["state"] and proxy["restartCount"] == 0


async def _ready(env: NodeEnv, name: str) -> bool:
    return condition_status(await env.pod(name), "Ready") == "True"


async def test_a_readiness_gate_condition_set_by_another_writer_makes_the_pod_ready(env: NodeEnv) -> None:
    """Ready stayed False after a controller set the gate's condition: the kubelet only recomputed
    status on its own changes. Upstream's kubelet syncs the pod on every update it sees."""
    await env.fleet(workers=1, delay_factor=0)
    gated = pod("gated")
    gated["spec"]["readinessGates"] = [{"conditionType": "example.com/lb-ready"}]
    await env.admin.create(gated)
    await env.clock.advance(5)
    assert condition_status(await env.pod("gated"), "ContainersReady") == "True"
    assert condition_status(await env.pod("gated"), "Ready") == "False"
    await env.admin.patch("pods", "gated", {"status": {"conditions": [{"type": "example.com/lb-ready",
                                                                       "status": "True"}]}},
                          "default", subresource="status", patch_type="strategic")
    await env.clock.advance(1)
    assert condition_status(await env.pod("gated"), "Ready") == "True"
