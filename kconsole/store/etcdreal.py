"""The store handle the cluster holds when it runs on real etcd: the KV contract (:class:`RealEtcd`)
plus the member view and fault handles the console and the fault catalog use on the in-process
members (``members``, ``leader()``, ``member()``, ``member_status()``, ``quorum()``, ``network``,
``kill_leader()``, ``exhaust_quota()``), read from etcd's maintenance API and acting on the real
processes when kconsole runs them (:mod:`kconsole.store.etcdlocal`). Members kconsole does not run
(``--etcd-servers`` alone) are shown but cannot be broken from here.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kconsole.store.etcdgw import COMPACT_KEY, RealEtcd, TLSFiles
from kconsole.store.etcdhistory import EtcdHistory
from kconsole.store.etcdlocal import START_TIMEOUT, LocalEtcd, LocalMember
from kconsole.store.facade import Quorum
from kconsole.store.kv import DEFAULT_QUOTA_BYTES, NoSpaceError, Put, StoreError
from kconsole.store.members import MemberStatus

log = logging.getLogger(__name__)

#: Wall seconds between two looks at every member's status (leader, term, health).
POLL_INTERVAL = 1.0
#: The key the quota fault fills to trip the NOSPACE alarm.
FILLER_KEY = "/kconsole/quota-filler"


@dataclass
class RemoteMember:
    """A member kconsole does not run: shown, not broken."""

    name: str
    endpoint: str
    id: int = 0
    running: bool = True
    paused: bool = False
    is_leader: bool = False
    disk_latency: float = 0.0

    def _refuse(self) -> None:
        from kconsole.faults import FaultError

        raise FaultError(f"etcd member {self.name} ({self.endpoint}) is not run by this cluster: start it with "
                         f"--etcd local to break its members")

    async def start(self) -> None:
        self._refuse()

    async def stop(self) -> None:
        self._refuse()

    async def kill(self) -> None:
        self._refuse()

    def pause(self) -> None:
        self._refuse()

    def resume(self) -> None:
        self._refuse()

    def slow_disk(self, seconds: float) -> None:
        self._refuse()


class _NoNetwork:
    def isolate(self, member_id: int) -> None:
        from kconsole.faults import FaultError

        raise FaultError("these etcd members are not run by kconsole: their network cannot be cut from here")

    def heal(self) -> None:
        pass


class RealEtcdCluster(EtcdHistory):
    """RealEtcd (keeping history when asked, :mod:`kconsole.store.etcdhistory`) with the members'
    view and fault handles."""

    def __init__(self, servers: list[str], *, tls: TLSFiles | None = None, local: LocalEtcd | None = None,
                 **kwargs: Any) -> None:
        super().__init__(servers, tls=tls, local=local,
                         watch_idle_timeout=5.0 if local is not None else None, **kwargs)
        self.members: list[Any] = list(local.members) if local is not None else [
            RemoteMember(f"etcd-{i}", url) for i, url in enumerate(self.servers)]
        self.network: Any = local.network if local is not None else _NoNetwork()
        self.quota_bytes = local.quota_bytes if local is not None else DEFAULT_QUOTA_BYTES
        self._statuses: dict[str, dict[str, Any] | None] = {}
        #: Set by :meth:`start_view`: members shown, never written to.
        self.view_only = False
        self._poller: asyncio.Task[None] | None = None
        if local is not None:
            local.on_change.append(self._on_change)

    async def start(self) -> None:
        if self.local is not None:
            await self.local.start()
        await self.wait_for_leader()
        await super().start()
        self._poller = asyncio.get_running_loop().create_task(self._poll_loop(), name="etcd-members")

    async def status(self) -> Any:
        """etcd's status; looking only, the compacted revision is what kube-apiserver's compactor
        last wrote in ``compact_rev_key`` (etcd's status does not tell it)."""
        if self.view_only:
            found = await RealEtcd.range(self, COMPACT_KEY, serializable=True)
            if found.kvs and found.kvs[0].value.isdigit():
                self.compacted = int(found.kvs[0].value)
        return await super().status()

    async def start_view(self) -> None:
        """Only look at the members (``kconsole attach --etcd-endpoints``): no leader needed, no
        compactor, no writes; members are named as etcd's member list names them."""
        self.open_channels()
        try:
            doc = await self._call("/v3/cluster/member/list", {}, require_leader=False)
            names = {url.rstrip("/"): m.get("name") for m in doc.get("members", ()) for url in m.get("clientURLs", ())}
            for m in self.members:
                m.name = names.get(m.endpoint) or m.name
        except StoreError as err:
            log.info("etcd member list not read: %s", err)
        self.view_only = True
        await self.poll()
        self._poller = asyncio.get_running_loop().create_task(self._poll_loop(), name="etcd-members")

    async def close(self) -> None:
        if self.local is not None and self._channels is not None:
            try:  # who leads now: the followers stop first (see LocalEtcd.stop)
                await asyncio.wait_for(self.poll(), 1.5)
            except (asyncio.TimeoutError, StoreError):
                pass
        if self._poller is not None:
            self._poller.cancel()
            try:
                await self._poller
            except (asyncio.CancelledError, Exception):  # noqa: BLE001 - stopping anyway
                pass
        await super().close()
        if self.local is not None:
            with self._io():
                await self.local.stop()

    async def wait_for_leader(self, timeout: float = START_TIMEOUT) -> None:
        """Until the members elected a leader (real time, which a virtual clock waits for too)."""
        deadline = time.monotonic() + timeout
        with self._io():
            while True:
                await self.poll()
                if self.leader() is not None:
                    return
                if time.monotonic() > deadline:
                    where = f" (logs: {self.local.folder}/etcd-N.log)" if self.local is not None else ""
                    raise StoreError(f"etcd at {','.join(self.servers)} elected no leader within "
                                     f"{timeout:g} s{where}")
                await asyncio.sleep(0.1)

    # ----- the view -----------------------------------------------------------------------------
    def _on_change(self) -> None:
        for m in self.members:
            if not m.running or m.paused:
                m.is_leader = False

    async def poll(self) -> None:
        """Every member's status, at once (a member that does not answer within STATUS_TIMEOUT is down)."""
        self.open_channels()
        answers = await asyncio.gather(*(self.endpoint_status(m.endpoint) for m in self.members))
        for m, doc in zip(self.members, answers):
            self._statuses[m.name] = doc
            if isinstance(m, RemoteMember):
                m.running = doc is not None
            if doc is not None:
                m.id = int(doc["header"]["member_id"])
                m.is_leader = doc.get("leader") == doc["header"]["member_id"]
            else:
                m.is_leader = False

    async def _poll_loop(self) -> None:
        while not self._closed:
            await asyncio.sleep(POLL_INTERVAL)
            try:
                await self.poll()
            except Exception as err:  # noqa: BLE001 - a view; the next look may do better
                log.debug("etcd member poll failed: %s", err)

    def leader(self) -> Any:
        for m in self.members:
            if m.is_leader and m.running and not m.paused and m.id not in getattr(self.network, "isolated", ()):
                return m
        return None

    def member(self, name_or_id: str | int) -> Any:
        for m in self.members:
            if name_or_id in (m.name, m.id, f"{m.id:x}", m.endpoint):
                return m
        raise KeyError(f"no etcd member {name_or_id!r}")

    def quorum(self) -> Quorum:
        isolated = getattr(self.network, "isolated", set())
        alive = sum(1 for m in self.members if m.running and not m.paused and m.id not in isolated
                    and int((self._statuses.get(m.name) or {}).get("leader", 0) or 0))
        return Quorum.of(len(self.members), alive)

    async def member_status(self) -> list[MemberStatus]:
        await self.poll()
        leader = self.leader()
        out = []
        for m in self.members:
            doc = self._statuses.get(m.name)
            errors = [] if doc is not None else [MemberStatus.NO_ANSWER]
            doc = doc or {}
            header = doc.get("header", {})
            lead = int(doc.get("leader", 0) or 0)
            is_leader = bool(doc) and doc.get("leader") == header.get("member_id")
            out.append(MemberStatus(
                name=m.name, id=f"{m.id:x}", endpoint=m.endpoint, version=str(doc.get("version", "")),
                running=m.running, paused=m.paused, healthy=bool(doc) and leader is not None and lead != 0,
                is_leader=is_leader, leader=f"{lead:x}" if lead else "",
                role="leader" if is_leader else ("follower" if lead else ("" if not doc else "candidate")),
                raft_term=int(doc.get("raftTerm", 0)), raft_index=int(doc.get("raftIndex", 0)),
                raft_applied_index=int(doc.get("raftAppliedIndex", doc.get("raftIndex", 0))),
                revision=int(header.get("revision", 0)), db_size=int(doc.get("dbSize", 0)),
                db_size_in_use=int(doc.get("dbSizeInUse", doc.get("dbSize", 0))), wal_size=0,
                errors=errors + [str(e) for e in doc.get("errors", ())]))
        return out

    # ----- faults -------------------------------------------------------------------------------
    def heal(self) -> None:
        self.network.heal()

    async def kill_leader(self) -> Any:
        """SIGKILL the member that leads now (start it again with ``member.start()``)."""
        leader = self.leader()
        if leader is not None:
            await leader.kill()
        return leader

    async def exhaust_quota(self) -> None:
        """Restart each member with ``--quota-backend-bytes`` at its size now, then write until
        etcd raises its NOSPACE alarm."""
        local = self._require_local()
        doc = await self._call("/v3/maintenance/status", {})
        await self._restart_with_quota(local, max(int(doc.get("dbSize", 0)), 1))
        filler = b"x" * (256 * 1024)
        for i in range(64):
            try:
                await self.txn([], [Put(f"{FILLER_KEY}/{i}", filler)])
            except NoSpaceError:
                return
        raise StoreError("the NOSPACE alarm did not go off")

    async def restore_quota(self, quota_bytes: int = DEFAULT_QUOTA_BYTES) -> None:
        local = self._require_local()
        await self._restart_with_quota(local, quota_bytes)
        await self.disarm()
        from kconsole.store.kv import Delete, prefix_end

        await self.txn([], [Delete(FILLER_KEY + "/", prefix_end(FILLER_KEY + "/"))])
        self.quota_bytes = quota_bytes

    async def raise_alarm(self) -> None:
        await self.exhaust_quota()

    def _require_local(self) -> LocalEtcd:
        if self.local is None:
            from kconsole.faults import FaultError

            raise FaultError("these etcd members are not run by kconsole: their quota cannot be changed from here")
        return self.local

    async def _restart_with_quota(self, local: LocalEtcd, quota: int) -> None:
        """A rolling restart: one member at a time, each back and answering before the next goes."""
        for m in local.members:
            m.quota_bytes = quota
            if not m.running:
                continue
            await m.stop()
            await m.start()
            await self._wait_answering(m)

    async def _wait_answering(self, m: LocalMember) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            doc = await self.endpoint_status(m.endpoint)
            if doc is not None and int(doc.get("leader", 0) or 0):
                return
            await asyncio.sleep(0.1)


async def open_real(*, servers: list[str] | None = None, tls: TLSFiles | None = None,
                    local_dir: Path | None = None, members: int = 3, binary: str | None = None,
                    clock: Any = None, history: tuple[Path, float, int] | None = None,
                    **options: Any) -> RealEtcdCluster:
    """The store on real etcd: the members at ``servers``, or ``members`` run in ``local_dir``;
    ``history``: (revision-time file, retention, max bytes) to keep history (docs/history.md);
    ``options``: the cluster's own (``compaction_interval``)."""
    local = None
    if local_dir is not None:
        local = LocalEtcd(local_dir, members=members, binary=binary)
        servers = local.servers
        tls = TLSFiles(*local.tls_files())
    assert servers
    etcd = RealEtcdCluster(servers, tls=tls, local=local, clock=clock, **options)
    if history is not None:
        etcd.keep_history(*history)
    try:
        await etcd.start()
    except BaseException:
        await etcd.close()
        raise
    return etcd


async def open_stopped_local(data_dir: Path, clock: Any, *, history_dir: Path) -> RealEtcdCluster:
    """A stopped ``--etcd local`` data folder's members, started to read their history: no
    compactor runs, nothing is written (a cluster on ``--etcd-servers`` is read while it runs).
    ``history_dir`` is the folder's history folder, which the composition root names."""
    from kconsole.store.etcdhistory import REVTIME_FILE
    from kconsole.store.etcdlocal import LOCAL_DIR
    from kconsole.store.facade import MEMBERS_DIR

    ports = data_dir / LOCAL_DIR / "ports.json"
    if not ports.exists():
        raise StoreError(f"no etcd member files under {data_dir / MEMBERS_DIR} nor {data_dir / LOCAL_DIR} "
                         f"(a cluster on --etcd-servers is read while it runs)")
    local = LocalEtcd(data_dir / LOCAL_DIR, members=len(json.loads(ports.read_text())))
    etcd = RealEtcdCluster(local.servers, tls=TLSFiles(*local.tls_files()), local=local, clock=clock,
                           compaction_interval=0)
    etcd.keep_history(history_dir / REVTIME_FILE, 0.0, 0)
    try:
        with etcd._io():  # a reader's virtual clock waits for the members to start, not a timeout
            await etcd.start()
    except BaseException:
        await etcd.close()
        raise
    return etcd
