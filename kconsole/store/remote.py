"""etcd members in their own processes (``--member-processes``), as the facade sees them.

:class:`RemoteMember` has what :class:`~kconsole.store.facade.EtcdCluster`, the fault catalog and the
console use of an in-process :class:`~kconsole.store.members.Member` (propose, read index, waits,
reads, watches, status, stop/start, pause, slow disk, leader transfer), carried over one loopback
connection to a ``kconsole.store.memberproc`` process. So the facade, and everything above it, is
the same for both. The member's role, term, applied index and revision are mirrored from what the
process pushes after each change; a transaction's answer moves the mirrored revision too, before
the caller sees it.

``stop()`` is a crash, a real SIGKILL: the next ``start()`` runs a new process that replays the
member's WAL and reopens its SQLite file. A process that dies by itself is started again after a
back-off, as the kubelet restarts a static pod; one a fault stopped stays stopped. :class:`ProcessNetwork` keeps the faults of the peer
network (partitions, delay, drop) in the parent, for the quorum line and the console, and hands
every change to each member process, where its :class:`~kconsole.store.memberproc.PeerNetwork`
applies them to real sockets.

History reads (the timeline) are asked of the leader's process; the time marks they are located by
are copied here (:class:`RemoteHistory`).
"""

from __future__ import annotations

import asyncio
import bisect
import dataclasses
import logging
import os
import random
import sqlite3
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from kconsole.clock import Clock, TimerHandle
from kconsole.store import wire
from kconsole.store.kv import (
    DEFAULT_QUOTA_BYTES,
    Event,
    RangeResult,
    Status,
    StoreError,
    UnavailableError,
    WatchResponse,
)
from kconsole.store.members import VERSION, MemberStatus, RaftConfig, member_id
from kconsole.store.network import Network
from kconsole.store.raft import codec
from kconsole.store.raft.codec import Command
from kconsole.store.raft.core import Role
from kconsole.store.revlog import RevisionLog

log = logging.getLogger(__name__)

MODULE = "kconsole.store.memberproc"
#: Wall seconds a member process may take to open its files and listen.
READY_TIMEOUT = 120.0
#: Wall seconds a member process gets to close its files when the cluster closes.
STOP_TIMEOUT = 5.0
#: Wall seconds a member process has to answer a status request before it counts as not answering.
STATUS_TIMEOUT = 2.0
#: A member process that dies by itself (killed from outside, its disk full) is started again as the
#: kubelet restarts a static pod: after this many simulated seconds, doubling up to
#: :data:`RESTART_BACKOFF_MAX` while it keeps dying within :data:`RESTART_RESET` of its start.
RESTART_BACKOFF = 10.0
RESTART_BACKOFF_MAX = 300.0
RESTART_RESET = 600.0

_STOPPED = "etcdserver: server stopped"


class ProcessNetwork(Network):
    """The peer network's faults, kept here and pushed to every member process."""

    def __init__(self, clock: Clock, rng: random.Random) -> None:
        super().__init__(clock, rng)
        self.members: dict[int, RemoteMember] = {}

    def attach(self, member: RemoteMember) -> None:
        self.members[member.id] = member
        self.register(member.id, lambda _msg: None)
        addresses = self.addresses()
        for m in self.members.values():
            m.tell(("peers", addresses))
        member.tell(self._faults())

    def detach(self, member: RemoteMember) -> None:
        self.unregister(member.id)

    def addresses(self) -> dict[str, str]:
        return {str(m.id): m.address for m in self.members.values() if m.running and m.address}

    def _faults(self) -> tuple[Any, ...]:
        return ("net", list(self._side.items()), [(s, d, f.delay, f.drop) for (s, d), f in self.links.items()],
                self.delay, self.jitter, self.drop)

    def _push(self) -> None:
        faults = self._faults()
        for m in self.members.values():
            m.tell(faults)

    def set_conditions(self, *, delay: float | None = None, jitter: float | None = None,
                       drop: float | None = None) -> None:
        super().set_conditions(delay=delay, jitter=jitter, drop=drop)
        self._push()

    def set_link(self, src: int, dst: int, *, delay: float = 0.0, drop: float = 0.0) -> None:
        super().set_link(src, dst, delay=delay, drop=drop)
        self._push()

    def partition(self, *groups: Any) -> None:
        super().partition(*groups)
        self._push()

    def heal(self) -> None:
        super().heal()
        self._push()

    def send(self, msg: Any) -> None:
        raise RuntimeError("members in processes send Raft messages between themselves")


