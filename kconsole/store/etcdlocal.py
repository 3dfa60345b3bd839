"""A local real etcd cluster: N ``etcd`` processes on loopback, with TLS, that kconsole can break.

``kconsole etcd up --members 3 [--data-dir D] [--etcd-binary B]`` runs one in the foreground and
prints the ``--etcd-servers`` flags that use it; ``kconsole [DIR] --etcd local`` runs one in the
data folder (``DATA/etcd-real``) for the cluster's lifetime.

Layout of the folder: ``pki/`` (a CA, the members' serving certificate for 127.0.0.1 and the API
server's client certificate, made with the same code as the API server's own, see
:mod:`kconsole.kubeconfig`), ``ports.json`` (the ports chosen at the first start: peer URLs are part
of etcd's membership, so a restarted member must get the same ones), ``etcd-N/`` (member N's data)
and ``etcd-N.log``.

Client traffic is TLS with client certificates (``--client-cert-auth``), as kube-apiserver talks to
etcd. Peer traffic goes through a loopback TCP proxy per member, in plain HTTP so the proxy can read
which member speaks (etcd's ``X-Server-From`` header): the partition fault cuts one member off by
closing and refusing its connections in both directions, as a firewall rule would. The proxies
move bytes with ``splice(2)`` on threads of their own, off the event loop.

The fault handles act on the processes: stop (SIGTERM) and start, pause (SIGSTOP/SIGCONT), kill
(SIGKILL), partition (the proxies) and quota exhaustion (members restarted one by one with
``--quota-backend-bytes`` at the size in use, then a write that trips the NOSPACE alarm).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kconsole.store.kv import DEFAULT_QUOTA_BYTES, StoreError

log = logging.getLogger(__name__)

#: Where ``--etcd local`` keeps its members inside a kconsole data folder.
LOCAL_DIR = "etcd-real"
#: Periodic watch progress notifications (etcd's default is 10 minutes): how soon a resource's
#: watch cache learns that nothing of it changed up to a revision others wrote.
PROGRESS_INTERVAL = "1s"
#: Go's garbage collector target for the members (``GOGC``; Go's default is 100). Their heaps are
#: small here, and on a small machine each collection takes CPU from the API server and the other
#: members: at 400 a write cost the three members about a quarter less CPU (docs/etcd.md#speed).
#: A ``GOGC`` in kconsole's own environment wins.
GO_GC = "400"
#: Bytes of a peer connection's first request the proxy reads to find who sends it.
HEAD_LIMIT = 16 * 1024
#: etcd's Raft timing (its defaults): a heartbeat every 100 ms, an election after 1 s of silence.
#: A machine too busy to schedule the members within that sees leader changes; tests on shared
#: machines raise both.
HEARTBEAT_MS = 100
ELECTION_MS = 1000
#: Wall seconds a member gets to stop with the cluster before it is killed.
STOP_GRACE = 2.0
#: Wall seconds the members get to elect a leader at start.
START_TIMEOUT = 30.0


class EtcdNotFound(StoreError):
    """No etcd binary: the message says how to get one."""


def find_binary(binary: str | None = None) -> str:
    """``--etcd-binary`` or ``etcd`` on PATH (Debian's ``etcd-server`` package)."""
    found = shutil.which(binary or "etcd")
    if found is None:
        raise EtcdNotFound(f"no etcd binary {binary or 'etcd'!r}: install Debian's etcd-server package "
                           f"(apt-get install etcd-server) or pass --etcd-binary PATH")
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True, slots=True)
class PKIFiles:
    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path


