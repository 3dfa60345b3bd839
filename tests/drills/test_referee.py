"""The referee: real violations injected into a run are reported with the history that shows them;
clean runs stay silent (every built-in drill: tests/drills/test_drills.py); chaos seeds pass."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from kconsole import cli
from kconsole.drills.chaos import ChaosRunner, replay_command, run_chaos
from kconsole.drills.runner import DrillRunner
from kconsole.drills.spec import load

DRILL = """
title: referee target
goal: a small workload the tests break on purpose
cluster: {nodes: 2, addons: []}
manifests:
  - name: web.yaml
    content:
      - {apiVersion: v1, kind: Namespace, metadata: {name: t}}
      - apiVersion: apps/v1
        kind: Deployment
        metadata: {name: web, namespace: t}
        spec:
          replicas: 2
          selector: {matchLabels: {app: web}}
          template:
            metadata: {labels: {app: web}}
            spec: {containers: [{name: web, image: "nginx:1.25"}]}
      - {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: t}, data: {n: "0"}}
steps:
  - expect:
      - count: {namespace: t, selector: app=web, phase: Running}
        equals: 2
        within: 60s
"""

Inject = Callable[[DrillRunner], Awaitable[None]]


class Injecting(DrillRunner):
    """Runs the drill's steps, then ``inject`` (the violation), then lets the cluster go on a while."""

    def __init__(self, path: Path, inject: Inject) -> None:
        super().__init__(load(path))
        self.inject = inject

    async def body(self) -> None:
        await super().body()
        await self.drive(self.inject(self))
        await self.clock.advance(5)


async def run_with(tmp_path: Path, inject: Inject) -> Any:
    path = tmp_path / "d.yaml"
    path.write_text(DRILL, encoding="utf-8")
    result = await Injecting(path, inject).run()
    assert all(s.status == "passed" for s in result.steps)
    assert result.referee is not None
    return result


def _violations(result: Any, check: str) -> list[Any]:
    return [v for v in result.referee.violations if v.check == check]


async def test_clean_run_is_silent(tmp_path: Path) -> None:
    async def nothing(run: DrillRunner) -> None:
        client = run.client()
        cm = await client.get("configmaps", "c", "t")
        cm["data"]["n"] = "1"
        await client.update(cm)

    result = await run_with(tmp_path, nothing)
    assert result.passed, [str(v) for v in result.referee.violations]
    assert result.referee.events > 20 and result.referee.answers > 50


async def test_a_watch_that_skips_a_revision_is_reported(tmp_path: Path) -> None:
    """The pods watch cache drops one event on its way to watchers: the acknowledged write it carried
    is never delivered, while later revisions are."""
    async def skip(run: DrillRunner) -> None:
        assert run.cluster is not None
        cache = run.cluster.api.storage.caches["pods"]
        dispatch = cache._dispatch
        dropped: list[int] = []

        def lossy(ev: Any) -> None:
            if not dropped and ev.type == "MODIFIED" and ev.obj["metadata"].get("labels", {}).get("skip") == "me":
                dropped.append(ev.rv)
                return
            dispatch(ev)

        cache._dispatch = lossy
        client = run.client()
        pod = sorted(p["metadata"]["name"] for p in await client.list_all("pods", "t"))[0]
        await client.patch("pods", pod, {"metadata": {"labels": {"skip": "me"}}}, "t")
        await client.patch("pods", pod, {"metadata": {"labels": {"after": "skip"}}}, "t")
        assert dropped

    result = await run_with(tmp_path, skip)
    assert not result.passed
    found = _violations(result, "acknowledged write")
    assert found, [str(v) for v in result.referee.violations]
    text = str(found[0])
    assert "patch pods t/web-" in text and "the watch on pods passed rv" in text and "without delivering it" in text
    assert "acknowledged: " in text and "-> 200 rv" in text, text


async def test_a_second_lease_holder_written_through_the_api_is_reported(tmp_path: Path) -> None:
    async def usurp(run: DrillRunner) -> None:
        client = run.client()
        lease = await client.get("leases.coordination.k8s.io", "kube-scheduler", "kube-system")
        now = run.clock.rfc3339_micro()
        lease["spec"].update(holderIdentity="intruder", acquireTime=now, renewTime=now)
        await client.update(lease)

    result = await run_with(tmp_path, usurp)
    found = _violations(result, "two Lease holders")
    assert len(found) == 1, [str(v) for v in result.referee.violations]
    v = found[0]
    assert "Lease kube-system/kube-scheduler: intruder took it at rv" in v.message
    assert "renewal held it until" in v.message
    assert any("holder=intruder" in line for line in v.history)
    assert any("holder=control-plane" in line for line in v.history), v.history
    out = result.to_dict()["referee"]
    assert out["passed"] is False and out["violations"][0]["check"] == "two Lease holders"


