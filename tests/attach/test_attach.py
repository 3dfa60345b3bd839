"""``kconsole attach`` over a served cluster in another process: the panels fill from the HTTPS
client alone, Scheduling from the scheduler's Events and etcd from /readyz and /metrics; writes
are refused without --allow-writes and, with it, each confirmation names the context."""

from __future__ import annotations

import subprocess
import sys

import pytest
from attach_env import eventually

from kconsole.api.types import StatusError
from kconsole.attached import AttachedCluster
from kconsole.faults import FaultError
from kconsole.tui import schedevents
from kconsole.tui.app import ConsoleApp


def rows(panel) -> list:
    return panel.table.rows


async def test_panels_fill_and_writes_are_refused(served) -> None:
    cluster = AttachedCluster(served.kubeconfig)
    app = ConsoleApp(cluster, readonly=True)
    async with app.run_test(size=(220, 70)) as pilot:
        await eventually(lambda: app.ready, "the console connects", pilot=pilot)
        await eventually(lambda: rows(app.leases) and rows(app.events_panel), "Leases and Events fill", pilot=pilot)
        await eventually(lambda: any("kube-system/kube-scheduler" in str(r.cells) for r in rows(app.leases))
                         and any("node leases" in str(r.cells) for r in rows(app.leases)),
                         "leader and node leases are listed", pilot=pilot)
        await eventually(lambda: any(r.cells[2] == "Unschedulable" and r.cells[4].endswith("/3")
                                     for r in rows(app.scheduling)),
                         "the FailedScheduling Event of shop/huge shows as an attempt on 3 nodes", pilot=pilot)
        await eventually(lambda: any(r.cells[2] == "Scheduled" for r in rows(app.scheduling)),
                         "Scheduled Events show", pilot=pilot)
        await eventually(lambda: rows(app.etcd) and rows(app.etcd)[0].cells[10] == "healthy",
                         "the etcd panel reads /readyz", pilot=pilot)
        assert "objects" in app.etcd.quorum_line()
        await eventually(lambda: app.model.node_counts() == (3, 3), "3 nodes Ready", pilot=pilot)

        app.resources.switch_kind("pods")
        await eventually(lambda: any("huge" in str(r.cells) for r in rows(app.resources)), "pods listed", pilot=pilot)
        app.set_focus(app.resources.table)
        await pilot.press("ctrl+d")
        await pilot.pause()
        assert "without --allow-writes" in app.status_line.message or any(
            "without --allow-writes" in str(n.message) for n in app._notifications)
        with pytest.raises(FaultError, match="read-only: attached to context kconsole without --allow-writes"):
            await cluster.faults.apply("cordon", "worker-1")
        node = await cluster.api_client().get("nodes", "worker-1")
        assert not (node.get("spec") or {}).get("unschedulable")


async def test_writes_with_allow_writes_name_the_context(served) -> None:
    cluster = AttachedCluster(served.kubeconfig, allow_writes=True)
    app = ConsoleApp(cluster)
    async with app.run_test(size=(220, 70)) as pilot:
        await eventually(lambda: app.ready, "the console connects", pilot=pilot)
        app.confirm_fault("taint", "worker-2")
        await pilot.pause()
        assert app.screen.question == "Apply taint to worker-2 on context kconsole?"
        await pilot.press("escape")
        client = cluster.api_client()
        fault = await cluster.faults.apply("taint", "worker-2")
        node = await client.get("nodes", "worker-2")
        assert {"key": "kconsole.dev/fault", "value": "taint", "effect": "NoSchedule"} in node["spec"]["taints"]
        await cluster.faults.heal(fault.id)
        node = await client.get("nodes", "worker-2")
        assert not [t for t in node["spec"].get("taints") or () if t.get("key") == "kconsole.dev/fault"]
        await cluster.faults.apply("scale-deployment", "shop/web", {"replicas": "1"})
        scale = await client.get("deployments", "web", "shop", subresource="scale")
        assert scale["spec"]["replicas"] == 1
        await cluster.faults.heal_all()
        scale = await client.get("deployments", "web", "shop", subresource="scale")
        assert scale["spec"]["replicas"] == 2
        await cluster.faults.apply("delete-scheduler-lease", "leader")

        async def lease_back() -> bool:
            try:
                lease = await client.get("leases", "kube-scheduler", "kube-system")
            except StatusError as err:
                assert err.code == 404
                return False
            return bool(lease["spec"].get("holderIdentity"))

        await eventually(lease_back, "a scheduler replica takes the Lease again")


def test_failed_scheduling_messages_parse_per_node_count() -> None:
    ev = {"reason": "FailedScheduling", "count": 4, "involvedObject": {"kind": "Pod", "namespace": "a", "name": "p"},
          "message": "0/5 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/"
                     "control-plane: , x: y}, 4 Insufficient cpu. preemption: 0/5 nodes are available: "
                     "5 No preemption victims found for incoming pod."}
    a = schedevents.attempt(ev)
    assert (a.result, a.attempts, a.feasible()) == ("Unschedulable", 4, "0/5")
    assert a.reasons == [(4, "Insufficient cpu"),
                         (1, "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: , x: y}")]
    assert a.preemption.startswith("0/5 nodes are available")
    ok = schedevents.attempt({"reason": "Scheduled", "involvedObject": {"kind": "Pod", "name": "p"},
                              "message": "Successfully assigned a/p to node-3"})
    assert (ok.result, ok.node) == ("Scheduled", "node-3")


def test_a_missing_context_is_one_line(served) -> None:
    out = subprocess.run([sys.executable, "-m", "kconsole", "attach", "--kubeconfig", str(served.kubeconfig),
                          "--context", "nope"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert "context 'nope' is not in the kubeconfig (have: kconsole)" in out.stderr
