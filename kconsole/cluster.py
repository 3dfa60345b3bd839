"""The composition root: one config in, a running control plane out, with handles for the console.

Start order follows a real cluster's boot: etcd members, the API server (bootstraps namespaces and
RBAC), its HTTP front, controller-manager and scheduler replicas (each competing for its Lease),
kubelets and kube-proxies, then the manifest-folder sync. Stop runs in reverse. Every component gets
its own token and acts as its own user, so RBAC applies to all of them.

Handles (what the console and the fault catalog use — never objects, which go through the API):
``api_client(user)``, ``etcd`` (members and their status), ``controller_managers``, ``schedulers``,
``kubelets`` (by node name), ``proxies``, ``sync``, ``http``, ``clock``.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import random
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from kconsole.addons import ADDONS, DEFAULT_ADDONS, ensure_addons
from kconsole.api.types import UserInfo
from kconsole.clock import Clock, RealClock, VirtualClock
from kconsole.store.durability import StoreMode

if TYPE_CHECKING:  # imported when the cluster starts: the console paints its first frame before
    from kconsole.api.server import APIServer
    from kconsole.client import Client
    from kconsole.store.facade import EtcdCluster

log = logging.getLogger(__name__)

#: In a data folder: the node fleet ``kconsole import`` copied (a ``node-list``), used when the config gives none.
NODE_LIST_FILE = "nodes.yaml"
#: The users components act as, as upstream names them.
ADMIN = UserInfo("kubernetes-admin", ("system:masters",))
SCHEDULER = UserInfo("system:kube-scheduler")
CONTROLLER_MANAGER = UserInfo("system:kube-controller-manager")
SYNC = UserInfo("system:kconsole-sync")
CONSOLE = UserInfo("system:kconsole-console")

#: The components' user agents, as upstream's binaries send them: the API server names a write's
#: field manager after the product before '/', so managedFields read kube-controller-manager,
#: kube-scheduler and kubelet as on a real cluster (kconsole's own clients stay "kconsole").
COMPONENT_VERSION = "v1.32.0 (linux/amd64) kubernetes/kconsole"
USER_AGENTS = {CONTROLLER_MANAGER.name: f"kube-controller-manager/{COMPONENT_VERSION}",
               SCHEDULER.name: f"kube-scheduler/{COMPONENT_VERSION}"}


def user_agent_for(user: UserInfo) -> str:
    if user.name.startswith("system:node:"):
        return f"kubelet/{COMPONENT_VERSION}"
    return USER_AGENTS.get(user.name) or f"kconsole/{user.name}"


class ConfigError(ValueError):
    """A cluster config that cannot be used; the message names the field and the problem."""


def _start_failures() -> tuple[type[BaseException], ...]:
    from kconsole.preflight import StartError
    from kconsole.store.kv import StoreError

    return (OSError, ConfigError, StartError, StoreError)


#: What :meth:`Cluster.start` raises when the cluster cannot start here (a busy data folder or
#: port, an unreadable file, a store that will not open): reported in one line, never a traceback.
START_FAILURES = _start_failures()


@dataclass
class ClusterConfig:
    """Everything that shapes a cluster. Flags override the ``--config`` YAML file."""

    nodes: int = 3
    control_planes: int = 3
    seed: int = 1
    speed: float = 1.0
    data_dir: Path | None = None
    ephemeral: bool = False
    manifests: Path | None = None  # the watched folder; None = no sync
    http: bool = True
    address: str = "127.0.0.1"
    port: int = 6443
    tls: bool = True
    zones: tuple[str, ...] = ("zone-a", "zone-b", "zone-c")
    node_cpu: str = "4"
    node_memory: str = "16Gi"
    #: Each node's own shape (name, capacity, allocatable, labels, taints, zone), replacing the
    #: generated ``control-plane-N``/``worker-N`` fleet; ``kconsole import`` writes one to the data
    #: folder's ``nodes.yaml``, read when the config gives none.
    node_list: list[dict[str, Any]] = field(default_factory=list)
    #: Worker processes the worker nodes' kubelets run in, over HTTPS with their own credentials
    #: (``kconsole/nodes/processes.py``); 0 runs every kubelet in the cluster's process.
    processes: int = 0
    #: Run each kube-scheduler and kube-controller-manager replica as its own OS process over HTTPS
    #: (``kconsole/replicaproc.py``); needs ``http``.
    replica_processes: bool = False
    #: Run each etcd member as its own OS process, its files its own and Raft between them over
    #: loopback sockets (``kconsole/store/remote.py``); the API server reaches them the same way.
    member_processes: bool = False
    #: Multiplier for simulated image-pull and container-start delays (0 = instant, for benchmarks).
    pod_delay_factor: float = 1.0
    scheduler: dict[str, Any] = field(default_factory=dict)  # KubeSchedulerConfiguration-shaped
    controllers: dict[str, dict[str, Any]] = field(default_factory=dict)  # per-controller settings
    console: dict[str, Any] = field(default_factory=dict)  # keymap, theme, refresh: read by the TUI
    #: An EncryptionConfiguration YAML (kube-apiserver's --encryption-provider-config); None: Secrets
    #: under the data folder's own aesgcm key (``kconsole/api/encryption.py``).
    encryption_config: Path | None = None
    #: Addons created when missing at every start (``kconsole/addons.py``): kube-proxy, coredns,
    #: default-storageclass.
    addons: tuple[str, ...] = DEFAULT_ADDONS
    #: Sync every write to disk before acknowledging it (``kconsole/store/durability.py``). None:
    #: synced, except an ephemeral cluster (its folder is deleted when it stops) and one on a
    #: virtual clock (tests: simulated time knows no power loss, and the device's timing would
    #: decide the order of events a seed must fix).
    store_sync: bool | None = None
    #: Simulated seconds between two compactions of the store by the API server (kube-apiserver's
    #: --etcd-compaction-interval); reads below the compacted revision answer 410. 0: never.
    compaction_interval: float = 300.0
    #: Simulated seconds of history kept below the API's compaction, for history reads (docs/history.md).
    history_retention: float = 24 * 3600.0
    #: Bytes of writes kept as history at most; whichever bound is smaller wins.
    history_max_bytes: int = 2 * 1024 * 1024 * 1024
    #: Which etcd the API server stores objects in: ``embedded`` (kconsole's own members, in
    #: process) or ``local`` (real ``etcd`` processes run in ``DATA/etcd-real``, see
    #: ``kconsole/store/etcdlocal.py``). Ignored when ``etcd_servers`` is set.
    etcd: str = "embedded"
    #: kube-apiserver's --etcd-servers: a real etcd cluster's client URLs (``https://host:2379``).
    etcd_servers: tuple[str, ...] | None = None
    #: kube-apiserver's --etcd-cafile/--etcd-certfile/--etcd-keyfile for ``etcd_servers``.
    etcd_cafile: Path | None = None
    etcd_certfile: Path | None = None
    etcd_keyfile: Path | None = None
    #: The etcd binary ``etcd: local`` runs (default: ``etcd`` on PATH, Debian's etcd-server).
    etcd_binary: str | None = None

    @property
    def real_etcd(self) -> bool:
        """Whether objects live in a real etcd (``etcd_servers`` or ``etcd: local``)."""
        return bool(self.etcd_servers) or self.etcd == "local"

    def store_mode(self, virtual_clock: bool = False) -> StoreMode:
        """The store as this config serves it: one etcd member per control plane, synced or not."""
        synced = self.store_sync if self.store_sync is not None else not (self.ephemeral or virtual_clock)
        return StoreMode(self.control_planes, synced=synced, processes=self.member_processes and not virtual_clock)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> ClusterConfig:
        """Read a YAML config; unknown keys and wrong types are errors naming the key."""
        try:
            raw = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        except OSError as err:
            raise ConfigError(f"cannot read config {path}: {err.strerror}") from err
        except yaml.YAMLError as err:
            # One line naming where, as manifests and themes report it: PyYAML's own text spans lines.
            mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
            where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
            problem = getattr(err, "problem", None) or getattr(err, "context", None) or "invalid YAML"
            raise ConfigError(f"config {path}{where}: not valid YAML: {problem}") from None
        if not isinstance(raw, dict):
            raise ConfigError(f"config {path}: expected a mapping at the top level")
        known = {f.name.replace("_", "-"): f for f in fields(cls)}
        config = cls()
        for key, value in raw.items():
            f = known.get(str(key)) or known.get(str(key).replace("_", "-"))
            if f is None:
                raise ConfigError(f"config {path}: unknown key {key!r} (known: {', '.join(sorted(known))})")
            setattr(config, f.name, _coerce(path, key, f.type, value))
        if config.encryption_config is not None:  # relative to the config file, as kubeconfig paths are
            config.encryption_config = Path(path).parent / config.encryption_config
        for name in ("etcd_cafile", "etcd_certfile", "etcd_keyfile"):
            if getattr(config, name) is not None:
                setattr(config, name, Path(path).parent / getattr(config, name))
        config.validate()
        return config

    @classmethod
    def from_args(cls, args: Any) -> ClusterConfig:
        config = cls.from_file(args.config) if getattr(args, "config", None) else cls()
        defaults = {"nodes": 3, "control_planes": 3, "seed": 1, "speed": 1.0, "port": 6443, "address": "127.0.0.1"}
        for name, default in defaults.items():
            value = getattr(args, name, default)
            if value != default or not getattr(args, "config", None):
                setattr(config, name, value)
        if getattr(args, "insecure_http", False):
            config.tls = False
        if getattr(args, "processes", 0):
            config.processes = args.processes
        if getattr(args, "replica_processes", False):
            config.replica_processes = True
        if getattr(args, "member_processes", False):
            config.member_processes = True
        if getattr(args, "ephemeral", False):
            config.ephemeral = True
        if getattr(args, "etcd", None):
            config.etcd = args.etcd
        if getattr(args, "etcd_servers", None):
            config.etcd_servers = tuple(u for u in args.etcd_servers.split(",") if u.strip())
        for name in ("etcd_cafile", "etcd_certfile", "etcd_keyfile"):
            if getattr(args, name, None):
                setattr(config, name, Path(getattr(args, name)))
        if getattr(args, "etcd_binary", None):
            config.etcd_binary = args.etcd_binary
        folder = Path(getattr(args, "dir", ".") or ".")
        config.manifests = folder
        if getattr(args, "data_dir", None):
            config.data_dir = Path(args.data_dir)
        elif config.data_dir is None:
            config.data_dir = folder / ".kconsole"
        config.load_node_list()
        config.validate()
        return config

    def load_node_list(self) -> None:
        """The data folder's ``nodes.yaml`` (a copied cluster's nodes) when the config lists none."""
        if self.node_list or self.data_dir is None:
            return
        path = Path(self.data_dir) / NODE_LIST_FILE
        if not path.exists():
            return
        try:
            loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as err:
            raise ConfigError(f"cannot read {path}: {err}") from None
        if not isinstance(loaded, list):
            raise ConfigError(f"{path}: expected a list of nodes")
        self.node_list = loaded

    def validate(self) -> None:
        if self.node_list:
            from kconsole.nodes.config import node_configs_from_list

            try:
                node_configs_from_list(self.node_list)
            except ValueError as err:
                raise ConfigError(str(err)) from None
        if self.nodes < 0:
            raise ConfigError(f"nodes must be >= 0, got {self.nodes}")
        if self.processes < 0:
            raise ConfigError(f"processes must be >= 0, got {self.processes}")
        if (self.processes or self.replica_processes) and not self.http:
            raise ConfigError("processes and replica-processes need the HTTP front (http: true): "
                              "the processes reach the API over it")
        if self.member_processes and self.real_etcd:
            raise ConfigError("member-processes runs kconsole's own etcd members; it does not apply to a real etcd")
        from kconsole.nodes.config import MAX_NODES

        if self.nodes + self.control_planes > MAX_NODES:
            raise ConfigError(f"nodes plus control-planes must be at most {MAX_NODES} (one pod /24 each), "
                              f"got {self.nodes + self.control_planes}")
        if self.control_planes not in (1, 3, 5) and not 1 <= self.control_planes <= 7:
            raise ConfigError(f"control-planes must be between 1 and 7, got {self.control_planes}")
        if self.speed <= 0:
            raise ConfigError(f"speed must be positive, got {self.speed}")
        if self.compaction_interval < 0:
            raise ConfigError(f"compaction-interval must be >= 0 seconds, got {self.compaction_interval}")
        if self.history_retention < 0:
            raise ConfigError(f"history-retention must be >= 0 seconds, got {self.history_retention}")
        if self.history_max_bytes < 0:
            raise ConfigError(f"history-max-bytes must be >= 0, got {self.history_max_bytes}")
        if not 0 <= self.port <= 65535:
            raise ConfigError(f"port must be 0..65535, got {self.port}")
        unknown = [name for name in self.addons if name not in ADDONS]
        if unknown:
            raise ConfigError(f"unknown addon {unknown[0]!r} (known: {', '.join(ADDONS)})")
        if self.etcd not in ("embedded", "local"):
            raise ConfigError(f"etcd must be 'embedded' or 'local', got {self.etcd!r}")
        if self.etcd_servers:
            from kconsole.store.etcdgw import parse_servers

            try:
                parse_servers(self.etcd_servers)
            except ValueError as err:
                raise ConfigError(str(err)) from None
        for name in ("etcd_cafile", "etcd_certfile", "etcd_keyfile"):
            path = getattr(self, name)
            if path is not None and not Path(path).is_file():
                raise ConfigError(f"{name.replace('_', '-')}: no file {path}")
        if self.encryption_config is not None:  # a bad file stops here, before any data is written
            self.encryption_transformers(self.data_dir or Path("."))  # (a file given: the folder is not touched)

    def encryption_transformers(self, data_dir: Path) -> dict[str, Any]:
        """The API server's encryption at rest: from :attr:`encryption_config`, else ``data_dir``'s key."""
        from kconsole.api.encryption import EncryptionConfigError, load_transformers

        where = self.encryption_config
        try:
            return load_transformers(data_dir, where)
        except OSError as err:
            raise ConfigError(f"cannot read encryption-config {where}: {err.strerror}") from err
        except EncryptionConfigError as err:
            named = where is None or str(err).startswith(str(where))  # the key file's errors name it
            raise ConfigError(str(err) if named else f"encryption-config {where}: {err}") from err


def _coerce(path: Any, key: str, typ: Any, value: Any) -> Any:
    """Check a config value against the field's declared type (as a string annotation)."""
    t = str(typ)
    if t.endswith(" | None") and not t.startswith("Path"):
        if value is None:
            return None
        t = t.removesuffix(" | None")
    checks: list[tuple[str, Callable[[Any], Any]]] = [
        ("int", int), ("float", float), ("bool", bool), ("str", str),
    ]
    if t.startswith("Path"):
        return None if value is None else Path(str(value))
    if t.startswith("tuple"):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"config {path}: {key} must be a list of strings")
        return tuple(value)
    if t.startswith("list"):
        if not isinstance(value, list):
            raise ConfigError(f"config {path}: {key} must be a list")
        return value
    if t.startswith("dict"):
        if not isinstance(value, dict):
            raise ConfigError(f"config {path}: {key} must be a mapping")
        return value
    for name, conv in checks:
        if t == name:
            ok = isinstance(value, bool) if name == "bool" else (
                isinstance(value, (int, float)) and not isinstance(value, bool) if name in ("int", "float")
                else isinstance(value, str))
            if not ok:
                raise ConfigError(f"config {path}: {key} must be {name}, got {value!r}")
            return conv(value)
    return value


