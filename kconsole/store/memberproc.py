"""One etcd member as an OS process (``--member-processes``): ``python -m kconsole.store.memberproc``.

The process reads its JSON spec on stdin (name, id, peers, folder, durability, Raft timing, the
parent's clock), opens its own WAL and SQLite file in its folder and runs the same
:class:`~kconsole.store.members.Member` as in-process members do, so its fsyncs and its CPU are
its own. It listens on one loopback TCP port, printed as ``ready 127.0.0.1:PORT``:

- peers connect and say ``("hello", "peer", VERSION, id)``, then send Raft messages; the member's
  :class:`PeerNetwork` sends its own over a connection it opens to each peer. Partitions, delay and
  drop are the same :class:`~kconsole.store.network.Network` faults, set by the parent;
- the parent connects and says ``("hello", "client", VERSION)``: proposals, reads, watches, status
  and fault handles arrive on that connection and are answered there (see :class:`Host`); the
  member's role, term, applied revision and which watches hold every event are pushed after each
  change.

A hello of another wire version (:data:`kconsole.store.wire.VERSION`) is refused.

The clock follows the parent's over stdin; the process stops its member and exits when stdin
closes or on SIGTERM. A SIGKILL is a crash: the next process replays the member's files.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import random
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from kconsole.clock import Clock
from kconsole.clockpipe import follow_stdin, read_spec
from kconsole.store import wire
from kconsole.store.members import Member, RaftConfig, RevlogMachine
from kconsole.store.network import Network
from kconsole.store.raft import codec
from kconsole.store.raft.core import Message
from kconsole.store.raft.wal import FileStorage

log = logging.getLogger(__name__)

#: Messages held for a peer while its connection opens; more are dropped (Raft resends).
PENDING_LIMIT = 4096
#: Wall seconds between two attempts to reach a peer that refused a connection.
RECONNECT_BACKOFF = 0.05
#: Wall seconds between two looks at whether the applied revision moved without a proposal here.
STATE_POLL = 0.05
#: Wall seconds the member has to close its files once told to stop, before the process ends anyway.
STOP_GRACE = 5.0


class PeerNetwork(Network):
    """The faults of :class:`Network`, with delivery over loopback TCP to the peer processes.

    A message the faults let through goes into the peer connection's next frame; partitions are
    checked again where it arrives, so a cut made while it travels loses it, as in process."""

    def __init__(self, clock: Clock, rng: random.Random, me: int) -> None:
        super().__init__(clock, rng)
        self.me = me
        self.addresses: dict[int, str] = {}
        self._out: dict[int, wire.Outbox] = {}
        self._pending: dict[int, list[Any]] = {}
        self._refused: dict[int, float] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def set_addresses(self, addresses: dict[int, str]) -> None:
        for mid, address in addresses.items():
            if self.addresses.get(mid) != address:
                out = self._out.pop(mid, None)
                if out is not None:
                    out.close()
                self._refused.pop(mid, None)
        self.addresses = dict(addresses)

    def set_faults(self, sides: list[tuple[int, int]], links: list[tuple[int, int, float, float]],
                   delay: float, jitter: float, drop: float) -> None:
        self._side = dict(sides)
        self.links = {}
        for src, dst, link_delay, link_drop in links:
            self.set_link(src, dst, delay=link_delay, drop=link_drop)
        self.set_conditions(delay=delay, jitter=jitter, drop=drop)

    def _dispatch(self, msg: Message, delay: float) -> None:
        if delay <= 0:
            self._transmit(msg)
        else:
            self.clock.call_later(delay, lambda: self._transmit(msg))

    def _transmit(self, msg: Message) -> None:
        dst = msg.dst
        out = self._out.get(dst)
        if out is not None and not out.closed:
            out.put(wire.pack_message(msg))
            return
        pending = self._pending.get(dst)
        if pending is not None:
            if len(pending) < PENDING_LIMIT:
                pending.append(wire.pack_message(msg))
            else:
                self.stats.dropped += 1
            return
        address = self.addresses.get(dst)
        if address is None or time.monotonic() - self._refused.get(dst, 0.0) < RECONNECT_BACKOFF:
            self.stats.dropped += 1
            return
        self._pending[dst] = [wire.pack_message(msg)]
        task = asyncio.get_running_loop().create_task(self._connect(dst, address))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _connect(self, dst: int, address: str) -> None:
        try:
            protocol = await wire.connect(address, _ignore)  # the peer never writes here
        except OSError:
            self._refused[dst] = time.monotonic()
            self.stats.dropped += len(self._pending.pop(dst, []))
            return
        transport = protocol.transport
        assert transport is not None
        transport.write(wire.hello("peer", self.me))
        out = self._out[dst] = wire.Outbox(transport)
        for packed in self._pending.pop(dst, []):
            out.put(packed)
        try:
            await protocol.closed  # ends when the peer goes away
        finally:
            if self._out.get(dst) is out:
                del self._out[dst]
            transport.close()

    def arrive(self, packed: tuple[Any, ...]) -> None:
        self._arrive(wire.unpack_message(packed))

    def close(self) -> None:
        for out in self._out.values():
            out.close()
        for task in self._tasks:
            task.cancel()


def _ignore(_message: Any) -> None:
    return None


class _Reply:
    """Waits on one of the parent's proposals: the member settles it as it applies the entry, and
    the outcome goes straight into the next answer frame (no future, no callback turn per write)."""

    __slots__ = ("host", "rid", "settled")

    def __init__(self, host: Host, rid: int) -> None:
        self.host = host
        self.rid = rid
        self.settled = False

    def done(self) -> bool:
        return self.settled

    def set_result(self, result: Any) -> None:
        if not self.settled:
            self.settled = True
            self.host.reply(self.rid, wire.pack_result(result))

    def set_exception(self, exception: BaseException) -> None:
        if not self.settled:
            self.settled = True
            self.host.reply(self.rid, wire.pack_error(exception))


class Host:
    """Answers the parent's requests on one member; pushes its state when it changes."""

    def __init__(self, member: Member, network: PeerNetwork) -> None:
        self.member = member
        self.network = network
        self.out: wire.Outbox | None = None
        self._watches: dict[int, tuple[asyncio.Task[None], Any]] = {}
        self._dirty = False
        self._pushed: tuple[Any, ...] = ()
        self._marks_sent = 0  # the last marked revision sent
        self._marks_seen: tuple[int, ...] = ()
        self._tasks: set[asyncio.Task[None]] = set()
        self._replies: tuple[list[int], list[Any]] | None = None  # the answer batch of this turn

    # ----- state --------------------------------------------------------------------------------
    def state(self) -> tuple[Any, ...]:
        m = self.member
        machine = m.machine if m.running else None
        revision = machine.revision if machine is not None else 0
        settled = [wid for wid, (_, watcher) in self._watches.items()
                   if watcher is not None and watcher.settled()]
        role = m.node.role.value if m.node is not None and m.running else None
        return (m.running, m.paused, role, m.term, m.leader_id, m.applied, revision, m.alarms,
                m.leader_changes, m.last_commit_latency, m.errors[-5:], settled)

    def changed(self) -> None:
        """Push the state at the end of this loop turn (once, however many changes)."""
        if not self._dirty and self.out is not None:
            self._dirty = True
            asyncio.get_running_loop().call_soon(self._push)

    def _push(self) -> None:
        if not self._dirty:
            return  # pushed already, with the frame it was due beside
        self._dirty = False
        if self.out is not None:
            self._push_marks()
            state = self.state()
            if state != self._pushed:
                self._pushed = state
                self.out.put(("st", state))

    def _push_marks(self) -> None:
        """The revision log's new time marks, so history reads' sync questions (time of a revision,
        revision at a time) are answered in the parent from a copy."""
        log = getattr(self.member.machine, "log", None) if self.member.running else None
        if log is None or self.out is None:
            return
        floor, written, first, new = log.marks_after(self._marks_sent)
        head = new[-1][0] if new else min(self._marks_sent, log.revision)
        seen = (floor, written, first, head)
        if new or seen != self._marks_seen:
            self._marks_seen = seen
            self._marks_sent = head
            self.out.put(("hm", floor, written, first, head, new))

    def attach(self, out: wire.Outbox) -> None:
        """The parent's connection: answers, state and watch events go there from now on."""
        self.out = out
        self._replies = None
        out.before_flush = self.before_flush
        self.changed()

    def before_flush(self) -> None:
        """The frame is about to go: the answers batched so far go in it, with the state they moved."""
        self._replies = None
        if self._dirty:
            self._push()

    def reply(self, rid: int, packed: Any) -> None:
        """Answer a proposal in this turn's ``("R", rids, results)`` batch."""
        if self.out is None:
            return
        batch = self._replies
        if batch is None:
            batch = self._replies = ([], [])
            self.out.put(("R", *batch))
        batch[0].append(rid)
        batch[1].append(packed)
        if not self._dirty:
            self.changed()

    def poll(self) -> None:
        """Followers apply without a proposal here, and watches settle after their last event."""
        self.changed()
        asyncio.get_running_loop().call_later(STATE_POLL, self.poll)

    # ----- requests -----------------------------------------------------------------------------
    def handle(self, m: Any) -> None:
        op = m[0]
        member = self.member
        if op == "P":
            from_wire, submit = codec.from_wire, member.submit
            now = member.clock.now()
            for rid, raw in zip(m[1], m[2]):
                submit(from_wire(raw), _Reply(self, rid), now)
        elif op == "ri":
            fut = member.read_index()
            fut.add_done_callback(lambda f, rid=m[1]: self._read_index_done(rid, f))
        elif op == "wa":
            member.wait_applied(m[2]).add_done_callback(lambda f, rid=m[1]: self._answer(rid, f))
        elif op == "ar":
            member.wait_applied_revision(m[2]).add_done_callback(lambda f, rid=m[1]: self._answer(rid, f))
        elif op == "g":
            self._spawn(self._range(*m[1:]))
        elif op == "ms":
            self._spawn(self._call(m[1], lambda: self._machine_status()))
        elif op == "s":
            self._spawn(self._call(m[1], lambda: self._status()))
        elif op == "w":
            self._watch(*m[1:])
        elif op == "hr":
            self._spawn(self._call(m[1], lambda: self._history_range(*m[2:])))
        elif op == "hc":
            self._spawn(self._call(m[1], lambda: self._history_changes(*m[2:])))
        elif op == "wc":
            entry = self._watches.pop(m[1], None)
            if entry is not None:
                entry[0].cancel()
        elif op == "pause":
            member.pause()
            self.changed()
        elif op == "resume":
            member.resume()
            self.changed()
        elif op == "slow":
            member.slow_disk(float(m[1]))
        elif op == "transfer":
            try:
                member.transfer_leadership(int(m[1]))
            except Exception as err:  # noqa: BLE001 - the parent sees the outcome in the next state
                member.errors.append(str(err))
        elif op == "campaign":
            member.campaign()
        elif op == "peers":
            self.network.set_addresses({int(k): str(v) for k, v in m[1].items()})
        elif op == "net":
            self.network.set_faults(*m[1:])
        else:
            log.warning("member process: unknown request %r", op)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _answer(self, rid: int, fut: asyncio.Future[Any]) -> None:
        if self.out is None:
            return
        err = fut.exception() if not fut.cancelled() else wire.kvmod.UnavailableError("etcdserver: server stopped")
        if err is not None:
            self.out.put(("x", rid, wire.pack_error(err)))
        else:
            self.out.put(("r", rid, wire.pack_result(fut.result())))
        self.changed()

    def _read_index_done(self, rid: int, fut: asyncio.Future[int]) -> None:
        if fut.cancelled() or fut.exception() is not None:
            self._answer(rid, fut)
            return
        index = fut.result()
        applied = self.member.wait_applied(index)
        applied.add_done_callback(lambda f: self._answer(rid, f) if f.cancelled() or f.exception()
                                  else self._send(rid, index))

    def _send(self, rid: int, value: Any) -> None:
        if self.out is not None:
            self.out.put(("r", rid, wire.pack_result(value)))

    async def _call(self, rid: int, fn: Any) -> None:
        try:
            self._send(rid, await fn())
        except Exception as err:  # noqa: BLE001 - every error goes back to the caller
            if self.out is not None:
                self.out.put(("x", rid, wire.pack_error(err)))

    async def _range(self, rid: int, key: str, end: str | None, revision: int, limit: int, count_only: bool,
                     keys_only: bool) -> None:
        async def read() -> Any:
            return await self.member.kv.range(key, end, revision=revision, limit=limit, count_only=count_only,
                                              keys_only=keys_only, serializable=True)

        await self._call(rid, read)

    def _history_log(self) -> Any:
        log = getattr(self.member.machine, "log", None) if self.member.running else None
        if log is None:
            raise wire.kvmod.UnavailableError("etcdserver: server stopped")
        return log

    async def _history_range(self, key: str, end: str | None, revision: int, limit: int) -> Any:
        return await self._history_log().range(key, end, revision=revision, limit=limit, history=True)

    async def _history_changes(self, key: str, end: str | None, after: int, upto: int, limit: int,
                               by_name: bool) -> Any:
        return wire.pack_events(await self._history_log().changes(key, end, after, upto, limit, by_name))

    async def _machine_status(self) -> tuple[Any, ...]:
        machine = self.member.machine
        if machine is None or not self.member.running:
            raise wire.kvmod.UnavailableError("etcdserver: server stopped")
        st = await machine.status()
        return dataclasses.astuple(st)

    async def _status(self) -> dict[str, Any]:
        return dataclasses.asdict(await self.member.status())

    def _watch(self, wid: int, key: str, end: str | None, start: int, prev_kv: bool, progress: bool) -> None:
        async def pump() -> None:
            watcher = None
            try:
                watcher = self.member.kv.watch(key, end, start_revision=start, prev_kv=prev_kv,
                                               progress_notify=progress)
                self._watches[wid] = (task, watcher)
                async for resp in watcher:
                    if self.out is not None:
                        self.out.put(("we", wid, wire.pack_watch(resp)))
                    self.changed()
                    if resp.canceled:
                        return
            except (wire.StoreError, ValueError) as err:
                log.info("watch %d ended: %s", wid, err)
            finally:
                self._watches.pop(wid, None)
                if watcher is not None:
                    aclose = getattr(watcher, "aclose", None)
                    if aclose is not None:
                        try:
                            await aclose()
                        except Exception:  # noqa: BLE001 - closing a finished watch
                            pass
                if self.out is not None:
                    self.out.put(("wx", wid))

        task = asyncio.get_running_loop().create_task(pump())
        self._watches[wid] = (task, None)


