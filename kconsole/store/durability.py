"""How the store is opened: the one place ``kconsole serve``, the console and every benchmark take it
from, so a figure is measured on what is served.

``synced`` (what ``serve`` and the console run on a data folder): etcd's durability. A write is
acknowledged once its Raft entry is in the WAL of a majority of members and fdatasync'd there
(group-committed: one sync covers every entry that queued behind the previous one), and each
member's SQLite file syncs every backend commit before the WAL records it as applied, so the Raft
log is never trimmed past what the file holds on the device. An acknowledged write survives power
loss.

``unsynced`` (``--ephemeral``, ``--no-sync`` on the benchmarks): the same writes go to the operating
system without any sync. They survive the process being killed (``kill -9``), not a power loss or a
kernel crash. An ephemeral cluster's temporary folder is deleted when it stops, so it syncs nothing.

``processes`` (``--member-processes``): each member runs in its own OS process with its own files
and a Raft transport over loopback sockets (:mod:`kconsole.store.remote`), so the members' fsyncs
and CPU spread over cores; the facade above is the same. Real clock only: on the virtual clock
(tests) the members stay in this process.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kconsole.clock import Clock

if TYPE_CHECKING:
    from kconsole.store.facade import EtcdCluster

SYNCED = "synced"
UNSYNCED = "unsynced"


@dataclass(frozen=True, slots=True)
class StoreMode:
    """How many etcd members and whether their writes are synced before acknowledgement."""

    members: int = 3
    synced: bool = True
    processes: bool = False

    @property
    def durability(self) -> str:
        return SYNCED if self.synced else UNSYNCED

    def describe(self) -> str:
        """One phrase for a banner or a benchmark's text output."""
        n = f"{self.members} etcd member{'s' if self.members != 1 else ''}"
        if self.processes:
            n += " in their own processes"
        if self.synced:
            return f"{n}, synced: a write is acknowledged once its WAL record is on disk (survives power loss)"
        return f"{n}, unsynced: writes reach the OS without a sync (survive kill -9, not power loss)"

    def figures(self) -> dict[str, Any]:
        """What a benchmark prints about the store it measured."""
        out: dict[str, Any] = {"store": "etcd", "members": self.members, "durability": self.durability}
        if self.processes:
            out["member_processes"] = True
        return out


async def open_store(data_dir: str | os.PathLike[str], *, clock: Clock, mode: StoreMode, seed: int = 1,
                     **kwargs: Any) -> EtcdCluster:
    """The etcd members in ``data_dir``, opened as ``mode`` says (kwargs: :meth:`EtcdCluster.open`'s)."""
    from kconsole.store.facade import EtcdCluster

    if mode.processes:
        from kconsole.store.remote import open_processes

        return await open_processes(data_dir, clock=clock, members=mode.members, seed=seed, fsync=mode.synced,  # type: ignore[no-any-return]
                                    synchronous="EXTRA" if mode.synced else "NORMAL", **kwargs)
    return await EtcdCluster.open(data_dir, clock=clock, members=mode.members, seed=seed, fsync=mode.synced,
                                  synchronous="EXTRA" if mode.synced else "NORMAL", **kwargs)
