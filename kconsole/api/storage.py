"""The generic registry store: objects of every resource as JSON under ``/registry/...`` over the KV contract.

resourceVersion is the store's mod revision: it is set on every read and never stored. Creates are
"put if absent", updates and deletes compare-and-swap on the revision read, lists page through the
store with continue tokens or are served from the watch cache. The store is only ever written
through :meth:`Storage.txn`, which counts writes in flight per resource so the watch cache can tell
when it holds everything (see :mod:`kconsole.api.watchcache`).
"""

from __future__ import annotations

import base64
import json
import marshal
import posixpath
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from kconsole.api import strategy
from kconsole.api.filters import Filter
from kconsole.api.marshalled import take as take_marshalled
from kconsole.api.registry import Registry, ResourceSpec
from kconsole.api.decodetypes import json_type
from kconsole.api.types import StatusError
from kconsole.api.watchcache import WatchCache
from kconsole.clock import Clock
from kconsole.objects import gojson
from kconsole.store.kv import KV, Compare, CompactedError, Delete, Get, KeyValue, Op, Put, RangeResult, TxnResult, \
    prefix_end

Obj = dict[str, Any]

_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False)
_encode = _ENCODER.encode
_quote = json.encoder.encode_basestring
#: The C encoder behind ``_encode``, made once (JSONEncoder.encode builds one per call, which is most
#: of the cost of encoding a small value).
_C_ENCODE = json.encoder.c_make_encoder(None, _ENCODER.default, _quote, None, ":", ",", False, False, True) \
    if json.encoder.c_make_encoder is not None else None
_loads = json.loads
_mdumps = marshal.dumps
_mloads = marshal.loads

#: Private copies of written objects waiting for their watch event (bounded: a re-list drops events).
MAX_WRITTEN = 50_000
#: The sections objects repeat (the spec of a Pod template, the managedFields of the creates of one
#: second) by their marshalled bytes: their JSON text, and one read-only copy every cached object
#: with that section shares. Marshalling a section costs about a tenth of encoding it. Bounded in
#: entries (cleared when full) and in the size of a section it keeps.
_FRAGMENTS: dict[bytes, tuple[str, Any]] = {}
_FRAGMENTS_SIZE = 4096
_FRAGMENT_MAX_BYTES = 16 * 1024
#: Top-level sections that change with every write (status) are not worth remembering.
_UNREPEATED = frozenset(("apiVersion", "kind", "metadata", "status"))
#: JSON atoms, as a set: a hashed membership test, made inline in the encoder's loops (most values are atoms).
_ATOMS = frozenset((str, int, float, bool, type(None)))
#: How often a compare-and-swap write re-reads and retries before giving up with 409 (GuaranteedUpdate).
MAX_CAS_RETRIES = 8

CONTINUE_TOO_OLD = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new "
    "list without the continue parameter, or use the continue token in this response to retrieve the "
    "remainder of the results. Continuing with the provided token results in an inconsistent list - objects "
    "that were created, modified, or deleted between the time the first chunk was returned and now may show "
    "up in the list."
)


def dumps(obj: Any) -> bytes:
    """Compact JSON, as stored."""
    return _encode(obj).encode()


def _value(value: Any) -> str:
    """``_encode(value)``."""
    if type(value) is str:
        return _quote(value)
    if _C_ENCODE is None:
        return _encode(value)
    return "".join(_C_ENCODE(value, 0))


def _fragment(value: Any) -> tuple[str, Any]:
    """``_encode(value)`` and a read-only copy, remembered in :data:`_FRAGMENTS`."""
    key = take_marshalled(value)
    if key is None:
        try:
            key = _mdumps(value)
        except ValueError:
            return _value(value), clone(value)
    hit = _FRAGMENTS.get(key)
    if hit is None:
        hit = (_value(value), _mloads(key))
        if len(key) <= _FRAGMENT_MAX_BYTES:
            if len(_FRAGMENTS) >= _FRAGMENTS_SIZE:
                _FRAGMENTS.clear()
            _FRAGMENTS[key] = hit
    return hit


