"""Pure parts on plain dicts: cut-off formula, FailedScheduling message, queue back-off, config, plugins."""

from __future__ import annotations

import random

import pytest

from kconsole.clock import VirtualClock
from kconsole.objects.quantity import parse_quantity
from kconsole.scheduler.cache import Cache, NodeSpan, NodeSubset
from kconsole.scheduler.config import parse_config, load_config
from kconsole.scheduler.diagnosis import fit_error_message
from kconsole.scheduler.memo import NodeMemo
from kconsole.scheduler.framework import UNRESOLVABLE, UNSCHEDULABLE, Framework, Handle, Status
from kconsole.scheduler.framework import num_feasible_nodes_to_find
from kconsole.scheduler.podinfo import PodInfo
from kconsole.scheduler.queue import ACTIVE, BACKOFF, UNSCHEDULABLE as Q_UNSCHEDULABLE, SchedulingQueue
from tests.scheduler.conftest import node, pod


@pytest.mark.parametrize("n,want", [(50, 50), (99, 99), (100, 100), (500, 230), (1000, 420), (5000, 500),
                                    (15000, 750)])
def test_nodes_to_score_formula(n: int, want: int) -> None:
    assert num_feasible_nodes_to_find(0, n) == want


def test_nodes_to_score_with_explicit_percentage() -> None:
    assert num_feasible_nodes_to_find(30, 1000) == 300
    assert num_feasible_nodes_to_find(1, 1000) == 100  # never below 100
    assert num_feasible_nodes_to_find(100, 5000) == 5000


def test_failed_scheduling_message_sorts_the_histogram_and_appends_preemption() -> None:
    statuses = {"a": Status(UNSCHEDULABLE, "Insufficient cpu")}
    for n in "bcde":
        statuses[n] = Status(UNRESOLVABLE, "node(s) didn't match Pod's node affinity/selector")
    post = ("preemption: 0/5 nodes are available: 1 No preemption victims found for incoming pod, "
            "4 Preemption is not helpful for scheduling.")
    assert fit_error_message(5, statuses, post_filter_msg=post) == (
        "0/5 nodes are available: 1 Insufficient cpu, 4 node(s) didn't match Pod's node affinity/selector. "
        "preemption: 0/5 nodes are available: 1 No preemption victims found for incoming pod, "
        "4 Preemption is not helpful for scheduling..")
    both = {"a": Status(UNSCHEDULABLE, "Insufficient cpu", "Insufficient memory"),
            "b": Status(UNSCHEDULABLE, "Insufficient memory")}
    assert fit_error_message(2, both) == "0/2 nodes are available: 1 Insufficient cpu, 2 Insufficient memory."


def test_quantities() -> None:
    assert parse_quantity("1500m") * 1000 == 1500_000 / 1000
    assert PodInfo(pod("p", cpu="1.5", memory="1Gi")).cpu == 1500
    assert PodInfo(pod("p", cpu="1.5", memory="1Gi")).mem == 2**30
    with pytest.raises(ValueError, match="quantities must match"):
        parse_quantity("1.5 cores")


def test_non_zero_requests_for_scoring_only() -> None:
    pi = PodInfo(pod("p", cpu=None))
    assert (pi.cpu, pi.mem) == (0, 0)
    assert (pi.nz_cpu, pi.nz_mem) == (100, 200 * 1024 * 1024)


async def test_queue_backoff_doubles_to_ten_seconds_and_orders_by_priority() -> None:
    clock = VirtualClock()
    q = SchedulingQueue(clock, lambda qp: (-qp.pod.priority, qp.timestamp, qp.seq),
                        interested=lambda qp, event: event == "NodeAdd")
    assert [q.backoff_duration(a) for a in range(1, 7)] == [1, 2, 4, 8, 10, 10]
    q.add(PodInfo(pod("low", priority=1)))
    q.add(PodInfo(pod("high", priority=10)))
    first = await q.pop()
    assert first is not None and first.key == "default/high"
    # failed with no event in between: parked as unschedulable until an event helps
    q.requeue_failed(first, q.scheduling_cycle, frozenset({"NodeResourcesFit"}))
    assert first.where == Q_UNSCHEDULABLE
    assert q.move_all("PodAdd") == 0 and first.where == Q_UNSCHEDULABLE  # no plugin that rejected it cares
    assert q.move_all("NodeAdd") == 1 and first.where == BACKOFF
    await clock.advance(1.0)
    assert first.where == ACTIVE
    second = await q.pop()
    assert second is not None and second.key == "default/high" and second.attempts == 2
    q.requeue_failed(second, q.scheduling_cycle - 1, frozenset())  # an event arrived during the cycle
    assert second.where == BACKOFF and second.backoff_until == clock.now() + 2
    q.close()


