"""What crosses the sockets between member processes and the cluster's process comes back equal:
Raft messages with entries and snapshots, transaction and range results, watch responses, and the
store's errors as their own classes (the facade retries NotProposed on the next leader). Frames
keep their messages' order however the bytes are cut, a torn, garbage or oversized frame and a
hello of another wire version are refused with an error saying so, and the waiters a member
process answers from are settled in log order."""

from __future__ import annotations

import asyncio
import marshal
import socket
import struct
from pathlib import Path
from typing import Any

import pytest

from kconsole.clock import VirtualClock
from kconsole.store import wire
from kconsole.store.facade import EtcdCluster
from kconsole.store.kv import (
    CompactedError,
    Compare,
    Delete,
    Event,
    Get,
    KeyValue,
    NoSpaceError,
    Put,
    RangeResult,
    StoreError,
    TxnResult,
    UnavailableError,
    WatchResponse,
)
from kconsole.store.members import NotProposed
from kconsole.store.raft import codec
from kconsole.store.raft.core import Message, Snapshot
from kconsole.store.raft.log import Entry


def roundtrip(packed: object) -> object:
    return marshal.loads(marshal.dumps(packed))


def test_raft_messages_round_trip() -> None:
    msg = Message("MsgApp", 1, 2, 5, log_term=4, index=9, entries=[Entry(10, 5, b"a"), Entry(11, 5, b"")],
                  commit=8, reject=False, hint=3, context=7, snapshot=Snapshot(6, 4, b"image"))
    assert wire.unpack_message(roundtrip(wire.pack_message(msg))) == msg  # type: ignore[arg-type]
    bare = Message("MsgHeartbeat", 2, 1, 5)
    assert wire.unpack_message(roundtrip(wire.pack_message(bare))) == bare  # type: ignore[arg-type]


def test_results_round_trip() -> None:
    kv = KeyValue("/a", b"v", 2, 3, 2, 0)
    txn = TxnResult(True, 3, [kv, None, RangeResult([kv], 1, False, 3), [kv, kv]])
    assert wire.unpack_result(roundtrip(wire.pack_result(txn))) == txn
    rng = RangeResult([kv], 5, True, 9)
    assert wire.unpack_result(roundtrip(wire.pack_result(rng))) == rng
    assert wire.unpack_result(roundtrip(wire.pack_result(42))) == 42
    resp = WatchResponse([Event("PUT", kv, None), Event("DELETE", KeyValue("/b", b"", 0, 4, 0, 0), kv)], 4)
    assert wire.unpack_watch(roundtrip(wire.pack_watch(resp))) == resp  # type: ignore[arg-type]


@pytest.mark.parametrize("err", [NotProposed("etcdserver: not leader"), UnavailableError("etcdserver: no leader"),
                                 CompactedError(7), NoSpaceError(), StoreError("etcdserver: key not found")])
def test_store_errors_keep_their_class(err: StoreError) -> None:
    back = wire.unpack_error(roundtrip(wire.pack_error(err)))  # type: ignore[arg-type]
    assert type(back) is type(err) and str(back) == str(err)
    assert getattr(back, "compact_revision", 0) == getattr(err, "compact_revision", 0)


def test_other_errors_arrive_as_store_errors_naming_them() -> None:
    back = wire.unpack_error(roundtrip(wire.pack_error(OSError(28, "No space left on device"))))  # type: ignore[arg-type]
    assert type(back) is StoreError and "OSError" in str(back)


def test_a_command_from_another_process_is_packed_into_an_entry_as_it_came() -> None:
    cmd = codec.txn_command([Compare("/k", "mod", "=", 3)], [Put("/k", b"v", 0), Delete("/j", "/k")], [Get("/k")])
    arrived = codec.from_wire(roundtrip(codec.to_wire(cmd)))  # type: ignore[arg-type]
    assert list(arrived) == list(cmd)
    assert codec.decode(codec.encode([("tm", 1.0), arrived])) == codec.decode(codec.encode([("tm", 1.0), cmd]))


# ----- frames on a real socket pair -----------------------------------------------------------------
def feed(protocol: wire.FrameProtocol, data: bytes) -> None:
    """Hand ``data`` to ``protocol`` as the event loop does: into the buffer it gives, then say how much."""
    while data:
        view = protocol.get_buffer(len(data))
        n = min(len(view), len(data))
        view[:n] = data[:n]
        view.release()
        protocol.buffer_updated(n)
        data = data[n:]


async def _pair(handle: Any) -> tuple[wire.Outbox, wire.FrameProtocol, socket.socket]:
    """An Outbox on one end of a socket pair, a FrameProtocol reading the other end."""
    loop = asyncio.get_running_loop()
    a, b = socket.socketpair()
    sender, _ = await loop.create_unix_connection(asyncio.Protocol, sock=a)
    _, receiver = await loop.create_unix_connection(lambda: wire.FrameProtocol(handle), sock=b)
    return wire.Outbox(sender), receiver, a  # type: ignore[arg-type]


async def _drain(protocol: wire.FrameProtocol, got: list[Any], count: int) -> None:
    async with asyncio.timeout(30):
        while len(got) < count and not protocol.closed.done():
            await asyncio.sleep(0.001)


