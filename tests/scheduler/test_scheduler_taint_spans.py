"""TaintToleration on a round-robin span looks only at the tainted nodes that fall inside it; the
verdicts (who passes, in order; who fails, with which taint named) must equal a walk over every node."""

from __future__ import annotations

import random

from kconsole.scheduler.cache import Cache, NodeSpan
from kconsole.scheduler.framework import Handle
from kconsole.scheduler.plugins.taint_toleration import TaintToleration
from kconsole.scheduler.podinfo import PodInfo

TAINTS = [
    {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"},
    {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"},
    {"key": "soft", "value": "x", "effect": "PreferNoSchedule"},
]
TOLERATIONS = [[], [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}],
               [{"operator": "Exists"}], [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists"}]]


def _node(i: int, taints: list[dict]) -> dict:
    return {"metadata": {"name": f"n{i}", "labels": {}}, "spec": {"taints": taints},
            "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "110"}}}


def _verdicts(outcome: tuple[list, list]) -> tuple[list[str], list[tuple[str, str]]]:
    passed, failed = outcome
    return [n.name for n in passed], [(n.name, st.reasons[0]) for n, st in failed]


def test_span_filter_matches_the_walk_over_every_node() -> None:
    rng = random.Random(11)
    cache = Cache()
    for i in range(60):
        cache.add_node(_node(i, [rng.choice(TAINTS)] if rng.random() < 0.08 else []))
    plugin = TaintToleration(Handle(cache, rng), {})
    rejected = kept_whole = 0
    for step in range(400):
        if rng.random() < 0.1:  # taints come and go
            i = rng.randrange(60)
            cache.update_node(_node(i, [rng.choice(TAINTS)] if rng.random() < 0.5 else []))
        nodes = cache.node_list()
        start, size = rng.randrange(60), rng.randrange(1, 61)
        span = NodeSpan((nodes + nodes)[start:start + size], start, cache.list_version, len(nodes))
        pod = PodInfo({"metadata": {"name": "p", "namespace": "default", "uid": "u"},
                       "spec": {"containers": [{"name": "c", "image": "nginx"}],
                                "tolerations": rng.choice(TOLERATIONS)}})
        got = plugin.filter({}, pod, span)
        assert _verdicts(got) == _verdicts(plugin.filter({}, pod, list(span))), f"step {step}"
        rejected += bool(got[1])
        kept_whole += got[0] is span
    assert rejected > 50 and kept_whole > 50
