"""How store commands travel in Raft entries: a batch of commands marshalled into one ``bytes``.

A leader packs every proposal that arrived since its last turn into one entry, so the per-entry
cost of Raft (messages, WAL records, acks) is paid once per batch, not once per write. ``marshal``
encodes tuples of str/bytes/int/None quickly and executes nothing when loading.

Commands (object form; only ``encode``/``decode`` see the packed form): ``("t", compares,
success, failure)`` a transaction of kv.Compare / kv.Op lists; ``("c", revision[, history_floor])`` a
compaction (rows go only below the history floor); ``("tm", time)`` the leader's simulated time, first
in each entry it packs (the time its revisions were written at); ``("alarm", bits, on)`` raise or
clear a replicated alarm (NOSPACE); ``("n",)`` a no-op.
"""

from __future__ import annotations

import marshal
from operator import attrgetter
from typing import Any

from kconsole.store.kv import Compare, Delete, Get, Op, Put
from kconsole.store.raft.log import Entry

Command = tuple[Any, ...]

_PUT, _DELETE, _GET = 0, 1, 2


#: A compare's fields as one tuple, taken at C level (encoding runs once per write on the leader).
_compare_fields = attrgetter("key", "target", "op", "value")


def _op(op: Op) -> tuple[Any, ...]:
    kind = type(op)
    if kind is Put:
        return (_PUT, op.key, op.value, op.lease)  # type: ignore[union-attr]
    if kind is Delete:
        return (_DELETE, op.key, op.end)  # type: ignore[union-attr]
    if kind is Get:
        return (_GET, op.key, op.end)  # type: ignore[union-attr]
    raise TypeError(f"not a store operation: {op!r}")


def _unop(t: tuple[Any, ...]) -> Op:
    if t[0] == _PUT:
        return Put(t[1], t[2], t[3])
    if t[0] == _DELETE:
        return Delete(t[1], t[2])
    return Get(t[1], t[2])


def txn_command(compares: list[Compare], success: list[Op], failure: list[Op] | None) -> Command:
    """A transaction command in object form (what members apply and what :func:`encode` packs)."""
    return ("t", compares, success, failure or [])


class Packed(tuple):  # type: ignore[type-arg]
    """A command in object form that keeps the packed form it arrived in (from another process),
    so a leader packing it into an entry does not pack it again."""

    raw: tuple[Any, ...]


def _raw(cmd: Command) -> tuple[Any, ...]:
    if type(cmd) is Packed:
        return cmd.raw
    if cmd[0] != "t":
        return cmd
    _, compares, success, failure = cmd
    return ("t", tuple(map(_compare_fields, compares)), tuple(map(_op, success)), tuple(map(_op, failure)))


def _cooked(raw: tuple[Any, ...]) -> Command:
    if raw[0] != "t":
        return raw
    _, compares, success, failure = raw
    return (
        "t",
        [Compare(k, t, o, v) for k, t, o, v in compares],
        [_unop(o) for o in success],
        [_unop(o) for o in failure],
    )


def to_wire(cmd: Command) -> tuple[Any, ...]:
    """One command in the packed form (marshal-able tuples), for a member in another process."""
    return _raw(cmd)


def from_wire(raw: tuple[Any, ...]) -> Command:
    cmd = Packed(_cooked(raw))
    cmd.raw = raw
    return cmd


def encode(commands: list[Command]) -> bytes:
    return marshal.dumps([_raw(c) for c in commands])


def decode(data: bytes) -> list[Command]:
    if not data:
        return []
    out = marshal.loads(data)
    if not isinstance(out, list):
        raise ValueError("raft entry does not hold a command batch")
    return [_cooked(c) for c in out]


def entry_commands(entry: Entry) -> list[Command]:
    """The commands of ``entry``, decoded once per entry object."""
    if entry.decoded is None:
        entry.decoded = decode(entry.data)
    return entry.decoded  # type: ignore[return-value]