async def test_messages_of_one_turn_travel_as_one_frame_in_order() -> None:
    got: list[Any] = []
    out, receiver, _ = await _pair(got.append)
    frames: list[bytes] = []
    write = out.transport.write
    out.transport.write = lambda data: (frames.append(data), write(data))  # type: ignore[method-assign]
    for i in range(100):
        out.put(("m", i))
    await _drain(receiver, got, 100)
    assert got == [("m", i) for i in range(100)]
    assert len(frames) == 1
    out.close()


def test_frames_cut_anywhere_come_back_whole_and_in_order() -> None:
    data = b"".join(wire.frame([("m", i, b"x" * i)]) for i in range(50))

    async def main() -> list[Any]:
        got: list[Any] = []
        protocol = wire.FrameProtocol(got.append)
        for cut in range(0, len(data), 7):  # 7-byte pieces: headers and payloads split everywhere
            feed(protocol, data[cut : cut + 7])
        protocol.connection_lost(None)
        assert await protocol.closed is None
        return got

    assert asyncio.run(main()) == [("m", i, b"x" * i) for i in range(50)]


async def test_a_torn_frame_is_refused_naming_what_was_missing() -> None:
    protocol = wire.FrameProtocol(lambda m: None)
    whole = wire.frame([("m", 1)])
    feed(protocol, whole + whole[:-2])
    protocol.connection_lost(None)
    err = await protocol.closed
    assert isinstance(err, wire.WireError)
    assert f"ended inside a frame: {len(whole) - 2} bytes of a {len(whole)}-byte frame" in str(err)


async def test_garbage_and_oversized_frames_end_the_connection_with_a_clear_error() -> None:
    got: list[Any] = []
    out, receiver, _ = await _pair(got.append)
    out.transport.write(struct.pack("<I", 5) + b"\xff\xff\xff\xff\xff")
    err = await asyncio.wait_for(receiver.closed, 30)
    assert isinstance(err, wire.WireError) and "not marshal data" in str(err)
    assert receiver.refused is err and got == []

    protocol = wire.FrameProtocol(got.append)
    feed(protocol, struct.pack("<I", wire.MAX_FRAME + 1))
    protocol.connection_lost(None)
    assert "larger than" in str(await protocol.closed)

    protocol = wire.FrameProtocol(got.append)
    feed(protocol, wire.frame(("not", "a list")))  # type: ignore[arg-type]
    protocol.connection_lost(None)
    assert "list of messages" in str(await protocol.closed)


def test_a_hello_names_the_wire_version_and_another_version_is_refused() -> None:
    (message,) = marshal.loads(wire.hello("peer", 7)[4:])
    assert wire.check_hello(message) == ("peer", (7,))
    with pytest.raises(wire.WireError, match=f"a client speaks wire version 1, this side speaks {wire.VERSION}"):
        wire.check_hello(("hello", "client", 1))
    with pytest.raises(wire.WireError, match="expected a hello"):
        wire.check_hello(("P", [1], [("n",)]))



async def test_a_frame_larger_than_the_receive_buffer_arrives_whole_and_the_buffer_shrinks_back() -> None:
    got: list[Any] = []
    out, receiver, _ = await _pair(got.append)
    big = b"s" * (3 * wire.RECEIVE_BUFFER + 5)  # a snapshot's image
    out.put(("snap", big))
    await _drain(receiver, got, 1)
    out.put(("after", 1))
    await _drain(receiver, got, 2)
    assert got == [("snap", big), ("after", 1)]
    assert len(receiver.get_buffer(-1)) == wire.RECEIVE_BUFFER
    out.close()


# ----- the leader answers from waiters, not futures ------------------------------------------------
class _Recorder:
    """A waiter as a member process's answer batch is: settled once, in the order the log applies."""

    def __init__(self, log: list[Any], name: str) -> None:
        self.log, self.name, self.settled = log, name, False

    def done(self) -> bool:
        return self.settled

    def set_result(self, result: Any) -> None:
        self.settled = True
        self.log.append((self.name, result.revision))

    def set_exception(self, exception: BaseException) -> None:
        self.settled = True
        self.log.append((self.name, type(exception).__name__))


async def test_submitted_proposals_settle_their_waiters_in_log_order(tmp_path: Path) -> None:
    clock = VirtualClock()
    cluster = await EtcdCluster.open(tmp_path, clock=clock, members=3, seed=3)
    await clock.run_until(lambda: cluster.leader() is not None, 10, step=0.1)
    leader = cluster.leader()
    follower = next(m for m in cluster.members if m is not leader)
    settled: list[Any] = []
    for i in range(5):
        leader.submit(codec.txn_command([], [Put(f"/k{i}", b"v")], []), _Recorder(settled, f"w{i}"))
    follower.submit(codec.txn_command([], [Put("/x", b"v")], []), _Recorder(settled, "to-follower"))
    await clock.run_until(lambda: len(settled) == 6, 10, step=0.01)
    assert settled[0] == ("to-follower", "NotProposed")
    assert settled[1:] == [(f"w{i}", i + 1) for i in range(5)]
    await cluster.close()
