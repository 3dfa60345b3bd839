"""How store commands travel in Raft entries: a batch of commands marshalled into one ``bytes``.

A leader packs every proposal that arrived since its last turn into one entry, so the per-entry
cost of Raft (messages, WAL records, acks) is paid once per batch, not once per write. ``marshal``
encodes tuples of str/bytes/int/None quickly and executes nothing when loading.

Commands: ``("t", compares, success, failure)`` a transaction; ``("c", revision)`` a compaction;
``("q", quota_bytes)`` a quota change (the NOSPACE fault); ``("n",)`` a no-op (health probes).
"""

from __future__ import annotations

import marshal
from typing import Any

from kconsole.store.kv import Compare, Delete, Get, Op, Put

Command = tuple[Any, ...]

_PUT, _DELETE, _GET = 0, 1, 2


def _op(op: Op) -> tuple[Any, ...]:
    if isinstance(op, Put):
        return (_PUT, op.key, op.value, op.lease)
    if isinstance(op, Delete):
        return (_DELETE, op.key, op.end)
    if isinstance(op, Get):
        return (_GET, op.key, op.end)
    raise TypeError(f"not a store operation: {op!r}")


def _unop(t: tuple[Any, ...]) -> Op:
    if t[0] == _PUT:
        return Put(t[1], t[2], t[3])
    if t[0] == _DELETE:
        return Delete(t[1], t[2])
    return Get(t[1], t[2])


def txn_command(compares: list[Compare], success: list[Op], failure: list[Op] | None) -> Command:
    return (
        "t",
        tuple((c.key, c.target, c.op, c.value) for c in compares),
        tuple(_op(o) for o in success),
        tuple(_op(o) for o in failure or ()),
    )


def decode_txn(cmd: Command) -> tuple[list[Compare], list[Op], list[Op]]:
    _, compares, success, failure = cmd
    return (
        [Compare(k, t, o, v) for k, t, o, v in compares],
        [_unop(o) for o in success],
        [_unop(o) for o in failure],
    )


def written(cmd: Command, branch: bool) -> set[tuple[str, bool]]:
    """The single-key writes of one branch of a txn: {(key, is_delete)} (ranged deletes excluded)."""
    ops = cmd[2] if branch else cmd[3]
    return {(o[1], o[0] == _DELETE) for o in ops if o[0] == _PUT or (o[0] == _DELETE and o[2] is None)}


def encode(commands: list[Command]) -> bytes:
    return marshal.dumps(commands)


def decode(data: bytes) -> list[Command]:
    if not data:
        return []
    out = marshal.loads(data)
    if not isinstance(out, list):
        raise ValueError("raft entry does not hold a command batch")
    return out
