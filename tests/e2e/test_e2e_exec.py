"""kubectl exec and attach, and the Python client's stream(), into simulated containers of a composed
cluster: the shell's commands, the container's environment and files, DNS and Services through the
node's kube-proxy rules, exit codes over the WebSocket remotecommand protocol."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import pty
import select
import shutil
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.stream import portforward, stream
from kubernetes.stream.ws_client import ERROR_CHANNEL

from e2e_env import shutdown, vclock
from kconsole.api.types import UserInfo
from kconsole.clock import VirtualClock
from kconsole.cluster import Cluster, ClusterConfig
from kconsole.kubeconfig import PKI, kubeconfig_text

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def kubectl(cluster: Cluster, *args: str, stdin: str | None = None, kubeconfig: Path | None = None,
                  timeout: float = 30) -> tuple[int, str, str]:
    binary = shutil.which("kubectl")
    if binary is None:
        pytest.fail("kubectl is not on PATH: these tests drive the real kubectl 1.32")
    home = Path(str(cluster.kubeconfig_path)).parent
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home),
           "KUBECONFIG": str(kubeconfig or cluster.kubeconfig_path), "KUBECACHEDIR": str(home / "kube-cache")}
    proc = await asyncio.create_subprocess_exec(
        binary, *args, stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env)
    out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin is not None else None), timeout)
    return proc.returncode or 0, out.decode(), err.decode()


def pod(name: str, image: str, labels: dict[str, str] | None = None, container: dict[str, Any] | None = None,
        **spec: Any) -> dict[str, Any]:
    main: dict[str, Any] = {"name": "main", "image": image, **(container or {})}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels or {}},
            "spec": {"containers": [main], **spec}}


SLEEPER = {"command": ["sleep", "infinity"]}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Cluster]:
    clock = VirtualClock()
    c = Cluster(ClusterConfig(http=True, port=0, data_dir=tmp_path_factory.mktemp("exec"), manifests=None, nodes=2,
                              control_planes=1), clock=clock)
    task = asyncio.create_task(c.start())
    await clock.run_until(task.done, timeout=60, step=0.1)
    task.result()
    api = c.api_client()
    await api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"},
                      "data": {"MODE": "fast", "greeting.txt": "hello\n"}})
    await api.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds"},
                      "stringData": {"password": "s3cret"}})
    await api.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
                      "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80}]}})
    await api.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "empty"},
                      "spec": {"selector": {"app": "none"}, "ports": [{"port": 80}]}})
    await api.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web-headless"},
                      "spec": {"clusterIP": "None", "selector": {"app": "web"}, "ports": [{"port": 80}]}})
    for i in range(2):
        await api.create(pod(f"web-{i}", "nginx", {"app": "web"}))
    await api.create(pod("box", "busybox", container={
        **SLEEPER,
        "env": [{"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "MODE"}}},
                {"name": "MY_NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
                {"name": "GREETING", "value": "mode=$(MODE)"}],
        "envFrom": [{"prefix": "S_", "secretRef": {"name": "creds"}}],
        "volumeMounts": [{"name": "cfg", "mountPath": "/etc/cfg"}, {"name": "info", "mountPath": "/etc/podinfo"}]},
        volumes=[{"name": "cfg", "configMap": {"name": "settings", "items": [{"key": "greeting.txt",
                                                                             "path": "hello.txt"}]}},
                 {"name": "info", "downwardAPI": {"items": [{"path": "labels",
                                                             "fieldRef": {"fieldPath": "metadata.labels"}}]}}]))
    await api.create(pod("shell", "busybox", container={"stdin": True}))
    await api.create(pod("stuck", "busybox", container=SLEEPER, nodeSelector={"disk": "none"}))

    async def ready() -> bool:
        pods = await api.list_all("pods", "default")
        phases = {p["metadata"]["name"]: (p.get("status") or {}).get("phase") for p in pods}
        return all(phases.get(n) == "Running" for n in ("web-0", "web-1", "box", "shell"))
    await clock.run_until(ready, timeout=120, step=1)
    yield c
    await shutdown(c)


async def test_exec_output_and_exit_code(cluster: Cluster) -> None:
    code, out, err = await kubectl(cluster, "exec", "box", "--", "sh", "-c",
                                   "echo $HOSTNAME; cat /etc/resolv.conf; exit 3")
    assert code == 3
    assert out == ("box\nsearch default.svc.cluster.local svc.cluster.local cluster.local\n"
                   "nameserver 10.96.0.10\noptions ndots:5\n")
    assert err == "command terminated with exit code 3\n"
    code, out, err = await kubectl(cluster, "exec", "box", "--", "sh", "-c", "false && echo no; true || echo no; "
                                   "nosuch; echo status=$?")
    assert (code, out, err) == (0, "status=127\n", "sh: nosuch: not found\n")


async def test_exec_stdin(cluster: Cluster) -> None:
    code, out, _ = await kubectl(cluster, "exec", "-i", "box", "--", "sh",
                                 stdin="echo from stdin\nhostname\nexit 5\n")
    assert (code, out) == (5, "from stdin\nbox\n")
    code, out, _ = await kubectl(cluster, "exec", "-i", "box", "--", "cat", stdin="piped\ntext\n")
    assert (code, out) == (0, "piped\ntext\n")


async def test_exec_environment_and_files(cluster: Cluster) -> None:
    code, out, _ = await kubectl(cluster, "exec", "box", "--", "env")
    env = dict(line.split("=", 1) for line in out.splitlines())
    assert code == 0
    assert env["MODE"] == "fast" and env["GREETING"] == "mode=fast" and env["S_password"] == "s3cret"
    assert env["MY_NODE"] == (await cluster.api_client().get("pods", "box", "default"))["spec"]["nodeName"]
    web = await cluster.api_client().get("services", "web", "default")
    ip = web["spec"]["clusterIP"]
    assert env["WEB_SERVICE_HOST"] == ip and env["WEB_SERVICE_PORT"] == "80"
    assert env["WEB_SERVICE_PORT_HTTP"] == "80" and env["WEB_PORT_80_TCP"] == f"tcp://{ip}:80"
    assert env["KUBERNETES_SERVICE_HOST"] == "10.96.0.1" and env["HOSTNAME"] == "box"
    code, out, _ = await kubectl(cluster, "exec", "box", "--", "sh", "-c",
                                 "ls /etc/cfg; cat /etc/cfg/hello.txt /etc/podinfo/labels; echo; "
                                 "echo x > /etc/cfg/new")
    assert code == 1
    assert out == "hello.txt\nhello\n\n"
    code, out, _ = await kubectl(cluster, "exec", "box", "--", "sh", "-c",
                                 "ls /var/run/secrets/kubernetes.io/serviceaccount; "
                                 "cat /var/run/secrets/kubernetes.io/serviceaccount/namespace")
    assert (code, out) == (0, "ca.crt  namespace  token\ndefault")


async def test_exec_nslookup(cluster: Cluster) -> None:
    code, out, _ = await kubectl(cluster, "exec", "box", "--", "nslookup", "kubernetes.default")
    assert code == 0
    assert out == ("Server:\t\t10.96.0.10\nAddress:\t10.96.0.10:53\n\n"
                   "Name:\tkubernetes.default.svc.cluster.local\nAddress: 10.96.0.1\n\n")
    code, out, _ = await kubectl(cluster, "exec", "box", "--", "nslookup", "web-headless")
    ips = sorted(p["status"]["podIP"] for p in await cluster.api_client().list_all("pods", "default", label_selector="app=web"))
    assert code == 0 and [ln.split()[-1] for ln in out.splitlines() if ln.startswith("Address: ")] == ips
    code, out, _ = await kubectl(cluster, "exec", "box", "--", "nslookup", "nosuch")
    assert code == 1 and "** server can't find nosuch: NXDOMAIN" in out


async def test_exec_curl_through_the_service(cluster: Cluster) -> None:
    code, out, err = await kubectl(cluster, "exec", "web-0", "--", "curl", "-sv", "http://web")
    assert code == 0 and "<title>Welcome to nginx!</title>" in out
    chosen = next(ln for ln in err.splitlines() if "kube-proxy" in ln)
    assert "(Service default/web)" in chosen and "one of 2 endpoints" in chosen
    target = chosen.rsplit("(pod default/", 1)[1].rstrip(")")
    _, log, _ = await kubectl(cluster, "logs", target)
    assert '"GET / HTTP/1.1" 200 615 "-" "curl/7.88.1"' in log
    code, out, err = await kubectl(cluster, "exec", "box", "--", "wget", "-qO-", "web")
    assert code == 0 and "Welcome to nginx!" in out
    code, _, err = await kubectl(cluster, "exec", "web-0", "--", "curl", "-s", "-S", "empty")
    assert code == 7 and err.startswith("curl: (7) Failed to connect to empty port 80")
    code, _, err = await kubectl(cluster, "exec", "box", "--", "sh", "-c", "curl web")
    assert (code, err) == (127, "sh: curl: not found\ncommand terminated with exit code 127\n")


async def test_exec_refusals(cluster: Cluster) -> None:
    code, _, err = await kubectl(cluster, "exec", "web-0", "-c", "nope", "--", "ls")
    assert code == 1 and err == "Error from server (BadRequest): container nope is not valid for pod web-0\n"
    code, _, err = await kubectl(cluster, "exec", "stuck", "--", "ls")
    assert code == 1 and err == "Error from server (BadRequest): pod stuck does not have a host assigned\n"
    code, _, err = await kubectl(cluster, "exec", "web-0", "--", "foo")
    assert code == 1 and 'exec: "foo": executable file not found in $PATH: unknown' in err
    assert err.startswith("error: Internal error occurred: error executing command in container: failed to exec")
    api = cluster.api_client()
    await api.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                      "metadata": {"name": "pod-reader", "namespace": "default"},
                      "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]})
    await api.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                      "metadata": {"name": "bob-reads", "namespace": "default"},
                      "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"},
                      "subjects": [{"kind": "User", "name": "bob", "apiGroup": "rbac.authorization.k8s.io"}]})
    await vclock(cluster).run_until(lambda: True, timeout=1)
    token = cluster.api.tokens.issue(UserInfo("bob"))
    assert cluster.http is not None
    bob = Path(str(cluster.kubeconfig_path)).parent / "kubeconfig-bob"
    bob.write_text(kubeconfig_text(cluster.http.url, token, PKI(cluster.http.data_dir), client_cert=False))
    code, _, err = await kubectl(cluster, "exec", "box", "--", "ls", kubeconfig=bob)
    assert code == 1 and err == ('Error from server (Forbidden): pods "box" is forbidden: User "bob" cannot create '
                                 'resource "pods/exec" in API group "" in the namespace "default"\n')


async def test_exec_sleep_runs_on_the_simulated_clock(cluster: Cluster) -> None:
    kubelet = next(k for k in cluster.kubelets.values() if any(k2.endswith("/box") for k2 in k.pods))
    process = kubelet.exec("default", "box", "main", ["sh", "-c", "date +%s; sleep 30; date +%s"])
    written: list[bytes] = []

    async def read() -> bytes | None:
        return None

    async def write(channel: int, data: bytes) -> None:
        written.append(data)
    task = asyncio.create_task(process.run(read, write))
    await vclock(cluster).run_until(task.done, timeout=60, step=5)
    first, second = (int(x) for x in b"".join(written).split())
    assert task.result() == 0 and second - first == 30


async def test_attach_to_a_shell_with_stdin(cluster: Cluster) -> None:
    code, out, _ = await kubectl(cluster, "attach", "-i", "shell", stdin="echo attached\nexit 2\n")
    assert code == 0 and "attached\n" in out
    clock = vclock(cluster)

    async def exited() -> bool:
        got = await cluster.api_client().get("pods", "shell", "default")
        statuses = (got.get("status") or {}).get("containerStatuses") or []
        return any((s.get("lastState") or {}).get("terminated", {}).get("exitCode") == 2 for s in statuses)
    await clock.run_until(exited, timeout=60, step=1)


def _core(cluster: Cluster) -> k8s.CoreV1Api:
    cfg = k8s.Configuration()
    k8s_config.load_kube_config(config_file=str(cluster.kubeconfig_path), client_configuration=cfg)
    return k8s.CoreV1Api(k8s.ApiClient(cfg))


def _interactive(core: k8s.CoreV1Api) -> tuple[str, int | None]:
    resp = stream(core.connect_get_namespaced_pod_exec, "box", "default", command=["sh"], stdin=True, stdout=True,
                  stderr=True, tty=False, _preload_content=False)
    resp.write_stdin("echo $MODE\nexit 4\n")
    out = ""
    while resp.is_open():
        resp.update(timeout=5)
        out += resp.read_stdout()
    return out, resp.returncode


async def test_python_client_stream(cluster: Cluster) -> None:
    core = _core(cluster)
    out = await asyncio.to_thread(stream, core.connect_get_namespaced_pod_exec, "box", "default",
                                  command=["sh", "-c", "echo $HOSTNAME; hostname"], stderr=True, stdin=False,
                                  stdout=True, tty=False)
    assert out == "box\nbox\n"
    text, code = await asyncio.to_thread(_interactive, core)
    assert (text, code) == ("fast\n", 4)


def _terminal(core: k8s.CoreV1Api) -> tuple[str, int | None]:
    resp = stream(core.connect_get_namespaced_pod_exec, "box", "default", command=["sh"], stdin=True, stdout=True,
                  stderr=False, tty=True, _preload_content=False)
    resp.write_stdin("echo hi\r")
    resp.write_stdin("exit 6\r")
    out = ""
    while resp.is_open():
        resp.update(timeout=5)
        out += resp.read_stdout()
    return out, resp.returncode


async def test_python_client_terminal(cluster: Cluster) -> None:
    out, code = await asyncio.to_thread(_terminal, _core(cluster))
    assert (out, code) == ("# echo hi\r\nhi\r\n# exit 6\r\n", 6)


def _kubectl_on_a_terminal(cluster: Cluster, lines: list[bytes]) -> tuple[int, bytes]:
    """``kubectl exec -it box -- sh`` with its stdin and stdout on a pseudo-terminal."""
    binary = shutil.which("kubectl") or "kubectl"
    home = Path(str(cluster.kubeconfig_path)).parent
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "KUBECONFIG": str(cluster.kubeconfig_path),
           "KUBECACHEDIR": str(home / "kube-cache"), "TERM": "dumb"}
    leader, follower = pty.openpty()
    proc = subprocess.Popen([binary, "exec", "-it", "box", "--", "sh"], stdin=follower, stdout=follower,
                            stderr=follower, env=env, close_fds=True)
    os.close(follower)
    seen = b""
    pending = list(lines)
    deadline = time.monotonic() + 30
    while proc.poll() is None and time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                seen += os.read(leader, 4096)
            except OSError:
                break
        if pending and seen.endswith(b"# "):
            os.write(leader, pending.pop(0))
    proc.wait(timeout=10)
    os.close(leader)
    return proc.returncode, seen


async def test_kubectl_exec_on_a_terminal(cluster: Cluster) -> None:
    code, seen = await asyncio.to_thread(_kubectl_on_a_terminal, cluster, [b"echo $MODE\r", b"exit 9\r"])
    assert code == 9
    assert b"# echo $MODE\r\nfast\r\n# exit 9\r\n" in seen


async def _get(port: int) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    await writer.drain()
    data = await asyncio.wait_for(reader.read(), 20)
    writer.close()
    return data


async def _port_forward(cluster: Cluster, target: str,
                        websockets: bool = True) -> tuple[asyncio.subprocess.Process, int]:
    binary = shutil.which("kubectl") or "kubectl"
    home = Path(str(cluster.kubeconfig_path)).parent
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "KUBECONFIG": str(cluster.kubeconfig_path),
           "KUBECACHEDIR": str(home / "kube-cache"), "KUBECTL_PORT_FORWARD_WEBSOCKETS": str(websockets).lower()}
    proc = await asyncio.create_subprocess_exec(binary, "port-forward", "pod/web-0", f":{target}", "--address",
                                                "127.0.0.1", stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE, env=env)
    assert proc.stdout is not None
    line = (await asyncio.wait_for(proc.stdout.readline(), 20)).decode()
    assert line.startswith("Forwarding from 127.0.0.1:") and line.endswith(f" -> {target}\n")
    return proc, int(line.split("127.0.0.1:")[1].split()[0])


@pytest.mark.parametrize("websockets", [True, False], ids=["websocket", "spdy"])
async def test_kubectl_port_forward(cluster: Cluster, websockets: bool) -> None:
    proc, local = await _port_forward(cluster, "80", websockets)
    try:
        for _ in range(2):
            answer = await _get(local)
            assert answer.startswith(b"HTTP/1.1 200 OK\r\n") and b"<title>Welcome to nginx!</title>" in answer
    finally:
        proc.terminate()
        await proc.communicate()
    _, log, _ = await kubectl(cluster, "logs", "web-0")
    assert '127.0.0.1 - - [' in log and '"GET / HTTP/1.1" 200 615 "-" "-" "-"' in log
    proc, local = await _port_forward(cluster, "81", websockets)
    try:
        assert await _get(local) == b""
    finally:
        proc.terminate()
        _, err = await proc.communicate()
    assert b"error forwarding port 81 to pod " in err
    assert b"dial tcp4 127.0.0.1:81: connect: connection refused" in err


def _python_port_forward(core: k8s.CoreV1Api) -> bytes:
    forward = portforward(core.connect_get_namespaced_pod_portforward, "web-1", "default", ports="80")
    sock = forward.socket(80)
    sock.setblocking(True)
    sock.settimeout(20)
    sock.sendall(b"GET /missing HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    sock.close()
    return data


async def test_python_client_port_forward(cluster: Cluster) -> None:
    answer = await asyncio.to_thread(_python_port_forward, _core(cluster))
    assert answer.startswith(b"HTTP/1.1 404 Not Found\r\n") and b"<center><h1>404 Not Found</h1></center>" in answer


async def test_kubectl_falls_back_to_spdy(cluster: Cluster) -> None:
    binary = shutil.which("kubectl") or "kubectl"
    home = Path(str(cluster.kubeconfig_path)).parent
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "KUBECONFIG": str(cluster.kubeconfig_path),
           "KUBECACHEDIR": str(home / "kube-cache"), "KUBECTL_REMOTE_COMMAND_WEBSOCKETS": "false"}
    proc = await asyncio.create_subprocess_exec(binary, "exec", "-i", "box", "--", "sh", "-c", "cat; echo $MODE; exit 4",
                                                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE, env=env)
    out, err = await asyncio.wait_for(proc.communicate(b"through spdy\n"), 30)
    assert (proc.returncode, out, err) == (4, b"through spdy\nfast\n", b"command terminated with exit code 4\n")


def _exit_codes(core: k8s.CoreV1Api) -> list[int | None]:
    """The Python client's own e2e test_exit_code, against the box pod."""
    codes = []
    for command in (["false"], ["/bin/sh", "-c", "sleep 1; exit 3"], ["true"], ["/bin/sh", "-c", "ls /"]):
        client = stream(core.connect_get_namespaced_pod_exec, "box", "default", command=command, stderr=True,
                        stdin=False, stdout=True, tty=False, _preload_content=False)
        assert client.returncode is None
        client.run_forever(timeout=10)
        codes.append(client.returncode)
    return codes


