"""One ``kconsole serve`` per test module, a separate process on real HTTPS: the "real" cluster
that ``kconsole attach`` and ``kconsole import`` reach through its kubeconfig only.

A process is real I/O on a real clock: the waits are generous wall-clock bounds on conditions
(a test fails when one is not met within them), never speed assertions."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from attach_env import Served, read_until

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("served")
    (folder / "app.yaml").write_text(APP)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "kconsole", "serve", str(folder), "--port", "0", "--nodes", "2",
                             "--control-planes", "1", "--data-dir", str(folder / "data"), "--speed", "5"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=ROOT)
    try:
        out = read_until(proc, "press Ctrl-C", 120)
        assert "press Ctrl-C" in out, f"kconsole serve did not start:\n{out}"
        yield Served(proc, folder, folder / "data" / "kubeconfig")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


#: What the served cluster runs besides its addons: a Deployment, a pod no node can take (a
#: FailedScheduling Event to parse), a Service, a ConfigMap, a PDB and a PriorityClass.
APP = """\
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        resources: {requests: {cpu: 100m, memory: 64Mi}}
---
apiVersion: v1
kind: Pod
metadata: {name: huge, namespace: shop}
spec:
  containers:
  - name: big
    image: busybox:1.36
    resources: {requests: {cpu: "500"}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 80}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop}
data: {color: blue}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: shop}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: web}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: shop-high}
value: 1000
"""
