"""PodTopologySpread's memoised per-node counts give the same scores as counting every node's pods.

The memo follows the scheduler cache's change log (pods assumed, forgotten, moved between nodes);
a stale entry would skew placements silently, so this replays a random churn of pods of two
ReplicaSets in two namespaces (some pinned to a zone by nodeSelector, which takes the per-node
path, nodes relabelled or missing a label) and compares every pre-score/score/normalize result with
the direct count. ImageLocality's memoised image sizes are checked the same way while nodes pull
images."""

from __future__ import annotations

import random

import pytest

from kconsole.scheduler.cache import Cache, NodeSpan
from kconsole.scheduler.framework import Handle
from kconsole.scheduler.matchers import label_selector
from kconsole.scheduler.plugins.image_locality import MB, ImageLocality
from kconsole.scheduler.plugins.pod_topology_spread import SCORE_KEY, PodTopologySpread
from kconsole.scheduler.podinfo import PodInfo

ZONE = "topology.kubernetes.io/zone"


def _pod(j: int, app: str, namespace: str, spec: dict) -> PodInfo:
    return PodInfo({"metadata": {"name": f"p{j}", "namespace": namespace, "uid": f"u{j}", "labels": {"app": app}},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}})


@pytest.mark.parametrize("zones", [4, 30])
def test_memoised_spread_counts_match_direct_counts_through_churn(zones: int) -> None:
    rng = random.Random(3)
    cache = Cache()
    for i in range(40):
        cache.add_node(_node(i, i, zones=zones))
    selectors = {app: label_selector({"matchLabels": {"app": app}}) for app in "ab"}

    def default_selector(pod: PodInfo) -> object:
        return selectors[pod.labels["app"]]

    memo = PodTopologySpread(Handle(cache, rng, default_selector=default_selector), {})
    direct = PodTopologySpread(Handle(cache, rng, default_selector=default_selector), {})
    direct._counts = direct._domains = direct._labels = None
    placed: list[PodInfo] = []
    zone_totals_seen = set()
    for j in range(300):
        spec = {"nodeSelector": {ZONE: "z1"}} if rng.random() < 0.1 else {}
        pod = _pod(j, rng.choice("ab"), rng.choice(["default", "default", "other"]), spec)
        nodes = cache.node_list()
        if rng.random() < 0.5:
            candidates = rng.sample(nodes, 20)
        else:
            start = rng.randrange(len(nodes))
            candidates = NodeSpan((nodes + nodes)[start:start + 20], start, cache.list_version, len(nodes))
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
        if rng.random() < 0.05:
            i = rng.randrange(40)
            cache.update_node(_node(i, rng.randrange(40), zones=zones))
        if j % 60 == 59:  # two nodes join, one already holding pods (they reached the cache first)
            joined = 40 + 2 * (j // 60)
            cache.add_node(_node(joined, j, zones=zones))
            for k in range(3):
                cache.assume(_pod(1000 + 10 * j + k, "a", "default", {}), f"n{joined + 1}")
            cache.add_node(_node(joined + 1, j + 1, zones=zones))
    assert len(zone_totals_seen) > 50  # the counts really moved


def _node(i: int, variant: int, images: tuple[tuple[str, int], ...] = (), zones: int = 4) -> dict:
    labels = {}
    if variant % 11:  # some nodes lack the hostname label, some the zone label
        labels["kubernetes.io/hostname"] = f"n{i}"
    if variant % 7:
        labels[ZONE] = f"z{variant % zones}"
    return {"metadata": {"name": f"n{i}", "labels": labels}, "spec": {},
            "status": {"allocatable": {"cpu": "64", "memory": "64Gi", "pods": "500"},
                       "images": [{"names": [name], "sizeBytes": size} for name, size in images]}}


def test_memoised_image_sizes_score_like_the_per_node_walk_while_nodes_pull_images() -> None:
    rng = random.Random(5)
    cache = Cache()
    held: dict[int, dict[str, int]] = {i: {} for i in range(30)}
    for i in range(30):
        cache.add_node(_node(i, 1))
    memo = ImageLocality(Handle(cache, rng), {})
    direct = ImageLocality(Handle(cache, rng), {})
    direct._sizes = None
    pods = [_image_pod(images) for images in (["web:1"], ["web:1", "side:2"], ["side:2", "db:3", "web:1"])]
    nonzero = 0
    for step in range(200):
        i = rng.randrange(30)
        image = rng.choice(["web:1", "side:2", "db:3"])
        held[i][image] = rng.choice([30, 300, 900]) * MB
        cache.update_node(_node(i, 1, tuple(held[i].items())))
        nodes = cache.node_list()
        candidates = rng.sample(nodes, 12)
        for pod in pods:
            got = memo.score({}, pod, candidates)
            assert got == direct.score({}, pod, candidates), f"step {step}"
            nonzero += any(got)
    assert nonzero > 100  # the images really scored


def _image_pod(images: list[str]) -> PodInfo:
    containers = [{"name": f"c{k}", "image": image} for k, image in enumerate(images)]
    return PodInfo({"metadata": {"name": "p", "namespace": "default", "uid": "u"}, "spec": {"containers": containers}})