async def test_python_client_exit_codes(cluster: Cluster) -> None:
    clock = vclock(cluster)
    job = asyncio.ensure_future(asyncio.to_thread(_exit_codes, _core(cluster)))
    while not job.done():  # the client runs in real time; `sleep 1` in the pod waits for simulated time
        await clock.advance(0.25)
        await asyncio.wait({job}, timeout=0.02)
    assert job.result() == [1, 3, 0, 0]


def _urlopen_through_port_forward(core: k8s.CoreV1Api) -> tuple[int, bytes]:
    """The Python client's own e2e test_portforward_http: urllib over a port-forwarded socket."""
    import socket
    import urllib.request

    original = socket.create_connection

    def create_connection(address: Any, *args: Any, **kwargs: Any) -> Any:
        parts = str(address[0]).split(".")
        if len(parts) != 3 or parts[2] != "kubernetes":
            return original(address, *args, **kwargs)
        forward = portforward(core.connect_get_namespaced_pod_portforward, parts[0], parts[1], ports=str(address[1]))
        return forward.socket(address[1])
    socket.create_connection = create_connection  # type: ignore[assignment]
    try:
        with urllib.request.urlopen("http://web-0.default.kubernetes/", timeout=20) as response:
            return response.status, response.read()
    finally:
        socket.create_connection = original  # type: ignore[assignment]


