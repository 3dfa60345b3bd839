"""An etcd member: a Raft node, its durable Raft log, and its own state machine (a revision log).

The member runs three tasks on the event loop. The *raft loop* feeds the node its messages, ticks,
proposals and read requests, then handles each ``Ready``. With fsync on, its hard state and entries
go to the *WAL task*, which writes everything queued since its last write as one batch with one
fsync, so the raft loop keeps stepping acks and proposals while the device works and the next
round replicates while the previous one syncs. What a write promises waits for it: a follower's
messages (acks, votes) leave only once every write queued before and with them is durable; a
leader sends its appends at once (its own write races the followers') but counts itself towards a
commit only once its write landed. Without fsync the raft loop writes inline. Committed entries go
to the *apply loop* as soon as they are durable here, beside the write of the Ready that carried
them (etcd applies beside its WAL save); it applies batches in log order and answers the proposals
waiting on them, so replication of batch N+1 overlaps the apply of batch N. A follower that
learns a commit index with nothing to write holds those entries until its next write (the next
round's fsync) or its next tick: the members share one process, and the leader's answers, which
writers wait for, should not queue behind applies nobody waits for. Every member applies
the same commands in the same order, so revisions match across members.

A crash (``stop()``) abandons its tasks mid-flight. On ``start()`` the member reloads its WAL,
reopens its state machine and works out how far the machine really got (the WAL's "applied"
record may lag the machine by the batch in flight at the crash), then resumes.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import queue
import random
import threading
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from kconsole.clock import Clock, TimerHandle, io_tracker
from kconsole.store.kv import KV, Compare, Delete, NoSpaceError, Put, Status, StoreError, UnavailableError
from kconsole.store.network import Network
from kconsole.store.raft import codec
from kconsole.store.loopaio import LoopAio
from kconsole.store.raft.codec import Command
from kconsole.store.raft.core import MSG_SNAP, Message, ProposalDropped, RaftNode, Role, Snapshot
from kconsole.store.raft.log import Entry, RaftLog
from kconsole.store.raft.wal import ROTATES, WalState

#: What ``etcdctl endpoint status`` shows as VERSION.
VERSION = "3.5.17-kconsole"
#: The only alarm kconsole raises (etcd's AlarmType NOSPACE).
NOSPACE = 1
#: How long a member's revision log holds published batches to commit them together (etcd's
#: backend batch interval): the Raft WAL is what makes a write durable, the SQLite file follows.
BACKEND_COMMIT_INTERVAL = 0.1
#: The leader's interval. While a commit is on its SQLite thread a revision log with nothing queued
#: waits for it before taking the next batch, and the leader's next batch is what the writers wait
#: for: 100 ms of rows (700-1,000 at 64 writers, 10-50 ms to commit on a loaded machine) held every
#: writer that long, 20 ms of rows only briefly. Followers' applies keep the longer interval.
LEADER_COMMIT_INTERVAL = 0.02


class NotProposed(UnavailableError):
    """The command never reached a leader's log, so retrying it elsewhere cannot apply it twice."""


class Storage(Protocol):
    """A member's durable Raft state (``raft.wal.FileStorage`` or ``MemoryStorage``)."""

    def load(self) -> WalState: ...
    def save(self, hard_state: Any, entries: list[Entry]) -> None: ...
    def save_durably(self, hard_state: Any, entries: list[Entry]) -> None: ...
    def save_snapshot(self, index: int, term: int, restore: bool = False) -> None: ...
    def save_applied(self, index: int, revision: int, alarms: int = 0) -> None: ...
    def save_image(self, index: int, image: bytes) -> None: ...
    def load_image(self) -> tuple[int, bytes] | None: ...
    def drop_image(self) -> None: ...
    def size(self) -> int: ...
    def growth(self) -> int: ...
    def sync(self) -> None: ...
    def close(self) -> None: ...

    fsync: bool


class Waiter(Protocol):
    """What waits on a proposal: an asyncio future, or anything settled the same way."""

    def done(self) -> bool: ...
    def set_result(self, result: Any) -> None: ...
    def set_exception(self, exception: BaseException) -> None: ...


class Machine(Protocol):
    """What committed commands are applied to; reads and watches are served from ``kv``."""

    @property
    def kv(self) -> KV: ...

    @property
    def revision(self) -> int: ...

    async def apply(self, commands: list[Command], answers: bool = True) -> list[object]:
        """Apply in order; one result per command (a TxnResult, None, or a StoreError).

        ``answers=False``: no proposal waits here, so a successful transaction may yield None."""

    async def image(self) -> bytes:
        """A consistent copy of the whole state (the apply loop is held while it is taken)."""

    async def install(self, image: bytes) -> None: ...

    async def status(self) -> Status: ...

    async def close(self) -> None: ...


@dataclass(slots=True)
class RaftConfig:
    """Raft timing and sizes. Defaults are etcd's: heartbeat 100 ms, election timeout 1,000 ms."""

    tick: float = 0.1  # simulated seconds per Raft tick (= the heartbeat interval)
    election_ticks: int = 10  # election timeout in ticks, randomised to [1x, 2x) per round
    pre_vote: bool = True
    check_quorum: bool = True
    max_inflight: int = 256
    max_msg_bytes: int = 1024 * 1024
    max_batch: int = 4096  # commands per proposed entry
    #: Entries kept behind the applied index for slow followers, and how many more may pile up
    #: before the log is compacted; a follower further behind gets a snapshot.
    snapshot_catchup: int = 5000
    snapshot_count: int = 10000


def member_id(name: str) -> int:
    """A stable 64-bit id per member name, shown as hex like etcd's."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big") or 1


@dataclass(slots=True)
class MemberStatus:
    """One row of ``etcdctl endpoint status`` plus what the console's health panel needs."""

    name: str
    id: str
    endpoint: str
    version: str
    running: bool
    paused: bool
    healthy: bool
    is_leader: bool
    leader: str
    role: str
    raft_term: int
    raft_index: int
    raft_applied_index: int
    revision: int
    db_size: int
    db_size_in_use: int
    wal_size: int
    errors: list[str] = field(default_factory=list)
    last_commit_ms: float = 0.0
    slow_disk_s: float = 0.0
    #: What a client is told by a member that does not answer (stopped or frozen): etcdctl's gRPC error.
    NO_ANSWER: ClassVar[str] = "context deadline exceeded"


