"""One-line sparklines for the header's request and write rates."""

from __future__ import annotations

from collections.abc import Iterable

BARS = "▁▂▃▄▅▆▇█"


def sparkline(values: Iterable[float], width: int) -> str:
    """The last ``width`` values as block characters scaled to their own maximum."""
    tail = list(values)[-width:] if width > 0 else []
    if not tail:
        return ""
    top = max(tail)
    if top <= 0:
        return BARS[0] * len(tail)
    steps = len(BARS) - 1
    return "".join(BARS[min(steps, max(0, round(v / top * steps)))] for v in tail)