def test_config_weights_and_disabling() -> None:
    cfg = load_config("""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 30
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      disabled: [{name: ImageLocality}]
      enabled: [{name: NodeResourcesFit, weight: 5}]
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
- schedulerName: packer
  plugins:
    multiPoint:
      disabled: [{name: PodTopologySpread}]
decisionRecords: {enabled: false}
""")
    default, packer = cfg.profiles
    assert "ImageLocality" not in default.points["score"]
    assert default.weights["NodeResourcesFit"] == 5 and default.weights["TaintToleration"] == 3
    assert default.percentage_of_nodes_to_score == 30
    assert "PodTopologySpread" not in packer.points["filter"] and "PodTopologySpread" not in packer.points["score"]
    assert cfg.decision_records is False


@pytest.mark.parametrize("doc,needle", [
    ({"profiles": [{"plugins": {"score": {"enabled": [{"name": "Nope"}]}}}]}, "plugin 'Nope' is not registered"),
    ({"percentageOfNodesToScore": 120}, "percentageOfNodesToScore must be an integer in 0..100"),
    ({"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Random"}}}]}]},
     "scoringStrategy.type 'Random'"),
    ({"profiles": [{}, {}]}, "duplicate schedulerName default-scheduler"),
    ({"bogus": 1}, "unknown field(s) bogus"),
    ({"profiles": [{"plugins": {"filter": {"enabled": [{"name": "ImageLocality"}]}}}]}, "does not extend filter"),
])
def test_config_errors_name_the_problem(doc: dict, needle: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_config(doc)
    assert needle in str(err.value)


def _framework(cache: Cache, **cfg: object) -> Framework:
    profile = parse_config(dict(cfg)).profiles[0]
    return Framework(profile, Handle(cache=cache, rng=random.Random(1)))


def test_cut_off_searches_round_robin_and_counts_skipped() -> None:
    cache = Cache()
    for i in range(500):
        cache.add_node(node(f"n{i}"))
    fw = _framework(cache)
    nodes = cache.node_list()
    out = fw.find_feasible({}, PodInfo(pod("p")), nodes, 400, frozenset())
    assert out.processed == 230 and len(out.feasible) == 230
    assert out.feasible[0].name == "n400" and out.feasible[-1].name == "n129"  # wrapped around


def test_filters_stop_at_first_failure_and_scores_prefer_least_allocated() -> None:
    cache = Cache()
    cache.add_node(node("full", cpu="500m"))
    cache.add_node(node("half", cpu="2"))
    cache.add_node(node("empty", cpu="2"))
    cache.set_pod(PodInfo({**pod("x", cpu="1"), "spec": {**pod("x", cpu="1")["spec"], "nodeName": "half"}}))
    fw = _framework(cache)
    p = PodInfo(pod("p", cpu="1"))
    out = fw.find_feasible({}, p, cache.node_list(), 0, frozenset())
    assert [n.name for n in out.feasible] == ["half", "empty"]
    assert out.failed["full"].plugin == "NodeResourcesFit" and out.failed["full"].reasons == ("Insufficient cpu",)
    scored, ranks = fw.run_scores({}, p, out.feasible)
    totals = dict(zip([n.name for n in scored.nodes], scored.totals))
    assert totals["empty"] > totals["half"]
    # every node scores TaintToleration alike (300): left out of the ranks, never out of the totals
    assert scored.totals == [sum(col) for col in zip(*scored.weighted)]
    assert [t - r for t, r in zip(scored.totals, ranks)] == [scored.totals[0] - ranks[0]] * 2
    assert scored.totals[0] - ranks[0] >= 300


def test_victim_selection_keeps_what_still_fits() -> None:
    cache = Cache()
    cache.add_node(node("n", cpu="3"))
    for name, prio, cpu in (("a", 1, "1"), ("b", 2, "1"), ("c", 3, "1")):
        spec = {**pod(name, cpu=cpu)["spec"], "nodeName": "n", "priority": prio}
        cache.set_pod(PodInfo({**pod(name, cpu=cpu), "spec": spec}))
    fw = _framework(cache)
    pre = fw.plugins["DefaultPreemption"]
    preemptor = PodInfo({**pod("vip", cpu="1500m"), "spec": {**pod("vip", cpu="1500m")["spec"], "priority": 10}})
    victims, violations, st = pre.select_victims({"__skipped__": frozenset()}, preemptor, cache.nodes["n"], [])  # type: ignore[attr-defined]
    assert st is None and violations == 0
    assert [v.name for v in victims] == ["b", "a"]  # two must go; the most important (c) is kept


def test_a_node_span_reads_the_same_memoised_values_as_a_plain_list() -> None:
    cache = Cache()
    for i in range(300):
        cache.add_node(node(f"n{i}", cpu=str(1 + i % 5)))
    memo: NodeMemo[int] = NodeMemo(cache, lambda p, ns: [n.free_cpu - p.cpu for n in ns])
    probe = PodInfo(pod("probe", cpu="500m"))
    nodes = cache.node_list()
    for i in range(0, 40, 3):
        cache.assume(PodInfo(pod(f"p{i}", cpu="1")), f"n{i + 100}")
        span = NodeSpan(nodes[90:150], 90, cache.list_version, 300)
        assert memo.values("s", probe, span) == memo.values("s", probe, list(span))
        assert memo.values("s", probe, span)[i + 10] == nodes[i + 100].free_cpu - 500
        cache.assume(PodInfo(pod(f"q{i}", cpu="1")), f"n{i % 7}")
        wrapped = NodeSpan(nodes[280:] + nodes[:30], 280, cache.list_version, 300)
        assert memo.values("s", probe, wrapped) == [n.free_cpu - 500 for n in wrapped]
        assert memo.values("s", probe, wrapped)[20 + i % 7] == nodes[i % 7].free_cpu - 500
        subset = NodeSubset(nodes[250:] + nodes[:40:3], cache.list_version)  # what find_feasible joins
        assert memo.values("s", probe, subset) == [n.free_cpu - 500 for n in subset]
    stale = NodeSpan(nodes[0:5], 0, cache.list_version - 1, 300)
    assert memo.values("s", probe, stale) == [n.free_cpu - 500 for n in nodes[0:5]]
    cache.add_node(node("late", cpu="2"))  # the list grew since the span was cut: answered per node
    grown = NodeSpan(nodes[290:300] + nodes[:5], 290, cache.list_version, 300)
    assert memo.values("s", probe, grown) == [n.free_cpu - 500 for n in grown]


def test_prefer_no_schedule_taints_lower_the_score_only_where_untolerated() -> None:
    cache = Cache()
    cache.add_node(node("plain"))
    cache.add_node(node("other"))
    fw = _framework(cache)
    tt = fw.plugins["TaintToleration"]
    p = PodInfo(pod("p"))
    nodes = cache.node_list()
    assert tt.normalize({}, p, nodes, tt.score({}, p, nodes)) == [100, 100]  # no soft taints anywhere
    soft = {"key": "spot", "value": "yes", "effect": "PreferNoSchedule"}
    cache.add_node(node("spot", taints=[soft]))
    nodes = cache.node_list()
    assert tt.normalize({}, p, nodes, tt.score({}, p, nodes)) == [100, 100, 0]
    tolerant = PodInfo(pod("t", tolerations=[{"key": "spot", "operator": "Exists"}]))
    assert tt.normalize({}, tolerant, nodes, tt.score({}, tolerant, nodes)) == [100, 100, 100]
    scored, _ = fw.run_scores({}, p, nodes)
    assert scored.totals[2] < scored.totals[0]  # weight 3: the tainted node ranks last
