"""The kubelet's streaming endpoints: exec and attach into a running container.

``exec`` starts a process in the container's simulated environment (:mod:`kconsole.nodes.sandbox`)
running the shell's table of commands (:mod:`kconsole.nodes.shell`); ``attach`` joins the
container's main process: a shell with stdin (``kubectl run -it busybox -- sh``) reads what the
client types, anything else streams what it writes from now on. The refusals are the kubelet's and
containerd's, word for word: a pod it does not run is ``pod does not exist`` (404), a container that
does not run ``container not found ("x")`` (500), a program the image does not have containerd's
``executable file not found in $PATH``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from kconsole.client import ProxiedError, StatusError
from kconsole.nodes import sandbox, shell
from kconsole.nodes.logs import LogBuffer
from kconsole.nodes.network import ServerConnection
from kconsole.nodes.podworker import Container, PodWorker
from kconsole.nodes.shell import Machine, Streams
from kconsole.objects.podlog import LogOptions

if TYPE_CHECKING:
    from kconsole.nodes.kubelet import Kubelet

Read = Callable[[], Awaitable[bytes | None]]
Write = Callable[[int, bytes], Awaitable[None]]


def _exec_failed(exec_id: str, argv0: str) -> StatusError:
    return StatusError.internal(
        f'error executing command in container: failed to exec in container: failed to start exec "{exec_id}": '
        f"OCI runtime exec failed: exec failed: unable to start container process: exec: \"{argv0}\": "
        "executable file not found in $PATH: unknown")


class ExecProcess:
    """One ``kubectl exec`` (the API server's ExecStream)."""

    def __init__(self, kubelet: Kubelet, worker: PodWorker, container: Container, command: list[str],
                 tty: bool, stdin: bool) -> None:
        self.kubelet = kubelet
        self.worker = worker
        self.container = container
        self.command = list(command)
        self.tty = tty
        self.stdin = stdin
        self.size = (80, 24)
        self.exec_id = hashlib.sha256(f"{container.container_id}/{kubelet.clock.now()}/{command}".encode()).hexdigest()

    def resize(self, width: int, height: int) -> None:
        self.size = (width, height)

    async def run(self, read: Read, write: Write) -> int:
        machine = await build_machine(self.kubelet, self.worker, self.container)
        if machine is None or not shell.known(self.command[0], machine):
            raise _exec_failed(self.exec_id, self.command[0])

        async def out(data: bytes) -> None:
            await write(1, data)

        async def err(data: bytes) -> None:
            await write(1 if self.tty else 2, data)

        async def no_input() -> bytes | None:
            return None
        return await shell.run(machine, self.command, Streams(read if self.stdin else no_input, out, err), tty=self.tty)


class AttachProcess:
    """``kubectl attach`` (and ``run -it``): the container's own process."""

    def __init__(self, kubelet: Kubelet, worker: PodWorker, container: Container, tty: bool, stdin: bool) -> None:
        self.kubelet = kubelet
        self.worker = worker
        self.container = container
        self.command = [str(a) for a in (container.spec.get("command") or []) + (container.spec.get("args") or [])]
        self.tty = tty
        self.stdin = stdin

    def resize(self, width: int, height: int) -> None:
        return None

    async def run(self, read: Read, write: Write) -> int:
        c = self.container
        interactive = self.stdin and bool(c.spec.get("stdin")) and c.program.description.startswith("sh (stdin)")
        if interactive:
            machine = await build_machine(self.kubelet, self.worker, c)
            if machine is not None:
                async def out(data: bytes) -> None:
                    await write(1, data)
                code = await shell.Shell(machine).interactive(Streams(read, out, out), tty=self.tty)
                self.worker.exec_ended(c, code)
                return 0
        buf = c.log
        if buf is None:
            return 0
        return await _follow(buf, write)


async def _follow(buf: LogBuffer, write: Write) -> int:
    follower = buf.follow(LogOptions(follow=True, tail_lines=0))
    try:
        async for line in follower:
            await write(1, (line + "\n").encode())
    finally:
        await follower.close()
    return 0


async def build_machine(kubelet: Kubelet, worker: PodWorker, c: Container) -> Machine | None:
    """The container as a process in it sees it; None for an image with no shell or tools."""
    missing = sandbox.missing_commands(c.image)
    if missing is None:
        return None
    pod = worker.pod
    hostname, fqdn = sandbox.hostnames(pod)
    network = kubelet.network
    services = network.services.list() if network is not None else []
    client = kubelet.client
    assert client is not None
    builder = sandbox.Builder(client, pod, c.spec, kubelet.allocatable(), services, c.started_at)
    env = await builder.environment(hostname)
    files, read_only = await builder.files(hostname, fqdn, worker.ip)
    namespace = worker.namespace

    def resolve(name: str) -> tuple[str, list[str]] | None:
        if network is None or not network.dns_serving():
            return None
        return network.resolve(name, namespace)

    def http(address: str, port: int, path: str) -> shell.HttpAnswer:
        if network is None:
            return shell.HttpAnswer(error="timeout")
        if address in ("127.0.0.1", worker.ip):
            address = worker.ip
        return network.http(kubelet.name, worker.ip, address, port, path)

    return Machine(hostname=hostname, env=env, files=files, read_only=read_only, overlay=c.overlay, image=c.image,
                   now=kubelet.clock.now, sleep=kubelet.clock.sleep, resolve=resolve, http=http, missing=missing,
                   started=c.started_at or kubelet.clock.now(), pid1=" ".join(
                       [str(a) for a in (c.spec.get("command") or []) + (c.spec.get("args") or [])]) or c.image)


def _reach(kubelet: Kubelet, namespace: str, pod: str) -> Any:
    """The pod's worker on this kubelet, or what dialing its port 10250 or looking it up answers."""
    if not kubelet.connected:
        raise StatusError.internal(f'error dialing backend: dial tcp {kubelet.node_ip}:10250: connect: '
                                   "connection refused")
    try:
        return kubelet._worker(namespace, pod)
    except LookupError:
        raise ProxiedError(404, "pod does not exist") from None


def find(kubelet: Kubelet, namespace: str, pod: str, container: str) -> tuple[PodWorker, Container]:
    """The running container, or the kubelet's refusal."""
    worker = _reach(kubelet, namespace, pod)
    if not isinstance(worker, PodWorker):
        raise ProxiedError(500, f'container not found ("{container}")')
    c = worker.container(container)
    if c is None or c.status != "running":
        raise ProxiedError(500, f'container not found ("{container}")')
    return worker, c


class PortForwarder:
    """The kubelet's port-forward into one pod's network namespace (the API server's PortForwardStream)."""

    def __init__(self, kubelet: Kubelet, worker: PodWorker) -> None:
        self.kubelet = kubelet
        self.worker = worker
        self.sandbox = hashlib.sha256(f"sandbox/{worker.uid}".encode()).hexdigest()

    def connect(self, port: int) -> ServerConnection | str:
        """A connection to ``port`` on the pod's localhost, or the runtime's error when nothing listens."""
        network = self.kubelet.network
        pod = network.pods.get_by_name(self.worker.namespace, self.worker.name) if network is not None else None
        conn = network.connect(pod, port, "127.0.0.1") if network is not None and pod is not None else None
        if conn is not None:
            return conn
        netns = f"/var/run/netns/cni-{self.sandbox[:8]}-{self.sandbox[8:12]}-{self.sandbox[12:16]}-{self.sandbox[16:28]}"
        return (f"error forwarding port {port} to pod {self.sandbox}, uid : failed to execute portforward in network "
                f'namespace "{netns}": failed to connect to localhost:{port} inside namespace "{self.sandbox}", '
                f"IPv4: dial tcp4 127.0.0.1:{port}: connect: connection refused IPv6 dial tcp6 [::1]:{port}: "
                "connect: connection refused ")


def port_forwarder(kubelet: Kubelet, namespace: str, pod: str) -> PortForwarder:
    worker = _reach(kubelet, namespace, pod)
    if not isinstance(worker, PodWorker):
        raise ProxiedError(404, "pod does not exist")
    return PortForwarder(kubelet, worker)


def exec_process(kubelet: Kubelet, namespace: str, pod: str, container: str, command: list[str], *,
                 tty: bool, stdin: bool) -> ExecProcess:
    worker, c = find(kubelet, namespace, pod, container)
    return ExecProcess(kubelet, worker, c, command, tty, stdin)


def attach_process(kubelet: Kubelet, namespace: str, pod: str, container: str, *, tty: bool,
                   stdin: bool) -> AttachProcess:
    worker, c = find(kubelet, namespace, pod, container)
    return AttachProcess(kubelet, worker, c, tty, stdin)