def key_encoder(quote: Callable[[str], str]) -> Callable[[str], str]:
    """``"key":`` as JSON text (the key quoted by ``quote`` and its colon), remembered: member names
    repeat from a small set. The stored encoding (UTF-8) and the HTTP front's answers (ASCII) each
    make one with their own quoting."""
    known: dict[str, str] = {}

    def key(name: str) -> str:
        text = known.get(name)
        if text is None:
            text = quote(name) + ":"
            if len(known) < 1024:
                known[name] = text
        return text

    return key


_key = key_encoder(_quote)


class _Irregular(Exception):
    """A key that is not a string: encode the plain way."""


def own_copy(value: Any) -> Any:
    """A copy nobody else holds (atoms are immutable; a map of atoms, labels say, copies shallowly)."""
    t = type(value)
    if t in _ATOMS:
        return value
    if t is dict:
        for v in value.values():
            if type(v) not in _ATOMS:
                return clone(value)
        return value.copy()
    return clone(value)


def _walk(obj: Obj, copy: Obj | None) -> str:
    """The stored text of ``obj``; fills ``copy`` (when given) with a copy of ``obj`` for the cache,
    sharing the remembered sections with other cached objects (cached objects are read-only).
    Every piece goes to one list joined once: concatenating a section's text to its key, and the
    whole to its braces, copied the object's text three more times."""
    parts = ["{"]
    append = parts.append
    for key, value in obj.items():
        if type(key) is not str:
            raise _Irregular
        append(_key(key))
        if key == "metadata" and type(value) is dict:
            held = _metadata(value, copy is not None, parts)
        elif type(value) is dict and value and key not in _UNREPEATED:
            text, held = _fragment(value)
            append(text)
        else:
            append(_value(value))
            held = value if copy is None or type(value) in _ATOMS else own_copy(value)
        if copy is not None:
            copy[key] = held
        append(",")
    if len(parts) > 1:
        parts[-1] = "}"
    else:
        append("}")
    return "".join(parts)


def _metadata(meta: Obj, copying: bool, parts: list[str]) -> Obj:
    """Adds the stored text of ``meta`` (without resourceVersion) to ``parts``; returns its cache
    copy (empty when not ``copying``). The plain keys between the remembered managedFields go to the
    C encoder as one run each instead of a Python step per key."""
    append = parts.append
    append("{")
    run: Obj = {}
    meta_copy: Obj = {}
    for mkey, mvalue in meta.items():
        if type(mkey) is not str:
            raise _Irregular
        if mkey == "resourceVersion":
            meta_copy[mkey] = mvalue
        elif mkey == "managedFields" and mvalue:
            if run:
                append(_value(run)[1:-1])
                append(",")
                run = {}
            text, shared = _fragment(mvalue)
            meta_copy[mkey] = shared
            append('"managedFields":')
            append(text)
            append(",")
        else:
            run[mkey] = mvalue
            if copying:
                meta_copy[mkey] = mvalue if type(mvalue) in _ATOMS else own_copy(mvalue)
    if run:
        append(_value(run)[1:-1])
        append("}")
    elif parts[-1] == ",":
        parts[-1] = "}"
    else:
        append("}")
    return meta_copy


def encode_stored(obj: Obj) -> str:
    """The JSON text stored for ``obj``: compact, without ``metadata.resourceVersion``, byte for byte
    what encoding the object without it gives; repeated sections come from :data:`_FRAGMENTS`."""
    try:
        return _walk(obj, None)
    except _Irregular:
        return _encode_without_rv(obj)


