"""pods/proxy and services/proxy through the real kubectl (``get --raw`` and ``kubectl proxy``) and the
Python client, and ``kubectl cp`` both ways into a simulated container's writable layer."""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from e2e_env import shutdown, vclock
from kconsole.clock import VirtualClock
from kconsole.cluster import Cluster, ClusterConfig
from test_e2e_exec import SLEEPER, kubectl, pod

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Cluster]:
    clock = VirtualClock()
    c = Cluster(ClusterConfig(http=True, port=0, data_dir=tmp_path_factory.mktemp("proxy"), manifests=None, nodes=2,
                              control_planes=1), clock=clock)
    task = asyncio.create_task(c.start())
    await clock.run_until(task.done, timeout=60, step=0.1)
    task.result()
    api = c.api_client()
    await api.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
                      "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}})
    await api.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "named"},
                      "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 8080,
                                                                        "targetPort": 80}]}})
    await api.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "empty"},
                      "spec": {"selector": {"app": "none"}, "ports": [{"port": 80}]}})
    await api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"},
                      "data": {"greeting.txt": "hello\n"}})
    for i in range(2):
        await api.create(pod(f"web-{i}", "nginx", {"app": "web"}, container={"ports": [{"containerPort": 80}]}))
    await api.create(pod("box", "busybox", container={
        **SLEEPER, "volumeMounts": [{"name": "cfg", "mountPath": "/etc/cfg"}]},
        volumes=[{"name": "cfg", "configMap": {"name": "settings"}}]))
    await api.create(pod("stuck", "busybox", container=SLEEPER, nodeSelector={"disk": "none"}))

    async def ready() -> bool:
        pods = await api.list_all("pods", "default")
        phases = {p["metadata"]["name"]: (p.get("status") or {}).get("phase") for p in pods}
        slices = await api.list_all("endpoints", "default")
        web = next((e for e in slices if e["metadata"]["name"] == "web"), {})
        ready_addresses = sum(len(s.get("addresses") or ()) for s in web.get("subsets") or ())
        return all(phases.get(n) == "Running" for n in ("web-0", "web-1", "box")) and ready_addresses == 2
    await clock.run_until(ready, timeout=120, step=1)
    yield c
    await shutdown(c)


async def test_service_proxy_reaches_an_endpoint(cluster: Cluster) -> None:
    code, out, err = await kubectl(cluster, "get", "--raw", "/api/v1/namespaces/default/services/web/proxy/")
    assert (code, err) == (0, "") and "<title>Welcome to nginx!</title>" in out
    code, out, _ = await kubectl(cluster, "get", "--raw", "/api/v1/namespaces/default/services/web:80/proxy/nope")
    assert code == 1
    for name in ("http:named:http", "named:8080"):
        code, out, _ = await kubectl(cluster, "get", "--raw", f"/api/v1/namespaces/default/services/{name}/proxy/")
        assert code == 0 and "Welcome to nginx!" in out
    logs = [(await kubectl(cluster, "logs", f"web-{i}"))[1] for i in range(2)]
    assert sum(log.count('"GET / HTTP/1.1" 200 615 "-" "kubectl/') for log in logs) == 3
    assert sum(log.count('"GET /nope HTTP/1.1" 404 ') for log in logs) == 1


async def test_pod_proxy(cluster: Cluster) -> None:
    code, out, _ = await kubectl(cluster, "get", "--raw", "/api/v1/namespaces/default/pods/web-0/proxy/index.html")
    assert code == 0 and "Welcome to nginx!" in out
    code, out, _ = await kubectl(cluster, "get", "--raw", "/api/v1/namespaces/default/pods/web-1:80/proxy/")
    assert code == 0 and "Welcome to nginx!" in out
    _, log, _ = await kubectl(cluster, "logs", "web-0")
    assert '"GET /index.html HTTP/1.1" 200 615' in log


