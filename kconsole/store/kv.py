"""The etcd-shaped contract between the API server and the store.

The single-member revision log (``revlog.py``) implements :class:`KV`; so does the Raft member
facade of the etcd-members layer. The API server depends only on this module.
Keys are ``str`` (``/registry/pods/default/web-1``), values ``bytes`` (JSON).

The request and result types are plain slotted dataclasses, treated as immutable but not frozen: a
frozen one's ``__init__`` sets each field through ``object.__setattr__``, four times the cost, and a
write builds several of them (its compare, put and get, the previous key-value, its watch event).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Literal, Protocol

#: etcd's request size limit.
MAX_REQUEST_BYTES = int(1.5 * 1024 * 1024)
#: etcd's default backend quota.
DEFAULT_QUOTA_BYTES = 2 * 1024 * 1024 * 1024


class StoreError(Exception):
    """Base of store errors; ``str(err)`` is etcd's message."""


class CompactedError(StoreError):
    def __init__(self, compact_revision: int) -> None:
        super().__init__("etcdserver: mvcc: required revision has been compacted")
        self.compact_revision = compact_revision


class FutureRevisionError(StoreError):
    def __init__(self) -> None:
        super().__init__("etcdserver: mvcc: required revision is a future revision")


class TooLargeError(StoreError):
    def __init__(self) -> None:
        super().__init__("etcdserver: request is too large")


class NoSpaceError(StoreError):
    def __init__(self) -> None:
        super().__init__("etcdserver: mvcc: database space exceeded")


class UnavailableError(StoreError):
    """No quorum / no leader / request timed out: the API server answers 503/504."""


class ClosedError(StoreError):
    def __init__(self) -> None:
        super().__init__("etcdserver: server stopped")


@dataclass(slots=True)
class KeyValue:
    key: str
    value: bytes
    create_revision: int
    mod_revision: int
    version: int
    lease: int = 0


@dataclass(slots=True)
class Compare:
    """``target`` of ``key`` compared with ``value`` by ``op``.

    target: ``mod`` (mod_revision), ``create`` (create_revision), ``version`` or ``value``.
    A missing key has mod/create revision 0, version 0 and value ``b""``.
    """

    key: str
    target: Literal["mod", "create", "version", "value"]
    op: Literal["=", "!=", "<", ">"]
    value: int | bytes


@dataclass(slots=True)
class Put:
    key: str
    value: bytes
    lease: int = 0


@dataclass(slots=True)
class Delete:
    """Delete ``key`` (or the range ``[key, end)`` when ``end`` is given)."""

    key: str
    end: str | None = None


@dataclass(slots=True)
class Get:
    key: str
    end: str | None = None


Op = Put | Delete | Get


@dataclass(slots=True)
class RangeResult:
    kvs: list[KeyValue]
    count: int
    more: bool
    revision: int  # store revision the range was served at


@dataclass(slots=True)
class TxnResult:
    succeeded: bool
    revision: int  # store revision after the txn (unchanged when nothing was written)
    #: one entry per op of the branch that ran: RangeResult for Get, the prior KeyValue (or None)
    #: for Put/Delete of a single key, a list of deleted KeyValues for ranged Delete.
    responses: list[object] = field(default_factory=list)


@dataclass(slots=True)
class Event:
    type: Literal["PUT", "DELETE"]
    kv: KeyValue  # for DELETE: key, mod_revision = deletion revision, version 0, value b""
    prev_kv: KeyValue | None


@dataclass(slots=True)
class WatchResponse:
    """A batch of events, or a progress notification (``events`` empty, ``revision`` = all
    events up to it were delivered), or a cancellation (``canceled`` with ``compact_revision``)."""

    events: list[Event]
    revision: int
    canceled: bool = False
    compact_revision: int = 0
    progress: bool = False


@dataclass(slots=True)
class Status:
    revision: int
    compact_revision: int
    db_size: int
    db_size_in_use: int
    keys: int
    alarms: list[str] = field(default_factory=list)


def prefix_end(prefix: str) -> str:
    """The range end that covers every key starting with ``prefix`` (etcd's ``--prefix``)."""
    if not prefix:
        return "\0"
    last = prefix[-1]
    return prefix[:-1] + chr(ord(last) + 1)


class KV(Protocol):
    """What the API server needs from etcd."""

    @property
    def revision(self) -> int: ...

    async def range(
        self,
        key: str,
        end: str | None = None,
        *,
        revision: int = 0,
        limit: int = 0,
        count_only: bool = False,
        keys_only: bool = False,
        serializable: bool = False,
    ) -> RangeResult: ...

    async def txn(
        self, compares: list[Compare], success: list[Op], failure: list[Op] | None = None
    ) -> TxnResult: ...

    def watch(
        self, key: str, end: str | None = None, *, start_revision: int = 0, prev_kv: bool = True,
        progress_notify: bool = False,
    ) -> AsyncIterator[WatchResponse]: ...

    async def compact(self, revision: int) -> None: ...

    async def status(self) -> Status: ...

    async def close(self) -> None: ...
