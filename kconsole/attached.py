"""A cluster reached through a kubeconfig, as the console's cluster source.

The console needs a handful of handles from the cluster it shows: a clock, ``start``/``stop``,
``api_client``, a fault catalog and an etcd handle. An embedded :class:`~kconsole.cluster.Cluster`
has them all; :class:`AttachedCluster` offers the same handles over any API server: one HTTPS
client (the kubeconfig's identity, whoever the console asks for), the faults the API allows
(:mod:`kconsole.apifaults`), and the etcd panel from the API server's checks and metrics
(:mod:`kconsole.apistore`), or, given the members' endpoints and certificates, from the members
themselves (etcd's maintenance API, as for ``--etcd local``: :mod:`kconsole.store.etcdreal`).
Nothing here simulates anything: the cluster is somebody else's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kconsole.apifaults import APIFaultCatalog
from kconsole.apistore import APIStoreView
from kconsole.client import Client
from kconsole.client.https import HTTPSEntry
from kconsole.client.kubeconfig import RestConfig, default_paths, load
from kconsole.clock import Clock, RealClock
from kconsole.store.etcdgw import TLSFiles, parse_servers
from kconsole.store.etcdreal import RealEtcdCluster


class AttachedCluster:
    """The console's cluster handles for one kubeconfig context."""

    def __init__(self, kubeconfig: Path | None = None, context: str | None = None, *,
                 allow_writes: bool = False, clock: Clock | None = None,
                 etcd_endpoints: list[str] | None = None, etcd_tls: TLSFiles | None = None) -> None:
        self.kubeconfig_paths = [kubeconfig] if kubeconfig is not None else default_paths()
        #: Read now: a wrong context is a clear error before the terminal is taken.
        self.rest: RestConfig = load(self.kubeconfig_paths, context)
        self.context = self.rest.context
        self.allow_writes = allow_writes
        #: Why the console refuses writes (it says so on each refused key).
        self.readonly_reason = "" if allow_writes else f"attached to {self.context} without --allow-writes"
        self.clock: Clock = clock or RealClock()
        self.kubeconfig_path = self.kubeconfig_paths[0]
        self.started = False
        self.entry: HTTPSEntry | None = None
        self.client: Client | None = None
        self.faults: APIFaultCatalog | None = None
        #: Given, the etcd panel shows these members' own status (etcd's maintenance API).
        self.etcd_endpoints = parse_servers(etcd_endpoints, flag="--etcd-endpoints") if etcd_endpoints else None
        self.etcd_tls = etcd_tls
        self.etcd: APIStoreView | RealEtcdCluster | None = None
        self.proxies: dict[str, Any] = {}
        self.data_dir = None

    async def start(self) -> None:
        entry = HTTPSEntry(self.rest, self.clock)
        try:
            await entry.open()
        except BaseException:
            await entry.close()
            raise
        self.entry = entry
        self.client = Client(entry, "", self.clock, user_agent="kconsole-attach")
        if self.etcd_endpoints:
            members = RealEtcdCluster(self.etcd_endpoints, tls=self.etcd_tls, clock=self.clock, compaction_interval=0)
            try:
                await members.start_view()
            except BaseException:
                await members.close()
                await entry.close()
                raise
            self.etcd = members
        else:
            self.etcd = APIStoreView(entry, self.client)
        self.faults = APIFaultCatalog(self, context=self.context, allow_writes=self.allow_writes)
        self.started = True

    async def stop(self) -> None:
        self.started = False
        if self.faults is not None:
            await self.faults.close()
        if isinstance(self.etcd, RealEtcdCluster):
            await self.etcd.close()
        if self.entry is not None:
            await self.entry.close()

    def api_client(self, user: Any = None) -> Client:
        """The kubeconfig's client, whoever asks: an attached console acts as its user only."""
        assert self.client is not None, "AttachedCluster.start() first"
        return self.client