def encode_for_cache(obj: Obj) -> tuple[str, Obj]:
    """:func:`encode_stored` and a copy of ``obj`` for the watch cache (read-only: it shares the
    remembered sections with other cached objects)."""
    copy: Obj = {}
    try:
        return _walk(obj, copy), copy
    except _Irregular:
        return _encode_without_rv(obj), clone(obj)


def _encode_without_rv(obj: Obj) -> str:
    meta = obj.get("metadata")
    rv = meta.pop("resourceVersion", None) if isinstance(meta, dict) else None
    try:
        return _encode(obj)
    finally:
        if rv is not None:
            meta["resourceVersion"] = rv


def clone(obj: Any) -> Any:
    """A private deep copy of a JSON-shaped value: marshal does it in C, about 2x faster than a JSON
    round trip and a Python walk; anything marshal refuses goes the JSON way (and fails as JSON would)."""
    try:
        return _mloads(_mdumps(obj))
    except ValueError:
        return _loads(_encode(obj))


class Transformer(Protocol):
    """Value transformation at rest (encryption for Secrets); ``key`` is the value's store key, which
    an encrypting transformer authenticates so a value cannot be moved under another key."""

    def to_storage(self, data: bytes, key: str) -> bytes: ...

    def from_storage(self, data: bytes, key: str) -> bytes: ...


@dataclass(slots=True)
class DeleteOptions:
    grace_period_seconds: int | None = None
    propagation_policy: str | None = None
    preconditions: dict[str, str] | None = None
    dry_run: bool = False


@dataclass(slots=True)
class ListResult:
    items: list[Obj]
    rv: int
    continue_: str = ""
    remaining: int | None = None


def object_rv(obj: Obj | None) -> int:
    if obj is None:
        return 0
    rv = obj["metadata"].get("resourceVersion")
    return int(rv) if rv else 0


def parse_rv(value: str | None, what: str = "resourceVersion") -> int | None:
    """None for unset/empty; 400 naming the value when it is not a revision."""
    if value is None or value == "":
        return None
    try:
        rv = int(value)
    except (TypeError, ValueError):
        raise StatusError.bad_request(f'{what}: Invalid value: "{value}": must be a non-negative integer') from None
    if rv < 0:
        raise StatusError.bad_request(f'{what}: Invalid value: "{value}": must be a non-negative integer')
    return rv


def _only_timestamps_moved(new: Obj, current: Obj) -> bool:
    """upstream's IgnoreManagedFieldsTimestampsTransformer: a write that changes nothing but the
    times of its managedFields entries is no write (kubectl says ``patched (no change)`` and no
    watcher sees a MODIFIED)."""
    new_fields, old_fields = new["metadata"].get("managedFields"), current["metadata"].get("managedFields")
    if not isinstance(new_fields, list) or not isinstance(old_fields, list) or len(new_fields) != len(old_fields):
        return False
    if any(not isinstance(a, dict) or not isinstance(b, dict) or {**a, "time": None} != {**b, "time": None}
           for a, b in zip(new_fields, old_fields)):
        return False
    return {**new, "metadata": {**new["metadata"], "managedFields": old_fields}} == current


