"""``EtcdCluster``: the KV protocol over Raft members, as the API server's etcd client sees it.

- Writes (txn, compact) are proposed to the leader and acknowledged once the leader applied them.
- Linearizable reads ask the leader for a ReadIndex (confirmed by a heartbeat round to a majority),
  wait until its state machine reached that index, then read locally. Serializable reads are
  answered by the leader if there is one, else by any running member, from its local state.
- Watches read from the leader's revision log and follow leadership: on a change they reopen on
  the new leader from the revision after the last one delivered, once that member has applied it,
  so no revision is skipped or repeated.
- Without a leader, or without a majority to commit, requests fail after :data:`REQUEST_TIMEOUT`
  simulated seconds with ``UnavailableError("etcdserver: no leader")`` or
  ``UnavailableError("etcdserver: request timed out")`` (etcd's texts); the API server answers
  503/504. Requests that never reached a leader's log are retried within that time.
- The quota is the cluster's (etcd checks it before proposing): a write that would grow the
  leader's database past it raises the NOSPACE alarm through Raft, after which every member
  rejects puts until the alarm is disarmed.
- The disk is checked too: while the members' filesystem has less free than
  :data:`DISK_RESERVE_BYTES` plus what the WALs are about to preallocate, writes that put are
  refused with etcd's NOSPACE error before they are proposed; reads, deletes and compaction go on,
  and writes are taken again once space is back. Should a write still find the disk full, the
  member that could not make it durable crashes rather than apply it (every write is checked, see
  :mod:`kconsole.store.fileio`); it is started again once there is room, and replays its WAL.

Request timeout: etcd's server-side default is 5 s plus two election timeouts; kconsole uses 5 s of
simulated time, the figure apiserver operators recognise.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import sqlite3
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kconsole.clock import Clock, TimerHandle
from kconsole.store.kv import (
    ClosedError,
    DEFAULT_QUOTA_BYTES,
    Compare,
    Get,
    Put,
    NoSpaceError,
    Op,
    RangeResult,
    Status,
    StoreError,
    TxnResult,
    UnavailableError,
    WatchResponse,
)
from kconsole.store.fileio import is_disk_full
from kconsole.store.members import NOSPACE, Machine, Member, MemberStatus, RaftConfig, Storage
from kconsole.store.network import Network
from kconsole.store.raft import codec
from kconsole.store.raft.codec import Command
from kconsole.store.raft.wal import WalCorrupt
from kconsole.store.revlog import validate_txn

log = logging.getLogger(__name__)

#: Simulated seconds a request may wait for a leader and a commit.
REQUEST_TIMEOUT = 5.0
#: The folder of a kconsole data folder that holds its etcd members (``DATA/etcd/etcd-0``, ...).
MEMBERS_DIR = "etcd"
#: Free bytes the members' filesystem keeps in reserve (for deletes, compaction, SQLite's
#: checkpoints) beyond the WAL preallocations to come: below it, puts are refused with NOSPACE.
DISK_RESERVE_BYTES = 64 * 1024 * 1024
#: Free bytes below which the disk counts as full whatever the reserve: a member the full disk
#: crashed is not started again below it (it would only crash again).
MIN_FREE_BYTES = 1024 * 1024
#: Disk bytes a put of N quota bytes is assumed to take until the free space is looked at again
#: (its WAL record and SQLite's WAL and file, on each member).
DISK_BYTES_PER_COST = 3
#: Simulated seconds of history kept below the compact revision (history reads, not API clients).
HISTORY_RETENTION = 24 * 3600.0
#: Bytes of writes kept as history at most (whichever of the two bounds is smaller wins).
HISTORY_MAX_BYTES = 2 * 1024 * 1024 * 1024
#: Client ports of members 1..5, as etcd's own multi-member examples use.
CLIENT_PORTS = (2379, 22379, 32379, 42379, 52379, 62379, 12379)


def client_port(i: int) -> int:
    """The client port member ``i`` (0-based) shows as its endpoint."""
    return CLIENT_PORTS[i] if i < len(CLIENT_PORTS) else 2379 + 10000 * i


@dataclass(frozen=True, slots=True)
class Quorum:
    members: int
    alive: int  # running, not paused, and on the leader's side of any partition
    needed: int
    #: Further member failures the live members survive (not the cluster size's (n-1)/2: with one
    #: of three down, the next failure loses quorum).
    failures_tolerated: int

    @classmethod
    def of(cls, members: int, alive: int) -> Quorum:
        needed = members // 2 + 1
        return cls(members, alive, needed, max(0, alive - needed))

    @property
    def ok(self) -> bool:
        return self.alive >= self.needed

    def line(self) -> str:
        """``quorum ok: 2 alive / 2 needed / tolerates 0`` or ``quorum LOST: 1 alive / 2 needed``."""
        if not self.ok:
            return f"quorum LOST: {self.alive} alive / {self.needed} needed"
        return f"quorum ok: {self.alive} alive / {self.needed} needed / tolerates {self.failures_tolerated}"


class EtcdCluster:
    """The KV protocol over N members. Fault handles live on this object and on ``members``."""

    def __init__(
        self,
        members: list[Member],
        network: Network,
        clock: Clock,
        *,
        request_timeout: float = REQUEST_TIMEOUT,
        quota_bytes: int = DEFAULT_QUOTA_BYTES,
        auto_compact_interval: float = 0.0,
        data_dir: Path | None = None,
        disk_reserve_bytes: int = DISK_RESERVE_BYTES,
        history_retention: float = HISTORY_RETENTION,
        history_max_bytes: int = HISTORY_MAX_BYTES,
    ) -> None:
        if not members:
            raise ValueError("an etcd cluster needs at least one member")
        self.members = members
        self.network = network
        self.clock = clock
        self.request_timeout = request_timeout
        self.quota_bytes = quota_bytes
        self.auto_compact_interval = auto_compact_interval
        #: How much history compaction leaves in the members' files (see :meth:`compact`).
        self.history_retention = history_retention
        self.history_max_bytes = history_max_bytes
        self._changed = asyncio.Event()
        self._deadlines: deque[tuple[float, asyncio.Future[Any], bool]] = deque()
        self._sweeper: TimerHandle | None = None
        self._compactor: TimerHandle | None = None
        self._compact_target = 0
        self._closed = False
        self._db_size = 0  # bytes in use on the leader, plus what was accepted since last read
        self._sweeps = 0
        self._leader: Member | None = None
        self._leader_known = False
        #: The members' folder, whose filesystem's free space is watched (None: no files, no check).
        self.data_dir = data_dir
        self.disk_reserve_bytes = disk_reserve_bytes
        self._disk_free = 0  # at the last look, less what puts accepted since are assumed to take
        self._disk_low = False
        self._restarting: set[str] = set()
        for m in members:
            m.on_change = self._on_change

    # ----- construction ------------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        names: list[str],
        *,
        clock: Clock,
        seed: int,
        storage: Callable[[str], Storage],
        machine: Callable[[str], Callable[[], Awaitable[Machine]]],
        config: RaftConfig | None = None,
        network: Network | None = None,
        **kwargs: Any,
    ) -> EtcdCluster:
        """Members named ``names`` with per-member storage and state-machine factories."""
        rng = random.Random(seed)
        net = network or Network(clock, random.Random(rng.random()))
        from kconsole.store.members import member_id

        ids = [member_id(n) for n in names]
        members: list[Member] = []
        for i, name in enumerate(names):
            port = client_port(i)
            store = storage(name)
            members.append(Member(
                name, f"127.0.0.1:{port}", ids, clock=clock, network=net, rng=random.Random(rng.random()),
                storage=lambda s=store: s, machine=machine(name), config=config, mid=ids[i],
            ))
        return cls(members, net, clock, **kwargs)

    @classmethod
    async def open(
        cls,
        data_dir: str | os.PathLike[str],
        *,
        clock: Clock,
        members: int = 3,
        seed: int = 1,
        config: RaftConfig | None = None,
        fsync: bool = False,
        synchronous: str = "NORMAL",
        quota_bytes: int = DEFAULT_QUOTA_BYTES,
        request_timeout: float = REQUEST_TIMEOUT,
        auto_compact_interval: float = 300.0,
        disk_reserve_bytes: int = DISK_RESERVE_BYTES,
        history_retention: float = HISTORY_RETENTION,
        history_max_bytes: int = HISTORY_MAX_BYTES,
        start: bool = True,
    ) -> EtcdCluster:
        """The production cluster: ``data_dir/etcd-N/`` holds member N's ``db.sqlite`` and ``wal/``."""
        from kconsole.store.members import RevlogMachine
        from kconsole.store.raft.wal import FileStorage

        if members < 1:
            raise ValueError(f"--control-planes must be at least 1, got {members}")
        root = Path(data_dir)
        names = member_names(members)

        def storage(name: str) -> Callable[[], Storage]:
            return lambda: FileStorage(root / name / "wal", fsync=fsync)

        def machine(name: str) -> Callable[[], Awaitable[Machine]]:
            return lambda: RevlogMachine.open(root / name / "db.sqlite", clock=clock, synchronous=synchronous)

        rng = random.Random(seed)
        net = Network(clock, random.Random(rng.random()))
        from kconsole.store.members import member_id

        ids = [member_id(n) for n in names]
        built: list[Member] = []
        for i, name in enumerate(names):
            port = client_port(i)
            built.append(Member(
                name, f"127.0.0.1:{port}", ids, clock=clock, network=net, rng=random.Random(rng.random()),
                storage=storage(name), machine=machine(name), config=config, mid=ids[i],
                role_file=root / name / "member.json",
            ))
        cluster = cls(built, net, clock, request_timeout=request_timeout, quota_bytes=quota_bytes,
                      auto_compact_interval=auto_compact_interval, data_dir=root,
                      disk_reserve_bytes=disk_reserve_bytes, history_retention=history_retention,
                      history_max_bytes=history_max_bytes)
        if start:
            await cluster.start()
        return cluster

    async def start(self) -> None:
        if self.data_dir is not None:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            self._look_at_disk()
        for m in self.members:
            try:
                await m.start()
            except (sqlite3.Error, WalCorrupt) as err:  # a damaged file: say which, in one line
                where = f" in {self.data_dir / m.name}" if self.data_dir is not None else ""
                raise StoreError(f"etcd member {m.name}{where} cannot be opened: {err}") from err
        sizes = [(await m.machine.status()).db_size_in_use for m in self.members if m.machine is not None]
        self._db_size = max(sizes, default=0)
        self._sweeper = self.clock.call_later(0.25, self._sweep)
        if self.auto_compact_interval > 0:
            self._compactor = self.clock.call_later(self.auto_compact_interval, self._auto_compact)

    # ----- leadership --------------------------------------------------------------------------
    def leader(self) -> Member | None:
        """The running member that believes it leads, at the highest term (a deposed leader cut off
        in a minority may still believe it; the newer term wins). Cached until a member reports a
        change of role, leader or term."""
        cached = self._leader
        if self._leader_known and cached is not None and cached.is_leader:
            return cached
        best: Member | None = None
        for m in self.members:
            if m.is_leader and (best is None or m.term > best.term):
                best = m
        self._leader, self._leader_known = best, True
        return best

    def member(self, name_or_id: str | int) -> Member:
        for m in self.members:
            if name_or_id in (m.name, m.id, f"{m.id:x}", m.endpoint):
                return m
        raise KeyError(f"no etcd member {name_or_id!r}")

    def _on_change(self) -> None:
        self._leader_known = False
        self._changed.set()
        self._changed = asyncio.Event()

    async def _wait_leader(self, deadline: float) -> Member:
        while True:
            leader = self.leader()
            if leader is not None:
                return leader
            if self._closed:
                raise UnavailableError("etcdserver: server stopped")
            remaining = deadline - self.clock.now()
            if remaining <= 0:
                raise UnavailableError("etcdserver: no leader")
            changed = self._changed
            try:
                await self.clock.wait_for(changed.wait(), remaining)
            except TimeoutError:
                raise UnavailableError("etcdserver: no leader") from None

    def _sweep(self) -> None:
        """Fail requests past their deadline (one timer for all of them, not one per request)."""
        now = self.clock.now()
        while self._deadlines and self._deadlines[0][0] <= now:
            _, fut, is_read = self._deadlines.popleft()
            if not fut.done():
                fut.set_exception(UnavailableError("etcdserver: request timed out"))
        if not self._closed:
            self._sweeps += 1
            if self._sweeps % 40 == 0:  # every 10 s: re-read the space in use for the quota check
                asyncio.get_running_loop().create_task(self._refresh_usage())
            if self.data_dir is not None:
                self._look_at_disk()
                self._restart_when_room()
            self._sweeper = self.clock.call_later(0.25, self._sweep)

    # ----- the disk ----------------------------------------------------------------------------
    def disk_reserve(self) -> int:
        """Free bytes below which puts are refused: the reserve plus the WALs' coming preallocations."""
        return max(MIN_FREE_BYTES, self.disk_reserve_bytes) + sum(
            m.storage.growth() for m in self.members if m.running and m.storage is not None)

    def _look_at_disk(self) -> None:
        assert self.data_dir is not None
        try:
            st = os.statvfs(self.data_dir)
        except OSError:
            return
        self._disk_free = st.f_bavail * st.f_frsize
        low = self._disk_free < self.disk_reserve()
        if low != self._disk_low:
            self._disk_low = low
            log.warning("etcd: %s", f"{self.data_dir} has {self._disk_free >> 20} MiB free, below the "
                        f"{self.disk_reserve() >> 20} MiB reserve: writes are refused (NOSPACE) until "
                        f"space is freed" if low else f"{self.data_dir} has room again: writes are accepted")

    def out_of_space(self, cost: int = 0) -> bool:
        """Whether a put of ``cost`` quota bytes must be refused for the disk (see the module doc)."""
        if self.data_dir is None:
            return False
        if any(is_disk_full(m.failure) for m in self.members if not m.running):
            return True
        self._disk_free -= cost * DISK_BYTES_PER_COST * len(self.members)
        if self._disk_low or self._disk_free < self.disk_reserve():
            self._look_at_disk()
        return self._disk_low

    def _restart_when_room(self) -> None:
        """Start again a member the full disk crashed, once the disk has room (each one at a time)."""
        if self._disk_low:
            return
        for m in self.members:
            if not m.running and m.name not in self._restarting and is_disk_full(m.failure):
                self._restarting.add(m.name)
                asyncio.get_running_loop().create_task(self._restart(m))

    async def _restart(self, member: Member) -> None:
        try:
            await member.start()
            log.warning("etcd: %s started again after the disk had room", member.name)
        except Exception as err:  # noqa: BLE001 - still no room: the next sweep tries again
            member.failure = err
        finally:
            self._restarting.discard(member.name)

    async def _refresh_usage(self) -> None:
        try:
            await self.status()
        except StoreError:
            pass

    async def _await(self, fut: asyncio.Future[Any], deadline: float, is_read: bool = False) -> Any:
        self._deadlines.append((deadline, fut, is_read))
        return await fut

    async def _propose(self, command: Command, deadline: float | None = None,
                       failed: UnavailableError | ClosedError | None = None) -> Any:
        """Propose to the leader, retrying within the request timeout what no leader took.

        ``failed``: the first attempt (made by the caller, see :meth:`txn`) failed with this."""
        if deadline is None:
            deadline = self.clock.now() + self.request_timeout
        if failed is not None:
            await self._before_retry(failed, deadline)
        while True:
            leader = self.leader() or await self._wait_leader(deadline)
            try:
                fut = leader.propose(command)
                self._deadlines.append((deadline, fut, False))  # what _await does, one coroutine less per write
                return await fut
            except (UnavailableError, ClosedError) as err:
                await self._before_retry(err, deadline)

    async def _before_retry(self, err: UnavailableError | ClosedError, deadline: float) -> None:
        if str(err) == "etcdserver: request timed out":
            raise err
        if self.clock.now() >= deadline:
            raise UnavailableError("etcdserver: request timed out") from None
        await self._next_change(deadline)

    async def _next_change(self, deadline: float) -> None:
        changed = self._changed
        try:
            await self.clock.wait_for(changed.wait(), max(0.0, min(deadline - self.clock.now(), 0.1)))
        except TimeoutError:
            pass

    # ----- KV protocol -------------------------------------------------------------------------
    @property
    def revision(self) -> int:
        leader = self.leader()
        if leader is not None and leader.machine is not None:
            return leader.machine.revision
        return max((m.machine.revision for m in self.members if m.running and m.machine), default=0)

    async def txn(self, compares: list[Compare], success: list[Op], failure: list[Op] | None = None) -> TxnResult:
        failure = failure or []
        # Malformed or oversized requests never enter the Raft log (etcd checks them before proposing).
        cost = validate_txn(compares, success, failure)[0]
        leader = self.leader()
        if cost:
            if leader is not None and leader.alarms & NOSPACE:
                raise NoSpaceError()
            if self.data_dir is not None and self.out_of_space(cost):
                raise NoSpaceError()
            if self._db_size + cost > self.quota_bytes:
                await self.raise_alarm()
                raise NoSpaceError()
            self._db_size += cost
        command = codec.txn_command(compares, success, failure)
        if leader is None:
            result = await self._propose(command)
        else:  # _propose's first attempt, inline: one coroutine frame less per write
            now = self.clock.now()
            deadline = now + self.request_timeout
            try:
                fut = leader.propose(command, now)
                self._deadlines.append((deadline, fut, False))
                result = await fut
            except (UnavailableError, ClosedError) as err:
                result = await self._propose(command, deadline, err)
        if isinstance(result, BaseException):
            raise result
        return result  # type: ignore[no-any-return]

    def create(self, key: str, value: bytes, lease: int = 0) -> Coroutine[Any, Any, TxnResult]:
        """Put only if absent (Kubernetes' create); on failure ``responses[0]`` is the key's Get.

        A plain function handing back :meth:`txn`'s coroutine: one coroutine frame less per write."""
        return self.txn([Compare(key, "mod", "=", 0)], [Put(key, value, lease)], [Get(key)])

    def update(self, key: str, value: bytes, mod_revision: int, lease: int = 0) -> Coroutine[Any, Any, TxnResult]:
        """Put only if unchanged since ``mod_revision`` (Kubernetes' update)."""
        return self.txn([Compare(key, "mod", "=", mod_revision)], [Put(key, value, lease)], [Get(key)])

    async def range(
        self, key: str, end: str | None = None, *, revision: int = 0, limit: int = 0, count_only: bool = False,
        keys_only: bool = False, serializable: bool = False,
    ) -> RangeResult:
        deadline = self.clock.now() + self.request_timeout
        if serializable:
            member = self.leader() or next((m for m in self.members if m.running and not m.paused), None)
            if member is None:
                raise UnavailableError("etcdserver: no leader")
            await self._await(member.wait_resumed(), deadline, True)
            return await member.kv.range(key, end, revision=revision, limit=limit, count_only=count_only,
                                         keys_only=keys_only, serializable=True)
        while True:
            leader = await self._wait_leader(deadline)
            try:
                index = await self._await(leader.read_index(), deadline, True)
                await self._await(leader.wait_applied(index), deadline, True)
                return await leader.kv.range(key, end, revision=revision, limit=limit, count_only=count_only,
                                             keys_only=keys_only, serializable=True)
            except (UnavailableError, ClosedError) as err:
                # Reads are idempotent: retry on the next leader unless time is up.
                if str(err) == "etcdserver: request timed out":
                    raise
                if self.clock.now() >= deadline:
                    raise UnavailableError("etcdserver: request timed out") from None
                await self._next_change(deadline)

    async def compact(self, revision: int) -> None:
        """Compact for API clients (reads below ``revision`` answer 410); the rows go only below the
        history floor the leader works out from the history settings, carried in the command so
        every member deletes the same."""
        command: Command = ("c", revision)
        log = self._history_log(required=False)
        if log is not None:
            floor = log.floor_for(self.clock.now(), self.history_retention, self.history_max_bytes)
            command = ("c", revision, min(floor, revision))
        result = await self._propose(command)
        if isinstance(result, BaseException):
            raise result

    # ----- history reads -----------------------------------------------------------------------
    def _history_log(self, required: bool = True) -> Any:
        """The revision log history is read from: the leader's, else any running member's."""
        member = self.leader() or next((m for m in self.members if m.running and not m.paused), None)
        log = getattr(member.machine, "log", None) if member is not None and member.machine is not None else None
        if log is None or not hasattr(log, "changes"):
            if required:
                raise UnavailableError("etcdserver: no leader")
            return None
        return log

    def history_bounds(self) -> tuple[int, int, float, float]:
        """(oldest revision a history read serves, current revision, their simulated times)."""
        log = self._history_log()
        oldest, current = min(log.history_floor, log.revision), log.revision
        return oldest, current, log.time_of(oldest), log.time_of(current)

    async def history_range(self, key: str, end: str | None, revision: int, limit: int = 0) -> RangeResult:
        """A range at a past revision still in the history (below the compact revision too)."""
        return await self._history_log().range(key, end, revision=revision, limit=limit, history=True)  # type: ignore[no-any-return]

    async def history_changes(self, key: str, end: str | None, after: int, upto: int, limit: int = 0,
                              by_name: bool = False) -> list[Any]:
        """Writes to ``[key, end)`` in revisions ``(after, upto]``, oldest first (kv.Event each);
        ``by_name`` when the range holds few keys (see RevisionLog.changes)."""
        return await self._history_log().changes(key, end, after, upto, limit, by_name)  # type: ignore[no-any-return]

    def time_of(self, revision: int) -> float:
        return self._history_log().time_of(revision)  # type: ignore[no-any-return]

    def revision_at(self, time: float) -> int:
        return self._history_log().revision_at(time)  # type: ignore[no-any-return]

    async def status(self) -> Status:
        member = self.leader() or next((m for m in self.members if m.running and not m.paused), None)
        if member is None or member.machine is None:
            raise UnavailableError("etcdserver: no leader")
        st = await member.machine.status()
        self._db_size = st.db_size_in_use
        alarms = ["NOSPACE"] if member.alarms & NOSPACE else []
        return Status(st.revision, st.compact_revision, st.db_size, st.db_size_in_use, st.keys, alarms)

    async def close(self) -> None:
        self._closed = True
        for handle in (self._sweeper, self._compactor):
            if handle is not None:
                handle.cancel()
        for m in self.members:
            await m.stop()
        self._on_change()

    def watch(
        self, key: str, end: str | None = None, *, start_revision: int = 0, prev_kv: bool = True,
        progress_notify: bool = False,
    ) -> LeaderWatch:
        stream = LeaderWatch(self.leader)
        stream.responses = self._watch(key, end, start_revision, prev_kv, progress_notify, stream)
        return stream

    async def _watch(
        self, key: str, end: str | None, start_revision: int, prev_kv: bool, progress_notify: bool,
        stream: LeaderWatch,
    ) -> AsyncIterator[WatchResponse]:
        next_rev = start_revision
        while not self._closed:
            leader = await self._wait_leader(float("inf"))
            if next_rev <= 0:
                next_rev = leader.machine.revision + 1 if leader.machine else 1
            try:
                await leader.wait_applied_revision(next_rev - 1)
            except UnavailableError:
                await self._next_change(self.clock.now() + 1.0)
                continue
            if not leader.is_leader:
                await self._next_change(self.clock.now() + 1.0)
                continue
            queue: asyncio.Queue[WatchResponse | None] = asyncio.Queue()
            stream.queue, stream.in_transit = queue, 0
            pump = asyncio.get_running_loop().create_task(
                _pump(leader, key, end, next_rev, prev_kv, progress_notify, queue, stream))
            try:
                while True:
                    changed = self._changed
                    if not leader.is_leader or self.leader() is not leader:
                        break
                    get = asyncio.ensure_future(queue.get())
                    wait = asyncio.ensure_future(changed.wait())
                    done, _ = await asyncio.wait({get, wait}, return_when=asyncio.FIRST_COMPLETED)
                    if get not in done:
                        get.cancel()
                        wait.cancel()
                        continue
                    wait.cancel()
                    resp = get.result()
                    stream.in_transit -= 1
                    if resp is None:
                        break
                    if resp.canceled:
                        yield resp
                        return
                    events = [e for e in resp.events if e.kv.mod_revision >= next_rev]
                    if events:
                        next_rev = events[-1].kv.mod_revision + 1
                        yield WatchResponse(events, resp.revision)
                    elif resp.progress and resp.revision >= next_rev - 1:
                        next_rev = resp.revision + 1
                        yield resp
            finally:
                pump.cancel()

    # ----- alarms and auto compaction ----------------------------------------------------------
    async def raise_alarm(self) -> None:
        """Raise NOSPACE on every member, through Raft (what etcd does when the quota is hit)."""
        await self._propose(("alarm", NOSPACE, 1))

    async def disarm(self) -> None:
        """``etcdctl alarm disarm``: writes are accepted again (hit the quota again and it re-arms)."""
        await self._propose(("alarm", NOSPACE, 0))

    def _auto_compact(self) -> None:
        """Every interval, compact to the revision seen one interval ago (the apiserver's compactor)."""
        if self._closed:
            return
        target, self._compact_target = self._compact_target, self.revision
        if target > 0:
            asyncio.get_running_loop().create_task(self._compact_quietly(target))
        self._compactor = self.clock.call_later(self.auto_compact_interval, self._auto_compact)

    async def _compact_quietly(self, revision: int) -> None:
        try:
            await self.compact(revision)
        except StoreError:
            pass

    # ----- status and faults -------------------------------------------------------------------
    async def member_status(self) -> list[MemberStatus]:
        out = [await m.status() for m in self.members]
        leader = self.leader()
        for st in out:
            if leader is None:
                st.healthy = False
            if leader is not None and st.db_size_in_use and st.is_leader:
                self._db_size = st.db_size_in_use
        return out

    def quorum(self) -> Quorum:
        alive_ids = {m.id for m in self.members if m.running and not m.paused}
        best = max(
            (side & alive_ids for side in self.network.sides()), key=len, default=alive_ids,
        ) if alive_ids else set()
        return Quorum.of(len(self.members), len(best))

    def partition(self, member_ids: set[str] | set[int] | list[Any]) -> None:
        """Cut the given members (names or ids) off from the others."""
        ids = {self.member(x).id for x in member_ids}
        self.network.partition(ids)

    def heal(self) -> None:
        self.network.heal()

    def set_network(self, *, delay: float | None = None, jitter: float | None = None,
                    drop: float | None = None) -> None:
        self.network.set_conditions(delay=delay, jitter=jitter, drop=drop)

    async def exhaust_quota(self) -> None:
        """The NOSPACE fault: the quota drops to what is in use, so the next put raises the alarm."""
        st = await self.status()
        self.quota_bytes = st.db_size_in_use
        await self.raise_alarm()

    async def restore_quota(self, quota_bytes: int = DEFAULT_QUOTA_BYTES) -> None:
        self.quota_bytes = quota_bytes
        await self.disarm()

    async def move_leader(self, to: str | int) -> Member:
        """``etcdctl move-leader``: hand leadership to ``to``; returns the new leader."""
        target = self.member(to)
        deadline = self.clock.now() + self.request_timeout
        leader = await self._wait_leader(deadline)
        if leader is target:
            return target
        if not target.running:
            raise UnavailableError(f"etcdserver: member {target.id:x} is not running")
        leader.transfer_leadership(target.id)
        while self.leader() is not target:
            if self.clock.now() >= deadline:
                raise UnavailableError("etcdserver: request timed out, leader transfer took too long")
            await self._next_change(deadline)
        return target

    async def kill_leader(self) -> Member | None:
        """Crash the current leader (start it again with ``member.start()``)."""
        leader = self.leader()
        if leader is not None:
            await leader.stop()
            self._on_change()
        return leader


