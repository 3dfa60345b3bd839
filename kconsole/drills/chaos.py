"""``kconsole drill chaos``: a random, seeded schedule of faults over a busy workload, the referee on.

A chaos run is a drill without steps: it boots the same cluster on the virtual clock, applies a
workload (two Deployments and a counter ConfigMap), then for ``duration`` simulated seconds an
operator rolls out, scales and deletes pods, compare-and-swap writers increment the counter, and a
schedule applies and heals faults from the catalog (:mod:`kconsole.faults`): etcd members (stop,
pause, partition, slow disk, the leader killed), the scheduler and controller-manager leaders,
nodes (kubelet stopped, partitioned), API errors and latency, pods killed. At most one etcd member
and one node are faulted at a time, so the cluster keeps quorum and can still converge. Afterwards
every fault is healed, the cluster settles, and the referee judges the whole run.

Everything is drawn from one ``random.Random(seed)``: the same seed replays the same schedule.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kconsole.client import StatusError
from kconsole.drills.runner import DrillRunner, RunResult
from kconsole.drills.spec import Drill, Manifest

NAMESPACE = "chaos"
#: Simulated seconds between two fault decisions (uniform), and the share of decisions that heal.
FAULT_EVERY = (3.0, 10.0)
HEAL_SHARE = 0.4
#: Simulated seconds between two operator actions, and between a writer's increments.
OPERATE_EVERY = (3.0, 12.0)
WRITE_EVERY = (0.5, 3.0)
WRITERS = 3
#: Simulated seconds the cluster gets after the last heal before the referee judges.
SETTLE = 15.0

WORKLOAD = f"""
apiVersion: v1
kind: Namespace
metadata: {{name: {NAMESPACE}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: {NAMESPACE}}}
spec:
  replicas: 4
  strategy: {{type: RollingUpdate, rollingUpdate: {{maxSurge: 1, maxUnavailable: 0}}}}
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      terminationGracePeriodSeconds: 2
      containers: [{{name: web, image: "nginx:1.25", resources: {{requests: {{cpu: 100m}}}}}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: api, namespace: {NAMESPACE}}}