class Member:
    """One etcd member. Fault handles: :meth:`stop`/:meth:`start`, :meth:`pause`/:meth:`resume`,
    :meth:`slow_disk`."""

    def __init__(
        self,
        name: str,
        endpoint: str,
        peers: list[int],
        *,
        clock: Clock,
        network: Network,
        rng: random.Random,
        storage: Callable[[], Storage],
        machine: Callable[[], Awaitable[Machine]],
        config: RaftConfig | None = None,
        mid: int | None = None,
        role_file: Path | None = None,
    ) -> None:
        self.name = name
        self.endpoint = endpoint
        self.id = mid if mid is not None else member_id(name)
        self.peers = peers
        self.clock = clock
        self.network = network
        self.rng = rng
        self.config = config or RaftConfig()
        self.role_file = role_file  # where leadership changes are noted for tools reading the folder
        self._storage_factory = storage
        self._machine_factory = machine
        self.node: RaftNode | None = None
        self.storage: Storage | None = None
        self.machine: Machine | None = None
        self.running = False
        self.paused = False
        self.disk_latency = 0.0
        self.applied = 0
        self.alarms = 0
        self.errors: list[str] = []
        #: Why the member crashed by itself (a failed disk), until it is started again.
        self.failure: BaseException | None = None
        self.last_commit_latency = 0.0
        self.leader_changes = 0
        self._inbox: deque[Message] = deque()
        self._ticks = 0
        self._wake = asyncio.Event()
        self._resumed = asyncio.Event()
        self._resumed.set()
        self._proposals: list[tuple[Command, Waiter, float]] = []
        self._waiting: dict[int, tuple[int, list[tuple[Waiter, float]]]] = {}
        self._reads: list[asyncio.Future[int]] = []
        self._read_waiters: dict[int, list[asyncio.Future[int]]] = {}
        self._read_ctx = 0
        self._applied_waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._apply_queue: asyncio.Queue[list[Entry] | Snapshot] = asyncio.Queue()
        self._held: list[Entry] = []  # a follower's committed entries waiting to be applied beside its next write
        self._writes: list[_Write] = []  # queued for the WAL task, oldest first
        self._writing: list[_Write] = []  # on the device now
        self._disk_wake = asyncio.Event()
        self._device: _Device | None = None
        self._syncer: LoopAio | None = None
        self._drain_waiters: list[asyncio.Future[None]] = []
        self._apply_lock = asyncio.Lock()
        self._tasks: list[asyncio.Task[None]] = []
        self._ticker: TimerHandle | None = None
        self._was_leader = False
        self._seen: tuple[Any, int, int] = (None, 0, 0)
        self._revision_waiters: list[tuple[int, asyncio.Future[None]]] = []
        self.on_change: Callable[[], None] = lambda: None

    # ----- lifecycle ---------------------------------------------------------------------------
    async def start(self) -> None:
        """Boot (or reboot after a crash) from the member's own files."""
        if self.running:
            return
        self.failure = None
        storage = self._storage_factory()
        machine: Machine | None = None
        try:
            state = storage.load()
            machine = await self._machine_factory()
            image = storage.load_image()
            if image is not None and image[0] > state.applied:
                # A snapshot was received and logged but not yet installed before the crash.
                await machine.install(image[1])
                state.applied, state.applied_revision = image[0], machine.revision
                storage.save_applied(state.applied, state.applied_revision, state.alarms)
                storage.drop_image()
            self.alarms = state.alarms
            applied = await self._recover(storage, machine, state)
        except BaseException:  # a start that fails (a full disk) leaves nothing open to try again
            if machine is not None:
                await machine.close()
            storage.close()
            raise
        log = RaftLog(state.snap_index, state.snap_term, state.entries, state.hard_state.commit, applied)
        self.node = RaftNode(
            self.id, self.peers, rng=self.rng, election_tick=self.config.election_ticks,
            pre_vote=self.config.pre_vote, check_quorum=self.config.check_quorum,
            max_inflight=self.config.max_inflight, max_msg_bytes=self.config.max_msg_bytes,
            hard_state=state.hard_state, log=log,
        )
        self.storage, self.machine = storage, machine
        self.applied = log.applied
        self._saved_applied = log.applied
        self._unsaved: deque[tuple[int, int, int]] = deque()  # (index, revision, alarms) applied, not recorded
        if hasattr(machine, "on_flushed"):
            machine.on_flushed = lambda _revision: self._on_flushed()
        self._durable_vote = (state.hard_state.term, state.hard_state.vote)
        self._inbox.clear()
        self._ticks = 0
        self._apply_queue = asyncio.Queue()
        self._held = []
        self._writes, self._writing, self._drain_waiters = [], [], []
        self._disk_wake = asyncio.Event()
        self._device = _Device(f"{self.name}-wal")
        self._syncer = None
        if storage.fsync and hasattr(storage, "save_for_sync"):
            probe = storage.save_for_sync(None, [])
            self._syncer = LoopAio.create(probe) if probe >= 0 else None
        self.running = True
        self.paused = False
        self._resumed.set()
        self._was_leader = False
        self.network.register(self.id, self.receive)
        self._tasks = [
            asyncio.get_running_loop().create_task(self._raft_loop(), name=f"{self.name}-raft"),
            asyncio.get_running_loop().create_task(self._apply_loop(), name=f"{self.name}-apply"),
            asyncio.get_running_loop().create_task(self._wal_loop(), name=f"{self.name}-wal"),
        ]
        for task in self._tasks:
            task.add_done_callback(self._task_done)
        self._schedule_tick()
        self._wake.set()
        self.on_change()

    async def stop(self) -> None:
        """Crash: drop everything in flight; durable state stays on disk for :meth:`start`."""
        if not self.running:
            return
        self.running = False
        self.network.unregister(self.id)
        self._seen = (None, 0, 0)
        if self._ticker:
            self._ticker.cancel()
            self._ticker = None
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            try:
                await task
            except asyncio.CancelledError:
                pass
            except Exception as err:  # noqa: BLE001 - a crash is a crash; remember why
                self.errors.append(f"{type(err).__name__}: {err}")
        self._tasks = []
        if self._device is not None:
            self._device.close()
            self._device = None
        if self._syncer is not None:
            self._syncer.close()
            self._syncer = None
        self._fail_all(UnavailableError("etcdserver: server stopped"))
        if self.machine is not None:
            await self.machine.close()
        if self.storage is not None:
            self.storage.close()
        self._note_role()
        self.node = None
        self._resumed.set()
        self.on_change()

    def _note_role(self) -> None:
        if self.role_file is None or self.node is None:
            return
        doc = {"name": self.name, "id": f"{self.id:x}", "endpoint": self.endpoint, "role": self.node.role.value,
               "term": self.node.term, "leader": f"{self.node.lead:x}" if self.node.lead else "",
               "pid": os.getpid(), "running": self.running, "paused": self.paused}
        tmp = self.role_file.with_suffix(".tmp")
        try:
            tmp.write_text(json.dumps(doc))
            os.replace(tmp, self.role_file)
        except OSError as err:
            self.errors.append(f"cannot note role: {err}")

    def _task_done(self, task: asyncio.Task[None]) -> None:
        """A loop died of an error (a failed disk): the member crashes rather than diverge."""
        if task.cancelled() or task.exception() is None or not self.running:
            return
        err = task.exception()
        self.errors.append(f"{type(err).__name__}: {err}")
        self.failure = err
        asyncio.get_running_loop().create_task(self.stop())

    def pause(self) -> None:
        """Alive but silent (SIGSTOP): no ticks, no messages handled, no applies."""
        if self.running:
            self.paused = True
            self._resumed.clear()
            self._note_role()  # tools reading the folder see it stop answering, as etcdctl would

    def resume(self) -> None:
        self.paused = False
        self._resumed.set()
        self._wake.set()
        self._note_role()

    def slow_disk(self, latency_s: float) -> None:
        """Add ``latency_s`` simulated seconds to every WAL write (0 heals)."""
        if latency_s < 0:
            raise ValueError("disk latency must not be negative")
        self.disk_latency = latency_s

    # ----- what the facade calls ---------------------------------------------------------------
    @property
    def role(self) -> Role | None:
        return self.node.role if self.node else None

    @property
    def is_leader(self) -> bool:
        return self.running and self.node is not None and self.node.role is Role.LEADER

    @property
    def term(self) -> int:
        return self.node.term if self.node else 0

    @property
    def leader_id(self) -> int:
        return self.node.lead if self.node else 0

    @property
    def kv(self) -> KV:
        if not self.running or self.machine is None:
            raise UnavailableError("etcdserver: server stopped")
        return self.machine.kv

    def propose(self, command: Command, now: float | None = None) -> asyncio.Future[Any]:
        """Queue a command for the next entry; the future resolves to its result once applied here.

        ``now``: the caller's clock reading, if it just took one (the commit latency starts there)."""
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.submit(command, fut, now)
        return fut

    def submit(self, command: Command, waiter: Waiter, now: float | None = None) -> None:
        """:meth:`propose` with the outcome handed to ``waiter`` instead of a new future: a member
        in its own process answers its parent from there, without a callback per write."""
        if not self.running:
            waiter.set_exception(UnavailableError("etcdserver: server stopped"))
            return
        self._proposals.append((command, waiter, self.clock.now() if now is None else now))
        self._wake.set()

    def read_index(self) -> asyncio.Future[int]:
        """Ask the leader for a linearizable read point (etcd's ReadIndex)."""
        fut: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        if not self.running:
            fut.set_exception(UnavailableError("etcdserver: server stopped"))
            return fut
        self._reads.append(fut)
        self._wake.set()
        return fut

    def wait_applied(self, index: int) -> asyncio.Future[None]:
        """Resolves once the state machine holds raft index ``index``."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if not self.running:
            fut.set_exception(UnavailableError("etcdserver: server stopped"))
        elif self.applied >= index:
            fut.set_result(None)
        else:
            self._applied_waiters.append((index, fut))
            if self._held:
                self._release_held()
        return fut

    def wait_applied_revision(self, revision: int) -> asyncio.Future[None]:
        """Resolves once the state machine reached store revision ``revision``."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if not self.running or self.machine is None:
            fut.set_exception(UnavailableError("etcdserver: server stopped"))
        elif self.machine.revision >= revision:
            fut.set_result(None)
        else:
            self._revision_waiters.append((revision, fut))
            if self._held:
                self._release_held()
        return fut

    def wait_resumed(self) -> asyncio.Future[None]:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if not self.paused:
            fut.set_result(None)
        else:
            task = asyncio.ensure_future(self._resumed.wait())
            task.add_done_callback(lambda _: fut.done() or fut.set_result(None))
        return fut

    def receive(self, msg: Message) -> None:
        self._inbox.append(msg)
        self._wake.set()

    async def status(self) -> MemberStatus:
        st = None
        errors = list(self.errors)
        if self.running and self.machine is not None and not self.paused:
            try:
                st = await self.machine.status()
            except StoreError as err:
                errors.append(str(err))
        if self.alarms & NOSPACE:
            errors.append("memberID:%x alarm:NOSPACE" % self.id)
        node = self.node
        lead = node.lead if node and self.running else 0
        return MemberStatus(
            name=self.name,
            id=f"{self.id:x}",
            endpoint=self.endpoint,
            version=VERSION,
            running=self.running,
            paused=self.paused,
            healthy=self.running and not self.paused and lead != 0 and not (self.alarms & NOSPACE),
            is_leader=self.is_leader,
            leader=f"{lead:x}" if lead else "",
            role=node.role.value if node and self.running else "stopped",
            raft_term=node.term if node else 0,
            raft_index=node.log.last_index if node else 0,
            raft_applied_index=self.applied,
            revision=st.revision if st else (self.machine.revision if self.machine and self.running else 0),
            db_size=st.db_size if st else 0,
            db_size_in_use=st.db_size_in_use if st else 0,
            wal_size=self.storage.size() if self.storage and self.running else 0,
            errors=errors,
            last_commit_ms=round(self.last_commit_latency * 1000, 3),
            slow_disk_s=self.disk_latency,
        )

    def transfer_leadership(self, to: int) -> None:
        if not self.running or self.node is None:
            raise UnavailableError("etcdserver: server stopped")
        try:
            self.node.transfer_leader(to)
        except ProposalDropped as err:
            raise UnavailableError(str(err)) from None
        self._wake.set()

    def campaign(self) -> None:
        if self.node is not None:
            self.node.campaign()
            self._wake.set()

    # ----- internals ---------------------------------------------------------------------------
    def _schedule_tick(self) -> None:
        self._ticker = self.clock.call_later(self.config.tick, self._on_tick)

    def _on_tick(self) -> None:
        if not self.running:
            return
        broken = getattr(self.machine, "broken", None)
        if broken is not None:  # its file refused a commit (a full disk): crash, replay the WAL on start
            self.errors.append(f"{type(broken).__name__}: {broken}")
            self.failure = broken
            asyncio.get_running_loop().create_task(self.stop())
            return
        if not self.paused:
            self._ticks += 1
            self._wake.set()
        self._schedule_tick()

    async def _recover(self, storage: Storage, machine: Machine, state: WalState) -> int:
        """The applied index the machine really holds, when a crash beat the WAL's "applied" record.

        The machine may have committed (part of) the batch that was being applied. Walk the logged
        commands after the recorded position, re-evaluating each transaction's compares against
        the machine's history at the revision it would have seen, and count those it holds.
        """
        applied = state.applied
        if machine.revision == state.applied_revision:
            return applied
        commands: list[Command] = []
        owner: list[int] = []
        for entry in state.entries:
            if entry.index > applied:
                for cmd in codec.entry_commands(entry):
                    commands.append(cmd)
                    owner.append(entry.index)
        done = await applied_prefix(machine.kv, machine.revision, state.applied_revision, commands)
        if done == 0:
            raise StoreError(f"{self.name}: state machine at revision {machine.revision} does not match its raft log")
        alarms = state.alarms
        for cmd in commands[:done]:
            if cmd[0] == "alarm":
                alarms = (alarms | cmd[1]) if cmd[2] else (alarms & ~cmd[1])
        last = owner[done - 1]
        if done < len(commands) and owner[done] == last:
            # The machine committed part of one entry's batch: apply the rest of that entry now.
            rest = [c for c, o in zip(commands[done:], owner[done:]) if o == last]
            self.alarms = alarms
            await self._apply_commands(machine, rest)
            alarms = self.alarms
        self.alarms = alarms
        storage.save_applied(last, machine.revision, alarms)
        return last

    async def _raft_loop(self) -> None:
        node = self.node
        assert node is not None and self.storage is not None
        storage = self.storage
        while True:
            await self._wake.wait()
            self._wake.clear()
            if self.paused:
                await self._resumed.wait()
                continue
            while self._inbox:
                node.step(self._inbox.popleft())
            ticked = self._ticks > 0
            while self._ticks:
                self._ticks -= 1
                node.tick()
            if self._proposals:
                self._take_proposals(node)
            if self._reads:
                reads, self._reads = self._reads, []
                if node.role is Role.LEADER:
                    self._read_ctx += 1
                    self._read_waiters[self._read_ctx] = reads
                    node.read_index(self._read_ctx)
                else:
                    _fail(reads, NotProposed("etcdserver: not leader"))
            if node.role is not Role.LEADER and self._was_leader:
                self._fail_reads(NotProposed("etcdserver: leader changed"))
            if node.role is Role.LEADER and not self._was_leader:
                self.leader_changes += 1
            if self._held and (ticked or node.role is Role.LEADER):
                self._release_held()
            self._was_leader = node.role is Role.LEADER
            seen = (node.role, node.lead, node.term)
            if seen != self._seen:
                if seen[0] is not self._seen[0]:
                    self._pace_backend(node.role is Role.LEADER)
                self._seen = seen
                self._note_role()
                self.on_change()
            if not node.has_ready():
                continue
            rd = node.ready()
            release = False
            if (not rd.entries and rd.snapshot is None and node.role is not Role.LEADER
                    and not self._writes and not self._writing):
                # A follower learning a commit index: nobody waits on its apply, while the leader's
                # answers do wait for the CPU this process shares. Apply beside the next write
                # (the next round's fsync) or the next tick, whichever comes first.
                if rd.committed:
                    self._held.extend(rd.committed)
                    rd.committed = []
            elif self._held:
                # Beside this Ready's write, but queued after it: the WAL task then starts the
                # write (the leader's commit waits for it) before the apply takes the loop. A
                # follower's write puts nothing on the apply queue itself, so log order holds.
                release = True
                if rd.snapshot is not None or not storage.fsync:
                    self._release_held()
                    release = False
            if self._writes or self._writing:
                if rd.snapshot is None:
                    self._queue_write(node, rd)
                    if release:
                        self._release_held()
                    self._answer_reads(rd.read_states)
                    if node.has_ready():
                        self._wake.set()
                    continue
                await self._drained()  # a snapshot rewrites the log: let every queued write land first
            if rd.snapshot is not None:
                image = rd.snapshot.data
                assert isinstance(image, bytes)
                storage.save_image(rd.snapshot.index, image)
                storage.save_snapshot(rd.snapshot.index, rd.snapshot.term, restore=True)
                self._apply_queue.put_nowait(rd.snapshot)
            # A leader's appends go out while its own write is in flight; everything else waits
            # for the write (a vote or an ack must never outrun the state it promises).
            hs = rd.hard_state
            early = node.role is Role.LEADER and (node.term, node.vote) == self._durable_vote
            if early:
                self._send(rd.messages)
            # Committed entries all below this Ready's new ones were made durable by an earlier
            # Ready: apply them while this one is written (etcd applies beside its WAL save), so
            # a leader's acknowledgement does not wait for the next round's fsync.
            committed = rd.committed
            if committed and (not rd.entries or committed[-1].index < rd.entries[0].index):
                if release:
                    self._release_held()
                    release = False
                self._apply_queue.put_nowait(committed)
                committed = []
            # etcd's MustSync: new entries, a term or a vote must reach the device before any
            # message promises them; a commit index alone is re-learned from the leader.
            must_sync = bool(rd.entries) or (hs is not None and (hs.term, hs.vote) != self._durable_vote)
            if storage.fsync and must_sync and rd.snapshot is None:
                # Written on the WAL task: the loop keeps stepping acks and proposals meanwhile.
                self._queue_write(node, rd, early, committed)
                if release:
                    self._release_held()
                self._answer_reads(rd.read_states)
                if node.has_ready():
                    self._wake.set()
                continue
            if release:
                self._release_held()
            if rd.entries or rd.hard_state:
                if storage.fsync and must_sync:
                    assert self._device is not None
                    with io_tracker(self.clock):  # encoding and writing too: the thread waits on the device anyway
                        await self._device.run(storage.save_durably, rd.hard_state, rd.entries)
                else:
                    storage.save(rd.hard_state, rd.entries)
                if self.disk_latency:
                    await self.clock.sleep(self.disk_latency)
                if hs is not None:
                    self._durable_vote = (hs.term, hs.vote)
                if rd.entries and self.node is node:
                    node.persisted(rd.entries[-1].index, rd.entries[-1].term)
            if not early:
                self._send(rd.messages)
            if committed:
                self._apply_queue.put_nowait(committed)
            self._answer_reads(rd.read_states)
            if node.has_ready():
                self._wake.set()

    def _pace_backend(self, leading: bool) -> None:
        """The leader's machine commits its file more often than a follower's (see LEADER_COMMIT_INTERVAL).

        Only with followers, where it was measured: a lone member (``--control-planes 1``, bench
        converge) keeps the one interval it always had."""
        if self.machine is not None and hasattr(self.machine, "commit_interval") and len(self.peers) > 1:
            self.machine.commit_interval = LEADER_COMMIT_INTERVAL if leading else BACKEND_COMMIT_INTERVAL

    def _release_held(self) -> None:
        held, self._held = self._held, []
        self._apply_queue.put_nowait(held)

    def _answer_reads(self, read_states: list[tuple[int, int]]) -> None:
        for ctx, index in read_states:
            for fut in self._read_waiters.pop(ctx, []):
                if not fut.done():
                    fut.set_result(index)

    def _queue_write(self, node: RaftNode, rd: Any, early: bool | None = None,
                     committed: list[Entry] | None = None) -> None:
        """Hand a Ready's durable part to the WAL task; what depends on it rides along.

        Messages and committed entries a write holds are released, in order, once every write
        queued before and with it reached the device. A leader sends its appends at once (its
        own write races the followers') and applies what is committed up to its own durable
        index; everything else waits its turn, so nothing outruns the state it promises.
        """
        if early is None:
            early = node.role is Role.LEADER and (node.term, node.vote) == self._durable_vote
            if early:
                self._send(rd.messages)
            committed = rd.committed
        assert committed is not None
        write = _Write(rd.hard_state, rd.entries, [] if early else rd.messages)
        if committed:
            held = any(w.committed for w in self._writes) or any(w.committed for w in self._writing)
            durable = node.match_of(node.id) if node.role is Role.LEADER else 0
            if not held and committed[0].index <= durable:
                cut = len(committed)
                while committed[cut - 1].index > durable:
                    cut -= 1
                self._apply_queue.put_nowait(committed[:cut])
                committed = committed[cut:]
            write.committed = committed
        self._writes.append(write)
        self._disk_wake.set()

    async def _drained(self) -> None:
        """Until the WAL task has nothing queued or in flight."""
        while self._writes or self._writing:
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._drain_waiters.append(fut)
            await fut

    async def _wal_loop(self) -> None:
        """Write what queued up since the last write as one record batch with one fsync (none when
        all of it is a commit index, which a member re-learns from its leader)."""
        node, storage, device = self.node, self.storage, self._device
        assert node is not None and storage is not None and device is not None
        while True:
            await self._disk_wake.wait()
            self._disk_wake.clear()
            while self._writes:
                self._writing, self._writes = self._writes, []
                hard_state, entries = _merge(self._writing)
                vote = self._durable_vote
                if entries or any(w.hard_state is not None and (w.hard_state.term, w.hard_state.vote) != vote
                                  for w in self._writing):
                    syncer = self._syncer
                    # Written from the loop, synced by the kernel: no thread waits for the GIL. A
                    # write that starts a new segment does blocking file work: it goes to the thread.
                    fd = ROTATES if syncer is None else storage.save_for_sync(hard_state, entries)  # type: ignore[attr-defined]
                    if fd >= 0 and syncer is not None:
                        with io_tracker(self.clock):
                            await syncer.fdatasync(fd)
                    elif fd == ROTATES:
                        with io_tracker(self.clock):
                            await device.run(storage.save_durably, hard_state, entries)
                elif hard_state is not None:
                    storage.save(hard_state, [])  # a commit index alone needs no fsync (etcd's MustSync)
                if (hard_state is not None or entries) and self.disk_latency:
                    await self.clock.sleep(self.disk_latency)
                done, self._writing = self._writing, []
                for w in done:
                    if w.hard_state is not None:
                        self._durable_vote = (w.hard_state.term, w.hard_state.vote)
                    if w.entries and self.node is node:
                        node.persisted(w.entries[-1].index, w.entries[-1].term)
                    if w.messages:
                        self._send(w.messages)
                    if w.committed:
                        self._apply_queue.put_nowait(w.committed)
                if node.has_ready():  # a leader's own write may commit; a follower's usually readies nothing
                    self._wake.set()
            waiters, self._drain_waiters = self._drain_waiters, []
            for fut in waiters:
                if not fut.done():
                    fut.set_result(None)

    def _send(self, messages: list[Message]) -> None:
        for msg in messages:
            if msg.kind == MSG_SNAP:
                asyncio.get_running_loop().create_task(self._send_snapshot(msg))
            else:
                self.network.send(msg)

    def _take_proposals(self, node: RaftNode) -> None:
        proposals, self._proposals = self._proposals, []
        if node.role is not Role.LEADER or node.transferring:
            why = "etcdserver: leader changed" if node.role is not Role.LEADER else "etcdserver: leader transfer in progress"
            _fail([f for _, f, _ in proposals], NotProposed(why))
            return
        for start in range(0, len(proposals), self.config.max_batch):
            chunk = proposals[start : start + self.config.max_batch]
            # The entry carries the leader's clock: every member records the same time for its revisions.
            cmds = [("tm", self.clock.now())]
            cmds.extend(cmd for cmd, _, _ in chunk)
            index = node.propose(codec.encode(cmds), cmds)
            self._waiting[index] = (node.term, [(f, t) for _, f, t in chunk])

    async def _send_snapshot(self, msg: Message) -> None:
        """Fill a MsgSnap with an image of the state machine at exactly the applied index."""
        if self.machine is None or self.node is None:
            return
        node = self.node
        try:
            async with self._apply_lock:
                index = self.applied
                term = node.log.term(index)
                image = await self.machine.image()
        except Exception as err:  # noqa: BLE001 - report and let the leader probe again
            self.errors.append(f"snapshot for {msg.dst:x} failed: {err}")
            node.report_snapshot(msg.dst, ok=False)
            return
        if term is None or not self.running:
            node.report_snapshot(msg.dst, ok=False)
            return
        msg.snapshot = Snapshot(index, term, image)
        self.network.send(msg)

    async def _apply_loop(self) -> None:
        while True:
            item = await self._apply_queue.get()
            batch: list[Entry] = []
            items: list[list[Entry] | Snapshot] = [item]
            while not self._apply_queue.empty():
                items.append(self._apply_queue.get_nowait())
            if self.paused:
                await self._resumed.wait()
            for it in items:
                if isinstance(it, Snapshot):
                    if batch:
                        await self._apply_entries(batch)
                        batch = []
                    await self._install(it)
                else:
                    batch.extend(it)
            if batch:
                await self._apply_entries(batch)

    async def _install(self, snap: Snapshot) -> None:
        assert self.machine is not None and self.storage is not None and isinstance(snap.data, bytes)
        async with self._apply_lock:
            await self.machine.install(snap.data)
            self.applied = snap.index
            self._unsaved.clear()
            self.storage.save_applied(snap.index, self.machine.revision, self.alarms)
            self._saved_applied = snap.index
            self.storage.drop_image()
        self._after_apply()

    async def _apply_entries(self, entries: list[Entry]) -> None:
        machine, storage, node = self.machine, self.storage, self.node
        assert machine is not None and storage is not None and node is not None
        commands: list[Command] = []
        spans: list[tuple[Entry, int, int]] = []
        for entry in entries:
            cmds = codec.entry_commands(entry)
            stamped = 1 if cmds and cmds[0][0] == "tm" else 0  # the time mark answers no proposal
            spans.append((entry, len(commands) + stamped, len(cmds) - stamped))
            commands.extend(cmds)
        async with self._apply_lock:
            waited = self._waiting
            answers = bool(waited) and any(entry.index in waited for entry in entries)
            results = await self._apply_commands(machine, commands, answers)
            self.applied = entries[-1].index
            self._unsaved.append((self.applied, machine.revision, self.alarms))
            self._save_applied()
        now = self.clock.now()
        for entry, lo, n in spans:
            waiting = self._waiting.pop(entry.index, None)
            if waiting is None:
                continue
            term, futs = waiting
            if term != entry.term or len(futs) != n:
                _fail([f for f, _ in futs], NotProposed("etcdserver: leader changed"))
                continue
            for (fut, t0), result in zip(futs, results[lo : lo + n]):
                self.last_commit_latency = now - t0
                if fut.done():
                    continue
                if isinstance(result, BaseException):
                    fut.set_exception(result)
                else:
                    fut.set_result(result)
        # Anything still waiting at or below the applied index was overwritten by a new leader.
        for index in [i for i in self._waiting if i <= self.applied]:
            _fail([f for f, _ in self._waiting.pop(index)[1]], NotProposed("etcdserver: leader changed"))
        self._after_apply()

    async def _apply_commands(self, machine: Machine, commands: list[Command], answers: bool = True) -> list[object]:
        """Alarm commands are handled here, in log order; the rest goes to the machine.

        ``answers=False`` when no proposal waits on these here (a follower): results may be None."""
        if not self.alarms & NOSPACE and all(cmd[0] == "t" or cmd[0] == "tm" for cmd in commands):
            # Transactions only, no alarm to enforce (nearly every batch): straight to the machine.
            return await (machine.apply(commands) if answers else machine.apply(commands, answers=False))
        results: list[object] = [None] * len(commands)
        run: list[int] = []

        async def flush() -> None:
            if run:
                out = await (machine.apply([commands[i] for i in run]) if answers
                             else machine.apply([commands[i] for i in run], answers=False))
                for i, r in zip(run, out):
                    results[i] = r
                run.clear()

        for i, cmd in enumerate(commands):
            kind = cmd[0]
            if kind == "alarm":
                await flush()
                self.alarms = (self.alarms | cmd[1]) if cmd[2] else (self.alarms & ~cmd[1])
            elif kind == "n":
                continue
            elif kind == "t" and self.alarms & NOSPACE and _has_put(cmd):
                results[i] = NoSpaceError()
            else:
                run.append(i)
        await flush()
        return results

    def _save_applied(self) -> None:
        """Record the newest applied position the machine's own file already holds.

        A machine that commits behind what it answered (``flushed_revision``: the revision log
        commits after publishing) must never be recorded ahead of its file: after a crash the
        member replays the Raft log from the recorded position (etcd's consistent index).
        """
        machine, storage, unsaved = self.machine, self.storage, self._unsaved
        if machine is None or storage is None or not unsaved:
            return
        flushed = getattr(machine, "flushed_revision", None)
        if flushed is None:
            last = unsaved[-1]
            unsaved.clear()
        else:
            last = None
            while unsaved and unsaved[0][1] <= flushed:
                last = unsaved.popleft()
            if last is None:
                return
        storage.save_applied(*last)
        self._saved_applied = last[0]

    def _on_flushed(self) -> None:
        self._save_applied()
        if self.node is not None:
            self._maybe_compact(self.node)

    def _maybe_compact(self, node: RaftNode) -> None:
        """Drop Raft entries the machine's own file holds, keeping some for slow followers.

        Entries beyond what the file holds are needed for a replay, so a log due for compaction
        asks the machine to commit now (etcd forces a backend commit before it snapshots)."""
        keep, count = self.config.snapshot_catchup, self.config.snapshot_count
        if self.applied - node.log.snap_index <= keep + count:
            return
        if self._saved_applied - node.log.snap_index > keep + count:
            index = self._saved_applied - keep
            term = node.log.term(index)
            if term is not None and self.storage is not None:
                node.log.compact(index)
                self.storage.save_snapshot(index, term)
        elif self._unsaved:
            commit_soon = getattr(self.machine, "commit_soon", None)
            if commit_soon is not None:
                commit_soon()

    def _after_apply(self) -> None:
        node = self.node
        if node is None:
            return
        node.applied_to(min(self.applied, node.log.applied))
        self._maybe_compact(node)
        if self._applied_waiters:
            still = []
            for index, fut in self._applied_waiters:
                if index <= self.applied:
                    if not fut.done():
                        fut.set_result(None)
                else:
                    still.append((index, fut))
            self._applied_waiters = still
        if self._revision_waiters and self.machine is not None:
            revision = self.machine.revision
            pending = []
            for rev, fut in self._revision_waiters:
                if rev <= revision:
                    if not fut.done():
                        fut.set_result(None)
                else:
                    pending.append((rev, fut))
            self._revision_waiters = pending

    def _fail_reads(self, err: BaseException) -> None:
        for futs in self._read_waiters.values():
            _fail(futs, err)
        self._read_waiters = {}

    def _fail_all(self, err: BaseException) -> None:
        _fail([f for _, f, _ in self._proposals], err)
        self._proposals = []
        for _, futs in self._waiting.values():
            _fail([f for f, _ in futs], err)
        self._waiting = {}
        _fail(self._reads, err)
        self._reads = []
        self._fail_reads(err)
        _fail([f for _, f in self._applied_waiters], err)
        self._applied_waiters = []
        _fail([f for _, f in self._revision_waiters], err)
        self._revision_waiters = []