class RemoteHistory:
    """History reads on the member's revision log: ranges and changes are asked of the process;
    the time marks are copied here as the process pushes them, so the questions the API asks
    without waiting (the time of a revision, the revision at a time, the floor compaction keeps)
    are answered by the revision log's own code over the copy."""

    time_of = RevisionLog.time_of
    revision_at = RevisionLog.revision_at
    floor_for = RevisionLog.floor_for
    history_bytes = RevisionLog.history_bytes
    history_floor = RevisionLog.history_floor

    def __init__(self, member: RemoteMember) -> None:
        self.member = member
        self._mark_revs: list[int] = []
        self._mark_times: list[float] = []
        self._mark_bytes: list[int] = []
        self._history_floor = 0
        self._written_bytes = 0

    @property
    def _revision(self) -> int:
        machine = self.member.machine
        return machine.revision if machine is not None else 0

    @property
    def revision(self) -> int:
        return self._revision

    def take(self, floor: int, written: int, first: int, head: int, new: list[tuple[int, float, int]]) -> None:
        """Apply one push: marks after ``head`` were taken back, those below ``first`` dropped."""
        revs = self._mark_revs
        while revs and revs[-1] > head:
            revs.pop()
            self._mark_times.pop()
            self._mark_bytes.pop()
        for rev, time, before in new:
            revs.append(rev)
            self._mark_times.append(time)
            self._mark_bytes.append(before)
        drop = bisect.bisect_left(revs, first)
        if drop:
            del revs[:drop], self._mark_times[:drop], self._mark_bytes[:drop]
        self._history_floor, self._written_bytes = floor, written

    async def range(self, key: str, end: str | None = None, *, revision: int = 0, limit: int = 0,
                    history: bool = True, **_: Any) -> RangeResult:
        result = await self.member.request(("hr", key, end, revision, limit))
        assert isinstance(result, RangeResult)
        return result

    async def changes(self, key: str, end: str | None, after: int, upto: int, limit: int = 0,
                      by_name: bool = False) -> list[Event]:
        return wire.unpack_events(await self.member.request(("hc", key, end, after, upto, limit, by_name)))


class RemoteMachine:
    """The member's state machine as the facade reads it: a mirrored revision, reads and status."""

    def __init__(self, member: RemoteMember) -> None:
        self.member = member
        self.revision = 0
        self.kv = RemoteKV(member)
        self.log = RemoteHistory(member)

    async def status(self) -> Status:
        t = await self.member.request(("ms",))
        return Status(*t)

    async def close(self) -> None:
        return None


class RemoteKV:
    """Serializable reads and watches on the member's own revision log."""

    def __init__(self, member: RemoteMember) -> None:
        self.member = member

    @property
    def revision(self) -> int:
        return self.member.machine.revision if self.member.machine is not None else 0

    async def range(self, key: str, end: str | None = None, *, revision: int = 0, limit: int = 0,
                    count_only: bool = False, keys_only: bool = False, serializable: bool = True) -> RangeResult:
        result = await self.member.request(("g", key, end, revision, limit, count_only, keys_only))
        assert isinstance(result, RangeResult)
        return result

    def watch(self, key: str, end: str | None = None, *, start_revision: int = 0, prev_kv: bool = True,
              progress_notify: bool = False) -> RemoteWatch:
        return RemoteWatch(self.member, key, end, start_revision, prev_kv, progress_notify)


class RemoteWatch:
    """A watch on the member process's revision log. :meth:`settled` holds when every response it
    sent was read here and the process last reported its watcher settled at the mirrored revision."""

    def __init__(self, member: RemoteMember, key: str, end: str | None, start: int, prev_kv: bool,
                 progress: bool) -> None:
        self.member = member
        self.wid = member.next_id()
        self.queue: asyncio.Queue[WatchResponse | None] = asyncio.Queue()
        self.settled_at = -1
        self.active = True
        self.progress = progress
        self.fed = start - 1  # every event up to this revision was queued here
        member.watches[self.wid] = self
        member.tell(("w", self.wid, key, end, start, prev_kv, progress))

    def feed(self, resp: WatchResponse | None) -> None:
        self.settled_at = -1
        if resp is None:
            self.active = False
        elif resp.revision > self.fed:
            self.fed = resp.revision
        self.queue.put_nowait(resp)

    def settled_in_process(self, revision: int) -> None:
        """The process's watcher had handed over every event up to ``revision``. The reader learns
        it as a progress notification (as etcd's), so a cache waiting on the revision of a write
        elsewhere does not wait for this watch's next event."""
        if self.progress and revision > self.fed and self.active:
            self.feed(WatchResponse([], revision, progress=True))
        if self.queue.empty():
            self.settled_at = revision

    def settled(self) -> bool:
        machine = self.member.machine
        return (self.active and self.queue.empty() and machine is not None
                and self.settled_at >= machine.revision)

    def __aiter__(self) -> AsyncIterator[WatchResponse]:
        return self

    async def __anext__(self) -> WatchResponse:
        resp = await self.queue.get()
        if resp is None:
            self.active = False
            raise StopAsyncIteration
        return resp

    async def aclose(self) -> None:
        if self.member.watches.pop(self.wid, None) is not None:
            self.member.tell(("wc", self.wid))
        self.active = False


