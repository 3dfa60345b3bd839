"""The scheduling framework: extension points, plugin base class, and one Framework per profile.

Plugins are classes registered by name (:func:`register`); a profile lists which run at each
extension point, in upstream's order. Filters and scores are *batched*: a plugin gets the whole
list of candidate nodes and answers for all of them in one call. In Python a call per node per
plugin would cost more than the checks themselves, and upstream's speed target needs the hot
loops to be list comprehensions over precomputed :class:`~kconsole.scheduler.cache.NodeInfo`.
Plugins that are simpler per node implement :meth:`Plugin.filter_node` and inherit the loop.

Extension points: QueueSort (``less``), PreFilter, Filter, PostFilter, PreScore, Score (+ normalise
to 0..100), Reserve/Unreserve, PreBind (``async pre_bind``, with ``pre_bind_pre_flight`` answering
:data:`SKIP` when there is nothing to do, as upstream's PreBindPreFlight), Bind. A PreFilter or
PreScore answering :data:`SKIP` turns that plugin's Filter or Score off for the pod, as upstream's
Skip status does.
"""

from __future__ import annotations

import random
from itertools import repeat
from operator import add, mul
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from kconsole.scheduler.cache import Cache, NodeInfo, NodeSpan, NodeSubset
from kconsole.scheduler.podinfo import PodInfo

if TYPE_CHECKING:
    from kconsole.scheduler.config import ProfileConfig

SUCCESS = 0
UNSCHEDULABLE = 1
#: Unschedulable, and evicting pods would not help (preemption skips such nodes).
UNRESOLVABLE = 2
ERROR = 3
SKIP = 4
CODE_NAMES = {SUCCESS: "Success", UNSCHEDULABLE: "Unschedulable", UNRESOLVABLE: "UnschedulableAndUnresolvable",
              ERROR: "Error", SKIP: "Skip"}

MAX_NODE_SCORE = 100
MIN_FEASIBLE_NODES_TO_FIND = 100
BASE_PERCENTAGE_OF_NODES_TO_SCORE = 50


class Status:
    """A plugin's verdict: code, the reasons that go into FailedScheduling, and who said it."""

    __slots__ = ("code", "reasons", "plugin")

    def __init__(self, code: int, *reasons: str, plugin: str = "") -> None:
        self.code = code
        self.reasons = reasons
        self.plugin = plugin

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)

    def __repr__(self) -> str:
        return f"Status({CODE_NAMES[self.code]}, {self.reasons!r}, plugin={self.plugin!r})"


SKIP_STATUS = Status(SKIP)

Failed = list[tuple[NodeInfo, Status]]


@dataclass(slots=True)
class Handle:
    """What plugins may reach besides the pod and nodes: the cache, the API, the seeded RNG."""

    cache: Cache
    rng: random.Random
    client: Any = None  # kconsole.client.Client
    recorder: Any = None  # kconsole.client.EventRecorder
    clock: Any = None
    #: node name -> pods nominated to run there (preemptors waiting for victims to go)
    nominated: dict[str, dict[str, PodInfo]] = field(default_factory=dict)
    #: pods of the cluster's PDBs, PriorityClasses etc. filled by the scheduler's informers
    pdbs: Callable[[], list[dict[str, Any]]] = lambda: []
    #: default topology-spread selector for a pod (Services/ReplicaSets/StatefulSets selecting it)
    default_selector: Callable[[PodInfo], Any] = lambda pod: None
    framework: Framework | None = None
    #: the scheduler's informer factory (kconsole.client.InformerFactory): listers for claims, volumes...
    informers: Any = None