def ensure_pki(folder: Path) -> PKIFiles:
    """A CA, the members' serving certificate (127.0.0.1, localhost) and a client certificate."""
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    from kconsole.kubeconfig import _cert_pem, _issue, _key_pem, _load, _write_private

    folder.mkdir(parents=True, exist_ok=True)
    files = PKIFiles(folder / "ca.crt", folder / "server.crt", folder / "server.key", folder / "client.crt",
                     folder / "client.key")
    loaded = _load(folder, "ca.crt", "ca.key")
    if loaded is None:
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kconsole-etcd-ca")])
        ca_cert = _issue(ca_name, ca_key, ca_name, ca_key, ca=True)
        _write_private(folder / "ca.key", _key_pem(ca_key))
        files.ca.write_bytes(_cert_pem(ca_cert))
        files.server_cert.unlink(missing_ok=True)
        files.client_cert.unlink(missing_ok=True)
    else:
        ca_cert, ca_key = loaded
    if _load(folder, "server.crt", "server.key") is None:
        key = ec.generate_private_key(ec.SECP256R1())
        cert = _issue(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "etcd")]), key, ca_cert.subject, ca_key,
                      server_names=["127.0.0.1", "localhost"], server_and_client=True)
        _write_private(files.server_key, _key_pem(key))
        files.server_cert.write_bytes(_cert_pem(cert))
    if _load(folder, "client.crt", "client.key") is None:
        key = ec.generate_private_key(ec.SECP256R1())
        cert = _issue(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver-etcd-client")]), key,
                      ca_cert.subject, ca_key, client=True)
        _write_private(files.client_key, _key_pem(key))
        files.client_cert.write_bytes(_cert_pem(cert))
    return files


def _die_with_parent(argv: list[str]) -> list[str]:
    """The member's command run so it gets SIGTERM when kconsole's process goes, and no member
    outlives it. ``setpriv --pdeathsig`` (util-linux) sets that in the child instead of a Python
    ``preexec_fn``: Python code between fork and exec can deadlock on a lock another thread (grpcio's)
    held at the fork, and the member then never starts."""
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "TERM", "--", *argv] if setpriv else argv


@dataclass
class LocalMember:
    """One etcd process. Fault handles: stop/start, pause/resume, kill."""

    name: str
    index: int
    client_port: int
    peer_port: int
    proxy_port: int
    folder: Path
    cluster: LocalEtcd
    #: etcd's member ID, learned from its first answer (0 until then).
    id: int = 0
    process: subprocess.Popen[bytes] | None = None
    paused: bool = False
    is_leader: bool = False
    quota_bytes: int = DEFAULT_QUOTA_BYTES
    #: Real disks cannot be slowed from here (no root, no cgroup): the slow-disk fault says so.
    disk_latency: float = 0.0

    @property
    def endpoint(self) -> str:
        return f"https://127.0.0.1:{self.client_port}"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def advertised_peer_port(self) -> int:
        """Where the other members reach this one: its proxy, unless the cluster runs without."""
        return self.proxy_port if self.cluster.proxied else self.peer_port

    def command(self) -> list[str]:
        c = self.cluster
        peers = ",".join(f"{m.name}=http://127.0.0.1:{m.advertised_peer_port}" for m in c.members)
        return [
            c.binary, "--name", self.name, "--data-dir", str(self.folder),
            "--listen-client-urls", self.endpoint, "--advertise-client-urls", self.endpoint,
            "--listen-peer-urls", f"http://127.0.0.1:{self.peer_port}",
            "--initial-advertise-peer-urls", f"http://127.0.0.1:{self.advertised_peer_port}",
            "--initial-cluster", peers, "--initial-cluster-token", "kconsole", "--initial-cluster-state", "new",
            "--cert-file", str(c.pki.server_cert), "--key-file", str(c.pki.server_key),
            "--client-cert-auth", "--trusted-ca-file", str(c.pki.ca),
            "--quota-backend-bytes", str(self.quota_bytes),
            "--heartbeat-interval", str(c.heartbeat_ms), "--election-timeout", str(c.election_ms),
            "--experimental-watch-progress-notify-interval", PROGRESS_INTERVAL,
            "--enable-v2=false", "--logger", "zap", "--log-outputs", "stderr",
        ]

    async def start(self) -> None:
        self.spawn()

    def spawn(self) -> None:
        """Start the process (returns at once; the member joins its peers in the background)."""
        if self.running:
            return
        log_file = open(self.folder.with_suffix(".log"), "ab")  # noqa: SIM115 - the child keeps it
        try:
            # Its own session: Ctrl-C in kconsole's terminal is kconsole's to handle, not the members'.
            self.process = subprocess.Popen(_die_with_parent(self.command()), stdin=subprocess.DEVNULL,
                                            stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True,
                                            env={"GOGC": GO_GC, **os.environ})
        except OSError as err:
            raise StoreError(f"cannot start etcd member {self.name}: {err}") from err
        finally:
            log_file.close()
        self.paused = False
        self.cluster.changed()

    async def stop(self, sig: int = signal.SIGTERM, grace: float = 10.0) -> None:
        """SIGTERM (a clean stop) or SIGKILL (a crash); waits for the process to exit, killing it
        after ``grace`` seconds (etcd syncs its WAL before it acknowledges: a kill loses nothing)."""
        proc = self.process
        if proc is None or proc.poll() is not None:
            return
        if self.paused:
            proc.send_signal(signal.SIGCONT)
            self.paused = False
        proc.send_signal(sig)
        deadline = time.monotonic() + grace
        while proc.poll() is None:
            if time.monotonic() > deadline:
                proc.kill()
                deadline += grace
            await asyncio.sleep(0.02)
        self.is_leader = False
        self.cluster.changed()

    async def kill(self) -> None:
        await self.stop(signal.SIGKILL)

    def pause(self) -> None:
        if self.running and not self.paused:
            assert self.process is not None
            self.process.send_signal(signal.SIGSTOP)
            self.paused = True
            self.cluster.changed()

    def resume(self) -> None:
        if self.running and self.paused:
            assert self.process is not None
            self.process.send_signal(signal.SIGCONT)
            self.paused = False
            self.cluster.changed()

    def slow_disk(self, seconds: float) -> None:
        if seconds:
            from kconsole.faults import FaultError

            raise FaultError(f"etcd member {self.name} is a real process: its disk cannot be slowed from here")


