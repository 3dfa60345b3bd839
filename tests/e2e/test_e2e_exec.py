"""kubectl exec and attach, and the Python client's stream(), into simulated containers of a composed
cluster: the shell's commands, the container's environment and files, DNS and Services through the
node's kube-proxy rules, exit codes over the WebSocket remotecommand protocol."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from e2e_env import running, shutdown, vclock
from kconsole.clock import VirtualClock
from kconsole.cluster import Cluster, ClusterConfig

pytestmark = pytest.mark.asyncio


async def kubectl(cluster: Cluster, *args: str, stdin: str | None = None, timeout: float = 30) -> tuple[int, str, str]:
    binary = shutil.which("kubectl")
    if binary is None:
        pytest.fail("kubectl is not on PATH: these tests drive the real kubectl 1.32")
    home = Path(str(cluster.kubeconfig_path)).parent
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "KUBECONFIG": str(cluster.kubeconfig_path),
           "KUBECACHEDIR": str(home / "kube-cache")}
    proc = await asyncio.create_subprocess_exec(
        binary, *args, stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env)
    out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin is not None else None), timeout)
    return proc.returncode or 0, out.decode(), err.decode()


def pod(name: str, image: str, labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "main", "image": image}
    if image.startswith("busybox"):
        container["command"] = ["sleep", "infinity"]
    container.update(spec.pop("container", {}))
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels or {}},
            "spec": {"containers": [container], **spec}}


@pytest.fixture
async def cluster(tmp_path: Path) -> Any:
    clock = VirtualClock()
    c = Cluster(ClusterConfig(http=True, port=0, data_dir=tmp_path, manifests=None, nodes=2, control_planes=1),
                clock=clock)
    task = asyncio.create_task(c.start())
    await clock.run_until(task.done, timeout=60, step=0.1)
    task.result()
    try:
        yield c
    finally:
        await shutdown(c)


async def test_exec(cluster: Cluster) -> None:
    client = cluster.api_client()
    clock = vclock(cluster)
    await client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"},
                         "data": {"MODE": "fast", "greeting.txt": "hello\n"}})
    await client.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
                         "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}})
    for i in range(2):
        await client.create(pod(f"web-{i}", "nginx", {"app": "web"}))
    await client.create(pod("box", "busybox", container={
        "env": [{"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "MODE"}}},
                {"name": "MY_NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
        "volumeMounts": [{"name": "cfg", "mountPath": "/etc/cfg"}]},
        volumes=[{"name": "cfg", "configMap": {"name": "settings"}}]))
    try:
        await clock.run_until(lambda: False, timeout=30, step=1)
    except TimeoutError:
        pass
    print(await running(cluster, "default", ""))
    code, out, err = await kubectl(cluster, "exec", "box", "--", "sh", "-c",
                                   "echo $HOSTNAME; cat /etc/resolv.conf; exit 3")
    print(code, out, err)
    code, out, err = await kubectl(cluster, "exec", "box", "--", "sh", "-c",
                                   "env; ls /etc/cfg; cat /etc/cfg/greeting.txt; nslookup kubernetes.default; wget -qO- web")
    print(code, out, err)
    code, out, err = await kubectl(cluster, "exec", "-i", "box", "--", "sh", stdin="echo from stdin\ncat /etc/hosts\nexit 5\n")
    print(code, out, err)
    code, out, err = await kubectl(cluster, "exec", "web-0", "--", "curl", "-sv", "web")
    print(code, out, err)
    code, out, err = await kubectl(cluster, "exec", "web-0", "-c", "nope", "--", "ls")
    print(code, out, err)
    code, out, err = await kubectl(cluster, "exec", "web-0", "--", "foo")
    print(code, out, err)
    assert 0