async def _serve(spec: dict[str, Any], pending: bytes) -> None:
    from kconsole import gcpolicy
    from kconsole.clock import RealClock

    gcpolicy.install()  # a serving process: the collector policy kconsole serve runs under

    clock = RealClock(float(spec["speed"]), start=float(spec["now"]))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    follower = loop.create_task(follow_stdin(clock, stop, pending), name="clock-follower")
    mid = int(spec["id"])
    rng = random.Random(int(spec["seed"]))
    network = PeerNetwork(clock, random.Random(rng.random()), mid)
    network.set_addresses({int(k): str(v) for k, v in spec["peers"].items()})
    folder = Path(spec["dir"])
    fsync, synchronous = bool(spec["fsync"]), str(spec["synchronous"])
    member = Member(
        spec["name"], spec["endpoint"], [int(i) for i in spec["ids"]], clock=clock, network=network,
        rng=random.Random(rng.random()), storage=lambda: FileStorage(folder / "wal", fsync=fsync),
        machine=lambda: RevlogMachine.open(folder / "db.sqlite", clock=clock, synchronous=synchronous),
        config=RaftConfig(**spec["config"]), mid=mid, role_file=folder / "member.json",
    )
    host = Host(member, network)
    member.on_change = host.changed

    watchers: set[asyncio.Task[None]] = set()

    def connection() -> wire.FrameProtocol:
        """A connection's first message is its hello: a peer's Raft messages or the parent's requests follow."""
        protocol: wire.FrameProtocol

        def first(message: Any) -> None:
            kind, _ = wire.check_hello(message)
            if kind == "peer":
                protocol.handle = network.arrive
            elif kind == "client" and protocol.transport is not None:
                host.attach(wire.Outbox(protocol.transport))
                protocol.handle = host.handle
                watcher = loop.create_task(client_gone(protocol))
                watchers.add(watcher)
                watcher.add_done_callback(watchers.discard)
            else:
                raise wire.WireError(f"a hello from an unknown kind of caller: {kind!r}")

        protocol = wire.FrameProtocol(first)
        return protocol

    async def client_gone(protocol: wire.FrameProtocol) -> None:
        err = await protocol.closed
        if protocol.refused is not None:
            log.warning("member process: the parent's connection was refused: %s", err)
        else:
            stop.set()  # the parent went away: nobody can reach this member any more

    server, address = await wire.listen(connection)
    try:
        await member.start()
    except Exception as err:  # noqa: BLE001 - told to the parent, which reports it
        print(f"failed {type(err).__name__}: {err}", flush=True)
        return
    host.poll()
    print(f"ready {address}", flush=True)
    await stop.wait()
    # Told to stop (or the parent is gone): close the files, but never outlive the parent by long.
    watchdog = threading.Timer(STOP_GRACE, os._exit, (1,))
    watchdog.daemon = True
    watchdog.start()
    server.close()
    await member.stop()
    network.close()
    follower.cancel()


def main() -> None:
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    spec, pending = read_spec()
    code = 0
    try:
        asyncio.run(_serve(spec, pending))
    except KeyboardInterrupt:
        pass
    except Exception:  # noqa: BLE001 - said on the way out; the parent relays it
        logging.getLogger(__name__).exception("member process failed")
        code = 1
    try:
        sys.stdout.flush()
    except OSError:
        pass
    # The member's files are closed (or, after a failure, left as a crash leaves them, which its
    # next start replays); no library thread may keep the process alive past this point.
    os._exit(code)


if __name__ == "__main__":
    main()