class PeerNetwork:
    """The loopback TCP proxies in front of each member's peer port, and which members are cut off.

    Each proxied connection is pumped by two threads with ``splice(2)`` (the kernel moves the bytes;
    the threads wait outside the GIL), so Raft's traffic costs kconsole's event loop nothing."""

    def __init__(self, cluster: LocalEtcd) -> None:
        self.cluster = cluster
        self.isolated: set[int] = set()
        self._listeners: list[socket.socket] = []
        self._links: set[tuple[int, int, socket.socket, socket.socket]] = set()
        self._lock = threading.Lock()

    async def start(self) -> None:
        self.open()

    def open(self) -> None:
        for m in self.cluster.members:
            listener = socket.create_server(("127.0.0.1", m.proxy_port), reuse_port=False)
            self._listeners.append(listener)
            threading.Thread(target=self._serve, args=(m, listener), daemon=True,
                             name=f"etcd-proxy-{m.name}").start()

    async def close(self) -> None:
        self.shut()

    def shut(self) -> None:
        for listener in self._listeners:
            _shutdown(listener)
            listener.close()
        self._listeners.clear()
        with self._lock:
            links = list(self._links)
        for *_, a, b in links:
            _shutdown(a)
            _shutdown(b)

    def isolate(self, member_id: int) -> None:
        """Cut ``member_id`` off: its peer connections close and new ones are refused, both ways."""
        if not self.cluster.proxied:
            from kconsole.faults import FaultError

            raise FaultError("these etcd members talk to each other directly: no proxy to cut")
        self.isolated.add(member_id)
        with self._lock:
            links = list(self._links)
        for src, dst, a, b in links:
            if src in self.isolated or dst in self.isolated:
                _shutdown(a)
                _shutdown(b)
        self.cluster.changed()

    def heal(self) -> None:
        self.isolated.clear()
        self.cluster.changed()

    def cut(self, src: int, dst: int) -> bool:
        return src in self.isolated or dst in self.isolated

    def _serve(self, member: LocalMember, listener: socket.socket) -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return  # shut
            threading.Thread(target=self._link, args=(member, conn), daemon=True).start()

    def _link(self, member: LocalMember, conn: socket.socket) -> None:
        up: socket.socket | None = None
        try:
            conn.settimeout(5.0)
            head = b""
            while b"\r\n\r\n" not in head and len(head) < HEAD_LIMIT:  # the request's headers, whole
                chunk = conn.recv(HEAD_LIMIT)
                if not chunk:
                    break
                head += chunk
            conn.settimeout(None)
            src = _server_from(head)
            if not head or self.cut(src, member.id):
                return
            up = socket.create_connection(("127.0.0.1", member.peer_port), timeout=5.0)
            up.settimeout(None)
            up.sendall(head)
            link = (src, member.id, conn, up)
            with self._lock:
                self._links.add(link)
            try:
                other = threading.Thread(target=_pump, args=(up, conn), daemon=True)
                other.start()
                _pump(conn, up)
                other.join()
            finally:
                with self._lock:
                    self._links.discard(link)
        except OSError:
            pass
        finally:
            conn.close()
            if up is not None:
                up.close()