async def _wait_or_kill(proc: asyncio.subprocess.Process, timeout: float) -> None:
    """Give a member's process ``timeout`` seconds to end by itself (closing its files), then kill it."""
    try:
        async with asyncio.timeout(timeout):
            await proc.wait()
    except TimeoutError:
        proc.kill()
        await proc.wait()


class RemoteMember:
    """One etcd member in its own process; the attributes of :class:`~kconsole.store.members.Member`
    that the facade, the faults and the console read are mirrored here."""

    def __init__(self, name: str, endpoint: str, peers: list[int], *, clock: Clock, network: ProcessNetwork,
                 folder: Path, seed: int, fsync: bool, synchronous: str, config: RaftConfig | None = None,
                 mid: int | None = None) -> None:
        self.name = name
        self.endpoint = endpoint
        self.id = mid if mid is not None else member_id(name)
        self.peers = peers
        self.clock = clock
        self.network = network
        self.folder = folder
        self.seed = seed
        self.fsync = fsync
        self.synchronous = synchronous
        self.config = config or RaftConfig()
        self.running = False
        self.paused = False
        self.disk_latency = 0.0
        self.applied = 0
        self.alarms = 0
        self.errors: list[str] = []
        self.failure: BaseException | None = None
        self.last_commit_latency = 0.0
        self.leader_changes = 0
        self.storage = None  # the WAL is the process's own (the disk reserve counts it there)
        self.machine: RemoteMachine | None = None
        self.process: asyncio.subprocess.Process | None = None
        self.address = ""  # where the process listens (``127.0.0.1:PORT``)
        self.watches: dict[int, RemoteWatch] = {}
        self.on_change: Callable[[], None] = lambda: None
        self._role: Role | None = None
        self._term = 0
        self._lead = 0
        self._ids = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._out: wire.Outbox | None = None
        self._batch: tuple[list[int], list[Any]] | None = None  # this turn's proposals, one message
        self._tasks: list[asyncio.Task[None]] = []
        self._resumed: list[asyncio.Future[None]] = []
        self._starting: asyncio.Lock | None = None
        self._closing = False  # shutting down: the process stopping its member is expected
        self._killing = False  # a fault's SIGKILL is under way: the process ending is expected
        self.started_at = 0.0
        self.restarts = 0
        self._backoff = RESTART_BACKOFF
        self._restart: TimerHandle | None = None

    # ----- lifecycle ---------------------------------------------------------------------------
    def spec(self) -> dict[str, Any]:
        return {"name": self.name, "id": self.id, "ids": self.peers, "endpoint": self.endpoint,
                "dir": str(self.folder), "fsync": self.fsync, "synchronous": self.synchronous,
                "seed": self.seed, "config": dataclasses.asdict(self.config), "peers": self.network.addresses(),
                "now": self.clock.now(), "speed": self.clock.speed}

    async def start(self) -> None:
        """Start the member's process; it opens (or replays) its files, then joins its peers."""
        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:
            if self.running:
                return
            await self._reap()
            from kconsole.clockpipe import spawn

            self.folder.mkdir(parents=True, exist_ok=True)
            self.failure = None
            proc = self.process = await spawn(MODULE, self.spec(), self.clock)
            assert proc.stdout is not None
            lines: list[str] = []
            address = ""
            try:
                async with asyncio.timeout(READY_TIMEOUT):
                    while not address:
                        raw = await proc.stdout.readline()
                        if not raw:
                            break
                        line = raw.decode(errors="replace").rstrip()
                        if line.startswith("ready "):
                            address = line.split()[1]
                        else:
                            lines.append(line)
            except TimeoutError:
                lines.append(f"not ready within {READY_TIMEOUT:g} s")
            if not address:
                await self._reap()
                why = next((ln[len("failed "):] for ln in lines if ln.startswith("failed ")), None)
                text = why or "; ".join(lines[-5:]) or "exited before it was ready"
                if why and why.startswith(("DatabaseError", "OperationalError", "WalCorrupt")):
                    raise sqlite3.DatabaseError(text)
                raise StoreError(f"etcd member {self.name} process: {text}")
            protocol = await wire.connect(address, self._handle)
            assert protocol.transport is not None
            protocol.transport.write(wire.hello("client"))
            self._out = wire.Outbox(protocol.transport)
            self._out.before_flush = self._end_batch
            self._batch = None
            self.address = address
            self.machine = RemoteMachine(self)
            self.running = True
            self.paused = False
            loop = asyncio.get_running_loop()
            self._tasks = [loop.create_task(self._read(protocol), name=f"{self.name}-client"),
                           loop.create_task(self._relay(proc), name=f"{self.name}-output")]
            self.network.attach(self)
            self.started_at = self.clock.now()
            if self._restart is not None:
                self._restart.cancel()
                self._restart = None
            if self.disk_latency:
                self.tell(("slow", self.disk_latency))
            self.on_change()

    async def stop(self) -> None:
        """Crash: SIGKILL the process; its files stay for :meth:`start` (nothing restarts it)."""
        if self._restart is not None:
            self._restart.cancel()
            self._restart = None
        if not self.running:
            return
        proc = self.process
        self._killing = True
        try:
            if proc is not None and proc.returncode is None:
                proc.kill()
                await proc.wait()
        finally:
            self._killing = False
        self._gone(UnavailableError(_STOPPED))

    async def shutdown(self) -> None:
        """Stop for good: the process closes its files (stdin closes), else it is killed."""
        proc = self.process
        self._closing = True
        if self._restart is not None:
            self._restart.cancel()
            self._restart = None
        if proc is not None and proc.returncode is None:
            if proc.stdin is not None:
                proc.stdin.close()
            await _wait_or_kill(proc, STOP_TIMEOUT)
        self._gone(UnavailableError(_STOPPED))
        await self._reap()
        self._closing = False

    async def _reap(self) -> None:
        proc = self.process
        if proc is not None and proc.returncode is None:
            proc.kill()
            await proc.wait()
        for task in self._tasks:
            task.cancel()
        self._tasks = []

    def _gone(self, err: BaseException) -> None:
        """The process is gone (killed, or it ended by itself): fail what waits on it."""
        was = self.running
        self.running = False
        self.paused = False
        self._role, self._lead = None, 0
        if self._out is not None:
            self._out.close()
            self._out = None
        self._batch = None
        pending, self._pending = self._pending, {}
        for fut in pending.values():
            if not fut.done():
                fut.set_exception(err)
        watches, self.watches = self.watches, {}
        for w in watches.values():
            w.feed(None)
        self._wake_resumed()
        self.network.detach(self)
        if was:
            self.on_change()

    async def _read(self, protocol: wire.FrameProtocol) -> None:
        err = await protocol.closed
        if protocol.refused is not None:
            self.errors.append(f"member process connection refused: {err}")
        if self.running and not self._closing and not self._killing:
            proc = self.process
            if proc is not None:
                await _wait_or_kill(proc, STATUS_TIMEOUT)
            code = proc.returncode if proc is not None else None
            self.errors.append(f"member process ended by itself (exit code {code})")
            self.failure = StoreError(self.errors[-1])
            self._gone(UnavailableError(_STOPPED))
            self._restart_later()

    def _restart_later(self) -> None:
        """Start the member again after the back-off (not one a fault or the cluster stopped)."""
        if self.clock.now() - self.started_at >= RESTART_RESET:
            self._backoff = RESTART_BACKOFF
        delay, self._backoff = self._backoff, min(self._backoff * 2, RESTART_BACKOFF_MAX)
        loop = asyncio.get_running_loop()
        self._restart = self.clock.call_later(delay, lambda: loop.create_task(self._restart_now()))

    async def _restart_now(self) -> None:
        self._restart = None
        if self.running or self._closing:
            return
        self.restarts += 1
        try:
            await self.start()
        except (StoreError, OSError, sqlite3.Error) as err:
            self.errors.append(f"restart failed: {err}")
            self._restart_later()

    async def _relay(self, proc: asyncio.subprocess.Process) -> None:
        """The process's own output (warnings, tracebacks) goes to this process's log."""
        assert proc.stdout is not None
        while line := await proc.stdout.readline():
            log.warning("%s: %s", self.name, line.decode(errors="replace").rstrip())

    @property
    def restart_scheduled(self) -> bool:
        """Whether the member is due to be started again after dying by itself."""
        return self._restart is not None

    async def _crashed_by_itself(self, why: StoreError) -> None:
        """The member stopped inside its process (a failed disk): end the process, start it later."""
        await self.stop()
        self.failure = why
        self._restart_later()

    # ----- the connection ----------------------------------------------------------------------
    def next_id(self) -> int:
        self._ids += 1
        return self._ids

    def tell(self, message: tuple[Any, ...]) -> None:
        if self._out is not None:
            self._out.put(message)

    def _call(self, message: tuple[Any, ...]) -> asyncio.Future[Any]:
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if not self.running or self._out is None:
            fut.set_exception(UnavailableError(_STOPPED))
            return fut
        rid = self.next_id()
        self._pending[rid] = fut
        self._out.put((message[0], rid, *message[1:]))
        return fut

    async def request(self, message: tuple[Any, ...]) -> Any:
        return await self._call(message)

    def _handle(self, m: Any) -> None:
        op = m[0]
        if op == "R":
            self._answers(m[1], m[2])
        elif op == "r":
            self._answers([m[1]], [m[2]])
        elif op == "x":
            fut = self._pending.pop(m[1], None)
            if fut is not None and not fut.done():
                fut.set_exception(wire.unpack_error(m[2]))
        elif op == "st":
            self._mirror(m[1])
        elif op == "hm":
            if self.machine is not None:
                self.machine.log.take(*m[1:])
        elif op == "we":
            w = self.watches.get(m[1])
            if w is not None:
                w.feed(wire.unpack_watch(m[2]))
        elif op == "wx":
            w = self.watches.pop(m[1], None)
            if w is not None:
                w.feed(None)

    def _answers(self, rids: list[int], results: list[Any]) -> None:
        """Outcomes of requests (a batch of proposals, or one answer); a transaction's revision moves
        the mirror first."""
        pending, machine = self._pending, self.machine
        unpack, txn = wire.unpack_result, wire.TxnResult
        for rid, packed in zip(rids, results):
            result = unpack(packed)
            fut = pending.pop(rid, None)
            if type(result) is txn:
                if machine is not None and result.revision > machine.revision:
                    machine.revision = result.revision
            elif isinstance(result, BaseException):
                if fut is not None and not fut.done():
                    fut.set_exception(result)
                continue
            if fut is not None and not fut.done():
                fut.set_result(result)

    def _mirror(self, state: tuple[Any, ...]) -> None:
        running, paused, role, term, lead, applied, revision, alarms, changes, latency, errors, settled = state
        seen = (self._role, self._term, self._lead, self.paused)
        self._role = Role(role) if role is not None else None
        self._term, self._lead = term, lead
        self.paused = paused
        self.applied = max(self.applied, applied) if running else applied
        if self.machine is not None and revision > self.machine.revision:
            self.machine.revision = revision
        self.alarms = alarms
        self.leader_changes = changes
        self.last_commit_latency = latency
        for text in errors:
            if text not in self.errors:
                self.errors.append(text)
        for wid in settled:
            w = self.watches.get(wid)
            if w is not None:
                w.settled_in_process(revision)
        if not paused:
            self._wake_resumed()
        if not running and self.running and not self._closing:
            why = StoreError(errors[-1] if errors else "member stopped")
            asyncio.get_running_loop().create_task(self._crashed_by_itself(why))
            return
        if (self._role, self._term, self._lead, self.paused) != seen:
            self.on_change()

    # ----- what the facade calls ---------------------------------------------------------------
    @property
    def role(self) -> Role | None:
        return self._role if self.running else None

    @property
    def is_leader(self) -> bool:
        return self.running and self._role is Role.LEADER

    @property
    def term(self) -> int:
        return self._term

    @property
    def leader_id(self) -> int:
        return self._lead if self.running else 0

    @property
    def kv(self) -> RemoteKV:
        if not self.running or self.machine is None:
            raise UnavailableError(_STOPPED)
        return self.machine.kv

    def propose(self, command: Command, now: float | None = None) -> asyncio.Future[Any]:
        """Proposals of one loop turn travel as one ``("P", rids, commands)`` message."""
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        out = self._out
        if not self.running or out is None:
            fut.set_exception(UnavailableError(_STOPPED))
            return fut
        self._ids += 1
        self._pending[self._ids] = fut
        batch = self._batch
        if batch is None:
            batch = self._batch = ([], [])
            out.put(("P", *batch))
        batch[0].append(self._ids)
        batch[1].append(codec.to_wire(command))
        return fut

    def _end_batch(self) -> None:
        self._batch = None

    def read_index(self) -> asyncio.Future[int]:
        """The leader's read index, answered once the member applied up to it."""
        fut = self._call(("ri",))

        def applied(f: asyncio.Future[Any]) -> None:
            if not f.cancelled() and f.exception() is None:
                self.applied = max(self.applied, f.result())

        fut.add_done_callback(applied)
        return fut

    def wait_applied(self, index: int) -> asyncio.Future[None]:
        if self.running and self.applied >= index:
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            fut.set_result(None)
            return fut
        return self._call(("wa", index))

    def wait_applied_revision(self, revision: int) -> asyncio.Future[None]:
        if self.running and self.machine is not None and self.machine.revision >= revision:
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            fut.set_result(None)
            return fut
        return self._call(("ar", revision))

    def wait_resumed(self) -> asyncio.Future[None]:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if not self.paused:
            fut.set_result(None)
        else:
            self._resumed.append(fut)
        return fut

    def _wake_resumed(self) -> None:
        waiting, self._resumed = self._resumed, []
        for fut in waiting:
            if not fut.done():
                fut.set_result(None)

    def pause(self) -> None:
        """Alive but silent (the member stops ticking, stepping and applying, as in process)."""
        if self.running:
            self.paused = True
            self.tell(("pause",))

    def resume(self) -> None:
        self.paused = False
        self.tell(("resume",))
        self._wake_resumed()

    def slow_disk(self, latency_s: float) -> None:
        if latency_s < 0:
            raise ValueError("disk latency must not be negative")
        self.disk_latency = latency_s
        self.tell(("slow", latency_s))

    def transfer_leadership(self, to: int) -> None:
        if not self.running:
            raise UnavailableError(_STOPPED)
        self.tell(("transfer", to))

    def campaign(self) -> None:
        self.tell(("campaign",))

    async def status(self) -> MemberStatus:
        if self.running:
            try:
                async with asyncio.timeout(STATUS_TIMEOUT):
                    return MemberStatus(**await self.request(("s",)))
            except (StoreError, TimeoutError):
                pass  # gone, or stopped from outside (SIGSTOP): what etcdctl sees is no answer
        return MemberStatus(
            name=self.name, id=f"{self.id:x}", endpoint=self.endpoint, version=VERSION, running=False,
            paused=False, healthy=False, is_leader=False, leader="", role="stopped", raft_term=self._term,
            raft_index=0, raft_applied_index=self.applied, revision=0, db_size=0, db_size_in_use=0, wal_size=0,
            errors=list(self.errors), slow_disk_s=self.disk_latency)


