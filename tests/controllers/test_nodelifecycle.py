"""Node lifecycle and taint-based eviction: a node whose Lease stops being renewed goes Unknown
about 50 s later, gets tainted, and its pods leave as their tolerations run out."""

from __future__ import annotations

from typing import Any

from ctrl_env import Ctrl, ctrl, node, pod  # noqa: F401 - ctrl is the fixture

from kconsole.objects.meta import get_condition, parse_time

NODES = ("node-lifecycle-controller", "taint-eviction-controller")
UNREACHABLE = "node.kubernetes.io/unreachable"
#: Tolerates nothing real (value mismatch) yet keeps the admission from adding the 300 s defaults.
NO_TOLERATION = [{"key": UNREACHABLE, "operator": "Equal", "value": "never", "effect": "NoExecute"},
                 {"key": "node.kubernetes.io/not-ready", "operator": "Equal", "value": "never", "effect": "NoExecute"}]


async def ready_of(ctrl: Ctrl, name: str) -> dict[str, Any]:
    return get_condition((await ctrl.admin.get("nodes", name, None))["status"], "Ready") or {}


async def taints(ctrl: Ctrl, name: str) -> dict[tuple[str, str], dict[str, Any]]:
    got = await ctrl.admin.get("nodes", name, None)
    return {(t["key"], t["effect"]): t for t in got["spec"].get("taints", [])}


async def cluster(ctrl: Ctrl, *names: str, zone: str = "z1") -> Any:
    for n in names:
        await ctrl.admin.create(node(n, zone=zone))
    stop = ctrl.heartbeat(*names)
    await ctrl.clock.advance(1)
    return stop


async def test_lost_node_goes_unknown_then_its_pods_are_evicted_as_tolerations_run_out(ctrl: Ctrl) -> None:
    stop = await cluster(ctrl, "n1", "n2", "n3")
    await ctrl.admin.create(pod("default-300", node_name="n1", grace=30))
    await ctrl.admin.create(pod("no-toleration", node_name="n1", tolerations=NO_TOLERATION, grace=30))
    await ctrl.admin.create(pod("forever", node_name="n1", tolerations=[{"operator": "Exists"}], grace=30))
    await ctrl.admin.create(pod("healthy-node", node_name="n2"))
    for name in ("default-300", "no-toleration", "forever", "healthy-node"):
        await ctrl.set_pod_status(name, ip="10.0.0.1", ready=True)
    await ctrl.manager(*NODES)
    await ctrl.clock.advance(30)

    stop("n1")
    died = ctrl.clock.now()
    await ctrl.wait(lambda: _ready_is(ctrl, "n1", "Unknown"), timeout=90, step=1)
    unknown_after = ctrl.clock.now() - died
    assert 40 <= unknown_after <= 60, unknown_after  # 50 s grace, 10 s renewals, 5 s monitor period
    cond = await ready_of(ctrl, "n1")
    assert cond["reason"] == "NodeStatusUnknown"
    assert cond["message"] == "Kubelet stopped posting node status."
    assert (await ready_of(ctrl, "n2"))["status"] == "True"

    await ctrl.clock.advance(1)
    t = await taints(ctrl, "n1")
    assert (UNREACHABLE, "NoSchedule") in t and (UNREACHABLE, "NoExecute") in t
    tainted_at = parse_time(t[(UNREACHABLE, "NoExecute")]["timeAdded"])
    assert not await taints(ctrl, "n2")

    node_events = await ctrl.events("NodeNotReady", "n1")
    assert [(e["source"]["component"], e["message"]) for e in node_events] == [
        ("node-controller", "Node n1 status is now: NodeNotReady")]
    for name in ("default-300", "forever"):
        p = await ctrl.admin.get("pods", name, "default")
        assert get_condition(p["status"], "Ready")["status"] == "False"
        [ev] = await ctrl.events("NodeNotReady", name)
        assert (ev["type"], ev["message"], ev["source"]["component"]) == ("Warning", "Node is not ready",
                                                                          "node-controller")

    # No matching toleration: out at once.
    gone = await ctrl.admin.get("pods", "no-toleration", "default")
    assert gone["metadata"].get("deletionTimestamp")
    assert get_condition(gone["status"], "DisruptionTarget")["reason"] == "DeletionByTaintManager"

    # The default 300 s toleration: out about 300 s after the taint, not before.
    await ctrl.clock.advance(tainted_at + 290 - ctrl.clock.now())
    assert not (await ctrl.admin.get("pods", "default-300", "default"))["metadata"].get("deletionTimestamp")
    await ctrl.wait(lambda: _being_deleted(ctrl, "default-300"), timeout=20, step=1)
    assert 299 <= ctrl.clock.now() - tainted_at <= 302
    [ev] = await ctrl.events("TaintManagerEviction", "default-300")
    assert ev["message"] == "Marking for deletion Pod default/default-300"
    assert ev["source"]["component"] == "taint-eviction-controller"

    # Tolerated without a limit, or on a healthy node: untouched.
    await ctrl.clock.advance(100)
    assert not (await ctrl.admin.get("pods", "forever", "default"))["metadata"].get("deletionTimestamp")
    assert not (await ctrl.admin.get("pods", "healthy-node", "default"))["metadata"].get("deletionTimestamp")


