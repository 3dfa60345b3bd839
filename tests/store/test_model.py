"""Random operation sequences against a model dict-of-histories: results must be identical."""

from __future__ import annotations

import asyncio
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kconsole.clock import VirtualClock
from kconsole.store.kv import (
    CompactedError,
    Compare,
    Delete,
    Event,
    Get,
    KeyValue,
    Op,
    Put,
    RangeResult,
    TxnResult,
    WatchResponse,
    prefix_end,
)
from kconsole.store import revlog
from kconsole.store.revlog import RevisionLog
from kconsole.store.watch import Watcher

KEYS = ["/a", "/a/1", "/a/2", "/b", "/b/1"]
PREFIXES = ["/a", "/a/", "/b", "/"]
CURRENT = "current"  # a compare value resolved against the model when the op runs


def covers(key: str, end: str | None, name: str) -> bool:
    """etcd's range: one key, ``[key, end)``, or every key from ``key`` on when ``end`` is "\\0"."""
    if end is None:
        return name == key
    return name >= key if end == "\0" else key <= name < end


@dataclass
class Model:
    """etcd's semantics, written the obvious way: a full snapshot per revision."""

    revision: int = 0
    compact: int = 0
    state: dict[str, KeyValue] = field(default_factory=dict)
    snapshots: dict[int, dict[str, KeyValue]] = field(default_factory=lambda: {0: {}})
    events: list[Event] = field(default_factory=list)

    def range(self, key: str, end: str | None, at: int, limit: int = 0) -> RangeResult:
        snap = self.snapshots[at]
        names = sorted(n for n in snap if covers(key, end, n))
        kvs = [snap[n] for n in names]
        shown = kvs[:limit] if limit else kvs
        return RangeResult(shown, len(kvs), len(shown) < len(kvs), at)

    def txn(self, compares: list[Compare], success: list[Op], failure: list[Op]) -> TxnResult:
        def holds(c: Compare) -> bool:
            kv = self.state.get(c.key)
            actual: Any
            if c.target == "value":
                actual = kv.value if kv else b""
            else:
                actual = 0 if kv is None else {"mod": kv.mod_revision, "create": kv.create_revision, "version": kv.version}[c.target]
            return {"=": actual == c.value, "!=": actual != c.value, "<": actual < c.value, ">": actual > c.value}[c.op]

        ok = all(holds(c) for c in compares)
        rev = self.revision + 1
        work = dict(self.state)
        wrote = False
        responses: list[object] = []
        new_events: list[Event] = []
        for op in success if ok else failure:
            if isinstance(op, Put):
                prev = work.get(op.key)
                kv = KeyValue(op.key, op.value, prev.create_revision if prev else rev, rev, prev.version + 1 if prev else 1, op.lease)
                work[op.key] = kv
                new_events.append(Event("PUT", kv, prev))
                responses.append(prev)
                wrote = True
            elif isinstance(op, Delete):
                names = [op.key] if op.end is None else sorted(n for n in work if covers(op.key, op.end, n))
                gone = []
                for name in names:
                    if name in work:
                        prev = work.pop(name)
                        new_events.append(Event("DELETE", KeyValue(name, b"", 0, rev, 0, 0), prev))
                        gone.append(prev)
                        wrote = True
                responses.append((gone[0] if gone else None) if op.end is None else gone)
            else:
                at = rev if wrote else rev - 1
                names = sorted(n for n in work if covers(op.key, op.end, n))
                responses.append(RangeResult([work[n] for n in names], len(names), False, at))
        if wrote:
            self.revision = rev
            self.state = work
            self.snapshots[rev] = dict(work)
            self.events.extend(new_events)
        return TxnResult(ok, self.revision, responses)


keys = st.sampled_from(KEYS)
values = st.binary(max_size=6)
compares = st.builds(
    lambda k, t, o, v: (k, t, o, v),
    keys, st.sampled_from(["mod", "create", "version"]), st.sampled_from(["=", "!=", "<", ">"]),
    st.one_of(st.just(CURRENT), st.integers(0, 8)),
) | st.builds(lambda k, o, v: (k, "value", o, v), keys, st.sampled_from(["=", "!=", ">"]), values)
simple_ops = st.one_of(
    st.builds(Put, keys, values),
    st.builds(Delete, keys),
    st.builds(lambda p: Delete(p, prefix_end(p)), st.sampled_from(PREFIXES)),
    st.builds(Get, keys),
    st.builds(lambda p: Get(p, prefix_end(p)), st.sampled_from(PREFIXES)),
)


def distinct_writes(ops: list[Op]) -> bool:
    """etcd refuses a txn writing one key twice; keep generated txns valid."""
    names: list[str] = []
    ranges: list[tuple[str, str]] = []
    for op in ops:
        if isinstance(op, Put) or (isinstance(op, Delete) and op.end is None):
            names.append(op.key)
        elif isinstance(op, Delete) and op.end is not None:
            ranges.append((op.key, op.end))
    return len(set(names)) == len(names) and not any(lo <= n < hi for n in names for lo, hi in ranges)