@pytest.mark.parametrize(("path", "expected"), [
    ("services/named/proxy/", 'Error from server (ServiceUnavailable): no endpoints available for service "named"'),
    ("services/empty/proxy/", 'Error from server (ServiceUnavailable): no endpoints available for service "empty"'),
    ("services/web:8080/proxy/", 'Error from server (ServiceUnavailable): no service port 8080 found for service "web"'),
    ("services/nope/proxy/", 'Error from server (NotFound): endpoints "nope" not found'),
    ("services/nope:80/proxy/", 'Error from server (NotFound): services "nope" not found'),
    ("pods/nope/proxy/", 'Error from server (NotFound): pods "nope" not found'),
    ("pods/a:b:c:d/proxy/", 'Error from server (BadRequest): invalid pod request "a:b:c:d"'),
    ("pods/stuck/proxy/", "Error from server (BadRequest): address not allowed"),
    ("pods/box/proxy/", "Error from server (ServiceUnavailable): error trying to reach service: dial tcp {box}:80: "
                        "connect: connection refused"),
    ("pods/https:web-0:80/proxy/", "Error from server (ServiceUnavailable): error trying to reach service: http: "
                                   "server gave HTTP response to HTTPS client"),
    ("pods/web-0:81/proxy/", "Error from server (ServiceUnavailable): error trying to reach service: dial tcp "
                             "{web-0}:81: connect: connection refused"),
])
async def test_proxy_errors_are_upstreams(cluster: Cluster, path: str, expected: str) -> None:
    api = cluster.api_client()
    ips = {name: (await api.get("pods", name, "default"))["status"].get("podIP") for name in ("box", "web-0")}
    code, out, err = await kubectl(cluster, "get", "--raw", f"/api/v1/namespaces/default/{path}")
    assert (code, out, err) == (1, "", expected.format(**ips) + "\n")


async def test_proxy_is_authorized_on_the_subresource(cluster: Cluster) -> None:
    api = cluster.api_client()
    for user, role in (("viewer", "view"), ("editor", "edit")):
        await api.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                          "metadata": {"name": f"{user}-binding", "namespace": "default"},
                          "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
                          "subjects": [{"kind": "User", "name": user, "apiGroup": "rbac.authorization.k8s.io"}]})
    await vclock(cluster).run_until(lambda: True, timeout=1)
    code, _, err = await kubectl(cluster, "get", "--raw", "/api/v1/namespaces/default/services/web/proxy/",
                                 "--as", "viewer")
    assert code == 1 and err == ('Error from server (Forbidden): services "web" is forbidden: User "viewer" cannot '
                                 'get resource "services/proxy" in API group "" in the namespace "default"\n')
    code, out, _ = await kubectl(cluster, "get", "--raw", "/api/v1/namespaces/default/pods/web-0/proxy/",
                                 "--as", "editor")
    assert code == 0 and "Welcome to nginx!" in out


def _fetch(url: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, method=method)
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(request, timeout=20) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


async def test_kubectl_proxy_then_plain_http(cluster: Cluster) -> None:
    """``kubectl proxy`` then a browser or curl: every method passes through; the pod's server answers."""
    home = Path(str(cluster.kubeconfig_path)).parent
    proc = await asyncio.create_subprocess_exec(
        "kubectl", "proxy", "--port=0", env={"PATH": "/usr/bin:/bin", "HOME": str(home),
                                            "KUBECONFIG": str(cluster.kubeconfig_path)},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), 20)).decode()
        assert line.startswith("Starting to serve on 127.0.0.1:")
        base = f"http://127.0.0.1:{line.rsplit(':', 1)[1].strip()}/api/v1/namespaces/default/services/web/proxy"
        status, headers, body = await asyncio.to_thread(_fetch, base + "/")
        assert status == 200 and headers["Server"] == "nginx/1.27.3" and b"Welcome to nginx!" in body
        status, headers, _ = await asyncio.to_thread(_fetch, base)
        assert status == 301 and headers["Location"] == "/api/v1/namespaces/default/services/web/proxy/"
        status, _, body = await asyncio.to_thread(_fetch, base + "/", "POST")
        assert status == 405 and b"<title>405 Not Allowed</title>" in body
        status, headers, body = await asyncio.to_thread(_fetch, base + "/", "HEAD")
        assert (status, headers["Content-Length"], body) == (200, "615", b"")
    finally:
        proc.terminate()
        await proc.communicate()


