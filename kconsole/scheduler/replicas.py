"""Scheduler replicas under leader election: only the holder of ``kube-system/kube-scheduler`` schedules.

Each replica competes for the Lease; the winner builds a :class:`Scheduler` (informers, cache,
queue) and runs it until it loses the Lease or is stopped; the others wait. Stopping the leader
hands over after the Lease expires (15 s lease, 10 s renew deadline, 2 s retry — upstream's
defaults). ``stop()``/``start()`` are what the console's failure keys call.
"""

from __future__ import annotations

import asyncio
import logging
import random
from typing import Any

from kconsole.client import LeaderElectedReplica, LeaderElector
from kconsole.clock import Clock
from kconsole.scheduler.config import SchedulerConfig
from kconsole.scheduler.scheduler import Scheduler, scheduler_recorder

log = logging.getLogger(__name__)

LEASE_NAMESPACE = "kube-system"
LEASE_NAME = "kube-scheduler"


class SchedulerReplica(LeaderElectedReplica):
    """One kube-scheduler process: leader election plus, while leading, a running Scheduler."""

    def __init__(self, client: Any, clock: Clock, *, identity: str, rng: random.Random,
                 config: SchedulerConfig | None = None, lease_duration: float = 15.0, renew_deadline: float = 10.0,
                 retry_period: float = 2.0) -> None:
        self.client = client
        self.clock = clock
        self.identity = identity
        self.rng = rng
        self.config = config or SchedulerConfig()
        self.scheduler: Scheduler | None = None
        super().__init__(LeaderElector(
            client, clock, namespace=LEASE_NAMESPACE, name=LEASE_NAME, identity=identity,
            lease_duration=lease_duration, renew_deadline=renew_deadline, retry_period=retry_period,
            on_started_leading=self._lead, on_stopped_leading=self._stopped_leading),
            task_name=f"scheduler-elector:{identity}")

    async def stop(self) -> None:
        """Stop this replica: leave the election and stop scheduling (the Lease expires for the others)."""
        await super().stop()
        await self._shutdown_scheduler()

    async def _lead(self) -> None:
        recorder = scheduler_recorder(self.client, self.clock, self.identity)
        sched = Scheduler(self.client, self.clock, rng=self.rng, config=self.config, recorder=recorder,
                          identity=self.identity)
        self.scheduler = sched
        try:
            await sched.start()
            await asyncio.Event().wait()  # lead until cancelled by the elector
        finally:
            await self._shutdown_scheduler()
            await recorder.close()

    def _stopped_leading(self) -> None:
        log.info("scheduler %s: stopped leading", self.identity)

    async def _shutdown_scheduler(self) -> None:
        sched, self.scheduler = self.scheduler, None
        if sched is not None:
            try:
                await sched.stop()
            except Exception:
                log.exception("scheduler %s: error while stopping", self.identity)
