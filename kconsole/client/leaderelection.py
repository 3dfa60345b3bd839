"""Leader election over ``coordination.k8s.io/v1`` Leases, as client-go's leaderelection package.

Several replicas of the scheduler and the controller-manager run at once; the one whose identity
is in the Lease's ``holderIdentity`` works, the others wait. A candidate takes over only when the
record has not changed for ``leaseDurationSeconds`` *by its own observation* (it remembers when it
last saw the record change), so clock skew between replicas does not matter — exactly upstream's rule.

Timings are simulated seconds: lease 15, renew deadline 10, retry 2 (upstream defaults).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from kconsole.api.types import StatusError
from kconsole.clock import Clock

from .client import Client
from .errors import is_already_exists, is_not_found

log = logging.getLogger(__name__)

LEASE_API_VERSION = "coordination.k8s.io/v1"


class LeaderElector:
    """Competes for one Lease; runs ``on_started_leading`` while holding it."""

    def __init__(self, client: Client, clock: Clock, *, namespace: str, name: str, identity: str,
                 lease_duration: float = 15.0, renew_deadline: float = 10.0, retry_period: float = 2.0,
                 on_started_leading: Callable[[], Awaitable[None]],
                 on_stopped_leading: Callable[[], None] | None = None,
                 on_new_leader: Callable[[str], None] | None = None,
                 release_on_cancel: bool = False) -> None:
        if not identity:
            raise ValueError("leader election: identity must not be empty")
        if not lease_duration > renew_deadline:
            raise ValueError(f"leader election: lease_duration ({lease_duration}) must be greater than "
                             f"renew_deadline ({renew_deadline})")
        if not renew_deadline > retry_period:
            raise ValueError(f"leader election: renew_deadline ({renew_deadline}) must be greater than "
                             f"retry_period ({retry_period})")
        if retry_period <= 0:
            raise ValueError(f"leader election: retry_period must be positive, got {retry_period}")
        self.client = client
        self.clock = clock
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.on_started_leading = on_started_leading
        self.on_stopped_leading = on_stopped_leading
        self.on_new_leader = on_new_leader
        self.release_on_cancel = release_on_cancel
        self._observed: dict[str, Any] | None = None  # the Lease spec last seen
        self._lease: dict[str, Any] | None = None  # the Lease as our last write left it
        self._observed_rv: str | None = None
        self._observed_time = 0.0  # clock.monotonic() when the record last changed
        self._reported_leader = ""
        self._leading = False
        self._work: asyncio.Task[None] | None = None
        self._stopping = False
        self._run_task: asyncio.Task[None] | None = None
        #: Terms won, for the console and tests.
        self.terms = 0

    # ------------------------------------------------------------------ public state

    @property
    def is_leader(self) -> bool:
        return self._leading

    @property
    def leader_identity(self) -> str:
        """Holder of the Lease as last observed ("" when unknown or released)."""
        return str((self._observed or {}).get("holderIdentity") or "")

    # ------------------------------------------------------------------ main loop

    async def run(self) -> None:
        """Acquire, lead, and on losing the Lease compete again, until :meth:`stop`.

        (Upstream components exit when they lose the Lease and get restarted; competing again is
        the same thing without the restart.)
        """
        self._run_task = asyncio.current_task()
        self._stopping = False
        try:
            while not self._stopping:
                await self._acquire()
                await self._lead()
        except asyncio.CancelledError:
            if not self._stopping:
                raise
        finally:
            await self._step_down()

    async def stop(self) -> None:
        """Stop competing; when leading, stop the work and (with ``release_on_cancel``) release."""
        self._stopping = True
        was_leading = self._leading
        task = self._run_task
        if task is not None and task is not asyncio.current_task() and not task.done():
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
        await self._step_down()
        if was_leading and self.release_on_cancel:
            await self._release()

    async def _acquire(self) -> None:
        while True:
            if await self._try_acquire_or_renew():
                log.info("%s: acquired lease %s/%s", self.identity, self.namespace, self.name)
                return
            await self.clock.sleep(self.retry_period)

    async def _lead(self) -> None:
        self._leading = True
        self.terms += 1
        self._work = asyncio.create_task(self._do_work(), name=f"leader:{self.name}:{self.identity}")
        try:
            while True:
                await self.clock.sleep(self.retry_period)
                if not await self._renew():
                    log.warning("%s: failed to renew lease %s/%s within %.0f s; stepping down",
                                self.identity, self.namespace, self.name, self.renew_deadline)
                    return
        finally:
            await self._step_down()

    async def _renew(self) -> bool:
        """Try every retry_period until renewed or renew_deadline passes (or someone else holds it)."""
        deadline = self.clock.monotonic() + self.renew_deadline
        while True:
            if await self._try_acquire_or_renew():
                return True
            if self.leader_identity not in ("", self.identity):
                return False  # another holder was observed: we are not the leader any more
            remaining = deadline - self.clock.monotonic()
            if remaining <= 0:
                return False
            await self.clock.sleep(min(self.retry_period, remaining))

    async def _do_work(self) -> None:
        try:
            await self.on_started_leading()
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - the work's failure is logged; leadership is unaffected
            log.exception("%s: on_started_leading failed", self.identity)

    async def _step_down(self) -> None:
        if not self._leading:
            return
        self._leading = False
        work, self._work = self._work, None
        if work is not None and not work.done():
            work.cancel()
            try:
                await work
            except asyncio.CancelledError:
                pass
        if self.on_stopped_leading is not None:
            try:
                self.on_stopped_leading()
            except Exception:  # noqa: BLE001
                log.exception("%s: on_stopped_leading failed", self.identity)

    # ------------------------------------------------------------------ one attempt

    def _record(self, *, acquire_time: str, transitions: int) -> dict[str, Any]:
        now = self.clock.rfc3339_micro()
        return {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": max(1, int(round(self.lease_duration))),
            "acquireTime": acquire_time or now,
            "renewTime": now,
            "leaseTransitions": transitions,
        }

    def _observe(self, spec: dict[str, Any], rv: str | None) -> None:
        if spec != self._observed:
            self._observed = dict(spec)
            self._observed_time = self.clock.monotonic()
        self._observed_rv = rv
        holder = str(spec.get("holderIdentity") or "")
        if holder != self._reported_leader:
            self._reported_leader = holder
            if holder and self.on_new_leader is not None:
                try:
                    self.on_new_leader(holder)
                except Exception:  # noqa: BLE001
                    log.exception("%s: on_new_leader failed", self.identity)

    async def _try_acquire_or_renew(self) -> bool:
        if self._leading and self._lease is not None and await self._renew_optimistically(self._lease):
            return True
        try:
            lease = await self.client.get("leases", self.name, self.namespace)
        except StatusError as err:
            if not is_not_found(err):
                log.warning("%s: error retrieving lease %s/%s: %s", self.identity, self.namespace, self.name, err)
                return False
            return await self._create()
        spec = dict(lease.get("spec") or {})
        meta = lease.get("metadata") or {}
        self._observe(spec, meta.get("resourceVersion"))
        holder = str(spec.get("holderIdentity") or "")
        duration = float(spec.get("leaseDurationSeconds") or self.lease_duration)
        if holder and holder != self.identity and self._observed_time + duration > self.clock.monotonic():
            return False
        if holder == self.identity:
            record = self._record(acquire_time=str(spec.get("acquireTime") or ""),
                                  transitions=int(spec.get("leaseTransitions") or 0))
        else:
            record = self._record(acquire_time="", transitions=int(spec.get("leaseTransitions") or 0) + 1)
        updated = {
            "apiVersion": LEASE_API_VERSION,
            "kind": "Lease",
            "metadata": {**meta},
            "spec": {**spec, **record},
        }
        try:
            result = await self.client.update(updated)
        except StatusError as err:
            log.info("%s: failed to update lease %s/%s: %s", self.identity, self.namespace, self.name, err)
            return False
        self._lease = result
        self._observe(result.get("spec") or record, (result.get("metadata") or {}).get("resourceVersion"))
        return True

    async def _renew_optimistically(self, lease: dict[str, Any]) -> bool:
        """client-go's fast path: while the lease is valid by our own observation, the leader updates
        the Lease it last wrote without reading it first; a conflict falls back to read-then-write."""
        duration = float((self._observed or {}).get("leaseDurationSeconds") or self.lease_duration)
        if self._observed_time + duration <= self.clock.monotonic():
            return False
        spec = dict(lease.get("spec") or {})
        record = self._record(acquire_time=str(spec.get("acquireTime") or ""),
                              transitions=int(spec.get("leaseTransitions") or 0))
        try:
            result = await self.client.update({**lease, "spec": {**spec, **record}})
        except StatusError as err:
            log.info("%s: failed to update lease %s/%s optimistically: %s", self.identity, self.namespace,
                     self.name, err)
            self._lease = None
            return False
        self._lease = result
        self._observe(result.get("spec") or record, (result.get("metadata") or {}).get("resourceVersion"))
        return True

    async def _create(self) -> bool:
        record = self._record(acquire_time="", transitions=0)
        lease = {
            "apiVersion": LEASE_API_VERSION,
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": record,
        }
        try:
            result = await self.client.create(lease)
        except StatusError as err:
            if not is_already_exists(err):
                log.warning("%s: error creating lease %s/%s: %s", self.identity, self.namespace, self.name, err)
            return False
        self._lease = result
        self._observe(result.get("spec") or record, (result.get("metadata") or {}).get("resourceVersion"))
        return True

    async def _release(self) -> None:
        """Give the Lease up at once (ReleaseOnCancel): others need not wait for it to expire."""
        try:
            lease = await self.client.get("leases", self.name, self.namespace)
            spec = dict(lease.get("spec") or {})
            if spec.get("holderIdentity") != self.identity:
                return
            now = self.clock.rfc3339_micro()
            lease = {**lease, "spec": {**spec, "holderIdentity": "", "leaseDurationSeconds": 1,
                                       "acquireTime": now, "renewTime": now}}
            result = await self.client.update(lease)
            self._observe(result.get("spec") or {}, (result.get("metadata") or {}).get("resourceVersion"))
        except StatusError as err:
            log.warning("%s: failed to release lease %s/%s: %s", self.identity, self.namespace, self.name, err)


class LeaderElectedReplica:
    """One replica of a leader-elected component: starting competes for the Lease, stopping is a crash.

    The scheduler and the controller-manager replicas share this lifecycle; a subclass builds its
    :class:`LeaderElector` (whose ``on_started_leading`` does the component's work) and hands it here.
    Stopping does not release the Lease, so the others take over only once it expires, as after a crash.
    """

    def __init__(self, elector: LeaderElector, *, task_name: str) -> None:
        self.elector = elector
        self._task_name = task_name
        self._task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        """The process is up (competing or leading)."""
        return self._task is not None and not self._task.done()

    @property
    def is_leader(self) -> bool:
        return self.elector.is_leader

    async def start(self) -> None:
        """Start competing for the Lease (no-op when already running)."""
        if self.running:
            return
        self._task = asyncio.get_running_loop().create_task(self.elector.run(), name=self._task_name)

    async def stop(self) -> None:
        """No more renewals and the leader's work cancelled; the Lease expires on its own."""
        task, self._task = self._task, None
        if task is None:
            return
        await self.elector.stop()
        if not task.done():
            task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