async def _open_real_etcd(cfg: ClusterConfig, data_dir: Path, clock: Clock) -> Any:
    """The store on real etcd: ``etcd_servers``, or ``control_planes`` members run in the data folder."""
    from kconsole.store.etcdgw import TLSFiles
    from kconsole.store.etcdlocal import LOCAL_DIR
    from kconsole.store.etcdreal import open_real

    from kconsole.store.etcdhistory import REVTIME_FILE

    history = (data_dir / HISTORY_DIR / REVTIME_FILE, cfg.history_retention, cfg.history_max_bytes)
    if cfg.etcd_servers:
        return await open_real(servers=list(cfg.etcd_servers), clock=clock, history=history,
                               tls=TLSFiles(cfg.etcd_cafile, cfg.etcd_certfile, cfg.etcd_keyfile))
    return await open_real(local_dir=data_dir / LOCAL_DIR, members=cfg.control_planes, binary=cfg.etcd_binary,
                           clock=clock, history=history)


class Cluster:
    """A running control plane built from a :class:`ClusterConfig`."""

    def __init__(self, config: ClusterConfig, clock: Clock | None = None) -> None:
        self.config = config
        self._clock_file = _clock_file(config) if clock is None else None
        self.clock: Clock = clock or _resumed_clock(config.speed, self._clock_file)
        self._clock_saver: Any = None
        self.rng = random.Random(config.seed)
        self.data_dir: Path = Path(".")
        self._tempdir: str | None = None
        self._folder_lock: int | None = None  # held from start to stop (kconsole/preflight.py)
        self.etcd: EtcdCluster | None = None
        self.store_mode: StoreMode = config.store_mode()
        self.api: APIServer | None = None
        self.http: Any = None
        self.controller_managers: list[Any] = []
        self.schedulers: list[Any] = []
        self.kubelets: dict[str, Any] = {}
        self.node_pool: Any = None
        #: The kubelet worker processes (``processes`` > 0), else None.
        self.workers: Any = None
        #: kube-system Leases, read for replica processes' leadership (``replica_processes``).
        self._leases: Any = None
        self._clock_unsubscribe: Any = None
        self.proxies: dict[str, Any] = {}
        self.sync: Any = None
        self.admin: Any = None
        self.faults: Any = None
        #: The user-level inputs kept for ``kconsole trace export`` (kconsole/trace/recorder.py).
        self.recorder: Any = None
        self._tokens: dict[str, str] = {}
        self._clients: dict[str, Client] = {}
        self.started = False

    # ------------------------------------------------------------------ handles
    def token_for(self, user: UserInfo) -> str:
        assert self.api is not None, "cluster not started"
        if user.name not in self._tokens:
            self._tokens[user.name] = self.api.tokens.issue(user)
        return self._tokens[user.name]

    def api_client(self, user: UserInfo | str = ADMIN) -> Client:
        """A client acting as ``user`` (one shared Client per user)."""
        if isinstance(user, str):
            user = UserInfo(user, ("system:nodes",) if user.startswith("system:node:") else ())
        if user.name not in self._clients:
            assert self.api is not None, "cluster not started"
            from kconsole.client import Client

            self._clients[user.name] = Client(self.api, self.token_for(user), self.clock,
                                              user_agent=user_agent_for(user))
        return self._clients[user.name]

    @property
    def kubeconfig_path(self) -> Path | None:
        return getattr(self.http, "kubeconfig_path", None)

    @property
    def server_url(self) -> str | None:
        return getattr(self.http, "url", None)

    def root_ca_file(self) -> Path | None:
        """The CA the HTTPS front's certificate is issued by (None without a TLS front)."""
        from kconsole.kubeconfig import CA_CERT

        if self.http is None or not self.config.tls:
            return None
        path = self.data_dir / CA_CERT
        return path if path.exists() else None

    def replica_names(self) -> list[str]:
        return [f"control-plane-{i}" if self.config.control_planes > 1 else "control-plane"
                for i in range(self.config.control_planes)]

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        cfg = self.config
        started_at = self.clock.now()
        if cfg.ephemeral or cfg.data_dir is None:
            self._tempdir = tempfile.mkdtemp(prefix="kconsole-")
            self.data_dir = Path(self._tempdir)
        else:
            self.data_dir = Path(cfg.data_dir).resolve()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.data_dir, 0o700)
        from kconsole.preflight import lock_data_folder

        if self._folder_lock is None:
            self._folder_lock = lock_data_folder(self.data_dir)

        from kconsole.api.server import APIServer
        from kconsole.kubeconfig import service_account_key
        from kconsole.store.durability import open_store
        from kconsole.store.facade import MEMBERS_DIR

        transformers = cfg.encryption_transformers(self.data_dir)
        self.store_mode = cfg.store_mode(virtual_clock=isinstance(self.clock, VirtualClock))
        if cfg.real_etcd:
            self.etcd = await _open_real_etcd(cfg, self.data_dir, self.clock)
        else:
            self.etcd = await open_store(self.data_dir / MEMBERS_DIR, clock=self.clock, mode=self.store_mode,
                                         seed=cfg.seed, auto_compact_interval=cfg.compaction_interval,
                                         history_retention=cfg.history_retention,
                                         history_max_bytes=cfg.history_max_bytes)
        from kconsole.api.controlplane import Instance
        from kconsole.nodes.config import address_for

        # One kube-apiserver per control-plane node, advertising its InternalIP (see api.controlplane).
        instances = [Instance(name, address_for(i)) for i, name in enumerate(self.replica_names())]
        self.api = APIServer(self.etcd, self.clock, seed=cfg.seed, transformers=transformers, instances=instances,
                             sa_key=service_account_key(self.data_dir))
        self.api.set_component_probe(self.components_running)
        from kconsole.api.writelog import WriteLog

        self.api.writelog = WriteLog(self.clock, self.data_dir / HISTORY_DIR / "writes.sqlite")
        self.api.writelog.load()
        await self.api.start()

        if cfg.http:
            from kconsole.http.server import HTTPFront

            self.http = HTTPFront(self.api, address=cfg.address, port=cfg.port, tls=cfg.tls,
                                  data_dir=self.data_dir, clock=self.clock)
            try:
                await self.http.start()
            except OSError as err:
                if err.errno != errno.EADDRINUSE:
                    raise
                from kconsole.preflight import port_in_use

                raise port_in_use(cfg.address, cfg.port) from None

        await self._ensure_addons()
        self._record_inputs(started_at)
        await self._start_replicas()
        await self._start_nodes()
        await self._start_sync()
        from kconsole.admin import AdminServer
        from kconsole.faults import FaultCatalog

        self.faults = FaultCatalog(self)
        if self.recorder is not None:
            self.recorder.watch_faults(self.faults)
        self.admin = AdminServer(self)
        await self.admin.start()
        self._save_clock()
        self.started = True

    def _record_inputs(self, started_at: float) -> None:
        """Keep the inputs from here on (what a rerun replays; the addons above every start makes itself)."""
        if self.config.ephemeral or self.recorder is not None:
            return
        from kconsole.trace.recorder import INPUTS_FILE, InputRecorder

        self.recorder = InputRecorder(self.data_dir / INPUTS_FILE, self.api, self.clock)
        self.recorder.attach(self.config, started_at)

    async def _ensure_addons(self) -> None:
        """The configured addons' objects, created when missing (see kconsole/addons.py)."""
        await ensure_addons(self.api_client(), self.config.addons)

    async def _start_replicas(self) -> None:
        names = self.replica_names()
        from kconsole.controllers.manager import ControllerManagerReplica
        from kconsole.scheduler.config import parse_config
        from kconsole.scheduler.replicas import SchedulerReplica

        client = self.api_client(CONTROLLER_MANAGER)
        settings = dict(self.config.controllers)
        ca = self.root_ca_file()
        if ca is not None:  # upstream's --root-ca-file: the CA pods verify the API server with
            self.api.token_volumes = True
            publisher = "root-ca-certificate-publisher-controller"
            settings[publisher] = {"root_ca_file": str(ca), **settings.get(publisher, {})}
            from kconsole.kubeconfig import CA_KEY

            signer = "certificatesigningrequest-signing-controller"  # --cluster-signing-{cert,key}-file
            settings[signer] = {"cluster_signing_cert_file": str(ca),
                                "cluster_signing_key_file": str(ca.with_name(CA_KEY)), **settings.get(signer, {})}
        if self.config.replica_processes:
            await self._start_replica_processes(names, settings)
            return
        for name in names:
            manager = ControllerManagerReplica(client, self.clock, identity=f"{name}_kube-controller-manager",
                                               rng=random.Random(self.rng.random()), settings=settings)
            self.controller_managers.append(manager)
            await manager.start()
        sched_config = parse_config(self.config.scheduler) if self.config.scheduler else None
        client = self.api_client(SCHEDULER)
        for name in names:
            replica = SchedulerReplica(client, self.clock, identity=f"{name}_kube-scheduler",
                                       rng=random.Random(self.rng.random()), config=sched_config)
            self.schedulers.append(replica)
            await replica.start()

    async def _start_replica_processes(self, names: list[str], settings: dict[str, Any]) -> None:
        """Each replica in its own process; their leadership read from a cache of kube-system Leases."""
        from kconsole.client import SharedInformer
        from kconsole.replicaproc import ReplicaProcess
        from kconsole.scheduler.config import parse_config

        assert self.server_url is not None, "replica processes need the HTTP front"
        if self.config.scheduler:
            parse_config(self.config.scheduler)  # a bad config fails here, not in every process
        self._leases = SharedInformer(self.api_client(), "leases", "kube-system", clock=self.clock)
        await self._leases.start()
        await self._leases.wait_synced()
        leases = self._leases

        def holder(name: str) -> str | None:
            lease = leases.get(f"kube-system/{name}")
            return ((lease or {}).get("spec") or {}).get("holderIdentity")

        for kind, user, into, config in (("controller-manager", CONTROLLER_MANAGER, self.controller_managers, settings),
                                         ("scheduler", SCHEDULER, self.schedulers, self.config.scheduler)):
            for name in names:
                replica = ReplicaProcess(kind, f"{name}_kube-{kind}", server=self.server_url,
                                         ca_file=self.root_ca_file(), token=self.token_for(user), clock=self.clock,
                                         seed=int(self.rng.random() * 2**31), settings=dict(config or {}),
                                         holder=holder)
                into.append(replica)
        await asyncio.gather(*(r.start() for r in [*self.controller_managers, *self.schedulers]))
        self._follow_clock()

    def _follow_clock(self) -> None:
        """Processes started with this clock's time follow its speed changes, pauses and steps."""
        on_change = getattr(self.clock, "on_change", None)
        if on_change is None or self._clock_unsubscribe is not None:
            return
        from kconsole.clockpipe import send_clock

        def forward() -> None:
            procs = [w.process for w in (self.workers.workers if self.workers is not None else ())]
            procs += [getattr(r, "process", None) for r in [*self.schedulers, *self.controller_managers]]
            for proc in procs:
                send_clock(proc, self.clock)

        self._clock_unsubscribe = on_change(forward)

    async def _start_nodes(self) -> None:
        from kconsole.nodes import default_node_configs
        from kconsole.nodes.fleet import NodeFleet

        if self.config.node_list:
            from kconsole.nodes.config import node_configs_from_list

            configs = node_configs_from_list(self.config.node_list)
        else:
            configs = default_node_configs(self.config.nodes, self.config.control_planes, zones=self.config.zones,
                                           cpu=self.config.node_cpu, memory=self.config.node_memory)
        remote = [c for c in configs if not c.control_plane] if self.config.processes else []
        configs = [c for c in configs if c not in remote]
        self.node_pool = NodeFleet(self.api_client, self.clock, configs, rng=random.Random(self.rng.random()),
                                   delay_factor=self.config.pod_delay_factor,
                                   static_pod_status=self.static_pod_status,
                                   proxy_pods="kube-proxy" in self.config.addons)
        await self.node_pool.start()
        self.kubelets = self.node_pool.kubelets
        self.proxies = self.node_pool.proxies
        assert self.api is not None
        self.api.set_log_source(self.node_pool.logs)
        self.api.set_exec_source(self.node_pool)
        self.api.set_pod_network(self.node_pool)
        self.api.set_kubelet_endpoints(self.node_pool.kubelet_endpoint)
        if remote:
            await self._start_workers(remote)

    async def _start_workers(self, configs: list[Any]) -> None:
        from kconsole.nodes.processes import WorkerProcesses

        assert self.server_url is not None, "worker processes need the HTTP front"

        def token_for(name: str) -> str:
            return self.token_for(UserInfo(name, ("system:nodes",) if name.startswith("system:node:") else ()))

        self.workers = WorkerProcesses(configs, self.config.processes, server=self.server_url,
                                       ca_file=self.root_ca_file(), token_for=token_for, clock=self.clock,
                                       seed=self.config.seed, delay_factor=self.config.pod_delay_factor,
                                       proxy_pods="kube-proxy" in self.config.addons)
        await self.workers.start()
        self._follow_clock()

    def components_running(self) -> dict[str, bool]:
        """Whether any replica of each component runs: what ComponentStatus reports."""
        return {"scheduler": any(replica.running for replica in self.schedulers),
                "controller-manager": any(replica.running for replica in self.controller_managers)}

    def static_pod_status(self) -> dict[str, dict[str, bool]]:
        """Which control-plane components run on each control-plane node, for its static pods."""
        status: dict[str, dict[str, bool]] = {}
        members = list(getattr(self.etcd, "members", []))
        for i, name in enumerate(self.replica_names()):
            status[name] = {
                "etcd": bool(i < len(members) and getattr(members[i], "running", True)),
                "kube-apiserver": self.api is not None,
                "kube-scheduler": bool(i < len(self.schedulers) and self.schedulers[i].running),
                "kube-controller-manager": bool(i < len(self.controller_managers)
                                                and self.controller_managers[i].running),
            }
        return status

    async def _start_sync(self) -> None:
        if self.config.manifests is None:
            return
        from kconsole.sync import ManifestSync

        self.sync = ManifestSync(self.api_client(SYNC), self.config.manifests, data_dir=self.data_dir,
                             clock=self.clock)
        await self.sync.start()

    def _save_clock(self) -> None:
        """Persist simulated time now and every CLOCK_SAVE_PERIOD, so a restart resumes it (see
        :func:`_resumed_clock`); a clock handed in (tests' virtual one) is not ours to keep."""
        if self._clock_file is None:
            return
        self._write_clock(self._clock_file)
        self._clock_saver = self.clock.call_later(CLOCK_SAVE_PERIOD, self._save_clock)

    def _write_clock(self, path: Path) -> None:
        try:
            tmp = path.with_suffix(".tmp")
            tmp.write_text(f"{self.clock.now():.6f}\n", encoding="utf-8")
            os.replace(tmp, path)
        except OSError as err:
            log.warning("cannot save the simulated time to %s: %s", path, err)

    async def stop(self) -> None:
        """Stop everything in reverse start order; safe to call twice."""
        if self._clock_saver is not None:
            self._clock_saver.cancel()
            self._clock_saver = None
            assert self._clock_file is not None
            self._write_clock(self._clock_file)
        for part in [self.admin, self.sync]:
            if part is not None:
                await _quietly(part.stop())
        if self.recorder is not None:
            self.recorder.close()
            self.recorder = None
        if self.faults is not None:
            await _quietly(self.faults.close())
            self.faults = None
        if self._clock_unsubscribe is not None:
            self._clock_unsubscribe()
            self._clock_unsubscribe = None
        if self.workers is not None:
            await _quietly(self.workers.stop())
            self.workers = None
        if self.node_pool is not None:
            await _quietly(self.node_pool.stop())
        for proxy in self.proxies.values():
            await _quietly(proxy.stop())
        for kubelet in self.kubelets.values():
            await _quietly(kubelet.stop())
        for replica in [*self.schedulers, *self.controller_managers]:
            await _quietly(replica.stop())
        if self._leases is not None:
            await _quietly(self._leases.stop())
            self._leases = None
        for client in self._clients.values():
            close = getattr(client, "close", None)
            if close is not None:
                await _quietly(close())
        if self.http is not None:
            await _quietly(self.http.stop())
        if self.api is not None:
            await _quietly(self.api.stop())
            await _quietly(self.api.writelog.close())
        if self.etcd is not None:
            await _quietly(self.etcd.close())
        self.admin = self.sync = self.http = self.api = self.etcd = None
        self.node_pool = None
        self.kubelets.clear()
        self.proxies.clear()
        self.schedulers.clear()
        self.controller_managers.clear()
        self._clients.clear()
        self._tokens.clear()
        if self._folder_lock is not None:
            from kconsole.preflight import release_data_folder

            release_data_folder(self._folder_lock)
            self._folder_lock = None
        if self._tempdir is not None:
            shutil.rmtree(self._tempdir, ignore_errors=True)
            self._tempdir = None
        self.started = False


#: The data folder's record of simulated time, and how often (simulated seconds) it is rewritten.
CLOCK_FILE = "clock"
#: The data folder's folder for what the history keeps beside the store (the write requests' log).
HISTORY_DIR = "history"
CLOCK_SAVE_PERIOD = 10.0


def _clock_file(config: ClusterConfig) -> Path | None:
    if config.ephemeral or config.data_dir is None:
        return None
    return Path(config.data_dir).resolve() / CLOCK_FILE


def _resumed_clock(speed: float, path: Path | None) -> RealClock:
    """A real clock that never starts behind the time the cluster last saw. Run faster than real
    time (``--speed``, the console's 10x/60x), the cluster's timestamps get ahead of the wall clock;
    starting again at wall time would put every Lease, schedule and timestamp in the future (ages
    "<invalid>", CronJobs silent until time catches up)."""
    clock = RealClock(speed=speed)
    if path is None:
        return clock
    try:
        saved = float(path.read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return clock
    return RealClock(speed=speed, start=saved) if saved > clock.now() else clock


async def _quietly(aw: Any) -> None:
    """Stopping must go on even when one part fails to stop."""
    try:
        await aw
    except (asyncio.CancelledError, Exception):  # noqa: BLE001
        log.exception("error while stopping a component")
