"""PodTopologySpread's memoised per-node counts give the same scores as counting every node's pods.

The memo follows the scheduler cache's change log (pods assumed, forgotten, moved between nodes);
a stale entry would skew placements silently, so this replays a random churn of pods of two
ReplicaSets in two namespaces (some pinned to a zone by nodeSelector, which takes the per-node
path) and compares every pre-score/score/normalize result with the direct count."""

from __future__ import annotations

import random

from kconsole.scheduler.cache import Cache
from kconsole.scheduler.framework import Handle
from kconsole.scheduler.matchers import label_selector
from kconsole.scheduler.plugins.pod_topology_spread import SCORE_KEY, PodTopologySpread
from kconsole.scheduler.podinfo import PodInfo

ZONE = "topology.kubernetes.io/zone"


def _pod(j: int, app: str, namespace: str, spec: dict) -> PodInfo:
    return PodInfo({"metadata": {"name": f"p{j}", "namespace": namespace, "uid": f"u{j}", "labels": {"app": app}},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}})


def test_memoised_spread_counts_match_direct_counts_through_churn() -> None:
    rng = random.Random(3)
    cache = Cache()
    for i in range(40):
        labels = {"kubernetes.io/hostname": f"n{i}"}
        if i % 7:  # some nodes lack the zone label
            labels[ZONE] = f"z{i % 4}"
        cache.add_node({"metadata": {"name": f"n{i}", "labels": labels}, "spec": {},
                        "status": {"allocatable": {"cpu": "64", "memory": "64Gi", "pods": "500"}}})
    selectors = {app: label_selector({"matchLabels": {"app": app}}) for app in "ab"}

    def default_selector(pod: PodInfo) -> object:
        return selectors[pod.labels["app"]]

    memo = PodTopologySpread(Handle(cache, rng, default_selector=default_selector), {})
    direct = PodTopologySpread(Handle(cache, rng, default_selector=default_selector), {})
    direct._counts = direct._domains = None
    placed: list[PodInfo] = []
    zone_totals_seen = set()
    for j in range(300):
        spec = {"nodeSelector": {ZONE: "z1"}} if rng.random() < 0.1 else {}
        pod = _pod(j, rng.choice("ab"), rng.choice(["default", "default", "other"]), spec)
        nodes = cache.node_list()
        candidates = rng.sample(nodes, 20)
        results = []
        for plugin in (memo, direct):
            state: dict = {}
            plugin.pre_score(state, pod, candidates)
            scores = plugin.score(state, pod, candidates)
            results.append((plugin.normalize(state, pod, candidates, scores), state[SCORE_KEY][1]))
        assert results[0] == results[1], f"pod {j}"
        zone_totals_seen.add(tuple(sorted(results[0][1].items())))
        cache.assume(pod, rng.choice(nodes).name)
        placed.append(pod)
        if rng.random() < 0.2:
            cache.forget(placed.pop(rng.randrange(len(placed))))
    assert len(zone_totals_seen) > 50  # the counts really moved
