"""The issue's acceptance scenarios, end to end: real API server and store, virtual clock."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from kconsole.api.server import APIServer
from kconsole.api.types import UserInfo
from kconsole.client import Client
from kconsole.clock import VirtualClock
from kconsole.objects.printers import PRINTERS
from kconsole.scheduler.decisions import node_rows
from kconsole.scheduler.scheduler import Scheduler
from kconsole.store.revlog import RevisionLog
from tests.scheduler.conftest import Env, node, pod

INSUFFICIENT_CPU = ("0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: "
                    "3 No preemption victims found for incoming pod..")


def condition(p: dict[str, Any], type_: str) -> dict[str, Any] | None:
    return next((c for c in (p.get("status") or {}).get("conditions") or [] if c["type"] == type_), None)


async def test_too_big_pod_waits_with_upstream_message_then_fits_a_new_node(env: Env) -> None:
    for i in range(3):
        await env.admin.create(node(f"n{i}", cpu="2"))
    s = await env.scheduler()
    await env.admin.create(pod("big", cpu="8"))
    await env.clock.advance(2)
    await s.flush()
    p = await env.get_pod("big")
    assert not p["spec"].get("nodeName")
    cond = condition(p, "PodScheduled")
    assert cond is not None and cond["status"] == "False" and cond["reason"] == "Unschedulable"
    assert cond["message"] == INSUFFICIENT_CPU
    events = await env.events("big", "FailedScheduling")
    assert events and events[0]["message"] == INSUFFICIENT_CPU and events[0]["type"] == "Warning"
    assert events[0]["source"]["component"] == "default-scheduler"
    assert s.pending_reasons()["default/big"] == INSUFFICIENT_CPU

    await env.admin.create(node("huge", cpu="16"))
    placed = await env.wait_bound("big", timeout=15)
    assert placed["big"] == "huge"


async def test_taints_and_tolerations(env: Env) -> None:
    taint = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
    await env.admin.create(node("gpu-0", taints=[taint]))
    await env.admin.create(node("gpu-1", taints=[taint]))
    await env.admin.create(node("plain"))
    await env.scheduler()
    for i in range(4):
        await env.admin.create(pod(f"plain-{i}"))
    tolerant = [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]
    await env.admin.create(pod("tolerant", tolerations=tolerant, nodeSelector={"kubernetes.io/hostname": "gpu-1"}))
    placed = await env.wait_bound(*[f"plain-{i}" for i in range(4)], "tolerant")
    assert {placed[f"plain-{i}"] for i in range(4)} == {"plain"}
    assert placed["tolerant"] == "gpu-1"


async def test_untolerated_taints_are_named_in_the_message(env: Env) -> None:
    for i in range(3):
        await env.admin.create(node(f"n{i}", taints=[{"key": "team", "value": "a", "effect": "NoSchedule"}]))
    s = await env.scheduler()
    await env.admin.create(pod("p"))
    await env.clock.advance(2)
    await s.flush()
    cond = condition(await env.get_pod("p"), "PodScheduled")
    assert cond is not None
    assert cond["message"] == ("0/3 nodes are available: 3 node(s) had untolerated taint {team: a}. preemption: "
                               "0/3 nodes are available: 3 Preemption is not helpful for scheduling..")


def _pinned(*names: str) -> dict[str, Any]:
    """The affinity the DaemonSet controller gives each of its pods."""
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": list(names)}]}]}}}


async def test_a_pod_pinned_by_name_is_filtered_on_its_node_alone(env: Env) -> None:
    """NodeAffinity's PreFilterResult: a DaemonSet pod is judged on its node only, and the others
    are named as upstream names them (`kubectl describe` of a Pending DaemonSet pod)."""
    for i in range(4):
        await env.admin.create(node(f"n{i}", cpu="1"))
    s = await env.scheduler()
    await env.admin.create(pod("fits", affinity=_pinned("n2")))
    await env.admin.create(pod("big", cpu="2", affinity=_pinned("n1")))
    await env.admin.create(pod("gone", affinity=_pinned("n9")))
    await env.admin.create(pod("conflict", affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n0"]},
                                               {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}}))
    assert (await env.wait_bound("fits"))["fits"] == "n2"
    await env.clock.advance(2)
    await s.flush()
    messages = {name: (condition(await env.get_pod(name), "PodScheduled") or {}).get("message")
                for name in ("big", "gone", "conflict")}
    assert messages == {
        "big": "0/4 nodes are available: 1 Insufficient cpu, 3 node(s) didn't satisfy plugin(s) [NodeAffinity]. "
               "preemption: 0/4 nodes are available: 1 No preemption victims found for incoming pod, "
               "3 Preemption is not helpful for scheduling..",
        "gone": "0/4 nodes are available: 4 node(s) didn't satisfy plugin(s) [NodeAffinity]. preemption: "
                "0/4 nodes are available: 4 Preemption is not helpful for scheduling..",
        "conflict": "0/4 nodes are available: pod affinity terms conflict. preemption: 0/4 nodes are available: "
                    "4 Preemption is not helpful for scheduling..",
    }
    records = {r["metadata"]["name"]: r["status"] for r in await env.admin.list_all("schedulingdecisions", "default")}
    assert records["fits-1"]["nodes"] == {"total": 4, "evaluated": 1, "feasible": 1, "skippedByCutoff": 0,
                                          "notInPreFilterResult": 3}


async def test_node_selector_and_node_affinity(env: Env) -> None:
    await env.admin.create(node("a", labels={"disk": "ssd", "topology.kubernetes.io/zone": "z1"}))
    await env.admin.create(node("b", labels={"disk": "hdd", "topology.kubernetes.io/zone": "z2"}))
    await env.admin.create(node("c", labels={"topology.kubernetes.io/zone": "z3"}))
    s = await env.scheduler()
    await env.admin.create(pod("sel", nodeSelector={"disk": "ssd"}))
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "NotIn", "values": ["z1", "z3"]}]}]}}}
    await env.admin.create(pod("aff", affinity=affinity))
    prefer = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 50, "preference": {"matchExpressions": [{"key": "disk", "operator": "DoesNotExist"}]}}]}}
    await env.admin.create(pod("pref", affinity=prefer))
    placed = await env.wait_bound("sel", "aff", "pref")
    assert placed == {"sel": "a", "aff": "b", "pref": "c"}
    await env.admin.create(pod("nowhere", nodeSelector={"disk": "nvme"}))
    await env.clock.advance(2)
    await s.flush()
    cond = condition(await env.get_pod("nowhere"), "PodScheduled")
    assert cond is not None and cond["message"] == (
        "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: "
        "0/3 nodes are available: 3 Preemption is not helpful for scheduling..")


async def test_zone_spread_with_max_skew(env: Env) -> None:
    zones = {"a1": "za", "a2": "za", "a3": "za", "b1": "zb", "c1": "zc"}
    for name, zone in zones.items():
        await env.admin.create(node(name, labels={"topology.kubernetes.io/zone": zone}))
    await env.scheduler()
    spread = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "web"}}}]
    names = [f"web-{i}" for i in range(6)]
    for n in names:
        await env.admin.create(pod(n, labels={"app": "web"}, topologySpreadConstraints=spread))
    placed = await env.wait_bound(*names)
    per_zone: dict[str, int] = {}
    for n in placed.values():
        per_zone[zones[n]] = per_zone.get(zones[n], 0) + 1
    assert per_zone == {"za": 2, "zb": 2, "zc": 2}


async def test_one_per_node_anti_affinity(env: Env) -> None:
    for i in range(3):
        await env.admin.create(node(f"n{i}"))
    s = await env.scheduler()
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    for i in range(4):
        await env.admin.create(pod(f"db-{i}", labels={"app": "db"}, affinity=anti))
    await env.clock.run_until(lambda: s.scheduled >= 3, 20, step=0.5)
    await env.clock.advance(2)
    await s.flush()
    nodes = [await env.node_of(f"db-{i}") for i in range(4)]
    bound = [n for n in nodes if n]
    assert len(bound) == 3 and len(set(bound)) == 3
    waiting = f"db-{nodes.index('')}"
    cond = condition(await env.get_pod(waiting), "PodScheduled")
    assert cond is not None and cond["message"] == (
        "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. preemption: "
        "0/3 nodes are available: 3 No preemption victims found for incoming pod..")


async def test_preemption_of_a_lower_priority_pod(env: Env) -> None:
    for name, value in (("low", 100), ("high", 1000)):
        await env.admin.create({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                "metadata": {"name": name}, "value": value})
    await env.admin.create(node("only", cpu="1"))
    s = await env.scheduler()
    await env.admin.create(pod("victim", cpu="800m", priorityClassName="low"))
    assert (await env.wait_bound("victim"))["victim"] == "only"
    await env.admin.create(pod("vip", cpu="500m", priorityClassName="high"))

    async def victim_gone() -> bool:
        return not any(p["metadata"]["name"] == "victim" for p in await env.admin.list_all("pods", "default"))

    await env.clock.run_until(victim_gone, 20, step=0.5)
    placed = await env.wait_bound("vip")
    assert placed["vip"] == "only"
    await s.flush()
    preempted = await env.events("victim", "Preempted")
    vip_uid = (await env.get_pod("vip"))["metadata"]["uid"]
    assert preempted and preempted[0]["message"] == f"Preempted by pod {vip_uid} on node only"  # as 1.32 words it
    assert preempted[0]["related"]["name"] == "vip" and preempted[0]["related"]["uid"] == vip_uid
    records = [r for r in await env.admin.list_all("schedulingdecisions", "default") if r["spec"]["pod"] == "vip"]
    first = min(records, key=lambda r: r["spec"]["attempt"])
    assert first["status"]["result"] == "Unschedulable"
    assert first["status"]["nominatedNode"] == "only" and first["status"]["victims"] == ["default/victim"]


async def test_cordoned_nodes_are_skipped(env: Env) -> None:
    await env.admin.create(node("cordoned", cpu="64", unschedulable=True))
    await env.admin.create(node("small-1"))
    await env.admin.create(node("small-2"))
    s = await env.scheduler()
    names = [f"p{i}" for i in range(6)]
    for n in names:
        await env.admin.create(pod(n))
    placed = await env.wait_bound(*names)
    assert "cordoned" not in placed.values()
    await s.flush()
    record = next(r for r in await env.admin.list_all("schedulingdecisions", "default") if r["spec"]["pod"] == "p0")
    rejected = {r["node"]: r for r in node_rows(record) if not r["passed"]}
    assert rejected["cordoned"]["plugin"] == "NodeUnschedulable"
    assert rejected["cordoned"]["code"] == "UnschedulableAndUnresolvable"
    assert rejected["cordoned"]["reasons"] == ["node(s) were unschedulable"]


async def _placements(tmp: Path, seed: int) -> dict[str, str]:
    clock = VirtualClock()
    kv = await RevisionLog.open(tmp / "db.sqlite", clock=clock, synchronous="NORMAL")
    api = APIServer(kv, clock, seed=1)
    await api.start()
    admin = Client(api, api.tokens.issue(UserInfo("admin", ("system:masters",))), clock)
    client = Client(api, api.tokens.issue(UserInfo("system:kube-scheduler")), clock)
    for i in range(4):
        await admin.create(node(f"n{i}", cpu="64", memory="256Gi"))
    for i in range(12):
        await admin.create(pod(f"p{i}", cpu="10m"))
    s = Scheduler(client, clock, rng=random.Random(seed))
    await s.start()
    await clock.run_until(lambda: s.scheduled >= 12, 30, step=0.5)
    pods = await admin.list_all("pods", "default")
    await s.stop()
    await api.stop()
    await kv.close()
    return {p["metadata"]["name"]: p["spec"]["nodeName"] for p in pods}


async def test_same_seed_same_placements(tmp_path: Path) -> None:
    runs = []
    for i, seed in enumerate((7, 7, 8)):
        (tmp_path / str(i)).mkdir()
        runs.append(await _placements(tmp_path / str(i), seed))
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]  # ties really are broken by the seeded RNG


async def test_decision_records_match_what_happened(env: Env) -> None:
    await env.admin.create(node("tiny", cpu="100m"))
    await env.admin.create(node("busy", cpu="4"))
    await env.admin.create(node("idle", cpu="4"))
    s = await env.scheduler()
    await env.admin.create(pod("filler", cpu="3", nodeSelector={"kubernetes.io/hostname": "busy"}))
    await env.wait_bound("filler")
    await env.admin.create(pod("web", cpu="500m"))
    placed = await env.wait_bound("web")
    await s.flush()
    records = [r for r in await env.admin.list_all("schedulingdecisions", "default") if r["spec"]["pod"] == "web"]
    assert len(records) == 1
    rec = records[0]
    assert rec["metadata"]["name"] == "web-1" and rec["metadata"]["labels"]["kconsole.dev/pod"] == "web"
    st = rec["status"]
    assert st["result"] == "Scheduled" and st["node"] == placed["web"] == "idle"
    rows = {r["node"]: r for r in node_rows(rec)}
    assert rows["tiny"]["filter"] == "NodeResourcesFit: Insufficient cpu"
    scored = {n: r["total"] for n, r in rows.items() if r["filter"] == "passed"}
    assert set(scored) == {"busy", "idle"}
    assert scored["idle"] == max(scored.values()) > scored["busy"]
    fit = rows["idle"]["scores"]["NodeResourcesFit"]
    assert fit["weighted"] == fit["normalized"] * 1
    assert sum(p["weighted"] for p in rows["idle"]["scores"].values()) == scored["idle"]
    assert st["nodes"] == {"total": 3, "evaluated": 3, "feasible": 2, "skippedByCutoff": 0, "skipped": []}
    cells = PRINTERS["schedulingdecisions.kconsole.dev"].cells(rec, env.clock.now())
    assert cells[:5] == ["web", 1, "Scheduled", "idle", "2/3"]


async def test_the_consoles_decision_summary_says_which_nodes_prefilter_left_out(env: Env) -> None:
    from kconsole.tui.decisions import summary

    for i in range(3):
        await env.admin.create(node(f"n{i}"))
    await env.scheduler()
    await env.admin.create(pod("ds", affinity=_pinned("n1")))
    assert (await env.wait_bound("ds"))["ds"] == "n1"
    record = next(r for r in await env.admin.list_all("schedulingdecisions", "default")
                  if r["metadata"]["name"] == "ds-1")
    assert summary(record)[2] == ("nodes: 3 total, 1 evaluated, 1 feasible, 0 skipped by the cut-off, "
                                  "2 not named by PreFilter")


async def test_a_pinned_high_priority_pod_preempts_on_its_own_node_only(env: Env) -> None:
    """A node-critical DaemonSet pod that does not fit its node evicts a lower-priority pod there,
    never on another node (those are UnschedulableAndUnresolvable for it)."""
    await env.admin.create({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                            "metadata": {"name": "low"}, "value": 100})
    for i in range(2):
        await env.admin.create(node(f"n{i}", cpu="1"))
    await env.scheduler()
    for i in range(2):
        await env.admin.create(pod(f"filler-{i}", cpu="800m", priorityClassName="low", nodeSelector={
            "kubernetes.io/hostname": f"n{i}"}))
    await env.wait_bound("filler-0", "filler-1")
    await env.admin.create(pod("proxy", cpu="500m", priorityClassName="system-node-critical",
                               affinity=_pinned("n1")))

    async def filler_1_gone() -> bool:
        return not any(p["metadata"]["name"] == "filler-1" for p in await env.admin.list_all("pods", "default"))

    await env.clock.run_until(filler_1_gone, 20, step=0.5)
    assert (await env.wait_bound("proxy"))["proxy"] == "n1"
    assert (await env.get_pod("filler-0"))["spec"]["nodeName"] == "n0"