async def open_processes(data_dir: str | os.PathLike[str], *, clock: Clock, members: int = 3, seed: int = 1,
                         config: RaftConfig | None = None, fsync: bool = False, synchronous: str = "NORMAL",
                         quota_bytes: int = DEFAULT_QUOTA_BYTES, start: bool = True, **kwargs: Any) -> Any:
    """Like :meth:`EtcdCluster.open`, each member in its own process (``data_dir/etcd-N/`` as there)."""
    from kconsole.store.facade import ProcessEtcdCluster, client_port, member_names

    if members < 1:
        raise ValueError(f"--control-planes must be at least 1, got {members}")
    from kconsole.clock import VirtualClock

    if isinstance(clock, VirtualClock):
        raise ValueError("etcd members in processes run on the real clock, not a virtual one")
    root = Path(data_dir)
    names = member_names(members)
    rng = random.Random(seed)
    net = ProcessNetwork(clock, random.Random(rng.random()))
    ids = [member_id(n) for n in names]
    built = [RemoteMember(name, f"127.0.0.1:{client_port(i)}", ids, clock=clock, network=net, folder=root / name,
                          seed=int(rng.random() * 2**31), fsync=fsync, synchronous=synchronous, config=config,
                          mid=ids[i]) for i, name in enumerate(names)]
    cluster = ProcessEtcdCluster(built, net, clock, quota_bytes=quota_bytes, data_dir=root, **kwargs)
    if start:
        await cluster.start()
    return cluster