def _python_proxy(cluster: Cluster) -> str:
    config = k8s.Configuration()
    k8s_config.load_kube_config(config_file=str(cluster.kubeconfig_path), client_configuration=config)
    core = k8s.CoreV1Api(k8s.ApiClient(config))
    return str(core.connect_get_namespaced_service_proxy_with_path("web", "default", "index.html"))


async def test_python_client_service_proxy(cluster: Cluster) -> None:
    assert "Welcome to nginx!" in await asyncio.to_thread(_python_proxy, cluster)


async def test_kubectl_cp_into_and_out_of_a_pod(cluster: Cluster, tmp_path: Path) -> None:
    local = tmp_path / "local.txt"
    local.write_text("copied in\n")
    code, out, err = await kubectl(cluster, "cp", str(local), "default/box:/tmp/x.txt")
    assert (code, out, err) == (0, "", "")
    assert await kubectl(cluster, "exec", "box", "--", "cat", "/tmp/x.txt") == (0, "copied in\n", "")
    code, out, _ = await kubectl(cluster, "cp", "default/box:/etc/hosts", str(tmp_path / "hosts"))
    assert code == 0 and out == "tar: removing leading '/' from member names\n"
    assert (tmp_path / "hosts").read_text().startswith("# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n")
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "a").write_text("A")
    (tree / "sub" / "b").write_text("B")
    assert (await kubectl(cluster, "cp", str(tree), "box:/tmp/tree"))[0] == 0
    code, out, _ = await kubectl(cluster, "exec", "box", "--", "sh", "-c", "ls /tmp/tree; cat /tmp/tree/sub/b")
    assert (code, out) == (0, "a  sub\nB")
    assert (await kubectl(cluster, "cp", "box:/tmp/tree", str(tmp_path / "back")))[0] == 0
    assert (tmp_path / "back" / "sub" / "b").read_text() == "B"


async def test_kubectl_cp_refusals(cluster: Cluster, tmp_path: Path) -> None:
    local = tmp_path / "f.txt"
    local.write_text("x")
    code, _, err = await kubectl(cluster, "cp", str(local), "box:/etc/cfg/f.txt")
    assert code == 1 and err == ("tar: can't open 'f.txt': Read-only file system\n"
                                 "command terminated with exit code 1\n")
    # kubectl's exit status here races its own reader of the (empty) archive against the exec's status
    _, out, err = await kubectl(cluster, "cp", "box:/nope", str(tmp_path / "nope"))
    assert "tar: /nope: No such file or directory\n" in out + err
    code, _, err = await kubectl(cluster, "exec", "-i", "box", "--", "tar", "xf", "-", stdin="not a tar archive\n")
    assert (code, err) == (1, "tar: invalid tar magic\ncommand terminated with exit code 1\n")


async def test_the_layer_has_a_cap(cluster: Cluster, tmp_path: Path) -> None:
    big = tmp_path / "big.bin"
    big.write_bytes(b"\0" * (33 * 1024 * 1024))
    code, _, err = await kubectl(cluster, "cp", str(big), "box:/tmp/big.bin", timeout=120)
    assert code == 1 and "tar: write error: No space left on device\n" in err
    assert (await kubectl(cluster, "exec", "box", "--", "rm", "-f", "/tmp/big.bin"))[0] == 0
    code, out, _ = await kubectl(cluster, "exec", "box", "--", "sh", "-c", "echo fits > /tmp/s; cat /tmp/s")
    assert (code, out) == (0, "fits\n")