async def test_python_client_urllib_through_port_forward(cluster: Cluster) -> None:
    status, body = await asyncio.to_thread(_urlopen_through_port_forward, _core(cluster))
    assert status == 200 and b"<title>Welcome to nginx!</title>" in body


def _pod_apis_exec(core: k8s.CoreV1Api) -> None:
    """The exec half of the Python client's own e2e test_pod_apis, against the box pod (commands as lists:
    the installed client's typed signature refuses the strings the original passes)."""
    out = stream(core.connect_get_namespaced_pod_exec, "box", "default",
                 command=["/bin/sh", "-c", "for i in $(seq 1 3); do date; done"], stderr=False, stdin=False,
                 stdout=True, tty=False)
    assert len(out.splitlines()) == 3
    out = stream(core.connect_post_namespaced_pod_exec, "box", "default", command=["uptime"], stderr=False,
                 stdin=False, stdout=True, tty=False)
    assert len(out.splitlines()) == 1
    packed = stream(core.connect_post_namespaced_pod_exec, "box", "default",
                    command=["/bin/sh", "-c", 'echo -n "This is a test string" | gzip'], stderr=False, stdin=False,
                    stdout=True, tty=False, binary=True)
    assert gzip.decompress(packed) == b"This is a test string"
    resp = stream(core.connect_post_namespaced_pod_exec, "box", "default", command=["/bin/sh"], stderr=True,
                  stdin=True, stdout=True, tty=False, _preload_content=False)
    resp.write_stdin("echo test string 1\n")
    assert resp.readline_stdout(timeout=5) == "test string 1"
    assert not resp.peek_stderr()
    resp.write_stdin("echo test string 2 >&2\n")
    assert resp.readline_stderr(timeout=5) == "test string 2"
    assert not resp.peek_stdout()
    resp.write_stdin("exit\n")
    resp.update(timeout=5)
    line = ""
    for _ in range(10):
        line = resp.read_channel(ERROR_CHANNEL)
        if line:
            break
        resp.update(timeout=1)
    assert json.loads(line)["status"] == "Success"
    resp.update(timeout=5)
    assert not resp.is_open()


async def test_python_client_pod_apis_exec(cluster: Cluster) -> None:
    await asyncio.to_thread(_pod_apis_exec, _core(cluster))


def _only_requested_streams(core: k8s.CoreV1Api, stdout: bool) -> tuple[str, str]:
    resp = stream(core.connect_get_namespaced_pod_exec, "box", "default", command=["sh", "-c", "echo out; echo err >&2"],
                  stdin=False, stdout=stdout, stderr=not stdout, tty=False, _preload_content=False)
    out = err = ""
    while resp.is_open():
        resp.update(timeout=5)
        out += resp.read_stdout()
        err += resp.read_stderr()
    return out, err


async def test_exec_opens_only_the_requested_streams(cluster: Cluster) -> None:
    """As the kubelet, a stream the request did not ask for is discarded, not sent."""
    core = _core(cluster)
    assert await asyncio.to_thread(_only_requested_streams, core, True) == ("out\n", "")
    assert await asyncio.to_thread(_only_requested_streams, core, False) == ("", "err\n")
