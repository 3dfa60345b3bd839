"""What crosses the sockets between member processes and the cluster's process comes back equal:
Raft messages with entries and snapshots, transaction and range results, watch responses, and the
store's errors as their own classes (the facade retries NotProposed on the next leader)."""

from __future__ import annotations

import marshal

import pytest

from kconsole.store import wire
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