class Plugin:
    """Base class; override the extension points the plugin implements."""

    name: ClassVar[str] = ""
    #: Cluster events that may make a pod this plugin rejected schedulable (queue moves on them):
    #: NodeAdd, NodeUpdate, NodeDelete, PodAdd (assigned), PodUpdate, PodDelete, PriorityClass, PDB, Namespace, Service,
    #: PersistentVolumeClaim, PersistentVolume, StorageClass.
    events: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, handle: Handle, args: dict[str, Any]) -> None:
        self.handle = handle
        self.args = args

    # QueueSort: less(a, b) on QueuedPodInfo
    # PreFilter
    def pre_filter(self, state: dict[str, Any], pod: PodInfo) -> Status | None:
        return None

    # PreFilterResult: the only nodes the pod can go to (None: any). Upstream returns it from PreFilter.
    def pre_filter_nodes(self, state: dict[str, Any], pod: PodInfo) -> frozenset[str] | None:
        return None

    # Filter (batched); default loops over filter_node
    def filter(self, state: dict[str, Any], pod: PodInfo, nodes: list[NodeInfo]) -> tuple[list[NodeInfo], Failed]:
        passed: list[NodeInfo] = []
        failed: Failed = []
        fn = self.filter_node
        for n in nodes:
            st = fn(state, pod, n)
            if st is None:
                passed.append(n)
            else:
                st.plugin = self.name
                failed.append((n, st))
        return passed, failed

    def filter_node(self, state: dict[str, Any], pod: PodInfo, node: NodeInfo) -> Status | None:
        return None

    # PreFilter extensions: keep pre_filter state true while preemption removes/adds pods on a node.
    def remove_pod(self, state: dict[str, Any], pod: PodInfo, victim: PodInfo, node: NodeInfo) -> None:
        return None

    def add_pod(self, state: dict[str, Any], pod: PodInfo, other: PodInfo, node: NodeInfo) -> None:
        return None

    # PreScore / Score
    def pre_score(self, state: dict[str, Any], pod: PodInfo, nodes: list[NodeInfo]) -> Status | None:
        return None

    def score(self, state: dict[str, Any], pod: PodInfo, nodes: list[NodeInfo]) -> list[int]:
        return [0] * len(nodes)

    def normalize(self, state: dict[str, Any], pod: PodInfo, nodes: list[NodeInfo], scores: list[int]) -> list[int]:
        return scores

    # Reserve / Unreserve
    def reserve(self, state: dict[str, Any], pod: PodInfo, node_name: str) -> Status | None:
        return None

    def unreserve(self, state: dict[str, Any], pod: PodInfo, node_name: str) -> None:
        return None

    # PreBind: a plugin implementing it defines ``async def pre_bind(state, pod, node_name) -> Status | None``
    def pre_bind_pre_flight(self, state: dict[str, Any], pod: PodInfo, node_name: str) -> Status | None:
        return None


REGISTRY: dict[str, type[Plugin]] = {}


def register(cls: type[Plugin]) -> type[Plugin]:
    """Class decorator: make a plugin available to profiles by its ``name``."""
    if not cls.name:
        raise ValueError(f"plugin class {cls.__qualname__} has no name")
    REGISTRY[cls.name] = cls
    return cls