class Storage:
    """Keys, codec, compare-and-swap writes and cache-consistent reads for every resource."""

    def __init__(self, kv: KV, clock: Clock, registry: Registry,
                 transformers: dict[str, Transformer] | None = None, *, cache_options: dict[str, Any] | None = None,
                 now: Callable[[], str] | None = None) -> None:
        self.kv = kv
        self.clock = clock
        self.registry = registry
        self.transformers = dict(transformers or {})
        self.cache_options = dict(cache_options or {})
        self.now = now or clock.rfc3339
        self.caches: dict[str, WatchCache] = {}
        self._inflight: dict[str, int] = {}
        self._acked: dict[str, int] = {}
        self._written: dict[int, tuple[bytes, Obj]] = {}

    # ------------------------------------------------------------------ keys and codec

    @staticmethod
    def key(spec: ResourceSpec, namespace: str | None, name: str) -> str:
        if spec.namespaced:
            return f"{spec.prefix}{namespace}/{name}"
        return f"{spec.prefix}{name}"

    def encode(self, spec: ResourceSpec, obj: Obj) -> bytes:
        return self._stored_bytes(spec, encode_stored(obj), obj)

    def _stored_bytes(self, spec: ResourceSpec, text: str, obj: Obj) -> bytes:
        data = text.encode()
        transformer = self.transformers.get(spec.group_resource)
        if transformer is None:
            return data
        meta = obj["metadata"]
        return transformer.to_storage(data, self.key(spec, meta.get("namespace"), meta["name"]))

    def decoder(self, spec: ResourceSpec, *, fresh: bool = False) -> Callable[[KeyValue], Obj]:
        """Bytes -> object with its resourceVersion. ``fresh``: take the private copy a write of this
        very value left behind (see :meth:`encode_fresh`) instead of parsing it again."""
        transformer = self.transformers.get(spec.group_resource)
        from_storage = transformer.from_storage if transformer is not None else None
        written = self._written

        def decode(kv: KeyValue) -> Obj:
            value = kv.value
            if fresh and written:
                hit = written.pop(id(value), None)
                if hit is not None and hit[0] is value:
                    obj = hit[1]
                    obj["metadata"]["resourceVersion"] = str(kv.mod_revision)
                    return obj
            try:
                obj = _loads(from_storage(value, kv.key) if from_storage is not None else value)
            except ValueError as err:  # a key this server lacks, or damaged bytes: upstream's 500
                raise StatusError.internal(f'unable to transform key "{kv.key}": {err}') from None
            obj["metadata"]["resourceVersion"] = str(kv.mod_revision)
            return obj

        return decode

    def encode_fresh(self, spec: ResourceSpec, obj: Obj) -> bytes:
        """Encode for a write, leaving a copy of ``obj`` for the watch cache to take when the store hands
        the same value back in an event (saves parsing every write again). The copy is the writer's no
        longer: later changes to ``obj`` do not reach it."""
        text, copy = encode_for_cache(obj)
        data = self._stored_bytes(spec, text, obj)
        written = self._written
        if len(written) >= MAX_WRITTEN:
            written.clear()  # events that never came (a re-list): forget them
        written[id(data)] = (data, copy)
        return data

    def forget(self, data: bytes) -> None:
        """The write of ``data`` did not happen."""
        hit = self._written.pop(id(data), None)
        if hit is not None and hit[0] is not data:
            self._written[id(data)] = hit

    def decode(self, spec: ResourceSpec, kv: KeyValue) -> Obj:
        return self.decoder(spec)(kv)

    # ------------------------------------------------------------------ caches

    async def bind_encrypted(self) -> int:
        """Re-write the values an older kconsole encrypted unbound to their key (see
        kconsole.api.encryption), before the caches read them; returns how many."""
        if not self.transformers:
            return 0
        from kconsole.api.encryption import migrate_unbound  # noqa: PLC0415 - only with encryption at rest

        prefixes = {spec.group_resource: spec.prefix for spec in self.registry
                    if spec.stored and spec.group_resource in self.transformers}
        return await migrate_unbound(self.kv, self.transformers, prefixes)  # type: ignore[arg-type]

    async def start_caches(self) -> None:
        for spec in self.registry:
            await self.start_cache(spec)

    async def start_cache(self, spec: ResourceSpec) -> None:
        """Fill and follow one resource's cache (at start, or when a custom resource is established)."""
        if not spec.stored or spec.group_resource in self.caches:
            return
        cache = WatchCache(spec, self.kv, self.clock, self.decoder(spec, fresh=True),
                           is_quiet=self._quiet_check(spec.prefix, spec.group_resource), **self.cache_options)
        await cache.start()
        self.caches[spec.group_resource] = cache

    async def stop_cache(self, spec: ResourceSpec) -> None:
        """A resource no longer served: its cache and watches end."""
        cache = self.caches.pop(spec.group_resource, None)
        if cache is not None:
            await cache.stop()

    def _quiet_check(self, prefix: str, group_resource: str) -> Callable[[], bool]:
        inflight = self._inflight
        acked = self._acked

        def quiet() -> bool:
            cache = self.caches.get(group_resource)
            return not inflight.get(prefix) and cache is not None and cache.rv >= acked.get(prefix, 0)

        return quiet

    async def stop_caches(self) -> None:
        for cache in self.caches.values():
            await cache.stop()
        self.caches.clear()

    def cache(self, spec: ResourceSpec) -> WatchCache:
        return self.caches[spec.group_resource]

    async def fresh_cache(self, spec: ResourceSpec, at_least: int = 0) -> WatchCache:
        """The resource's cache once it reflects every write this server acknowledged (read-your-writes)."""
        cache = self.caches[spec.group_resource]
        need = max(self._acked.get(spec.prefix, 0), at_least)
        if cache.rv < need or not cache.ready:
            await cache.wait_for(need)
        return cache

    # ------------------------------------------------------------------ the one write path

    async def txn(self, spec: ResourceSpec, compares: list[Compare], success: list[Op],
                  failure: list[Op] | None = None) -> TxnResult:
        prefix = spec.prefix
        inflight = self._inflight
        inflight[prefix] = inflight.get(prefix, 0) + 1
        try:
            res = await self.kv.txn(compares, success, failure)
        finally:
            inflight[prefix] -= 1
        if res.succeeded and res.revision > self._acked.get(prefix, 0):
            self._acked[prefix] = res.revision
        cache = self.caches.get(spec.group_resource)
        if cache is not None:
            cache.poke()
        return res

    async def _current(self, spec: ResourceSpec, namespace: str | None, name: str,
                       key: str) -> tuple[Obj | None, bool, bool]:
        """Where a write starts from: the cache's object, as upstream's GuaranteedUpdate starts from
        the watch cache's copy. When the cache may not hold every write this server acknowledged, its
        copy is only a suggestion: the compare-and-swap fails on a stale one and its failure branch
        returns the stored object, so no read is spent on the way (on real etcd a read is a Raft
        round); anything a suggestion makes the write refuse or skip is checked against the store
        first. An object the lagging cache does not hold at all is read (it may have just been
        created). Returns (object, read from the store, only a suggestion)."""
        cache = self.caches.get(spec.group_resource)
        if cache is not None and cache.ready:
            obj = cache.get(namespace, name)
            fresh = cache.rv >= self._acked.get(spec.prefix, 0)
            if fresh or obj is not None:
                return obj, False, not fresh
        return await self.read(spec, key), True, False

    async def read(self, spec: ResourceSpec, key: str) -> Obj | None:
        """Authoritative read from the store (linearizable: it fails without quorum)."""
        res = await self.kv.range(key)
        return self.decode(spec, res.kvs[0]) if res.kvs else None

    async def current_revision(self, spec: ResourceSpec) -> int:
        """The store's revision by a linearizable read, as upstream's GetCurrentResourceVersion asks
        etcd before a consistent list from the watch cache: without quorum it fails, as upstream's.
        One key, never stored (the bare prefix), so the read costs a lookup, not a scan."""
        return (await self.kv.range(spec.prefix)).revision

    # ------------------------------------------------------------------ create

    async def create(self, spec: ResourceSpec, obj: Obj, *, dry_run: bool = False) -> Obj:
        meta = obj["metadata"]
        name = meta["name"]
        key = self.key(spec, meta.get("namespace"), name)
        if dry_run:
            self.encode(spec, obj)  # what would be stored must encode
            cache = await self.fresh_cache(spec)
            if cache.get(meta.get("namespace"), name) is not None:
                raise StatusError.already_exists(spec.group_resource, name, spec.group)
            return obj
        data = self.encode_fresh(spec, obj)
        try:
            res = await self.txn(spec, [Compare(key, "mod", "=", 0)], [Put(key, data)])
        except BaseException:
            self.forget(data)
            raise
        if not res.succeeded:
            self.forget(data)
            raise StatusError.already_exists(spec.group_resource, name, spec.group)
        meta["resourceVersion"] = str(res.revision)
        return obj

    # ------------------------------------------------------------------ update

    async def guaranteed_update(
        self,
        spec: ResourceSpec,
        namespace: str | None,
        name: str,
        try_update: Callable[[Obj | None], Obj],
        *,
        dry_run: bool = False,
        after: Callable[[Obj, Obj | None], Awaitable[Obj]] | None = None,
    ) -> tuple[Obj, str]:
        """Read, transform, compare-and-swap, retry on conflict (upstream's GuaranteedUpdate).

        ``try_update(current)`` gets the stored object (shared: copy before changing it; None when
        absent) and returns the object to store, or raises (404, 409 on a stale resourceVersion, 422).
        Returns (object, outcome) with outcome ``created``, ``updated``, ``unchanged`` or ``deleted``.
        ``after(new, current)``: the admission that needs to wait (webhooks), on each attempt's result.
        """
        key = self.key(spec, namespace, name)
        current, authoritative, suggestion = await self._current(spec, namespace, name, key)
        for _ in range(MAX_CAS_RETRIES):
            try:
                new = try_update(current)
            except StatusError as err:
                if suggestion or (err.code == 409 and err.reason == "Conflict" and not authoritative):
                    current, authoritative, suggestion = await self.read(spec, key), True, False
                    continue
                raise
            if after is not None:
                new = await after(new, current)
            cur_rv = object_rv(current)
            if current is None:
                outcome = "created"
            elif strategy.should_delete_on_update(spec, new, current):
                outcome = "deleted"
            else:
                new["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
                unchanged = new == current
                if not unchanged and _only_timestamps_moved(new, current):
                    new["metadata"]["managedFields"] = current["metadata"]["managedFields"]
                    unchanged = True
                if unchanged:
                    if suggestion:  # nothing to write against a suggestion proves nothing
                        current, authoritative, suggestion = await self.read(spec, key), True, False
                        continue
                    return new, "unchanged"
                outcome = "updated"
            if dry_run:
                if suggestion:  # a dry run has no compare-and-swap to catch a stale start
                    current, authoritative, suggestion = await self.read(spec, key), True, False
                    continue
                if outcome != "deleted":
                    self.encode(spec, new)  # what would be stored must encode
                return new, outcome
            data = None if outcome == "deleted" else self.encode_fresh(spec, new)
            op: Op = Delete(key) if data is None else Put(key, data)
            try:
                res = await self.txn(spec, [Compare(key, "mod", "=", cur_rv)], [op], [Get(key)])
            except BaseException:
                if data is not None:
                    self.forget(data)
                raise
            if res.succeeded:
                if outcome != "deleted":
                    new["metadata"]["resourceVersion"] = str(res.revision)
                return new, outcome
            if data is not None:
                self.forget(data)
            got = res.responses[0] if res.responses else None
            current = self.decode(spec, got.kvs[0]) if isinstance(got, RangeResult) and got.kvs else None
            authoritative, suggestion = True, False
        raise StatusError.conflict(spec.group_resource, name, spec.group)

    # ------------------------------------------------------------------ delete

    async def delete(
        self,
        spec: ResourceSpec,
        namespace: str | None,
        name: str,
        options: DeleteOptions,
        admit: Callable[[Obj], None] | None = None,
        after: Callable[[Obj], Awaitable[None]] | None = None,
    ) -> tuple[Obj, bool]:
        """Delete now, or mark for graceful/finalized deletion. Returns (object, deleted now).
        ``after(current)``: the admission that needs to wait (webhooks), after ``admit``."""
        key = self.key(spec, namespace, name)
        current, _, suggestion = await self._current(spec, namespace, name, key)
        gr = spec.group_resource
        for _ in range(MAX_CAS_RETRIES):
            if current is None:
                raise StatusError.not_found(gr, name, spec.group, spec.resource)
            try:
                self._check_preconditions(spec, current, options.preconditions)
                if admit is not None:
                    admit(current)
            except StatusError:
                if suggestion:  # maybe only the suggestion's fault, as in guaranteed_update
                    current, suggestion = await self.read(spec, key), False
                    continue
                raise
            if options.dry_run and suggestion:
                current, suggestion = await self.read(spec, key), False
                continue
            if after is not None:
                await after(current)
            meta = current["metadata"]
            rv = object_rv(current)
            new: Obj | None = None
            if meta.get("deletionTimestamp"):
                new = self._shorten_grace(spec, current, options)
                if new is None:
                    if suggestion:  # nothing to write against a suggestion proves nothing
                        current, suggestion = await self.read(spec, key), False
                        continue
                    return current, False
                if strategy.should_delete_on_update(spec, new, new):
                    new = None
            else:
                grace = strategy.grace_period(spec, current, options.grace_period_seconds)
                finalizer = strategy.propagation_finalizer(options.propagation_policy)
                pending = strategy.pending_finalizers(spec, current) or finalizer is not None
                if grace > 0 or pending:
                    new = clone(current)
                    nmeta = new["metadata"]
                    nmeta["deletionTimestamp"] = self.clock.rfc3339(self.clock.now() + grace)
                    nmeta["deletionGracePeriodSeconds"] = grace
                    if finalizer is not None and finalizer not in nmeta.get("finalizers", ()):
                        nmeta.setdefault("finalizers", []).append(finalizer)
                    if spec.resource == "namespaces":
                        new.setdefault("status", {})["phase"] = "Terminating"
            if new is None:
                if options.dry_run:
                    return current, True
                res = await self.txn(spec, [Compare(key, "mod", "=", rv)], [Delete(key)], [Get(key)])
                if res.succeeded:
                    return current, True
            else:
                if options.dry_run:
                    return new, False
                res = await self.txn(spec, [Compare(key, "mod", "=", rv)], [Put(key, self.encode(spec, new))],
                                     [Get(key)])
                if res.succeeded:
                    new["metadata"]["resourceVersion"] = str(res.revision)
                    return new, False
            got = res.responses[0] if res.responses else None
            current = self.decode(spec, got.kvs[0]) if isinstance(got, RangeResult) and got.kvs else None
            suggestion = False
        raise StatusError.conflict(gr, name, spec.group)

    def _shorten_grace(self, spec: ResourceSpec, current: Obj, options: DeleteOptions) -> Obj | None:
        """A repeated delete may only shorten a pod's remaining grace (as upstream)."""
        if not spec.graceful_delete or options.grace_period_seconds is None:
            return None
        meta = current["metadata"]
        grace = max(0, int(options.grace_period_seconds))
        left = int(meta.get("deletionGracePeriodSeconds") or 0)
        if grace >= left:
            return None
        new = clone(current)
        new["metadata"]["deletionTimestamp"] = self.clock.rfc3339(self.clock.now() + grace)
        new["metadata"]["deletionGracePeriodSeconds"] = grace
        return new

    @staticmethod
    def _check_preconditions(spec: ResourceSpec, obj: Obj, pre: dict[str, str] | None) -> None:
        if not pre:
            return
        meta = obj["metadata"]
        uid = pre.get("uid")
        if uid and uid != meta.get("uid"):
            raise StatusError.conflict(spec.group_resource, meta["name"], spec.group,
                                       f"Precondition failed: UID in precondition: {uid}, "
                                       f"UID in object meta: {meta.get('uid', '')}")
        rv = pre.get("resourceVersion")
        if rv and rv != meta.get("resourceVersion"):
            raise StatusError.conflict(spec.group_resource, meta["name"], spec.group,
                                       f"Precondition failed: ResourceVersion in precondition: {rv}, "
                                       f"ResourceVersion in object meta: {meta.get('resourceVersion', '')}")

    # ------------------------------------------------------------------ lists from the store

    async def list_from_store(self, spec: ResourceSpec, flt: Filter, *, limit: int = 0,
                              continue_: str | None = None, revision: int = 0) -> ListResult:
        """A consistent (paged) list at one store revision; continue tokens pin that revision."""
        base = spec.prefix + (f"{flt.namespace}/" if spec.namespaced and flt.namespace is not None else "")
        end = prefix_end(base)
        start = base
        if continue_:
            revision, rel = decode_continue(continue_)
            start = spec.prefix + rel
            if not start.startswith(base):
                raise StatusError.bad_request("invalid continue token: continue key is not valid: the token does not "
                                              "belong to this list")
        decode = self.decoder(spec)
        items: list[Obj] = []
        page = limit if limit > 0 else 0
        rev = revision
        next_key = ""
        remaining: int | None = None
        while True:
            try:
                res = await self.kv.range(start, end, revision=rev, limit=page)
            except CompactedError:
                if continue_:
                    raise StatusError.gone(CONTINUE_TOO_OLD) from None
                raise StatusError.gone("The resourceVersion for the provided list is too old.") from None
            rev = res.revision if rev == 0 else rev
            full = False
            for i, kv in enumerate(res.kvs):
                obj = decode(kv)
                if flt.everything or flt.matches(obj):
                    items.append(obj)
                    if limit and len(items) >= limit:
                        full = True
                        if i + 1 < len(res.kvs) or res.more:
                            next_key = kv.key + "\0"
                            if flt.everything and res.count >= i + 1:
                                remaining = res.count - (i + 1)
                        break
            if full or not res.more or not res.kvs:
                break
            start = res.kvs[-1].key + "\0"
            page = min(max(page * 2, 1), 10_000)
        token = encode_continue(rev, next_key[len(spec.prefix):]) if next_key else ""
        return ListResult(items, rev, token, remaining if token else None)


def encode_continue(rv: int, start: str) -> str:
    """Upstream's opaque continue token: base64 of {"v", "rv", "start"}."""
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": start}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_continue(token: str) -> tuple[int, str]:
    """The revision and start key of a continue token, refused with kube-apiserver's words
    (storage.DecodeContinue's errors under the list handler's "invalid continue token")."""
    try:
        data = gojson.loads(gojson.b64decode_raw_url(token))
        if not isinstance(data, dict):
            raise ValueError(f"json: cannot unmarshal {json_type(data)} into Go value of type storage.continueToken")
        for field, kind, go_type in (("v", str, "string"), ("rv", int, "int64"), ("start", str, "string")):
            value = data.get(field)
            if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
                raise ValueError(f"json: cannot unmarshal {json_type(value)} into Go struct field "
                                 f"continueToken.{field} of type {go_type}")
        version = data.get("v") or ""
        if version != "meta.k8s.io/v1":
            raise ValueError(f"server does not recognize this encoded version {version}")
        rv, start = data.get("rv") or 0, data.get("start") or ""
        if rv == 0:
            raise ValueError("incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
        if not start:
            raise ValueError("encoded start key empty (version meta.k8s.io/v1)")
        key = start if start.startswith("/") else "/" + start
        cleaned = posixpath.normpath(key)
        if (cleaned[1:] if cleaned.startswith("//") else cleaned) != key:  # Go's path.Clean keeps one "/"
            raise ValueError(start)
    except ValueError as err:
        raise StatusError.bad_request(f"invalid continue token: continue key is not valid: {err}") from None
    return rv, start
