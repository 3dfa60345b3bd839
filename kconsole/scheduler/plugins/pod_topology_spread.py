"""PodTopologySpread: keep matching pods evenly spread over topology domains.

Hard constraints (``DoNotSchedule``) filter: placing the pod must not make a domain's count exceed
the global minimum by more than ``maxSkew``. Soft constraints (``ScheduleAnyway``) score: fewer
matching pods in the node's domains is better. Pods without constraints get upstream's system
defaults (hostname maxSkew 3, zone maxSkew 5, both soft) — but only when some Service, ReplicaSet
or StatefulSet selects them, since the defaults use that selector.
"""

from __future__ import annotations

import math
from operator import add
from typing import Any

from kconsole.scheduler.cache import NodeInfo
from kconsole.scheduler.framework import MAX_NODE_SCORE, SKIP_STATUS, UNRESOLVABLE, UNSCHEDULABLE, Failed, Plugin
from kconsole.scheduler.framework import Status, register
from kconsole.scheduler.matchers import LabelPredicate
from kconsole.scheduler.memo import NodeMemo
from kconsole.scheduler.plugins.node_affinity import matches_node_affinity
from kconsole.scheduler.plugins.taint_toleration import first_untolerated
from kconsole.scheduler.podinfo import LABEL_HOSTNAME, LABEL_ZONE, PodInfo, SpreadConstraint

REASON_SKEW = "node(s) didn't match pod topology spread constraints"
REASON_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)"
SYSTEM_DEFAULTS = [
    {"maxSkew": 3, "topologyKey": LABEL_HOSTNAME, "whenUnsatisfiable": "ScheduleAnyway"},
    {"maxSkew": 5, "topologyKey": LABEL_ZONE, "whenUnsatisfiable": "ScheduleAnyway"},
]
#: (namespace, selector, topology key) combinations whose per-domain totals are kept
MAX_TOTALS = 32
FILTER_KEY = "PodTopologySpread/filter"
SCORE_KEY = "PodTopologySpread/score"
CONSTRAINTS_KEY = "PodTopologySpread/constraints"


def count_matching(node: NodeInfo, selector: LabelPredicate, namespace: str) -> int:
    return sum(1 for p in node.pods.values() if p.namespace == namespace and not p.deleting and selector(p.labels))


def _count_batch(arg: tuple[LabelPredicate, str], nodes: list[NodeInfo]) -> list[int]:
    selector, namespace = arg
    return [count_matching(n, selector, namespace) for n in nodes]


def _domain_batch(key: str, nodes: list[NodeInfo]) -> list[str]:
    return [n.labels.get(key, "") for n in nodes]


def _label_batch(key: str, nodes: list[NodeInfo]) -> list[str | None]:
    return [n.labels.get(key) for n in nodes]


def _selector_key(selector: LabelPredicate) -> Any:
    """A value key for a compiled selector (a LabelSelector compares by its requirements), or None
    for a composed predicate, which is then counted directly."""
    owner = getattr(selector, "__self__", None)
    if owner is not None and getattr(owner, "__hash__", None) is not None:
        return owner
    return None


def _eligible(pod: PodInfo, c: SpreadConstraint, node: NodeInfo) -> bool:
    if c.honor_affinity and not matches_node_affinity(pod, node):
        return False
    if c.honor_taints and first_untolerated(node.hard_taints, pod.tolerations) is not None:
        return False
    return True


class _DomainTotals:
    """Matching pods per domain of one topology key, with the per-node values they were summed from."""

    __slots__ = ("version", "pos", "counts", "domains", "totals")

    def __init__(self, version: int, counts: list[int], domains: list[str]) -> None:
        self.version = version
        self.pos = 0
        self.counts = counts[:]
        self.domains = domains[:]
        self.totals: dict[str, int] = {}
        for dom, cnt in zip(domains, counts):
            if cnt:
                self.totals[dom] = self.totals.get(dom, 0) + cnt

    def extend(self, counts: list[int], domains: list[str]) -> None:
        totals = self.totals
        for i in range(len(self.counts), len(counts)):
            cnt, dom = counts[i], domains[i]
            self.counts.append(cnt)
            self.domains.append(dom)
            totals[dom] = totals.get(dom, 0) + cnt

    def set(self, i: int, cnt: int, dom: str) -> None:
        old, od = self.counts[i], self.domains[i]
        if old == cnt and od == dom:
            return
        totals = self.totals
        totals[od] = totals.get(od, 0) - old
        totals[dom] = totals.get(dom, 0) + cnt
        self.counts[i] = cnt
        self.domains[i] = dom


