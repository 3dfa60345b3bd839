"""``--processes``: worker nodes' kubelets in separate OS processes over HTTPS with their own
credentials; ``process-kill`` (kill -9 of one worker) marks exactly its nodes NotReady, and healing
brings them back. Real processes on a real clock at a high speed: the waits are generous
wall-clock bounds on conditions, never measurements."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

from attach_env import eventually

from kconsole.cluster import Cluster, ClusterConfig
from kconsole.clock import RealClock
from kconsole.faults import FaultCatalog
from kconsole.objects.printers import parse_time


DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
              "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "web"}},
                       "template": {"metadata": {"labels": {"app": "web"}},
                                    "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}],
                                             "topologySpreadConstraints": [{
                                                 "maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                                                 "whenUnsatisfiable": "ScheduleAnyway",
                                                 "labelSelector": {"matchLabels": {"app": "web"}}}]}}}}


async def _eq(count, want: int) -> bool:
    return await count == want


def _ready(node: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (node.get("status") or {}).get("conditions") or ())


async def test_process_kill_takes_exactly_its_nodes(tmp_path: Path) -> None:
    config = ClusterConfig(nodes=4, control_planes=1, processes=2, port=0, data_dir=tmp_path / "data",
                           manifests=None, speed=30)
    cluster = Cluster(config, clock=RealClock(speed=30))
    await cluster.start()
    try:
        client = cluster.api_client()
        workers = cluster.workers
        assert [w.nodes for w in workers.workers] == [["worker-1", "worker-3"], ["worker-2", "worker-4"]]
        assert sorted(cluster.kubelets) == ["control-plane"], "only the control plane's kubelet is in-process"

        async def ready() -> dict[str, bool]:
            return {n["metadata"]["name"]: _ready(n) for n in await client.list_all("nodes")}

        async def all_ready() -> bool:
            r = await ready()
            return len(r) == 5 and all(r.values())

        await eventually(all_ready, "5 nodes Ready")
        node = await client.get("nodes", "worker-2")
        assert node["metadata"]["labels"]["kubernetes.io/hostname"] == "worker-2"
        await client.create(DEPLOYMENT)

        # The console's pause reaches the worker processes: their kubelets stop renewing too.
        cluster.clock.pause()
        paused_at = cluster.clock.now()
        await asyncio.sleep(4.0)  # 120 simulated seconds at speed 30: three Lease durations
        lease = await client.get("leases", "worker-2", "kube-node-lease")
        renewed = parse_time(lease["spec"]["renewTime"])
        assert renewed is not None and renewed <= paused_at + 5, "a worker kept its own time while paused"
        cluster.clock.resume()

        async def running_on(nodes: set[str]) -> int:
            pods = await client.list_all("pods", "default", label_selector="app=web")
            return sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Running"
                       and not p["metadata"].get("deletionTimestamp") and p["spec"].get("nodeName") in nodes)

        workers_all = {"worker-1", "worker-2", "worker-3", "worker-4"}
        await eventually(lambda: _eq(running_on(workers_all), 4), "4 replicas Running on the worker processes' nodes")

        catalog = cluster.faults or FaultCatalog(cluster)
        fault = await catalog.apply("process-kill", "worker-3")
        assert fault.target == "kubelet-worker-0"

        async def exactly_its_nodes_down() -> bool:
            r = await ready()
            return not r["worker-1"] and not r["worker-3"]

        await eventually(exactly_its_nodes_down, "worker-1 and worker-3 NotReady")
        r = await ready()
        assert r["worker-2"] and r["worker-4"] and r["control-plane"], r
        # The node failure's reaction: taint-based eviction, replacements on the surviving nodes.
        await eventually(lambda: _eq(running_on({"worker-2", "worker-4"}), 4),
                         "the lost nodes' pods replaced on worker-2 and worker-4", bound=180)
        await catalog.heal(fault.id)
        await eventually(all_ready, "the restarted process's nodes Ready again")

        # A worker that dies by itself (not the fault) is started again after the back-off.
        crashed = workers.workers[1]
        pid = crashed.process.pid
        os.kill(pid, signal.SIGKILL)
        await eventually(lambda: crashed.running and crashed.process.pid != pid and crashed.restarts == 1,
                         "the crashed worker is started again")
        await eventually(all_ready, "its nodes Ready")
    finally:
        await cluster.stop()