async def test_a_node_that_comes_back_loses_its_taints_and_pending_evictions_are_cancelled(ctrl: Ctrl) -> None:
    stop = await cluster(ctrl, "n1", "n2")
    await ctrl.admin.create(pod("p", node_name="n1", grace=30))
    await ctrl.manager(*NODES)
    stop("n1")
    await ctrl.wait(lambda: _has_taint(ctrl, "n1", (UNREACHABLE, "NoExecute")), timeout=90, step=1)
    await ctrl.clock.advance(60)

    # The kubelet is back: it renews its Lease and posts Ready.
    ctrl.heartbeat("n1")
    n1 = await ctrl.admin.get("nodes", "n1", None)
    get_condition(n1["status"], "Ready").update(status="True", reason="KubeletReady",
                                                lastHeartbeatTime=ctrl.clock.rfc3339())
    await ctrl.admin.update_status(n1)
    await ctrl.wait(lambda: _no_taints(ctrl, "n1"), timeout=20, step=1)
    await ctrl.clock.advance(400)
    assert not (await ctrl.admin.get("pods", "p", "default"))["metadata"].get("deletionTimestamp")
    [ev] = await ctrl.events("TaintManagerEviction", "p")
    assert ev["message"] == "Cancelling deletion of Pod default/p"


async def test_tainting_is_rate_limited_per_zone(ctrl: Ctrl) -> None:
    stop = await cluster(ctrl, *(f"n{i}" for i in range(1, 6)))
    await ctrl.manager(*NODES)
    await ctrl.clock.advance(10)
    stop("n1")
    stop("n2")
    await ctrl.wait(lambda: _has_taint(ctrl, "n2", (UNREACHABLE, "NoExecute"), "n1"), timeout=120, step=1)
    added = sorted([parse_time((await taints(ctrl, n))[(UNREACHABLE, "NoExecute")]["timeAdded"]) for n in ("n1", "n2")])
    assert 9 <= added[1] - added[0] <= 11  # 0.1 nodes per second


async def test_no_evictions_in_a_partially_disrupted_small_zone_or_when_every_node_is_down(ctrl: Ctrl) -> None:
    stop = await cluster(ctrl, *(f"n{i}" for i in range(1, 6)))
    await ctrl.admin.create(pod("p", node_name="n1", tolerations=NO_TOLERATION, grace=30))
    await ctrl.manager(*NODES)
    await ctrl.clock.advance(10)
    for n in ("n1", "n2", "n3"):  # 60 % of a 5-node zone: partial disruption, rate 0 under 50 nodes
        stop(n)
    await ctrl.wait(lambda: _ready_is(ctrl, "n3", "Unknown"), timeout=90, step=1)
    await ctrl.clock.advance(60)
    for n in ("n1", "n2", "n3"):
        t = await taints(ctrl, n)
        assert (UNREACHABLE, "NoSchedule") in t and (UNREACHABLE, "NoExecute") not in t
    assert not (await ctrl.admin.get("pods", "p", "default"))["metadata"].get("deletionTimestamp")

    for n in ("n4", "n5"):  # every node down: full disruption, still nothing evicted
        stop(n)
    await ctrl.wait(lambda: _ready_is(ctrl, "n5", "Unknown"), timeout=90, step=1)
    await ctrl.clock.advance(60)
    for i in range(1, 6):
        assert (UNREACHABLE, "NoExecute") not in await taints(ctrl, f"n{i}")
    assert not (await ctrl.admin.get("pods", "p", "default"))["metadata"].get("deletionTimestamp")


async def _ready_is(ctrl: Ctrl, name: str, status: str) -> bool:
    return (await ready_of(ctrl, name)).get("status") == status


async def _has_taint(ctrl: Ctrl, name: str, key: tuple[str, str], *also: str) -> bool:
    return all([key in await taints(ctrl, n) for n in (name, *also)])


async def _no_taints(ctrl: Ctrl, name: str) -> bool:
    return not await taints(ctrl, name)


async def _being_deleted(ctrl: Ctrl, name: str) -> bool:
    return bool((await ctrl.admin.get("pods", name, "default"))["metadata"].get("deletionTimestamp"))