def _shutdown(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _pump(src: socket.socket, dst: socket.socket) -> None:
    """Move bytes ``src`` -> ``dst`` until either side ends, then end both (the other pump too)."""
    r, w = os.pipe()
    try:
        while True:
            n = os.splice(src.fileno(), w, 1 << 16)
            if n == 0:
                break
            while n:
                n -= os.splice(r, dst.fileno(), n)
    except OSError:
        pass
    finally:
        os.close(r)
        os.close(w)
        _shutdown(src)
        _shutdown(dst)


def _server_from(head: bytes) -> int:
    """etcd's ``X-Server-From`` header (the sending member's ID, hex) in a request's first bytes."""
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"x-server-from":
            try:
                return int(value.strip(), 16)
            except ValueError:
                return 0
    return 0


class LocalEtcd:
    """N etcd members in ``folder``; :attr:`servers` and :attr:`tls` are what a client needs."""

    def __init__(self, folder: str | os.PathLike[str], *, members: int = 3, binary: str | None = None,
                 quota_bytes: int = DEFAULT_QUOTA_BYTES, proxied: bool = True) -> None:
        if not 1 <= members <= 7:
            raise ValueError(f"--members must be between 1 and 7, got {members}")
        self.folder = Path(folder).resolve()
        self.binary = find_binary(binary)
        self.quota_bytes = quota_bytes
        #: Peer traffic through the partition proxies.
        self.proxied = proxied
        self.heartbeat_ms, self.election_ms = HEARTBEAT_MS, ELECTION_MS
        self.folder.mkdir(parents=True, exist_ok=True)
        os.chmod(self.folder, 0o700)
        self.pki = ensure_pki(self.folder / "pki")
        ports = self._ports(members)
        self.members = [LocalMember(f"etcd-{i}", i, p["client"], p["peer"], p["proxy"], self.folder / f"etcd-{i}",
                                    self, quota_bytes=quota_bytes) for i, p in enumerate(ports)]
        self.network = PeerNetwork(self)
        self.on_change: list[Any] = []

    def _ports(self, members: int) -> list[dict[str, int]]:
        path = self.folder / "ports.json"
        if path.exists():
            saved = json.loads(path.read_text())
            if len(saved) != members:
                raise StoreError(f"{self.folder} holds a {len(saved)}-member etcd cluster, not {members}: "
                                 f"use --members {len(saved)} or another folder")
            return list(saved)
        ports = [{"client": free_port(), "peer": free_port(), "proxy": free_port()} for _ in range(members)]
        path.write_text(json.dumps(ports))
        return ports

    @property
    def servers(self) -> list[str]:
        return [m.endpoint for m in self.members]

    def tls_files(self) -> tuple[Path, Path, Path]:
        return self.pki.ca, self.pki.client_cert, self.pki.client_key

    def changed(self) -> None:
        for callback in self.on_change:
            callback()

    async def start(self) -> None:
        self.spawn()

    def spawn(self) -> None:
        """Every member's process, behind its proxy (no event loop needed: a test session's cluster)."""
        if self.proxied and not self.network._listeners:
            self.network.open()
        for m in self.members:
            m.spawn()

    def terminate(self) -> None:
        """Stop every process from outside an event loop (a test session's cluster)."""
        for m in self.members:
            if m.running:
                assert m.process is not None
                m.process.send_signal(signal.SIGCONT)
                m.process.terminate()
        for m in self.members:
            if m.process is not None:
                try:
                    m.process.wait(10)
                except subprocess.TimeoutExpired:
                    m.process.kill()
        self.network.shut()

    async def stop(self) -> None:
        """The followers at once, then the leader: a leader that stops first hands leadership over,
        and one stopped beside its followers waits for a hand-over that cannot happen."""
        await asyncio.gather(*(m.stop(grace=STOP_GRACE) for m in self.members if not m.is_leader))
        await asyncio.gather(*(m.stop(grace=STOP_GRACE) for m in self.members))
        await self.network.close()

    def flags(self) -> str:
        """The kube-apiserver-style flags that point at this cluster."""
        return (f"--etcd-servers {','.join(self.servers)} --etcd-cafile {self.pki.ca} "
                f"--etcd-certfile {self.pki.client_cert} --etcd-keyfile {self.pki.client_key}")