def member_names(n: int) -> list[str]:
    return [f"etcd-{i}" for i in range(n)]


class LeaderWatch:
    """A watch that follows the leader. :meth:`settled` says whether its reader holds every event up
    to the facade's revision, which the API server's watch cache needs before it may claim that
    revision (a write it did not see succeed may still be on its way through the stream)."""

    def __init__(self, leader: Callable[[], Member | None]) -> None:
        self.responses: AsyncIterator[WatchResponse] | None = None
        self._leader = leader
        self.member: Member | None = None
        self.watcher: Any = None  # the member's watch being pumped, while one is open
        #: The queue between the pump and the reader now, and the responses in it or just taken off
        #: it and not yet handed to the reader (a pump of an earlier leader no longer counts).
        self.queue: asyncio.Queue[WatchResponse | None] | None = None
        self.in_transit = 0

    def __aiter__(self) -> AsyncIterator[WatchResponse]:
        assert self.responses is not None
        return self.responses

    def settled(self) -> bool:
        """Reading the leader's watch (whose revision the facade reports), with nothing in between."""
        watcher = self.watcher
        if watcher is None or self.in_transit or self.member is not self._leader():
            return False
        drained = getattr(watcher, "settled", None)
        return drained is not None and drained()

    async def aclose(self) -> None:
        if self.responses is not None:
            await self.responses.aclose()  # type: ignore[attr-defined]