async def test_a_pod_bound_twice_by_a_direct_write_is_reported(tmp_path: Path) -> None:
    """The API refuses to move a bound pod; a write straight into the store does not ask it. The
    referee sees the result through its watch."""
    async def rebind(run: DrillRunner) -> None:
        assert run.cluster is not None and run.cluster.etcd is not None
        client = run.client()
        pod = sorted(await client.list_all("pods", "t"), key=lambda p: p["metadata"]["name"])[0]
        nodes = sorted(n["metadata"]["name"] for n in await client.list_all("nodes"))
        other = next(n for n in nodes if n != pod["spec"]["nodeName"])
        rv = int(pod["metadata"].pop("resourceVersion"))
        pod["spec"]["nodeName"] = other
        spec = run.cluster.api.registry.get("", "pods")
        storage = run.cluster.api.storage
        key = storage.key(spec, "t", pod["metadata"]["name"])
        result = await run.cluster.etcd.update(key, storage.encode(spec, pod), rv)
        assert result.succeeded

    result = await run_with(tmp_path, rebind)
    found = _violations(result, "pod bound twice")
    assert len(found) == 1, [str(v) for v in result.referee.violations]
    assert " moved to " in found[0].message
    nodes = [line for line in found[0].history if "node=" in line]
    assert len({line.split("node=")[1].split(",")[0] for line in nodes} - {"-"}) == 2, found[0].history


async def test_a_lost_update_under_compare_and_swap_is_reported(tmp_path: Path) -> None:
    """A server whose compare-and-swap compares nothing and starts every write from the object as it
    first read it: two clients update from the same read, both are acknowledged, one increment is lost."""
    async def lose(run: DrillRunner) -> None:
        assert run.cluster is not None
        storage = run.cluster.api.storage
        txn, current = storage.txn, storage._current
        client = run.client()
        first = await client.get("configmaps", "c", "t")
        second = await client.get("configmaps", "c", "t")
        stale = dict(first)

        async def blind_txn(spec: Any, compares: Any, success: Any, failure: Any = None) -> Any:
            return await txn(spec, [] if spec.resource == "configmaps" else compares, success, failure)

        async def stale_current(spec: Any, namespace: Any, name: Any, key: Any) -> Any:
            if spec.resource == "configmaps" and name == "c":
                return stale, True, False
            return await current(spec, namespace, name, key)

        storage.txn, storage._current = blind_txn, stale_current
        first["data"] = {"n": "1", "by": "first"}
        second["data"] = {"n": "1", "by": "second"}
        await client.update(first)
        await client.update(second)
        storage.txn, storage._current = txn, current

    result = await run_with(tmp_path, lose)
    found = _violations(result, "lost update")
    assert len(found) == 1, [str(v) for v in result.referee.violations]
    assert found[0].message.startswith("update configmaps t/c based on rv ")
    assert "came in between: that write was overwritten unseen" in found[0].message
    assert sum("MODIFIED configmaps t/c" in line for line in found[0].history) >= 2, found[0].history


async def test_a_read_older_than_an_acknowledged_write_is_reported(tmp_path: Path) -> None:
    """The server answers a get (a quorum read from the store) with the object as it was before an
    acknowledged update."""
    async def stale(run: DrillRunner) -> None:
        assert run.cluster is not None
        storage = run.cluster.api.storage
        read = storage.read
        configmaps = run.cluster.api.registry.get("", "configmaps")
        stale_key = storage.key(configmaps, "t", "c")
        client = run.client()
        before = await client.get("configmaps", "c", "t")
        old = await read(configmaps, stale_key)
        before["data"]["n"] = "1"
        await client.update(before)

        async def remembered(spec: Any, key: str) -> Any:
            return old if key == stale_key else await read(spec, key)

        storage.read = remembered
        seen = await client.get("configmaps", "c", "t")
        storage.read = read
        assert seen["data"]["n"] == "0"

    result = await run_with(tmp_path, stale)
    found = _violations(result, "stale read")
    assert len(found) == 1, [str(v) for v in result.referee.violations]
    assert found[0].message.startswith("get configmaps t/c answered rv ")
    assert "acknowledged before the read came in" in found[0].message
    assert found[0].history[0].startswith("acknowledged: ") and "update configmaps t/c" in found[0].history[0]


async def test_pods_above_a_rollouts_surge_are_reported(tmp_path: Path) -> None:
    """Pods created for the Deployment's ReplicaSet behind its controller's back: 3 active pods of a
    ReplicaSet of 2 replicas; and a ReplicaSet scaled up past replicas 2 + maxSurge 25% (1)."""
    async def crowd(run: DrillRunner) -> None:
        client = run.client()
        rs = (await client.list_all("replicasets.apps", "t"))[0]
        owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs["metadata"]["name"],
                 "uid": rs["metadata"]["uid"], "controller": True}
        await client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": "extra", "namespace": "t", "labels": {"app": "web"}, "ownerReferences": [owner]},
            "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]}})
        await client.patch("replicasets.apps", rs["metadata"]["name"], {"spec": {"replicas": 4}}, "t")

    result = await run_with(tmp_path, crowd)
    found = _violations(result, "rollout above surge")
    assert len(found) == 2, [str(v) for v in result.referee.violations]
    pods, replicas = found
    assert pods.message.startswith("ReplicaSet t/web-")
    assert " of Deployment t/web: pod t/extra made its active pods 3 at rv " in pods.message
    assert pods.message.endswith("above its replicas 2")
    assert any("ADDED pods t/extra" in line for line in pods.history), pods.history
    assert replicas.message.startswith("Deployment t/web: its ReplicaSets' replicas add up to 4 at rv ")
    assert replicas.message.endswith("above replicas + maxSurge = 2 + 1")
    assert "replicas=4" in replicas.history[-1], replicas.history