class _Device:
    """The thread a member's WAL writes and fsyncs run on, one at a time, in order.

    One long-lived thread per member instead of an executor hand-off per write (a work item, a
    context copy, a concurrent future chained to an asyncio one): the WAL write is on every round's
    path, three times per round with three members."""

    def __init__(self, name: str) -> None:
        self._jobs: queue.SimpleQueue[tuple[asyncio.AbstractEventLoop, asyncio.Future[Any],
                                            Callable[..., Any], tuple[Any, ...]] | None] = queue.SimpleQueue()
        threading.Thread(target=self._serve, name=name, daemon=True).start()

    def run(self, fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[Any] = loop.create_future()
        self._jobs.put((loop, fut, fn, args))
        return fut

    def close(self) -> None:
        """The thread ends after the job it is on (a crash abandons its waiter, not its write)."""
        self._jobs.put(None)

    def _serve(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            loop, fut, fn, args = job
            try:
                result, err = fn(*args), None
            except BaseException as exc:  # noqa: BLE001 - handed to the waiter, as to_thread would
                result, err = None, exc
            try:
                loop.call_soon_threadsafe(_settle, fut, result, err)
            except RuntimeError:  # the loop closed meanwhile: nobody is waiting
                pass


def _settle(fut: asyncio.Future[Any], result: Any, err: BaseException | None) -> None:
    if fut.done():
        return
    if err is None:
        fut.set_result(result)
    else:
        fut.set_exception(err)


class _Write:
    """One Ready's hard state and entries on their way to the WAL, with what waits for them."""

    __slots__ = ("hard_state", "entries", "messages", "committed")

    def __init__(self, hard_state: Any, entries: list[Entry], messages: list[Message]) -> None:
        self.hard_state = hard_state
        self.entries = entries
        self.messages = messages
        self.committed: list[Entry] = []


def _merge(writes: list[_Write]) -> tuple[Any, list[Entry]]:
    """The last hard state and the log tail after every write in order (a later write's first
    index overwrites what an earlier one wrote from there on)."""
    hard_state = None
    entries: list[Entry] = []
    for w in writes:
        if w.hard_state is not None:
            hard_state = w.hard_state
        if w.entries:
            first = w.entries[0].index
            if entries and first <= entries[-1].index:
                del entries[max(0, first - entries[0].index):]
            entries.extend(w.entries)
    return hard_state, entries


async def applied_prefix(kv: KV, revision: int, base_revision: int, commands: list[Command]) -> int:
    """How many of ``commands``, applied in order from ``base_revision``, produced ``revision``.

    Each write transaction takes the next revision; which branch a transaction ran (and whether
    that branch wrote) follows from its compares evaluated at the revision before it, which the
    store's MVCC history still answers. Non-writing commands before the last write count as
    applied; those after it are re-applied harmlessly (they change nothing).
    """
    current = base_revision
    last_write = 0
    for i, cmd in enumerate(commands):
        if current >= revision:
            break
        if cmd[0] == "t":
            _, compares, success, failure = cmd
            ok = True
            for cmp in compares:
                res = await kv.range(cmp.key, revision=current, serializable=True)
                if not _compare(res.kvs[0] if res.kvs else None, cmp):
                    ok = False
                    break
            ops = success if ok else failure
            if await _writes(kv, ops, current):
                current += 1
                last_write = i + 1
    if current != revision:
        raise StoreError(f"state machine revision {revision} is not reachable from {base_revision} by the raft log")
    return last_write


async def _writes(kv: KV, ops: list[Any], revision: int) -> bool:
    for op in ops:
        if isinstance(op, Put):
            return True
        if isinstance(op, Delete):
            res = await kv.range(op.key, op.end, revision=revision, count_only=True, serializable=True)
            if res.count:
                return True
    return False


def _compare(kv: Any, cmp: Compare) -> bool:
    if cmp.target == "mod":
        have: int | bytes = kv.mod_revision if kv else 0
    elif cmp.target == "create":
        have = kv.create_revision if kv else 0
    elif cmp.target == "version":
        have = kv.version if kv else 0
    else:
        have = kv.value if kv else b""
    want = cmp.value
    if cmp.op == "=":
        return have == want
    if cmp.op == "!=":
        return have != want
    if cmp.op == "<":
        return have < want  # type: ignore[operator]
    return have > want  # type: ignore[operator]


def _fail(futs: list[asyncio.Future[Any]] | list[Waiter], err: BaseException) -> None:
    for fut in futs:
        if not fut.done():
            fut.set_exception(err)


def _has_put(cmd: Command) -> bool:
    return any(type(op) is Put for op in cmd[2]) or any(type(op) is Put for op in cmd[3])


class RevlogMachine:
    """The production state machine: a member's own :class:`RevisionLog` file.

    Its quota is effectively off: the cluster enforces the quota before proposing and replicates
    the NOSPACE alarm, so every member takes the same decision (a per-file quota would not, since
    file sizes differ slightly between members). Auto-compaction is off too: compaction is a
    replicated command. ``synchronous=NORMAL`` survives a killed process; the Raft WAL is the
    source of truth a member replays from anyway.
    """

    def __init__(self, path: Path, clock: Clock, synchronous: str, log: Any) -> None:
        self.path = path
        self.clock = clock
        self.synchronous = synchronous
        self.log = log
        self._commit_interval = BACKEND_COMMIT_INTERVAL
        self._on_flushed: Callable[[int], None] | None = None
        self._stamp: float | None = None  # the time of the last entry applied (its leader's clock)

    @property
    def on_flushed(self) -> Callable[[int], None] | None:
        """Called after each SQLite commit with the revision the file now holds."""
        return self._on_flushed

    @on_flushed.setter
    def on_flushed(self, listener: Callable[[int], None] | None) -> None:
        self._on_flushed = self.log.on_flushed = listener

    @classmethod
    async def open(cls, path: str | os.PathLike[str], *, clock: Clock, synchronous: str = "NORMAL") -> RevlogMachine:
        file = Path(path)
        file.parent.mkdir(parents=True, exist_ok=True)
        return cls(file, clock, synchronous, await cls._open_log(file, clock, synchronous))

    @staticmethod
    async def _open_log(path: Path, clock: Clock, synchronous: str) -> Any:
        from kconsole.store.revlog import RevisionLog

        log = await RevisionLog.open(path, clock=clock, quota_bytes=1 << 62, synchronous=synchronous)
        log.split_batches = False
        log.publish_early = True
        log.commit_interval = BACKEND_COMMIT_INTERVAL
        return log

    @property
    def kv(self) -> KV:
        return self.log

    @property
    def revision(self) -> int:
        return self.log.revision

    @property
    def flushed_revision(self) -> int:
        """What the file holds: applied transactions are answered before their SQLite commit."""
        return self.log.flushed_revision  # type: ignore[no-any-return]

    @property
    def broken(self) -> BaseException | None:
        """Why the file refused a commit (the log then refuses everything), else None."""
        return self.log.broken  # type: ignore[no-any-return]

    @property
    def commit_interval(self) -> float:
        """How long the revision log holds published batches before committing them together."""
        return self._commit_interval

    @commit_interval.setter
    def commit_interval(self, seconds: float) -> None:
        self._commit_interval = self.log.commit_interval = seconds

    def commit_soon(self) -> None:
        """Commit what the revision log holds without waiting for its interval."""
        self.log.commit_soon()

    async def apply(self, commands: list[Command], answers: bool = True) -> list[object]:
        """Transactions of a run are queued together, in order, so the log group-commits them; a
        time mark (``("tm", time)``, one per entry) stamps the revisions of the transactions after it."""
        results: list[object] = [None] * len(commands)
        i = 0
        while i < len(commands):
            if commands[i][0] in ("t", "tm"):
                j = i
                slots: list[int] = []
                txns: list[Any] = []
                stamps: list[float | None] = []
                while j < len(commands) and commands[j][0] in ("t", "tm"):
                    if commands[j][0] == "tm":
                        self._stamp = commands[j][1]
                    else:
                        slots.append(j)
                        txns.append(commands[j][1:])
                        stamps.append(self._stamp)
                    j += 1
                out = await self._txns(txns, answers, stamps) if txns else []
                for k, r in zip(slots, out):
                    if isinstance(r, BaseException) and (not isinstance(r, StoreError) or _backend_failure(r)):
                        raise r  # the disk failed: this member must not carry on with a different state
                    results[k] = r
                i = j
            else:
                if commands[i][0] == "c":
                    try:
                        await self.log.compact(*commands[i][1:3])
                    except StoreError as err:
                        results[i] = err
                i += 1
        return results

    async def _txns(self, txns: list[tuple[list[Compare], list[Any], list[Any]]], answers: bool = True,
                    stamps: list[float | None] | None = None) -> list[object]:
        """One batch call: the log queues them all before its flusher runs, so they share group commits.

        The leader checked every transaction's shape before proposing it, so members skip that.
        """
        return await self.log.txn_batch(txns, validated=True, answers=answers,  # type: ignore[no-any-return]
                                        stamps=stamps)

    async def image(self) -> bytes:
        """A consistent copy of the database file (the log's online backup)."""
        tmp = self.path.with_suffix(".image")
        tmp.unlink(missing_ok=True)
        try:
            await self.log.backup(tmp)
            with io_tracker(self.clock):
                return await asyncio.to_thread(tmp.read_bytes)
        finally:
            tmp.unlink(missing_ok=True)

    async def install(self, image: bytes) -> None:
        await self.log.close()
        with io_tracker(self.clock):
            await asyncio.to_thread(_replace_db, self.path, image)
        self.log = await self._open_log(self.path, self.clock, self.synchronous)
        self.log.on_flushed = self._on_flushed
        self.log.commit_interval = self._commit_interval

    async def status(self) -> Status:
        return await self.log.status()

    async def close(self) -> None:
        await self.log.close()


def _backend_failure(err: BaseException) -> bool:
    from kconsole.store.revlog import BackendError

    return isinstance(err, BackendError)


def _replace_db(path: Path, image: bytes) -> None:
    tmp = path.with_suffix(".restore")
    tmp.write_bytes(image)
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    os.replace(tmp, path)