async def _pump(member: Member, key: str, end: str | None, start: int, prev_kv: bool, progress: bool,
                queue: asyncio.Queue[WatchResponse | None], stream: LeaderWatch) -> None:
    watcher = None
    try:
        watcher = member.kv.watch(key, end, start_revision=start, prev_kv=prev_kv, progress_notify=progress)
        stream.member, stream.watcher = member, watcher
        async for resp in watcher:
            if stream.queue is queue:
                stream.in_transit += 1
            queue.put_nowait(resp)
            if resp.canceled:
                return
    except (StoreError, ValueError):
        pass
    finally:
        if stream.watcher is watcher:
            stream.member = stream.watcher = None
        if stream.queue is queue:
            stream.in_transit += 1
        queue.put_nowait(None)


class ProcessEtcdCluster(EtcdCluster):
    """The same facade over members that run in their own processes (``kconsole.store.remote``):
    they start together, follow this process's clock over their stdin, and close their files when
    the cluster closes (``stop()`` on a member stays a crash)."""

    _unfollow: Callable[[], None] | None = None

    async def start(self) -> None:
        if self.data_dir is not None:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            self._look_at_disk()
        results = await asyncio.gather(*(m.start() for m in self.members), return_exceptions=True)
        for m, result in zip(self.members, results):
            if isinstance(result, BaseException):
                await asyncio.gather(*(x.shutdown() for x in self.members))  # type: ignore[attr-defined]
                if isinstance(result, (sqlite3.Error, WalCorrupt)):
                    where = f" in {self.data_dir / m.name}" if self.data_dir is not None else ""
                    raise StoreError(f"etcd member {m.name}{where} cannot be opened: {result}") from result
                raise result
        on_change = getattr(self.clock, "on_change", None)
        if on_change is not None:
            from kconsole.clockpipe import send_clock

            self._unfollow = on_change(lambda: [send_clock(m.process, self.clock) for m in self.members])
        sizes = []
        for m in self.members:
            try:
                sizes.append((await m.machine.status()).db_size_in_use if m.machine is not None else 0)
            except StoreError:
                pass
        self._db_size = max(sizes, default=0)
        self._sweeper = self.clock.call_later(0.25, self._sweep)
        if self.auto_compact_interval > 0:
            self._compactor = self.clock.call_later(self.auto_compact_interval, self._auto_compact)

    async def close(self) -> None:
        self._closed = True
        for handle in (self._sweeper, self._compactor):
            if handle is not None:
                handle.cancel()
        if self._unfollow is not None:
            self._unfollow()
            self._unfollow = None
        await asyncio.gather(*(m.shutdown() for m in self.members))  # type: ignore[attr-defined]
        self._on_change()