def default_normalize(scores: list[int], reverse: bool = False) -> list[int]:
    """Upstream's DefaultNormalizeScore: scale to 0..100 by the max (reversed if asked)."""
    top = max(scores, default=0)
    if top == 0:
        return [MAX_NODE_SCORE if reverse else 0] * len(scores)
    if reverse:
        return [MAX_NODE_SCORE - MAX_NODE_SCORE * s // top for s in scores]
    return [MAX_NODE_SCORE * s // top for s in scores]


def num_feasible_nodes_to_find(percentage: int, num_all: int) -> int:
    """Upstream's numFeasibleNodesToFind: all below 100 nodes, else an adaptive percentage."""
    if num_all < MIN_FEASIBLE_NODES_TO_FIND or percentage >= 100:
        return num_all
    adaptive = percentage
    if adaptive <= 0:
        adaptive = max(BASE_PERCENTAGE_OF_NODES_TO_SCORE - num_all // 125, 5)
    return max(num_all * adaptive // 100, MIN_FEASIBLE_NODES_TO_FIND)


class PreFilterOutcome(NamedTuple):
    status: Status | None
    skipped: frozenset[str]
    #: PreFilterResult.NodeNames: None when any node may do.
    node_names: frozenset[str] | None = None
    #: The plugins that confined the pod to ``node_names``.
    narrowed_by: tuple[str, ...] = ()


@dataclass(slots=True)
class FilterOutcome:
    """What filtering found: feasible nodes (in search order), per-node failures, how many were looked at."""

    feasible: list[NodeInfo]
    failed: dict[str, Status]
    processed: int
    skipped_plugins: frozenset[str] = frozenset()
    pre_filter_status: Status | None = None
    #: How many nodes a PreFilterResult left to filter (None: it named none, all were candidates).
    named: int | None = None


@dataclass(slots=True)
class PostFilterResult:
    """A PostFilter's answer: its message part, and (preemption) the node the pod is nominated to."""

    status: Status
    nominated_node: str = ""
    victims: list[str] = field(default_factory=list)


class ScoreOutcome:
    """Per plugin: raw, normalised and weighted lists aligned with ``nodes``; ``totals`` their sum.

    ``totals`` is summed from the weighted columns when first read (by a decision record, most of
    which are never built); the cycle picks the host from :meth:`Framework.run_scores`' ranks, which
    records do not keep alive.
    """

    __slots__ = ("nodes", "plugins", "raw", "normalized", "weighted", "_totals", "skipped")

    def __init__(self, nodes: list[NodeInfo], plugins: list[tuple[str, int]], raw: list[list[int]],
                 normalized: list[list[int]], weighted: list[list[int]], totals: list[int] | None,
                 skipped: list[str]) -> None:
        self.nodes = nodes
        self.plugins = plugins  # (name, weight) of the plugins that scored
        self.raw = raw
        self.normalized = normalized
        self.weighted = weighted
        self._totals = totals
        self.skipped = skipped

    @property
    def totals(self) -> list[int]:
        if self._totals is None:
            cols = self.weighted
            self._totals = list(map(sum, zip(*cols))) if cols else [0] * len(self.nodes)
        return self._totals


def _sum_varying(columns: list[list[int]], n: int) -> list[int]:
    """Element-wise sum of the score columns that differ between nodes."""
    if not columns:
        return [0] * n
    if len(columns) == 1:
        return columns[0]
    if len(columns) == 2:
        return list(map(add, columns[0], columns[1]))
    return list(map(sum, zip(*columns)))


class Framework:
    """One profile's plugins, wired to extension points; runs the cycle's steps."""

    def __init__(self, profile: ProfileConfig, handle: Handle) -> None:
        from kconsole.scheduler import plugins as _plugins  # noqa: F401  (registers every plugin)

        self.profile = profile
        self.scheduler_name = profile.scheduler_name
        self.handle = handle
        self.percentage_of_nodes_to_score = profile.percentage_of_nodes_to_score
        instances: dict[str, Plugin] = {}

        def get(name: str) -> Plugin:
            if name not in instances:
                cls = REGISTRY.get(name)
                if cls is None:
                    raise ValueError(f"profile {profile.scheduler_name!r}: plugin {name!r} is not registered")
                instances[name] = cls(handle, profile.plugin_args.get(name, {}))
            return instances[name]

        points = profile.points
        self.queue_sort = get(points["queueSort"][0]) if points.get("queueSort") else None
        self.pre_filters = [get(n) for n in points.get("preFilter", ())]
        #: The PreFilter plugins that may confine a pod to some nodes by name.
        self._narrowing = [p for p in self.pre_filters
                           if type(p).pre_filter_nodes is not Plugin.pre_filter_nodes]
        self.filters = [get(n) for n in points.get("filter", ())]
        self.post_filters = [get(n) for n in points.get("postFilter", ())]
        self.pre_scores = [get(n) for n in points.get("preScore", ())]
        self.scores = [(get(n), profile.weights.get(n, 1)) for n in points.get("score", ())]
        #: (plugin, weight, has its own normalisation step); the base class's step returns the scores as they are
        self._score_steps = [(p, w, type(p).normalize is not Plugin.normalize) for p, w in self.scores]
        self.reserves = [get(n) for n in points.get("reserve", ())]
        self.pre_binds = [get(n) for n in points.get("preBind", ())]
        self.binds = [get(n) for n in points.get("bind", ())]
        self.plugins = instances
        self.filter_names = [p.name for p in self.filters]
        if handle.framework is None:
            handle.framework = self

    def events_for(self, plugin_names: Iterable[str]) -> frozenset[str]:
        out: set[str] = set()
        for n in plugin_names:
            p = self.plugins.get(n)
            if p is not None:
                out |= p.events
        return frozenset(out)

    # ----------------------------------------------------------------- filter

    def run_pre_filter(self, state: dict[str, Any], pod: PodInfo) -> PreFilterOutcome:
        """The rejecting status (or None), the filter plugins to skip for this pod, and the node
        names the plugins confine it to (None: every node), as upstream merges PreFilterResults."""
        skipped: set[str] = set()
        for p in self.pre_filters:
            st = p.pre_filter(state, pod)
            if st is None:
                continue
            if st.code == SKIP:
                skipped.add(p.name)
                continue
            st.plugin = p.name
            return PreFilterOutcome(st, frozenset(skipped))
        names: frozenset[str] | None = None
        narrowed_by: list[str] = []
        for p in self._narrowing:
            if p.name in skipped:
                continue
            mine = p.pre_filter_nodes(state, pod)
            if mine is None:
                continue
            narrowed_by.append(p.name)
            names = mine if names is None else names & mine
            if not names:
                reason = (f"node(s) didn't satisfy plugin {p.name}" if len(narrowed_by) == 1 else
                          f"node(s) didn't satisfy plugin(s) [{' '.join(narrowed_by)}] simultaneously")
                return PreFilterOutcome(Status(UNSCHEDULABLE, reason, plugin=p.name), frozenset(skipped))
        return PreFilterOutcome(None, frozenset(skipped), names, tuple(narrowed_by))

    def filter_nodes(self, state: dict[str, Any], pod: PodInfo, nodes: list[NodeInfo],
                     skipped: frozenset[str]) -> tuple[list[NodeInfo], Failed]:
        """Run every active filter over ``nodes``; a node stops at the first plugin that rejects it."""
        nominated = self.handle.nominated
        if nominated:
            plain: list[NodeInfo] = []
            extra_passed: list[NodeInfo] = []
            extra_failed: Failed = []
            for n in nodes:
                others = nominated.get(n.name)
                if others and any(o.key != pod.key and o.priority >= pod.priority for o in others.values()):
                    clone = n.clone()
                    for o in others.values():
                        if o.key != pod.key and o.priority >= pod.priority:
                            clone.add_pod(o)
                    _, f = self._filter_plain(state, pod, [clone], skipped)
                    if f:
                        extra_failed.append((n, f[0][1]))
                    else:
                        extra_passed.append(n)
                else:
                    plain.append(n)
            passed, failed = self._filter_plain(state, pod, plain, skipped)
            if extra_passed or extra_failed:
                keep = {id(n) for n in passed} | {id(n) for n in extra_passed}
                passed = [n for n in nodes if id(n) in keep]
                failed = failed + extra_failed
            return passed, failed
        return self._filter_plain(state, pod, nodes, skipped)

    def _filter_plain(self, state: dict[str, Any], pod: PodInfo, nodes: list[NodeInfo],
                      skipped: frozenset[str]) -> tuple[list[NodeInfo], Failed]:
        failed: Failed = []
        for p in self.filters:
            if not nodes:
                break
            if p.name in skipped:
                continue
            nodes, f = p.filter(state, pod, nodes)
            if f:
                for _, st in f:
                    st.plugin = p.name
                failed.extend(f)
        return nodes, failed

    def find_feasible(self, state: dict[str, Any], pod: PodInfo, all_nodes: list[NodeInfo], start: int,
                      skipped: frozenset[str]) -> FilterOutcome:
        """Filter from ``start`` round-robin until enough feasible nodes are found (the cut-off)."""
        total = len(all_nodes)
        needed = num_feasible_nodes_to_find(self.percentage_of_nodes_to_score, total)
        feasible: list[NodeInfo] = []
        failed: dict[str, Status] = {}
        processed = 0
        if not self.filters or len(skipped) == len(self.filters):
            chosen = [all_nodes[(start + i) % total] for i in range(min(needed, total))]
            return FilterOutcome(chosen, failed, len(chosen), skipped)
        version = self.handle.cache.list_version if all_nodes is self.handle.cache.node_list() else -1
        while processed < total and len(feasible) < needed:
            want = needed - len(feasible)
            size = min(max(want, 100), total - processed)
            lo = (start + processed) % total
            chunk: list[NodeInfo] = all_nodes[lo:lo + size]
            if len(chunk) < size:
                chunk += all_nodes[: size - len(chunk)]
            if version >= 0:
                chunk = NodeSpan(chunk, lo, version, total)
            passed, f = self.filter_nodes(state, pod, chunk, skipped)
            if len(passed) > want:
                if not f and type(passed) is NodeSpan:
                    passed = passed.head(want)
                    size = want
                else:
                    pos = {id(n): i for i, n in enumerate(chunk)}
                    cut = pos[id(passed[want - 1])] + 1
                    passed = passed[:want]
                    f = [(n, st) for n, st in f if pos[id(n)] < cut]
                    size = cut
            # a NodeSpan is never extended in place: the first run is kept as is, later ones concatenate
            feasible = passed if not feasible and type(passed) is NodeSpan else feasible + passed
            for n, st in f:
                failed[n.name] = st
            processed += size
        if version >= 0 and len(feasible) > 1 and type(feasible) is not NodeSpan:
            feasible = NodeSubset(feasible, version)
        return FilterOutcome(feasible, failed, processed, skipped)

    # ----------------------------------------------------------------- score

    def run_scores(self, state: dict[str, Any], pod: PodInfo,
                   nodes: list[NodeInfo]) -> tuple[ScoreOutcome, list[int]]:
        """(the scores, ranks): ranks order the nodes as the totals do, leaving out what every node
        scores alike (a plugin answering the same for all), which cannot change the winner or the ties."""
        skip_set: set[str] | None = None
        for p in self.pre_scores:
            st = p.pre_score(state, pod, nodes)
            if st is not None and st.code == SKIP:
                if skip_set is None:
                    skip_set = set()
                skip_set.add(p.name)
        n = len(nodes)
        names: list[tuple[str, int]] = []
        raws: list[list[int]] = []
        norms: list[list[int]] = []
        weighted: list[list[int]] = []
        skipped: list[str] = []
        varying: list[list[int]] = []
        for p, w, normalizes in self._score_steps:
            name = p.name
            if skip_set is not None and name in skip_set:
                skipped.append(name)
                continue
            raw = p.score(state, pod, nodes)
            norm = p.normalize(state, pod, nodes, raw) if normalizes else raw
            names.append((name, w))
            raws.append(raw)
            norms.append(norm)
            if norm and norm.count(norm[0]) == n:  # the same on every node: ranks nothing
                weighted.append(norm if w == 1 else [norm[0] * w] * n)
            else:
                col = norm if w == 1 else list(map(mul, norm, repeat(w, n)))
                weighted.append(col)
                varying.append(col)
        return ScoreOutcome(nodes, names, raws, norms, weighted, None, skipped), _sum_varying(varying, n)

    # ----------------------------------------------------------------- reserve / bind

    def run_reserve(self, state: dict[str, Any], pod: PodInfo, node_name: str) -> Status | None:
        for i, p in enumerate(self.reserves):
            st = p.reserve(state, pod, node_name)
            if st is not None and st.code != SUCCESS:
                st.plugin = p.name
                for q in reversed(self.reserves[: i + 1]):
                    q.unreserve(state, pod, node_name)
                return st
        return None

    def run_unreserve(self, state: dict[str, Any], pod: PodInfo, node_name: str) -> None:
        for p in reversed(self.reserves):
            p.unreserve(state, pod, node_name)

    def pre_binds_for(self, state: dict[str, Any], pod: PodInfo, node_name: str) -> list[Plugin]:
        """The PreBind plugins with work to do for this pod (the others' pre-flight said Skip)."""
        return [p for p in self.pre_binds if (st := p.pre_bind_pre_flight(state, pod, node_name)) is None
                or st.code != SKIP]

    async def run_pre_bind(self, plugins: list[Plugin], state: dict[str, Any], pod: PodInfo,
                           node_name: str) -> Status | None:
        for p in plugins:
            st = await p.pre_bind(state, pod, node_name)  # type: ignore[attr-defined]
            if st is not None and st.code not in (SUCCESS, SKIP):
                return Status(ERROR, f'running PreBind plugin "{p.name}": {st.message}', plugin=p.name)
        return None

    async def run_bind(self, state: dict[str, Any], pod: PodInfo, node_name: str) -> Status | None:
        for p in self.binds:
            st = await p.bind(state, pod, node_name)  # type: ignore[attr-defined]
            if st is not None and st.code == SKIP:
                continue
            return st
        return Status(ERROR, "no bind plugin bound the pod")

    def less(self, a: Any, b: Any) -> bool:
        assert self.queue_sort is not None
        return self.queue_sort.less(a, b)  # type: ignore[attr-defined]
