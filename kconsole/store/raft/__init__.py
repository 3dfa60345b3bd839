"""Raft for the etcd members: a pure consensus core (``core``, ``log``), its on-disk log (``wal``)
and the encoding of store commands carried in entries (``codec``)."""

from kconsole.store.raft.core import (
    HardState,
    Message,
    ProposalDropped,
    RaftNode,
    Ready,
    Role,
    Snapshot,
)
from kconsole.store.raft.log import Entry, RaftLog

__all__ = ["Entry", "HardState", "Message", "ProposalDropped", "RaftLog", "RaftNode", "Ready", "Role", "Snapshot"]