spec:
  replicas: 3
  selector: {{matchLabels: {{app: api}}}}
  template:
    metadata: {{labels: {{app: api}}}}
    spec:
      terminationGracePeriodSeconds: 2
      containers: [{{name: api, image: "busybox:1.36", resources: {{requests: {{cpu: 100m}}}}}}]
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: counter, namespace: {NAMESPACE}}}
data: {{n: "0"}}
"""


@dataclass(slots=True)
class ChaosLog:
    """What the schedule did, in order, for the report and the replay."""

    lines: list[str] = field(default_factory=list)
    faults: int = 0
    operations: int = 0
    increments: int = 0  # compare-and-swap increments acknowledged
    conflicts: int = 0  # increments refused with 409 and retried


def chaos_drill(seed: int) -> Drill:
    return Drill(name="chaos", path=Path("chaos.yaml"), title="a seeded schedule of faults over a busy workload",
                 goal="the control plane keeps its guarantees whatever fails", seed=seed,
                 cluster={"nodes": 4, "control_planes": 3, "addons": ()},
                 manifests=[Manifest("workload.yaml", WORKLOAD)], files={}, steps=[])


def replay_command(seed: int, duration: float) -> str:
    from kconsole.objects.duration import format_duration

    return f"kconsole drill chaos --seed {seed} --duration {format_duration(duration)}"


class ChaosRunner(DrillRunner):
    """One seeded chaos run of ``duration`` simulated seconds."""

    def __init__(self, seed: int, duration: float, *, data_dir: Path | None = None, referee: bool = True) -> None:
        super().__init__(chaos_drill(seed), seed=seed, data_dir=data_dir, referee=referee)
        self.duration = duration
        self.rng = random.Random(seed)
        self.log = ChaosLog()
        self.pods: list[str] = []  # the workload's pods as the operator last listed them (pod-kill targets)

    def note(self, text: str) -> None:
        self.log.lines.append(f"+{self.now():.1f}s {text}")

    async def body(self) -> None:
        loop = asyncio.get_running_loop()
        end = self.now() + self.duration
        workers: list[Callable[[], Awaitable[None]]] = [self._faults, self._operate]
        workers += [self._writer] * WRITERS
        tasks = [loop.create_task(self._until(end, w, random.Random(self.rng.random()))) for w in workers]
        await self.clock.advance(self.duration)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        assert self.cluster is not None
        healed = await self.drive(self.cluster.faults.heal_all())
        if healed:
            self.note(f"healed {', '.join(f.id for f in healed)} at the end")
        await self.clock.advance(SETTLE)

    async def _until(self, end: float, work: Callable[..., Awaitable[None]], rng: random.Random) -> None:
        while self.now() < end:
            await work(rng)

    # ------------------------------------------------------------------ faults

    async def _faults(self, rng: random.Random) -> None:
        from kconsole.faults import FaultError

        await self.clock.sleep(rng.uniform(*FAULT_EVERY))
        assert self.cluster is not None
        catalog = self.cluster.faults
        active = list(catalog.active.values())
        if active and (rng.random() < HEAL_SHARE or len(active) >= 3):
            fault = rng.choice(active)
            try:
                await catalog.heal(fault.id)
                self.note(f"heal {fault.id} {fault.type} on {fault.target}")
            except FaultError as err:
                self.note(f"heal {fault.id} refused: {err}")
            return
        kind, target, params = self._pick(rng, {f.target_kind for f in active})
        if not kind:
            return
        try:
            fault = await catalog.apply(kind, target, params)
        except FaultError as err:
            self.note(f"{kind} on {target or '-'} refused: {err}")
            return
        self.log.faults += 1
        detail = f" ({fault.detail})" if fault.detail else ""
        self.note(f"apply {fault.id} {kind} on {fault.target}{detail}")

    def _pick(self, rng: random.Random, busy: set[str]) -> tuple[str, str, dict[str, str]]:
        """A fault for the schedule: not a second one on etcd members or nodes (quorum and capacity stay)."""
        assert self.cluster is not None
        members = [m.name for m in self.cluster.etcd.members] if self.cluster.etcd is not None else []
        workers = sorted(n for n in self.cluster.kubelets if n.startswith("worker"))
        menu: list[tuple[str, str, dict[str, str]]] = [
            ("kill-scheduler-leader", "leader", {}),
            ("kill-controller-manager-leader", "leader", {}),
            ("apiserver-errors", "apiserver", {"rate": f"{rng.choice((0.05, 0.1, 0.2, 0.3))}",
                                               "code": str(rng.choice((500, 503, 504, 429)))}),
            ("apiserver-latency", "apiserver", {"seconds": f"{rng.choice((0.2, 0.5, 1, 2))}"}),
            ("pod-kill", "", {}),
        ]
        if "etcd-member" not in busy and members:
            member = rng.choice(members)
            menu += [("etcd-stop", member, {}), ("etcd-kill-leader", "leader", {}), ("etcd-pause", member, {}),
                     ("etcd-partition", member, {}), ("etcd-slow-disk", member, {"seconds": "0.2"})]
        if "node" not in busy and workers:
            node = rng.choice(workers)
            menu += [("kubelet-stop", node, {}), ("node-partition", node, {})]
        kind, target, params = rng.choice(menu)
        if kind == "pod-kill":
            if not self.pods:
                return "", "", {}
            target = f"{NAMESPACE}/{rng.choice(self.pods)}"
        return kind, target, params

    # ------------------------------------------------------------------ the workload

    async def _operate(self, rng: random.Random) -> None:
        await self.clock.sleep(rng.uniform(*OPERATE_EVERY))
        client = self.client()
        what = rng.random()
        deployment = rng.choice(("web", "api"))
        try:
            if what < 0.4:
                self.log.operations += 1
                rev = self.log.operations
                await client.patch("deployments", deployment, {"spec": {"template": {"metadata": {
                    "annotations": {"chaos/revision": str(rev)}}}}}, NAMESPACE)
                self.note(f"roll out {deployment} (revision {rev})")
            elif what < 0.7:
                replicas = rng.randint(2, 6)
                self.log.operations += 1
                await client.patch("deployments", deployment, {"spec": {"replicas": replicas}}, NAMESPACE,
                                   subresource="scale")
                self.note(f"scale {deployment} to {replicas}")
            else:
                pods = await client.list_all("pods", NAMESPACE, label_selector=f"app={deployment}")
                names = sorted(p["metadata"]["name"] for p in pods if not p["metadata"].get("deletionTimestamp"))
                self.pods = names
                if names:
                    name = rng.choice(names)
                    self.log.operations += 1
                    await client.delete("pods", name, NAMESPACE)
                    self.note(f"delete pod {name}")
        except StatusError as err:
            self.note(f"operator: {err.code} {err.reason}")

    async def _writer(self, rng: random.Random) -> None:
        """Read the counter, write it back one higher, compare-and-swap on its resourceVersion."""
        await self.clock.sleep(rng.uniform(*WRITE_EVERY))
        client = self.client()
        try:
            cm = await client.get("configmaps", "counter", NAMESPACE)
            cm["data"]["n"] = str(int(cm["data"]["n"]) + 1)
            await client.update(cm)
            self.log.increments += 1
        except StatusError as err:
            if err.code == 409:
                self.log.conflicts += 1


@dataclass(slots=True)
class ChaosResult:
    seed: int
    duration: float
    run: RunResult
    log: ChaosLog
    wall: float

    @property
    def passed(self) -> bool:
        return self.run.passed

    def to_dict(self) -> dict[str, Any]:
        return {"seed": self.seed, "duration": self.duration, "passed": self.passed, "wall_seconds": round(self.wall, 2),
                "faults": self.log.faults, "operations": self.log.operations, "increments": self.log.increments,
                "conflicts": self.log.conflicts, "setup_errors": self.run.setup_errors,
                "referee": self.run.referee.to_dict() if self.run.referee is not None else None,
                "schedule": self.log.lines, "replay": replay_command(self.seed, self.duration)}


async def run_chaos(seed: int, duration: float, *, data_dir: Path | None = None) -> ChaosResult:
    import time

    runner = ChaosRunner(seed, duration, data_dir=data_dir)
    wall = time.monotonic()
    result = await runner.run()
    return ChaosResult(seed, duration, result, runner.log, time.monotonic() - wall)
