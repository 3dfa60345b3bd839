"""kube-scheduler and kube-controller-manager replicas as OS processes (``--replica-processes``).

``python -m kconsole.replicaproc`` reads one JSON spec on stdin (which component, its identity, the
server URL, CA and the component's bearer token, the simulated time and speed, its settings), runs
that one replica over the HTTPS client, prints ``ready`` once started and runs until stdin closes
or SIGTERM. Leader election is the same Lease in ``kube-system``, now contended over HTTPS between
processes. :class:`ReplicaProcess` is the cluster's handle on one such process, with what the fault
catalog and the console read of an in-process replica: ``identity``, ``running``, ``is_leader``,
``start()`` and ``stop()``. The spec holds a token: it is never written to disk.
"""

from __future__ import annotations

import asyncio
import base64
import random
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kconsole.clock import Clock
from kconsole.clockpipe import follow_stdin, read_spec, spawn

#: Wall seconds a replica process may take to start before its start fails.
READY_TIMEOUT = 120.0
#: Wall seconds it gets to stop on SIGTERM before it is killed.
STOP_TIMEOUT = 10.0
LEASES = {"scheduler": "kube-scheduler", "controller-manager": "kube-controller-manager"}


async def _serve(spec: dict[str, Any], pending: bytes = b"") -> None:
    from kconsole.client import Client
    from kconsole.client.https import HTTPSEntry
    from kconsole.client.kubeconfig import RestConfig
    from kconsole.clock import RealClock

    clock = RealClock(float(spec["speed"]), start=float(spec["now"]))
    rest = RestConfig(context=spec["identity"], server=spec["server"], namespace="default",
                      ca_pem=base64.b64decode(spec["ca"]) if spec["ca"] else None, token=spec["token"])
    entry = HTTPSEntry(rest, clock)
    await entry.open()
    client = Client(entry, spec["token"], clock, user_agent=f"kube-{spec['kind']}/kconsole-process")
    rng = random.Random(int(spec["seed"]))
    replica: Any
    if spec["kind"] == "scheduler":
        from kconsole.scheduler.config import parse_config
        from kconsole.scheduler.replicas import SchedulerReplica

        config = parse_config(spec["settings"]) if spec["settings"] else None
        replica = SchedulerReplica(client, clock, identity=spec["identity"], rng=rng, config=config)
    else:
        from kconsole.controllers.manager import ControllerManagerReplica

        replica = ControllerManagerReplica(client, clock, identity=spec["identity"], rng=rng,
                                           settings=spec["settings"] or {})
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    follower = loop.create_task(follow_stdin(clock, stop, pending), name="clock-follower")
    try:
        await replica.start()
        print("ready", flush=True)
        await stop.wait()
    finally:
        follower.cancel()
        await replica.stop()
        await entry.close()


class ReplicaProcess:
    """One scheduler or controller-manager replica in its own process, as the cluster sees it."""

    def __init__(self, kind: str, identity: str, *, server: str, ca_file: Path | None, token: str, clock: Clock,
                 seed: int, settings: dict[str, Any], holder: Callable[[str], str | None]) -> None:
        if kind not in LEASES:
            raise ValueError(f"replica process: unknown component {kind!r} (known: {', '.join(LEASES)})")
        self.kind = kind
        self.identity = identity
        self.server = server
        self.ca_pem = ca_file.read_bytes() if ca_file is not None else None
        self.token = token
        self.clock = clock
        self.seed = seed
        self.settings = settings
        self.holder = holder
        self.process: asyncio.subprocess.Process | None = None
        self.output: list[str] = []

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.returncode is None

    @property
    def is_leader(self) -> bool:
        """Whether its Lease names this replica (read from the cluster's cache of kube-system Leases)."""
        return self.running and self.holder(LEASES[self.kind]) == self.identity

    async def start(self) -> None:
        if self.running:
            return
        spec = {"kind": self.kind, "identity": self.identity, "server": self.server,
                "ca": base64.b64encode(self.ca_pem).decode() if self.ca_pem else "", "token": self.token,
                "now": self.clock.now(), "speed": self.clock.speed, "seed": self.seed, "settings": self.settings}
        proc = await spawn("kconsole.replicaproc", spec, self.clock)
        assert proc.stdout is not None
        self.process = proc
        try:
            async with asyncio.timeout(READY_TIMEOUT):
                while (line := await proc.stdout.readline()).strip() != b"ready":
                    if not line:
                        raise RuntimeError(f"{self.identity} exited before it started:\n" + "".join(self.output[-20:]))
                    self.output.append(line.decode(errors="replace"))
        except TimeoutError:
            proc.kill()
            raise RuntimeError(f"{self.identity} did not start within {READY_TIMEOUT:g} s") from None
        asyncio.get_running_loop().create_task(self._drain(proc), name=f"{self.identity}:output")

    async def _drain(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdout is not None
        while line := await proc.stdout.readline():
            self.output = [*self.output[-199:], line.decode(errors="replace")]

    async def stop(self) -> None:
        """As the in-process replica's stop: leave the election and stop working (SIGTERM)."""
        proc = self.process
        if proc is None or proc.returncode is not None:
            return
        if proc.stdin is not None:
            proc.stdin.close()
        proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), STOP_TIMEOUT)
        except TimeoutError:
            proc.kill()
            await proc.wait()


def main() -> int:
    spec, pending = read_spec()
    asyncio.run(_serve(spec, pending))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
