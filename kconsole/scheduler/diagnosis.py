"""Why a pod did not fit: upstream's FitError message, reason histogram and all.

``0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No
preemption victims found for incoming pod..`` — each part is ``" %v."``-separated, the histogram
entries are ``<count> <reason>`` sorted as strings, and the PostFilter (preemption) message is
appended after the filter reasons, which is where the famous double full stop comes from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kconsole.scheduler.framework import Status

NO_NODE_AVAILABLE = "0/{} nodes are available"


def reason_histogram(statuses: Mapping[str, Status]) -> list[str]:
    counts: dict[str, int] = {}
    for st in statuses.values():
        for r in st.reasons:
            counts[r] = counts.get(r, 0) + 1
    return sorted(f"{n} {r}" for r, n in counts.items())


def fit_error_message(num_all_nodes: int, statuses: Mapping[str, Status], pre_filter_msg: str = "",
                      post_filter_msg: str = "") -> str:
    msg = NO_NODE_AVAILABLE.format(num_all_nodes) + ":"
    if pre_filter_msg:
        msg += f" {pre_filter_msg}."
    else:
        hist = reason_histogram(statuses)
        if hist:
            msg += f" {', '.join(hist)}."
    if post_filter_msg:
        msg += f" {post_filter_msg}."
    return msg


@dataclass(slots=True)
class Diagnosis:
    """A failed cycle: the failing status per node, plus the PreFilter and PostFilter messages."""

    num_all_nodes: int
    statuses: dict[str, Status] = field(default_factory=dict)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""
    unschedulable_plugins: set[str] = field(default_factory=set)

    @property
    def message(self) -> str:
        return fit_error_message(self.num_all_nodes, self.statuses, self.pre_filter_msg, self.post_filter_msg)