class _FilterState:
    __slots__ = ("constraints", "counts", "domains")

    def __init__(self, constraints: list[SpreadConstraint]) -> None:
        self.constraints = constraints
        self.counts: dict[tuple[str, str], int] = {}
        self.domains: list[set[str]] = [set() for _ in constraints]

    def clone(self) -> _FilterState:
        c = _FilterState(self.constraints)
        c.counts = dict(self.counts)
        c.domains = self.domains
        return c

    def min_match(self, i: int) -> int:
        c = self.constraints[i]
        doms = self.domains[i]
        if len(doms) < c.min_domains:
            return 0
        return min((self.counts.get((c.topology_key, v), 0) for v in doms), default=0)


@register
class PodTopologySpread(Plugin):
    name = "PodTopologySpread"
    events = frozenset({"PodAdd", "PodUpdate", "PodDelete", "NodeAdd", "NodeUpdate", "NodeDelete"})

    def __init__(self, handle: Any, args: dict[str, Any]) -> None:
        super().__init__(handle, args)
        kind = args.get("defaultingType") or "System"
        if kind not in ("System", "List"):
            raise ValueError(f"PodTopologySpread: defaultingType {kind!r} is not one of System, List")
        self.defaults = SYSTEM_DEFAULTS if kind == "System" else list(args.get("defaultConstraints") or [])
        for c in self.defaults:
            if c.get("labelSelector") is not None:
                raise ValueError("PodTopologySpread: defaultConstraints must not set labelSelector")
        cache = getattr(handle, "cache", None)
        # Matching pods per node, per (namespace, selector), kept current from the cache's change log:
        # counting every node's pods for every pod made each cycle O(pods in the cluster).
        self._counts: NodeMemo[int] | None = NodeMemo(cache, _count_batch) if cache is not None else None
        self._domains: NodeMemo[str] | None = NodeMemo(cache, _domain_batch) if cache is not None else None
        # The same with None for a missing label: score() reads a candidate's domain from it as one slice.
        self._labels: NodeMemo[str | None] | None = NodeMemo(cache, _label_batch) if cache is not None else None
        self._totals: dict[Any, _DomainTotals] = {}

    def _domain_totals(self, shape: Any, counts: list[int], domains: list[str]) -> dict[str, int]:
        """Per-domain sums of the current per-node ``counts`` by ``domains`` (both memo tables of
        ``node_list()``), updated from the cache's change log: summing every node per pod was
        O(nodes) of each cycle."""
        cache = self.handle.cache
        log = cache.changelog
        entry = self._totals.get(shape)
        if entry is None or entry.version != cache.list_version:
            if entry is None and len(self._totals) >= MAX_TOTALS:
                del self._totals[next(iter(self._totals))]
            entry = self._totals[shape] = _DomainTotals(cache.list_version, counts, domains)
        else:
            entry.extend(counts, domains)  # nodes added since (they are on no change log)
            for i in set(log[entry.pos:]):
                if i < len(counts):
                    entry.set(i, counts[i], domains[i])
        entry.pos = len(log)
        return entry.totals

    def _count_table(self, c: SpreadConstraint, namespace: str) -> list[int] | None:
        """Matching-pod counts by node index, or None when the selector has no value key."""
        key = _selector_key(c.selector)
        if key is None or self._counts is None:
            return None
        return self._counts.table((namespace, key), (c.selector, namespace))

    def _count_nodes(self, c: SpreadConstraint, namespace: str, nodes: list[NodeInfo]) -> list[int]:
        key = _selector_key(c.selector)
        if key is None or self._counts is None:
            return _count_batch((c.selector, namespace), nodes)
        return self._counts.values((namespace, key), (c.selector, namespace), nodes)

    def constraints(self, pod: PodInfo, state: dict[str, Any] | None = None) -> tuple[list[SpreadConstraint], bool]:
        """(constraints, system_defaulted); computed once per cycle when ``state`` is given."""
        if state is not None:
            got = state.get(CONSTRAINTS_KEY)
            if got is None:
                got = state[CONSTRAINTS_KEY] = self.constraints(pod)
            return got
        if pod.spread:
            return pod.spread, False
        if not self.defaults:
            return [], True
        selector = self.handle.default_selector(pod)
        if selector is None:
            return [], True
        out = []
        for d in self.defaults:
            c = SpreadConstraint(d, pod.labels)
            c.selector = selector
            out.append(c)
        return out, True

    # ----------------------------------------------------------------- filter

    def pre_filter(self, state: dict[str, Any], pod: PodInfo) -> Status | None:
        hard = [c for c in self.constraints(pod, state)[0] if c.hard]
        if not hard:
            return SKIP_STATUS
        fs = _FilterState(hard)
        keys = [c.topology_key for c in hard]
        for node in self.handle.cache.node_list():
            labels = node.labels
            if any(k not in labels for k in keys):
                continue
            for i, c in enumerate(hard):
                if not _eligible(pod, c, node):
                    continue
                val = labels[c.topology_key]
                fs.domains[i].add(val)
                pair = (c.topology_key, val)
                fs.counts[pair] = fs.counts.get(pair, 0) + count_matching(node, c.selector, pod.namespace)
        state[FILTER_KEY] = fs
        return None

    def _adjust(self, state: dict[str, Any], pod: PodInfo, other: PodInfo, node: NodeInfo, delta: int) -> None:
        fs: _FilterState | None = state.get(FILTER_KEY)
        if fs is None or other.namespace != pod.namespace:
            return
        for c in fs.constraints:
            val = node.labels.get(c.topology_key)
            if val is None or not _eligible(pod, c, node) or not c.selector(other.labels):
                continue
            pair = (c.topology_key, val)
            fs.counts[pair] = fs.counts.get(pair, 0) + delta

    def remove_pod(self, state: dict[str, Any], pod: PodInfo, victim: PodInfo, node: NodeInfo) -> None:
        self._adjust(state, pod, victim, node, -1)

    def add_pod(self, state: dict[str, Any], pod: PodInfo, other: PodInfo, node: NodeInfo) -> None:
        self._adjust(state, pod, other, node, +1)

    def filter(self, state: dict[str, Any], pod: PodInfo, nodes: list[NodeInfo]) -> tuple[list[NodeInfo], Failed]:
        fs: _FilterState | None = state.get(FILTER_KEY)
        if fs is None:
            return nodes, []
        mins = [fs.min_match(i) for i in range(len(fs.constraints))]
        self_match = [1 if c.selector(pod.labels) else 0 for c in fs.constraints]
        passed: list[NodeInfo] = []
        failed: Failed = []
        for n in nodes:
            st = None
            for i, c in enumerate(fs.constraints):
                val = n.labels.get(c.topology_key)
                if val is None:
                    st = Status(UNRESOLVABLE, REASON_LABEL, plugin=self.name)
                    break
                skew = fs.counts.get((c.topology_key, val), 0) + self_match[i] - mins[i]
                if skew > c.max_skew:
                    st = Status(UNSCHEDULABLE, REASON_SKEW, plugin=self.name)
                    break
            if st is None:
                passed.append(n)
            else:
                failed.append((n, st))
        return passed, failed

    # ----------------------------------------------------------------- score

    def pre_score(self, state: dict[str, Any], pod: PodInfo, nodes: list[NodeInfo]) -> Status | None:
        constraints, defaulted = self.constraints(pod, state)
        soft = [c for c in constraints if not c.hard]
        if not soft:
            return SKIP_STATUS
        require_all = not defaulted
        ignored: set[str] = set()
        counts: dict[tuple[str, str], int] = {}
        sizes = [0] * len(soft)
        if not require_all and self._domains is not None:
            # Every candidate counts: the domains are the distinct memoised label values, in the order
            # the per-node walk below would meet them (a per-node walk per pod was most of its cost).
            for i, c in enumerate(soft):
                key = c.topology_key
                if key == LABEL_HOSTNAME:
                    continue
                for dom in dict.fromkeys(self._domains.values(key, key, nodes)):
                    pair = (key, dom)
                    if pair not in counts:
                        counts[pair] = 0
                        sizes[i] += 1
        else:
            for n in nodes:
                if require_all and any(c.topology_key not in n.labels for c in soft):
                    ignored.add(n.name)
                    continue
                for i, c in enumerate(soft):
                    if c.topology_key == LABEL_HOSTNAME:
                        continue
                    pair = (c.topology_key, n.labels.get(c.topology_key, ""))
                    if pair not in counts:
                        counts[pair] = 0
                        sizes[i] += 1
        weights = []
        for i, c in enumerate(soft):
            size = len(nodes) - len(ignored) if c.topology_key == LABEL_HOSTNAME else sizes[i]
            weights.append(math.log(size + 2))
        if counts:
            tables = [None if c.topology_key == LABEL_HOSTNAME else self._count_table(c, pod.namespace)
                      for c in soft]
            all_nodes = self.handle.cache.node_list()
            # Common case (no node constraint on the pod, taints ignored, every node counted): one
            # pass over memoised per-node counts and domains instead of a per-node walk.
            direct = not require_all and pod.node_selector is None and pod.required_node_affinity is None and \
                self._domains is not None and all(t is not None and not c.honor_taints for c, t in zip(soft, tables)
                                                   if c.topology_key != LABEL_HOSTNAME)
            if direct:
                assert self._domains is not None
                for c, table in zip(soft, tables):
                    if table is None:
                        continue
                    key = c.topology_key
                    shape = (pod.namespace, _selector_key(c.selector), key)
                    totals = self._domain_totals(shape, table, self._domains.table(key, key))
                    for pair in counts:
                        if pair[0] == key:
                            counts[pair] += totals.get(pair[1], 0)
            for node in () if direct else all_nodes:
                if require_all and any(c.topology_key not in node.labels for c in soft):
                    continue
                for c, table in zip(soft, tables):
                    if c.topology_key == LABEL_HOSTNAME:
                        continue
                    pair = (c.topology_key, node.labels.get(c.topology_key, ""))
                    if pair not in counts:
                        continue
                    cnt = table[node.index] if table is not None else count_matching(node, c.selector, pod.namespace)
                    if cnt and _eligible(pod, c, node):
                        counts[pair] += cnt
        state[SCORE_KEY] = (soft, counts, weights, ignored)
        return None

    def score(self, state: dict[str, Any], pod: PodInfo, nodes: list[NodeInfo]) -> list[int]:
        soft, counts, weights, _ = state[SCORE_KEY]
        host = [self._count_nodes(c, pod.namespace, nodes) if c.topology_key == LABEL_HOSTNAME else None
                for c in soft]
        if self._labels is not None:
            return self._score_columns(soft, counts, weights, host, nodes)
        out = []
        for j, n in enumerate(nodes):
            s = 0.0
            for i, c in enumerate(soft):
                val = n.labels.get(c.topology_key)
                if val is None:
                    continue
                hc = host[i]
                if hc is not None:
                    cnt = hc[j]
                else:
                    cnt = counts.get((c.topology_key, val), 0)
                s += cnt * weights[i] + (c.max_skew - 1)
            out.append(int(math.floor(s + 0.5)))
        return out

    def _score_columns(self, soft: list[SpreadConstraint], counts: dict[tuple[str, str], int],
                       weights: list[float], host: list[list[int] | None], nodes: list[NodeInfo]) -> list[int]:
        """score() a constraint at a time over memoised label columns: a node's sum adds the same
        terms in the same order as the per-node loop, so the floats (and the rounding) are identical."""
        assert self._labels is not None
        sums: list[float] | None = None
        for i, c in enumerate(soft):
            key = c.topology_key
            vals = self._labels.values(key, key, nodes)
            w = weights[i]
            k = c.max_skew - 1
            hc = host[i]
            if hc is not None:
                by_count = {cnt: cnt * w + k for cnt in set(hc)}
                terms = list(map(by_count.__getitem__, hc))
                if None in vals:
                    terms = [0.0 if v is None else t for v, t in zip(vals, terms)]
            else:
                term_of = {v: counts.get((key, v), 0) * w + k for v in dict.fromkeys(vals)}
                term_of[None] = 0.0
                terms = list(map(term_of.__getitem__, vals))
            sums = terms if sums is None else list(map(add, sums, terms))
        if sums is None:
            return [0] * len(nodes)
        return list(map(math.floor, map((0.5).__add__, sums)))

    def normalize(self, state: dict[str, Any], pod: PodInfo, nodes: list[NodeInfo], scores: list[int]) -> list[int]:
        ignored: set[str] = state[SCORE_KEY][3]
        if not ignored:
            if not scores:
                return []
            lo, hi = min(scores), max(scores)
            if hi == 0:
                return [MAX_NODE_SCORE] * len(scores)
            top = hi + lo
            return [MAX_NODE_SCORE * (top - s) // hi for s in scores]
        valid = [s for n, s in zip(nodes, scores) if n.name not in ignored]
        if not valid:
            return [0] * len(scores)
        lo, hi = min(valid), max(valid)
        out = []
        for n, s in zip(nodes, scores):
            if n.name in ignored:
                out.append(0)
            elif hi == 0:
                out.append(MAX_NODE_SCORE)
            else:
                out.append(MAX_NODE_SCORE * (hi + lo - s) // hi)
        return out
