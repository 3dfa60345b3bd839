"""Raft consensus as etcd runs it, as a pure state machine: no I/O, no clock, no asyncio.

The shape follows etcd's ``raft`` package: the owner feeds :meth:`RaftNode.tick` (one per
heartbeat interval), :meth:`RaftNode.step` (a peer's message), :meth:`RaftNode.propose` and
:meth:`RaftNode.read_index`, then drains :meth:`RaftNode.ready`: persist its hard state and
entries first, then send its messages, then apply its committed entries. PreVote and CheckQuorum
are on (etcd enables both), leadership transfer uses MsgTimeoutNow, linearizable reads use
ReadIndex confirmed by a heartbeat round. Membership is static.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field
from enum import Enum

from kconsole.store.raft.log import Entry, RaftLog

NONE = 0  # "no node": member ids start at 1

MSG_APP = "MsgApp"
MSG_APP_RESP = "MsgAppResp"
MSG_VOTE = "MsgVote"
MSG_VOTE_RESP = "MsgVoteResp"
MSG_PREVOTE = "MsgPreVote"
MSG_PREVOTE_RESP = "MsgPreVoteResp"
MSG_HEARTBEAT = "MsgHeartbeat"
MSG_HEARTBEAT_RESP = "MsgHeartbeatResp"
MSG_SNAP = "MsgSnap"
MSG_TIMEOUT_NOW = "MsgTimeoutNow"

_VOTE_RESP = {MSG_VOTE: MSG_VOTE_RESP, MSG_PREVOTE: MSG_PREVOTE_RESP}


class Role(str, Enum):
    FOLLOWER = "follower"
    PRE_CANDIDATE = "pre-candidate"
    CANDIDATE = "candidate"
    LEADER = "leader"


class ProposalDropped(Exception):
    """Not the leader, or a leadership transfer is in progress (etcd's ErrProposalDropped)."""


@dataclass(slots=True)
class Snapshot:
    """A state-machine image at ``index``/``term``; ``data`` is filled in by the member layer."""

    index: int
    term: int
    data: object = None


@dataclass(slots=True)
class Message:
    kind: str
    src: int
    dst: int
    term: int
    log_term: int = 0
    index: int = 0
    entries: list[Entry] = field(default_factory=list)
    commit: int = 0
    reject: bool = False
    hint: int = 0
    context: int = 0  # ReadIndex round, or 1 for a transfer-forced campaign
    snapshot: Snapshot | None = None


@dataclass(frozen=True, slots=True)
class HardState:
    """What must be durable before any message that depends on it leaves the node."""

    term: int = 0
    vote: int = NONE
    commit: int = 0


@dataclass(slots=True)
class Ready:
    hard_state: HardState | None
    entries: list[Entry]  # to persist; entries[0].index may overwrite (truncate) a persisted tail
    snapshot: Snapshot | None  # received from the leader: install before applying anything
    messages: list[Message]
    committed: list[Entry]  # to apply, in order, after ``entries`` are durable
    read_states: list[tuple[int, int]]  # (read context, commit index to wait for)

    def __bool__(self) -> bool:
        return bool(
            self.hard_state or self.entries or self.snapshot or self.messages or self.committed or self.read_states
        )


class _State(str, Enum):
    PROBE = "probe"
    REPLICATE = "replicate"
    SNAPSHOT = "snapshot"


class Progress:
    """The leader's view of one follower (etcd's tracker.Progress)."""

    __slots__ = ("match", "next", "state", "probe_sent", "inflight", "pending_snapshot", "recent_active",
                 "snapshot_ticks")

    def __init__(self, next_index: int) -> None:
        self.match = 0
        self.next = next_index
        self.state = _State.PROBE
        self.probe_sent = False
        self.inflight: deque[int] = deque()
        self.pending_snapshot = 0
        self.recent_active = False
        self.snapshot_ticks = 0

    def become_probe(self) -> None:
        if self.state is _State.SNAPSHOT:
            self.next = max(self.match + 1, self.pending_snapshot + 1)
        else:
            self.next = self.match + 1
        self.state, self.probe_sent, self.pending_snapshot = _State.PROBE, False, 0
        self.inflight.clear()

    def become_replicate(self) -> None:
        self.state, self.probe_sent, self.next = _State.REPLICATE, False, self.match + 1
        self.inflight.clear()

    def become_snapshot(self, index: int) -> None:
        self.state, self.pending_snapshot, self.snapshot_ticks = _State.SNAPSHOT, index, 0
        self.inflight.clear()

    def maybe_update(self, index: int) -> bool:
        updated = index > self.match
        if updated:
            self.match = index
            self.probe_sent = False
        self.next = max(self.next, index + 1)
        while self.inflight and self.inflight[0] <= index:
            self.inflight.popleft()
        return updated

    def maybe_decr_to(self, rejected: int, match_hint: int) -> bool:
        if self.state is _State.REPLICATE:
            if rejected <= self.match:
                return False
            self.next = self.match + 1
            return True
        if self.next - 1 != rejected:
            return False
        self.next = max(min(rejected, match_hint + 1), 1)
        self.probe_sent = False
        return True

    def paused(self, max_inflight: int) -> bool:
        if self.state is _State.PROBE:
            return self.probe_sent
        if self.state is _State.REPLICATE:
            return len(self.inflight) >= max_inflight
        return True


class RaftNode:
    """One Raft peer. Deterministic given its inputs and its seeded ``rng``."""

    def __init__(
        self,
        node_id: int,
        peers: list[int],
        *,
        rng: random.Random,
        election_tick: int = 10,
        heartbeat_tick: int = 1,
        pre_vote: bool = True,
        check_quorum: bool = True,
        max_inflight: int = 256,
        max_msg_bytes: int = 1024 * 1024,
        hard_state: HardState | None = None,
        log: RaftLog | None = None,
    ) -> None:
        if node_id not in peers:
            raise ValueError(f"raft: node {node_id} is not among peers {peers}")
        if node_id == NONE:
            raise ValueError("raft: node ids start at 1")
        self.id = node_id
        self.peers = sorted(peers)
        self.rng = rng
        self.election_tick = election_tick
        self.heartbeat_tick = heartbeat_tick
        self.pre_vote = pre_vote
        self.check_quorum = check_quorum
        self.max_inflight = max_inflight
        self.max_msg_bytes = max_msg_bytes
        self.log = log or RaftLog()
        hs = hard_state or HardState()
        self.term = hs.term
        self.vote = hs.vote
        self.log.commit_to(min(hs.commit, self.log.last_index))
        self.sm_applied = self.log.applied
        self.role = Role.FOLLOWER
        self.lead = NONE
        self.election_elapsed = 0
        self.heartbeat_elapsed = 0
        self.randomized_timeout = election_tick
        self.votes: dict[int, bool] = {}
        self.progress: dict[int, Progress] = {}
        self.lead_transferee = NONE
        self._msgs: list[Message] = []
        self._read_states: list[tuple[int, int]] = []
        self._pending_reads: list[int] = []  # read contexts waiting for a commit in this term
        self._reads: dict[int, tuple[int, set[int]]] = {}  # ctx -> (commit index, acks), in arrival order
        self._snapshot_in: Snapshot | None = None
        self._prev_hs = HardState(self.term, self.vote, self.log.committed)
        self._become_follower(self.term, NONE)

    # ----- introspection -----------------------------------------------------------------------
    @property
    def quorum(self) -> int:
        return len(self.peers) // 2 + 1

    @property
    def hard_state(self) -> HardState:
        return HardState(self.term, self.vote, self.log.committed)

    @property
    def transferring(self) -> bool:
        return self.lead_transferee != NONE

    def match_of(self, peer: int) -> int:
        """The leader's knowledge of ``peer``'s replicated index (0 when not leader)."""
        pr = self.progress.get(peer)
        return pr.match if pr else 0

    # ----- inputs ------------------------------------------------------------------------------
    def tick(self) -> None:
        if self.role is Role.LEADER:
            self._tick_heartbeat()
        else:
            self._tick_election()

    def campaign(self) -> None:
        """Start an election now (etcd's MsgHup)."""
        if self.role is not Role.LEADER:
            self._hup(transfer=False)

    def propose(self, data: bytes, decoded: object = None) -> int:
        """Append ``data`` as a new entry; returns its index (its term is :attr:`term`)."""
        if self.role is not Role.LEADER:
            raise ProposalDropped("etcdserver: not leader")
        if self.lead_transferee != NONE:
            raise ProposalDropped("etcdserver: leader transfer in progress")
        entry = Entry(self.log.last_index + 1, self.term, data, decoded)
        self._append([entry])
        self._bcast_append()
        return entry.index

    def read_index(self, ctx: int) -> None:
        """Ask for a linearizable read point; the answer comes as ``(ctx, index)`` in ready()."""
        if self.role is not Role.LEADER:
            raise ProposalDropped("etcdserver: not leader")
        if self.quorum == 1:
            self._read_states.append((ctx, self.log.committed))
            return
        if self.log.term(self.log.committed) != self.term:
            self._pending_reads.append(ctx)
            return
        self._start_read(ctx)

    def transfer_leader(self, to: int) -> None:
        """etcd's MoveLeader: catch ``to`` up, then tell it to campaign at once."""
        if self.role is not Role.LEADER:
            raise ProposalDropped("etcdserver: not leader")
        if to not in self.peers:
            raise ValueError(f"raft: no member {to:x}")
        if to == self.id:
            return
        self.lead_transferee = to
        self.election_elapsed = 0
        pr = self.progress[to]
        if pr.match == self.log.last_index:
            self._send(Message(MSG_TIMEOUT_NOW, self.id, to, self.term))
        else:
            self._send_append(to)

    def report_snapshot(self, peer: int, ok: bool) -> None:
        """The member layer could not deliver a snapshot: go back to probing."""
        pr = self.progress.get(peer)
        if self.role is Role.LEADER and pr and pr.state is _State.SNAPSHOT and not ok:
            pr.become_probe()
            pr.probe_sent = True  # wait for the next heartbeat response before retrying

    def applied_to(self, index: int) -> None:
        """The state machine holds everything up to ``index``: snapshots are cut there."""
        if index > self.log.applied:
            raise AssertionError("raft: applied beyond what was handed out")
        self.sm_applied = max(self.sm_applied, index)

    def step(self, m: Message) -> None:
        if m.term > self.term:
            if m.kind in (MSG_VOTE, MSG_PREVOTE):
                force = m.context == 1
                in_lease = self.check_quorum and self.lead != NONE and self.election_elapsed < self.election_tick
                if in_lease and not force:
                    return
            if m.kind == MSG_PREVOTE or (m.kind == MSG_PREVOTE_RESP and not m.reject):
                pass
            elif m.kind in (MSG_APP, MSG_HEARTBEAT, MSG_SNAP):
                self._become_follower(m.term, m.src)
            else:
                self._become_follower(m.term, NONE)
        elif m.term < self.term:
            if (self.check_quorum or self.pre_vote) and m.kind in (MSG_HEARTBEAT, MSG_APP):
                self._send(Message(MSG_APP_RESP, self.id, m.src, self.term))
            elif m.kind == MSG_PREVOTE:
                self._send(Message(MSG_PREVOTE_RESP, self.id, m.src, self.term, reject=True))
            return

        if m.kind in (MSG_VOTE, MSG_PREVOTE):
            can_vote = (
                self.vote == m.src
                or (self.vote == NONE and self.lead == NONE)
                or (m.kind == MSG_PREVOTE and m.term > self.term)
            )
            if can_vote and self.log.is_up_to_date(m.index, m.log_term):
                self._send(Message(_VOTE_RESP[m.kind], self.id, m.src, m.term))
                if m.kind == MSG_VOTE:
                    self.election_elapsed = 0
                    self.vote = m.src
            else:
                self._send(Message(_VOTE_RESP[m.kind], self.id, m.src, self.term, reject=True))
            return

        if self.role is Role.LEADER:
            self._step_leader(m)
        elif self.role is Role.FOLLOWER:
            self._step_follower(m)
        else:
            self._step_candidate(m)

    # ----- output ------------------------------------------------------------------------------
    def ready(self) -> Ready:
        hs = self.hard_state
        changed = hs if hs != self._prev_hs else None
        self._prev_hs = hs
        snapshot, self._snapshot_in = self._snapshot_in, None
        rd = Ready(
            hard_state=changed,
            entries=self.log.unstable(),
            snapshot=snapshot,
            messages=self._msgs,
            committed=self.log.next_committed(),
            read_states=self._read_states,
        )
        self._msgs = []
        self._read_states = []
        return rd

    def has_ready(self) -> bool:
        return bool(
            self._msgs
            or self._read_states
            or self._snapshot_in
            or self.log.stable < self.log.last_index
            or self.log.applied < self.log.committed
            or self.hard_state != self._prev_hs
        )

    # ----- roles -------------------------------------------------------------------------------
    def _reset(self, term: int) -> None:
        if self.term != term:
            self.term = term
            self.vote = NONE
        self.lead = NONE
        self.election_elapsed = 0
        self.heartbeat_elapsed = 0
        self.randomized_timeout = self.election_tick + self.rng.randrange(self.election_tick)
        self.votes = {}
        self.lead_transferee = NONE
        self._pending_reads = []
        self._reads = {}
        last = self.log.last_index
        self.progress = {p: Progress(last + 1) for p in self.peers}
        self.progress[self.id].match = last

    def _become_follower(self, term: int, lead: int) -> None:
        self._reset(term)
        self.role = Role.FOLLOWER
        self.lead = lead

    def _become_pre_candidate(self) -> None:
        self.votes = {}
        self.lead = NONE
        self.role = Role.PRE_CANDIDATE

    def _become_candidate(self) -> None:
        self._reset(self.term + 1)
        self.vote = self.id
        self.role = Role.CANDIDATE

    def _become_leader(self) -> None:
        self._reset(self.term)
        self.lead = self.id
        self.role = Role.LEADER
        for pr in self.progress.values():
            pr.recent_active = True
        self._append([Entry(self.log.last_index + 1, self.term, b"")])
        self._bcast_append()

    def _hup(self, transfer: bool) -> None:
        if self.pre_vote and not transfer:
            self._campaign(MSG_PREVOTE, transfer)
        else:
            self._campaign(MSG_VOTE, transfer)

    def _campaign(self, kind: str, transfer: bool) -> None:
        if kind == MSG_PREVOTE:
            self._become_pre_candidate()
            term = self.term + 1
        else:
            self._become_candidate()
            term = self.term
        self.votes[self.id] = True
        if self._tally()[0] >= self.quorum:
            if kind == MSG_PREVOTE:
                self._campaign(MSG_VOTE, transfer)
            else:
                self._become_leader()
            return
        for peer in self.peers:
            if peer != self.id:
                self._send(Message(kind, self.id, peer, term, log_term=self.log.last_term,
                                   index=self.log.last_index, context=1 if transfer else 0))

    def _tally(self) -> tuple[int, int]:
        granted = sum(1 for v in self.votes.values() if v)
        return granted, len(self.votes) - granted

    # ----- ticks -------------------------------------------------------------------------------
    def _tick_election(self) -> None:
        self.election_elapsed += 1
        if self.election_elapsed >= self.randomized_timeout:
            self.election_elapsed = 0
            self._hup(transfer=False)

    def _tick_heartbeat(self) -> None:
        self.heartbeat_elapsed += 1
        self.election_elapsed += 1
        if self.election_elapsed >= self.election_tick:
            self.election_elapsed = 0
            if self.check_quorum:
                active = sum(1 for p, pr in self.progress.items() if p == self.id or pr.recent_active)
                if active < self.quorum:
                    self._become_follower(self.term, NONE)
                    return
                for p, pr in self.progress.items():
                    if p != self.id:
                        pr.recent_active = False
            if self.lead_transferee != NONE:
                self.lead_transferee = NONE
        for p, pr in self.progress.items():
            if pr.state is _State.SNAPSHOT:
                pr.snapshot_ticks += 1
                if pr.snapshot_ticks > 2 * self.election_tick:
                    pr.become_probe()
        if self.heartbeat_elapsed >= self.heartbeat_tick:
            self.heartbeat_elapsed = 0
            ctx = next(reversed(self._reads)) if self._reads else 0
            self._bcast_heartbeat(ctx)

    # ----- leader ------------------------------------------------------------------------------
    def _append(self, entries: list[Entry]) -> None:
        # The leader counts itself toward a commit only once its own write is durable (persisted()),
        # so it may replicate to followers while that write is still in progress, as etcd does.
        self.log.append(entries)

    def persisted(self, index: int, term: int) -> None:
        """Entries up to ``index`` (of ``term``) are durable in this node's storage."""
        if self.role is not Role.LEADER or term != self.term or self.log.term(index) != term:
            return
        if self.progress[self.id].maybe_update(index) and self._maybe_commit():
            self._bcast_append_if_needed()

    def _maybe_commit(self) -> bool:
        matches = sorted((pr.match for pr in self.progress.values()), reverse=True)
        if not self.log.maybe_commit(matches[self.quorum - 1], self.term):
            return False
        if self._pending_reads and self.log.term(self.log.committed) == self.term:
            pending, self._pending_reads = self._pending_reads, []
            for ctx in pending:
                self._start_read(ctx)
        return True

    def _bcast_append(self) -> None:
        for peer in self.peers:
            if peer != self.id:
                self._send_append(peer)

    def _bcast_heartbeat(self, ctx: int) -> None:
        for peer, pr in self.progress.items():
            if peer != self.id:
                commit = min(pr.match, self.log.committed)
                self._send(Message(MSG_HEARTBEAT, self.id, peer, self.term, commit=commit, context=ctx))

    def _send_append(self, peer: int, send_if_empty: bool = True) -> bool:
        pr = self.progress[peer]
        if pr.paused(self.max_inflight):
            return False
        prev_term = self.log.term(pr.next - 1)
        entries = self.log.slice(pr.next, self.max_msg_bytes) if prev_term is not None else None
        if prev_term is None or entries is None:
            if not pr.recent_active:
                return False
            index = max(self.sm_applied, self.log.snap_index)
            term = self.log.term(index)
            assert term is not None
            pr.become_snapshot(index)
            self._send(Message(MSG_SNAP, self.id, peer, self.term, snapshot=Snapshot(index, term)))
            return True
        if not entries and not send_if_empty:
            return False
        self._send(Message(MSG_APP, self.id, peer, self.term, log_term=prev_term, index=pr.next - 1,
                           entries=entries, commit=self.log.committed))
        if entries:
            last = entries[-1].index
            if pr.state is _State.REPLICATE:
                pr.next = last + 1
                pr.inflight.append(last)
            elif pr.state is _State.PROBE:
                pr.probe_sent = True
        return True

    def _start_read(self, ctx: int) -> None:
        self._reads[ctx] = (self.log.committed, {self.id})
        self._bcast_heartbeat(ctx)

    def _step_leader(self, m: Message) -> None:
        pr = self.progress.get(m.src)
        if pr is None:
            return
        if m.kind == MSG_APP_RESP:
            pr.recent_active = True
            if m.reject:
                hint = m.hint
                if m.log_term > 0:
                    hint, _ = self.log.find_conflict_by_term(m.hint, m.log_term)
                if pr.maybe_decr_to(m.index, hint):
                    if pr.state is _State.REPLICATE:
                        pr.become_probe()
                    self._send_append(m.src)
                return
            old_paused = pr.paused(self.max_inflight)
            if pr.maybe_update(m.index):
                if pr.state is _State.PROBE:
                    pr.become_replicate()
                elif pr.state is _State.SNAPSHOT and pr.match >= pr.pending_snapshot:
                    pr.become_probe()
                    pr.become_replicate()
                if self._maybe_commit():
                    self._bcast_append_if_needed()
                elif old_paused:
                    self._send_append(m.src)
                while self._send_append(m.src, send_if_empty=False):
                    pass
                if m.src == self.lead_transferee and pr.match == self.log.last_index:
                    self._send(Message(MSG_TIMEOUT_NOW, self.id, m.src, self.term))
        elif m.kind == MSG_HEARTBEAT_RESP:
            pr.recent_active = True
            pr.probe_sent = False
            if pr.match < self.log.last_index:
                self._send_append(m.src)
            if m.context and m.context in self._reads:
                self._ack_read(m.context, m.src)

    def _bcast_append_if_needed(self) -> None:
        """After a commit advance: tell followers the new commit index (piggybacked on appends)."""
        for peer in self.peers:
            if peer != self.id:
                self._send_append(peer)

    def _ack_read(self, ctx: int, src: int) -> None:
        index, acks = self._reads[ctx]
        acks.add(src)
        if len(acks) < self.quorum:
            return
        # Releasing ``ctx`` releases every earlier read too: the same heartbeat round proves them.
        for key in list(self._reads):
            idx, _ = self._reads.pop(key)
            self._read_states.append((key, idx))
            if key == ctx:
                break

    # ----- follower / candidate ----------------------------------------------------------------
    def _step_follower(self, m: Message) -> None:
        if m.kind == MSG_APP:
            self.election_elapsed = 0
            self.lead = m.src
            self._handle_append(m)
        elif m.kind == MSG_HEARTBEAT:
            self.election_elapsed = 0
            self.lead = m.src
            self.log.commit_to(min(m.commit, self.log.last_index))
            self._send(Message(MSG_HEARTBEAT_RESP, self.id, m.src, self.term, context=m.context))
        elif m.kind == MSG_SNAP:
            self.election_elapsed = 0
            self.lead = m.src
            self._handle_snapshot(m)
        elif m.kind == MSG_TIMEOUT_NOW:
            self._hup(transfer=True)

    def _step_candidate(self, m: Message) -> None:
        want = MSG_PREVOTE_RESP if self.role is Role.PRE_CANDIDATE else MSG_VOTE_RESP
        if m.kind in (MSG_APP, MSG_HEARTBEAT, MSG_SNAP):
            self._become_follower(m.term, m.src)
            self._step_follower(m)
        elif m.kind == want:
            self.votes.setdefault(m.src, not m.reject)
            granted, rejected = self._tally()
            if granted >= self.quorum:
                if self.role is Role.PRE_CANDIDATE:
                    self._campaign(MSG_VOTE, transfer=False)
                else:
                    self._become_leader()
            elif rejected >= len(self.peers) - self.quorum + 1:
                self._become_follower(self.term, NONE)

    def _handle_append(self, m: Message) -> None:
        if m.index < self.log.committed:
            self._send(Message(MSG_APP_RESP, self.id, m.src, self.term, index=self.log.committed))
            return
        last_new = self.log.maybe_append(m.index, m.log_term, m.commit, m.entries)
        if last_new is not None:
            self._send(Message(MSG_APP_RESP, self.id, m.src, self.term, index=last_new))
            return
        hint, hint_term = self.log.find_conflict_by_term(min(m.index, self.log.last_index), m.log_term)
        self._send(Message(MSG_APP_RESP, self.id, m.src, self.term, index=m.index, reject=True,
                           hint=hint, log_term=hint_term))

    def _handle_snapshot(self, m: Message) -> None:
        snap = m.snapshot
        assert snap is not None
        if snap.index <= self.log.committed:
            self._send(Message(MSG_APP_RESP, self.id, m.src, self.term, index=self.log.committed))
            return
        if self.log.match_term(snap.index, snap.term):
            # We already hold this prefix: fast-forward the commit only.
            self.log.commit_to(snap.index)
            self._send(Message(MSG_APP_RESP, self.id, m.src, self.term, index=self.log.committed))
            return
        self.log.restore(snap.index, snap.term)
        self.sm_applied = snap.index
        self._snapshot_in = snap
        self._send(Message(MSG_APP_RESP, self.id, m.src, self.term, index=self.log.last_index))

    def _send(self, m: Message) -> None:
        self._msgs.append(m)