branches = st.lists(simple_ops, max_size=3).filter(distinct_writes)
actions = st.one_of(
    st.tuples(st.just("txn"), st.lists(compares, max_size=2), branches, branches),
    st.tuples(st.just("concurrent"), st.lists(st.tuples(st.lists(compares, max_size=1), branches, branches), min_size=2, max_size=6)),
    st.tuples(st.just("range"), st.sampled_from(PREFIXES + KEYS), st.integers(0, 30), st.integers(0, 3)),
    st.tuples(st.just("compact"), st.integers(0, 30)),
    st.tuples(st.just("watch"), st.sampled_from(PREFIXES + KEYS), st.integers(0, 30)),
)


def resolve(model: Model, raw: list[tuple[str, str, str, Any]]) -> list[Compare]:
    out = []
    for key, target, op, value in raw:
        if value == CURRENT:
            kv = model.state.get(key)
            value = 0 if kv is None else {"mod": kv.mod_revision, "create": kv.create_revision, "version": kv.version}[target]
        out.append(Compare(key, target, op, value))  # type: ignore[arg-type]
    return out


async def scenario(path: Path, script: list[tuple[Any, ...]]) -> None:
    clock = VirtualClock()
    log = await RevisionLog.open(path, clock=clock)
    model = Model()
    # watcher, key, end, start, revision and compact revision at creation
    watches: list[tuple[Watcher, str, str | None, int, int, int]] = []
    try:
        for action in script:
            kind = action[0]
            if kind == "txn":
                compares = resolve(model, action[1])
                expected = model.txn(compares, action[2], action[3])
                assert await log.txn(compares, action[2], action[3]) == expected
            elif kind == "concurrent":
                calls = [(resolve(model, c), s, f) for c, s, f in action[1]]
                # Queued in this order, so serialized in this order; compares were resolved up front.
                got = await asyncio.gather(*(log.txn(c, s, f) for c, s, f in calls))
                assert list(got) == [model.txn(c, s, f) for c, s, f in calls]
            elif kind == "range":
                key, back, limit = action[1], action[2], action[3]
                end = prefix_end(key) if key in PREFIXES else None
                at = model.revision - back
                if at <= 0:  # revision 0 asks for the current revision
                    assert await log.range(key, end, limit=limit) == model.range(key, end, model.revision, limit)
                elif at < model.compact:
                    try:
                        await log.range(key, end, revision=at, limit=limit)
                    except CompactedError as err:
                        assert err.compact_revision == model.compact
                    else:
                        raise AssertionError("range below the compact revision succeeded")
                else:
                    assert await log.range(key, end, revision=at, limit=limit) == model.range(key, end, at, limit)
            elif kind == "compact":
                target = model.revision - action[1]
                if target > model.compact:
                    await log.compact(target)
                    model.compact = target
            else:
                key, back = action[1], action[2]
                end = prefix_end(key) if key in PREFIXES else None
                start = max(1, model.revision + 1 - back)
                watches.append((log.watch(key, end, start_revision=start), key, end, start, model.revision, model.compact))
        assert log.revision == model.revision
        for watcher, key, end, start, created_at, compact_then in watches:
            wanted = [
                e for e in model.events
                if e.kv.mod_revision >= start and covers(key, end, e.kv.key)
            ]
            got: list[WatchResponse] = []
            if start <= created_at and start < model.compact:
                got = [r async for r in watcher]
                # Canceled with the compaction its catch-up read met: the one at creation or a later one.
                assert len(got) == 1 and got[0].canceled
                assert compact_then <= got[0].compact_revision <= model.compact
                continue
            events: list[Event] = []
            while len(events) < len(wanted):
                response = await watcher.__anext__()
                assert not response.canceled
                events.extend(response.events)
            assert events == wanted
            await watcher.close()
        everything = await log.range("/", "\0")
        assert everything == model.range("/", "\0", model.revision)
    finally:
        await log.close()
    reopened = await RevisionLog.open(path, clock=clock)
    try:
        assert (reopened.revision, reopened.compact_revision) == (model.revision, model.compact)
        assert await reopened.range("/", "\0") == model.range("/", "\0", model.revision)
    finally:
        await reopened.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(actions, min_size=1, max_size=25), st.booleans())
def test_random_operation_sequences_match_the_model(script: list[tuple[Any, ...]], pipelined: bool) -> None:
    """``pipelined``: even two concurrent txns go out as two group commits, the second evaluated
    on top of the first's uncommitted writes — the path 64 writers take."""
    default = revlog.SPLIT_MIN
    revlog.SPLIT_MIN = 1 if pipelined else default
    try:
        with tempfile.TemporaryDirectory() as folder:
            asyncio.run(scenario(Path(folder) / "model.db", script))
    finally:
        revlog.SPLIT_MIN = default
