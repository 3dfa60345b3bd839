"""Simulated kubelets in worker processes (``--processes N``), supervised by the cluster.

The worker nodes are dealt round-robin to N processes (:mod:`kconsole.nodes.worker`), each one
reaching the API server over HTTPS with its nodes' own credentials, as kubelets on N machines
would; the control-plane nodes stay in the cluster's process beside the components whose static
pods they show. ``kill -9`` of a worker (the ``process-kill`` fault) takes exactly its nodes away:
their Leases stop, the node lifecycle controller marks them NotReady and later evicts their pods;
starting it again (healing the fault) brings the same nodes back, as a rebooted machine would.
A worker that dies by itself (a crash, an OOM kill, a ``kill -9`` from outside) is started again
as systemd restarts a kubelet: after :data:`RESTART_BACKOFF` simulated seconds, doubling up to
:data:`RESTART_BACKOFF_MAX` while it keeps dying within :data:`RESTART_RESET` of its start.
"""

from __future__ import annotations

import asyncio
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kconsole.clock import Clock
from kconsole.clockpipe import spawn
from kconsole.nodes.config import NodeConfig
from kconsole.nodes.worker import identities, spec_for

#: Wall seconds a worker may take to register its nodes before the start fails.
READY_TIMEOUT = 300.0
#: Wall seconds a worker gets to stop on SIGTERM before it is killed.
STOP_TIMEOUT = 10.0
#: Simulated seconds before a worker that died by itself is started again (kubeadm's kubelet unit:
#: RestartSec=10), doubling while it keeps dying ...
RESTART_BACKOFF = 10.0
RESTART_BACKOFF_MAX = 300.0
#: ... unless it ran this long (simulated seconds) before dying.
RESTART_RESET = 600.0


@dataclass
class Worker:
    index: int
    configs: list[NodeConfig]
    process: asyncio.subprocess.Process | None = None
    killed: bool = False
    output: list[str] = field(default_factory=list)
    restarts: int = 0
    started_at: float = 0.0
    backoff: float = RESTART_BACKOFF

    @property
    def name(self) -> str:
        return f"kubelet-worker-{self.index}"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.returncode is None

    @property
    def nodes(self) -> list[str]:
        return [c.name for c in self.configs]


def deal(configs: list[NodeConfig], processes: int) -> list[list[NodeConfig]]:
    """Node configs dealt round-robin to ``processes`` shares (empty shares dropped)."""
    shares: list[list[NodeConfig]] = [[] for _ in range(max(1, processes))]
    for i, config in enumerate(configs):
        shares[i % len(shares)].append(config)
    return [s for s in shares if s]


class WorkerProcesses:
    """Starts, kills and restarts the kubelet worker processes of one cluster."""

    def __init__(self, configs: list[NodeConfig], processes: int, *, server: str, ca_file: Path | None,
                 token_for: Any, clock: Clock, seed: int, delay_factor: float, proxy_pods: bool) -> None:
        self.workers = [Worker(i, share) for i, share in enumerate(deal(configs, processes))]
        self.server = server
        self.ca_pem = ca_file.read_bytes() if ca_file is not None else None
        self.token_for = token_for
        self.clock = clock
        self.seed = seed
        self.delay_factor = delay_factor
        self.proxy_pods = proxy_pods
        self.stopping = False
        self._watchers: set[asyncio.Task[None]] = set()

    def worker_of(self, node_or_worker: str) -> Worker:
        for w in self.workers:
            if node_or_worker == w.name or node_or_worker in w.nodes:
                return w
        names = ", ".join(w.name for w in self.workers)
        raise KeyError(f"no kubelet worker process hosts {node_or_worker!r} (workers: {names})")

    async def start(self) -> None:
        await asyncio.gather(*(self.start_worker(w) for w in self.workers))

    async def start_worker(self, worker: Worker) -> None:
        if worker.running:
            return
        tokens = {name: self.token_for(name) for name in identities(worker.configs)}
        spec = spec_for(self.server, self.ca_pem, tokens, self.clock.now(), self.clock.speed,
                        self.seed * 1000 + worker.index, worker.configs, delay_factor=self.delay_factor,
                        proxy_pods=self.proxy_pods)
        proc = await spawn("kconsole.nodes.worker", spec, self.clock)
        assert proc.stdout is not None
        worker.process, worker.killed = proc, False
        try:
            async with asyncio.timeout(READY_TIMEOUT):
                while True:
                    line = await proc.stdout.readline()
                    if not line:
                        raise RuntimeError(f"{worker.name} exited before its nodes registered:\n"
                                           + "".join(worker.output[-20:]))
                    text = line.decode(errors="replace")
                    if text.strip() == "ready":
                        break
                    worker.output.append(text)
        except TimeoutError:
            proc.kill()
            raise RuntimeError(f"{worker.name} did not register its nodes within {READY_TIMEOUT:g} s") from None
        worker.started_at = self.clock.now()
        loop = asyncio.get_running_loop()
        loop.create_task(self._drain(worker, proc), name=f"{worker.name}:output")
        watcher = loop.create_task(self._supervise(worker, proc), name=f"{worker.name}:supervise")
        self._watchers.add(watcher)
        watcher.add_done_callback(self._watchers.discard)

    async def _supervise(self, worker: Worker, proc: asyncio.subprocess.Process) -> None:
        """Start a worker that died by itself again after the back-off (not one the fault killed)."""
        await proc.wait()
        if self.stopping or worker.killed or worker.process is not proc:
            return
        if self.clock.now() - worker.started_at >= RESTART_RESET:
            worker.backoff = RESTART_BACKOFF
        delay, worker.backoff = worker.backoff, min(worker.backoff * 2, RESTART_BACKOFF_MAX)
        await self.clock.sleep(delay)
        if self.stopping or worker.killed or worker.running:
            return
        worker.restarts += 1
        try:
            await self.start_worker(worker)
        except RuntimeError as err:
            worker.output.append(f"restart failed: {err}\n")

    @staticmethod
    async def _drain(worker: Worker, proc: asyncio.subprocess.Process) -> None:
        """Keep the worker's output (its last lines say why it died) without letting the pipe fill."""
        assert proc.stdout is not None
        while line := await proc.stdout.readline():
            worker.output = [*worker.output[-199:], line.decode(errors="replace")]

    async def kill(self, worker: Worker) -> None:
        """``kill -9``: no goodbye, no Lease release, no status update."""
        if worker.process is None or not worker.running:
            raise RuntimeError(f"{worker.name} is not running")
        worker.killed = True  # before the signal: the supervisor must not start it again
        worker.process.send_signal(signal.SIGKILL)
        await worker.process.wait()
        worker.killed = True

    async def stop(self) -> None:
        self.stopping = True
        for task in list(self._watchers):
            task.cancel()
        for w in self.workers:
            if w.running and w.process is not None and w.process.stdin is not None:
                w.process.stdin.close()
                w.process.send_signal(signal.SIGTERM)
        for w in self.workers:
            if w.process is not None and w.process.returncode is None:
                try:
                    await asyncio.wait_for(w.process.wait(), STOP_TIMEOUT)
                except TimeoutError:
                    w.process.kill()
                    await w.process.wait()