async def test_without_the_referee_a_run_has_no_verdict_from_it(tmp_path: Path) -> None:
    path = tmp_path / "d.yaml"
    path.write_text(DRILL, encoding="utf-8")
    result = await DrillRunner(load(path), referee=False).run()
    assert result.passed and result.referee is None and result.to_dict()["referee"] is None


def test_cli_prints_the_referee_and_turns_it_off(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "d.yaml"
    path.write_text(DRILL, encoding="utf-8")
    assert cli.main(["drill", "run", str(path)]) == 0
    out = capsys.readouterr().out
    assert "referee: 7 checks over" in out and ": no violation" in out
    assert cli.main(["drill", "run", str(path), "--no-referee", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["referee"] is None


# --------------------------------------------------------------------------- chaos

#: CI's chaos: this many seeds of this many simulated seconds; the environment may ask for more.
CHAOS_SEEDS = int(os.environ.get("KCONSOLE_CHAOS_SEEDS", "50"))
CHAOS_DURATION = float(os.environ.get("KCONSOLE_CHAOS_DURATION", "20"))


async def test_chaos_seeds_pass_the_referee() -> None:
    failing = {}
    faults = 0
    started = time.monotonic()
    for seed in range(1, CHAOS_SEEDS + 1):
        result = await run_chaos(seed, CHAOS_DURATION)
        faults += result.log.faults
        if not result.passed:
            failing[seed] = [replay_command(seed, CHAOS_DURATION), *result.run.setup_errors,
                             *(str(v) for v in result.run.referee.violations)]
    print(f"chaos: {CHAOS_SEEDS} seeds of {CHAOS_DURATION:g} s, {faults} faults, {time.monotonic() - started:.1f} s")
    assert not failing, failing
    assert faults >= CHAOS_SEEDS, "the schedules inject faults"


async def test_the_same_seed_replays_the_same_schedule() -> None:
    first, second = ChaosRunner(7, 20), ChaosRunner(7, 20)
    a, b = await first.run(), await second.run()
    assert a.passed and b.passed
    assert first.log.lines and first.log.lines == second.log.lines
    assert [e.key() for e in a.events] == [e.key() for e in b.events]


def test_cli_chaos_names_the_replay_of_a_failing_seed(capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    assert cli.main(["drill", "chaos", "--seed", "3", "--duration", "15s"]) == 0
    assert capsys.readouterr().out.startswith("seed 3: PASSED (")
    body = ChaosRunner.body

    async def and_usurp(self: ChaosRunner) -> None:
        """The schedule, then a second scheduler Lease holder written through the API."""
        await body(self)
        client = self.client()
        lease = await self.drive(client.get("leases.coordination.k8s.io", "kube-scheduler", "kube-system"))
        now = self.clock.rfc3339_micro()
        lease["spec"].update(holderIdentity="intruder", acquireTime=now, renewTime=now)
        await self.drive(client.update(lease))

    monkeypatch.setattr(ChaosRunner, "body", and_usurp)
    assert cli.main(["drill", "chaos", "--seed", "4", "--seeds", "2", "--duration", "10s"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("seed 4: FAILED (")
    assert "VIOLATION at simulated " in out and "[two Lease holders] Lease kube-system/kube-scheduler: intruder" in out
    assert "  replay: kconsole drill chaos --seed 4 --duration 10s\n" in out
    assert "0 of 2 seeds passed in " in out and out.rstrip().endswith("; failing: 4, 5")
    assert cli.main(["drill", "chaos", "--duration", "soon"]) == 2
    assert "--duration" in capsys.readouterr().err
    assert replay_command(12, 600) == "kconsole drill chaos --seed 12 --duration 10m0s"


# --------------------------------------------------------------------------- bench drill


async def test_bench_drill_names_its_clock_and_store_and_counts_simulated_time() -> None:
    import argparse

    from kconsole.bench.drill import add_arguments, run

    p = argparse.ArgumentParser()
    add_arguments(p)
    out = await run(p.parse_args(["--only", "self-healing", "rbac"]))
    assert out["clock"] == "virtual clock" and out["store"] == "etcd"
    assert out["members"] == "3" and out["durability"] in ("synced", "unsynced")
    assert out["referee"] is True and out["drills"] == 2 and out["failed"] == []
    assert out["simulated_s"] >= 6 and out["wall_s"] > 0
    # The ratio is of the unrounded times; the printed ones are rounded, hence the tolerance.
    assert out["sim_s_per_wall_s"] == pytest.approx(out["simulated_s"] / out["wall_s"], abs=0.1)
    assert set(out["per_drill_sim_s_per_wall_s"]) == {"self-healing", "rbac"}
    with pytest.raises(SystemExit, match="no built-in drill nope"):
        await run(p.parse_args(["--only", "nope"]))
